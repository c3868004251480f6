"""Polling helper for tests: wait on a condition, never on a fixed sleep."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kube_runtime import clock

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """The condition did not hold in time; the message says what was awaited and the last value."""


def wait_for(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.01,
    message: str = "condition",
    *,
    every: float | None = None,
) -> T:
    """Call ``predicate`` until it returns a truthy value and return that value.

    Exceptions raised by the predicate count as "not yet" and the last one is reported on
    timeout; the interval grows gently up to 0.2 s so long waits stay cheap. Time is the
    current clock's (:func:`kube_runtime.clock.current`): under a simulated clock the timeout
    is virtual, so a wait of minutes costs milliseconds, and the predicate is checked once
    everything set off at one virtual instant has run and again each time the time moves
    (:meth:`~kube_runtime.clock.SimClock.settle`, :meth:`~kube_runtime.clock.SimClock.wait_for_change`):
    it sees every state the simulation reaches, at the same instants on every run.

    ``every`` (virtual seconds; a simulated clock only, ignored on the real one) checks at most
    that often instead of at each move: the wait sleeps ``every`` on the clock between checks
    and settles before each. For long waits on a busy simulation (a leader renewing every 2 s
    moves the time 1,800 times an hour), where waking the test at each move would cost more
    than the simulation itself; the checks still see settled states, at the same instants on
    every run, but not every state.
    """
    if every is not None and every <= 0:
        raise ValueError(f"every must be positive, not {every!r}")
    clk = clock.current()
    sim = clk if isinstance(clk, clock.SimClock) else None
    deadline = clk.monotonic() + timeout
    last: object = None
    delay = interval
    settled = False  # a change wait that ended normally has settled already
    while True:
        if sim is not None and not settled:
            sim.settle()
        try:
            value = predicate()
            if value:
                return value
            last = value
        except Exception as e:
            last = e
        left = deadline - clk.monotonic()
        if left <= 0:
            raise WaitTimeout(
                f"timed out after {timeout:.1f}s{' (virtual)' if sim else ''} waiting for "
                f"{message}; last result: {last!r}"
            )
        if sim is not None and every is not None:
            sim.sleep(min(every, left))
            settled = False
        elif sim is not None:
            settled = sim.wait_for_change(left, settle=True)
        else:
            clk.sleep(delay)
            delay = min(delay * 1.5, 0.2)
