"""Steady state: a converged controller's informer resync reconciles everything, with no request.

"Reads from the cache, writes to the API" (DESIGN.md): once every object is converged, a full
resync must re-run every reconcile without a single API request. The same check runs at
scale in ``python -m bench steady``.

On the embedded backend it runs on simulated time (``docs/simtime.md``) on a cluster of its own
(the resync period is virtual); it needs the embedded server's request log, so the real backend
skips it.
"""

from __future__ import annotations

import threading

import pytest

from kube_runtime import Builder, Manager, NotFound, Request, clock, kinds
from kube_runtime.envtest.managers import running
from kube_runtime.ownership import is_controlled_by, set_controller_reference
from kube_runtime.predicates import label_selector
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    simulated_client,
    simulated_namespace,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of the test's own

COUNT = 50
RESYNC_PERIOD = 1.0


class Mirror:
    """Keep ``NAME-mirror`` (owned by NAME, same data) for every ``role=source`` ConfigMap."""

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.clock = manager.clock
        self.lock = threading.Lock()
        self.started: list[tuple[float, str]] = []
        self.writes = 0
        self.in_flight = 0

    def reconcile(self, request: Request) -> None:
        with self.lock:
            self.started.append((self.clock.monotonic(), request.name))
            self.in_flight += 1
        try:
            self._reconcile(request)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _reconcile(self, request: Request) -> None:
        try:
            source = self.client.get(kinds.ConfigMap, request.name, request.namespace)
        except NotFound:
            return
        name = f"{request.name}-mirror"
        try:
            mirror = self.client.get(kinds.ConfigMap, name, request.namespace)
        except NotFound:
            mirror = None
        data = source.get("data") or {}
        if mirror is None:
            meta = {"name": name, "namespace": request.namespace, "labels": {"role": "mirror"}}
            new = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
            with self.lock:
                self.writes += 1
            self.client.create(set_controller_reference(source, new))
        elif (mirror.get("data") or {}) != data:
            with self.lock:
                self.writes += 1
            self.client.update({**mirror, "data": data})

    def names_since(self, since: float) -> set[str]:
        with self.lock:
            return {name for at, name in self.started if at >= since}


def test_resync_of_converged_objects_reconciles_all_without_requests(
    sim_cluster, client, namespace, wait_for
) -> None:
    sources = [f"cm-{i:03d}" for i in range(COUNT)]
    for i, name in enumerate(sources):
        meta = {"name": name, "labels": {"role": "source"}}
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"i": str(i)}},
            namespace=namespace,
        )
    manager = Manager(
        client,
        namespace=namespace,
        resync_period=RESYNC_PERIOD,
        metrics_bind_address="0",
        health_probe_bind_address="0",
    )
    rec = Mirror(manager)
    controller = (
        Builder(manager)
        .named(f"mirror-{namespace}")
        .for_(kinds.ConfigMap, label_selector("role=source"))
        .owns(kinds.ConfigMap)
        .complete(rec)
    )

    def converged() -> bool:
        mirrors = manager.cache.list(kinds.ConfigMap, namespace, label_selector="role=mirror")
        return len(mirrors) == COUNT and len(controller.queue) == 0 and rec.in_flight == 0

    api = sim_cluster.api
    with running(manager) as runner:
        wait_for(converged, 30, message=f"{COUNT} mirrors created and the queue idle")
        assert rec.writes == COUNT
        for name in sources:
            mirror = client.get(kinds.ConfigMap, f"{name}-mirror", namespace)
            source = client.get(kinds.ConfigMap, name, namespace)
            assert is_controlled_by(mirror, source) and mirror["data"] == source["data"]

        api.records.clear()
        api.record_requests = True
        try:
            mark = clock.current().monotonic()
            wait_for(
                lambda: rec.names_since(mark) >= set(sources),
                10 * RESYNC_PERIOD + 20,
                message="every source reconciled again by a resync",
            )
            wait_for(
                lambda: len(controller.queue) == 0 and rec.in_flight == 0,
                10,
                message="the resync's reconciles to finish",
            )
        finally:
            api.record_requests = False
        ours = [r for r in api.records if f"/namespaces/{namespace}/" in r.resource]
        assert ours == [], f"a converged resync made API requests: {ours[:5]}"
        assert rec.writes == COUNT  # nothing written again
        assert runner.error is None
