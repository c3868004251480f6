"""The embedded controllers' shared skeleton (kube_runtime/envtest/server/worker.py): a
de-duplicating queue fed by a store listener, one worker thread, idleness for tests."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import Event, Store
from kube_runtime.envtest.server.strategy import KubeStrategy
from kube_runtime.envtest.server.worker import StoreWorker

NS = "ns"


class Recorder(StoreWorker[str]):
    """Enqueues the names of config maps; handling records them (and may be held or fail)."""

    thread_name = "test-store-worker"
    description = "recorder"

    def __init__(self, store: Store, seed: tuple[str, ...] = ()) -> None:
        super().__init__(store)
        self.seed = seed
        self.handled: list[str] = []
        self.release = threading.Event()
        self.release.set()
        self.handling = threading.Event()
        self.threads: set[str] = set()

    def _on_event(self, event: Event) -> None:
        if event.info.key == ("", "configmaps"):
            self.enqueue(str(event.new.meta["name"]))

    def _seed(self) -> None:
        assert self.store.lock._is_owned()  # type: ignore[attr-defined]
        for name in self.seed:
            self.enqueue(name)

    def _handle(self, item: str) -> None:
        self.threads.add(threading.current_thread().name)
        self.handling.set()
        assert self.release.wait(5)
        self.handled.append(item)
        if item.startswith("bad"):
            raise RuntimeError(f"cannot handle {item}")


@pytest.fixture
def store() -> Store:
    registry = Registry()
    store = Store(registry, KubeStrategy())
    store.create(registry.by_key("", "namespaces"), None, {"metadata": {"name": NS}})  # type: ignore[arg-type]
    return store


@pytest.fixture
def configmaps(store: Store) -> ResourceInfo:
    info = store.registry.by_key("", "configmaps")
    assert info is not None
    return info


@pytest.fixture
def worker(store: Store) -> Iterator[Recorder]:
    w = Recorder(store)
    yield w
    w.release.set()
    w.stop()


def test_an_item_already_pending_is_queued_once(worker: Recorder) -> None:
    for name in ("a", "b", "a", "a", "b", "c"):
        worker.enqueue(name)
    assert len(worker._queue) == 3
    worker.start()
    assert worker.wait_idle(5)
    assert worker.handled == ["a", "b", "c"]


def test_an_item_queued_while_it_is_handled_is_handled_again(worker: Recorder) -> None:
    worker.release.clear()
    worker.start()
    worker.enqueue("a")
    assert worker.handling.wait(5)
    worker.enqueue("a")  # taken off the pending set: queued again
    worker.enqueue("a")  # now pending: not queued again
    worker.release.set()
    assert worker.wait_idle(5)
    assert worker.handled == ["a", "a"]


def test_idle_only_when_nothing_is_queued_or_being_handled(worker: Recorder) -> None:
    assert worker.wait_idle(0)
    worker.enqueue("a")
    assert not worker.wait_idle(0)  # queued, the worker not even started
    worker.release.clear()
    worker.start()
    assert worker.handling.wait(5)
    # The queue is empty while "a" is handled: still not idle.
    assert not worker._queue
    assert not worker.wait_idle(0.05)
    worker.enqueue("b")
    worker.release.set()
    assert worker.wait_idle(5)
    assert worker.handled == ["a", "b"]
    assert worker._outstanding == 0 and not worker._pending


def test_a_failing_item_is_logged_and_the_worker_goes_on(
    worker: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    worker.start()
    with caplog.at_level(logging.ERROR, logger=__name__):
        worker.enqueue("bad-1")
        worker.enqueue("good")
        assert worker.wait_idle(5)
    assert worker.handled == ["bad-1", "good"]
    [record] = [r for r in caplog.records if r.name == __name__]
    assert record.getMessage() == "recorder failed on bad-1"
    assert record.exc_info is not None and "cannot handle bad-1" in str(record.exc_info[1])


def test_store_events_and_the_seed_feed_the_worker_thread(
    store: Store, configmaps: ResourceInfo
) -> None:
    worker = Recorder(store, seed=("seeded",))
    worker.start()
    try:
        store.create(configmaps, NS, {"metadata": {"name": "cm"}})
        assert worker.wait_idle(5)
        assert worker.handled == ["seeded", "cm"]
        assert worker.threads == {"test-store-worker"}
    finally:
        worker.stop()


def test_start_and_stop_are_idempotent(store: Store, configmaps: ResourceInfo) -> None:
    worker = Recorder(store)
    worker.stop()  # never started
    worker.start()
    thread = worker._thread
    assert thread is not None and thread.is_alive()
    worker.start()
    assert worker._thread is thread
    assert store._listeners.count(worker._on_event) == 1
    worker.stop()
    worker.stop()
    assert not thread.is_alive() and worker._thread is None
    store.create(configmaps, NS, {"metadata": {"name": "after-stop"}})
    assert not worker._queue and worker.wait_idle(0)
    # Started again, it works again.
    worker.start()
    store.create(configmaps, NS, {"metadata": {"name": "restarted"}})
    assert worker.wait_idle(5)
    worker.stop()
    assert worker.handled == ["restarted"]


def test_a_listener_of_some_kinds_is_called_for_those_only(
    store: Store, configmaps: ResourceInfo
) -> None:
    secrets = store.registry.by_key("", "secrets")
    assert secrets is not None
    seen: dict[str, list[tuple[str, str]]] = {"all": [], "configmaps": [], "late": []}
    every = lambda e: seen["all"].append(e.info.key)  # noqa: E731
    some = lambda e: seen["configmaps"].append(e.info.key)  # noqa: E731
    store.add_listener(every)
    store.add_listener(some, [("", "configmaps")])
    store.create(configmaps, NS, {"metadata": {"name": "a"}})
    store.create(secrets, NS, {"metadata": {"name": "s"}})
    # a listener added after the kinds' listeners were first looked up is called too
    late = lambda e: seen["late"].append(e.info.key)  # noqa: E731
    store.add_listener(late, {("", "secrets")})
    store.create(secrets, NS, {"metadata": {"name": "t"}})
    store.remove_listener(some)
    store.create(configmaps, NS, {"metadata": {"name": "b"}})
    cm, sec = ("", "configmaps"), ("", "secrets")
    assert seen == {"all": [cm, sec, sec, cm], "configmaps": [cm], "late": [sec]}
    # a worker's event_kinds reach the store
    worker = Recorder(store)
    worker.event_kinds = frozenset({cm})
    worker.start()
    try:
        assert store._listener_kinds[worker._on_event] == {cm}
    finally:
        worker.stop()
    assert worker._on_event not in store._listener_kinds
