"""kube_runtime.workloads.pvc: what claim-per-pod controllers share (a claim from a template,
a pod's volumes from its claims); each controller's own half is in controllers.statefulset.pvc
and controllers.cloneset.pvc."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from kube_runtime.workloads.pvc import claim_from_template, pod_volumes_with_claims


def template(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    return {
        "metadata": meta,
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    }


def ref(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


# --- shared --------------------------------------------------------------------------------


def test_claim_from_template() -> None:
    workload = {
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "w", "tier": "x"}}},
    }
    source = template("data", {"tier": "db", "keep": "1"})
    claim = claim_from_template(source, "data-w-0", workload, {"extra": "e"})
    assert claim == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data-w-0",
            "namespace": "ns",
            "labels": {"tier": "x", "keep": "1", "app": "w", "extra": "e"},
        },
        "spec": source["spec"],
    }
    assert source["metadata"] == {"name": "data", "labels": {"tier": "db", "keep": "1"}}
    assert claim["spec"] is not source["spec"]


def test_pod_volumes_with_claims() -> None:
    claims = {"data": {"metadata": {"name": "data-w-0"}}}
    pod = {"spec": {"volumes": [{"name": "data", "emptyDir": {}}, {"name": "x", "emptyDir": {}}]}}
    assert pod_volumes_with_claims(claims, pod) == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-w-0"}},
        {"name": "x", "emptyDir": {}},
    ]


def test_importing_the_framework_module_loads_no_controller() -> None:
    code = (
        "import sys, kube_runtime.workloads.pvc; "
        "print(any(m.startswith('controllers') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
