"""Smoke test of the real backend: etcd + kube-apiserver + kube-controller-manager 1.20 start,
serve, run pods through the client-based simulated kubelet, delete namespaces, and stop.

Skipped (with the reason) when the binaries are not cached (``scripts/real-apiserver.sh``), and
on the embedded backend: it is the real backend's own smoke test, run by ``make test-real``
(which builds the binaries first), not by ``make test`` (where it would run only on a machine
that happened to have them cached).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kube_runtime.client import Client, NotFound
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.plugin import backend_of
from kube_runtime.envtest.real import RealCluster, missing_binaries

pytestmark = pytest.mark.skipif(
    bool(missing_binaries()),
    reason="real kube-apiserver not cached: run scripts/real-apiserver.sh",
)


def _ready(pod: dict) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


@pytest.mark.slow
def test_real_cluster_starts_serves_and_stops(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend_of(request.config) != "real":
        pytest.skip("the real backend's smoke test: run by `make test-real`")
    cluster = RealCluster(pod_ready_after=0.01)
    with cluster:
        path = cluster.write_kubeconfig(tmp_path / "kubeconfig")
        with Client.from_kubeconfig(path) as c:
            assert c.get_path("/version")["gitVersion"].startswith("v1.20.")
            c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "smoke"}})
            c.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "smoke"},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
                }
            )
            pod = wait_for(
                lambda: _ready(p := c.get("v1/Pod", "p", "smoke")) and p,
                timeout=30,
                message="pod ready through the simulated kubelet",
            )
            assert pod["spec"]["nodeName"] == cluster.kubelet.node_name
            assert pod["status"]["phase"] == "Running"
            c.delete("v1/Namespace", "smoke")

            def namespace_gone() -> bool:
                try:
                    c.get("v1/Namespace", "smoke")
                except NotFound:
                    return True
                return False

            wait_for(namespace_gone, timeout=60, message="namespace controller deleted smoke")
        processes = [p.proc for p in cluster._processes]
    assert processes and all(p.poll() is not None for p in processes)
