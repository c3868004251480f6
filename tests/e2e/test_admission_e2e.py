"""kube-apiserver's default admission as the embedded cluster applies it (Priority,
DefaultTolerationSeconds, StorageObjectInUseProtection) and the pvc-protection controller that
releases claims; the same tests pass on the real backend (tests/e2e/test_differential_e2e.py
compares the details against kube-apiserver 1.20)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client

FINALIZER = "kubernetes.io/pvc-protection"


def _pod(name: str, namespace: str, *claims: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [{"name": "c", "image": "nginx:1"}],
            "volumes": [
                {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                for i, c in enumerate(claims)
            ],
            **spec,
        },
    }


def _claim(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def _gone(client: Client, kind: str, name: str, namespace: str | None = None) -> bool:
    try:
        client.get(kind, name, namespace)
    except ApiError as e:
        return e.code == 404
    return False


def test_pods_get_priority_and_default_tolerations(client: Client, namespace: str) -> None:
    created = client.create(_pod("p", namespace))
    spec = created["spec"]
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert spec["tolerations"] == [
        {
            "key": f"node.kubernetes.io/{taint}",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }
        for taint in ("not-ready", "unreachable")
    ]
    critical = client.create(_pod("q", namespace, priorityClassName="system-cluster-critical"))
    assert critical["spec"]["priority"] == 2000000000
    with pytest.raises(ApiError) as refused:
        client.create(_pod("r", namespace, priorityClassName="no-such-class"))
    assert refused.value.code == 403
    assert "no PriorityClass with name no-such-class was found" in str(refused.value)
    with pytest.raises(ApiError) as refused:
        client.create(_pod("s", namespace, priority=7))
    assert refused.value.code == 403


def test_claim_is_kept_while_a_scheduled_pod_uses_it(
    client: Client, namespace: str, wait_for: Callable[..., Any]
) -> None:
    claim = client.create(_claim("data", namespace))
    assert claim["metadata"]["finalizers"] == [FINALIZER]
    client.create(_pod("user", namespace, "data"))
    wait_for(
        lambda: client.get("v1/Pod", "user", namespace)["spec"].get("nodeName"),
        message="pod scheduled",
    )
    deleting = client.delete("v1/PersistentVolumeClaim", "data", namespace)
    assert deleting["metadata"]["deletionTimestamp"]
    assert deleting["metadata"]["finalizers"] == [FINALIZER]
    # An unused claim deleted afterwards goes: the controller has looked at both by then.
    client.create(_claim("marker", namespace))
    client.delete("v1/PersistentVolumeClaim", "marker", namespace)
    wait_for(lambda: _gone(client, "v1/PersistentVolumeClaim", "marker", namespace))
    held = client.get("v1/PersistentVolumeClaim", "data", namespace)
    assert held["metadata"]["finalizers"] == [FINALIZER]
    client.delete("v1/Pod", "user", namespace, grace_period_seconds=0)
    wait_for(
        lambda: _gone(client, "v1/PersistentVolumeClaim", "data", namespace),
        message="claim released once its pod is gone",
    )


def test_namespace_with_claims_in_use_is_deleted(
    client: Client, wait_for: Callable[..., Any]
) -> None:
    name = f"t-{uuid.uuid4().hex[:10]}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        client.create(_claim("data", name))
        client.create(_pod("user", name, "data"))
        wait_for(
            lambda: client.get("v1/Pod", "user", name)["spec"].get("nodeName"),
            message="pod scheduled",
        )
    finally:
        client.delete("v1/Namespace", name)
    wait_for(lambda: _gone(client, "v1/Namespace", name), timeout=60, message="namespace gone")
