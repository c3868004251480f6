"""`make run`'s demo and `kube-runtime run statefulset`, end to end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from kube_runtime_demo.demo import run_demo

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_demo_converges_with_the_exact_upstream_order(capsys) -> None:
    assert run_demo() == 0
    out = capsys.readouterr().out
    expected = (
        "create web-0, create web-1, create web-2, "  # OrderedReady scale-up
        "delete web-2, create web-2, delete web-1, create web-1, delete web-0, create web-0, "  # rollout
        "delete web-2, delete web-1"  # scale-down, highest ordinal first
    )
    assert f"pod operations seen by a watch: {expected}\n" in out
    assert "PVCs (kept after scale-down): data-web-0, data-web-1, data-web-2" in out
    assert "revisions: web-" in out and "(2 kept)" in out
    assert "CloneSet in-place update: 3 pods kept their names, UIDs and IPs" in out
    assert (
        "enhanced StatefulSet: in place: 3 pods kept their names and UIDs, restarts [1, 1, 1]; "
        "teardown deleted db-2, db-1, db-0 before the set"
    ) in out
    assert "demo converged" in out


def test_run_statefulset_against_a_cluster(client, kubeconfig, namespace, wait_for) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kube_runtime.cli", "run", "statefulset", "cloneset",
         "--install-crds", "--no-install-webhooks", "--kubeconfig", str(kubeconfig),
         "--namespace", namespace,
         "--metrics-port", "0", "--health-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        client.create(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "cli", "namespace": namespace},
                "spec": {
                    "serviceName": "cli",
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "cli"}},
                    "template": {
                        "metadata": {"labels": {"app": "cli"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                    },
                },
            }
        )

        wait_for(
            lambda: client.get("apiextensions.k8s.io/v1/CustomResourceDefinition",
                               "clonesets.apps.kube-runtime.io"),
            timeout=30, message="--install-crds installs the CloneSet CRD",
        )  # fmt: skip
        cloneset = yaml.safe_load((EXAMPLES / "cloneset.yaml").read_text())
        wait_for(lambda: client.create(cloneset, namespace=namespace), timeout=10)

        def ready(kind: str, name: str) -> bool:
            status = client.get(kind, name, namespace).get("status") or {}
            return status.get("readyReplicas") == status.get("replicas") > 0

        wait_for(lambda: ready("apps/v1/StatefulSet", "cli"), timeout=30, message="set converges")
        wait_for(
            lambda: ready("apps.kube-runtime.io/v1alpha1/CloneSet", "cache"),
            timeout=30, message="CloneSet converges",
        )  # fmt: skip
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "controller statefulset: stopped" in out and "manager: stopped" in out  # graceful


def test_run_rejects_an_unknown_controller(capsys) -> None:
    """In-process (the command's main, as the codegen test below): a new interpreter added
    ~1 s of imports to a check of one message."""
    from kube_runtime.cli import main

    assert main(["run", "nosuch"]) == 2
    assert "no controller named 'nosuch'" in capsys.readouterr().err


def test_kube_runtime_codegen_is_the_code_generator(tmp_path) -> None:
    from kube_runtime.cli import main

    crd = Path(__file__).resolve().parents[2] / "controllers" / "cloneset" / "crd.yaml"
    out = tmp_path / "models.py"
    assert main(["codegen", str(crd), "-o", str(out)]) == 0
    assert "class CloneSet(" in out.read_text()
    assert main(["codegen", str(crd), "-o", str(out), "--check"]) == 0
    out.write_text(out.read_text() + "# edited\n")
    assert main(["codegen", str(crd), "-o", str(out), "--check"]) == 1


_USER_CONTROLLER = '''
"""A user's controller: stamps every ConfigMap it sees with an annotation."""

from kube_runtime import Builder, Request, kinds


def setup(manager, *, max_concurrent_reconciles):
    def reconcile(request: Request):
        cm = manager.client.get(kinds.ConfigMap, request.name, request.namespace)
        if "stamped" not in (cm["metadata"].get("annotations") or {}):
            manager.client.patch(
                kinds.ConfigMap, request.name,
                {"metadata": {"annotations": {"stamped": "by-my-controller"}}},
                namespace=request.namespace,
            )

    Builder(manager).named("stamper").for_(kinds.ConfigMap).with_options(
        max_concurrent_reconciles=max_concurrent_reconciles
    ).complete(reconcile)
'''


def test_run_finds_a_users_controller_by_entry_point(
    client, kubeconfig, namespace, wait_for, tmp_path
) -> None:
    # An installed distribution is a package plus a .dist-info with its entry points.
    (tmp_path / "my_operator.py").write_text(_USER_CONTROLLER)
    info = tmp_path / "my_operator-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-operator\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[kube_runtime.controllers]\nmy-controller = my_operator\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kube_runtime.cli", "run", "my-controller",
         "--kubeconfig", str(kubeconfig), "--namespace", namespace,
         "--metrics-port", "0", "--health-port", "0", "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
            namespace=namespace,
        )
        wait_for(
            lambda: (client.get("v1/ConfigMap", "x", namespace)["metadata"].get("annotations")
                     or {}).get("stamped") == "by-my-controller",
            timeout=30, message="the user's controller reconciled the ConfigMap",
        )  # fmt: skip
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "controller stamper: stopped" in out
