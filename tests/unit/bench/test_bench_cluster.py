"""The server benchmarks' cluster (bench.embedded_server.bench_cluster) runs nothing beside the
API server: no kubelet and no Deployment/ReplicaSet controllers, whose pod informer would read
every measured watch event a second time on the benchmark's GIL (F1 ran ~3x slower with it)."""

from __future__ import annotations

import threading

from bench.embedded_server import bench_cluster


def test_bench_cluster_runs_no_kubelet_and_no_workload_controllers() -> None:
    # Other tests in this worker may hold a session cluster with controllers running, so only
    # the threads this cluster starts are looked at.
    before = set(threading.enumerate())
    with bench_cluster() as cluster:
        assert cluster.kubelet is None
        assert cluster.controllers is None
        started = {t.name for t in threading.enumerate() if t not in before}
        assert started, "the cluster started no threads: the check below would prove nothing"
        assert "embedded-controllers" not in started
        assert not any(name.startswith("deployment-worker") for name in started)
