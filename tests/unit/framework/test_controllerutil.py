"""controllerutil.py, the parts that need no API: merge_patch_for (cases and a seeded
round-trip property), OperationResult, in-memory finalizers and owner references on dicts and
models, ignore_not_found / ignoring_not_found.

create_or_update / create_or_patch / patch_status need a client: kube_runtime/client/fake.py
(FakeClient) did not exist when these were written, so they are tested against the embedded
cluster in tests/e2e/test_controllerutil_e2e.py.
"""

from __future__ import annotations

import copy
import random
from typing import Any, ClassVar

import orjson
import pytest
from pytest_mock import MockerFixture

from kube_runtime import kinds
from kube_runtime.client import Conflict, NotFound, Resource
from kube_runtime.controllerutil import (
    AlreadyOwnedError,
    OperationResult,
    add_finalizer,
    contains_finalizer,
    get_controller_of,
    has_controller_reference,
    has_owner_reference,
    ignore_not_found,
    ignoring_not_found,
    is_controlled_by,
    merge_patch_for,
    remove_finalizer,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from kube_runtime.models import KubeModel, ObjectMeta, OwnerReference
from kube_runtime.patch import apply_merge_patch


def not_found() -> NotFound:
    return NotFound({"kind": "Status", "code": 404, "reason": "NotFound", "message": "gone"})


def conflict() -> Conflict:
    return Conflict({"kind": "Status", "code": 409, "reason": "Conflict", "message": "stale"})


# ------------------------------------------------------------------ OperationResult


def test_operation_results() -> None:
    assert [r.value for r in OperationResult] == [
        "unchanged",
        "created",
        "updated",
        "updated_status",
        "updated_status_only",
    ]
    assert OperationResult("updated") is OperationResult.UPDATED
    assert OperationResult.CREATED == "created"
    assert f"{OperationResult.UPDATED_STATUS_ONLY}" == "updated_status_only"


# ------------------------------------------------------------------ merge_patch_for


@pytest.mark.parametrize(
    ("before", "after", "patch"),
    [
        ({}, {}, {}),
        ({"a": 1}, {"a": 1}, {}),
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1}, {}, {"a": None}),
        ({}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}}, {"a": {"c": 3}}),
        ({"a": {"b": 1}}, {"a": {}}, {"a": {"b": None}}),
        ({"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1}}}, {}),
        ({"a": [1, 2]}, {"a": [1, 2, 3]}, {"a": [1, 2, 3]}),
        ({"a": [{"x": 1}, {"y": 2}]}, {"a": [{"x": 1}]}, {"a": [{"x": 1}]}),
        ({"a": {"b": 1}}, {"a": 5}, {"a": 5}),
        ({"a": 5}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ({"a": 1}, {"a": True}, {"a": True}),  # JSON equality: true is not 1
        ({"a": True}, {"a": True}, {}),
        ({"a": [1]}, {"a": [True]}, {"a": [True]}),
        ({"a": "1"}, {"a": 1}, {"a": 1}),
        ({"a": 1}, {"a": 1.0}, {}),  # JSON numbers compare by value
    ],
)
def test_merge_patch_for(
    before: dict[str, Any], after: dict[str, Any], patch: dict[str, Any]
) -> None:
    assert merge_patch_for(before, after) == patch
    assert apply_merge_patch(before, patch) == after
    assert _json_same(apply_merge_patch(before, patch), after) or patch == {}


def test_merge_patch_for_shares_nothing_and_modifies_nothing() -> None:
    before = {"a": {"b": [1]}, "gone": {"x": 1}}
    after = {"a": {"b": [1, 2]}, "new": {"list": [{"k": "v"}]}}
    saved = copy.deepcopy((before, after))
    patch = merge_patch_for(before, after)
    assert (before, after) == saved
    patch["a"]["b"].append(3)
    patch["new"]["list"][0]["k"] = "changed"
    assert (before, after) == saved


def _random_json(rng: random.Random, depth: int) -> Any:
    choice = rng.randrange(8 if depth > 0 else 5)
    if choice == 0:
        return rng.randrange(-3, 4)
    if choice == 1:
        return rng.choice(["", "a", "b", "1"])
    if choice == 2:
        return rng.choice([True, False])
    if choice == 3:
        return rng.choice([0.5, 2.25])  # 1.0 == 1 by value: see the table above
    if choice == 4:
        return []
    if choice == 5:
        return [_random_json(rng, depth - 1) for _ in range(rng.randrange(3))]
    return _random_object(rng, depth - 1)


def _random_object(rng: random.Random, depth: int) -> dict[str, Any]:
    keys = rng.sample(["a", "b", "c", "d", "e"], rng.randrange(5))
    return {k: _random_json(rng, depth) for k in keys}


def _mutate_randomly(rng: random.Random, value: dict[str, Any], depth: int) -> dict[str, Any]:
    """A neighbour of ``value`` (so that nested maps are often shared and diffed)."""
    result = copy.deepcopy(value)
    for key in list(result):
        roll = rng.random()
        if roll < 0.2:
            del result[key]
        elif roll < 0.5 and isinstance(result[key], dict) and depth > 0:
            result[key] = _mutate_randomly(rng, result[key], depth - 1)
        elif roll < 0.6:
            result[key] = _random_json(rng, depth)
    if rng.random() < 0.3:
        result[rng.choice("abcdefg")] = _random_json(rng, depth)
    return result


def test_merge_patch_for_round_trips_on_random_documents() -> None:
    rng = random.Random(20240131)
    minimal = 0
    for _ in range(2000):
        before = _random_object(rng, 4)
        after = _mutate_randomly(rng, before, 4) if rng.random() < 0.8 else _random_object(rng, 4)
        patch = merge_patch_for(before, after)
        # JSON equality (orjson): Python's == would take True for 1.
        assert _json_same(apply_merge_patch(before, patch), after), (before, after, patch)
        # Minimal at the top: only keys that differ appear.
        assert all(
            k not in before or k not in after or not _json_same(before[k], after[k]) for k in patch
        )
        minimal += patch == {}
        assert (patch == {}) == _json_same(before, after)
    assert 0 < minimal < 2000


def _json_same(a: Any, b: Any) -> bool:
    return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        b, option=orjson.OPT_SORT_KEYS
    )


