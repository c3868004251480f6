"""Simulated time (issue 28): leader failover with client-go's default timings (15 s lease,
10 s renew deadline, 2 s retry) on an embedded cluster of the test's own that runs on the
same simulated clock as the candidates. On the embedded backend it takes a fraction of a
second of wall time and writes the same timestamps on every run; on kube-apiserver
(``--backend real``) it runs in real time, with the same timings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime import clock
from kube_runtime.client import Client
from kube_runtime.kinds import Lease
from kube_runtime.leaderelection import LeaderElector

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0  # client-go's defaults
JITTER = 1.2  # client-go's JitterFactor: a retry comes within retry_period * (1 + 1.2)


class Candidate:
    """One elector on its own thread; ``timeline`` records (clock time, what happened)."""

    def __init__(
        self, client: Client, namespace: str, identity: str, timeline: list[tuple[float, str]]
    ) -> None:
        clk = clock.current()
        self.stop = clk.event()
        self.elector = LeaderElector(
            client,
            namespace,
            "failover",
            identity,
            lease_duration=LEASE_DURATION,
            renew_deadline=RENEW_DEADLINE,
            retry_period=RETRY_PERIOD,
            release_on_cancel=False,  # a crash: the lease is left as it is
            on_started_leading=lambda stop: timeline.append((clk.monotonic(), f"{identity} leads")),
            on_stopped_leading=lambda: timeline.append((clk.monotonic(), f"{identity} stopped")),
        )
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)
        self.thread.start()

    def halt(self) -> None:
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive()


def _spec(client: Client, namespace: str) -> dict[str, Any]:
    spec: dict[str, Any] = client.get(Lease, "failover", namespace)["spec"]
    return spec


def _failover(client: Client, namespace: str, wait_for: Callable[..., Any]) -> dict[str, Any]:
    """a leads, b follows, a dies; b takes over once the lease expires. What was observed."""
    clk = clock.current()
    timeline: list[tuple[float, str]] = []
    a = Candidate(client, namespace, "a", timeline)
    wait_for(lambda: a.elector.is_leader(), 30, message="a to lead")
    b = Candidate(client, namespace, "b", timeline)
    try:
        wait_for(lambda: b.elector.get_leader() == "a", 30, message="b to see a")
        renewed = _spec(client, namespace)["renewTime"]
        wait_for(lambda: _spec(client, namespace)["renewTime"] != renewed, 30, message="a renewal")
        last_renewal = _spec(client, namespace)
        a.halt()  # dies: no more renewals, no release
        died = clk.monotonic()
        wait_for(lambda: b.elector.is_leader(), 60, message="b to take over")
        took_over = clk.monotonic()
        spec = _spec(client, namespace)
    finally:
        b.halt()
    return {
        "timeline": timeline,
        "died": died,
        "took_over": took_over,
        "last_renewal": last_renewal,
        "spec": spec,
    }


@pytest.mark.slow  # real time on the real backend
@pytest.mark.simtime
def test_a_dead_leader_is_replaced_after_client_gos_15_second_lease(
    sim_client: Client, sim_namespace: str, wait_for: Callable[..., Any]
) -> None:
    seen = _failover(sim_client, sim_namespace, wait_for)
    spec = seen["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert spec["leaseDurationSeconds"] == 15
    # b saw a's last renewal no later than a died, and waited a whole lease from then; it
    # tries again every 2-4.4 s, so it takes over within one jittered retry of the expiry.
    waited = seen["took_over"] - seen["died"]
    assert waited >= LEASE_DURATION - RETRY_PERIOD * (1 + JITTER)
    assert waited <= LEASE_DURATION + RETRY_PERIOD * (1 + JITTER) + 1
    assert [what for _, what in seen["timeline"]] == [
        "a leads",
        "a stopped",
        "b leads",
        "b stopped",
    ]


@pytest.mark.embedded_only("simulated time: the timestamps of two runs are compared")
def test_failover_timestamps_are_the_same_on_every_run(wait_for: Callable[..., Any]) -> None:
    from kube_runtime.envtest.cluster import EmbeddedCluster

    def run() -> dict[str, Any]:
        sim = clock.SimClock()
        with sim.activate():
            cluster = EmbeddedCluster(pod_ready_after=0.02, clock=sim)
            cluster.start()
            try:
                with cluster.client() as client:
                    client.create(
                        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ha"}}
                    )
                    return _failover(client, "ha", wait_for)
            finally:
                cluster.stop()

    first, second = run(), run()
    assert first["spec"]["renewTime"] == second["spec"]["renewTime"]
    assert first["spec"]["acquireTime"] == second["spec"]["acquireTime"]
    assert first["last_renewal"]["renewTime"] == second["last_renewal"]["renewTime"]
    assert first["timeline"] == second["timeline"]
    assert (first["died"], first["took_over"]) == (second["died"], second["took_over"])
    # Virtual timestamps: the simulation starts at 2026-01-01T00:00:00Z.
    assert first["spec"]["acquireTime"].startswith("2026-01-01T00:00:")
