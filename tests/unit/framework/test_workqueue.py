"""WorkQueue: client-go's dedup / processing / dirty contract, delays, rate limiting, metrics.

Delays run on an injected fake clock, so nothing here sleeps; the few tests with threads wait
on events or joins, never on fixed sleeps.
"""

from __future__ import annotations

import gc
import itertools
import random
import threading
import time
import weakref
from collections.abc import Hashable

import pytest

from kube_runtime.clock import FakeClock
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.metrics import REGISTRY
from kube_runtime.workqueue import WorkQueue

_names = itertools.count()


class RecordingLimiter:
    """A rate limiter that answers a fixed delay and records what it was asked."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.failures: dict[Hashable, int] = {}
        self.forgotten: list[Hashable] = []

    def when(self, item: Hashable) -> float:
        self.failures[item] = self.failures.get(item, 0) + 1
        return self.delay

    def forget(self, item: Hashable) -> None:
        self.forgotten.append(item)
        self.failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self.failures.get(item, 0)


def drain(q: WorkQueue[str]) -> list[str]:
    """Get (and finish) everything available right now."""
    out = []
    while True:
        item, _ = q.get(timeout=0)
        if item is None:
            return out
        out.append(item)
        q.done(item)


# --- the basic contract --------------------------------------------------------------------


def test_fifo_order():
    q: WorkQueue[str] = WorkQueue()
    for x in "cab":
        q.add(x)
    assert drain(q) == ["c", "a", "b"]


def test_add_while_queued_is_deduplicated():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    q.add("a")
    assert len(q) == 2
    assert drain(q) == ["a", "b"]


def test_item_being_processed_is_not_handed_out_again():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    item, shutdown = q.get()
    assert (item, shutdown) == ("a", False)
    q.add("a")  # dirty while processing
    assert len(q) == 0
    assert q.get(timeout=0) == (None, False)
    q.done("a")  # re-queued now
    assert len(q) == 1
    assert q.get(timeout=0) == ("a", False)


def test_dirty_item_requeued_once_behind_others():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    q.add("a")
    q.add("a")
    q.add("b")
    q.done("a")
    assert drain(q) == ["b", "a"]


def test_done_without_readd_does_not_requeue():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    q.done("a")
    assert len(q) == 0
    q.add("a")  # no longer processing: queued normally
    assert len(q) == 1


def test_done_of_unknown_item_is_ignored():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.done("a")  # queued, not processing
    q.done("zzz")
    assert drain(q) == ["a"]


def test_get_timeout_returns_none_not_shutdown():
    q: WorkQueue[str] = WorkQueue()
    assert q.get(timeout=0) == (None, False)
    assert q.get(timeout=0.001) == (None, False)


def test_blocked_getter_receives_item_added_later():
    q: WorkQueue[str] = WorkQueue()
    got: list[tuple[str | None, bool]] = []
    t = threading.Thread(target=lambda: got.append(q.get(timeout=10)), daemon=True)
    t.start()
    q.add("a")
    t.join(10)
    assert got == [("a", False)]


def test_shutdown_hands_out_remaining_items_then_reports_shutdown():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.add("b")
    q.shutdown()
    assert q.shutting_down
    q.add("c")  # ignored
    assert q.get() == ("a", False)
    q.done("a")
    assert q.get() == ("b", False)
    q.done("b")
    assert q.get() == (None, True)
    assert q.get(timeout=0) == (None, True)


def test_shutdown_wakes_every_blocked_getter():
    q: WorkQueue[str] = WorkQueue()
    results: list[tuple[str | None, bool]] = []
    waiting = [
        threading.Thread(target=lambda: results.append(q.get()), daemon=True) for _ in range(3)
    ]
    for t in waiting:
        t.start()
    q.shutdown()
    for t in waiting:
        t.join(10)
    assert results == [(None, True)] * 3


def test_item_dirty_at_shutdown_is_still_requeued_on_done():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    q.add("a")
    q.shutdown()
    q.done("a")
    assert q.get(timeout=0) == ("a", False)


def test_shutdown_with_drain_waits_for_items_in_flight():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    drained = threading.Event()

    def shut() -> None:
        q.shutdown_with_drain()
        drained.set()

    t = threading.Thread(target=shut, daemon=True)
    t.start()
    assert not drained.wait(0.05)  # "a" is still being processed
    assert q.shutting_down
    q.done("a")
    t.join(10)
    assert drained.is_set()


def test_shutdown_with_drain_returns_at_once_when_idle():
    q: WorkQueue[str] = WorkQueue()
    q.add("queued-but-not-processing")
    q.shutdown_with_drain()
    assert q.shutting_down


def test_shutdown_ends_a_pending_drain():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.get()
    t = threading.Thread(target=q.shutdown_with_drain, daemon=True)
    t.start()
    wait_for(lambda: q.shutting_down)  # set in the same critical section that starts waiting
    assert t.is_alive()
    q.shutdown()
    t.join(10)
    assert not t.is_alive()


def test_workers_never_share_an_item_and_nothing_is_lost():
    q: WorkQueue[int] = WorkQueue()
    in_flight: set[int] = set()
    guard = threading.Lock()
    overlaps: list[int] = []
    processed: dict[int, int] = {}

    def worker() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            assert item is not None
            with guard:
                if item in in_flight:
                    overlaps.append(item)
                in_flight.add(item)
            time.sleep(0)  # let other workers run while this item is in flight
            with guard:
                in_flight.discard(item)
                processed[item] = processed.get(item, 0) + 1
            q.done(item)

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for t in workers:
        t.start()
    for i in range(3000):
        q.add(i % 17)
    q.shutdown_with_drain()
    for t in workers:
        t.join(10)
    assert overlaps == []
    assert set(processed) == set(range(17))  # every key's last add was processed


# --- delaying ------------------------------------------------------------------------------


def test_add_after_waits_for_the_deadline():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 5)
    assert len(q) == 0
    assert q.get(timeout=0) == (None, False)
    clock.step(4.999)
    assert len(q) == 0
    clock.step(0.001)
    assert len(q) == 1
    assert q.get(timeout=0) == ("a", False)


@pytest.mark.parametrize("delay", [0, -1])
def test_add_after_without_delay_adds_now(delay: float):
    q: WorkQueue[str] = WorkQueue(clock=FakeClock())
    q.add_after("a", delay)
    assert len(q) == 1


@pytest.mark.parametrize(
    ("first", "second", "due_at"),
    [
        (10, 2, 2),  # an earlier deadline replaces the later one
        (2, 10, 2),  # a later one does not postpone the earlier
        (3, 3, 3),
    ],
)
def test_add_after_keeps_the_earliest_deadline(first: float, second: float, due_at: float):
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", first)
    q.add_after("a", second)
    clock.step(due_at - 0.5)
    assert len(q) == 0
    clock.step(0.5)
    assert drain(q) == ["a"]
    clock.step(100)
    assert len(q) == 0  # fired once: the superseded deadline is not a second add


def test_delayed_items_fire_in_deadline_order_and_dedup_with_queue():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("late", 3)
    q.add_after("early", 1)
    q.add_after("queued", 2)
    q.add("queued")
    clock.step(5)
    assert drain(q) == ["queued", "early", "late"]


def test_delayed_add_of_processing_item_requeues_on_done():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add("a")
    q.get()
    q.add_after("a", 1)  # what a reconcile returning requeue_after does
    clock.step(1)
    assert len(q) == 0
    q.done("a")
    assert drain(q) == ["a"]


def test_add_after_is_dropped_on_shutdown():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("pending", 1)
    q.shutdown()
    q.add_after("late", 0)
    clock.step(10)
    assert q.get(timeout=0) == (None, True)


def test_blocked_getter_wakes_for_a_delayed_item():
    q: WorkQueue[str] = WorkQueue()
    got: list[tuple[str | None, bool]] = []
    t = threading.Thread(target=lambda: got.append(q.get()), daemon=True)
    t.start()
    # The getter may already be sleeping with no deadline: add_after must re-arm it.
    q.add_after("a", 0.01)
    t.join(10)
    assert got == [("a", False)]


def test_blocked_getter_rearms_for_an_earlier_deadline():
    q: WorkQueue[str] = WorkQueue()
    q.add_after("far", 3600)
    got: list[tuple[str | None, bool]] = []
    t = threading.Thread(target=lambda: got.append(q.get(timeout=10)), daemon=True)
    t.start()
    q.add_after("near", 0.01)
    t.join(10)
    assert got == [("near", False)]


def test_delayed_items_reach_blocked_workers():
    """Many getters asleep on different deadlines: every delayed item is still delivered."""
    q: WorkQueue[int] = WorkQueue()
    received: list[int] = []
    guard = threading.Lock()
    all_in = threading.Event()
    total = 200

    def worker() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            with guard:
                received.append(item)  # type: ignore[arg-type]
                if len(received) == total:
                    all_in.set()
            q.done(item)  # type: ignore[arg-type]

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for t in workers:
        t.start()
    rng = random.Random(7)
    for i in range(total):
        q.add_after(i, rng.uniform(0.001, 0.03))
    assert all_in.wait(10), f"{total - len(received)} delayed items never delivered"
    q.shutdown()
    for t in workers:
        t.join(10)
    assert sorted(received) == list(range(total))


# --- rate limiting -------------------------------------------------------------------------


def test_add_rate_limited_delays_by_the_limiter():
    clock = FakeClock()
    limiter = RecordingLimiter(delay=2)
    q: WorkQueue[str] = WorkQueue(rate_limiter=limiter, clock=clock)
    q.add_rate_limited("a")
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 2
    assert len(q) == 0
    clock.step(2)
    assert drain(q) == ["a"]
    q.forget("a")
    assert limiter.forgotten == ["a"]
    assert q.num_requeues("a") == 0


def test_default_rate_limiter_backs_off_per_item():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_rate_limited("a")  # 5 ms
    q.add_rate_limited("b")
    assert q.num_requeues("a") == 1
    clock.step(0.005)
    assert drain(q) == ["a", "b"]
    q.add_rate_limited("a")  # second failure: 10 ms
    clock.step(0.005)
    assert len(q) == 0
    clock.step(0.005)
    assert drain(q) == ["a"]


# --- metrics -------------------------------------------------------------------------------


def sample(metric: str, name: str) -> float:
    value = REGISTRY.get_sample_value(metric, {"name": name})
    return 0.0 if value is None else value


def test_named_queue_exports_client_go_metrics():
    name = f"test-queue-{next(_names)}"
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(name=name, rate_limiter=RecordingLimiter(1), clock=clock)
    q.add("a")
    q.add("a")  # deduplicated: not an add
    q.add("b")
    assert sample("workqueue_adds_total", name) == 2
    assert sample("workqueue_depth", name) == 2

    clock.step(0.5)
    q.get()  # "a" waited 0.5 s
    assert sample("workqueue_depth", name) == 1
    assert sample("workqueue_queue_duration_seconds_count", name) == 1
    assert sample("workqueue_queue_duration_seconds_sum", name) == pytest.approx(0.5)

    clock.step(2)
    q.get()  # "b": both in flight, for 2 s and 0 s
    assert sample("workqueue_unfinished_work_seconds", name) == pytest.approx(2)
    assert sample("workqueue_longest_running_processor_seconds", name) == pytest.approx(2)
    clock.step(1)
    assert sample("workqueue_unfinished_work_seconds", name) == pytest.approx(4)
    assert sample("workqueue_longest_running_processor_seconds", name) == pytest.approx(3)

    q.done("a")
    assert sample("workqueue_work_duration_seconds_count", name) == 1
    assert sample("workqueue_work_duration_seconds_sum", name) == pytest.approx(3)
    q.done("b")
    assert sample("workqueue_unfinished_work_seconds", name) == 0
    assert sample("workqueue_longest_running_processor_seconds", name) == 0

    q.add_rate_limited("c")
    q.add_after("d", 0)
    assert sample("workqueue_retries_total", name) == 2


def test_unnamed_queue_exports_nothing():
    before = REGISTRY.get_sample_value("workqueue_adds_total", {"name": ""})
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    assert REGISTRY.get_sample_value("workqueue_adds_total", {"name": ""}) == before


def test_dropped_named_queue_is_not_kept_alive_by_its_gauges():
    name = f"test-queue-{next(_names)}"
    q: WorkQueue[str] = WorkQueue(name=name)
    q.add("a")
    q.get()
    assert sample("workqueue_depth", name) == 0
    q.add("a")  # dirty while processing: counts in depth, as in client-go
    assert sample("workqueue_depth", name) == 1
    alive = weakref.ref(q)
    del q
    gc.collect()
    assert alive() is None
    assert sample("workqueue_depth", name) == 0
    assert sample("workqueue_unfinished_work_seconds", name) == 0
