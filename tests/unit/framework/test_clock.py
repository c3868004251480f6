"""kube_runtime.clock: the real clock is the time functions, FakeClock steps by hand, SimClock
jumps to the next deadline once every participant is blocked (synctest's rule)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

import pytest

from kube_runtime import clock
from kube_runtime.clock import FakeClock, SimClock, SimDeadlock, SimStall


def test_real_clock_is_the_time_functions_themselves() -> None:
    # No wrapper call: reading the clock costs what time.monotonic costs.
    assert clock.REAL.monotonic is time.monotonic
    assert clock.REAL.time is time.time
    assert clock.REAL.sleep is time.sleep
    assert type(clock.REAL.event()) is threading.Event
    assert type(clock.REAL.condition()) is threading.Condition
    assert clock.current() is clock.REAL


def test_use_makes_a_clock_current_and_restores_the_previous() -> None:
    fake = FakeClock()
    with clock.use(fake):
        assert clock.current() is fake
    assert clock.current() is clock.REAL


def test_resolve_takes_a_clock_the_current_one_or_warns_for_a_bare_function() -> None:
    fake = FakeClock()
    assert clock.resolve(fake, "X") is fake
    with clock.use(fake):
        assert clock.resolve(None, "X") is fake
    with pytest.warns(DeprecationWarning, match="X: a bare time function"):
        adapted = clock.resolve(lambda: 42.0, "X", wall=True)
    assert adapted.monotonic() == 42.0 and adapted.time() == 42.0
    assert adapted.now() == datetime.fromtimestamp(42.0, timezone.utc)


def test_fake_clock_wakes_waits_and_timers_only_when_stepped() -> None:
    fake = FakeClock(start=1000.0)
    ev = fake.event()
    results: list[bool] = []
    waiter = threading.Thread(target=lambda: results.append(ev.wait(10)))
    waiter.start()
    deadline = time.monotonic() + 5
    while not fake.has_waiters() and time.monotonic() < deadline:
        time.sleep(0.001)
    fake.step(9.5)
    waiter.join(0.05)
    assert waiter.is_alive(), "woke before its virtual deadline"
    fake.step(0.5)
    waiter.join(5)
    assert results == [False]
    assert fake.monotonic() == 10.0 and fake.time() == 1010.0
    fired = threading.Event()
    fake.after(5, fired.set)
    assert not fired.wait(0.05)
    fake.step(5)
    assert fired.wait(5)


def test_sim_clock_runs_minutes_of_timers_in_milliseconds() -> None:
    sim = SimClock()
    started = time.monotonic()
    with sim.activate():
        cond = sim.condition()
        seen: list[float] = []

        def producer() -> None:
            for _ in range(4):
                sim.sleep(15)
                with cond:
                    seen.append(sim.monotonic())
                    cond.notify()

        def consumer(out: list[float]) -> None:
            while len(out) < 4:
                with cond:
                    cond.wait_for(lambda: len(seen) > len(out), timeout=1000)
                    out.append(seen[len(out)])

        got: list[float] = []
        threads = [
            threading.Thread(target=producer),
            threading.Thread(target=consumer, args=(got,)),
        ]
        for t in threads:
            t.start()
        timer_fired: list[float] = []
        sim.after(600, lambda: timer_fired.append(sim.monotonic()))
        for t in threads:
            t.join()
        sim.sleep(600)
        assert got == [15.0, 30.0, 45.0, 60.0]
        assert timer_fired == [600.0]
        assert sim.monotonic() == 660.0
        assert sim.now() == datetime(2026, 1, 1, 0, 11, tzinfo=timezone.utc)
    assert time.monotonic() - started < 1.0


def test_sim_clock_does_not_move_while_a_participant_runs_or_something_is_held() -> None:
    sim = SimClock()
    with sim.activate():
        busy = threading.Event()  # a real event: the worker runs (busy-waits) on real time
        release = threading.Event()

        def worker() -> None:
            busy.set()
            release.wait(5)

        t = threading.Thread(target=worker)
        t.start()
        busy.wait(5)
        # Released from outside the simulation after 0.1 s of real time.
        clock.start_detached(threading.Timer(0.1, release.set))
        sim.sleep(1)  # cannot advance until the worker stops running
        assert sim.monotonic() == 1.0
        t.join()
        sim.hold("k")
        moved: list[float] = []

        def sleeper() -> None:
            sim.sleep(5)
            moved.append(sim.monotonic())

        s = threading.Thread(target=sleeper)
        s.start()
        unheld = threading.Timer(0.1, lambda: sim.release("k"))
        clock.start_detached(unheld)
        real = time.monotonic()
        s.join()
        assert moved == [6.0]
        assert time.monotonic() - real >= 0.09, "time moved while something was held"


def test_sim_clock_idle_participant_does_not_hold_time() -> None:
    sim = SimClock()
    with sim.activate():
        gate = threading.Event()
        entered = threading.Event()

        def reader() -> None:
            with sim.idle():  # e.g. a socket read whose data someone else accounts for
                entered.set()
                gate.wait(5)

        t = threading.Thread(target=reader)
        t.start()
        entered.wait(5)
        sim.sleep(30)  # moves although the reader is blocked outside the clock
        assert sim.monotonic() == 30.0
        gate.set()
        t.join()


def test_sim_clock_wakes_every_waiter_due_at_the_same_instant() -> None:
    def order(seed: int | None) -> list[int]:
        sim = SimClock(seed=seed)
        woke: list[int] = []
        lock = threading.Lock()
        with sim.activate():
            ready = sim.condition()
            started: list[int] = []

            def sleeper(i: int) -> None:
                with ready:
                    started.append(i)
                    ready.notify_all()
                sim.sleep(10)
                with lock:
                    woke.append(i)

            threads = []
            for i in range(6):  # start one by one so the order they began to wait is known
                threads.append(threading.Thread(target=sleeper, args=(i,)))
                threads[-1].start()
                with ready:
                    ready.wait_for(lambda i=i: i in started)  # type: ignore[misc]
            for t in threads:
                t.join()
            assert sim.monotonic() == 10.0
        return woke

    # All six wake at the same virtual instant; which runs first after that is the scheduler's.
    assert sorted(order(None)) == list(range(6))
    assert sorted(order(7)) == list(range(6))


def test_sim_clock_deadlock_raises_in_the_activating_thread_with_where_everyone_is() -> None:
    sim = SimClock()
    with sim.activate():
        never = sim.event()
        t = threading.Thread(target=never.wait, name="waits-forever")
        t.start()
        with pytest.raises(SimDeadlock, match="waits-forever: blocked"):
            sim.event().wait()
        never.set()
        t.join()


def test_sim_clock_stall_fails_the_test_instead_of_hanging() -> None:
    sim = SimClock(stall_timeout=0.5)
    with sim.activate():
        stop = threading.Event()
        t = threading.Thread(target=lambda: stop.wait(10), name="real-waiter")  # not the clock's
        t.start()
        with pytest.raises(SimStall, match="real-waiter: running"):
            sim.sleep(1)
        stop.set()
        t.join()


def test_sim_clock_join_of_a_participant_waits_in_virtual_time() -> None:
    sim = SimClock()
    with sim.activate():
        t = threading.Thread(target=lambda: sim.sleep(3600))
        t.start()
        t.join(timeout=60)
        assert t.is_alive() and sim.monotonic() == 60.0
        t.join()
        assert not t.is_alive() and sim.monotonic() == 3600.0


def test_sim_clock_rng_is_seeded() -> None:
    assert SimClock(seed=3).rng.random() == SimClock(seed=3).rng.random()
    assert SimClock().rng.random() == SimClock(seed=0).rng.random()


def test_sim_clock_settle_waits_for_what_runs_at_this_instant_without_moving_time() -> None:
    sim = SimClock()
    with sim.activate():
        done: list[float] = []

        def worker() -> None:
            time.sleep(0.05)  # real work, no clock wait: the instant is not over yet
            done.append(sim.monotonic())
            sim.sleep(10)

        t = threading.Thread(target=worker)
        t.start()
        sim.settle()
        assert done == [0.0] and sim.monotonic() == 0.0
        t.join()
        assert sim.monotonic() == 10.0


def test_a_cancelled_timer_is_no_deadline_the_clock_moves_to() -> None:
    sim = SimClock()
    with sim.activate():
        timer = sim.after(1800, lambda: None)
        sim.sleep(1)
        timer.cancel()
        with pytest.raises(SimDeadlock):
            sim.event().wait()
        assert sim.monotonic() == 1.0
