"""Updating a CloneSet's pods to the update revision (openkruise
``cloneset/sync/cloneset_update.go`` and ``pkg/util/updatesort``).

A sync first refreshes every pod (in-place grace periods, the ``InPlaceUpdateReady``
condition, lifecycle ``Updating`` → ``Updated``/``Normal``); any write ends the step. Unless
``updateStrategy.paused``, the pods still to update (``calculate_diffs().update_num``; negative
means back to the current revision under a partition) that are not in PreparingDelete/Updated
nor in an in-place grace period are sorted (ActivePods order, then ``priorityStrategy``, then
``scatterStrategy``, PreparingUpdate first), cut to ``|update_num|`` and to what maxUnavailable
allows (:func:`limit_update_indexes`), and updated: in place when the strategy allows it and
only images/metadata changed (an ``inPlaceUpdate`` hook first moves the pod to PreparingUpdate
and waits), otherwise by labelling the pod ``apps.kruise.io/specified-delete`` so scaling
recreates it. ``InPlaceOnly`` never recreates: it reports an error instead.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from controllers.cloneset import core, lifecycle
from controllers.cloneset.scale import ExpectationDiffs, calculate_diffs
from kube_runtime.expectations import ResourceVersionExpectations, UpdateExpectations
from kube_runtime.kinds import Pod
from kube_runtime.workloads.inplace import (
    GRACE_ANNOTATION,
    InPlaceControl,
    calculate_in_place_spec,
    check_update_completed,
)
from kube_runtime.workloads.pods import active_pods_less
from kube_runtime.workloads.updatesort import priority_sort

__all__ = [
    "UpdateControl",
    "limit_update_indexes",
    "priority_sort",
    "scatter_sort",
    "sort_update_indexes",
]

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]


def _labels(pod: Obj) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _scatter_group(matched: int, unmatched: int) -> tuple[int, int, int]:
    groups = min(matched, unmatched)
    if groups <= 0:
        return 0, 0, 0
    return groups, _round(matched / groups), _round(unmatched / groups)


def _round(x: float) -> int:
    """Go ``math.Round``: half away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _group_by_density(
    total_matched: int, total_unmatched: int, update_matched: int, update_unmatched: int
) -> tuple[int, int, int, int]:
    """``(groups, matched size, unmatched size, unmatched remainder)`` (upstream
    ``calculateGroupByDensity``)."""
    total = _scatter_group(total_matched, total_unmatched)
    update = _scatter_group(update_matched, update_unmatched)
    if total_matched == 0 or total_unmatched / total_matched >= update_unmatched / update_matched:
        return update[0], update[1], update[2], 0
    matched_size, unmatched_size = total[1], total[2]
    if update_matched // matched_size < update_unmatched // unmatched_size:
        groups = update_matched // matched_size
    else:
        groups = update_unmatched // unmatched_size
    return groups, matched_size, unmatched_size, update_unmatched - groups * unmatched_size


def _scatter_by_term(key: str, value: str, pods: Sequence[Obj], indexes: list[int]) -> list[int]:
    matched = [i for i in indexes if _labels(pods[i]).get(key) == value]
    unmatched = [i for i in indexes if _labels(pods[i]).get(key) != value]
    if len(matched) <= 1 or len(unmatched) <= 1:
        return indexes
    total_matched = sum(1 for p in pods if _labels(p).get(key) == value)
    total_unmatched = len(pods) - total_matched
    last = matched.pop()
    total_matched -= 1
    groups, matched_size, unmatched_size, remainder = _group_by_density(
        total_matched, total_unmatched, len(matched), len(unmatched)
    )
    result: list[int] = []
    if remainder > 0:
        result.extend(unmatched[:remainder])
        unmatched = unmatched[remainder:]
    for _ in range(groups):
        result.extend(matched[:matched_size])
        matched = matched[matched_size:]
        result.extend(unmatched[:unmatched_size])
        unmatched = unmatched[unmatched_size:]
    result.extend(matched)
    result.extend(unmatched)
    result.append(last)
    return result


