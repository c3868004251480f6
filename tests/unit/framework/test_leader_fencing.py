"""Fencing: a leader writes only while it can prove its lease, and a newer Lease naming
another holder deposes it at once."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client import Configuration

from kube_runtime.client import Client, WriteRefused
from kube_runtime.clock import FakeClock
from kube_runtime.manager import Manager
from tests.support.leaderelection import NAME, NS, FakeClient, lease_clock, make_elector


def _leading(clock: FakeClock) -> Any:
    client = FakeClient()
    a = make_elector(client, "a", clock, lease_duration=15.0, renew_deadline=10.0, retry_period=2.0)
    assert a.try_acquire_or_renew()
    a._leading = True  # what run() records once the lease is acquired
    return a, client


def test_the_lease_is_provable_until_renew_deadline_after_the_last_renewal_sent() -> None:
    clock = lease_clock()
    a, _ = _leading(clock)
    assert a.holds_lease_safely()
    clock.step(9.9)
    assert a.holds_lease_safely()
    clock.step(0.2)  # a pause past renew_deadline: others may take over soon
    assert not a.holds_lease_safely()
    assert a.try_acquire_or_renew()  # a renewal sent now proves it again
    assert a.holds_lease_safely()


def test_a_newer_lease_naming_another_holder_deposes_the_leader_at_once() -> None:
    clock = lease_clock()
    a, client = _leading(clock)
    own = client.objects[(NS, NAME)]
    older = {**own, "metadata": {**own["metadata"], "resourceVersion": "0"}}
    older["spec"] = {**own["spec"], "holderIdentity": "b"}
    a._on_lease_seen(older)  # an event from before our own write: ignored
    assert a.holds_lease_safely()
    newer = {**older, "metadata": {**own["metadata"], "resourceVersion": "999"}}
    a._on_lease_seen(newer)
    assert not a.holds_lease_safely()


class Elector:
    def __init__(self, safe: bool) -> None:
        self.safe = safe

    def holds_lease_safely(self) -> bool:
        return self.safe


def _manager() -> Manager:
    config = Configuration()
    config.host = "http://127.0.0.1:9"  # nothing is sent in these tests
    return Manager(
        Client(config),
        leader_election=True,
        leader_election_id="fencing",
        leader_election_namespace="default",
        metrics_bind_address="0",
    )


def test_the_manager_refuses_writes_once_the_lease_is_not_provable() -> None:
    manager = _manager()
    manager._elector = Elector(safe=True)  # type: ignore[assignment]
    manager.api_reader.write_guard = manager._guard_write
    manager.elected.set()
    manager._guard_write("PATCH", "/api/v1/namespaces/x/pods/p")  # leading: allowed
    manager._elector = Elector(safe=False)  # type: ignore[assignment]
    with pytest.raises(WriteRefused, match="no longer leads"):
        manager.api_reader.request("PATCH", "/api/v1/namespaces/x/pods/p", body={})
    assert manager._stop.is_set() and manager._lost_leadership
    # Reads are never fenced: a GET goes out (and fails to connect, nothing listens here).
    with pytest.raises(Exception) as err:
        manager.api_reader.request("GET", "/api/v1/namespaces")
    assert not isinstance(err.value, WriteRefused)


def test_before_election_writes_are_not_fenced() -> None:
    manager = _manager()
    manager._elector = Elector(safe=False)  # type: ignore[assignment]
    manager._guard_write("POST", "/api/v1/namespaces/x/events")  # not elected yet: allowed


def test_the_client_passed_in_is_left_unfenced() -> None:
    config = Configuration()
    config.host = "http://127.0.0.1:9"
    shared = Client(config)
    manager = Manager(
        shared,
        leader_election=True,
        leader_election_id="fencing",
        leader_election_namespace="default",
        metrics_bind_address="0",
    )
    manager._make_elector()  # what start() does: the guard goes on the manager's own client
    assert manager.api_reader is not shared and manager.api_reader.write_guard is not None
    assert shared.write_guard is None  # shared with others (tests, other managers): unchanged
