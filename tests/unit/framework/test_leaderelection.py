"""LeaderElector against an in-memory Lease store and a hand-driven clock.

One ``try_acquire_or_renew`` round at a time for the decisions (acquire, renew, expiry measured
on the candidate's own clock, conflicts, release, transitions), and ``run`` with short real
durations for the loops and callbacks.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kube_runtime import metrics
from kube_runtime.clock import REAL
from kube_runtime.envtest.waiting import wait_for
from tests.support.leaderelection import (
    EPOCH,
    MICROTIME,
    NAME,
    NS,
    FakeClient,
    lease_clock,
    make_elector,
    run_elector,
)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            {"lease_duration": 10, "renew_deadline": 10},
            "lease_duration .* greater than renew_deadline",
        ),
        ({"renew_deadline": 2.4, "retry_period": 2}, r"renew_deadline .* retry_period \* 1.2"),
        ({"lease_duration": 0}, "lease_duration must be greater than zero"),
        ({"renew_deadline": -1}, "renew_deadline must be greater than zero"),
        ({"retry_period": 0}, "retry_period must be greater than zero"),
    ],
)
def test_invalid_durations_are_rejected(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_elector(FakeClient(), "a", **kw)


def test_empty_identity_is_rejected() -> None:
    with pytest.raises(ValueError, match="identity"):
        make_elector(FakeClient(), "")


def test_acquire_creates_the_lease() -> None:
    client = FakeClient()
    a = make_elector(client, "a")
    assert a.try_acquire_or_renew()
    spec = client.spec()
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    assert MICROTIME.match(spec["acquireTime"]) and spec["acquireTime"] == spec["renewTime"]
    assert a.get_leader() == "a"


def test_renew_keeps_acquire_time_and_skips_the_read() -> None:
    client, clock = FakeClient(), lease_clock()
    a = make_elector(client, "a", clock)
    assert a.try_acquire_or_renew()
    acquired = client.spec()["acquireTime"]
    clock.step(2)
    client.calls.clear()
    assert a.try_acquire_or_renew()
    spec = client.spec()
    assert client.calls == ["update"]  # the leader's optimistic fast path
    assert spec["acquireTime"] == acquired
    assert spec["renewTime"] > acquired
    assert spec["leaseTransitions"] == 0


def test_follower_waits_a_lease_duration_on_its_own_clock() -> None:
    client = FakeClient()
    # a's wall clock is an hour behind: its timestamps look long expired to anybody
    # comparing them with a correct clock; b must not care.
    a_clock, b_clock = lease_clock(EPOCH - 3600), lease_clock()
    a, b = make_elector(client, "a", a_clock), make_elector(client, "b", b_clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert b.get_leader() == "a"
    b_clock.step(14.9)
    assert not b.try_acquire_or_renew()
    b_clock.step(0.2)
    assert b.try_acquire_or_renew()
    spec = client.spec()
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert b.get_leader() == "b"


def test_a_renewal_restarts_the_followers_wait() -> None:
    client = FakeClient()
    a_clock, b_clock = lease_clock(), lease_clock()
    a, b = make_elector(client, "a", a_clock), make_elector(client, "b", b_clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    b_clock.step(10)
    a_clock.step(10)
    assert a.try_acquire_or_renew()  # renewTime changes: b sees a new record
    b_clock.step(1)
    assert not b.try_acquire_or_renew()
    b_clock.step(14.5)  # 15.5 s after b's first look, 14.5 s after it saw the renewal
    assert not b.try_acquire_or_renew()
    b_clock.step(1)
    assert b.try_acquire_or_renew()


def test_losing_the_write_race_just_loses_the_round() -> None:
    client = FakeClient()
    b_clock, c_clock = lease_clock(), lease_clock()
    a = make_elector(client, "a")
    b, c = make_elector(client, "b", b_clock), make_elector(client, "c", c_clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew() and not c.try_acquire_or_renew()
    b_clock.step(20)
    c_clock.step(20)
    # b takes the expired lease between c's read and c's write.
    client.before_update = lambda: (b.try_acquire_or_renew(), None)[1]
    assert not c.try_acquire_or_renew()
    assert client.spec()["holderIdentity"] == "b"
    assert client.spec()["leaseTransitions"] == 1
    assert c.get_leader() != "c"


def test_a_conflicting_renewal_falls_back_to_a_read() -> None:
    client, clock = FakeClient(), lease_clock()
    a = make_elector(client, "a", clock)
    assert a.try_acquire_or_renew()
    stored = client.objects[(NS, NAME)]
    client.rv += 1
    stored["metadata"]["resourceVersion"] = str(client.rv)  # someone touched the Lease
    clock.step(2)
    client.calls.clear()
    assert a.try_acquire_or_renew()
    assert client.calls == ["update", "get", "update"]
    assert client.spec()["holderIdentity"] == "a"
    assert client.spec()["leaseTransitions"] == 0


def test_release_lets_a_follower_take_over_at_once() -> None:
    client = FakeClient()
    a, b = make_elector(client, "a"), make_elector(client, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    assert a.release()
    spec = client.spec()
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    assert MICROTIME.match(spec["renewTime"])
    assert b.try_acquire_or_renew()  # no clock advance needed
    assert client.spec()["holderIdentity"] == "b"
    assert client.spec()["leaseTransitions"] == 1


def test_release_by_a_non_holder_writes_nothing() -> None:
    client = FakeClient()
    a, b = make_elector(client, "a"), make_elector(client, "b")
    assert a.try_acquire_or_renew()
    client.calls.clear()
    assert b.release()
    assert client.calls == ["get"]
    assert client.spec()["holderIdentity"] == "a"


def test_transitions_count_every_change_of_holder() -> None:
    client = FakeClient()
    a, b = make_elector(client, "a"), make_elector(client, "b")
    assert a.try_acquire_or_renew()
    assert a.release()
    assert b.try_acquire_or_renew()
    assert b.release()
    assert a.try_acquire_or_renew()
    assert client.spec()["leaseTransitions"] == 2
    assert client.spec()["holderIdentity"] == "a"


def test_api_errors_fail_the_round_without_raising() -> None:
    client = FakeClient()
    a = make_elector(client, "a")
    assert a.try_acquire_or_renew()
    client.fail_updates = True
    client.objects[(NS, NAME)]["metadata"]["resourceVersion"] = "stale"
    assert not a.try_acquire_or_renew()


# --- run(): real (short) durations ------------------------------------------------------------

FAST = {"lease_duration": 0.5, "renew_deadline": 0.3, "retry_period": 0.05}


def _gauge(name: str) -> float | None:
    return metrics.REGISTRY.get_sample_value("leader_election_master_status", {"name": name})


def test_run_leads_then_releases_on_stop() -> None:
    client = FakeClient()
    started, stopped = threading.Event(), threading.Event()
    leading_stop: list[threading.Event] = []
    new_leaders: list[str] = []

    def on_started(stop: threading.Event) -> None:
        leading_stop.append(stop)
        started.set()

    a = make_elector(
        client,
        "a",
        clock=REAL,
        on_started_leading=on_started,
        on_stopped_leading=stopped.set,
        on_new_leader=new_leaders.append,
        **FAST,
    )
    stop = threading.Event()
    runner = threading.Thread(target=a.run, args=(stop,))
    runner.start()
    try:
        assert started.wait(5)
        assert a.is_leader()
        assert _gauge(NAME) == 1.0
        wait_for(lambda: new_leaders == ["a"], 5, message="on_new_leader('a')")
        # renewals keep going
        first = client.spec()["renewTime"]
        wait_for(lambda: client.spec()["renewTime"] != first, 5, message="a renewal")
        assert not leading_stop[0].is_set()
    finally:
        stop.set()
        runner.join(5)
    assert not runner.is_alive()
    assert leading_stop[0].is_set()
    assert stopped.is_set()
    assert not a.is_leader()
    assert _gauge(NAME) == 0.0
    assert client.spec()["holderIdentity"] == ""


def test_run_gives_up_when_renewals_keep_failing() -> None:
    client = FakeClient()
    run = run_elector(client, "a", clock=REAL, **FAST)
    try:
        assert run.started.wait(5)
        client.fail_updates = True
        run.runner.join(5)
        assert not run.runner.is_alive(), "run() should return once a renewal misses its deadline"
    finally:
        run.end()
    assert run.leading_stop[0].is_set()
    assert run.stopped.is_set()
    assert not run.elector.is_leader()
    assert client.spec()["holderIdentity"] == "a"  # the release could not be written either


def test_stop_before_acquiring_returns_and_reports_stopped() -> None:
    client = FakeClient()
    a = make_elector(client, "a")
    assert a.try_acquire_or_renew()
    stopped = threading.Event()
    b = make_elector(client, "b", on_stopped_leading=stopped.set, **FAST)
    stop = threading.Event()
    runner = threading.Thread(target=b.run, args=(stop,))
    runner.start()
    wait_for(lambda: "get" in client.calls, 5, message="b's first try")
    stop.set()
    runner.join(5)
    assert not runner.is_alive()
    assert stopped.is_set()
    assert client.spec()["holderIdentity"] == "a"
