"""What a CRD says beyond its schema is written into the generated module (``__crd__``, a
:class:`kube_runtime.models.crd.Config`, next to ``__kube_resource__``), and ``kube-runtime crd generate``
on a generated module gives back an equivalent CRD: CRD -> codegen -> model -> CRD for every
CRD of the repository and the public ones in ``tests/crds/``."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen import from_file, from_text, generate
from codegen.crdgen import main as crd_main
from kube_runtime.client import Resource
from kube_runtime.client.mapping import RestMapper
from kube_runtime.models import crd
from tests.support.codegen import (
    CRD_DIR,
    CRD_FILES,
    REPO,
    assert_same_schema,
    load_module,
    repository_crds,
    safe_load_all,
)

SETTINGS_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Thing, plural: things, singular: item, listKind: ThingCollection,
          shortNames: [th], categories: [all, examples]}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields: [{jsonPath: .spec.size}]
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.size}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size, priority: 1, format: int32}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, properties: {size: {type: integer}}}
  - name: v1beta1
    served: false
    storage: false
    deprecated: true
    deprecationWarning: example.com/v1beta1 Thing is gone; use v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
"""


def test_crd_settings_are_written_as_a_crd_config(tmp_path: Path) -> None:
    source = from_text("thing.yaml", SETTINGS_CRD.encode())
    mod = load_module(generate([source], versions=["v1", "v1beta1"]), tmp_path, "thing")
    assert mod.Thing.__crd__ == crd.Config(
        storage=True,
        printer_columns=[
            crd.PrinterColumn(
                name="Size", json_path=".spec.size", type="integer", format="int32", priority=1
            )
        ],
        categories=("all", "examples"),
        singular="item",
        list_kind="ThingCollection",
        scale=crd.Scale(spec_replicas_path=".spec.size", status_replicas_path=".status.size"),
        extra={"selectableFields": [{"jsonPath": ".spec.size"}]},
    )
    old = mod.V1beta1Thing.__crd__
    assert (old.storage, old.served, old.deprecated) == (False, False, True)
    assert old.deprecation_warning == "example.com/v1beta1 Thing is gone; use v1"
    resource = mod.Thing.__kube_resource__
    assert (resource.namespaced, resource.short_names) == (False, ("th",))
    assert resource.subresources == frozenset({"status", "scale"})


def test_defaults_are_left_out(tmp_path: Path) -> None:
    """A singular that is the lower-case kind and a ``<Kind>List`` list kind are defaults."""
    mod = load_module(generate([from_file(CRD_DIR / CRD_FILES["cloneset"])]), tmp_path, "cs")
    config = mod.CloneSet.__crd__
    assert config.singular is None and config.list_kind is None
    assert config.storage and not mod.V1alpha1CloneSet.__crd__.storage
    assert config.scale == crd.Scale(".spec.replicas", ".status.replicas", ".status.labelSelector")
    assert [c.name for c in config.printer_columns][:2] == ["DESIRED", "UPDATED"]


def test_a_generated_model_needs_no_registration(tmp_path: Path) -> None:
    """The REST mapping takes a generated class's coordinates from the class: no discovery
    call, no ``add``."""

    class NoDiscovery:
        def get_path(self, path: str) -> dict[str, Any]:
            raise AssertionError(f"discovery asked for {path}")

    mod = load_module(generate([from_file(CRD_DIR / CRD_FILES["httproute"])]), tmp_path, "hr")
    resource = RestMapper(NoDiscovery()).resource_for(mod.HTTPRoute)  # type: ignore[arg-type]
    assert resource == Resource(
        "gateway.networking.k8s.io",
        "v1",
        "HTTPRoute",
        "httproutes",
        True,
        frozenset({"status"}),
        (),
    )
    assert resource.path("ns", "web") == (
        "/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes/web"
    )


def _with_server_defaults(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` as kube-apiserver stores it (names.singular and names.listKind
    defaulted), without the schemas (compared separately)."""
    out = copy.deepcopy(document)
    names = out["spec"]["names"]
    names.setdefault("singular", names["kind"].lower())
    names.setdefault("listKind", names["kind"] + "List")
    for version in out["spec"]["versions"]:
        version.pop("schema", None)
    return out


def _schemas(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each version's schema without the apiVersion/kind/metadata boilerplate (codegen types
    those itself; ``crd generate`` declares all three)."""
    out = {}
    for version in document["spec"]["versions"]:
        schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
        for key in ("apiVersion", "kind", "metadata"):
            schema.get("properties", {}).pop(key, None)
        out[version["name"]] = schema
    return out


@pytest.mark.parametrize("relative", [str(p.relative_to(REPO)) for p in repository_crds()])
def test_crd_generate_on_a_generated_module_gives_back_the_crd(
    relative: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Names, scope, versions (served, storage, deprecation), subresources with their scale
    paths, printer columns, categories, short names and other version keys come back as the
    CRD says them; every version's schema comes back too (descriptions included; what a
    schema comparison ignores: int32/int64 formats, ``x-kubernetes-list-type: atomic``, the
    descriptions inside shared core types)."""
    source = from_file(REPO / relative)
    (original,) = source.crds
    module = f"_crd_roundtrip_{abs(hash(relative))}"
    (tmp_path / f"{module}.py").write_text(generate([source]))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert crd_main(["generate", module]) == 0
    (back,) = [d for d in safe_load_all(capsys.readouterr().out) if d]
    original.setdefault("metadata", {})
    assert back["metadata"]["name"] == original["metadata"]["name"]
    want, got = _with_server_defaults(original), _with_server_defaults(back)
    assert got["spec"] == want["spec"]
    want_schemas, got_schemas = _schemas(original), _schemas(back)
    assert sorted(got_schemas) == sorted(want_schemas)
    for name, schema in want_schemas.items():
        assert_same_schema(got_schemas[name], schema)
    sys.modules.pop(module, None)
