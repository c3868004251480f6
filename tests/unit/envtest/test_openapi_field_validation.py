"""Field validation's parts without a server: unknown fields against the built-in kinds'
OpenAPI definitions and a CRD schema, duplicate JSON fields by path, the Warning header."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime.envtest.server import fieldvalidation
from kube_runtime.envtest.server.crds import resource_from_crd
from kube_runtime.envtest.server.resources import SERVED_BUILTINS, ResourceInfo


def _builtin(group: str, plural: str) -> ResourceInfo:
    return next(i for i in SERVED_BUILTINS if (i.group, i.plural) == (group, plural))


def test_unknown_fields_of_a_builtin_kind_by_path_and_dropped() -> None:
    sts: dict[str, Any] = {
        "metadata": {"name": "a", "labelz": {}},
        "spec": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"free": "form"}},
                "spec": {"containers": [{"name": "c", "imag": "x"}]},
            },
            "volumeClaimTemplates": [{"spec": {"resources": {"requests": {"storage": "1Gi"}}}}],
        },
        "extra": 1,
    }
    info = _builtin("apps", "statefulsets")
    found = fieldvalidation.unknown_fields(info, "v1", "StatefulSet", sts, drop=True)
    assert found == ["metadata.labelz", "spec.template.spec.containers[0].imag", "extra"]
    assert "extra" not in sts and "labelz" not in sts["metadata"]
    assert sts["spec"]["template"]["spec"]["containers"] == [{"name": "c"}]
    # Maps (labels, requests) take any key.
    assert sts["spec"]["template"]["metadata"]["labels"] == {"free": "form"}


def _pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {"x": "y"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
                    "resources": {"limits": {"cpu": "1"}},
                }
            ],
            **spec,
        },
    }


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({}, None),
        ({"nodeSelector": {"any": "key"}}, None),
        ({"bogus": 1}, "spec.bogus"),
        ({"affinity": {"nodeAffinity": {"nope": {}}}}, "spec.affinity.nodeAffinity.nope"),
        ({"volumes": [{"name": "v", "emptyDir": {"x": 1}}]}, "spec.volumes[0].emptyDir.x"),
        ({"tolerations": [{"key": "k"}, {"kee": "k"}]}, "spec.tolerations[1].kee"),
    ],
)
def test_unknown_fields_found_at_any_depth_and_none_in_maps(
    spec: dict[str, Any], path: str | None
) -> None:
    # the quick look that passes a clean object must miss no unknown field, nested or not
    pod = _pod(**spec)
    found = fieldvalidation.unknown_fields(_builtin("", "pods"), "v1", "Pod", pod, drop=True)
    assert found == ([] if path is None else [path])
    assert fieldvalidation.unknown_fields(_builtin("", "pods"), "v1", "Pod", pod, drop=True) == []


def test_unknown_fields_of_a_custom_resource_follow_pruning() -> None:
    crd = {
        "metadata": {"name": "things.x.example.com"},
        "spec": {
            "group": "x.example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "items": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "properties": {"a": {"type": "string"}},
                                            },
                                        },
                                        "free": {
                                            "type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True,
                                        },
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    info = resource_from_crd(crd)
    assert info is not None
    obj = {
        "apiVersion": "x.example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "bogus": 1},
        "spec": {"items": [{"a": "x", "b": 1}], "free": {"anything": 1}, "c": 2},
    }
    found = fieldvalidation.unknown_fields(info, "v1", "Thing", obj, drop=False)
    assert found == ["metadata.bogus", "spec.items[0].b", "spec.c"]


def test_duplicate_fields_by_path() -> None:
    body = b'{"a":1,"spec":{"x":[{"k":1,"k":2}],"y":1,"y":2},"a":3}'
    assert fieldvalidation.duplicate_fields(body) == ["a", "spec.y", "spec.x[0].k"]
    assert fieldvalidation.duplicate_fields(b'{"a":1}') == []
    assert fieldvalidation.duplicate_fields(b"not json") == []


def test_warning_header_quotes_each_finding() -> None:
    header = fieldvalidation.warning_header(['unknown field "a"', 'duplicate field "b"'])
    assert header == '299 - "unknown field \\"a\\"", 299 - "duplicate field \\"b\\""'


def _with_unknown_keys(obj: Any) -> Iterator[Any]:
    """``obj`` with an unknown key planted in each of its objects in turn (maps included:
    there it is known, and only the walker can tell)."""
    from tests.support.write_path_corpus import _paths, json_copy

    for path in [(), *_paths(obj)]:
        planted = json_copy(obj)
        node = planted
        for step in path:
            node = node[step]
        if isinstance(node, dict):
            node["zzUnknown"] = {"a": [1]}
            yield planted
        elif isinstance(node, list):
            node.append({"zzUnknown": 1})
            yield planted


def test_the_compiled_check_says_what_the_walker_finds() -> None:
    # The compiled per-schema check (_known) against the generic walk (_walk_builtin) that
    # words the findings: a divergence either way fails (a missed unknown field, or a
    # clean object sent down the slow path).
    from bench.embedded_server import typical_pod
    from tests.support.write_path_corpus import hostile_templates, mutations, rich_pod

    objects: list[tuple[str, str, str, Any]] = []
    for base in (typical_pod("p"), rich_pod("r")):
        objects += [("", "pods", "Pod", o) for _, o in mutations(base, ("empty-map", "word"))]
    objects += [("", "pods", "Pod", pod) for _, pod in hostile_templates()]
    lease = {
        "metadata": {
            "name": "l",
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}, "bogus": 1}],
            "ownerReferences": [{"uid": "u", "name": "n"}],
        },
        "spec": {"holderIdentity": "me", "renewTime": "x"},
    }
    objects.append(("coordination.k8s.io", "leases", "Lease", lease))
    planted = [(g, p, k, o) for g, p, k, o in objects[:: max(1, len(objects) // 40)]]
    for g, p, k, o in planted:
        objects += [(g, p, k, bad) for bad in _with_unknown_keys(o)]
    seen = {True: 0, False: 0}
    for group, plural, kind, obj in objects:
        info = _builtin(group, plural)
        schema = fieldvalidation._definition(
            fieldvalidation.openapi_builtin.kind_definitions(info.group, "v1", kind) or ""
        )
        found: list[str] = []
        fieldvalidation._walk_builtin(obj, schema, "", found, False)
        known = fieldvalidation._known(obj, schema)
        assert known == (not found), (kind, found, obj)
        node = fieldvalidation._node(schema)
        # the whole-object check, its spec from the memo the second time
        assert fieldvalidation._known_object(obj, node) == known, (kind, found, obj)
        assert fieldvalidation._known_object(obj, node) == known, (kind, found, obj)
        seen[known] += 1
    assert seen[True] > 50 and seen[False] > 50
