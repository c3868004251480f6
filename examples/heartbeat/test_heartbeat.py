"""The heartbeat operator under simulated time: a one-hour requeue and leader election with
client-go's timings (15 s lease, 10 s renew deadline, 2 s retry): an hour of virtual time, with
its 1,800 lease renewals (each an HTTP round trip through the embedded server, about 0.2 ms
of CPU for the request alone and 0.35-0.45 ms with the watch event and the thread hand-offs,
which bound the test's wall time: 0.6-1.0 s for the hour on the project's 2-vCPU VM, whose
speed swings with its host, the simulation running on one CPU, plus 0.1-0.2 s of set-up),
and the waits read the manager's cache once a virtual minute.

``@pytest.mark.simtime`` runs the test and its fixtures on a simulated clock: ``sim_client``
talks to an embedded cluster of the test's own on that clock, the manager built inside the
test takes it too, and ``wait_for`` waits in virtual time. With ``--backend real`` the test
runs on kube-apiserver in real time (and so would take its hour: it is skipped there).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from kube_runtime import Manager, kinds
from kube_runtime.client import Client, Reader
from kube_runtime.envtest import running

from .operator import BEATS, LAST, setup


def _beats(client: Reader, namespace: str) -> tuple[int, str]:
    cm = client.get(kinds.ConfigMap, "pulse", namespace)
    annotations = cm["metadata"].get("annotations") or {}
    return int(annotations.get(BEATS, "0")), annotations.get(LAST, "")


@pytest.mark.simtime
@pytest.mark.embedded_only("an hour of real time on a real API server")
def test_beats_once_an_hour_under_leader_election(
    sim_client: Client, sim_namespace: str, wait_for: Callable[..., Any]
) -> None:
    manager = Manager(
        sim_client,
        namespace=sim_namespace,
        metrics_bind_address="0",
        leader_election=True,  # client-go's defaults: 15 s lease, 10 s renew, 2 s retry
        leader_election_id="heartbeat",
        leader_election_namespace=sim_namespace,
    )
    setup(manager)
    with running(manager):
        sim_client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "pulse",
                    "namespace": sim_namespace,
                    "labels": {"heartbeat": "on"},
                },
            }
        )
        # Read from the manager's cache: under simulation it is up to date whenever the
        # predicate is checked. The first wait checks at each move of the virtual time; the
        # hour-long one once a virtual minute (``every``): at each move it would wake the test
        # 1,800 times (the renewals every 2 s), about a tenth of the hour's CPU. The beat's
        # time is read from the annotation, so the check's granularity does not blur it.
        cache = manager.client
        wait_for(lambda: _beats(cache, sim_namespace)[0] >= 1, timeout=60)
        first = _beats(cache, sim_namespace)[1]
        wait_for(lambda: _beats(cache, sim_namespace)[0] >= 2, timeout=2 * 3600, every=60)
        beats, last = _beats(sim_client, sim_namespace)
    parse = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    # The next beat exactly an hour later, in virtual time.
    assert beats == 2
    assert (parse(last) - parse(first)).total_seconds() == 3600
