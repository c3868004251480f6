"""Store listeners by kind: :meth:`Store.set_listener_kinds`, and the CRD finalizer's
listener, called for CRDs and the kinds they serve only (not for every pod write)."""

from __future__ import annotations

from typing import Any

from kube_runtime.envtest import EmbeddedCluster
from kube_runtime.envtest.server.storage import Event

_PODS = ("", "pods")
_CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")


def _crd(group: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def test_set_listener_kinds_changes_what_a_listener_is_called_for() -> None:
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store = cluster.store
        seen: list[tuple[str, str]] = []

        def listener(event: Event) -> None:
            seen.append(event.info.key)

        def other(event: Event) -> None:  # never registered: set_listener_kinds ignores it
            raise AssertionError(event)

        namespaces = cluster.resource("", "namespaces")
        store.add_listener(listener, {_PODS})
        store.set_listener_kinds(other, None)
        store.create(namespaces, None, {"metadata": {"name": "a"}})
        store.set_listener_kinds(listener, None)
        store.create(namespaces, None, {"metadata": {"name": "b"}})
        store.set_listener_kinds(listener, {_PODS})
        store.create(namespaces, None, {"metadata": {"name": "c"}})
        store.remove_listener(listener)
        store.set_listener_kinds(listener, None)
        store.create(namespaces, None, {"metadata": {"name": "d"}})
        assert seen == [("", "namespaces")]


def test_the_crd_finalizer_listens_to_crds_and_the_kinds_they_serve() -> None:
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store, serving = cluster.store, cluster.crd_serving
        crds = cluster.resource(*_CRDS)
        assert serving._on_event not in store._listeners_of(_PODS)
        assert serving._on_event in store._listeners_of(_CRDS)
        stored = store.create(crds, None, _crd("example.com"))
        serving("create", stored.obj)
        assert ("example.com", "widgets") in (serving.event_kinds or ())
        assert serving._on_event in store._listeners_of(("example.com", "widgets"))
        assert serving._on_event not in store._listeners_of(_PODS)
        store.delete(crds, None, "widgets.example.com")
        serving("delete", stored.obj)  # what the API layer's hook does after a CRD write
        assert serving.wait_idle()
        assert store.try_get(crds, None, "widgets.example.com") is None
        assert serving.event_kinds == frozenset({_CRDS})
        assert serving._on_event not in store._listeners_of(("example.com", "widgets"))
