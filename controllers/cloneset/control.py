"""The CloneSet sync algorithm (openkruise ``cloneset/cloneset_controller.go`` ``syncCloneSet``
and ``sync/api.go``), free of API details.

:meth:`CloneSetControl.sync` takes a set (a :class:`~controllers.cloneset.core.CloneSetView`),
the active pods and the claims it owns, its revisions (current and update resolved), and moves
the pods one step toward the spec. Writes go through a
:class:`~controllers.cloneset.pod_control.PodControl`, the status through a
:class:`~controllers.cloneset.status.StatusUpdater`; tests drive it with fakes.

Decisions, in upstream's order:

1. Scale (:class:`~controllers.cloneset.scale.Scaler`), counting a pod held in
   PreparingUpdate as updated (upstream's ``PreparingUpdateAsUpdate``); when scaling wrote
   nothing (and did not fail), update (:class:`~controllers.cloneset.update.Updater`),
   counting pods by revision only.
2. Status from the pods, with ``FailedScale`` / ``FailedUpdate`` conditions carrying the
   step's error (removed once a step succeeds) and the ``Progressing`` condition of
   ``progressDeadlineSeconds``; written only when it changed, also when a step failed (the
   error is raised after).
3. ``podsToDelete`` entries naming no pod are dropped; revisions beyond
   ``revisionHistoryLimit`` (default 10) that no pod uses are deleted.
4. Requeue for in-place grace periods, for the moment the next pod becomes available
   under ``minReadySeconds`` and for the progress deadline.

An invalid spec (:meth:`CloneSetControl.report_invalid`) gets one Warning event and a
``FailedScale`` condition, nothing else; the caller does not retry it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from controllers.cloneset.core import CloneSetView, InvalidSpecError, is_updated
from controllers.cloneset.pod_control import PodControl, PodControlStep
from controllers.cloneset.scale import ExpectationDiffs, Scaler, calculate_diffs
from controllers.cloneset.status import (
    FAILED_SCALE,
    FAILED_UPDATE,
    StatusUpdater,
    calculate_status,
    invalid_spec_status,
    set_condition,
    set_progressing,
    status_changed,
)
from controllers.cloneset.update import UpdateError, Updater
from kube_runtime import meta
from kube_runtime.clock import Clock, resolve
from kube_runtime.meta import ObjView as Obj
from kube_runtime.reconcile import Result
from kube_runtime.workloads.lifecycle import PREPARING_UPDATE, get_state
from kube_runtime.workloads.pods import is_available
from kube_runtime.workloads.revision import live_revision_names, revisions_to_truncate

__all__ = ["DEFAULT_HISTORY_LIMIT", "CloneSetControl"]

log = logging.getLogger(__name__)


DEFAULT_HISTORY_LIMIT = 10
_AVAILABLE_SLACK = 0.05
"""Added to the time left until a pod is available: availability needs ``now`` strictly
after ``readySince + minReadySeconds``."""


class CloneSetControl(PodControlStep):
    """The sync of one CloneSet, over a pod control and a status updater.

    ``preparing_update_as_update`` (upstream's ``PreparingUpdateAsUpdate`` gate, on here):
    scaling counts pods held in PreparingUpdate as updated. ``preparing_normal`` (default
    True): new pods start in ``PreparingNormal`` as upstream's do (see
    :class:`~controllers.cloneset.scale.Scaler`). ``recreate_pod_when_change_vct`` (Kruise's
    ``RecreatePodWhenChangeVCTInCloneSetGate``, off by default): a changed
    ``volumeClaimTemplates`` hash forbids in-place updates (see
    :class:`~controllers.cloneset.update.Updater`). Each pass reads the time once from
    ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock current when the
    control is made) for availability, minReadySeconds and the progress deadline."""

    def __init__(
        self,
        pod_control: PodControl,
        status_updater: StatusUpdater,
        *,
        preparing_update_as_update: bool = True,
        preparing_normal: bool = True,
        recreate_pod_when_change_vct: bool = False,
        logger: logging.Logger = log,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(pod_control, logger=logger)
        self.clock = resolve(clock, "CloneSetControl")
        """Where each pass reads the time."""
        self.status_updater = status_updater
        self.preparing_update_as_update = preparing_update_as_update
        self._scaler = Scaler(pod_control, preparing_normal=preparing_normal, logger=logger)
        self._updater = Updater(
            pod_control,
            recreate_pod_when_change_vct=recreate_pod_when_change_vct,
            logger=logger,
        )

    def sync(
        self,
        cs: CloneSetView,
        pods: Sequence[Obj],
        claims: Sequence[Obj],
        revisions: Sequence[Obj],
        current: Obj,
        update: Obj,
        collision_count: int,
    ) -> Result | None:
        """One pass (see the module docstring). ``pods`` are the set's active pods, ``claims``
        its claims not being deleted, ``revisions`` every revision of the set including
        ``current`` and ``update``. Raises the scaling or update error after the status was
        written."""
        current_name, update_name = meta.name(current), meta.name(update)
        now = self.clock.now()
        current_cs = cs.at_revision(current)
        diffs = ExpectationDiffs()
        scale_error: Exception | None = None
        update_error: Exception | None = None
        scaling = False
        delay = 0.0
        try:
            # Both steps decide from the same pods: the update runs only when scaling wrote
            # nothing, so one computation serves both.
            diffs = calculate_diffs(
                cs, pods, current_name, update_name, is_pod_update=self._is_pod_update, now=now
            )
            scaling = self._scaler.scale(
                current_cs, cs, current_name, update_name, pods, claims, diffs
            )
            if self.preparing_update_as_update:
                # the update counts a pod by its revision only (upstream's nil isPodUpdate)
                diffs = calculate_diffs(cs, pods, current_name, update_name, now=now)
        except Exception as err:
            self._log.warning("%s: scaling failed: %s", cs.key, err)
            scale_error = err
        if not scaling and scale_error is None:
            try:
                delay = self._updater.update(cs, current, update, revisions, pods, diffs)
            except Exception as err:
                self._log.warning("%s: updating failed: %s", cs.key, err)
                update_error = err
                if isinstance(err, UpdateError):
                    self.pod_control.record(cs.obj, "Warning", "FailedUpdate", str(err))

        status = calculate_status(cs, pods, current_name, update_name, collision_count, now)
        set_condition(status, FAILED_SCALE, scale_error)
        set_condition(status, FAILED_UPDATE, update_error)
        progress_delay = set_progressing(cs, status, now)
        self.status_updater.update_if_changed(cs.obj, status)
        self._truncate_pods_to_delete(cs, pods)
        limit = cs.revision_history_limit
        limit = DEFAULT_HISTORY_LIMIT if limit is None else int(limit)
        live = live_revision_names(pods, current, update)
        for revision in revisions_to_truncate(revisions, live, limit):
            self.pod_control.delete_revision(revision)
        if scale_error is not None:
            raise scale_error
        if update_error is not None:
            raise update_error
        delay = _min_positive(delay, self._min_ready_requeue(cs, pods, now))
        delay = _min_positive(delay, progress_delay)
        return Result(requeue_after=delay) if delay > 0 else None

    def _is_pod_update(self, pod: Obj, update_revision: str) -> bool:
        """How scaling counts a pod as updated (upstream ``revision.IsPodUpdate``): at the
        update revision, or held in PreparingUpdate when :attr:`preparing_update_as_update`
        (upstream's ``PreparingUpdateAsUpdate`` gate), so that a pod recreated while another
        waits for its in-place update hook is made at the current revision and the partition
        is not overshot."""
        if self.preparing_update_as_update and get_state(pod) == PREPARING_UPDATE:
            return True
        return is_updated(pod, update_revision)

    def report_invalid(self, cs: Obj, err: InvalidSpecError) -> None:
        """An invalid spec: a Warning event and a ``FailedScale`` condition, once per spec
        generation (nothing when the recorded status says so already), nothing else."""
        status = invalid_spec_status(cs, str(err))
        if not status_changed(cs, status):
            self._log.debug("%s: invalid spec, reported already: %s", meta.key(cs), err)
            return
        self._log.warning("%s: invalid spec: %s", meta.key(cs), err)
        self.pod_control.record(cs, "Warning", "InvalidSpec", str(err))
        self.status_updater.write(cs, status)

    def _truncate_pods_to_delete(self, cs: CloneSetView, pods: Sequence[Obj]) -> None:
        listed = cs.pods_to_delete
        if not listed:
            return
        names = {meta.name(p) for p in pods}
        kept = [n for n in listed if n in names]
        if len(kept) != len(listed):
            self.pod_control.truncate_pods_to_delete(cs, kept)

    @staticmethod
    def _min_ready_requeue(cs: CloneSetView, pods: Sequence[Obj], now: datetime) -> float:
        min_ready = cs.min_ready_seconds
        if min_ready <= 0:
            return 0.0
        delay = 0.0
        for pod in pods:
            available, left = is_available(pod, min_ready, now)
            if not available and left is not None:
                delay = _min_positive(delay, left + _AVAILABLE_SLACK)
        return delay


def _min_positive(a: float, b: float) -> float:
    if a <= 0:
        return b
    if b <= 0:
        return a
    return min(a, b)
