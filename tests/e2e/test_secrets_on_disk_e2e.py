"""Secrets on disk (issue 18 part 3): the TLS directory with the server's private key is removed
on stop and on SIGTERM, and `kube-runtime cluster` writes its kubeconfig 0600."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kube_runtime.envtest.cluster import EmbeddedCluster


def test_stopping_a_cluster_removes_its_tls_directory() -> None:
    cluster = EmbeddedCluster(token=EmbeddedCluster.new_token(), kubelet=False)
    assert cluster.certs is not None
    directory = cluster.certs.directory
    with cluster:
        assert (directory / "server.key").exists()
    assert not directory.exists()


def test_sigterm_of_kube_runtime_cluster_leaves_no_tls_directory(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    kubeconfig = tmp_path / "kubeconfig"
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kube_runtime.cli",
            "cluster",
            "--port",
            "0",
            "--kubeconfig",
            str(kubeconfig),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "cluster did not start"
            time.sleep(0.05)
        assert [p.name.startswith("kube-runtime-tls-") for p in temp.iterdir()] == [True]
        assert oct(kubeconfig.stat().st_mode & 0o777) == oct(0o600)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(temp.iterdir()) == []
