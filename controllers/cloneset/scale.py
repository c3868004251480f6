"""Scaling a CloneSet (openkruise ``cloneset/sync/cloneset_scale.go`` and
``cloneset_sync_utils.go``): decisions only, every write goes through a
:class:`~controllers.cloneset.pod_control.PodControl`.

:func:`calculate_diffs` is upstream's ``calculateDiffsWithExpectation``: from the pods, the
partition, maxSurge and maxUnavailable it derives how many pods to create or delete (and how
many of them at the current, i.e. old, revision), how many ready pods may be deleted, and how
many pods to update. :class:`Scaler` acts on it in upstream's order: pods in
PreparingDelete that a scale-up wants back return to PreparingNormal (or Normal); missing pods are created (new
instance ids, or the ids of orphaned claims so those claims are reused) in slow-start batches
(1, 2, 4, …, each batch's creations concurrently) that stop after the first batch with an
error; pods already in PreparingDelete are deleted once
their hook is released; specified pods (``scaleStrategy.podsToDelete`` or the
``apps.kruise.io/specified-delete`` label) are deleted; surplus pods are deleted, chosen by
:func:`choose_pods_to_delete`. A pod goes with its claims; a hooked pod (``lifecycle.preDelete``)
moves to PreparingDelete instead. Ready pods are deleted only within the delete-ready limit.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from controllers.cloneset import core
from controllers.cloneset.core import CloneSetLike, CloneSetView
from controllers.cloneset.pod_control import PodControl, PodControlStep
from controllers.cloneset.pvc import available_instance_ids, claims_of_instance, instance_id
from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.batches import DEFAULT_LIMIT, slow_start_batch
from kube_runtime.workloads.lifecycle import marks_pod_not_ready
from kube_runtime.workloads.pods import sort_active_pods

__all__ = [
    "INITIAL_BATCH_SIZE",
    "ExpectationDiffs",
    "Scaler",
    "calculate_diffs",
    "choose_pods_to_delete",
    "slow_start_batch",
]


log = logging.getLogger(__name__)

INITIAL_BATCH_SIZE = 1


@dataclasses.dataclass
class ExpectationDiffs:
    """Upstream ``expectationDiffs`` (all counts non-negative except ``update_num``)."""

    scale_up_num: int = 0
    scale_up_num_old_revision: int = 0
    scale_down_num: int = 0
    scale_down_num_old_revision: int = 0
    scale_up_limit: int = 0
    delete_ready_limit: int = 0
    use_surge: int = 0
    use_surge_old_revision: int = 0
    update_num: int = 0
    """> 0: pods to move to the update revision; < 0: pods to move back (rollback)."""
    update_max_unavailable: int = 0


def calculate_diffs(
    cs: CloneSetLike,
    pods: Sequence[Obj],
    current_revision: str,
    update_revision: str,
    *,
    is_pod_update: Callable[[Obj, str], bool] | None = None,
    now: datetime | None = None,
) -> ExpectationDiffs:
    """Upstream ``calculateDiffsWithExpectation`` (partition rollback enabled only when the
    current and update revisions differ, as upstream with the feature gate on). With the
    set's scaling-exclude-preparing-delete label, pods in PreparingDelete are not counted
    when scaling (a scale-up while one is held creates a new pod).

    ``pods`` are the set's active pods; ``is_pod_update(pod, revision)`` defaults to the
    revision label comparison.
    """
    cs = core.view_of(cs)
    updated = is_pod_update or core.is_updated
    res = ExpectationDiffs()
    replicas = cs.replicas
    partition = cs.partition
    max_surge = cs.max_surge
    max_unavailable = cs.max_unavailable
    scale_limit = cs.scale_max_unavailable

    new_count = new_active = old_count = old_active = 0
    unavailable_new = unavailable_old = 0
    to_delete_new = to_delete_old = pre_deleting_new = pre_deleting_old = 0
    for pod in pods:
        is_new = updated(pod, update_revision)
        pre_deleting = lifecycle.get_state(pod) == lifecycle.PREPARING_DELETE
        to_delete = not pre_deleting and cs.is_specified_delete(pod)
        unavailable = not pre_deleting and not to_delete and not core.is_pod_available(cs, pod, now)
        if is_new:
            new_count += 1
            new_active += not pre_deleting
            pre_deleting_new += pre_deleting
            to_delete_new += to_delete
            unavailable_new += unavailable
        else:
            old_count += 1
            old_active += not pre_deleting
            pre_deleting_old += pre_deleting
            to_delete_old += to_delete
            unavailable_old += unavailable

    update_old_diff = old_active - partition
    update_new_diff = new_active - (replicas - partition)
    total_unavailable = pre_deleting_new + pre_deleting_old + unavailable_new + unavailable_old
    if update_revision == current_revision:
        update_old_diff = max(update_old_diff, 0)
        update_new_diff = min(update_new_diff, 0)

    if max_surge > 0:
        scale_surge = scale_old_surge = 0
        to_delete_count = to_delete_new + to_delete_old
        if to_delete_count > 0:
            scale_surge = min(
                max(total_unavailable + to_delete_count - max_unavailable, 0), to_delete_count
            )
            if scale_surge > to_delete_new:
                scale_old_surge = scale_surge - to_delete_new
        update_surge = update_old_surge = 0
        if (update_old_diff > 0 > update_new_diff) or (update_old_diff < 0 < update_new_diff):
            if abs(update_old_diff) <= abs(update_new_diff):
                update_surge = abs(update_old_diff)
                if update_old_diff < 0:
                    update_old_surge = update_surge
            else:
                update_surge = abs(update_new_diff)
                if update_new_diff > 0:
                    update_old_surge = update_surge
        if scale_surge >= update_surge:
            res.use_surge = min(max_surge, scale_surge)
            res.use_surge_old_revision = min(res.use_surge, scale_old_surge)
        else:
            res.use_surge = min(max_surge, update_surge)
            res.use_surge_old_revision = min(res.use_surge, update_old_surge)

    total_count, total_old = len(pods), old_count
    if cs.scaling_exclude_preparing_delete:
        total_count -= pre_deleting_old + pre_deleting_new
        total_old -= pre_deleting_old
    expected_total = replicas + res.use_surge
    expected_old = partition + res.use_surge_old_revision
    if (num := expected_total - total_count) > 0:
        res.scale_up_num = num
        res.scale_up_num_old_revision = max(expected_old - total_old, 0)
        limit = num if scale_limit is None else max(scale_limit - total_unavailable, 0)
        res.scale_up_limit = min(num, limit)
    if (num := total_count - to_delete_old - to_delete_new - expected_total) > 0:
        res.scale_down_num = num
        res.scale_down_num_old_revision = max(total_old - to_delete_old - expected_old, 0)
    if to_delete_new > 0 or to_delete_old > 0 or res.scale_down_num > 0:
        res.delete_ready_limit = max(
            max_unavailable + (len(pods) - replicas) - total_unavailable, 0
        )

    if abs(update_old_diff) <= abs(update_new_diff):
        res.update_num = update_old_diff
    else:
        res.update_num = -update_new_diff
    if res.update_num != 0:
        res.update_max_unavailable = max_unavailable + len(pods) - replicas
    return res


def choose_pods_to_delete(
    total: int,
    old_revision: int,
    not_updated: Sequence[Obj],
    updated: Sequence[Obj],
) -> list[Obj]:
    """Upstream ``choosePodsToDelete``: ``old_revision`` of the ``total`` from the not-updated
    pods, the rest from the updated ones, each group in ActivePods order (not ready, unscheduled
    and pending pods first)."""

    def choose(pods: Sequence[Obj], diff: int) -> list[Obj]:
        if diff < len(pods):
            return sort_active_pods(pods)[:diff]
        return list(pods)

    if old_revision >= total:
        return choose(not_updated, total)
    if old_revision > 0:
        return choose(not_updated, old_revision) + choose(updated, total - old_revision)
    return choose(updated, total)


def _names(objs: Sequence[Obj]) -> set[str]:
    return {meta.name(o) for o in objs}


class Scaler(PodControlStep):
    """The scaling step of a sync: decides, and writes through ``pod_control``.

    ``preparing_normal`` (default, as upstream): new pods, and pods in PreparingDelete a
    scale-up takes back, go to ``PreparingNormal``; the update step moves them on to
    ``Normal`` once scheduled (or their ``preNormal`` hook is all there). False: straight to
    ``Normal``. ``batch_limit``: creations of one slow-start batch that run at a time (Kruise
    runs a batch's on goroutines); ``pod_control.create_pod`` must then be safe to call from
    several threads."""

    def __init__(
        self,
        pod_control: PodControl,
        *,
        preparing_normal: bool = True,
        logger: logging.Logger = log,
        batch_limit: int = DEFAULT_LIMIT,
    ) -> None:
        super().__init__(pod_control, logger=logger)
        self.preparing_normal = preparing_normal
        self.batch_limit = batch_limit

    @property
    def _start_state(self) -> str:
        return lifecycle.PREPARING_NORMAL if self.preparing_normal else lifecycle.NORMAL

    def scale(
        self,
        current_cs: CloneSetView,
        update_cs: CloneSetView,
        current_revision: str,
        update_revision: str,
        pods: Sequence[Obj],
        claims: Sequence[Obj],
        diffs: ExpectationDiffs,
    ) -> bool:
        """One scaling step; True when something was written (the caller skips the update).
        ``current_cs`` is the set at its current revision (what old pods are made from),
        ``claims`` the set's claims, ``diffs`` :func:`calculate_diffs` of ``pods`` (not
        changed). Raises the first API error."""
        cs = update_cs
        to_delete = [p for p in pods if cs.is_specified_delete(p)]
        pre_delete = [p for p in pods if lifecycle.get_state(p) == lifecycle.PREPARING_DELETE]
        num_to_delete = len(_names(to_delete) | _names(pre_delete))
        if self._manage_preparing_delete(cs, pods, pre_delete, num_to_delete):
            return True

        if diffs.scale_up_num > diffs.scale_up_limit:
            self.pod_control.record(
                cs.obj,
                "Warning",
                "ScaleUpLimited",
                f"scaleUp is limited because of scaleStrategy.maxUnavailable, "
                f"limit: {diffs.scale_up_limit}",
            )
        if diffs.scale_up_num > 0:
            ids = available_instance_ids(diffs.scale_up_limit, pods, claims)
            new_pods = core.new_versioned_pods(
                current_cs,
                update_cs,
                current_revision,
                update_revision,
                diffs.scale_up_limit,
                diffs.scale_up_num_old_revision,
                ids,
                self._start_state,
            )
            return self._create_pods(cs, new_pods, diffs.scale_up_num_old_revision, claims)

        if pre_delete and self._delete_pods(cs, pre_delete, claims):
            return True

        pre_delete_names = _names(pre_delete)
        specified = [p for p in to_delete if meta.name(p) not in pre_delete_names]
        ready_limit = diffs.delete_ready_limit
        if specified:
            chosen, ready_limit = _within_ready_limit(specified, ready_limit)
            if self._delete_pods(cs, chosen, claims):
                return True

        if diffs.scale_down_num > 0:
            if num_to_delete > 0:
                self._log.debug(
                    "%s: scale-in of %d waits for %d pods being deleted",
                    cs.key,
                    diffs.scale_down_num,
                    num_to_delete,
                )
                return False
            updated = [p for p in pods if core.is_updated(p, update_revision)]
            not_updated = [p for p in pods if not core.is_updated(p, update_revision)]
            candidates = choose_pods_to_delete(
                diffs.scale_down_num, diffs.scale_down_num_old_revision, not_updated, updated
            )
            chosen, _ = _within_ready_limit(candidates, ready_limit)
            return self._delete_pods(cs, chosen, claims)
        return False

    def _manage_preparing_delete(
        self,
        cs: CloneSetView,
        pods: Sequence[Obj],
        pre_delete: Sequence[Obj],
        num_to_delete: int,
    ) -> bool:
        """Pods in PreparingDelete that a scale-up needs back return to PreparingNormal
        (Normal without ``preparing_normal``); specified ones stay. Not when a hook
        (``preDelete`` or ``inPlaceUpdate``) says ``markPodNotReady``: Kruise allows no regret
        then (a pod taken back could lose its in-place update's Updated hook)."""
        if cs.marks_pod_not_ready:
            return False
        diff = cs.replicas - len(pods) + num_to_delete
        modified = False
        for pod in pre_delete:
            if diff <= 0:
                break
            if cs.is_specified_delete(pod):
                continue
            written, _ = self.pod_control.update_pod_lifecycle(pod, self._start_state)
            modified = modified or written
            diff -= 1
        return modified

    def _create_pods(
        self, cs: CloneSetView, pods: Sequence[Obj], current_count: int, claims: Sequence[Obj]
    ) -> bool:
        existing = _names(claims)
        self._log.info(
            "%s: creating %d pods (%d at the current revision)", cs.key, len(pods), current_count
        )
        successes, error = slow_start_batch(
            len(pods),
            INITIAL_BATCH_SIZE,
            lambda i: self.pod_control.create_pod(cs, pods[i], existing),
            limit=self.batch_limit,
        )
        if error is not None:
            raise error
        return successes > 0

    def _delete_pods(self, cs: CloneSetView, pods: Sequence[Obj], claims: Sequence[Obj]) -> bool:
        """Delete ``pods`` with their claims; a pod hooked by ``lifecycle.preDelete`` moves to
        PreparingDelete instead. True when something was written."""
        hook = cs.pre_delete_hook
        modified = False
        for pod in pods:
            if lifecycle.is_pod_hooked(hook, pod):
                written, _ = self.pod_control.update_pod_lifecycle(
                    pod, lifecycle.PREPARING_DELETE, mark_not_ready=marks_pod_not_ready(hook)
                )
                modified = modified or written
                continue
            own_claims = claims_of_instance(instance_id(pod), claims)
            if self.pod_control.delete_pod(cs, pod, own_claims):
                modified = True
        return modified


def _within_ready_limit(pods: Sequence[Obj], limit: int) -> tuple[list[Obj], int]:
    """The pods that may go: every not-ready one, ready ones while ``limit`` lasts;
    ``(chosen, limit left)``."""
    chosen = []
    for pod in pods:
        if not core.is_pod_ready(pod):
            chosen.append(pod)
        elif limit > 0:
            chosen.append(pod)
            limit -= 1
    return chosen, limit
