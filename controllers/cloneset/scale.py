"""Scaling a CloneSet (openkruise ``cloneset/sync/cloneset_scale.go`` and
``cloneset_sync_utils.go``).

:func:`calculate_diffs` is upstream's ``calculateDiffsWithExpectation``: from the pods, the
partition, maxSurge and maxUnavailable it derives how many pods to create or delete (and how
many of them at the current, i.e. old, revision), how many ready pods may be deleted, and how
many pods to update. :class:`ScaleControl` acts on it in upstream's order: pods in
PreparingDelete that a scale-up wants back return to Normal; missing pods are created (new
instance ids, or the ids of orphaned claims so those claims are reused) in slow-start batches
(1, 2, 4, …) that stop at the first error; pods already in PreparingDelete are deleted once
their hook is released; specified pods (``scaleStrategy.podsToDelete`` or the
``apps.kruise.io/specified-delete`` label) are deleted; surplus pods are deleted, chosen by
:func:`choose_pods_to_delete`. A pod goes with its claims; a hooked pod (``lifecycle.preDelete``)
moves to PreparingDelete instead. Ready pods are deleted only within the delete-ready limit.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from controllers.cloneset import core, lifecycle
from kube_runtime.client.errors import is_not_found
from kube_runtime.expectations import ResourceVersionExpectations, ScaleAction, ScaleExpectations
from kube_runtime.kinds import PersistentVolumeClaim, Pod
from kube_runtime.workloads.pods import sort_active_pods
from kube_runtime.workloads.pvc import (
    INSTANCE_ID_LABEL,
    available_instance_ids,
    instance_claims_for_pod,
)

__all__ = [
    "INITIAL_BATCH_SIZE",
    "ExpectationDiffs",
    "ScaleControl",
    "calculate_diffs",
    "choose_pods_to_delete",
    "slow_start_batch",
]

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]

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
    cs: Obj,
    pods: Sequence[Obj],
    current_revision: str,
    update_revision: str,
    *,
    is_pod_update: Callable[[Obj, str], bool] | None = None,
    now: datetime | None = None,
) -> ExpectationDiffs:
    """Upstream ``calculateDiffsWithExpectation`` (partition rollback enabled only when the
    current and update revisions differ, as upstream with the feature gate on).

    ``pods`` are the set's active pods; ``is_pod_update(pod, revision)`` defaults to the
    revision label comparison.
    """
    updated = is_pod_update or core.is_updated
    res = ExpectationDiffs()
    replicas = core.replicas(cs)
    partition = core.partition(cs)
    max_surge = core.max_surge(cs)
    max_unavailable = core.max_unavailable(cs, max_surge)
    scale_limit = core.scale_max_unavailable(cs)

    new_count = new_active = old_count = old_active = 0
    unavailable_new = unavailable_old = 0
    to_delete_new = to_delete_old = pre_deleting_new = pre_deleting_old = 0
    for pod in pods:
        is_new = updated(pod, update_revision)
        pre_deleting = lifecycle.get_state(pod) == lifecycle.PREPARING_DELETE
        to_delete = not pre_deleting and core.is_specified_delete(cs, pod)
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

    expected_total = replicas + res.use_surge
    expected_old = partition + res.use_surge_old_revision
    if (num := expected_total - len(pods)) > 0:
        res.scale_up_num = num
        res.scale_up_num_old_revision = max(expected_old - old_count, 0)
        limit = num if scale_limit is None else max(scale_limit - total_unavailable, 0)
        res.scale_up_limit = min(num, limit)
    if (num := len(pods) - to_delete_old - to_delete_new - expected_total) > 0:
        res.scale_down_num = num
        res.scale_down_num_old_revision = max(old_count - to_delete_old - expected_old, 0)
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


def slow_start_batch(
    count: int, initial: int, fn: Callable[[int], None]
) -> tuple[int, BaseException | None]:
    """Call ``fn(i)`` for ``i`` in ``range(count)`` in batches of ``initial``, 2x, 4x, …; stop
    after the first batch with a failure. ``(successes, first error)``."""
    done = 0
    batch = min(count, initial)
    while batch > 0:
        errors: list[BaseException] = []
        for i in range(done, done + batch):
            try:
                fn(i)
            except Exception as err:
                errors.append(err)
        done += batch - len(errors)
        if errors:
            return done, errors[0]
        batch = min(2 * batch, count - done)
    return done, None


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _instance_id(obj: Obj) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(INSTANCE_ID_LABEL) or "")


class ScaleControl:
    """Creates and deletes a CloneSet's pods and claims (API writes, events, expectations)."""

    def __init__(
        self,
        client: Any,
        recorder: Any,
        scale_expectations: ScaleExpectations,
        rv_expectations: ResourceVersionExpectations,
        lifecycle_control: lifecycle.LifecycleControl,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self.expectations = scale_expectations
        self._rv = rv_expectations
        self._lifecycle = lifecycle_control

    def scale(
        self,
        current_cs: Obj,
        update_cs: Obj,
        current_revision: str,
        update_revision: str,
        pods: Sequence[Obj],
        pvcs: Sequence[Obj],
    ) -> bool:
        """One scaling step; True when something was written (the caller skips the update).
        Raises the first API error."""
        cs = update_cs
        to_delete = [p for p in pods if core.is_specified_delete(cs, p)]
        pre_delete = [p for p in pods if lifecycle.get_state(p) == lifecycle.PREPARING_DELETE]
        num_to_delete = len({_name(p) for p in (*to_delete, *pre_delete)})
        if self._manage_preparing_delete(cs, pods, pre_delete, num_to_delete):
            return True

        diffs = calculate_diffs(cs, pods, current_revision, update_revision)
        updated = [p for p in pods if core.is_updated(p, update_revision)]
        not_updated = [p for p in pods if not core.is_updated(p, update_revision)]
        if diffs.scale_up_num > diffs.scale_up_limit:
            self._recorder.event(
                cs,
                "Warning",
                "ScaleUpLimited",
                f"scaleUp is limited because of scaleStrategy.maxUnavailable, "
                f"limit: {diffs.scale_up_limit}",
            )
        if diffs.scale_up_num > 0:
            ids = available_instance_ids(diffs.scale_up_limit, pods, pvcs)
            existing = {_name(c) for c in pvcs}
            return self._create_pods(
                diffs.scale_up_limit,
                diffs.scale_up_num_old_revision,
                current_cs,
                update_cs,
                current_revision,
                update_revision,
                ids,
                existing,
            )

        if pre_delete and self._delete_pods(cs, pre_delete, pvcs):
            return True

        pre_delete_names = {_name(p) for p in pre_delete}
        specified = [p for p in to_delete if _name(p) not in pre_delete_names]
        if specified:
            limit = diffs.delete_ready_limit
            chosen = []
            for pod in specified:
                if not core.is_pod_ready(pod):
                    chosen.append(pod)
                elif limit > 0:
                    chosen.append(pod)
                    limit -= 1
            diffs.delete_ready_limit = limit
            if self._delete_pods(cs, chosen, pvcs):
                return True

        if diffs.scale_down_num > 0:
            if num_to_delete > 0:
                log.debug(
                    "%s: scale-in of %d waits for %d pods being deleted",
                    core.controller_key(cs),
                    diffs.scale_down_num,
                    num_to_delete,
                )
                return False
            candidates = choose_pods_to_delete(
                diffs.scale_down_num, diffs.scale_down_num_old_revision, not_updated, updated
            )
            chosen = []
            limit = diffs.delete_ready_limit
            for pod in candidates:
                if not core.is_pod_ready(pod):
                    chosen.append(pod)
                elif limit > 0:
                    chosen.append(pod)
                    limit -= 1
            return self._delete_pods(cs, chosen, pvcs)
        return False

    def _manage_preparing_delete(
        self, cs: Obj, pods: Sequence[Obj], pre_delete: Sequence[Obj], num_to_delete: int
    ) -> bool:
        """Pods in PreparingDelete that a scale-up needs back return to Normal."""
        diff = core.replicas(cs) - len(pods) + num_to_delete
        modified = False
        for pod in pre_delete:
            if diff <= 0:
                break
            if core.is_specified_delete(cs, pod):
                continue
            written, got = self._lifecycle.update_pod_lifecycle(pod, lifecycle.NORMAL)
            if written:
                modified = True
                self._rv.expect(got)
            diff -= 1
        return modified

    def _create_pods(
        self,
        count: int,
        current_count: int,
        current_cs: Obj,
        update_cs: Obj,
        current_revision: str,
        update_revision: str,
        ids: Sequence[str],
        existing_claims: set[str],
    ) -> bool:
        key = core.controller_key(update_cs)
        pods = core.new_versioned_pods(
            current_cs, update_cs, current_revision, update_revision, count, current_count, ids
        )
        for pod in pods:
            self.expectations.expect_scale(key, ScaleAction.CREATE, _name(pod))
        created: set[str] = set()

        def create(i: int) -> None:
            pod = pods[i]
            cs = current_cs if core.is_updated(pod, current_revision) else update_cs
            self._create_one(cs, pod, existing_claims)
            created.add(_name(pod))

        log.info("%s: creating %d pods (%d at the current revision)", key, len(pods), current_count)
        successes, error = slow_start_batch(len(pods), INITIAL_BATCH_SIZE, create)
        for pod in pods:
            if _name(pod) not in created:
                self.expectations.observe_scale(key, ScaleAction.CREATE, _name(pod))
        if error is not None:
            raise error
        return successes > 0

    def _create_one(self, cs: Obj, pod: dict[str, Any], existing_claims: set[str]) -> None:
        key = core.controller_key(cs)
        namespace = pod["metadata"]["namespace"]
        for claim in instance_claims_for_pod(cs, pod).values():
            name = _name(claim)
            if name in existing_claims:
                continue
            self.expectations.expect_scale(key, ScaleAction.CREATE, name)
            try:
                self._client.create(claim, namespace=namespace)
            except Exception as err:
                self.expectations.observe_scale(key, ScaleAction.CREATE, name)
                self._recorder.event(
                    cs, "Warning", "FailedCreate", f"failed to create pvc {name}: {err}"
                )
                raise
        try:
            self._client.create(pod, namespace=namespace)
        except Exception as err:
            self._recorder.event(
                cs, "Warning", "FailedCreate", f"failed to create pod {_name(pod)}: {err}"
            )
            raise
        self._recorder.event(
            cs, "Normal", "SuccessfulCreate", f"succeed to create pod {_name(pod)}"
        )

    def _delete_pods(self, cs: Obj, pods: Sequence[Obj], pvcs: Sequence[Obj]) -> bool:
        key = core.controller_key(cs)
        hook = (core._spec(cs).get("lifecycle") or {}).get("preDelete")
        modified = False
        for pod in pods:
            name = _name(pod)
            if lifecycle.is_pod_hooked(hook, pod):
                written, got = self._lifecycle.update_pod_lifecycle(pod, lifecycle.PREPARING_DELETE)
                if written:
                    modified = True
                    self._rv.expect(got)
                continue
            self.expectations.expect_scale(key, ScaleAction.DELETE, name)
            try:
                self._client.delete(Pod, name, (pod.get("metadata") or {}).get("namespace"))
            except Exception as err:
                self.expectations.observe_scale(key, ScaleAction.DELETE, name)
                if is_not_found(err):
                    continue
                self._recorder.event(
                    cs, "Warning", "FailedDelete", f"failed to delete pod {name}: {err}"
                )
                raise
            modified = True
            self._recorder.event(cs, "Normal", "SuccessfulDelete", f"succeed to delete pod {name}")
            instance = _instance_id(pod)
            for claim in pvcs:
                if not instance or _instance_id(claim) != instance:
                    continue
                claim_name = _name(claim)
                self.expectations.expect_scale(key, ScaleAction.DELETE, claim_name)
                try:
                    self._client.delete(
                        PersistentVolumeClaim,
                        claim_name,
                        (claim.get("metadata") or {}).get("namespace"),
                    )
                except Exception as err:
                    self.expectations.observe_scale(key, ScaleAction.DELETE, claim_name)
                    if is_not_found(err):
                        continue
                    self._recorder.event(
                        cs, "Warning", "FailedDelete", f"failed to delete pvc {claim_name}: {err}"
                    )
                    raise
        return modified
