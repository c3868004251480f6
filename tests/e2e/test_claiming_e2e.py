"""Claiming against the embedded API server: adoption and release are real strategic merge
patches (controller reference added, ``$patch: delete`` by uid keeping other owners), the uid
precondition protects re-created objects, and ``recheck_controller`` reads the owner fresh."""

from __future__ import annotations

from typing import Any

import pytest

from kube_runtime.cache import INDEX_CONTROLLER_UID, InformerCache
from kube_runtime.claiming import (
    CannotAdoptError,
    ClaimError,
    ControllerRefManager,
    recheck_controller,
)
from kube_runtime.client.errors import ApiError
from kube_runtime.kinds import (
    ConfigMap,
    ControllerRevision,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
)

SELECTOR = {"matchLabels": {"app": "web"}}


def make_set(client: Any, namespace: str, finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web", "namespace": namespace}
    if finalizers:
        meta["finalizers"] = finalizers
    created: dict[str, Any] = client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta,
            "spec": {
                "replicas": 0,
                "serviceName": "web",
                "selector": SELECTOR,
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            },
        }
    )
    return created


def make_pod(
    client: Any,
    namespace: str,
    name: str,
    labels: dict[str, str],
    refs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if refs:
        meta["ownerReferences"] = refs
    created: dict[str, Any] = client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
    )
    return created


def make_config_map(
    client: Any, namespace: str, name: str, labels: dict[str, str]
) -> dict[str, Any]:
    created: dict[str, Any] = client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
        }
    )
    return created


def ref_to(obj: dict[str, Any], controller: bool) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": controller,
    }


