"""Reflector and informer against the embedded API server: paging, dropped streams, 410 relists."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kube_runtime import kinds, metrics
from kube_runtime.cache import (
    DeletedFinalStateUnknown,
    Indexer,
    Reflector,
    SharedInformer,
)
from kube_runtime.client import Client
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.server.faults import Faults


class FastBackoff:
    """Retries after 20 ms and counts how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def next_delay(self) -> float:
        self.calls += 1
        return 0.02


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[str, str, Any]] = []

    def _rec(self, *event: Any) -> None:
        with self.lock:
            self.events.append(event)

    def on_add(self, obj: dict[str, Any], is_in_initial_list: bool) -> None:
        self._rec("add", obj["metadata"]["name"], obj["metadata"]["resourceVersion"])

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._rec("update", new["metadata"]["name"], new["metadata"]["resourceVersion"])

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self._rec("tombstone", obj.obj["metadata"]["name"], obj.key)
        else:
            self._rec("delete", obj["metadata"]["name"], None)

    def of(self, name: str) -> list[tuple[str, str, Any]]:
        with self.lock:
            return [e for e in self.events if e[1] == name]


def cm(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def lists_made() -> float:
    return (
        metrics.REGISTRY.get_sample_value(
            "kube_runtime_informer_lists_total", {"kind": "v1/ConfigMap"}
        )
        or 0.0
    )


@pytest.fixture
def informer(client: Client, namespace: str) -> Iterator[Callable[..., SharedInformer]]:
    made: list[SharedInformer] = []

    def make(**kw: Any) -> SharedInformer:
        inf = SharedInformer(client, kinds.ConfigMap, namespace=namespace, **kw)
        made.append(inf)
        return inf

    yield make
    for inf in made:
        inf.stop()


def state(client: Client, namespace: str) -> dict[str, str]:
    items = client.list(kinds.ConfigMap, namespace)["items"]
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in items}


def cached(inf: SharedInformer) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in inf.indexer.list()}


def test_paged_list_fills_the_store_and_watch_follows(
    client: Client, namespace: str, wait_for: Any
) -> None:
    for i in range(5):
        client.create(cm(f"c{i}", namespace))
    store = Indexer()
    reflector = Reflector(client, kinds.ConfigMap, store, namespace=namespace, page_size=2)
    stop = threading.Event()
    thread = threading.Thread(target=reflector.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_for(lambda: reflector.has_synced, timeout=10)
        assert sorted(store.keys()) == [f"{namespace}/c{i}" for i in range(5)]
        client.delete(kinds.ConfigMap, "c0", namespace)
        client.create(cm("c9", namespace))
        wait_for(lambda: len(store) == 5 and f"{namespace}/c9" in store, timeout=10)
        assert f"{namespace}/c0" not in store
    finally:
        stop.set()
        reflector.close_watch()
        thread.join(5)
    assert not thread.is_alive()


def test_dropped_streams_lose_and_repeat_nothing(
    client: Client, namespace: str, faults: Faults, informer: Any, wait_for: Any
) -> None:
    faults.drop_watches_every(3)  # every stream closes after 3 events
    inf = informer(backoff=FastBackoff())
    rec = Recorder()
    inf.add_event_handler(rec)
    inf.start()
    assert inf.wait_for_sync(10)
    lists = lists_made()
    names = [f"d{i}" for i in range(8)]
    for name in names:
        client.create(cm(name, namespace, v="1"))
    for name in names:
        client.patch(kinds.ConfigMap, name, {"data": {"v": "2"}}, namespace=namespace)
    for name in names[:3]:
        client.delete(kinds.ConfigMap, name, namespace)
    server = state(client, namespace)
    wait_for(lambda: cached(inf) == server, timeout=15, message="the cache to match the server")
    for name in names:
        expected = ["add", "update", "delete"] if name in names[:3] else ["add", "update"]
        wait_for(lambda n=name, x=expected: [e[0] for e in rec.of(n)] == x, timeout=10)
    assert lists_made() == lists  # streams were resumed, never relisted
    assert len(rec.events) == 19  # each change exactly once (8 adds, 8 updates, 3 deletes)


@pytest.fixture
def own_cluster(tmp_path: Any) -> Iterator[tuple[EmbeddedCluster, Client]]:
    """A private cluster: evicting its watch history must not disturb other tests."""
    with EmbeddedCluster(kubelet=False) as cluster:
        c = Client.from_kubeconfig(cluster.write_kubeconfig(tmp_path / "kubeconfig"))
        try:
            yield cluster, c
        finally:
            c.close()


def test_gone_relists_and_tombstones_a_delete_missed_while_disconnected(
    own_cluster: tuple[EmbeddedCluster, Client], wait_for: Any
) -> None:
    cluster, client = own_cluster
    namespace = "default"
    client.create(cm("victim", namespace))
    client.create(cm("keeper", namespace))
    backoff = FastBackoff()
    inf = SharedInformer(
        client, kinds.ConfigMap, namespace=namespace, backoff=backoff, min_watch_timeout=1
    )  # streams end every 1-2 s
    rec = Recorder()
    inf.add_event_handler(rec)
    inf.start()
    try:
        assert inf.wait_for_sync(10)
        lists = lists_made()
        # Disconnect: once the current stream ends, re-watching fails.
        cluster.faults.fail("configmaps", "watch", 500)
        wait_for(lambda: backoff.calls >= 1, timeout=10, message="a failed re-watch")
        client.delete(kinds.ConfigMap, "victim", namespace)
        client.create(cm("newcomer", namespace))
        cluster.store.evict_history(cluster.resource("", "configmaps"))
        cluster.faults.clear()  # the next re-watch, from the old RV, gets 410 Gone -> relist
        wait_for(lambda: lists_made() == lists + 1, timeout=10, message="a relist")
        wait_for(lambda: [e[0] for e in rec.of("victim")] == ["add", "tombstone"], timeout=10)
        assert rec.of("victim")[-1][2] == f"{namespace}/victim"
        wait_for(lambda: [e[0] for e in rec.of("newcomer")] == ["add"], timeout=10)
        assert [e[0] for e in rec.of("keeper")] == ["add"]  # unchanged: no event on relist
        assert cached(inf) == state(client, namespace)
    finally:
        inf.stop()
