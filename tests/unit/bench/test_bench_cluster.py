"""The server benchmarks' cluster (bench.embedded_server.bench_cluster) runs nothing beside the
API server: no kubelet and no Deployment/ReplicaSet controllers, whose pod informer would read
every measured watch event a second time on the benchmark's GIL (F1 ran ~3x slower with it)."""

from __future__ import annotations

import threading

from bench.embedded_server import bench_cluster


def test_bench_cluster_runs_no_kubelet_and_no_workload_controllers() -> None:
    with bench_cluster() as cluster:
        assert cluster.kubelet is None
        assert cluster.controllers is None
        names = {t.name for t in threading.enumerate()}
        assert "embedded-controllers" not in names
