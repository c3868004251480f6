"""The invariants `make chaos` checks on the commit stream (bench/chaos.py CommitWatcher)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from bench.chaos import INSTANCE_LABEL, CommitWatcher

NS = "chaos-1"


def event(type_: str, plural: str, obj: dict[str, Any]) -> Any:
    return SimpleNamespace(
        type=type_, info=SimpleNamespace(plural=plural), new=SimpleNamespace(obj=obj)
    )


def pod(name: str, *, ready: bool = True, deleting: bool = False, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-25T00:00:00Z"
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    return {"metadata": meta, "status": {"phase": "Running", "conditions": [condition]}}


def claim(name: str, instance: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": NS, "labels": {INSTANCE_LABEL: instance}}}


def armed(replicas: int = 3, **kw: Any) -> CommitWatcher:
    w = CommitWatcher(NS, replicas, 1, **kw)
    for i in range(replicas):
        w(event("ADDED", "pods", pod(f"web-{i}", **{"apps.kubernetes.io/pod-index": str(i)})))
    w.armed = True
    return w


def test_one_unready_pod_is_within_the_bound_two_are_not():
    w = armed()
    w(event("MODIFIED", "pods", pod("web-0", ready=False)))
    assert w.violations == {} and w.max_seen_unavailable == 1
    w(event("MODIFIED", "pods", pod("web-1", deleting=True)))
    assert w.violations == {"unavailable > bound": 1} and w.max_seen_unavailable == 2


def test_two_pods_of_one_instance_id_are_duplicates():
    w = armed(2)
    w(event("ADDED", "pods", pod("web-a", **{INSTANCE_LABEL: "a"})))
    w(event("ADDED", "pods", pod("web-b", **{INSTANCE_LABEL: "a"})))
    assert w.violations.get("duplicate pods") == 1


def test_a_pod_outside_the_ordinals_is_a_duplicate():
    w = armed(2)
    w(event("ADDED", "pods", pod("web-2", **{"apps.kubernetes.io/pod-index": "2"})))
    assert w.violations.get("duplicate pods") == 1


def test_a_deleted_claim_is_a_violation_unless_its_pod_went_first_under_a_recreate_policy():
    strict = armed(1)
    strict(event("DELETED", "persistentvolumeclaims", claim("data-web-a", "a")))
    assert strict.violations == {"PVC deleted": 1}

    recreate = armed(1, claims_follow_pods=True)
    recreate(event("ADDED", "pods", pod("web-a", **{INSTANCE_LABEL: "a"})))
    recreate(event("DELETED", "persistentvolumeclaims", claim("data-web-a", "a")))
    assert recreate.violations.get("PVC deleted") == 1  # its pod still lives
    recreate(event("MODIFIED", "pods", pod("web-a", deleting=True, **{INSTANCE_LABEL: "a"})))
    recreate(event("DELETED", "persistentvolumeclaims", claim("data-web-a", "a")))
    assert recreate.violations.get("PVC deleted") == 1  # no new violation


def test_nothing_is_checked_before_the_rollout_or_in_other_namespaces():
    w = CommitWatcher(NS, 3, 1)
    w(event("ADDED", "pods", pod("web-0", ready=False)))
    w(event("DELETED", "persistentvolumeclaims", claim("data-web-0", "x")))
    other = pod("web-9", ready=False)
    other["metadata"]["namespace"] = "elsewhere"
    w.armed = True
    w(event("ADDED", "pods", other))
    assert w.violations == {}
