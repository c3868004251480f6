"""The leader's renewal loop: client-go's rounds (renew every ``retry_period``, each round held
to ``renew_deadline``) on one renewal thread of their own, not a thread per renewal; a write
that hangs past the round's deadline loses leadership as one that fails does."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import pytest

from kube_runtime.clock import REAL, SimClock
from tests.support.leaderelection import FakeClient, make_elector, run_elector

FAST = {"lease_duration": 0.5, "renew_deadline": 0.3, "retry_period": 0.05}


def test_an_hour_of_renewals_starts_a_fixed_number_of_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """client-go's 15/10/2 s for an hour of virtual time: 1,800 renewals, every one 2 s after
    the last, and the threads the elector starts do not grow with them."""
    client = FakeClient()
    sim = SimClock()
    started: list[str] = []

    with sim.activate():
        hooked = threading.Thread.start  # the simulation's own hook, installed by activate()

        def counting_start(thread: threading.Thread) -> None:
            started.append(thread.name)
            hooked(thread)

        monkeypatch.setattr(threading.Thread, "start", counting_start)
        led = sim.event()
        stop = sim.event()
        renewals: list[float] = []
        update = client.update

        def timed_update(obj: dict[str, Any]) -> dict[str, Any]:
            renewals.append(sim.monotonic())
            return update(obj)

        client.update = timed_update  # type: ignore[method-assign]
        elector = make_elector(client, "a", sim, on_started_leading=lambda _: led.set())
        runner = threading.Thread(target=elector.run, args=(stop,), name="elector")
        runner.start()
        assert led.wait(60)
        sim.sleep(3600)
        assert elector.is_leader()
        stop.set()
        runner.join(60)
    assert not runner.is_alive()
    steps = {round(b - a, 6) for a, b in itertools.pairwise(renewals[:-1])}  # [-1]: release
    assert steps == {2.0}, steps  # one renewal every retry_period, none late or extra
    assert len(renewals) >= 1800
    # elector, relay, on_started_leading, on_new_leader, the renewal thread: no more.
    assert len(started) <= 6, started
    assert client.spec()["holderIdentity"] == ""  # released on stop


def test_a_renewal_that_hangs_past_the_renew_deadline_loses_leadership() -> None:
    """A write that never answers counts as a failed round: ``run`` returns within about
    ``renew_deadline`` and the leading stop is set, though the request is still hanging."""
    client = FakeClient()
    hang = threading.Event()
    run = run_elector(client, "a", clock=REAL, **FAST)
    try:
        assert run.started.wait(5)

        def never_answer() -> None:  # the next renewal hangs
            hang.wait(30)

        client.before_update = never_answer
        hung_at = time.monotonic()
        run.runner.join(5)
        took = time.monotonic() - hung_at
        assert not run.runner.is_alive(), "run() returns once the round's deadline passed"
        # at most one retry_period until the round in progress began, then renew_deadline
        assert took < FAST["retry_period"] + FAST["renew_deadline"] + 1.0, took
        assert run.leading_stop[0].is_set()
        assert run.stopped.is_set()
        assert not run.elector.is_leader()
        assert not run.elector.holds_lease_safely()
    finally:
        hang.set()
        run.end()
