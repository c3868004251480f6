"""The built-in definitions are converted when first read, and read as the eager conversion
of every definition did."""

from __future__ import annotations

import orjson

from kube_runtime.envtest.server import openapi_builtin


def _fresh() -> openapi_builtin._Definitions:
    found = openapi_builtin._release_dirs()
    entry = next(e for e in found.values() if e.name == openapi_builtin.spec_release())
    return openapi_builtin._Definitions(found, entry)


def test_a_kind_of_the_chosen_release_reads_no_retired_version_and_converts_only_itself() -> None:
    defs = _fresh()
    name = "io.k8s.api.coordination.v1.Lease"
    assert defs[name] is defs[name]
    assert defs._retired_raw is None
    assert list(defs._converted) == [name]


def test_every_definition_reads_as_the_eager_conversion() -> None:
    found = openapi_builtin._release_dirs()
    entry = next(e for e in found.values() if e.name == openapi_builtin.spec_release())
    raw = orjson.loads((entry / "_definitions.json").read_bytes())["$defs"]
    raw.update(openapi_builtin._retired(found, entry.name, raw))
    eager = {name: openapi_builtin._definition_v2(name, schema) for name, schema in raw.items()}
    defs = _fresh()
    assert list(defs) == list(eager)
    assert len(defs) == len(eager)
    assert {name: defs[name] for name in defs} == eager
    assert "io.k8s.api.flowcontrol.v1beta1.FlowSchema" in defs  # a retired version


def test_kinds_are_found_in_the_chosen_release_then_the_retired_versions() -> None:
    assert (
        openapi_builtin.kind_definitions("coordination.k8s.io", "v1", "Lease")
        == "io.k8s.api.coordination.v1.Lease"
    )
    assert (
        openapi_builtin.kind_definitions("flowcontrol.apiserver.k8s.io", "v1beta1", "FlowSchema")
        == "io.k8s.api.flowcontrol.v1beta1.FlowSchema"
    )
    assert openapi_builtin.kind_definitions("example.com", "v1", "Nothing") is None
