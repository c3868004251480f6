"""The Recreate strategy (upstream ``pkg/controller/deployment/recreate.go``).

A step scales every old ReplicaSet to 0 and waits until none of their pods is left (a pod
that is not Succeeded or Failed counts, whatever its ReplicaSet's status says); only then is
the new ReplicaSet created (when missing) and scaled to ``spec.replicas``. A complete rollout
cleans up the history; every step ends with the rollout's status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controllers.deployment import util
from controllers.deployment.progress import sync_rollout_status
from controllers.deployment.sync import DeploymentControl
from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj

__all__ = ["old_pods_running", "rollout_recreate"]


def old_pods_running(
    new_rs: Obj | None, old_rss: Sequence[Obj], pod_map: Mapping[str, Sequence[Obj]]
) -> bool:
    """Whether an old ReplicaSet reports pods, or a pod of another ReplicaSet than the new
    one (``pod_map``: pods by their ReplicaSet's uid) is neither Succeeded nor Failed."""
    if sum(util.status_replicas(rs) for rs in old_rss) > 0:
        return True
    new_uid = meta.uid(new_rs) if new_rs is not None else None
    for uid, pods in pod_map.items():
        if uid == new_uid:
            continue
        for pod in pods:
            if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                return True
    return False


def rollout_recreate(
    control: DeploymentControl,
    d: dict[str, Any],
    rs_list: Sequence[Obj],
    pod_map: Mapping[str, Sequence[Obj]],
) -> float | None:
    """One Recreate step (see the module docstring); the seconds after which to check the
    progress deadline again, or None."""
    new_rs, old_rss = control.get_all_replica_sets_and_sync_revision(d, rs_list, False)
    all_rss: list[Obj | None] = [*old_rss, new_rs]
    scaled_down = False
    for rs in util.active_replica_sets(old_rss):
        scaled, _ = control.scale_replica_set_and_record_event(rs, 0, d)
        scaled_down = scaled_down or scaled
    if scaled_down:
        return sync_rollout_status(control, all_rss, new_rs, d)
    if old_pods_running(new_rs, old_rss, pod_map):
        return sync_rollout_status(control, all_rss, new_rs, d)
    if new_rs is None:
        new_rs, old_rss = control.get_all_replica_sets_and_sync_revision(d, rs_list, True)
        all_rss = [*old_rss, new_rs]
    assert new_rs is not None
    control.scale_replica_set_and_record_event(new_rs, util.spec_replicas(d), d)
    if util.deployment_complete(d, d.get("status") or {}):
        control.cleanup_deployment(old_rss, d)
    return sync_rollout_status(control, all_rss, new_rs, d)
