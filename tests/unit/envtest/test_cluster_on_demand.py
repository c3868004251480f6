"""EmbeddedCluster(deployments="on-demand"): the bundled Deployment and ReplicaSet controllers
start with the first Deployment or ReplicaSet stored, not at start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kube_runtime import clock
from kube_runtime.envtest.cluster import ON_DEMAND, EmbeddedCluster
from kube_runtime.envtest.waiting import wait_for

LABELS = {"app": "web"}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": LABELS},
        "template": {
            "metadata": {"labels": LABELS},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    },
}


def _cluster(**options: Any) -> EmbeddedCluster:
    return EmbeddedCluster(pod_ready_after=0.01, clock=clock.REAL, **options)


def test_the_controllers_start_with_the_first_deployment_and_run_it() -> None:
    with _cluster(deployments=ON_DEMAND) as cluster:
        assert cluster.controllers is None  # nothing of theirs stored: not started
        with cluster.client() as c:
            c.create({**DEPLOYMENT, "metadata": {"name": "pause", "namespace": "default"}})
            c.create(DEPLOYMENT)
            wait_for(lambda: cluster.controllers is not None, timeout=30)
            wait_for(
                lambda: (
                    c.get("apps/v1/Deployment", "web", "default")
                    .get("status", {})
                    .get("availableReplicas")
                    == 1
                ),
                timeout=30,
            )
            replica_sets = c.list("apps/v1/ReplicaSet", namespace="default")
            assert len(replica_sets["items"]) == 2  # one per Deployment, by one start
    assert cluster.controllers is None  # stopped with the cluster


def test_a_cluster_with_no_deployment_never_starts_them() -> None:
    cluster = _cluster(deployments=ON_DEMAND)
    with cluster:
        cluster.store.create(
            cluster.resource("", "configmaps"), "default", {"metadata": {"name": "x"}}
        )
        assert cluster.controllers is None
    assert cluster._controllers_thread is None
    assert cluster.store.try_get(cluster.resource("", "configmaps"), "default", "x") is not None


def test_a_stored_deployment_starts_them_at_start(tmp_path: Path) -> None:
    with _cluster(deployments=False, data_dir=tmp_path) as first, first.client() as c:
        c.create(DEPLOYMENT)
    with _cluster(deployments=ON_DEMAND, data_dir=tmp_path) as cluster:
        assert cluster.controllers is not None  # started (and waited for) by start()
        with cluster.client() as c:
            wait_for(
                lambda: len(c.list("apps/v1/ReplicaSet", namespace="default")["items"]) == 1,
                timeout=30,
            )


def test_an_unknown_deployments_value_is_refused() -> None:
    with pytest.raises(ValueError, match="on-demand"):
        _cluster(deployments="lazy")
