"""Event handlers: which requests each event enqueues."""

from __future__ import annotations

from kube_runtime import kinds
from kube_runtime.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    Funcs,
)
from kube_runtime.reconcile import Request


class ListQueue:
    def __init__(self) -> None:
        self.items: list = []

    def add(self, item) -> None:
        self.items.append(item)


def pod(name: str, *owners: dict, ns: str = "ns") -> dict:
    meta: dict = {"name": name, "namespace": ns}
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def ref(kind: str, name: str, api_version: str = "apps/v1", controller: bool = True) -> dict:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": name,
        "controller": controller,
    }


def test_enqueue_for_object() -> None:
    q = ListQueue()
    h = EnqueueRequestForObject()
    h.create(pod("a"), q)
    h.update(pod("a"), pod("a"), q)
    h.delete(pod("b"), q)
    h.generic({"metadata": {"name": "node-1"}}, q)
    assert q.items == [
        Request("a", "ns"),
        Request("a", "ns"),
        Request("b", "ns"),
        Request("node-1"),
    ]


def test_enqueue_for_controller_owner_matches_group_and_kind_not_version() -> None:
    q = ListQueue()
    h = EnqueueRequestForOwner(kinds.StatefulSet)
    h.create(pod("a", ref("StatefulSet", "web", "apps/v1beta2")), q)
    h.create(pod("b", ref("StatefulSet", "other", "example.com/v1")), q)  # other group
    h.create(pod("c", ref("StatefulSet", "web", controller=False)), q)  # not the controller
    h.create(pod("d", ref("ReplicaSet", "rs")), q)
    h.create(pod("e"), q)
    assert q.items == [Request("web", "ns")]


def test_enqueue_for_owner_any_owner_and_cluster_scoped() -> None:
    q = ListQueue()
    h = EnqueueRequestForOwner(
        "example.com/v1/Cluster", only_controller=False, owner_namespaced=False
    )
    h.create(pod("a", ref("Cluster", "c1", "example.com/v1", controller=False)), q)
    assert q.items == [Request("c1")]


def test_owner_update_enqueues_old_and_new_owner_once_each() -> None:
    q = ListQueue()
    h = EnqueueRequestForOwner(kinds.StatefulSet)
    old, new = pod("a", ref("StatefulSet", "web")), pod("a", ref("StatefulSet", "db"))
    h.update(old, new, q)
    h.update(new, new, q)
    assert q.items == [Request("web", "ns"), Request("db", "ns"), Request("db", "ns")]


def test_map_func_accepts_requests_and_pairs() -> None:
    q = ListQueue()
    h = EnqueueRequestsFromMapFunc(
        lambda o: [Request("x", "ns"), ("y", o["metadata"]["namespace"]), ("x", "ns")]
    )
    h.create(pod("a"), q)
    assert q.items == [Request("x", "ns"), Request("y", "ns")]


def test_funcs_handler() -> None:
    q = ListQueue()
    h = Funcs(delete=lambda o, q: q.add(Request("deleted", None)))
    h.create(pod("a"), q)
    h.delete(pod("a"), q)
    assert q.items == [Request("deleted")]


def test_request_key_round_trip() -> None:
    assert Request.from_key("ns/a") == Request("a", "ns") and Request("a", "ns").key == "ns/a"
    assert Request.from_key("node") == Request("node") and str(Request("node")) == "node"