# ------------------------------------------------------------------ finalizers (in memory)


def test_finalizers_on_a_dict() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x"}}
    assert not contains_finalizer(obj, "a/b")
    assert add_finalizer(obj, "a/b") is True
    assert add_finalizer(obj, "a/b") is False
    assert add_finalizer(obj, "c/d") is True
    assert obj["metadata"]["finalizers"] == ["a/b", "c/d"]
    assert contains_finalizer(obj, "c/d")
    assert remove_finalizer(obj, "x/y") is False
    assert remove_finalizer(obj, "a/b") is True
    assert obj["metadata"]["finalizers"] == ["c/d"]
    assert remove_finalizer(obj, "c/d") is True
    assert "finalizers" not in obj["metadata"]


def test_finalizers_without_metadata_and_duplicates() -> None:
    bare: dict[str, Any] = {}
    assert add_finalizer(bare, "a") is True
    assert bare == {"metadata": {"finalizers": ["a"]}}
    dup: dict[str, Any] = {"metadata": {"finalizers": ["a", "b", "a"]}}
    assert remove_finalizer(dup, "a") is True
    assert dup["metadata"]["finalizers"] == ["b"]


def test_finalizer_lists_are_replaced_not_changed_in_place() -> None:
    shared = ["a"]
    obj: dict[str, Any] = {"metadata": {"finalizers": shared}}
    add_finalizer(obj, "b")
    remove_finalizer(obj, "a")
    assert shared == ["a"]
    assert obj["metadata"]["finalizers"] == ["b"]


class Widget(KubeModel):
    __kube_resource__: ClassVar[Resource] = Resource(
        group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
    )
    metadata: ObjectMeta


def widget(**meta: Any) -> Widget:
    return Widget.model_validate(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "ns", **meta},
        }
    )


def test_finalizers_on_a_model() -> None:
    w = widget()
    assert add_finalizer(w, "a/b") is True
    assert add_finalizer(w, "a/b") is False
    assert w.metadata.finalizers == ["a/b"]
    assert contains_finalizer(w, "a/b")
    assert w.to_wire()["metadata"]["finalizers"] == ["a/b"]
    assert remove_finalizer(w, "a/b") is True
    assert not contains_finalizer(w, "a/b")
    assert w.metadata.finalizers is None


def test_kube_runtime_finalizers_module_decides_through_controllerutil(
    mocker: MockerFixture,
) -> None:
    from kube_runtime import finalizers

    assert finalizers.has_finalizer is contains_finalizer
    client = mocker.NonCallableMock(spec=["get", "patch"])
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "c",
            "namespace": "ns",
            "resourceVersion": "7",
            "finalizers": ["a", "a"],
        },
    }
    assert finalizers.ensure_finalizer_removed(client, obj, "a") is client.patch.return_value
    client.patch.assert_called_once_with(
        kinds.ConfigMap,
        "c",
        {"metadata": {"finalizers": [], "resourceVersion": "7"}},
        namespace="ns",
        patch_type="merge",
    )
    client.get.assert_not_called()  # the given object is the first try's: no read
    assert obj["metadata"]["finalizers"] == ["a", "a"]  # the given object is not modified


