"""Reflector state machine against a fake list/watch source (no server, no sleeps)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime import metrics
from kube_runtime.cache.reflector import ExponentialBackoff, Reflector
from kube_runtime.cache.store import Indexer
from kube_runtime.clock import FakeClock
from kube_runtime.envtest import wait_for
from kube_runtime.kinds import ConfigMap
from tests.support.fake_watch_source import (
    FakeGone,
    FakeServer,
    FakeServerError,
    RecordingBackoff,
)


class RecordingSink:
    """Applies calls to an Indexer and records them in order."""

    def __init__(self) -> None:
        self.store = Indexer(mutation_detector=False)
        self.calls: list[tuple[str, str, str]] = []  # (op, name, rv)
        self.replaces: list[str] = []

    def replace(self, objs: list[dict[str, Any]], resource_version: str) -> None:
        self.replaces.append(resource_version)
        self.store.replace(objs)

    def _rec(self, op: str, obj: dict[str, Any]) -> None:
        self.calls.append((op, obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def add(self, obj: dict[str, Any]) -> None:
        self._rec("add", obj)
        self.store.add(obj)

    def update(self, obj: dict[str, Any]) -> None:
        self._rec("update", obj)
        self.store.update(obj)

    def delete(self, obj: dict[str, Any]) -> None:
        self._rec("delete", obj)
        self.store.delete(obj)

    def state(self) -> dict[str, str]:
        return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in self.store.list()}


def server_state(server: FakeServer) -> dict[str, str]:
    return {
        o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in server.objects.values()
    }


class Running:
    def __init__(self, server: FakeServer, **kw: Any) -> None:
        self.sink = RecordingSink()
        self.backoff = kw.pop("backoff", RecordingBackoff())
        self.reflector = Reflector(server, ConfigMap, self.sink, backoff=self.backoff, **kw)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.reflector.run, args=(self.stop,), daemon=True)

    def close(self) -> None:
        self.stop.set()
        self.reflector.close_watch()
        self.thread.join(5)
        assert not self.thread.is_alive(), "the reflector did not stop"


@pytest.fixture
def run(server: FakeServer) -> Iterator[Any]:
    started: list[Running] = []

    def start(**kw: Any) -> Running:
        r = Running(server, **kw)
        r.thread.start()
        started.append(r)
        return r

    yield start
    for r in started:
        r.close()


def test_lists_then_watches_from_the_list_rv_with_bookmarks(server: FakeServer, run: Any) -> None:
    server.create("a")
    server.create("b")
    r = run(page_size=7, min_watch_timeout=10)
    server.wait_watches(1)
    assert r.sink.replaces == ["102"] and r.reflector.has_synced
    assert sorted(r.sink.state()) == ["a", "b"]
    assert server.list_calls[0]["limit"] == 7
    call = server.watch_calls[0]
    assert call["resource_version"] == "102"
    assert call["allow_bookmarks"] is True
    assert 10 <= call["timeout_seconds"] < 20
    server.create("c")
    server.update("a", "x")
    server.delete("b")
    wait_for(lambda: r.sink.state() == server_state(server))
    assert r.sink.calls == [("add", "c", "103"), ("update", "a", "104"), ("delete", "b", "105")]
    assert r.reflector.last_sync_resource_version == "105"


def test_dropped_stream_resumes_from_last_rv_without_relist(server: FakeServer, run: Any) -> None:
    server.drop_after = 2
    r = run()
    server.wait_watches(1)
    for i in range(5):
        server.create(f"o{i}")
    wait_for(lambda: len(r.sink.calls) == 5)
    assert [c[1] for c in r.sink.calls] == ["o0", "o1", "o2", "o3", "o4"]
    assert len(server.list_calls) == 1  # no relist
    resumed = [c["resource_version"] for c in server.watch_calls]
    assert resumed[:3] == ["100", "102", "104"]  # each re-watch starts after the last event
    assert r.backoff.calls == 0  # a dropped stream is not an error


def test_bookmarks_advance_the_resource_version(server: FakeServer, run: Any) -> None:
    r = run()
    server.wait_watches(1)
    rv = server.bookmark()
    wait_for(lambda: r.reflector.last_sync_resource_version == str(rv))
    assert r.sink.calls == []  # bookmarks change nothing in the store
    server.drop_streams()
    server.wait_watches(2)
    assert server.watch_calls[1]["resource_version"] == str(rv)


def test_gone_on_rewatch_relists(server: FakeServer, run: Any) -> None:
    server.create("keep")
    server.create("gone")
    r = run()
    server.wait_watches(1)
    server.create("seen")
    wait_for(lambda: len(r.sink.calls) == 1)
    # Disconnected: a delete happens, then the history window moves past our RV.
    server.hold_watches()
    server.drop_streams()
    server.wait_watches(2)
    server.delete("gone")
    server.evict()
    server.release_watches()  # the re-watch from the old RV gets 410 -> relist
    wait_for(lambda: len(server.list_calls) == 2)
    wait_for(lambda: r.sink.state() == server_state(server))
    assert "gone" not in r.sink.state()
    assert r.sink.replaces == ["102", str(server.rv)]
    assert r.backoff.calls == 0


def test_gone_as_a_stream_error_relists(server: FakeServer, run: Any) -> None:
    r = run()
    server.wait_watches(1)
    server.stream_errors.append(FakeGone("expired"))
    server.create("a")
    wait_for(lambda: len(server.list_calls) == 2)
    wait_for(lambda: r.sink.state() == server_state(server))
    assert r.backoff.calls == 0  # an expired RV after live events relists at once


def test_errors_back_off_then_recover(server: FakeServer, run: Any) -> None:
    server.list_errors.extend([FakeServerError("list 1"), FakeServerError("list 2")])
    server.watch_errors.append(FakeServerError("watch"))
    r = run()
    server.wait_watches(2)
    assert r.backoff.calls == 3
    assert len(server.list_calls) == 3
    assert r.reflector.has_synced
    # A failed watch is retried from the same RV: no relist.
    assert [c["resource_version"] for c in server.watch_calls[:2]] == ["100", "100"]
    server.stream_errors.append(FakeServerError("stream broke"))
    server.create("a")
    server.wait_watches(3)
    assert r.backoff.calls == 4
    assert len(server.list_calls) == 3
    server.create("b")
    wait_for(lambda: r.sink.state() == server_state(server))


def test_a_stream_ending_at_once_backs_off(server: FakeServer, run: Any) -> None:
    r = run()
    server.wait_watches(1)
    server.drop_streams()  # closed without any event, immediately
    server.wait_watches(2)
    assert r.backoff.calls == 1


def test_no_event_lost_or_duplicated_under_drops(server: FakeServer, run: Any) -> None:
    for i in range(10):
        server.create(f"o{i}")
    server.drop_after = 3
    r = run()
    server.wait_watches(1)
    rng = random.Random(7)
    for step in range(200):
        name = f"o{rng.randrange(15)}"
        with server.cond:
            exists = f"default/{name}" in server.objects
        if not exists:
            server.create(name)
        elif rng.random() < 0.2:
            server.delete(name)
        else:
            server.update(name, str(step))
    wait_for(lambda: r.reflector.last_sync_resource_version == str(server.rv))
    assert r.sink.state() == server_state(server)
    expected = [
        ({"ADDED": "add", "MODIFIED": "update", "DELETED": "delete"}[e.type],
         e.object["metadata"]["name"], e.object["metadata"]["resourceVersion"])
        for rv, e in server.history
        if rv > 110
    ]  # fmt: skip
    assert r.sink.calls == expected  # every change exactly once, in order
    assert len(server.list_calls) == 1


def test_stop_closes_a_blocked_watch(server: FakeServer) -> None:
    r = Running(server)
    r.thread.start()
    server.wait_watches(1)
    r.close()  # asserts the thread ended


def test_metrics_count_lists_and_events(server: FakeServer, run: Any) -> None:
    def value(name: str, **labels: str) -> float:
        return metrics.REGISTRY.get_sample_value(name, labels) or 0.0

    kind = "v1/ConfigMap"
    lists = value("kube_runtime_informer_lists_total", kind=kind)
    added = value("kube_runtime_informer_events_total", kind=kind, type="ADDED")
    marks = value("kube_runtime_informer_events_total", kind=kind, type="BOOKMARK")
    r = run()
    server.wait_watches(1)
    server.create("a")
    server.bookmark()
    wait_for(lambda: r.reflector.last_sync_resource_version == str(server.rv))
    assert value("kube_runtime_informer_lists_total", kind=kind) == lists + 1
    assert value("kube_runtime_informer_events_total", kind=kind, type="ADDED") == added + 1
    assert value("kube_runtime_informer_events_total", kind=kind, type="BOOKMARK") == marks + 1


def test_exponential_backoff_doubles_caps_jitters_and_resets() -> None:
    clock = FakeClock()
    b = ExponentialBackoff(clock=clock, rand=lambda: 0.0)
    delays = [b.next_delay() for _ in range(8)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    clock.step(121)  # healthy for longer than reset_after
    assert b.next_delay() == 0.8
    jittered = ExponentialBackoff(clock=FakeClock(), rand=lambda: 0.5)
    assert jittered.next_delay() == pytest.approx(1.2)  # 0.8 * (1 + 1.0 * 0.5)
    assert all(jittered.next_delay() <= 30.0 for _ in range(20))
