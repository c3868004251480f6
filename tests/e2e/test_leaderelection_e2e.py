"""Leader election between two candidates against the embedded API server.

On the embedded backend every test runs on simulated time (``docs/simtime.md``) on a cluster
of its own, with client-go's durations (lease 15 s, renew deadline 10 s, retry 2 s); on
kube-apiserver (``--backend real``), in real time, short ones (1 s, 0.6 s, 0.1 s) keep takeovers
quick.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kube_runtime import clock
from kube_runtime.events import EventRecorder
from kube_runtime.kinds import Event, Lease
from kube_runtime.leaderelection import LeaderElector
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_faults,
    simulated_namespace,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

LEASE = "controller-lock"
FAST = (
    {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}  # client-go's
    if SIMULATED
    else {"lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.1}
)
T = 10 * FAST["lease_duration"]  # a wait's timeout: virtual seconds under simulation


def _event() -> threading.Event:
    """An event of the current clock (a simulated clock sees the threads waiting on it)."""
    return clock.current().event()


@dataclass
class Candidate:
    elector: LeaderElector
    stop: threading.Event = field(default_factory=_event)
    thread: threading.Thread | None = None
    leading: list[threading.Event] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=_event)
    leaders_seen: list[str] = field(default_factory=list)

    def start(self) -> Candidate:
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)
        self.thread.start()
        return self

    def halt(self) -> None:
        self.stop.set()
        assert self.thread is not None
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture
def candidates(client: Any, namespace: str) -> Iterator[Callable[..., Candidate]]:
    made: list[Candidate] = []

    def make(identity: str, **kw: Any) -> Candidate:
        holder: dict[str, Candidate] = {}
        elector = LeaderElector(
            client,
            namespace,
            LEASE,
            identity,
            on_started_leading=lambda stop: holder["c"].leading.append(stop),
            on_stopped_leading=lambda: holder["c"].stopped.set(),
            on_new_leader=lambda who: holder["c"].leaders_seen.append(who),
            **{**FAST, **kw},
        )
        candidate = holder["c"] = Candidate(elector)
        made.append(candidate)
        return candidate.start()

    yield make
    for candidate in made:
        candidate.stop.set()
    for candidate in made:
        if candidate.thread is not None:
            candidate.thread.join(10)


def _spec(client: Any, namespace: str) -> dict[str, Any]:
    spec: dict[str, Any] = client.get(Lease, LEASE, namespace)["spec"]
    return spec


def _leader(a: Candidate, b: Candidate) -> tuple[Candidate, Candidate]:
    return (a, b) if a.elector.is_leader() else (b, a)


def test_one_leader_and_a_released_lease_moves_at_once(
    client: Any, namespace: str, candidates: Callable[..., Candidate], wait_for: Any
) -> None:
    recorder = EventRecorder(client, "lease-test")
    a, b = candidates("a", event_recorder=recorder), candidates("b", event_recorder=recorder)
    wait_for(lambda: a.elector.is_leader() or b.elector.is_leader(), T, message="a leader")
    leader, follower = _leader(a, b)
    # The follower has seen the leader, and keeps following while the lease is renewed.
    wait_for(lambda: follower.elector.get_leader() == leader.elector.identity, T)
    renewed = _spec(client, namespace)["renewTime"]
    wait_for(lambda: _spec(client, namespace)["renewTime"] != renewed, T, message="a renewal")
    assert not follower.elector.is_leader() and follower.leading == []
    assert len(leader.leading) == 1
    assert _spec(client, namespace)["holderIdentity"] == leader.elector.identity

    leader.halt()  # release_on_cancel (the default): holderIdentity is emptied
    assert leader.leading[0].is_set() and leader.stopped.is_set()
    wait_for(lambda: follower.elector.is_leader(), T, message="the follower to take over")
    spec = _spec(client, namespace)
    assert spec["holderIdentity"] == follower.elector.identity
    assert spec["leaseTransitions"] == 1
    wait_for(lambda: follower.leaders_seen[-1:] == [follower.elector.identity], T)

    expected = {
        f"{leader.elector.identity} became leader",
        f"{leader.elector.identity} stopped leading",
        f"{follower.elector.identity} became leader",
    }

    def lease_events() -> set[str]:
        events = client.list(Event, namespace)["items"]
        assert all(e["involvedObject"]["kind"] == "Lease" for e in events)
        assert all(e["reason"] == "LeaderElection" for e in events)
        return {e["message"] for e in events}

    wait_for(lambda: lease_events() == expected, T, message=f"events {expected}")
    recorder.close()


def test_a_dead_leader_is_replaced_after_the_lease_expires(
    client: Any, namespace: str, candidates: Callable[..., Candidate], wait_for: Any
) -> None:
    a = candidates("a", release_on_cancel=False)
    wait_for(lambda: a.elector.is_leader(), T, message="a to lead")
    b = candidates("b")
    wait_for(lambda: b.elector.get_leader() == "a", T, message="b to see a")

    a.halt()  # stops renewing, leaves the lease as it is
    assert _spec(client, namespace)["holderIdentity"] == "a"
    wait_for(lambda: b.elector.is_leader(), T, message="b to take over the expired lease")
    spec = _spec(client, namespace)
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1


def test_failing_renewals_end_leadership(
    client: Any,
    namespace: str,
    candidates: Callable[..., Candidate],
    faults: Any,
    wait_for: Any,
) -> None:
    a = candidates("a")
    wait_for(lambda: a.elector.is_leader(), T, message="a to lead")
    faults.fail("leases", "update", 500)
    wait_for(lambda: a.leading and a.leading[0].is_set(), T, message="a to give up")
    assert a.thread is not None
    a.thread.join(10)
    assert not a.thread.is_alive()  # run() returns once leadership is lost
    assert a.stopped.is_set()
    assert not a.elector.is_leader()

    faults.clear()
    b = candidates("b")
    wait_for(lambda: b.elector.is_leader(), T, message="b to take over")
