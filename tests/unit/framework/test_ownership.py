"""ownership.py: controller-runtime controllerutil semantics on JSON dicts, one case per branch."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kube_runtime.ownership import (
    AlreadyOwnedError,
    get_controller_of,
    has_owner_reference,
    is_controlled_by,
    owner_reference,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)


def obj(
    kind: str = "Pod",
    name: str = "web-0",
    namespace: str | None = "ns",
    uid: str | None = None,
    api_version: str = "v1",
    owners: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if uid is not None:
        metadata["uid"] = uid
    if owners is not None:
        metadata["ownerReferences"] = owners
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


STS = obj("StatefulSet", "web", uid="uid-sts", api_version="apps/v1")
STS_V1BETA1 = obj("StatefulSet", "web", uid="uid-sts", api_version="apps/v1beta1")
STS_RECREATED = obj("StatefulSet", "web", uid="uid-sts-2", api_version="apps/v1")
OTHER_STS = obj("StatefulSet", "db", uid="uid-db", api_version="apps/v1")
CLONESET = obj("CloneSet", "web", uid="uid-cs", api_version="apps.kruise.io/v1alpha1")
NODE = obj("Node", "n1", namespace=None, uid="uid-node")


def ref(owner: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        **extra,
    }


CONTROLLER = {"controller": True, "blockOwnerDeletion": True}


# --- set_controller_reference --------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "existing", "expected"),
    [
        pytest.param(STS, None, [ref(STS, **CONTROLLER)], id="no-refs"),
        pytest.param(
            STS,
            [ref(NODE)],
            [ref(NODE), ref(STS, **CONTROLLER)],
            id="appends-beside-plain-owner",
        ),
        pytest.param(
            STS, [ref(STS)], [ref(STS, **CONTROLLER)], id="upgrades-plain-ref-of-same-owner"
        ),
        pytest.param(
            STS,
            [ref(STS, controller=True, blockOwnerDeletion=False)],
            [ref(STS, **CONTROLLER)],
            id="refreshes-own-controller-ref",
        ),
        pytest.param(
            STS,
            [ref(STS_V1BETA1, controller=True)],
            [ref(STS, **CONTROLLER)],
            id="other-version-same-group-is-same-owner",
        ),
        pytest.param(
            NODE, None, [ref(NODE, **CONTROLLER)], id="cluster-scoped-owner-of-namespaced"
        ),
    ],
)
def test_set_controller_reference(owner, existing, expected):
    target = obj(owners=copy.deepcopy(existing))
    result = set_controller_reference(owner, target)
    assert result is target
    assert target["metadata"]["ownerReferences"] == expected


@pytest.mark.parametrize(
    "existing",
    [
        pytest.param(ref(OTHER_STS, controller=True), id="other-name"),
        pytest.param(ref(CLONESET, controller=True), id="other-kind-and-group"),
        pytest.param(ref(STS_RECREATED, controller=True), id="same-name-other-uid"),
    ],
)
def test_set_controller_reference_refuses_another_controller(existing):
    target = obj(owners=[existing])
    before = copy.deepcopy(target)
    with pytest.raises(AlreadyOwnedError) as raised:
        set_controller_reference(STS, target)
    assert target == before
    assert raised.value.existing == existing
    assert raised.value.object_key == "ns/web-0"
    assert existing["name"] in str(raised.value)


def test_set_controller_reference_without_block_owner_deletion():
    target = set_controller_reference(STS, obj(), block_owner_deletion=False)
    assert target["metadata"]["ownerReferences"] == [
        ref(STS, controller=True, blockOwnerDeletion=False)
    ]


def test_set_controller_reference_does_not_mutate_a_shared_refs_list():
    shared = [ref(NODE)]
    target = obj(owners=shared)
    set_controller_reference(STS, target)
    assert shared == [ref(NODE)]  # a shallow copy of a cached object keeps the cache intact


@pytest.mark.parametrize(
    ("owner", "target", "message"),
    [
        pytest.param(STS, obj("Node", "n1", namespace=None), "cluster-scoped", id="cluster-obj"),
        pytest.param(STS, obj(namespace="other"), "cross-namespace", id="cross-namespace"),
        pytest.param(obj("StatefulSet", "web", api_version="apps/v1"), obj(), "uid", id="no-uid"),
        pytest.param(
            {"metadata": {"name": "x", "uid": "u", "namespace": "ns"}}, obj(), "kind", id="no-kind"
        ),
    ],
)
@pytest.mark.parametrize("setter", [set_controller_reference, set_owner_reference])
def test_invalid_owner_references_are_refused(setter, owner, target, message):
    before = copy.deepcopy(target)
    with pytest.raises(ValueError, match=message):
        setter(owner, target)
    assert target == before


# --- set_owner_reference -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "existing", "expected"),
    [
        pytest.param(STS, None, [ref(STS)], id="no-refs"),
        pytest.param(STS, [ref(NODE)], [ref(NODE), ref(STS)], id="appends"),
        pytest.param(STS, [ref(STS)], [ref(STS)], id="idempotent"),
        pytest.param(
            STS_RECREATED, [ref(STS)], [ref(STS_RECREATED)], id="same-owner-new-uid-replaced"
        ),
        pytest.param(
            STS,
            [ref(STS, controller=True)],
            [ref(STS)],
            id="replaces-whole-ref-as-controller-runtime",
        ),
        pytest.param(
            OTHER_STS,
            [ref(STS, controller=True)],
            [ref(STS, controller=True), ref(OTHER_STS)],
            id="beside-a-controller",
        ),
    ],
)
def test_set_owner_reference(owner, existing, expected):
    target = obj(owners=copy.deepcopy(existing))
    assert set_owner_reference(owner, target) is target
    assert target["metadata"]["ownerReferences"] == expected


def test_set_owner_reference_with_block_owner_deletion():
    target = set_owner_reference(STS, obj(), block_owner_deletion=True)
    assert target["metadata"]["ownerReferences"] == [ref(STS, blockOwnerDeletion=True)]


def test_set_owner_reference_creates_metadata():
    target: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap"}
    set_owner_reference(NODE, target)
    assert target["metadata"]["ownerReferences"] == [ref(NODE)]


# --- remove / has / get / is ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "existing", "removed", "remaining"),
    [
        pytest.param(STS, [ref(NODE), ref(STS)], True, [ref(NODE)], id="removes-one"),
        pytest.param(STS, [ref(STS, controller=True)], True, None, id="last-ref-drops-field"),
        pytest.param(STS_V1BETA1, [ref(STS)], True, None, id="any-version"),
        pytest.param(OTHER_STS, [ref(STS)], False, [ref(STS)], id="not-referenced"),
        pytest.param(STS, None, False, None, id="no-refs"),
    ],
)
def test_remove_owner_reference(owner, existing, removed, remaining):
    target = obj(owners=copy.deepcopy(existing))
    assert remove_owner_reference(owner, target) is removed
    assert target["metadata"].get("ownerReferences") == remaining


@pytest.mark.parametrize(
    ("owner", "existing", "expected"),
    [
        (STS, [ref(STS)], True),
        (STS, [ref(STS, controller=True)], True),
        (STS_V1BETA1, [ref(STS)], True),
        (STS_RECREATED, [ref(STS)], True),  # by group/kind/name, as controller-runtime
        (OTHER_STS, [ref(STS)], False),
        (CLONESET, [ref(STS)], False),
        (STS, None, False),
    ],
)
def test_has_owner_reference(owner, existing, expected):
    assert has_owner_reference(obj(owners=existing), owner) is expected


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        (None, None),
        ([ref(STS)], None),
        ([ref(STS, controller=False)], None),
        ([ref(NODE), ref(STS, controller=True)], ref(STS, controller=True)),
        ([ref(STS, controller=True), ref(OTHER_STS, controller=True)], ref(STS, controller=True)),
    ],
)
def test_get_controller_of(existing, expected):
    target = obj(owners=existing)
    found = get_controller_of(target)
    assert found == expected
    if found is not None:
        found["name"] = "changed"  # a copy: the object (maybe cached) is untouched
        assert get_controller_of(target) == expected


@pytest.mark.parametrize(
    ("owner", "existing", "expected"),
    [
        (STS, [ref(STS, controller=True)], True),
        (STS, [ref(STS)], False),  # an owner, not the controller
        (STS_RECREATED, [ref(STS, controller=True)], False),  # by uid
        (OTHER_STS, [ref(STS, controller=True)], False),
        (STS, None, False),
        (obj("StatefulSet", "web", api_version="apps/v1"), [ref(STS, controller=True)], False),
    ],
)
def test_is_controlled_by(owner, existing, expected):
    assert is_controlled_by(obj(owners=existing), owner) is expected


def test_owner_reference_builds_an_entry():
    assert owner_reference(STS) == ref(STS)
    assert owner_reference(STS, controller=True, block_owner_deletion=False) == ref(
        STS, controller=True, blockOwnerDeletion=False
    )
