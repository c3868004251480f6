"""kube_runtime.meta: field reads that never raise and never return None for collections."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from kube_runtime import meta

POD = {
    "metadata": {
        "name": "web-0",
        "namespace": "ns",
        "uid": "u1",
        "resourceVersion": "7",
        "generation": 3,
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "deletionTimestamp": "2026-01-02T00:00:00Z",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
        "finalizers": ["f"],
        "ownerReferences": [
            {"uid": "other", "controller": False},
            {"uid": "owner", "controller": True},
        ],
    },
    "spec": {"x": 1},
    "status": {"phase": "Running"},
}


def test_fields_of_a_full_object() -> None:
    assert (meta.name(POD), meta.namespace(POD), meta.key(POD)) == ("web-0", "ns", "ns/web-0")
    assert (meta.uid(POD), meta.resource_version(POD), meta.generation(POD)) == ("u1", "7", 3)
    assert meta.creation_timestamp(POD) == "2026-01-01T00:00:00Z"
    assert meta.deletion_timestamp(POD) == "2026-01-02T00:00:00Z" and meta.is_deleting(POD)
    assert meta.labels(POD) == {"app": "web"} and meta.annotations(POD) == {"a": "b"}
    assert list(meta.finalizers(POD)) == ["f"]
    assert meta.controller_uid(POD) == "owner"
    assert meta.spec(POD) == {"x": 1} and meta.status(POD) == {"phase": "Running"}


@pytest.mark.parametrize("obj", [{}, {"metadata": None}, {"metadata": {"labels": None}}])
def test_missing_fields_read_as_empty(obj: dict) -> None:
    assert meta.name(obj) == "" and meta.namespace(obj) == "" and meta.key(obj) == ""
    assert meta.labels(obj) == {} and meta.annotations(obj) == {}
    assert list(meta.finalizers(obj)) == [] and list(meta.owner_references(obj)) == []
    assert meta.controller_ref(obj) is None and meta.controller_uid(obj) == ""
    assert meta.deletion_timestamp(obj) is None and not meta.is_deleting(obj)
    assert meta.generation(obj) == 0 and meta.spec(obj) == {} and meta.status(obj) == {}


def test_cluster_scoped_key_is_the_name() -> None:
    assert meta.key({"metadata": {"name": "node-1"}}) == "node-1"


class _Meta(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    name: str
    owner_references: list[dict] | None = Field(default=None, alias="ownerReferences")


class _Obj(BaseModel):
    model_config = ConfigDict(extra="allow")
    metadata: _Meta


def test_models_read_through_their_json_form() -> None:
    obj = _Obj.model_validate(
        {"metadata": {"name": "m", "ownerReferences": [{"uid": "o", "controller": True}]}}
    )
    assert meta.name(obj) == "m" and meta.controller_uid(obj) == "o"


def test_anything_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="expected a dict or a resource model"):
        meta.name(42)


def test_deep_copy_gives_independent_json_and_falls_back_for_the_rest() -> None:
    import copy
    import enum

    pod: dict[str, Any] = {
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"n": 1}]},
    }
    copied = meta.deep_copy(pod)
    assert copied == pod
    copied["metadata"]["labels"]["a"] = "changed"
    copied["spec"]["containers"][0]["n"] = 2
    assert pod["metadata"]["labels"] == {"a": "b"} and pod["spec"]["containers"] == [{"n": 1}]

    class Mode(str, enum.Enum):
        ON = "on"

    # Values an orjson round trip cannot reproduce are copied by the fallback.
    big: dict[str, Any] = {"n": 2**70, "k": [{1: "int key"}]}
    assert meta.deep_copy(big) == big and meta.deep_copy(big)["k"] is not big["k"]
    seen: list[object] = []

    def fallback(value: object) -> object:
        seen.append(value)
        return copy.deepcopy(value)

    assert meta.deep_copy(big, fallback=fallback) == big and seen == [big]
    assert meta.deep_copy((1, [2]), fallback=fallback) == (1, [2])  # not a dict or list
    assert meta.deep_copy("s") == "s" and isinstance(meta.deep_copy(Mode.ON), Mode)
    # Immutable JSON scalars are themselves (as copy.deepcopy gives them), without a fallback.
    seen.clear()
    for scalar in ("s", 7, 2.5, True, None, 2**70):
        assert meta.deep_copy(scalar, fallback=fallback) is scalar
    assert seen == []


def test_annotation_json_reads_an_object_or_gives_none() -> None:
    pod = {"metadata": {"annotations": {"a": '{"x": 1}', "list": "[1]", "bad": "{", "e": ""}}}
    assert meta.annotation_json(pod, "a") == {"x": 1}
    assert [meta.annotation_json(pod, k) for k in ("list", "bad", "e", "missing")] == [None] * 4
    assert meta.annotation_json({}, "a") is None


def test_has_controller_reads_the_controller_flag() -> None:
    ref = {"kind": "ReplicaSet", "name": "r", "uid": "u"}
    assert meta.has_controller({"metadata": {"ownerReferences": [{**ref, "controller": True}]}})
    assert not meta.has_controller({"metadata": {"ownerReferences": [ref]}})
    assert not meta.has_controller({})


def test_a_kind_hashes_once_and_is_rebuilt_from_its_fields() -> None:
    """``Kind`` keeps its hash (taken once) out of its fields, and a copy or pickle is rebuilt
    from the pair, so it hashes as the pair in every process."""
    import copy
    import dataclasses
    import pickle

    from kube_runtime.kinds import Kind, Pod

    kind = Kind("v1", "Pod")
    assert kind == Pod and hash(kind) == hash(Pod) == hash(("v1", "Pod"))
    assert {Pod: 1}[kind] == 1
    assert [f.name for f in dataclasses.fields(kind)] == ["api_version", "kind"]
    assert dataclasses.asdict(kind) == {"api_version": "v1", "kind": "Pod"}
    assert repr(kind) == "Kind(api_version='v1', kind='Pod')"
    assert Pod.__reduce__() == (Kind, ("v1", "Pod"))
    for other in (pickle.loads(pickle.dumps(kind)), copy.deepcopy(kind), copy.copy(kind)):
        assert other == kind and hash(other) == hash(("v1", "Pod"))
    moved = dataclasses.replace(kind, kind="Service")
    assert hash(moved) == hash(("v1", "Service")) and moved != kind
    assert Kind("apps/v1", "A") < Kind("apps/v1", "B")
