"""SharedInformer: handler dispatch, ordering, isolation, relist tombstones, resync, stop."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime.cache.informer import ResourceEventHandlerFuncs, SharedInformer
from kube_runtime.cache.store import DeletedFinalStateUnknown
from kube_runtime.envtest import wait_for
from kube_runtime.kinds import ConfigMap
from tests.support.fake_watch_source import FakeServer, RecordingBackoff


class Recorder:
    """A handler recording ``(event, name, rv)`` tuples; optionally blocked or failing."""

    def __init__(self, gate: threading.Event | None = None, fail_on: str | None = None) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.gate = gate
        self.fail_on = fail_on
        self.threads: set[str] = set()

    def _rec(self, *event: Any) -> None:
        self.threads.add(threading.current_thread().name)
        if self.gate is not None:
            self.gate.wait(10)
        self.events.append(event)
        if self.fail_on is not None and event[1] == self.fail_on:
            raise RuntimeError("handler bug")

    def on_add(self, obj: dict[str, Any], is_in_initial_list: bool) -> None:
        self._rec("add", obj["metadata"]["name"], is_in_initial_list)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        rvs = (old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"])
        self._rec("update", new["metadata"]["name"], rvs)

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self._rec("tombstone", obj.obj["metadata"]["name"], obj.key)
        else:
            self._rec("delete", obj["metadata"]["name"])


@pytest.fixture
def informers(server: FakeServer) -> Iterator[Any]:
    made: list[SharedInformer] = []

    def make(**kw: Any) -> SharedInformer:
        inf = SharedInformer(server, ConfigMap, backoff=RecordingBackoff(), **kw)
        made.append(inf)
        return inf

    yield make
    for inf in made:
        inf.stop()


def test_events_in_order_with_initial_list_flag(server: FakeServer, informers: Any) -> None:
    server.create("a")
    inf = informers()
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    inf.start()
    inf.start()  # idempotent
    assert inf.wait_for_sync(5)
    server.create("b")
    server.update("a", "x")
    server.delete("b")
    wait_for(lambda: len(rec.events) == 4)
    assert rec.events == [
        ("add", "a", True),
        ("add", "b", False),
        ("update", "a", ("101", "103")),
        ("delete", "b"),
    ]
    assert reg.wait_for_sync(5) and reg.has_synced()
    assert sorted(o["metadata"]["name"] for o in inf.indexer.list()) == ["a"]


def test_late_handler_gets_synthetic_adds_for_cached_objects(
    server: FakeServer, informers: Any
) -> None:
    server.create("a")
    server.create("b")
    inf = informers()
    inf.start()
    assert inf.wait_for_sync(5)
    late = Recorder()
    reg = inf.add_event_handler(late)
    assert reg.wait_for_sync(5)
    server.create("c")
    wait_for(lambda: len(late.events) == 3)
    assert sorted(late.events[:2]) == [("add", "a", True), ("add", "b", True)]
    assert late.events[2] == ("add", "c", False)


def test_slow_handler_blocks_neither_the_reflector_nor_other_handlers(
    server: FakeServer, informers: Any
) -> None:
    inf = informers()
    gate = threading.Event()
    slow, fast = Recorder(gate=gate), Recorder()
    inf.add_event_handler(slow)
    inf.add_event_handler(fast)
    inf.start()
    assert inf.wait_for_sync(5)
    for i in range(50):
        server.create(f"o{i}")
    wait_for(lambda: len(fast.events) == 50)
    wait_for(lambda: len(inf.indexer) == 50)  # the store kept up too
    assert slow.events == []  # still stuck on its first event
    gate.set()
    wait_for(lambda: len(slow.events) == 50)
    assert slow.events == fast.events  # same order, nothing dropped
    assert slow.threads.isdisjoint(fast.threads)  # one thread per handler


def test_handler_exception_is_logged_not_fatal(
    server: FakeServer, informers: Any, caplog: pytest.LogCaptureFixture
) -> None:
    inf = informers()
    rec = Recorder(fail_on="bad")
    inf.add_event_handler(rec)
    inf.start()
    server.create("bad")
    server.create("good")
    wait_for(lambda: len(rec.events) == 2)
    assert [e[1] for e in rec.events] == ["bad", "good"]
    assert any("default/bad" in r.getMessage() for r in caplog.records)


def test_relist_delivers_updates_and_tombstones_only_for_changes(
    server: FakeServer, informers: Any
) -> None:
    for name in ("same", "changed", "gone"):
        server.create(name)
    inf = informers()
    rec = Recorder()
    inf.add_event_handler(rec)
    inf.start()
    assert inf.wait_for_sync(5)
    server.create("seen")
    wait_for(lambda: len(rec.events) == 4)
    # Disconnected: changes happen, then the server forgets the history (410 on re-watch).
    server.hold_watches()
    server.drop_streams()
    server.wait_watches(2)
    gone = inf.indexer.get("default/gone")
    changed = server.update("changed", "v2")["metadata"]["resourceVersion"]
    server.delete("gone")
    server.create("new")
    server.evict()
    server.release_watches()
    wait_for(lambda: len(server.list_calls) == 2)
    wait_for(lambda: len(rec.events) == 7)
    after = sorted(rec.events[4:], key=str)
    assert after == [
        ("add", "new", False),
        ("tombstone", "gone", "default/gone"),
        ("update", "changed", ("102", changed)),
    ]
    assert inf.indexer.get("default/gone") is None
    assert gone is not None  # the tombstone carried the last known state


def test_resync_delivers_updates_of_every_object_per_handler_period(
    server: FakeServer, informers: Any
) -> None:
    server.create("a")
    server.create("b")
    inf = informers(resync_period=0.05)
    resyncing, quiet = Recorder(), Recorder()
    inf.add_event_handler(resyncing)
    inf.add_event_handler(quiet, resync_period=3600)
    inf.start()
    wait_for(lambda: sum(e[0] == "update" for e in resyncing.events) >= 4)
    updates = [e for e in resyncing.events if e[0] == "update"]
    assert {e[1] for e in updates} == {"a", "b"}
    assert all(e[2] == ("101", "101") or e[2] == ("102", "102") for e in updates)  # obj, obj
    assert all(e[0] == "add" for e in quiet.events)


def test_funcs_adapter_and_stop(server: FakeServer, informers: Any) -> None:
    added: list[str] = []
    deleted: list[Any] = []
    inf = informers()
    inf.add_event_handler(
        ResourceEventHandlerFuncs(
            on_add=lambda o: added.append(o["metadata"]["name"]),
            on_delete=deleted.append,
        )
    )
    inf.start()
    server.create("a")
    server.update("a", "x")  # no on_update given: ignored
    server.delete("a")
    wait_for(lambda: len(deleted) == 1)
    assert added == ["a"]
    threads = [t for t in threading.enumerate() if "ConfigMap" in t.name]
    assert threads
    inf.stop()
    assert not any(t.is_alive() for t in threads)
    with pytest.raises(RuntimeError):
        inf.add_event_handler(Recorder())