# ------------------------------------------------------------------ owner references


OWNER = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1"},
}
OTHER = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "ns", "uid": "uid-2"},
}


def test_owner_references_on_a_dict() -> None:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
    }
    assert not has_controller_reference(pod)
    assert set_controller_reference(OWNER, pod) is pod
    assert has_controller_reference(pod)
    assert is_controlled_by(pod, OWNER)
    assert get_controller_of(pod) == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "web",
        "uid": "uid-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    with pytest.raises(AlreadyOwnedError):
        set_controller_reference(OTHER, pod)
    set_owner_reference(OTHER, pod)
    assert has_owner_reference(pod, OTHER)
    assert remove_owner_reference(OWNER, pod) is True
    assert remove_owner_reference(OWNER, pod) is False
    assert not has_controller_reference(pod)
    assert [r["name"] for r in pod["metadata"]["ownerReferences"]] == ["db"]


def test_owner_references_on_models() -> None:
    owner = Widget.model_validate({**OWNER, "apiVersion": "example.com/v1", "kind": "Widget"})
    w = widget()
    assert set_controller_reference(owner, w) is w
    refs = w.metadata.owner_references
    assert refs is not None and isinstance(refs[0], OwnerReference)
    assert refs[0].controller is True and refs[0].uid == "uid-1"
    assert w.to_wire()["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "name": "web",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert has_controller_reference(w) and is_controlled_by(w, owner)
    assert has_owner_reference(w, owner)
    with pytest.raises(AlreadyOwnedError):
        set_controller_reference(OTHER, w)
    set_owner_reference(OTHER, w)
    assert w.metadata.owner_references is not None and len(w.metadata.owner_references) == 2
    assert remove_owner_reference(owner, w) is True
    assert remove_owner_reference(OTHER, w) is True
    assert w.metadata.owner_references is None
    assert remove_owner_reference(OTHER, w) is False


def test_model_owner_without_explicit_api_version_uses_its_resource() -> None:
    owner = Widget(metadata=ObjectMeta(name="web", namespace="ns", uid="uid-9"))
    pod: dict[str, Any] = {"metadata": {"name": "p", "namespace": "ns"}}
    set_owner_reference(owner, pod)
    assert pod["metadata"]["ownerReferences"] == [
        {"apiVersion": "example.com/v1", "kind": "Widget", "name": "web", "uid": "uid-9"}
    ]


def test_scope_errors_come_from_ownership() -> None:
    other_ns: dict[str, Any] = {"metadata": {"name": "p", "namespace": "elsewhere"}}
    with pytest.raises(ValueError, match="cross-namespace"):
        set_controller_reference(OWNER, other_ns)


# ------------------------------------------------------------------ not found


def test_ignore_not_found() -> None:
    assert ignore_not_found(not_found()) is None
    assert ignore_not_found(None) is None
    err = conflict()
    assert ignore_not_found(err) is err
    other = RuntimeError("boom")
    assert ignore_not_found(other) is other


def test_ignoring_not_found() -> None:
    reached = []
    with ignoring_not_found():
        reached.append(1)
        raise not_found()
    assert reached == [1]
    with pytest.raises(Conflict), ignoring_not_found():
        raise conflict()
    with pytest.raises(KeyError), ignoring_not_found():
        raise KeyError("x")


@pytest.mark.parametrize(
    ("old", "new"),
    [("add_finalizer", "ensure_finalizer"), ("remove_finalizer", "ensure_finalizer_removed")],
)
def test_one_add_finalizer_the_writers_old_names_warn(old: str, new: str) -> None:
    """``add_finalizer`` / ``remove_finalizer`` are controllerutil's in-memory helpers
    (controller-runtime's ``AddFinalizer(obj, name) bool``); the finalizers module's writers,
    which took a client under the same names, are ``ensure_finalizer*`` now. The old names
    still give the writers, with a DeprecationWarning naming the new one."""
    from kube_runtime import finalizers

    assert old not in finalizers.__all__ and new in finalizers.__all__
    with pytest.warns(DeprecationWarning, match=f"finalizers.{old} moved to .*finalizers.{new}"):
        value = getattr(finalizers, old)
    assert value is getattr(finalizers, new)
    with pytest.raises(AttributeError):
        finalizers.no_such_name  # noqa: B018
