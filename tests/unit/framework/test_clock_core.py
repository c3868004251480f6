"""The framework's timers run on kube_runtime.clock (issue 28): the work queue, the rate
limiters, the controller's backoff and leader election take their time from a FakeClock
stepped by hand or from a SimClock, so Kubernetes' real timings (a 1,000 s backoff, a 15 s
lease) pass in milliseconds of wall time."""

from __future__ import annotations

import itertools
import queue
import threading
import time
import urllib.request
from datetime import datetime, timezone
from typing import Any

import pytest

from kube_runtime import clock as kclock
from kube_runtime.builder import Builder
from kube_runtime.client.fake import FakeClient
from kube_runtime.clock import FakeClock, SimClock
from kube_runtime.conditions import set_status_condition
from kube_runtime.controller import Controller, TracebackLimiter
from kube_runtime.kinds import ConfigMap, Lease
from kube_runtime.leaderelection import MICROTIME_FORMAT, LeaderElector
from kube_runtime.manager import Manager
from kube_runtime.reconcile import Request
from kube_runtime.retry import Backoff, retry_on
from kube_runtime.serving import EndpointServer
from kube_runtime.source import Channel, ChannelSource
from kube_runtime.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    WorkQueue,
)


def _wait_real(predicate: Any, timeout: float = 10.0) -> None:
    """Poll ``predicate`` in real time (for a FakeClock, whose time only the test moves)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


# --- the work queue on a FakeClock ---------------------------------------------------------


def test_a_delayed_item_is_due_only_once_the_fake_clock_is_stepped() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 30)
    assert q.get(timeout=0) == (None, False)
    clock.step(29.999)
    assert len(q) == 0
    clock.step(0.001)
    assert q.get(timeout=0) == ("a", False)


def test_a_blocked_getter_waits_on_the_clock() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 5)
    got: list[tuple[str | None, bool]] = []
    getter = threading.Thread(target=lambda: got.append(q.get()), daemon=True)
    getter.start()
    _wait_real(clock.has_waiters)  # asleep until the item's deadline, in virtual time
    getter.join(0.05)
    assert got == []
    clock.step(5)
    getter.join(10)
    assert got == [("a", False)]


def test_get_timeout_is_on_the_clock() -> None:
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    got: list[tuple[str | None, bool]] = []
    getter = threading.Thread(target=lambda: got.append(q.get(timeout=60)), daemon=True)
    getter.start()
    _wait_real(clock.has_waiters)
    clock.step(60)
    getter.join(10)
    assert got == [(None, False)]


def test_a_rate_limited_requeue_of_1000_s_fires_after_stepping_1000_s() -> None:
    clock = FakeClock()
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    for _ in range(20):  # 0.005 * 2**20 s is far past the cap
        limiter.when("a")
    q: WorkQueue[str] = WorkQueue(rate_limiter=limiter, clock=clock)
    q.add_rate_limited("a")
    got: list[tuple[str | None, bool]] = []
    getter = threading.Thread(target=lambda: got.append(q.get()), daemon=True)
    getter.start()
    _wait_real(clock.has_waiters)
    clock.step(999.9)
    getter.join(0.05)
    assert got == [] and len(q) == 0
    clock.step(0.1)
    getter.join(10)
    assert got == [("a", False)]


def test_shutdown_with_drain_waits_on_the_clock() -> None:
    sim = SimClock(stall_timeout=10)
    with sim.activate():
        q: WorkQueue[str] = WorkQueue()
        q.add("a")
        q.get()
        finisher = threading.Thread(target=lambda: (sim.sleep(300), q.done("a")))
        finisher.start()
        q.shutdown_with_drain()  # a participant's plain wait here would stall the simulation
        assert sim.monotonic() == 300
        finisher.join()


def test_the_bucket_refills_on_the_clock() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=1, burst=1, clock=clock)
    assert limiter.when("a") == 0
    assert limiter.when("a") == pytest.approx(1)
    clock.step(10)
    assert limiter.when("a") == 0


def test_the_traceback_limiter_runs_on_the_clock() -> None:
    clock = FakeClock()
    limiter = TracebackLimiter(period=60, clock=clock)
    assert limiter.first("k") and not limiter.first("k")
    clock.step(61)
    assert limiter.first("k")


def test_a_queue_built_inside_use_takes_that_clock() -> None:
    clock = FakeClock()
    with kclock.use(clock):
        q: WorkQueue[str] = WorkQueue()
        controller = Controller("c", lambda request: None)  # type: ignore[arg-type]
    assert q.clock is clock
    assert controller.clock is clock and controller.queue.clock is clock
    q.add_after("a", 1)
    clock.step(1)
    assert len(q) == 1


# --- deprecated ways of injecting time keep working for one release ------------------------


def test_a_bare_time_function_still_works_with_a_deprecation_warning() -> None:
    now = [100.0]
    with pytest.warns(DeprecationWarning, match="WorkQueue"):
        q: WorkQueue[str] = WorkQueue(clock=lambda: now[0])
    q.add_after("a", 5)
    assert len(q) == 0
    now[0] += 5
    assert len(q) == 1
    with pytest.warns(DeprecationWarning, match="BucketRateLimiter"):
        BucketRateLimiter(clock=lambda: now[0])


def test_an_old_style_elector_clock_still_reads_the_time() -> None:
    class OldClock:
        def monotonic(self) -> float:
            return 5.0

        def now(self) -> datetime:
            return datetime(2024, 1, 1, tzinfo=timezone.utc)

    with pytest.warns(DeprecationWarning, match="LeaderElector"):
        elector = _elector(FakeClient(), "a", clock=OldClock())
    assert elector.try_acquire_or_renew()
    lease = elector._lock.lease
    assert lease is not None and lease["spec"]["renewTime"].startswith("2024-01-01T00:00:00")


# --- the controller's backoff on a SimClock ------------------------------------------------


def test_the_controller_backs_off_to_1000_s_in_virtual_time() -> None:
    sim = SimClock(stall_timeout=20)
    calls: list[float] = []
    failures = 20

    class Flaky:
        def reconcile(self, request: Request) -> None:
            calls.append(sim.monotonic())
            if len(calls) <= failures:
                raise RuntimeError("not yet")
            done.set()

    started = time.monotonic()
    with sim.activate():
        done = sim.event()
        stop = sim.event()
        controller = Controller("flaky-sim", Flaky())
        runner = threading.Thread(target=controller.start, args=(stop,))
        runner.start()
        controller.queue.add(Request("default", "web"))
        assert done.wait(3 * 3600), "the reconcile never succeeded"
        stop.set()
        runner.join()
    assert time.monotonic() - started < 15  # hours of backoff, not of wall time
    gaps = [b - a for a, b in itertools.pairwise(calls)]
    # client-go's per-item backoff: 5 ms doubling, capped at 1000 s.
    assert gaps[0] == pytest.approx(0.005)
    assert gaps[10] == pytest.approx(0.005 * 2**10)
    assert gaps[-1] == pytest.approx(1000.0)
    assert calls[-1] > 2000


# --- leader election on a SimClock ---------------------------------------------------------

NS, NAME = "kube-system", "sim-lock"


def _elector(client: Any, identity: str, **kw: Any) -> LeaderElector:
    kw.setdefault("on_started_leading", lambda stop: None)
    kw.setdefault("on_stopped_leading", lambda: None)
    return LeaderElector(client, NS, NAME, identity, **kw)


def _microtime(value: str) -> float:
    return datetime.strptime(value, MICROTIME_FORMAT).replace(tzinfo=timezone.utc).timestamp()


def test_a_follower_takes_over_exactly_after_the_lease_expires_in_virtual_time() -> None:
    client = FakeClient()
    sim = SimClock(stall_timeout=20)
    started = time.monotonic()
    with sim.activate():
        a_leads, b_leads = sim.event(), sim.event()
        b_led_at: list[float] = []
        # client-go's timings: 15 s lease, 10 s renew deadline, 2 s retry. a does not
        # release the lease when stopped (as if it crashed): b must wait it out.
        a = _elector(
            client, "a", on_started_leading=lambda s: a_leads.set(), release_on_cancel=False
        )
        b = _elector(
            client,
            "b",
            on_started_leading=lambda s: (b_led_at.append(sim.time()), b_leads.set()),
        )
        assert a.clock is sim and b.clock is sim
        stop_a, stop_b = sim.event(), sim.event()
        run_a = threading.Thread(target=a.run, args=(stop_a,))
        run_a.start()
        assert a_leads.wait(60)
        run_b = threading.Thread(target=b.run, args=(stop_b,))
        run_b.start()
        sim.sleep(120)  # two minutes of renewals: b only follows
        assert a.is_leader() and not b_leads.is_set() and b.get_leader() == "a"
        stopped_at = sim.time()
        stop_a.set()
        run_a.join()
        last_renewal = _microtime(client.get(Lease, NAME, NS)["spec"]["renewTime"])
        assert b_leads.wait(60), "b never took over"
        stop_b.set()
        run_b.join()
    assert time.monotonic() - started < 15
    assert stopped_at - 2 <= last_renewal <= stopped_at  # a renewed every 2 s
    waited = b_led_at[0] - last_renewal
    # Expiry is measured on b's clock from when b saw the last renewal: at its next try
    # (2 s to 4.4 s apart with client-go's jitter), then at its first try 15 s after that.
    assert 15 < waited <= 15 + 2 * 4.4, waited
    spec = client.get(Lease, NAME, NS)["spec"]
    assert spec["holderIdentity"] == ""  # b released it on stop
    assert spec["leaseTransitions"] == 1


def test_a_stop_ends_an_elector_pause_at_once_on_a_fake_clock() -> None:
    client = FakeClient()
    clock = FakeClock()
    a = _elector(client, "a", clock=clock)
    assert a.try_acquire_or_renew()
    stopped = threading.Event()
    b = _elector(client, "b", clock=clock, on_stopped_leading=stopped.set)
    stop = clock.event()
    runner = threading.Thread(target=b.run, args=(stop,), daemon=True)
    runner.start()
    _wait_real(clock.has_waiters)  # b pauses between tries: nothing moves the fake time
    stop.set()
    runner.join(10)
    assert not runner.is_alive() and stopped.is_set()


# --- sources, servers and the manager ------------------------------------------------------


class _Sink:
    def __init__(self, clock: kclock.Clock) -> None:
        self.got: list[Any] = []
        self.arrived = clock.event()

    def on_generic(self, obj: Any) -> None:
        self.got.append(obj)
        self.arrived.set()


def test_a_channel_get_times_out_on_its_clock() -> None:
    clock = FakeClock()
    channel: Channel[int] = Channel(clock=clock)
    outcome: list[Any] = []

    def get() -> None:
        try:
            outcome.append(channel.get(timeout=5))
        except queue.Empty:
            outcome.append("empty")

    getter = threading.Thread(target=get, daemon=True)
    getter.start()
    _wait_real(clock.has_waiters)
    clock.step(5)
    getter.join(10)
    assert outcome == ["empty"]
    channel.put(1)
    assert channel.qsize() == 1 and channel.get_nowait() == 1 and channel.empty()


@pytest.mark.parametrize("make", [Channel, queue.Queue])
def test_a_channel_source_runs_on_a_simulated_clock(make: Any) -> None:
    sim = SimClock(stall_timeout=5)
    with sim.activate():
        channel = make()
        sink = _Sink(sim)
        stop = sim.event()
        ChannelSource(channel).start(sink, stop)  # type: ignore[arg-type]
        sim.sleep(600)  # the pump waits on the clock (or polls it): time moves
        channel.put({"metadata": {"name": "x"}})
        assert sink.arrived.wait(60)
        stop.set()
    assert sink.got == [{"metadata": {"name": "x"}}]


def test_an_endpoint_server_is_started_outside_the_simulation() -> None:
    sim = SimClock(stall_timeout=5)
    with sim.activate():
        server = EndpointServer(("127.0.0.1", 0), healthz={"ping": lambda: None})
        server.start()
        try:
            assert server._thread is not None and not sim.is_participant(server._thread)
            sim.sleep(600)  # a serving thread blocked in select would stall the clock
            host, port = server.address
            with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=5) as answer:
                assert answer.read() == b"ok"
        finally:
            server.stop()


def test_the_manager_gives_its_clock_to_what_it_builds() -> None:
    clock = FakeClock()
    manager = Manager(FakeClient(), metrics_bind_address="0", clock=clock)
    assert manager.clock is clock
    recorder = manager.get_event_recorder("test")
    assert recorder._clock is clock
    controller = Builder(manager).for_(ConfigMap).complete(lambda request: None)
    assert controller.clock is clock and controller.queue.clock is clock
    recorder.close(0)


# --- retries and conditions ----------------------------------------------------------------


def _failing_twice() -> Any:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError("conflict")
        return "ok"

    return fn


def test_retry_on_sleeps_on_the_given_clock_and_draws_its_jitter() -> None:
    backoff = Backoff(steps=3, duration=10, factor=2, jitter=0.5)
    ends = []
    for _ in range(2):
        sim = SimClock(seed=7, stall_timeout=5)
        with sim.activate():
            assert retry_on(lambda e: True, _failing_twice(), backoff, clock=sim) == "ok"
        ends.append(sim.monotonic())
    assert 30 <= ends[0] <= 45  # 10 s then 20 s, each with up to 50 % jitter, in virtual time
    assert ends[0] == ends[1]  # the jitter came from the seeded clock: reproducible


def test_a_condition_takes_its_time_from_a_clock() -> None:
    conditions: list[dict[str, Any]] = []
    clock = FakeClock()
    set_status_condition(conditions, {"type": "Ready", "status": "True"}, now=clock)
    assert conditions[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    clock.step(3600)
    set_status_condition(conditions, {"type": "Ready", "status": "False"}, now=clock)
    assert conditions[0]["lastTransitionTime"] == "2026-01-01T01:00:00Z"