class Recorder:
    """Forwards patches to the real client, recording the names patched."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.patched: list[str] = []

    def patch(self, kind: Any, name: str, patch: Any, **kwargs: Any) -> Any:
        self.patched.append(name)
        return self.client.patch(kind, name, patch, **kwargs)


def refs_of(client: Any, kind: Any, name: str, namespace: str) -> list[dict[str, Any]]:
    return list(client.get(kind, name, namespace)["metadata"].get("ownerReferences") or [])


def test_adopt_release_ignore(client: Any, namespace: str) -> None:
    sts = make_set(client, namespace)
    other = client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "other-owner", "namespace": namespace},
        }
    )
    mine = ref_to(sts, controller=True)
    theirs = ref_to(other, controller=True)
    plain_other = ref_to(other, controller=False)

    orphan = make_pod(client, namespace, "web-0", {"app": "web"})
    owned = make_pod(client, namespace, "web-1", {"app": "web"}, [mine])
    stale = make_pod(client, namespace, "web-2", {"app": "old"}, [plain_other, mine])
    foreign = make_pod(client, namespace, "web-3", {"app": "web"}, [theirs])
    unrelated = make_pod(client, namespace, "db-0", {"app": "db"})
    revision = client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "web-abc", "namespace": namespace, "labels": {"app": "web"}},
            "revision": 1,
            "data": {},
        }
    )

    claim = client.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-web-0", "namespace": namespace, "labels": {"app": "web"}},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )

    recorder = Recorder(client)
    m = ControllerRefManager(recorder, sts, SELECTOR, StatefulSet, recheck_controller(client, sts))
    claimed = m.claim([orphan, owned, stale, foreign, unrelated, revision, claim])

    assert [c["metadata"]["name"] for c in claimed] == ["web-0", "web-1", "web-abc", "data-web-0"]
    # Adopted: the returned object is the server's, carrying the controller reference.
    assert claimed[0]["metadata"]["ownerReferences"] == [mine]
    assert refs_of(client, Pod, "web-0", namespace) == [mine]
    assert refs_of(client, ControllerRevision, "web-abc", namespace) == [mine]
    assert refs_of(client, PersistentVolumeClaim, "data-web-0", namespace) == [mine]
    # Released: our reference is gone, the other owner's stays.
    assert refs_of(client, Pod, "web-2", namespace) == [plain_other]
    # Ignored: untouched.
    assert refs_of(client, Pod, "web-1", namespace) == [mine]
    assert refs_of(client, Pod, "web-3", namespace) == [theirs]
    assert refs_of(client, Pod, "db-0", namespace) == []
    # Exactly one request per adoption or release, none for the others.
    assert recorder.patched == ["web-0", "web-2", "web-abc", "data-web-0"]


def test_adopting_a_recreated_object_fails_on_the_uid_precondition(
    client: Any, namespace: str
) -> None:
    sts = make_set(client, namespace)
    snapshot = make_config_map(client, namespace, "web-data", {"app": "web"})
    client.delete(ConfigMap, "web-data", namespace)
    recreated = make_config_map(client, namespace, "web-data", {"app": "web"})
    assert recreated["metadata"]["uid"] != snapshot["metadata"]["uid"]

    m = ControllerRefManager(client, sts, SELECTOR, StatefulSet)
    with pytest.raises(ClaimError) as info:
        m.claim([snapshot])
    assert info.value.claimed == []
    (error,) = info.value.errors
    # the patch's uid differs from the object's: 422, uid is immutable
    assert isinstance(error, ApiError) and error.code == 422
    assert refs_of(client, ConfigMap, "web-data", namespace) == []


def test_adopting_a_deleted_object_is_ignored(client: Any, namespace: str) -> None:
    sts = make_set(client, namespace)
    gone = make_config_map(client, namespace, "web-gone", {"app": "web"})
    client.delete(ConfigMap, "web-gone", namespace)
    owned = make_config_map(client, namespace, "web-kept", {"app": "old"})
    gone_owned = {**owned, "metadata": {**owned["metadata"], "name": "web-gone-too"}}
    gone_owned["metadata"]["ownerReferences"] = [ref_to(sts, controller=True)]

    m = ControllerRefManager(client, sts, SELECTOR, StatefulSet)
    assert m.claim([gone, gone_owned]) == []  # adopt NotFound and release NotFound: no error


def test_recheck_refuses_an_owner_being_deleted(client: Any, namespace: str) -> None:
    sts = make_set(client, namespace, finalizers=["example.com/hold"])
    orphan = make_config_map(client, namespace, "web-data", {"app": "web"})
    client.delete(StatefulSet, "web", namespace)  # the finalizer keeps it, now terminating

    # The manager holds the copy read before the deletion (a cache that lags behind).
    m = ControllerRefManager(client, sts, SELECTOR, StatefulSet, recheck_controller(client, sts))
    with pytest.raises(ClaimError) as info:
        m.claim([orphan])
    (error,) = info.value.errors
    assert isinstance(error, CannotAdoptError)
    assert f"{namespace}/web has just been deleted at" in str(error)
    assert refs_of(client, ConfigMap, "web-data", namespace) == []
    client.patch(StatefulSet, "web", {"metadata": {"finalizers": None}}, namespace=namespace)


def test_recheck_refuses_a_recreated_owner(client: Any, namespace: str) -> None:
    old = make_set(client, namespace)
    client.delete(StatefulSet, "web", namespace)
    new = make_set(client, namespace)
    orphan = make_config_map(client, namespace, "web-data", {"app": "web"})

    m = ControllerRefManager(client, old, SELECTOR, StatefulSet, recheck_controller(client, old))
    with pytest.raises(ClaimError) as info:
        m.claim([orphan])
    assert (
        f"original StatefulSet {namespace}/web is gone: got uid {new['metadata']['uid']}, "
        f"wanted {old['metadata']['uid']}"
    ) in str(info.value)
    assert refs_of(client, ConfigMap, "web-data", namespace) == []


def test_a_deleting_controller_keeps_what_it_has_and_takes_nothing(
    client: Any, namespace: str
) -> None:
    sts = make_set(client, namespace, finalizers=["example.com/hold"])
    mine = ref_to(sts, controller=True)
    orphan = make_config_map(client, namespace, "web-orphan", {"app": "web"})
    stale = make_config_map(client, namespace, "web-stale", {"app": "old"})
    stale = client.patch(
        ConfigMap, "web-stale", {"metadata": {"ownerReferences": [mine]}}, namespace=namespace
    )
    client.delete(StatefulSet, "web", namespace)
    deleting = client.get(StatefulSet, "web", namespace)
    assert deleting["metadata"].get("deletionTimestamp")

    m = ControllerRefManager(client, deleting, SELECTOR, StatefulSet)
    assert m.claim([orphan, stale]) == []
    assert refs_of(client, ConfigMap, "web-orphan", namespace) == []
    assert refs_of(client, ConfigMap, "web-stale", namespace) == [mine]
    client.patch(StatefulSet, "web", {"metadata": {"finalizers": None}}, namespace=namespace)


def test_claiming_objects_from_the_informer_cache(
    client: Any, namespace: str, wait_for: Any
) -> None:
    sts = make_set(client, namespace)
    uid = sts["metadata"]["uid"]
    for i in range(3):
        make_config_map(client, namespace, f"web-{i}", {"app": "web"})
    make_config_map(client, namespace, "web-x", {"app": "web"})  # fails the filter
    cache = InformerCache(client, namespace=namespace)
    try:
        cached = cache.list(ConfigMap, namespace)
        m = ControllerRefManager(
            client, sts, SELECTOR, StatefulSet, recheck_controller(client, sts)
        )
        claimed = m.claim(cached, lambda o: o["metadata"]["name"].rpartition("-")[2].isdigit())
        assert sorted(c["metadata"]["name"] for c in claimed) == ["web-0", "web-1", "web-2"]
        # The cache's objects were not touched (the mutation detector is on in tests) and the
        # adoptions reach the cache through the watch, indexed by controller uid.
        wait_for(
            lambda: len(cache.list(ConfigMap, index=(INDEX_CONTROLLER_UID, uid))) == 3, timeout=10
        )
        again = ControllerRefManager(client, sts, SELECTOR, StatefulSet).claim(
            cache.list(ConfigMap, namespace)
        )
        # web-x has no controller and now passes (no filter): adopted; the others are ours.
        assert sorted(c["metadata"]["name"] for c in again) == ["web-0", "web-1", "web-2", "web-x"]
    finally:
        cache.stop()
