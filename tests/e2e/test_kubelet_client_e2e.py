"""The client-based simulated kubelet (``kube_runtime.envtest.kubelet``) and ``pods/binding``.

The kubelet runs against a separate embedded cluster started without its own kubelet, so
everything it does goes through the HTTP API as it would against kube-apiserver.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client import Client, Conflict
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.kubelet import ClientKubelet, main


def _pod(name: str, image: str = "nginx:1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": image}], **spec},
    }


def _condition(pod: dict[str, Any], type_: str) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == type_:
            return str(c.get("status"))
    return None


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[tuple[Path, Client]]:
    """A cluster without kubelet, its kubeconfig and a client."""
    with EmbeddedCluster(kubelet=False, token=EmbeddedCluster.new_token()) as cluster:
        path = cluster.write_kubeconfig(tmp_path / "kubeconfig")
        with Client.from_kubeconfig(path) as c:
            yield path, c


def test_binding_subresource(bare: tuple[Path, Client]) -> None:
    _, c = bare
    c.create(_pod("p"))
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}}
    body["target"] = {"apiVersion": "v1", "kind": "Node", "name": "n1"}
    status = c.request("POST", "/api/v1/namespaces/default/pods/p/binding", body=body)
    assert status["status"] == "Success"
    pod = c.get("v1/Pod", "p", "default")
    assert pod["spec"]["nodeName"] == "n1"
    assert _condition(pod, "PodScheduled") == "True"
    with pytest.raises(Conflict, match="already assigned"):
        c.request("POST", "/api/v1/namespaces/default/pods/p/binding", body=body)
    resources = {r["name"]: r for r in c.get_path("/api/v1")["resources"]}
    assert resources["pods/binding"]["verbs"] == ["create"]


def test_client_kubelet_runs_restarts_and_deletes(bare: tuple[Path, Client]) -> None:
    path, c = bare
    kubelet = ClientKubelet.from_kubeconfig(path, ready_after=0.01, restart_delay=0.01)
    kubelet.start()
    try:
        node = wait_for(lambda: c.get("v1/Node", kubelet.node_name), message="node registered")
        assert _condition(node, "Ready") == "True"
        gate = [{"conditionType": "example.com/gate"}]
        c.create(_pod("p", readinessGates=gate))
        pod = wait_for(
            lambda: (
                (p := c.get("v1/Pod", "p", "default"))["status"].get("phase") == "Running" and p
            ),
            message="pod running",
        )
        assert pod["spec"]["nodeName"] == kubelet.node_name
        assert _condition(pod, "ContainersReady") == "True"
        assert _condition(pod, "Ready") == "False"  # the readiness gate is not True yet
        status = dict(pod["status"])
        status["conditions"] = [
            *status["conditions"],
            {"type": "example.com/gate", "status": "True"},
        ]
        c.update_status({**pod, "status": status})
        wait_for(lambda: _condition(c.get("v1/Pod", "p", "default"), "Ready") == "True")

        c.patch(
            "v1/Pod",
            "p",
            {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
            namespace="default",
            patch_type="strategic",
        )

        def restarted() -> bool:
            cs = c.get("v1/Pod", "p", "default")["status"]["containerStatuses"][0]
            return bool(cs["restartCount"] == 1 and cs["image"] == "nginx:2" and cs["ready"])

        wait_for(restarted, message="in-place restart with the new image")
        assert c.get("v1/Pod", "p", "default")["metadata"]["uid"] == pod["metadata"]["uid"]

        c.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": "default"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        )
        wait_for(
            lambda: (
                c.get("v1/PersistentVolumeClaim", "data", "default")["status"].get("phase")
                == "Bound"
            ),
            message="claim bound",
        )

        c.delete("v1/Pod", "p", "default")
        wait_for(lambda: not c.list("v1/Pod", "default")["items"], message="pod deleted")
    finally:
        kubelet.stop()


def test_kubelet_command_runs_until_stopped(bare: tuple[Path, Client]) -> None:
    path, c = bare
    stop = threading.Event()
    codes: list[int] = []
    runner = threading.Thread(
        target=lambda: codes.append(
            main(
                ["--kubeconfig", str(path), "--node-name", "cli-node", "--pod-ready-after", "0"],
                stop,
            )
        )
    )
    runner.start()
    try:
        wait_for(lambda: c.get("v1/Node", "cli-node"), message="node from the command")
        c.create(_pod("q"))
        wait_for(lambda: c.get("v1/Pod", "q", "default")["status"].get("phase") == "Running")
    finally:
        stop.set()
        runner.join(10)
    assert codes == [0]


def test_kube_runtime_kubelet_command_in_a_process(bare: tuple[Path, Client]) -> None:
    """``kube-runtime kubelet --kubeconfig PATH`` as users run it: a process of its own that
    schedules and starts pods, and exits 0 on SIGTERM."""
    path, c = bare
    proc = subprocess.Popen(
        [sys.executable, "-m", "kube_runtime.cli", "kubelet", "--kubeconfig", str(path),
         "--node-name", "proc-node", "--pod-ready-after", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: c.get("v1/Node", "proc-node"), timeout=30, message="node registered")
        c.create(_pod("r"))
        wait_for(
            lambda: _condition(c.get("v1/Pod", "r", "default"), "Ready") == "True",
            timeout=30,
            message="pod ready through the kubelet process",
        )
        assert c.get("v1/Pod", "r", "default")["spec"]["nodeName"] == "proc-node"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    assert "simulated kubelet running as node proc-node" in out
