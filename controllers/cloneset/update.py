"""Updating a CloneSet's pods to the update revision (openkruise
``cloneset/sync/cloneset_update.go`` and ``pkg/util/updatesort``): decisions only, every write
goes through a :class:`~controllers.cloneset.pod_control.PodControl`.

A sync first refreshes every pod (in-place grace periods, the ``InPlaceUpdateReady``
condition, lifecycle ``PreparingNormal`` → ``Normal`` once scheduled or the ``preNormal`` hook
is all there, ``Updating`` → ``Updated``/``Normal``); any write ends the step. Unless
``updateStrategy.paused``, the pods still to update (``calculate_diffs().update_num``; negative
means back to the current revision under a partition) that are not in PreparingDelete/Updated
nor in an in-place grace period are sorted (ActivePods order, then ``priorityStrategy``, then
``scatterStrategy``, PreparingUpdate first), cut to ``|update_num|`` and to what maxUnavailable
allows (:func:`limit_update_indexes`), and updated: in place when the strategy allows it and
only images/metadata changed (an ``inPlaceUpdate`` hook first moves the pod to PreparingUpdate
and waits) and, with Kruise's ``RecreatePodWhenChangeVCTInCloneSetGate`` on, the pod's revision
carries the update revision's ``volumeClaimTemplates`` hash (or either carries none;
``InPlaceOnly`` ignores the hash), otherwise by labelling the pod ``apps.kruise.io/specified-delete`` so scaling
recreates it. ``InPlaceOnly`` never recreates: it reports an error instead.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Mapping, Sequence

from controllers.cloneset import core
from controllers.cloneset.core import CloneSetView
from controllers.cloneset.pod_control import PodControl, PodControlStep
from controllers.cloneset.revision import can_vct_update_in_place
from controllers.cloneset.scale import ExpectationDiffs
from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.inplace import (
    GRACE_ANNOTATION,
    InPlaceSpec,
    calculate_in_place_spec,
    check_update_completed,
)
from kube_runtime.workloads.pods import active_pods_less
from kube_runtime.workloads.updatesort import priority_sort

__all__ = [
    "UpdateError",
    "Updater",
    "limit_update_indexes",
    "priority_sort",
    "scatter_sort",
    "sort_update_indexes",
]

log = logging.getLogger(__name__)


def _labels(pod: Obj) -> Mapping[str, str]:
    return meta.labels(pod)


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
    is_ready: Callable[[Obj], bool] = core.is_pod_ready,
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


def _hook_names(hook: Obj) -> bool:
    """Whether a hook names any finalizer or label."""
    return bool(hook.get("finalizersHandler") or hook.get("labelsHandler"))


def _grace_pending(pod: Obj) -> bool:
    return bool(meta.annotations(pod).get(GRACE_ANNOTATION))


class UpdateError(RuntimeError):
    """A pod could not be updated as the strategy demands (InPlaceOnly, impossible in place)."""


class Updater(PodControlStep):
    """The update step of a sync: decides, and writes through ``pod_control``.

    ``recreate_pod_when_change_vct`` is Kruise's ``RecreatePodWhenChangeVCTInCloneSetGate``
    (off by default): on, a pod whose revision's claim-template hash differs from the target
    revision's cannot be updated in place (Kruise ``defaultCalculateInPlaceUpdateSpec``), so
    ``InPlaceIfPossible`` recreates it, with new claims; ``InPlaceOnly`` ignores the hash, as
    Kruise's ``GetUpdateOptions`` does."""

    def __init__(
        self,
        pod_control: PodControl,
        *,
        recreate_pod_when_change_vct: bool = False,
        logger: logging.Logger = log,
    ) -> None:
        super().__init__(pod_control, logger=logger)
        self.recreate_pod_when_change_vct = recreate_pod_when_change_vct

    def update(
        self,
        cs: CloneSetView,
        current_revision: Obj,
        update_revision: Obj,
        revisions: Sequence[Obj],
        pods: Sequence[Obj],
        diffs: ExpectationDiffs,
    ) -> float:
        """One update step; returns seconds after which to look again (0: no need).
        ``diffs`` is :func:`~controllers.cloneset.scale.calculate_diffs` of ``pods``."""
        requeue = 0.0

        def note(delay: float) -> None:
            nonlocal requeue
            if delay > 0 and (requeue == 0 or delay < requeue):
                requeue = delay

        modified = False
        update_name = meta.name(update_revision)
        for pod in pods:
            written, delay = self._refresh(cs, pod, update_name)
            note(delay)
            modified = modified or written
        if modified or cs.paused:
            return requeue

        if diffs.update_num == 0:
            return requeue
        waiting = []
        for i, pod in enumerate(pods):
            is_new = core.is_updated(pod, update_name)
            if is_new == (diffs.update_num > 0):
                continue
            state = lifecycle.get_state(pod)
            if state == lifecycle.PREPARING_DELETE:
                continue
            # an Updated pod a newer revision reaches is updated again (its hook put back
            # first); any other waits out its grace period
            if state != lifecycle.UPDATED and _grace_pending(pod):
                continue
            waiting.append(i)
        waiting = sort_update_indexes(cs.update_strategy_dict, pods, waiting)
        waiting = limit_update_indexes(diffs, waiting, pods)
        target = update_revision if diffs.update_num > 0 else current_revision
        for i in waiting:
            note(self._update_pod(cs, target, revisions, pods[i]))
        return requeue

    def _refresh(self, cs: CloneSetView, pod: Obj, update_name: str) -> tuple[bool, float]:
        """Advance in-place updates and the lifecycle states that follow them (Kruise
        ``refreshPodState``): PreparingNormal -> Normal once scheduled or all pre-normal
        hooked; a PreparingUpdate pod the set was rolled back to -> Updated (Normal when all
        hooked); a completed Updating -> Updated while the ``inPlaceUpdate`` hook is not all
        back (whenever ``lifecycle`` is set), else Normal; Updated -> Normal once it is. The
        ``inPlaceUpdate`` hook's ``markPodNotReady`` releases the pod's ``KruisePodReady``
        condition at Updated. A pod with that readiness gate and no condition gets it True
        first (Kruise's pod-readiness controller; that write ends the pod's refresh)."""
        if self.pod_control.ensure_readiness_condition(pod):
            return True, 0.0
        written, delay = self.pod_control.refresh_in_place(pod)
        if written:
            return True, delay
        hook = cs.in_place_update_hook
        state = lifecycle.get_state(pod)
        new_state = ""
        if state == lifecycle.PREPARING_NORMAL:
            # Normal once scheduled (upstream: earlier tripped old kube-schedulers), or with a
            # preNormal hook once the pod carries all of it
            pre_normal = cs.pre_normal_hook
            if pre_normal is None:
                ready = bool((pod.get("spec") or {}).get("nodeName"))
            else:
                ready = lifecycle.is_pod_all_hooked(pre_normal, pod) or not _hook_names(pre_normal)
            new_state = lifecycle.NORMAL if ready else ""
        elif (state == lifecycle.PREPARING_UPDATE and core.is_updated(pod, update_name)) or (
            state == lifecycle.UPDATING and check_update_completed(pod) is None
        ):
            if cs.has_lifecycle and not lifecycle.is_pod_all_hooked(hook, pod):
                new_state = lifecycle.UPDATED
            else:
                new_state = lifecycle.NORMAL
        elif state == lifecycle.UPDATED and (not hook or lifecycle.is_pod_all_hooked(hook, pod)):
            new_state = lifecycle.NORMAL
        if new_state:
            written, _ = self.pod_control.update_pod_lifecycle(
                pod, new_state, mark_not_ready=lifecycle.marks_pod_not_ready(hook)
            )
            if written:
                return True, delay
        return False, delay

    def _update_pod(
        self, cs: CloneSetView, target: Obj, revisions: Sequence[Obj], pod: Obj
    ) -> float:
        """Update one pod to ``target``: in place when the strategy allows it and only
        images/metadata change, else by marking it for deletion (scaling recreates it)."""
        name = meta.name(pod)
        target_name = meta.name(target)
        kind = cs.strategy_type
        if kind in (core.IN_PLACE_IF_POSSIBLE, core.IN_PLACE_ONLY):
            old = next((r for r in revisions if core.is_updated(pod, meta.name(r))), None)
            spec = calculate_in_place_spec(old, target)
            if (
                spec is not None
                and self.recreate_pod_when_change_vct
                and kind != core.IN_PLACE_ONLY
                and not can_vct_update_in_place(old, target)
            ):
                self._log.info(
                    "%s: pod %s's volumeClaimTemplates changed; recreating it", cs.key, name
                )
                spec = None
            if spec is not None:
                return self._update_in_place(cs, pod, spec)
            if kind == core.IN_PLACE_ONLY:
                raise UpdateError(
                    f"pod {name}: update strategy is InPlaceOnly but it cannot be updated in place"
                )
            self._log.info("%s: pod %s cannot be updated in place; recreating it", cs.key, name)
        if core.SPECIFIED_DELETE_LABEL in meta.labels(pod):
            return 0.0
        self.pod_control.mark_specified_delete(cs, pod, target_name)
        return 0.0

    def _update_in_place(self, cs: CloneSetView, pod: Obj, spec: InPlaceSpec) -> float:
        """The in-place branch: an ``inPlaceUpdate`` hook first holds the pod in
        PreparingUpdate; then the update starts (grace delay returned)."""
        hook = cs.in_place_update_hook
        mark = lifecycle.marks_pod_not_ready(hook)
        state = lifecycle.get_state(pod)
        if state in ("", lifecycle.PREPARING_NORMAL, lifecycle.NORMAL) and lifecycle.is_pod_hooked(
            hook, pod
        ):
            self.pod_control.update_pod_lifecycle(
                pod, lifecycle.PREPARING_UPDATE, mark_not_ready=mark
            )
            return 0.0
        if state == lifecycle.UPDATED:
            # Kruise UpdatePodLifecycleWithHandler: back to PreparingUpdate with the hook's
            # labels and finalizers put back (no hook: nothing, refresh makes it Normal)
            if hook:
                self.pod_control.update_pod_lifecycle(
                    pod, lifecycle.PREPARING_UPDATE, mark_not_ready=mark, hook=hook
                )
            return 0.0
        if state == lifecycle.PREPARING_UPDATE and lifecycle.is_pod_hooked(hook, pod):
            return 0.0
        if state not in (
            "",
            lifecycle.PREPARING_NORMAL,
            lifecycle.NORMAL,
            lifecycle.PREPARING_UPDATE,
            lifecycle.UPDATING,
        ):
            raise UpdateError(
                f"not allowed to update pod {meta.name(pod)} in place in state {state}"
            )
        return self.pod_control.update_in_place(cs, pod, spec, cs.grace_period_seconds)
