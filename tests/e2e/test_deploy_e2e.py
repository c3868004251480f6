"""deploy/: the kustomize bases render with both kubectls, pass server-side dry-run on
kube-apiserver 1.20, and the manager's in-cluster configuration works against a cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from kube_runtime import kinds
from kube_runtime.builder import Builder
from kube_runtime.client import AlreadyExists, Client
from kube_runtime.envtest.managers import running
from kube_runtime.manager import Manager
from kube_runtime.reconcile import Request

ROOT = Path(__file__).resolve().parents[2]
_OLD = Path(
    os.environ.get(
        "KUBECTL_OLD", Path.home() / ".cache/kube-runtime/kubectl-debian/usr/bin/kubectl"
    )
)
KUBECTLS = {"current": shutil.which("kubectl"), "debian-1.20": str(_OLD) if _OLD.exists() else None}


def _render(kubectl: str, directory: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [kubectl, "kustomize", str(ROOT / directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        out.setdefault(obj["kind"], []).append(obj)
    return out


@pytest.mark.parametrize("which", sorted(KUBECTLS))
@pytest.mark.parametrize("directory", ["deploy", "deploy/k8s-1.20"])
def test_the_bases_render_a_complete_restricted_manager(which: str, directory: str) -> None:
    kubectl = KUBECTLS[which]
    if kubectl is None:
        pytest.skip(f"no {which} kubectl here (make kubectl)")
    objects = _by_kind(_render(kubectl, directory))
    assert {
        "Namespace",
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
    } <= set(objects)
    assert len(objects["CustomResourceDefinition"]) == 2
    pdb = objects["PodDisruptionBudget"][0]
    assert pdb["apiVersion"] == ("policy/v1beta1" if directory.endswith("1.20") else "policy/v1")
    deployment = objects["Deployment"][0]
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert spec["replicas"] == 2
    assert container["args"][:3] == ["run", "statefulset", "cloneset"]
    assert "--leader-elect" in container["args"]
    assert pod["serviceAccountName"] == objects["ServiceAccount"][0]["metadata"]["name"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["requests"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    service = objects["Service"][0]
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"
    binding = objects["ClusterRoleBinding"][0]
    assert binding["subjects"][0]["name"] == pod["serviceAccountName"]


def test_the_rendered_objects_pass_server_side_dry_run(client: Client) -> None:
    kubectl = KUBECTLS["current"] or KUBECTLS["debian-1.20"]
    if kubectl is None:
        pytest.skip("no kubectl here (make kubectl)")
    objects = _render(kubectl, "deploy/k8s-1.20")
    namespace = next(o for o in objects if o["kind"] == "Namespace")
    try:  # namespaced objects are dry-run into a namespace that exists
        client.create(namespace)
    except AlreadyExists:
        pass
    for obj in objects:
        if obj["kind"] == "Namespace":
            continue
        # `kubectl apply --server-side --dry-run=server`: fine whether or not it exists.
        answer = client.apply(obj, field_manager="deploy-dry-run", dry_run=True)
        assert answer["metadata"]["name"] == obj["metadata"]["name"], obj["kind"]


def test_in_cluster_configuration_runs_a_manager(
    embedded_cluster: Any,
    client: Client,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    wait_for: Any,
) -> None:
    """KUBERNETES_SERVICE_HOST/PORT plus the mounted token and CA, as in a pod."""
    url = embedded_cluster.url
    host, _, port = url.removeprefix("https://").rpartition(":")
    assert url.startswith("https://"), "in-cluster configuration is TLS only"
    (tmp_path / "token").write_text(embedded_cluster.token)
    (tmp_path / "ca.crt").write_bytes(Path(embedded_cluster.certs.ca_file).read_bytes())
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    in_cluster = Client.in_cluster(
        token_path=str(tmp_path / "token"), ca_path=str(tmp_path / "ca.crt")
    )
    seen: list[str] = []
    done = threading.Event()

    def reconcile(request: Request) -> None:
        if request.namespace == namespace:
            seen.append(request.name)
            done.set()

    manager = Manager(
        in_cluster, namespace=namespace, metrics_bind_address="0", health_probe_bind_address="0"
    )
    Builder(manager).for_(kinds.ConfigMap).complete(reconcile)
    name = f"cm-{uuid.uuid4().hex[:6]}"
    with running(manager):
        client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace},
            }
        )
        wait_for(done.is_set, 30, message="reconciled through the in-cluster client")
    assert name in seen
