"""The controller's event path and result contract, with an in-memory source (no server)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kube_runtime.controller import CacheSyncTimeout, Controller
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.handlers import EnqueueRequestForObject
from kube_runtime.predicates import Funcs
from kube_runtime.reconcile import Request, Result, TerminalError
from kube_runtime.workqueue import ItemExponentialFailureRateLimiter


class FakeSource:
    def __init__(self, synced: bool = True) -> None:
        self.sink = None
        self.synced = synced

    def start(self, sink, stop) -> None:
        self.sink = sink

    def wait_for_sync(self, timeout) -> bool:
        return self.synced


def obj(name: str, ns: str = "ns") -> dict:
    return {"metadata": {"name": name, "namespace": ns}}


class Calls:
    def __init__(self, fn=None) -> None:
        self.seen: list[Request] = []
        self.fn = fn
        self.lock = threading.Lock()

    def reconcile(self, request: Request):
        with self.lock:
            self.seen.append(request)
        return self.fn(request) if self.fn else None

    def count(self, name: str) -> int:
        with self.lock:
            return sum(r.name == name for r in self.seen)


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def start(controller: Controller, stop: threading.Event) -> threading.Thread:
    t = threading.Thread(target=controller.start, args=(stop,), daemon=True)
    t.start()
    wait_for(lambda: controller.started and controller._workers, timeout=5)
    return t


def fast_limiter() -> ItemExponentialFailureRateLimiter:
    return ItemExponentialFailureRateLimiter(base=0.001, maximum=0.01)


def test_events_pass_predicates_then_handler_then_reconcile(stop) -> None:
    calls = Calls()
    src = FakeSource()
    c = Controller("unit-pred", calls, rate_limiter=fast_limiter())
    c.watch(src, EnqueueRequestForObject(), Funcs(create=lambda o: o["metadata"]["name"] != "skip"))
    start(c, stop)
    src.sink.on_create(obj("skip"))
    src.sink.on_create(obj("a"))
    src.sink.on_update(obj("b"), obj("b"))
    src.sink.on_delete(obj("c"))
    src.sink.on_generic(obj("d"))
    wait_for(lambda: {r.name for r in calls.seen} == {"a", "b", "c", "d"}, timeout=5)
    assert calls.count("skip") == 0


def test_result_contract(stop) -> None:
    failures = {"n": 0}

    def behave(request: Request):
        if request.name == "error":
            failures["n"] += 1
            if failures["n"] < 4:
                raise KeyError("boom")
        if request.name == "terminal":
            raise TerminalError("no")
        if request.name == "requeue" and len(calls.seen) < 50:
            return Result(requeue=True)
        return None

    calls = Calls(behave)
    src = FakeSource()
    c = Controller("unit-result", calls, rate_limiter=fast_limiter(), max_concurrent_reconciles=2)
    c.watch(src, EnqueueRequestForObject())
    start(c, stop)
    for name in ("error", "terminal", "requeue", "ok"):
        src.sink.on_create(obj(name))
    wait_for(lambda: failures["n"] == 4, timeout=5, message="errors retried until success")
    wait_for(lambda: calls.count("requeue") >= 3, timeout=5, message="requeue=True repeats")
    assert calls.count("terminal") == 1 and calls.count("ok") == 1
    assert c.queue.num_requeues(Request("error", "ns")) == 0  # forgotten after success


def test_an_item_is_never_reconciled_by_two_workers_at_once(stop) -> None:
    active: dict[str, int] = {}
    overlap = []
    lock = threading.Lock()

    def work(request: Request) -> None:
        with lock:
            active[request.name] = active.get(request.name, 0) + 1
            if active[request.name] > 1:
                overlap.append(request.name)
        threading.Event().wait(0.002)
        with lock:
            active[request.name] -= 1

    calls = Calls(work)
    src = FakeSource()
    c = Controller("unit-overlap", calls, max_concurrent_reconciles=4)
    c.watch(src, EnqueueRequestForObject())
    start(c, stop)
    for i in range(200):
        src.sink.on_create(obj(f"o{i % 3}"))
    wait_for(lambda: len(c.queue) == 0 and not c._active, timeout=5)
    assert not overlap and len(calls.seen) >= 3


def test_cache_sync_timeout_fails_start() -> None:
    c = Controller("unit-sync", Calls(), cache_sync_timeout=0.01)
    c.watch(FakeSource(synced=False), EnqueueRequestForObject())
    with pytest.raises(CacheSyncTimeout, match="sync"):
        c.start(threading.Event())


def test_stop_returns_after_in_flight_work() -> None:
    release = threading.Event()
    done = threading.Event()

    def slow(request: Request) -> None:
        release.wait(5)
        done.set()

    stop = threading.Event()
    calls = Calls(slow)
    src = FakeSource()
    c = Controller("unit-stop", calls)
    c.watch(src, EnqueueRequestForObject())
    t = start(c, stop)
    src.sink.on_create(obj("x"))
    wait_for(lambda: calls.seen, timeout=5)
    stop.set()
    t.join(0.05)
    assert t.is_alive()  # waiting for the in-flight reconcile
    release.set()
    t.join(5)
    assert not t.is_alive() and done.is_set()
