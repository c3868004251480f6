"""The RollingUpdate strategy (upstream ``pkg/controller/deployment/rolling.go``).

A step creates the new ReplicaSet when missing, then either grows it (to what
``spec.replicas + maxSurge`` leaves room for, :func:`~.util.new_rs_new_replicas`) or shrinks
the old ones: first their pods that are not available (oldest ReplicaSet first), then
available ones while more than ``spec.replicas - maxUnavailable`` pods stay available. A
complete rollout cleans up the history. Every step ends with the rollout's status
(:func:`~.progress.sync_rollout_status`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from controllers.deployment import util
from controllers.deployment.progress import sync_rollout_status
from controllers.deployment.sync import DeploymentControl
from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj

__all__ = [
    "InvalidScaleDown",
    "cleanup_unhealthy_sizes",
    "max_scaled_down",
    "rollout_rolling",
    "scale_down_sizes",
]


def max_scaled_down(all_rss: Sequence[Obj], new_rs: Obj, d: Obj) -> int:
    """How many old replicas may go now: all replicas less ``spec.replicas - maxUnavailable``
    less the new ReplicaSet's unavailable ones."""
    all_pods = sum(util.spec_replicas(rs) for rs in all_rss)
    min_available = util.spec_replicas(d) - util.max_unavailable(d)
    new_unavailable = util.spec_replicas(new_rs) - util.available_replicas(new_rs)
    return all_pods - min_available - new_unavailable


class InvalidScaleDown(RuntimeError):
    """A scale-down that would grow a ReplicaSet: its status counts more available replicas
    than its spec asks for (a status not yet updated after a scale-down). Upstream's
    ``cleanupUnhealthyReplicas`` refuses it with an error, so the sync is retried (rate
    limited) once the ReplicaSet's status has caught up; it writes nothing for it."""


def cleanup_unhealthy_sizes(old_rss: Sequence[Obj], limit: int) -> list[tuple[Obj, int]]:
    """The new sizes that take up to ``limit`` unavailable replicas off the old
    ReplicaSets, oldest first (upstream ``cleanupUnhealthyReplicas``). A ReplicaSet whose
    status counts more available replicas than its spec gets a size above its own: it is the
    last entry (upstream stops there with an error, :class:`InvalidScaleDown`)."""
    return _oldest_first(
        old_rss, limit, lambda rs, replicas: replicas - util.available_replicas(rs)
    )


def scale_down_sizes(
    all_rss: Sequence[Obj], old_rss: Sequence[Obj], d: Obj
) -> list[tuple[Obj, int]]:
    """The new sizes of old ReplicaSets that keep ``spec.replicas - maxUnavailable`` pods
    available, oldest first (upstream ``scaleDownOldReplicaSetsForRollingUpdate``)."""
    min_available = util.spec_replicas(d) - util.max_unavailable(d)
    available = sum(util.available_replicas(rs) for rs in all_rss)
    if available <= min_available:
        return []
    return _oldest_first(old_rss, available - min_available, lambda rs, replicas: replicas)


def _oldest_first(
    old_rss: Sequence[Obj], budget: int, removable: Callable[[Obj, int], int]
) -> list[tuple[Obj, int]]:
    """New sizes that take up to ``budget`` replicas off ``old_rss``, oldest first, each
    ReplicaSet giving up at most ``removable(rs, spec.replicas)`` (those with no replicas or
    nothing removable are skipped). A negative ``removable`` (more available than wanted) is
    the last entry, a size above the ReplicaSet's own."""
    sizes = []
    total = 0
    for rs in util.sort_by_creation(old_rss):
        if total >= budget:
            break
        replicas = util.spec_replicas(rs)
        room = removable(rs, replicas) if replicas else 0
        if room == 0:
            continue
        down = min(budget - total, room)
        sizes.append((rs, replicas - down))
        if down < 0:
            break
        total += down
    return sizes


def _reconcile_new_replica_set(
    control: DeploymentControl, all_rss: Sequence[Obj], new_rs: Obj, d: Obj
) -> bool:
    desired = util.spec_replicas(d)
    if util.spec_replicas(new_rs) == desired:
        return False
    if util.spec_replicas(new_rs) > desired:
        return control.scale_replica_set_and_record_event(new_rs, desired, d)[0]
    target = util.new_rs_new_replicas(d, all_rss, new_rs)
    return control.scale_replica_set_and_record_event(new_rs, target, d)[0]


def _reconcile_old_replica_sets(
    control: DeploymentControl,
    all_rss: Sequence[Obj],
    old_rss: Sequence[Obj],
    new_rs: Obj,
    d: Obj,
) -> bool:
    if sum(util.spec_replicas(rs) for rs in old_rss) == 0:
        return False
    limit = max_scaled_down(all_rss, new_rs, d)
    if limit <= 0:
        return False
    old = list(util.sort_by_creation(old_rss))
    cleaned = 0
    for rs, size in cleanup_unhealthy_sizes(old, limit):
        if size > util.spec_replicas(rs):
            raise InvalidScaleDown(
                "when cleaning up unhealthy replicas, got invalid request to scale down "
                f"{meta.namespace(rs)}/{meta.name(rs)} {util.spec_replicas(rs)} -> {size}"
            )
        cleaned += util.spec_replicas(rs) - size
        _, written = control.scale_replica_set_and_record_event(rs, size, d)
        old = [written if r is rs else r for r in old]
    scaled = 0
    for rs, size in scale_down_sizes([*old, new_rs], old, d):
        scaled += util.spec_replicas(rs) - size
        control.scale_replica_set_and_record_event(rs, size, d)
    return cleaned + scaled > 0


def rollout_rolling(
    control: DeploymentControl, d: dict[str, Any], rs_list: Sequence[Obj]
) -> float | None:
    """One RollingUpdate step (see the module docstring); the seconds after which to check
    the progress deadline again, or None."""
    new_rs, old_rss = control.get_all_replica_sets_and_sync_revision(d, rs_list, True)
    assert new_rs is not None  # created when missing
    all_rss = [*old_rss, new_rs]
    if _reconcile_new_replica_set(control, all_rss, new_rs, d):
        return sync_rollout_status(control, all_rss, new_rs, d)
    if _reconcile_old_replica_sets(control, all_rss, util.active_replica_sets(old_rss), new_rs, d):
        return sync_rollout_status(control, all_rss, new_rs, d)
    if util.deployment_complete(d, d.get("status") or {}):
        control.cleanup_deployment(old_rss, d)
    return sync_rollout_status(control, all_rss, new_rs, d)