def scatter_sort(
    strategy: Sequence[Obj] | None, pods: Sequence[Obj], indexes: list[int]
) -> list[int]:
    """Upstream ``scatterSort``: spread the pods matching each ``{key, value}`` term evenly
    over the update order (terms matching more pods first)."""
    terms = list(strategy or ())
    if not terms or len(indexes) <= 1:
        return indexes
    if len(terms) > 1:
        counts: dict[tuple[str, str], int] = {}
        for term in terms:
            for i in indexes:
                if _labels(pods[i]).get(term["key"]) == term["value"]:
                    ident = (term["key"], term["value"])
                    counts[ident] = counts.get(ident, 0) + 1
        ordered = sorted(counts, key=lambda t: -counts[t])
    else:
        ordered = [(terms[0]["key"], terms[0]["value"])]
    for key, value in ordered:
        indexes = _scatter_by_term(key, value, pods, indexes)
    return indexes


def sort_update_indexes(strategy: Obj, pods: Sequence[Obj], indexes: list[int]) -> list[int]:
    """Upstream ``sortUpdateIndexes``: ActivePods order, priority, scatter, PreparingUpdate
    first."""

    def active(i: int, j: int) -> int:
        if active_pods_less(pods[i], pods[j]):
            return -1
        return 1 if active_pods_less(pods[j], pods[i]) else 0

    indexes = sorted(indexes, key=functools.cmp_to_key(active))
    if strategy.get("priorityStrategy"):
        indexes = priority_sort(strategy.get("priorityStrategy"), pods, indexes)
    if strategy.get("scatterStrategy"):
        indexes = scatter_sort(strategy.get("scatterStrategy"), pods, indexes)
    return sorted(indexes, key=lambda i: lifecycle.get_state(pods[i]) != lifecycle.PREPARING_UPDATE)


def limit_update_indexes(
    diffs: ExpectationDiffs,
    indexes: list[int],
    pods: Sequence[Obj],
    is_ready: Any = core.is_pod_ready,
) -> list[int]:
    """Upstream ``limitUpdateIndexes``: at most ``|update_num|`` pods, and ready pods only
    while the not-ready count stays below ``update_max_unavailable``."""
    indexes = indexes[: abs(diffs.update_num)]
    not_ready = sum(1 for p in pods if not is_ready(p))
    allowed = 0
    for i in indexes:
        if is_ready(pods[i]):
            if not_ready >= diffs.update_max_unavailable:
                break
            not_ready += 1
        allowed += 1
    return indexes[:allowed]


def _grace_pending(pod: Obj) -> bool:
    return bool(((pod.get("metadata") or {}).get("annotations") or {}).get(GRACE_ANNOTATION))


class UpdateError(RuntimeError):
    """A pod could not be updated as the strategy demands (InPlaceOnly, impossible in place)."""


