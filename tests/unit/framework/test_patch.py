"""Unit tests for kube_runtime.patch.

Expected strategic-merge-patch results that are not obvious (list order, directive corner
cases) were checked against upstream: `kubectl patch --local --type strategic` (kubectl
1.33, which compiles in k8s.io/apimachinery's strategicpatch and the k8s.io/api struct tags).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.patch import (
    FieldSchema,
    PatchError,
    StructSchema,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
    strategic_schema_for,
)

# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def containers_of(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "image": f"img-{n}"} for n in names]


def shared_containers(a: Any, b: Any) -> list[str]:
    """Paths of dicts/lists of `a` that are the very same object somewhere in `b`."""
    ids: set[int] = set()

    def collect(v: Any) -> None:
        if isinstance(v, (dict, list)):
            ids.add(id(v))
            for child in v.values() if isinstance(v, dict) else v:
                collect(child)

    collect(b)
    found: list[str] = []

    def walk(v: Any, path: str) -> None:
        if isinstance(v, (dict, list)):
            if id(v) in ids:
                found.append(path or "/")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, child in items:
                walk(child, f"{path}/{k}")

    walk(a, "")
    return found


def directive_keys(value: Any, path: str = "") -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k.startswith("$"):
                found.append(f"{path}/{k}")
            found += directive_keys(v, f"{path}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += directive_keys(v, f"{path}/{i}")
    return found


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec or {"containers": containers_of("a")},
    }


POD = strategic_schema_for("", "Pod")


# ---------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch
# ---------------------------------------------------------------------------------------

# RFC 7386, Appendix A, verbatim.
RFC7386_EXAMPLES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "expected"), RFC7386_EXAMPLES)
def test_merge_patch_rfc7386_appendix(original: Any, patch: Any, expected: Any) -> None:
    before = copy.deepcopy((original, patch))
    assert apply_merge_patch(original, patch) == expected
    assert (original, patch) == before


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param(
            {"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"k": "v"}},
            {"metadata": {"labels": {"a": None, "c": "3"}}, "data": None},
            {"metadata": {"labels": {"b": "2", "c": "3"}}},
            id="labels-and-null-delete",
        ),
        pytest.param(
            {"a": 1},
            {"b": [{"x": None, "y": 1}, None]},
            {"a": 1, "b": [{"y": 1}, None]},
            id="inserted-array-prunes-null-members-keeps-null-items",
        ),
        pytest.param(
            {"b": [1]}, {"b": [{"x": None}]}, {"b": [{}]}, id="array-replacing-array-is-pruned"
        ),
        pytest.param(
            {"b": {"k": 1}},
            {"b": [{"x": None}]},
            {"b": [{"x": None}]},
            id="array-replacing-object-is-verbatim",
        ),
        pytest.param({"a": {"b": 1}}, {"a": {}}, {"a": {"b": 1}}, id="empty-object-no-op"),
        pytest.param({"a": 1}, {}, {"a": 1}, id="empty-patch"),
    ],
)
def test_merge_patch_cases(original: Any, patch: Any, expected: Any) -> None:
    assert apply_merge_patch(original, patch) == expected


def test_merge_patch_result_is_independent_of_inputs() -> None:
    original = {"keep": {"deep": [1, {"x": 1}]}, "change": {"a": 1}}
    patch = {"change": {"b": [1, 2]}, "new": {"n": [{"m": 1}]}}
    snapshot = copy.deepcopy((original, patch))
    result = apply_merge_patch(original, patch)
    assert (original, patch) == snapshot
    assert shared_containers(result, [original, patch]) == []


# ---------------------------------------------------------------------------------------
# RFC 6902 JSON patch
# ---------------------------------------------------------------------------------------

DOC: dict[str, Any] = {
    "metadata": {"name": "x", "labels": {"a/b": "1", "m~n": "2"}, "finalizers": ["f1", "f2"]},
    "data": {"k": "v", "n": 1},
}

JSON_PATCH_CASES = [
    ("add-member", [{"op": "add", "path": "/data/new", "value": "w"}], ("data", "new"), "w"),
    ("add-overwrites-member", [{"op": "add", "path": "/data/k", "value": 2}], ("data", "k"), 2),
    (
        "add-insert-array",
        [{"op": "add", "path": "/metadata/finalizers/0", "value": "f0"}],
        ("metadata", "finalizers"),
        ["f0", "f1", "f2"],
    ),
    (
        "add-at-len",
        [{"op": "add", "path": "/metadata/finalizers/2", "value": "f3"}],
        ("metadata", "finalizers"),
        ["f1", "f2", "f3"],
    ),
    (
        "add-dash-appends",
        [{"op": "add", "path": "/metadata/finalizers/-", "value": "f3"}],
        ("metadata", "finalizers"),
        ["f1", "f2", "f3"],
    ),
    (
        "add-escaped",
        [{"op": "add", "path": "/metadata/labels/c~1d~0e", "value": "3"}],
        ("metadata", "labels", "c/d~e"),
        "3",
    ),
    ("add-empty-key", [{"op": "add", "path": "/data/", "value": 0}], ("data", ""), 0),
    ("remove-member", [{"op": "remove", "path": "/data/k"}], ("data",), {"n": 1}),
    (
        "remove-escaped",
        [
            {"op": "remove", "path": "/metadata/labels/a~1b"},
            {"op": "remove", "path": "/metadata/labels/m~0n"},
        ],
        ("metadata", "labels"),
        {},
    ),
    (
        "remove-array-item",
        [{"op": "remove", "path": "/metadata/finalizers/0"}],
        ("metadata", "finalizers"),
        ["f2"],
    ),
    ("replace-member", [{"op": "replace", "path": "/data/k", "value": [1]}], ("data", "k"), [1]),
    (
        "replace-array-item",
        [{"op": "replace", "path": "/metadata/finalizers/1", "value": "F"}],
        ("metadata", "finalizers"),
        ["f1", "F"],
    ),
    (
        "move-member",
        [{"op": "move", "from": "/data/k", "path": "/data/k2"}],
        ("data",),
        {"n": 1, "k2": "v"},
    ),
    (
        "move-array-item",
        [{"op": "move", "from": "/metadata/finalizers/0", "path": "/metadata/finalizers/-"}],
        ("metadata", "finalizers"),
        ["f2", "f1"],
    ),
    ("move-same-path", [{"op": "move", "from": "/data/k", "path": "/data/k"}], ("data", "k"), "v"),
    (
        "copy",
        [{"op": "copy", "from": "/metadata/labels", "path": "/data/l"}],
        ("data", "l"),
        {"a/b": "1", "m~n": "2"},
    ),
    (
        "test-then-add",
        [
            {"op": "test", "path": "/data/k", "value": "v"},
            {"op": "add", "path": "/data/t", "value": True},
        ],
        ("data", "t"),
        True,
    ),
    (
        "test-structured-and-number",
        [
            {"op": "test", "path": "/metadata/finalizers", "value": ["f1", "f2"]},
            {"op": "test", "path": "/data", "value": {"n": 1.0, "k": "v"}},
        ],
        ("data", "n"),
        1,
    ),
]


def dig(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@pytest.mark.parametrize(
    ("ops", "where", "expected"),
    [
        pytest.param(ops, where, expected, id=name)
        for name, ops, where, expected in JSON_PATCH_CASES
    ],
)
def test_json_patch_operations(ops: list[Any], where: tuple[str, ...], expected: Any) -> None:
    snapshot = copy.deepcopy((DOC, ops))
    result = apply_json_patch(DOC, ops)
    assert dig(result, where) == expected
    assert (DOC, ops) == snapshot
    assert shared_containers(result, [DOC, ops]) == []


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        pytest.param([], DOC, id="empty"),
        pytest.param([{"op": "replace", "path": "", "value": [1]}], [1], id="replace-root"),
        pytest.param([{"op": "add", "path": "", "value": {"a": 1}}], {"a": 1}, id="add-root"),
    ],
)
def test_json_patch_whole_document(ops: list[Any], expected: Any) -> None:
    assert apply_json_patch(DOC, ops) == expected


def test_json_patch_copy_is_deep() -> None:
    result = apply_json_patch(DOC, [{"op": "copy", "from": "/metadata", "path": "/m2"}])
    result["m2"]["labels"]["x"] = "y"
    assert "x" not in result["metadata"]["labels"]


@pytest.mark.parametrize(
    ("ops", "code", "fragment"),
    [
        pytest.param({"op": "add"}, 400, "array of operations", id="not-a-list"),
        pytest.param(["add"], 400, "expected an object", id="op-not-object"),
        pytest.param([{"path": "/a", "value": 1}], 400, "'op'", id="missing-op"),
        pytest.param([{"op": "frobnicate", "path": "/a"}], 400, "unknown op", id="unknown-op"),
        pytest.param([{"op": "add", "value": 1}], 400, "missing 'path'", id="missing-path"),
        pytest.param([{"op": "add", "path": "/a"}], 400, "missing 'value'", id="missing-value"),
        pytest.param([{"op": "move", "path": "/a"}], 400, "missing 'from'", id="missing-from"),
        pytest.param(
            [{"op": "add", "path": "a", "value": 1}], 400, "must start with '/'", id="bad-pointer"
        ),
        pytest.param([{"op": "remove", "path": "/a~2"}], 400, "invalid escape", id="bad-escape"),
        pytest.param(
            [{"op": "add", "path": 5, "value": 1}], 400, "must be a string", id="pointer-type"
        ),
        pytest.param(
            [{"op": "test", "path": "/data/k", "value": "nope"}],
            422,
            "test failed",
            id="test-failed",
        ),
        pytest.param(
            [{"op": "test", "path": "/data/n", "value": True}],
            422,
            "test failed",
            id="test-bool-is-not-1",
        ),
        pytest.param(
            [{"op": "remove", "path": "/data/zz"}], 422, "does not exist", id="remove-missing"
        ),
        pytest.param(
            [{"op": "replace", "path": "/data/zz", "value": 1}],
            422,
            "does not exist",
            id="replace-missing",
        ),
        pytest.param(
            [{"op": "add", "path": "/nope/x", "value": 1}],
            422,
            "'/nope' does not exist",
            id="add-missing-parent",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/finalizers/3", "value": 1}],
            422,
            "out of range",
            id="add-past-end",
        ),
        pytest.param(
            [{"op": "add", "path": "/metadata/finalizers/01", "value": 1}],
            422,
            "invalid array index",
            id="leading-zero",
        ),
        pytest.param(
            [{"op": "remove", "path": "/metadata/finalizers/-"}],
            422,
            "invalid array index",
            id="remove-dash",
        ),
        pytest.param(
            [{"op": "add", "path": "/data/k/x", "value": 1}], 422, "parent", id="add-into-scalar"
        ),
        pytest.param(
            [{"op": "move", "from": "/data", "path": "/data/x"}],
            422,
            "own child",
            id="move-into-child",
        ),
        pytest.param(
            [{"op": "copy", "from": "/zz", "path": "/a"}],
            422,
            "does not exist",
            id="copy-missing-from",
        ),
        pytest.param([{"op": "remove", "path": ""}], 422, "whole document", id="remove-root"),
    ],
)
def test_json_patch_errors(ops: Any, code: int, fragment: str) -> None:
    snapshot = copy.deepcopy(DOC)
    with pytest.raises(PatchError) as info:
        apply_json_patch(DOC, ops)
    assert info.value.code == code
    assert fragment in str(info.value)
    assert snapshot == DOC


def test_json_patch_is_all_or_nothing() -> None:
    ops = [{"op": "add", "path": "/data/x", "value": 1}, {"op": "remove", "path": "/data/missing"}]
    with pytest.raises(PatchError) as info:
        apply_json_patch(DOC, ops)
    assert "operation 1 (remove)" in str(info.value)
    assert "x" not in DOC["data"]


# ---------------------------------------------------------------------------------------
# strategic merge patch: schemas
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("", "Pod"), ("", "Node"), ("", "Namespace"), ("", "PersistentVolumeClaim"), ("", "Service"),
        ("", "ConfigMap"), ("", "Secret"), ("", "Event"), ("", "Endpoints"),
        ("apps", "StatefulSet"), ("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "DaemonSet"),
        ("apps", "ControllerRevision"), ("batch", "Job"), ("coordination.k8s.io", "Lease"),
        ("autoscaling", "Scale"), ("events.k8s.io", "Event"),
    ],
)  # fmt: skip
def test_schema_for_builtin_kinds(group: str, kind: str) -> None:
    schema = strategic_schema_for(group, kind)
    assert isinstance(schema, StructSchema)
    metadata = schema.field("metadata")
    assert metadata is not None and metadata.schema is not None
    assert metadata.schema.field("ownerReferences") == FieldSchema("list", "merge", "uid")


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("example.com", "Widget"),
        ("apps", "Pod"),
        ("", "StatefulSet"),
        ("batch", "CronJob"),
        ("", ""),
    ],
)
def test_schema_for_other_kinds_is_none(group: str, kind: str) -> None:
    assert strategic_schema_for(group, kind) is None


def field_at(schema: StructSchema | None, *path: str) -> FieldSchema:
    field: FieldSchema | None = None
    for name in path:
        assert schema is not None, path
        field = schema.field(name)
        assert field is not None, (path, name)
        schema = field.schema
    assert field is not None
    return field


@pytest.mark.parametrize(
    ("group", "kind", "path", "strategy", "merge_key"),
    [
        ("", "Pod", "metadata.finalizers", "merge", None),
        ("", "Pod", "metadata.managedFields", None, None),
        ("", "Pod", "spec.containers", "merge", "name"),
        ("", "Pod", "spec.initContainers", "merge", "name"),
        ("", "Pod", "spec.ephemeralContainers", "merge", "name"),
        ("", "Pod", "spec.volumes", "merge", "name"),
        ("", "Pod", "spec.imagePullSecrets", "merge", "name"),
        ("", "Pod", "spec.hostAliases", "merge", "ip"),
        ("", "Pod", "spec.tolerations", None, None),
        ("", "Pod", "spec.topologySpreadConstraints", "merge", "topologyKey"),
        ("", "Pod", "spec.schedulingGates", "merge", "name"),
        ("", "Pod", "spec.resourceClaims", "merge", "name"),
        ("", "Pod", "spec.readinessGates", None, None),
        ("", "Pod", "spec.containers.env", "merge", "name"),
        ("", "Pod", "spec.containers.ports", "merge", "containerPort"),
        ("", "Pod", "spec.containers.volumeMounts", "merge", "mountPath"),
        ("", "Pod", "spec.containers.volumeDevices", "merge", "devicePath"),
        ("", "Pod", "spec.containers.envFrom", None, None),
        ("", "Pod", "spec.containers.resizePolicy", None, None),
        ("", "Pod", "status.conditions", "merge", "type"),
        ("", "Pod", "status.podIPs", "merge", "ip"),
        ("", "Pod", "status.containerStatuses", None, None),
        ("", "Node", "status.conditions", "merge", "type"),
        ("", "Node", "status.addresses", "merge", "type"),
        ("", "Namespace", "status.conditions", "merge", "type"),
        ("", "PersistentVolumeClaim", "status.conditions", "merge", "type"),
        ("", "Service", "spec.ports", "merge", "port"),
        ("apps", "StatefulSet", "spec.template.spec.containers", "merge", "name"),
        ("apps", "StatefulSet", "spec.volumeClaimTemplates", None, None),
        ("apps", "StatefulSet", "status.conditions", "merge", "type"),
        ("apps", "Deployment", "spec.template.metadata.finalizers", "merge", None),
        ("apps", "Deployment", "status.conditions", "merge", "type"),
        ("apps", "DaemonSet", "spec.template.spec.volumes", "merge", "name"),
        ("apps", "ReplicaSet", "spec.template.spec.containers.env", "merge", "name"),
        ("batch", "Job", "spec.template.spec.containers", "merge", "name"),
    ],
)
def test_schema_field_strategies(
    group: str, kind: str, path: str, strategy: str | None, merge_key: str | None
) -> None:
    field = field_at(strategic_schema_for(group, kind), *path.split("."))
    assert field.kind == "list"
    assert (field.strategy, field.merge_key) == (strategy, merge_key)


def test_schema_retain_keys_fields() -> None:
    assert field_at(POD, "spec", "volumes").retain_keys
    deployment = strategic_schema_for("apps", "Deployment")
    assert field_at(deployment, "spec", "strategy").retain_keys


# ---------------------------------------------------------------------------------------
# strategic merge patch: behaviour
# ---------------------------------------------------------------------------------------

BASE_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "labels": {"app": "web", "tier": "fe"},
        "finalizers": ["f1", "f2", "f3"],
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "uid": "u1"},
            {"apiVersion": "v1", "kind": "Other", "name": "o2", "uid": "u2"},
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.24",
                "env": [{"name": "E1", "value": "1"}, {"name": "E2", "value": "2"}],
                "ports": [{"containerPort": 80, "name": "http"}],
                "args": ["--a", "--b"],
            },
            {
                "name": "sidecar",
                "image": "envoy:1",
                "volumeMounts": [{"name": "v", "mountPath": "/v"}],
            },
        ],
        "volumes": [{"name": "v", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cm"}}],
        "tolerations": [{"key": "t1", "operator": "Exists"}],
        "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
        "affinity": {"nodeAffinity": {"x": 1}},
    },
    "status": {
        "conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "PodScheduled", "status": "True"},
        ],
        "podIPs": [{"ip": "10.0.0.1"}],
    },
}


def names(items: list[dict[str, Any]], key: str = "name") -> list[Any]:
    return [item[key] for item in items]


Check = Callable[[dict[str, Any]], tuple[Any, Any]]

# (id, patch applied to BASE_POD, check) where check(result) returns (actual, expected)
SMP_CASES: list[tuple[str, dict[str, Any], Check]] = [
    (
        "container-image-by-name",
        {"spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}},
        lambda r: (
            [(c["name"], c["image"]) for c in r["spec"]["containers"]],
            [("web", "nginx:1.25"), ("sidecar", "envoy:1")],
        ),
    ),
    (
        "container-image-keeps-other-fields",
        {"spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}},
        lambda r: (r["spec"]["containers"][0]["env"], BASE_POD["spec"]["containers"][0]["env"]),
    ),
    (
        "add-env-var",
        {"spec": {"containers": [{"name": "web", "env": [{"name": "E3", "value": "3"}]}]}},
        lambda r: (names(r["spec"]["containers"][0]["env"]), ["E3", "E1", "E2"]),
    ),
    (
        "change-env-var",
        {"spec": {"containers": [{"name": "web", "env": [{"name": "E2", "value": "x"}]}]}},
        lambda r: (
            r["spec"]["containers"][0]["env"],
            [{"name": "E1", "value": "1"}, {"name": "E2", "value": "x"}],
        ),
    ),
    (
        "delete-env-var",
        {"spec": {"containers": [{"name": "web", "env": [{"name": "E1", "$patch": "delete"}]}]}},
        lambda r: (r["spec"]["containers"][0]["env"], [{"name": "E2", "value": "2"}]),
    ),
    (
        "delete-container",
        {"spec": {"containers": [{"name": "web", "$patch": "delete"}]}},
        lambda r: (names(r["spec"]["containers"]), ["sidecar"]),
    ),
    (
        "delete-absent-container-is-no-op",
        {"spec": {"containers": [{"name": "nope", "$patch": "delete"}]}},
        lambda r: (r["spec"]["containers"], BASE_POD["spec"]["containers"]),
    ),
    (
        "new-container-goes-first",
        {"spec": {"containers": [{"name": "init", "image": "busybox"}]}},
        lambda r: (names(r["spec"]["containers"]), ["init", "web", "sidecar"]),
    ),
    (
        "patch-order-interleaves",
        {
            "spec": {
                "containers": [
                    {"name": "sidecar", "image": "e2"},
                    {"name": "new"},
                    {"name": "web", "image": "n"},
                ]
            }
        },
        lambda r: (names(r["spec"]["containers"]), ["sidecar", "new", "web"]),
    ),
    (
        "replace-list-directive",
        {"spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}},
        lambda r: (r["spec"]["containers"], [{"name": "only", "image": "x"}]),
    ),
    (
        "replace-map-directive",
        {"spec": {"securityContext": {"$patch": "replace", "runAsGroup": 3}}},
        lambda r: (r["spec"]["securityContext"], {"runAsGroup": 3}),
    ),
    (
        "delete-map-directive-leaves-empty-map",
        {"spec": {"securityContext": {"$patch": "delete"}}},
        lambda r: (r["spec"]["securityContext"], {}),
    ),
    (
        "finalizers-union",
        {"metadata": {"finalizers": ["f2", "f4"]}},
        lambda r: (r["metadata"]["finalizers"], ["f1", "f2", "f4", "f3"]),
    ),
    (
        "finalizers-new-goes-first",
        {"metadata": {"finalizers": ["f9"]}},
        lambda r: (r["metadata"]["finalizers"], ["f9", "f1", "f2", "f3"]),
    ),
    (
        "finalizers-no-duplicates",
        {"metadata": {"finalizers": ["f1", "f1", "f3"]}},
        lambda r: (r["metadata"]["finalizers"], ["f1", "f2", "f3"]),
    ),
    (
        "delete-from-primitive-list",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["f2", "absent"]}},
        lambda r: (r["metadata"]["finalizers"], ["f1", "f3"]),
    ),
    (
        "delete-from-primitive-list-then-add",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"], "finalizers": ["f4"]}},
        lambda r: (r["metadata"]["finalizers"], ["f4", "f2", "f3"]),
    ),
    (
        "delete-from-primitive-list-on-atomic-list",
        {"spec": {"containers": [{"name": "web", "$deleteFromPrimitiveList/args": ["--a"]}]}},
        lambda r: (r["spec"]["containers"][0]["args"], ["--b"]),
    ),
    (
        "owner-references-by-uid",
        {
            "metadata": {
                "ownerReferences": [
                    {"uid": "u2", "name": "renamed"},
                    {"uid": "u3", "name": "o3", "kind": "K", "apiVersion": "v1"},
                ]
            }
        },
        lambda r: (
            [(o["uid"], o["name"]) for o in r["metadata"]["ownerReferences"]],
            [("u1", "rs1"), ("u2", "renamed"), ("u3", "o3")],
        ),
    ),
    (
        "conditions-by-type",
        {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Initialized", "status": "True"},
                ]
            }
        },
        lambda r: (
            r["status"]["conditions"],
            [
                {"type": "Ready", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {"type": "PodScheduled", "status": "True"},
            ],
        ),
    ),
    (
        "pod-ips-by-ip",
        {"status": {"podIPs": [{"ip": "fd00::1"}]}},
        lambda r: (names(r["status"]["podIPs"], "ip"), ["fd00::1", "10.0.0.1"]),
    ),
    (
        "ports-by-container-port",
        {
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443}],
                    }
                ]
            }
        },
        lambda r: (
            r["spec"]["containers"][0]["ports"],
            [{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443}],
        ),
    ),
    (
        "set-element-order-only",
        {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}]}},
        lambda r: (names(r["spec"]["containers"]), ["sidecar", "web"]),
    ),
    (
        "set-element-order-with-new-item",
        {
            "spec": {
                "$setElementOrder/containers": [
                    {"name": "web"},
                    {"name": "new"},
                    {"name": "sidecar"},
                ],
                "containers": [{"name": "new", "image": "x"}],
            }
        },
        lambda r: (names(r["spec"]["containers"]), ["web", "new", "sidecar"]),
    ),
    (
        "set-element-order-primitives",
        {"metadata": {"$setElementOrder/finalizers": ["f3", "f1"]}},
        # f2 is server-only and came before f3 on the server, so it stays in front
        lambda r: (r["metadata"]["finalizers"], ["f2", "f3", "f1"]),
    ),
    (
        "retain-keys-switches-volume-source",
        {
            "spec": {
                "volumes": [
                    {
                        "name": "v",
                        "$retainKeys": ["name", "configMap"],
                        "configMap": {"name": "cm2"},
                    }
                ]
            }
        },
        lambda r: (r["spec"]["volumes"][0], {"name": "v", "configMap": {"name": "cm2"}}),
    ),
    (
        "null-deletes-keys",
        {"metadata": {"labels": {"tier": None}}, "spec": {"securityContext": None}},
        lambda r: (
            (r["metadata"]["labels"], "securityContext" in r["spec"]),
            ({"app": "web"}, False),
        ),
    ),
    (
        "tolerations-are-atomic",
        {"spec": {"tolerations": [{"key": "t2", "operator": "Exists"}]}},
        lambda r: (r["spec"]["tolerations"], [{"key": "t2", "operator": "Exists"}]),
    ),
    (
        "args-are-atomic",
        {"spec": {"containers": [{"name": "web", "args": ["--c"]}]}},
        lambda r: (r["spec"]["containers"][0]["args"], ["--c"]),
    ),
    (
        "unknown-map-merges",
        {"spec": {"affinity": {"podAffinity": {"y": 2}}}},
        lambda r: (r["spec"]["affinity"], {"nodeAffinity": {"x": 1}, "podAffinity": {"y": 2}}),
    ),
    (
        "unknown-list-replaced",
        {"spec": {"extraList": [{"name": "b"}]}, "status": {"somethingNew": [1]}},
        lambda r: ((r["spec"]["extraList"], r["status"]["somethingNew"]), ([{"name": "b"}], [1])),
    ),
    (
        "new-key-drops-nulls-and-directive-maps",
        {
            "spec": {
                "dnsConfig": {
                    "nameservers": ["1.1.1.1"],
                    "searches": None,
                    "options": [{"name": "a", "$patch": "delete"}, {"name": "b"}],
                }
            }
        },
        lambda r: (
            r["spec"]["dnsConfig"],
            {"nameservers": ["1.1.1.1"], "options": [{"name": "b"}]},
        ),
    ),
    (
        "new-key-that-is-a-directive-map-is-dropped",
        {
            "spec": {
                "hostAliases": [{"ip": "1.2.3.4", "$patch": "delete"}],
                "overhead": {"$patch": "replace", "cpu": "1"},
            }
        },
        lambda r: (("hostAliases" in r["spec"], "overhead" in r["spec"]), (True, False)),
    ),
    (
        "atomic-list-drops-directive-keys-of-items",
        {"spec": {"tolerations": [{"key": "t1", "$patch": "delete"}, {"key": "t3"}]}},
        lambda r: (r["spec"]["tolerations"], [{"key": "t1"}, {"key": "t3"}]),
    ),
    (
        "type-change-replaces",
        {"spec": {"affinity": "none"}},
        lambda r: (r["spec"]["affinity"], "none"),
    ),
    (
        "labels-replace-directive",
        {"metadata": {"labels": {"$patch": "replace", "only": "me"}}},
        lambda r: (r["metadata"]["labels"], {"only": "me"}),
    ),
    (
        "top-level-delete-directive",
        {"$patch": "delete"},
        lambda r: (r, {}),
    ),
    (
        "empty-patch-is-identity",
        {},
        lambda r: (r, BASE_POD),
    ),
]


@pytest.mark.parametrize(("patch", "check"), [pytest.param(p, c, id=i) for i, p, c in SMP_CASES])
def test_strategic_merge_patch(patch: dict[str, Any], check: Check) -> None:
    snapshot = copy.deepcopy((BASE_POD, patch))
    result = apply_strategic_merge_patch(BASE_POD, patch, POD)
    actual, expected = check(result)
    assert actual == expected
    assert (BASE_POD, patch) == snapshot, "inputs must not be mutated"
    assert shared_containers(result, [BASE_POD, patch]) == []
    assert directive_keys(result) == []


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param(
            {"containers": containers_of("c", "e", "a", "d")},
            {
                "$setElementOrder/containers": [
                    {"name": "c"},
                    {"name": "b"},
                    {"name": "d"},
                    {"name": "e"},
                ],
                "containers": [
                    {"name": "b"},
                    {"name": "d", "image": "new"},
                    {"name": "e", "$patch": "delete"},
                ],
            },
            # "a" is server-only; upstream places it against the list as mutated in place by
            # the deletion of "e" and the append of "b" ([c, a, d, b]), hence before "b".
            ["c", "a", "b", "d"],
            id="server-only-item-after-in-place-delete-and-append",
        ),
        pytest.param(
            {"containers": containers_of("c", "e", "a", "d")},
            {
                "$setElementOrder/containers": [
                    {"name": "c"},
                    {"name": "b"},
                    {"name": "d"},
                    {"name": "e"},
                ],
                "containers": [{"name": "b"}],
            },
            ["c", "b", "a", "d", "e"],
            id="server-only-item-without-deletion",
        ),
        pytest.param(
            {"containers": containers_of("a", "b")},
            {
                "$setElementOrder/containers": [{"name": "b"}],
                "containers": [{"name": "a", "$patch": "delete"}],
            },
            ["b"],
            id="delete-with-order",
        ),
        pytest.param(
            {},
            {
                "$setElementOrder/initContainers": [{"name": "i2"}, {"name": "i1"}],
                "initContainers": [{"name": "i2"}, {"name": "i1"}],
            },
            ["i2", "i1"],
            id="new-list-with-order",
        ),
    ],
)
def test_strategic_set_element_order(
    original: dict[str, Any], patch: dict[str, Any], expected: list[str]
) -> None:
    result = apply_strategic_merge_patch(pod(**original), {"spec": patch}, POD)
    field = "initContainers" if "initContainers" in result["spec"] else "containers"
    assert names(result["spec"][field]) == expected
    assert directive_keys(result) == []


@pytest.mark.parametrize(
    ("group", "kind", "original", "patch", "expected"),
    [
        pytest.param(
            "", "Service",
            {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}},
            {"spec": {"ports": [{"port": 443, "targetPort": 8443}]}},
            {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https", "targetPort": 8443}]}},
            id="service-ports-by-port",
        ),
        pytest.param(
            "", "Node",
            {"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}], "conditions": [{"type": "Ready", "status": "False"}]}},
            {"status": {"addresses": [{"type": "Hostname", "address": "n1"}], "conditions": [{"type": "Ready", "status": "True"}]}},
            {"status": {"addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.0.0.1"}], "conditions": [{"type": "Ready", "status": "True"}]}},
            id="node-addresses-and-conditions-by-type",
        ),
        pytest.param(
            "apps", "StatefulSet",
            {"status": {"conditions": [{"type": "A", "status": "True"}]}, "spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}]}},
            {"status": {"conditions": [{"type": "B", "status": "True"}]}, "spec": {"volumeClaimTemplates": [{"metadata": {"name": "logs"}}]}},
            {"status": {"conditions": [{"type": "B", "status": "True"}, {"type": "A", "status": "True"}]}, "spec": {"volumeClaimTemplates": [{"metadata": {"name": "logs"}}]}},
            id="statefulset-conditions-merge-claim-templates-atomic",
        ),
        pytest.param(
            "apps", "Deployment",
            {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
            {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
            {"spec": {"strategy": {"type": "Recreate"}}},
            id="deployment-strategy-retain-keys",
        ),
        pytest.param(
            "batch", "Job",
            {"spec": {"template": {"spec": {"containers": containers_of("a", "b")}}}},
            {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "new"}]}}}},
            {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "img-a"}, {"name": "b", "image": "new"}]}}}},
            id="job-template-containers",
        ),
        pytest.param(
            "", "ConfigMap",
            {"metadata": {"finalizers": ["a"]}, "data": {"k": "v", "old": "x"}},
            {"metadata": {"finalizers": ["b"]}, "data": {"old": None, "n": "1"}},
            {"metadata": {"finalizers": ["b", "a"]}, "data": {"k": "v", "n": "1"}},
            id="configmap-data-map",
        ),
    ],
)  # fmt: skip
def test_strategic_other_kinds(
    group: str, kind: str, original: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert (
        apply_strategic_merge_patch(original, patch, strategic_schema_for(group, kind)) == expected
    )


def test_strategic_without_schema_behaves_like_merge_patch() -> None:
    original = {"spec": {"items": [{"name": "a"}], "finalizers": ["x"], "m": {"a": 1}}}
    patch = {"spec": {"items": [{"name": "b"}], "finalizers": ["y"], "m": {"b": 2, "a": None}}}
    expected = apply_merge_patch(original, patch)
    assert apply_strategic_merge_patch(original, patch, None) == expected
    # directives still apply
    assert apply_strategic_merge_patch(original, {"spec": {"$patch": "delete"}}, None) == {
        "spec": {}
    }


def test_strategic_kubectl_apply_statefulset_image_change() -> None:
    """The patch `kubectl apply` sends when only the image of a StatefulSet changed.

    The live object has a container injected server-side ("istio-proxy") that is not in the
    last-applied configuration, plus fields set by the server (status, defaults).
    """
    last_applied_old: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "serviceName": "web",
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:1.24",
                            "ports": [{"containerPort": 80, "name": "web"}],
                        },
                        {
                            "name": "log",
                            "image": "busybox:1.36",
                            "args": ["tail", "-f", "/var/log/x"],
                        },
                    ]
                },
            },
        },
    }
    live = copy.deepcopy(last_applied_old)
    live["metadata"].update(
        {
            "uid": "0c6f",
            "resourceVersion": "1234",
            "generation": 3,
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(last_applied_old)
                + "\n"
            },
        }
    )
    live_containers = live["spec"]["template"]["spec"]["containers"]
    live_containers[0].update(
        {"imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log"}
    )
    live_containers.insert(1, {"name": "istio-proxy", "image": "istio/proxyv2:1.20"})
    live["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    live["status"] = {
        "replicas": 2,
        "readyReplicas": 2,
        "conditions": [{"type": "Available", "status": "True"}],
    }

    last_applied_new = copy.deepcopy(last_applied_old)
    last_applied_new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.25"
    patch = {
        "metadata": {
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(last_applied_new)
                + "\n"
            }
        },
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "nginx"}, {"name": "log"}],
                    "containers": [{"image": "nginx:1.25", "name": "nginx"}],
                }
            }
        },
    }
    snapshot = copy.deepcopy((live, patch))

    result = apply_strategic_merge_patch(live, patch, strategic_schema_for("apps", "StatefulSet"))

    expected = copy.deepcopy(live)
    expected["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = (
        json.dumps(last_applied_new) + "\n"
    )
    expected["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.25"
    assert result == expected
    # the server-side sidecar keeps its place between the applied containers
    assert names(result["spec"]["template"]["spec"]["containers"]) == [
        "nginx",
        "istio-proxy",
        "log",
    ]
    assert (live, patch) == snapshot
    assert shared_containers(result, [live, patch]) == []
    assert directive_keys(result) == []


@pytest.mark.parametrize(
    ("patch", "code", "fragment"),
    [
        pytest.param({"spec": {"securityContext": {"$patch": "foo"}}}, 400, "unknown patch type", id="bad-map-directive"),
        pytest.param({"spec": {"securityContext": {"$patch": "merge"}}}, 400, "unknown patch type", id="merge-map-directive"),
        pytest.param({"spec": {"containers": [{"name": "web", "$patch": "foo"}]}}, 400, "spec.containers: unknown patch type", id="bad-list-directive"),
        pytest.param({"spec": {"containers": [{"name": "web", "$patch": "merge"}]}}, 400, "merging lists cannot yet be specified", id="merge-list-directive"),
        pytest.param({"spec": {"containers": [{"image": "x"}]}}, 400, "spec.containers: map: {\"image\":\"x\"} does not contain declared merge key: name", id="missing-merge-key"),
        pytest.param({"spec": {"containers": [{"$patch": "delete"}]}}, 400, "declared merge key: name", id="delete-without-merge-key"),
        pytest.param({"spec": {"containers": [{"name": "web", "env": [{"value": "1"}]}]}}, 400, 'spec.containers[name="web"].env', id="nested-missing-merge-key"),
        pytest.param({"spec": {"volumes": [{"name": "v", "$retainKeys": "name"}]}}, 400, "invalid patch format of retainKeys", id="retain-keys-not-list"),
        pytest.param({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name"], "configMap": {}}]}}, 400, "'configMap' is in the patch but not in $retainKeys", id="retain-keys-missing-field"),
        pytest.param({"metadata": {"$setElementOrder/finalizers": ["f3", "f1"], "finalizers": ["f1", "f3"]}}, 400, "doesn't match $setElementOrder list", id="set-order-mismatch"),
        pytest.param({"metadata": {"$setElementOrder/finalizers": "f1"}}, 400, "invalid patch format of setElementOrder list", id="set-order-not-list"),
        pytest.param({"metadata": {"$setElementOrderfinalizers": ["f1"]}}, 400, "invalid patch format of setElementOrder list", id="set-order-bad-key"),
        pytest.param({"metadata": {"$deleteFromPrimitiveListfinalizers": ["f1"]}}, 400, "invalid patch format of primitive list", id="delete-list-bad-key"),
        pytest.param({"metadata": {"finalizers": [1]}}, 422, "metadata.finalizers: list element types are not identical", id="element-types-differ"),
        pytest.param({"spec": {"containers": ["web"]}}, 422, "list element types are not identical", id="string-in-object-list"),
    ],
)  # fmt: skip
def test_strategic_merge_patch_errors(patch: dict[str, Any], code: int, fragment: str) -> None:
    snapshot = copy.deepcopy((BASE_POD, patch))
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch(BASE_POD, patch, POD)
    assert info.value.code == code
    assert fragment in info.value.message
    assert (BASE_POD, patch) == snapshot


@pytest.mark.parametrize(
    ("original", "patch", "code", "fragment"),
    [
        pytest.param(BASE_POD, ["not", "an", "object"], 400, "must be a JSON object", id="patch-not-object"),
        pytest.param(BASE_POD, None, 400, "must be a JSON object", id="patch-null"),
        pytest.param([1], {}, 422, "expected a JSON object", id="original-not-object"),
        pytest.param(
            {"metadata": {"finalizers": []}},
            {"metadata": {"finalizers": [["f1"]]}},
            422,
            "metadata.finalizers: lists of lists are not supported",
            id="list-of-lists",
        ),
        pytest.param(
            pod(containers=[{"image": "no-name"}]),
            {"spec": {"containers": [{"name": "a", "image": "x"}]}},
            422,
            "does not contain declared merge key: name",
            id="stored-item-without-merge-key",
        ),
    ],
)  # fmt: skip
def test_strategic_merge_patch_bad_documents(
    original: Any, patch: Any, code: int, fragment: str
) -> None:
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch(original, patch, POD)
    assert info.value.code == code
    assert fragment in info.value.message


def test_patch_error_defaults_to_422() -> None:
    err = PatchError("boom")
    assert (err.code, err.message, str(err)) == (422, "boom", "boom")
    assert isinstance(err, ValueError)
