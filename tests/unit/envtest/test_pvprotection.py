"""The embedded pv-protection controller (kube_runtime/envtest/server/pvprotection.py) on an
in-memory store, synced by hand (no thread): the finalizer held while the volume is Bound,
dropped once it is not, put back on a live volume."""

from __future__ import annotations

from typing import Any

import pytest

from kube_runtime.envtest.server.pvprotection import (
    PV_PROTECTION_FINALIZER,
    PvProtectionController,
)
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import Store
from kube_runtime.envtest.server.strategy import KubeStrategy


def volume(name: str = "v", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, **meta},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/v"},
        },
    }


@pytest.fixture
def env() -> Any:
    registry = Registry()
    store = Store(registry, KubeStrategy())
    return store, PvProtectionController(store), registry.by_key("", "persistentvolumes")


def _set_phase(store: Store, volumes: Any, phase: str) -> None:
    store.mutate(
        volumes, None, "v", lambda o: {**o, "status": {"phase": phase}}, subresource="status"
    )


def test_a_bound_volume_is_held_until_it_is_released(env: Any) -> None:
    store, controller, volumes = env
    store.create(volumes, None, volume())
    _set_phase(store, volumes, "Bound")
    stored, removed = store.delete(volumes, None, "v")
    assert not removed and PV_PROTECTION_FINALIZER in stored.meta["finalizers"]
    controller.sync("v")
    assert store.try_get(volumes, None, "v") is not None
    _set_phase(store, volumes, "Released")
    controller.sync("v")
    assert store.try_get(volumes, None, "v") is None


def test_other_finalizers_still_hold_the_volume(env: Any) -> None:
    store, controller, volumes = env
    store.create(volumes, None, volume(finalizers=["example.com/keep"]))
    store.delete(volumes, None, "v")
    controller.sync("v")
    left = store.get(volumes, None, "v")
    assert left.meta["finalizers"] == ["example.com/keep"]


def test_a_live_volume_without_the_finalizer_gets_it_back(env: Any) -> None:
    store, controller, volumes = env
    store.create(volumes, None, volume())
    store.mutate(
        volumes, None, "v", lambda o: {**o, "metadata": {**o["metadata"], "finalizers": []}}
    )
    assert not store.get(volumes, None, "v").meta.get("finalizers")
    controller.sync("v")
    assert store.get(volumes, None, "v").meta["finalizers"] == [PV_PROTECTION_FINALIZER]
    controller.sync("v")  # nothing more to do
    assert store.get(volumes, None, "v").meta["finalizers"] == [PV_PROTECTION_FINALIZER]
