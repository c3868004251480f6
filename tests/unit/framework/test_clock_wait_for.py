"""kube_runtime.envtest.waiting.wait_for on a simulated clock: a check at each move by default,
or every ``every`` virtual seconds (settled first), at the same instants on every run."""

from __future__ import annotations

import threading

import pytest

from kube_runtime.clock import SimClock
from kube_runtime.envtest.waiting import WaitTimeout, wait_for


def _ticking(sim: SimClock, ticks: list[float], count: int) -> threading.Thread:
    """A participant that appends the virtual time once a second, ``count`` times."""

    def tick() -> None:
        for _ in range(count):
            sim.sleep(1)
            ticks.append(sim.monotonic())

    t = threading.Thread(target=tick)
    t.start()
    return t


def _run(every: float | None) -> tuple[float, int, int]:
    """(virtual time when the wait returned, predicate calls, ticks seen by the last check)."""
    sim = SimClock()
    with sim.activate():
        ticks: list[float] = []
        calls: list[int] = []

        def predicate() -> bool:
            calls.append(len(ticks))
            return len(ticks) >= 100

        t = _ticking(sim, ticks, 300)
        wait_for(predicate, timeout=1000, every=every)
        when = sim.monotonic()
        t.join()
    return when, len(calls), calls[-1]


def test_by_default_the_predicate_is_checked_at_each_move_and_sees_every_state() -> None:
    when, calls, seen = _run(None)
    assert (when, seen) == (100.0, 100)
    assert calls == 101  # at 0 and once per second


def test_every_checks_that_often_on_settled_states_at_the_same_instants_on_every_run() -> None:
    runs = {_run(30) for _ in range(3)}
    # Checks at 0, 30, 60, 90, 120: the one at 120 sees the tick due then (settled first).
    assert runs == {(120.0, 5, 120)}


def test_every_bounds_the_wait_by_its_timeout_in_virtual_time() -> None:
    sim = SimClock()
    with sim.activate():
        calls: list[float] = []

        def never() -> bool:
            calls.append(sim.monotonic())
            return False

        with pytest.raises(WaitTimeout, match=r"timed out after 50.0s \(virtual\)"):
            wait_for(never, timeout=50, every=20)
        assert calls == [0.0, 20.0, 40.0, 50.0]
        assert sim.monotonic() == 50.0


def test_every_must_be_positive() -> None:
    with pytest.raises(ValueError, match="every must be positive"):
        wait_for(lambda: True, every=0)
