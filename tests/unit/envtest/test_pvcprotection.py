"""The embedded pvc-protection controller (kube_runtime/envtest/server/pvcprotection.py): which pods
hold a claim, and the controller's decisions on an in-memory store (synced by hand, no thread)."""

from __future__ import annotations

from typing import Any

import pytest

from kube_runtime.envtest.server.admission import PVC_PROTECTION_FINALIZER
from kube_runtime.envtest.server.pvcprotection import (
    PvcProtectionController,
    claim_names,
    pod_uses_claim,
)
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import DeleteOptions, Store
from kube_runtime.envtest.server.strategy import KubeStrategy

NS = "ns"


def claim(name: str = "c", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NS, **meta},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def pod(name: str = "p", *, node: str | None = "n1", claims: tuple[str, ...] = ("c",)) -> Any:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x"}],
        "volumes": [
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
            for i, c in enumerate(claims)
        ],
    }
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"}, "spec": spec}


def ephemeral_pod(name: str = "p", **meta: Any) -> dict[str, Any]:
    p = pod(name, claims=())
    p["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]
    p["metadata"].update(meta)
    return p


# ------------------------------------------------------------------------------- pure rules


def test_claim_names() -> None:
    assert claim_names(pod(claims=("a", "b"))) == ["a", "b"]
    assert claim_names(ephemeral_pod("web")) == ["web-scratch"]
    assert claim_names({"metadata": {"name": "x"}}) == []


def test_a_scheduled_pod_naming_the_claim_uses_it_whatever_its_phase() -> None:
    c = claim()
    assert pod_uses_claim(pod(), c)
    for phase in ("Succeeded", "Failed"):
        assert pod_uses_claim({**pod(), "status": {"phase": phase}}, c)
    assert not pod_uses_claim(pod(node=None), c)  # never scheduled: never starts
    assert not pod_uses_claim(pod(claims=("other",)), c)
    elsewhere = pod()
    elsewhere["metadata"]["namespace"] = "other"
    assert not pod_uses_claim(elsewhere, c)


def test_ephemeral_claims_count_while_owned_by_the_pod_and_not_shut_down() -> None:
    owned = claim("p-scratch", ownerReferences=[{"uid": "uid-p", "controller": True}])
    p = ephemeral_pod()
    p["spec"]["nodeName"] = "n1"
    assert pod_uses_claim(p, owned)
    assert not pod_uses_claim(p, claim("p-scratch"))  # not created for this pod
    shut_down = ephemeral_pod(
        deletionTimestamp="2024-01-01T00:00:00Z", deletionGracePeriodSeconds=0
    )
    shut_down["spec"]["nodeName"] = "n1"
    assert not pod_uses_claim(shut_down, owned)
    terminating = ephemeral_pod(
        deletionTimestamp="2024-01-01T00:00:00Z", deletionGracePeriodSeconds=30
    )
    terminating["spec"]["nodeName"] = "n1"
    assert pod_uses_claim(terminating, owned)


# ---------------------------------------------------------------------- controller on a store


@pytest.fixture
def env() -> Any:
    registry = Registry()
    store = Store(registry, KubeStrategy())
    store.create(registry.by_key("", "namespaces"), None, {"metadata": {"name": NS}})  # type: ignore[arg-type]
    controller = PvcProtectionController(store)
    # listener only (no worker thread): the tests sync by hand
    store.add_listener(controller._on_event)
    claims, pods = registry.by_key("", "persistentvolumeclaims"), registry.by_key("", "pods")
    return store, controller, claims, pods


def test_deleted_claim_is_held_while_a_scheduled_pod_uses_it(env: Any) -> None:
    store, controller, claims, pods = env
    store.create(claims, NS, claim())
    store.create(pods, NS, pod())
    store.create(pods, NS, pod("idle", node=None))
    stored, removed = store.delete(claims, NS, "c")
    assert not removed and stored.meta["finalizers"] == [PVC_PROTECTION_FINALIZER]
    controller.sync(NS, "c")
    assert store.try_get(claims, NS, "c") is not None
    store.delete(pods, NS, "p", DeleteOptions(grace_seconds=0))
    controller.sync(NS, "c")
    assert store.try_get(claims, NS, "c") is None


def test_other_finalizers_still_hold_the_claim(env: Any) -> None:
    store, controller, claims, _ = env
    store.create(claims, NS, claim(finalizers=["example.com/keep"]))
    store.delete(claims, NS, "c")
    controller.sync(NS, "c")
    left = store.get(claims, NS, "c")
    assert left.meta["finalizers"] == ["example.com/keep"]
    assert left.meta["deletionTimestamp"]


def test_live_claim_without_the_finalizer_gets_it_back(env: Any) -> None:
    store, controller, claims, _ = env
    store.create(claims, NS, claim())
    store.mutate(claims, NS, "c", lambda o: {**o, "metadata": {**o["metadata"], "finalizers": []}})
    assert not store.get(claims, NS, "c").meta.get("finalizers")
    controller.sync(NS, "c")
    assert store.get(claims, NS, "c").meta["finalizers"] == [PVC_PROTECTION_FINALIZER]


def test_events_enqueue_only_claims_that_need_a_look(env: Any) -> None:
    store, controller, claims, pods = env
    queued = controller._queue
    store.create(claims, NS, claim())  # has the finalizer and is live: nothing to do
    store.create(pods, NS, pod())  # scheduled and running: cannot release anything
    assert not queued
    store.delete(claims, NS, "c")
    store.mutate(claims, NS, "c", lambda o: {**o, "metadata": {**o["metadata"], "labels": {}}})
    assert queued.popleft() == (NS, "c")
    assert not queued  # deduplicated while pending
    controller._pending.clear()  # as the worker does when it takes a key
    store.delete(pods, NS, "p", DeleteOptions(grace_seconds=0))
    assert queued.popleft() == (NS, "c")
    assert controller._pods_by_claim == {}