class UpdateControl:
    """The update step of a CloneSet sync (API writes through its controls)."""

    def __init__(
        self,
        client: Any,
        recorder: Any,
        in_place: InPlaceControl,
        lifecycle_control: lifecycle.LifecycleControl,
        update_expectations: UpdateExpectations,
        rv_expectations: ResourceVersionExpectations,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._in_place = in_place
        self._lifecycle = lifecycle_control
        self._updates = update_expectations
        self._rv = rv_expectations

    def update(
        self,
        cs: Obj,
        current_revision: Obj,
        update_revision: Obj,
        revisions: Sequence[Obj],
        pods: Sequence[Obj],
        now: datetime | None = None,
    ) -> float:
        """One update step; returns seconds after which to look again (0: no need)."""
        requeue = 0.0

        def note(delay: float) -> None:
            nonlocal requeue
            if delay > 0 and (requeue == 0 or delay < requeue):
                requeue = delay

        modified = False
        for pod in pods:
            written, delay = self._refresh(cs, pod)
            note(delay)
            modified = modified or written
        strategy = core._update_strategy(cs)
        if modified or strategy.get("paused"):
            return requeue

        update_name = _rev_name(update_revision)
        diffs = calculate_diffs(cs, pods, _rev_name(current_revision), update_name, now=now)
        if diffs.update_num == 0:
            return requeue
        waiting = []
        for i, pod in enumerate(pods):
            is_new = core.is_updated(pod, update_name)
            if is_new == (diffs.update_num > 0):
                continue
            if lifecycle.get_state(pod) in (lifecycle.PREPARING_DELETE, lifecycle.UPDATED):
                continue
            if _grace_pending(pod):
                continue
            waiting.append(i)
        waiting = sort_update_indexes(strategy, pods, waiting)
        waiting = limit_update_indexes(diffs, waiting, pods)
        target = update_revision if diffs.update_num > 0 else current_revision
        for i in waiting:
            note(self._update_pod(cs, target, revisions, pods[i]))
        return requeue

    def _refresh(self, cs: Obj, pod: Obj) -> tuple[bool, float]:
        written, delay = self._in_place.refresh(pod)
        if written:
            return True, delay
        hook = (core._spec(cs).get("lifecycle") or {}).get("inPlaceUpdate")
        state = lifecycle.get_state(pod)
        new_state = ""
        if state == lifecycle.UPDATING and check_update_completed(pod) is None:
            if core._spec(cs).get("lifecycle") and not lifecycle.is_pod_hooked(hook, pod):
                new_state = lifecycle.UPDATED
            else:
                new_state = lifecycle.NORMAL
        elif state == lifecycle.UPDATED and (not hook or lifecycle.is_pod_all_hooked(hook, pod)):
            new_state = lifecycle.NORMAL
        if new_state:
            written, got = self._lifecycle.update_pod_lifecycle(pod, new_state)
            if written:
                self._rv.expect(got)
                return True, delay
        return False, delay

    def _update_pod(self, cs: Obj, target: Obj, revisions: Sequence[Obj], pod: Obj) -> float:
        key = core.controller_key(cs)
        name = str((pod.get("metadata") or {}).get("name"))
        target_name = _rev_name(target)
        kind = core._update_strategy(cs).get("type") or core.RECREATE
        if kind in (core.IN_PLACE_IF_POSSIBLE, core.IN_PLACE_ONLY):
            old = next((r for r in revisions if core.is_updated(pod, _rev_name(r))), None)
            spec = calculate_in_place_spec(old, target)
            if spec is not None:
                hook = (core._spec(cs).get("lifecycle") or {}).get("inPlaceUpdate")
                state = lifecycle.get_state(pod)
                if state in ("", lifecycle.NORMAL) and lifecycle.is_pod_hooked(hook, pod):
                    written, got = self._lifecycle.update_pod_lifecycle(
                        pod, lifecycle.PREPARING_UPDATE
                    )
                    if written:
                        self._rv.expect(got)
                    return 0.0
                if state == lifecycle.PREPARING_UPDATE and lifecycle.is_pod_hooked(hook, pod):
                    return 0.0
                if state not in (
                    "",
                    lifecycle.NORMAL,
                    lifecycle.PREPARING_UPDATE,
                    lifecycle.UPDATING,
                ):
                    raise UpdateError(f"not allowed to update pod {name} in place in state {state}")
                grace = int(
                    (
                        (core._update_strategy(cs).get("inPlaceUpdateStrategy") or {}).get(
                            "gracePeriodSeconds"
                        )
                    )
                    or 0
                )
                self._updates.expect_updated(key, target_name, pod)
                try:
                    delay = self._in_place.update(
                        pod,
                        spec,
                        grace_seconds=grace,
                        extra_labels={lifecycle.LIFECYCLE_STATE_LABEL: lifecycle.UPDATING},
                    )
                except Exception as err:
                    self._updates.delete_object(key, pod)
                    self._recorder.event(
                        cs,
                        "Warning",
                        "FailedUpdatePodInPlace",
                        f"failed to update pod {name} in-place(revision {target_name}): {err}",
                    )
                    raise
                self._recorder.event(
                    cs,
                    "Normal",
                    "SuccessfulUpdatePodInPlace",
                    f"successfully update pod {name} in-place(revision {target_name})",
                )
                return delay
            if kind == core.IN_PLACE_ONLY:
                raise UpdateError(
                    f"pod {name}: update strategy is InPlaceOnly but it cannot be updated in place"
                )
            log.info("%s: pod %s cannot be updated in place; recreating it", key, name)
        if core.SPECIFIED_DELETE_LABEL in ((pod.get("metadata") or {}).get("labels") or {}):
            return 0.0
        got = self._client.patch(
            Pod,
            name,
            {"metadata": {"labels": {core.SPECIFIED_DELETE_LABEL: "true"}}},
            namespace=(pod.get("metadata") or {}).get("namespace"),
        )
        self._rv.expect(got)
        self._recorder.event(
            cs,
            "Normal",
            "SuccessfulUpdatePodReCreate",
            f"successfully patch pod {name} specified-delete for update(revision {target_name})",
        )
        return 0.0


def _rev_name(revision: Obj) -> str:
    return str((revision.get("metadata") or {}).get("name") or "")
