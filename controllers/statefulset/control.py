"""The StatefulSet algorithm (upstream ``stateful_set_control.go``), free of API details.

:meth:`StatefulSetControl.update` takes a set, its ControllerRevisions and the pods it owns,
and moves the pods one safe step toward the spec through a :class:`PodControl`; revisions
go through a ``history`` client (``create``/``get``/``update``/``delete``, what
:mod:`kube_runtime.workloads.revision` needs) and the status through a
:class:`~controllers.statefulset.status.StatusUpdater`. Tests drive it with fakes.

Decisions, in upstream's order:

1. Revisions: current and update revision (:func:`resolve_revisions`: new / rollback /
   collision count); the current and update sets are the set with each revision applied.
2. Pods with an ordinal in ``[start, start + replicas)`` are *replicas*, other parsable
   ordinals are *condemned* (deleted highest first); missing replicas are new pods at the
   revision :func:`new_versioned_pod` picks. The first unhealthy pod is the lowest-ordinal
   unhealthy replica, else the lowest unhealthy condemned pod.
3. A set being deleted only gets its status.
4. Each replica: a Failed/Succeeded pod is deleted (recreated on a later pass); a missing pod
   is created (unless a claim still belongs to a previous pod of that name), and under
   OrderedReady nothing more happens this pass; a Pending pod gets its missing claims;
   under OrderedReady a terminating, not running-and-ready or not yet available pod stops
   the pass; identity, storage or claim-retention drift is repaired by an update.
   Parallel processes all replicas (slow-start batches, an error ends the pass).
5. Condemned pods get claim owner references for the retention policy, then are deleted:
   under OrderedReady one at a time, waiting for terminating ones and for unhealthy ones
   unless it is the first unhealthy pod.
6. OnDelete stops here. RollingUpdate (with MaxUnavailableStatefulSet): count unavailable
   replicas; if the budget (``maxUnavailable``, default 1) is used up nothing is deleted,
   else delete pods not at the update revision from the highest ordinal down to
   ``partition``; Parallel first deletes old pods that are already unavailable, then
   available ones within the remaining budget.
7. Status is recomputed from the pods, the rolling update completed when every replica is
   updated and ready, and written only when it changed; history is truncated to
   ``revisionHistoryLimit`` (default 10) keeping revisions in use. Status is written even
   when a step failed, then the error is raised.

The enhanced kind (Kruise's Advanced StatefulSet) runs the same steps with its spec's
extensions (openkruise ``statefulset/stateful_set_control.go``):

- replicas are the first ``replicas`` ordinals not in ``reserveOrdinals``; pods at reserved
  ordinals are condemned. New pods get the ``InPlaceUpdateReady`` readiness gate, and every
  pass first advances in-place updates (grace periods, the gate's condition) through the
  shared :class:`~kube_runtime.workloads.inplace.InPlaceControl`.
- ``rollingUpdate.paused`` skips step 6. Step 6 first deletes replicas labelled
  ``apps.kruise.io/specified-delete`` within ``maxUnavailable``, whatever the partition
  (Kruise ``handleSpecifiedDeletedPods``); they come back at their ordinal's revision. ``unorderedUpdate`` picks the pods to update by
  ``priorityStrategy`` (ties: higher ordinal first) and keeps ``partition`` pods at the old
  revision, wherever they are. ``podUpdatePolicy`` InPlaceIfPossible / InPlaceOnly updates a
  pod in place when only images and template metadata changed (it counts as unavailable until
  the update completed); InPlaceOnly never deletes: a change it cannot make in place sets the
  ``FailedUpdatePod`` condition and stops the rolling update. ``rollingUpdate.minReadySeconds``
  stands for ``minReadySeconds``.
- ``volumeClaimUpdateStrategy.type: OnPodRollingUpdate``: a pod whose claims request less
  storage than their templates is a rolling-update target even at the update revision; before
  it is updated its claims are expanded, and it waits (counted unavailable) until they are
  (:mod:`controllers.statefulset.resize`); a pod whose claims lack the capacity they request
  counts as unavailable.
- Lifecycle hooks (Kruise ``deletePod`` / ``refreshPodState`` / ``inPlaceUpdatePod``): new
  pods carry ``lifecycle.apps.kruise.io/state`` (``PreparingNormal`` until a ``preNormal``
  hook is all there, else ``Normal``); a pod its ``preDelete`` hook holds goes to
  ``PreparingDelete`` instead of being deleted; in-place updates pass through
  ``PreparingUpdate`` (``inPlaceUpdate`` hook) / ``Updating`` / ``Updated`` / ``Normal``. A pod
  in another state than ``Normal`` is unhealthy and unavailable; a pass that moved a state
  skips the rolling update, which runs Kruise's loop (once ``maxUnavailable`` pods are
  unavailable, stop at the first target still available).
- ``scaleStrategy.maxUnavailable``: step 4 walks the replicas one by one with that budget;
  each creation, failed, terminating or unavailable replica takes one, and an exhausted budget
  ends the walk (not the pass).
- Ordered teardown: a set being deleted that still carries
  :data:`~controllers.statefulset.utils.ORDERED_TEARDOWN_FINALIZER` has no replicas: step 5
  deletes its pods one at a time, highest ordinal first, each gone before the next (the
  OrderedReady scale down, whatever the pod management policy); the caller removes the
  finalizer once no pod is left.
- Status adds ``updatedReadyReplicas``, ``updatedAvailableReplicas``, ``labelSelector``,
  ``volumeClaims`` (per claim template: replicas whose claim matches the template) and the
  ``FailedCreatePod`` / ``FailedUpdatePod`` conditions.
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from controllers.statefulset.pvc import claims_for_pod
from controllers.statefulset.resize import (
    ResizeError,
    claims_completed,
    claims_matched,
    claims_ready,
    pod_claims,
    resize_patches,
)
from controllers.statefulset.spec import (
    IN_PLACE_IF_POSSIBLE,
    IN_PLACE_ONLY,
    SetSpec,
)
from controllers.statefulset.status import (
    FAILED_CREATE_POD,
    FAILED_UPDATE_POD,
    StatusUpdater,
    clear_invalid_spec,
    complete_rolling_update,
    set_condition,
    status_changed,
)
from controllers.statefulset.utils import (
    SPECIFIED_DELETE_LABEL,
    identity_matches,
    in_ordered_teardown,
    is_enhanced,
    is_running_and_available,
    is_unavailable,
    kind_of,
    new_versioned_pod,
    ordinal_of,
    pod_revision,
    set_key,
    storage_matches,
)
from kube_runtime import meta
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Client
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import PersistentVolumeClaim
from kube_runtime.meta import Obj
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.workloads import lifecycle, podreadiness
from kube_runtime.workloads.batches import call_each
from kube_runtime.workloads.inplace import (
    InPlaceControl,
    calculate_in_place_spec,
    check_update_completed,
    inject_readiness_gate,
)
from kube_runtime.workloads.pods import (
    is_available,
    is_created,
    is_failed,
    is_healthy,
    is_pending,
    is_running_and_ready,
    is_succeeded,
    is_terminating,
)
from kube_runtime.workloads.revision import (
    apply_revision,
    resolve_revisions,
    sort_revisions,
    truncate_history,
)
from kube_runtime.workloads.updatesort import priority_sort

__all__ = ["PodControl", "StatefulSetControl", "SyncResult", "compute_status"]

log = logging.getLogger(__name__)

Pod = Mapping[str, Any]

MAX_BATCH_SIZE = 500
_REQUEUE_SLACK = 0.001
"""Added to the time left until a pod is available: availability needs ``now`` strictly
after ``readySince + minReadySeconds``."""


class PodControl(Protocol):
    """The API side effects the algorithm asks for (see :mod:`.pod_control`).

    ``pod`` is never a cached object the callee may keep; the callee never mutates it except
    in :meth:`update_pod`, which gets a private copy.
    """

    def create_pod(self, sts: Mapping[str, Any], pod: Pod) -> None:
        """Create the pod's missing claims, then the pod, then fix the claims' owners."""

    def update_pod(self, sts: Mapping[str, Any], pod: Obj) -> None:
        """Repair identity, storage and claim retention of an existing pod."""

    def delete_pod(self, sts: Mapping[str, Any], pod: Pod) -> None: ...

    def create_missing_claims(self, sts: Mapping[str, Any], pod: Pod) -> None: ...

    def claims_match_retention_policy(self, sts: Mapping[str, Any], pod: Pod) -> bool: ...

    def update_claims_for_retention_policy(self, sts: Mapping[str, Any], pod: Pod) -> None: ...

    def pod_claim_is_stale(self, sts: Mapping[str, Any], pod: Pod) -> bool:
        """A claim of the pod still belongs to an earlier pod of the same name."""

    def record(self, sts: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """Record an event on the set."""

    def update_pod_lifecycle(
        self,
        sts: Mapping[str, Any],
        pod: Pod,
        state: str,
        *,
        hook: Mapping[str, Any] | None = None,
        mark_not_ready: bool = False,
    ) -> bool:
        """Move the pod to lifecycle ``state`` (with ``hook``: put the hook's labels and
        finalizers back too; ``mark_not_ready``: hold or release the pod's ``KruisePodReady``
        gate as the state asks); whether a state write was sent."""

    def ensure_readiness_condition(self, pod: Pod) -> bool:
        """Give a pod with the ``KruisePodReady`` gate and no condition the condition True;
        whether a write was sent."""


@dataclasses.dataclass
class SyncResult:
    """What one pass computed: the status written (or found unchanged), the revisions, and
    when to look again for a pod becoming available (None: no such pod)."""

    status: Obj
    current_revision: Mapping[str, Any]
    update_revision: Mapping[str, Any]
    requeue_after: float | None = None


def compute_status(
    pods: Sequence[Pod],
    min_ready_seconds: float,
    current_revision: str,
    update_revision: str,
    now: datetime | None = None,
    *,
    lifecycle_aware: bool = False,
) -> dict[str, int]:
    """Replica counts over ``pods`` (upstream ``computeReplicaStatus``): created pods,
    running-and-ready, available, and non-terminating created pods per revision.
    ``lifecycle_aware`` (Kruise's StatefulSet): a pod whose lifecycle state is set and not
    ``Normal`` is not available."""
    counts = dict.fromkeys(
        ("replicas", "readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"),
        0,
    )
    for pod in pods:
        created = is_created(pod)
        if created:
            counts["replicas"] += 1
        if is_running_and_ready(pod):
            counts["readyReplicas"] += 1
            if is_running_and_available(pod, min_ready_seconds, now) and (
                not lifecycle_aware or lifecycle.is_normal(pod)
            ):
                counts["availableReplicas"] += 1
        if created and not is_terminating(pod):
            revision = pod_revision(pod)
            if revision == current_revision:
                counts["currentReplicas"] += 1
            if revision == update_revision:
                counts["updatedReplicas"] += 1
    return counts


class _StepError(Exception):
    """Several pods failed in one Parallel batch."""

    def __init__(self, errors: Sequence[BaseException]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(str(e) for e in self.errors))


def _run_for_all(count: int, fn: Callable[[int], bool], monotonic: bool) -> bool:
    """Upstream ``runForAll``: in order, stopping at the first ``True`` (monotonic); or in
    slow-start batches of 1, 2, 4, ... where a batch with errors ends the run (raised).
    Returns whether the pass must stop here."""
    if monotonic:
        return any(fn(i) for i in range(count))
    index, batch = 0, 1
    while index < count:
        size = min(batch, count - index, MAX_BATCH_SIZE)
        errors = call_each(fn, range(index, index + size))
        if errors:
            raise errors[0] if len(errors) == 1 else _StepError(errors)
        index += size
        batch = size * 2
    return False


class _Pass:
    """The state of one pass over a set's pods (upstream ``updateStatefulSet``)."""

    def __init__(
        self,
        control: StatefulSetControl,
        sts: Mapping[str, Any],
        current: Mapping[str, Any],
        update: Mapping[str, Any],
        collision_count: int,
        pods: Sequence[Pod],
        now: datetime,
        spec: SetSpec,
        revisions: Sequence[Mapping[str, Any]] = (),
        claims: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.control = control
        self.claims = (
            {meta.name(c): c for c in claims} if spec.resize_claims and is_enhanced(sts) else {}
        )
        self.pods_api = control.pod_control
        self.sts = sts
        self.key = set_key(sts)
        self.spec = spec
        self.now = now
        self.log = control.log
        self.enhanced = is_enhanced(sts)
        self.teardown = spec.teardown
        self.update_revision = update
        self.revisions = {meta.name(r): r for r in revisions}
        self.current_name = meta.name(current)
        self.update_name = meta.name(update)
        self.min_ready = spec.min_ready_seconds
        self.delays: list[float] = []
        """Seconds until in-place grace periods end."""
        self.failures: dict[str, tuple[str, str]] = {}
        """Condition type -> (reason, message) of what failed this pass."""
        self.rollout_checked = False
        #: Replicas deleted this pass for their specified-delete label (enhanced kind).
        self.specified_deleted: set[str] = set()
        # Read-only views of the set at each revision; one applies both when they are the
        # same revision (the common case: no rollout in progress).
        self.current_set: Mapping[str, Any] = apply_revision(sts, current)
        self.update_set: Mapping[str, Any] = (
            self.current_set
            if current is update or (self.current_name == self.update_name and current == update)
            else apply_revision(sts, update)
        )
        self.status: Obj = {
            "observedGeneration": meta.generation(sts),
            "currentRevision": self.current_name,
            "updateRevision": self.update_name,
            "collisionCount": collision_count,
        }
        self.scale_left: int | None = spec.scale_max_unavailable if self.enhanced else None
        """What is left of ``scaleStrategy.maxUnavailable`` while replicas are processed
        (Kruise ``decreaseAndCheckMaxUnavailable``); None: no limit."""
        self.scale_break = False
        """The replica loop stopped on the scale budget (the pass goes on)."""
        self.lifecycle_changed = False
        """A lifecycle state moved this pass (Kruise then skips the rolling update)."""
        self.status.update(
            compute_status(
                pods,
                self.min_ready,
                self.current_name,
                self.update_name,
                now,
                lifecycle_aware=self.enhanced,
            )
        )
        ordinals = spec.ordinals
        slot_of = {ordinal: i for i, ordinal in enumerate(ordinals)}
        slots: list[Pod | None] = [None] * len(ordinals)
        condemned: list[Pod] = []
        for existing in pods:
            ordinal = ordinal_of(existing)
            if ordinal in slot_of:
                slots[slot_of[ordinal]] = existing
            elif ordinal >= 0:
                condemned.append(existing)
        for i, ordinal in enumerate(ordinals):
            if slots[i] is None:
                slots[i] = self._new_pod(ordinal, slots)
        self.replicas: list[Pod] = [pod for pod in slots if pod is not None]
        self.condemned = sorted(condemned, key=ordinal_of, reverse=True)
        self.first_unhealthy: Pod | None = next(
            (p for p in [*self.replicas, *reversed(self.condemned)] if not self._healthy(p)), None
        )
        self.monotonic = spec.teardown or not spec.parallel

    def _new_pod(self, ordinal: int, slots: Sequence[Pod | None]) -> Pod:
        """The pod to create at ``ordinal``; under ``unorderedUpdate`` it stays at the current
        revision while fewer than ``partition`` other replicas are not updated (Kruise
        ``isCurrentRevisionNeeded``)."""
        current_needed: bool | None = None
        if self.spec.unordered and self.spec.strategy == "RollingUpdate":
            not_updated = sum(
                1
                for p in slots
                if p is not None
                and ordinal_of(p) != ordinal
                and pod_revision(p) != self.update_name
            )
            current_needed = not_updated < self.spec.partition
        pod = new_versioned_pod(
            self.current_set,
            self.update_set,
            self.current_name,
            self.update_name,
            ordinal,
            current_needed=current_needed,
        )
        if self.enhanced:
            inject_readiness_gate(pod.setdefault("spec", {}))
            if self.spec.lifecycle and (
                _marks(self.spec.pre_delete) or _marks(self.spec.in_place_update_hook)
            ):
                podreadiness.inject_gate(pod["spec"])
            hook = self.spec.pre_normal
            prepared = not self.spec.lifecycle or not hook or lifecycle.is_pod_all_hooked(hook, pod)
            lifecycle.set_state(
                pod, lifecycle.NORMAL if prepared else lifecycle.PREPARING_NORMAL, self.now
            )
        return pod

    # --- lifecycle (Kruise's StatefulSet) ----------------------------------------------------

    def _healthy(self, pod: Pod) -> bool:
        """Running, ready, not terminating; on the enhanced kind also in no lifecycle state
        but ``Normal`` (Kruise ``isHealthy``)."""
        if self.enhanced and not lifecycle.is_normal(pod):
            return False
        return is_healthy(pod)

    def _available(self, pod: Pod) -> bool:
        """Running and ready for ``minReadySeconds``; on the enhanced kind also in no lifecycle
        state but ``Normal`` (Kruise ``isRunningAndAvailable``)."""
        if self.enhanced and not lifecycle.is_normal(pod):
            return False
        return is_running_and_available(pod, self.min_ready, self.now)

    def _scale_exhausted(self) -> bool:
        """Kruise ``decreaseAndCheckMaxUnavailable``: take one from the scale budget; whether
        it is used up (then the replica loop stops: :attr:`scale_break`). No budget: False."""
        if self.scale_left is None:
            return False
        self.scale_left -= 1
        if self.scale_left <= 0:
            self.scale_break = True
            return True
        return False

    def _delete(self, pod: Pod) -> tuple[bool, bool]:
        """Kruise ``deletePod``: a pod its ``lifecycle.preDelete`` hook holds is moved to
        ``PreparingDelete`` and kept, else deleted. ``(modified, actually deleting)``."""
        hook = self.spec.pre_delete if self.enhanced else None
        if hook and lifecycle.is_pod_hooked(hook, pod):
            updated = self.pods_api.update_pod_lifecycle(
                self.sts, pod, lifecycle.PREPARING_DELETE, mark_not_ready=_marks(hook)
            )
            if updated:
                self.log.info(
                    "%s: pod %s held for its preDelete hook (PreparingDelete)",
                    self.key,
                    meta.name(pod),
                )
            return updated, False
        self.pods_api.delete_pod(self.sts, pod)
        return True, True

    def _lifecycle_target(self, pod: Pod) -> str:
        """The state ``pod`` moves to this pass, or "" (Kruise ``refreshPodState``):
        ``PreparingNormal`` -> ``Normal`` once the preNormal hook is all there;
        ``PreparingUpdate`` of a pod already at the update revision (a rollback) and
        ``Updating`` once the in-place update completed -> ``Updated`` while the inPlaceUpdate
        hook is not all back (with any ``lifecycle``), else ``Normal``; ``Updated`` ->
        ``Normal`` once the hook is all back."""
        spec, state = self.spec, lifecycle.get_state(pod)
        hook = spec.in_place_update_hook
        if state == lifecycle.PREPARING_NORMAL:
            pre_normal = spec.pre_normal
            ready = not spec.lifecycle or not pre_normal
            return lifecycle.NORMAL if ready or lifecycle.is_pod_all_hooked(pre_normal, pod) else ""
        if state == lifecycle.UPDATED:
            ready = not spec.lifecycle or not hook
            return lifecycle.NORMAL if ready or lifecycle.is_pod_all_hooked(hook, pod) else ""
        done = (state == lifecycle.PREPARING_UPDATE and pod_revision(pod) == self.update_name) or (
            state == lifecycle.UPDATING and check_update_completed(pod) is None
        )
        if not done:
            return ""
        if spec.lifecycle and not lifecycle.is_pod_all_hooked(hook, pod):
            return lifecycle.UPDATED
        return lifecycle.NORMAL

    def refresh_lifecycle(self) -> None:
        """Move every created pod whose lifecycle state is due to move
        (:meth:`_lifecycle_target`); :attr:`lifecycle_changed` when one was written."""
        mark = _marks(self.spec.in_place_update_hook)
        for pod in [*self.replicas, *self.condemned]:
            if not is_created(pod):
                continue
            target = self._lifecycle_target(pod)
            try:
                self.pods_api.ensure_readiness_condition(pod)
                if not target:
                    continue
                if self.pods_api.update_pod_lifecycle(self.sts, pod, target, mark_not_ready=mark):
                    self.lifecycle_changed = True
            except NotFound:
                continue

    def _in_place_hold(self, pod: Pod) -> tuple[bool, dict[str, str] | None]:
        """Kruise ``inPlaceUpdatePod``'s lifecycle step before an in-place update:
        ``(held, extra labels for the update)``. A ``Normal`` (or new) pod its inPlaceUpdate
        hook holds moves to ``PreparingUpdate``; an ``Updated`` pod goes back to
        ``PreparingUpdate`` with the hook's labels and finalizers put back; a
        ``PreparingUpdate`` pod waits while hooked; held pods count as being updated. A pod in
        another state (``PreparingDelete``) cannot be updated in place: an error."""
        spec, state = self.spec, lifecycle.get_state(pod)
        hook = spec.in_place_update_hook
        if state in ("", lifecycle.PREPARING_NORMAL, lifecycle.NORMAL):
            if spec.lifecycle and lifecycle.is_pod_hooked(hook, pod):
                self.pods_api.update_pod_lifecycle(
                    self.sts, pod, lifecycle.PREPARING_UPDATE, mark_not_ready=_marks(hook)
                )
                return True, None
        elif state == lifecycle.UPDATED:
            if hook is not None:
                self.pods_api.update_pod_lifecycle(
                    self.sts,
                    pod,
                    lifecycle.PREPARING_UPDATE,
                    hook=hook,
                    mark_not_ready=_marks(hook),
                )
            return True, None
        elif state == lifecycle.PREPARING_UPDATE:
            if lifecycle.is_pod_hooked(hook, pod):
                return True, None
        elif state != lifecycle.UPDATING:
            raise _LifecycleRefused(
                f"not allowed to in-place update pod {meta.name(pod)} in state {state}"
            )
        return False, ({lifecycle.LIFECYCLE_STATE_LABEL: lifecycle.UPDATING} if state else None)

    def refresh_status(self) -> None:
        self.status.update(
            compute_status(
                [*self.replicas, *self.condemned],
                self.min_ready,
                self.current_name,
                self.update_name,
                self.now,
                lifecycle_aware=self.enhanced,
            )
        )

    def run(self) -> None:
        sts = self.sts
        if meta.is_deleting(sts) and not self.teardown:
            return
        if self.enhanced:
            self.refresh_in_place()
            self.refresh_lifecycle()
        if self.scale_left is not None:
            # Kruise walks the replicas one by one while a scale budget is set
            # (runForAllWithBreak): an exhausted budget ends the loop, not the pass.
            for i in range(len(self.replicas)):
                if self.process_replica(i) and self.monotonic:
                    return
                if self.scale_break:
                    break
        elif _run_for_all(len(self.replicas), self.process_replica, self.monotonic):
            return
        if _run_for_all(len(self.condemned), self.fix_condemned_claims, self.monotonic):
            return
        if _run_for_all(len(self.condemned), self.process_condemned, self.monotonic):
            return
        self.refresh_status()
        if self.spec.strategy == "OnDelete" or self.teardown:
            return
        if self.lifecycle_changed:
            self.log.debug("%s: lifecycle states moved, rolling update next pass", self.key)
            return
        if self.spec.paused:
            self.log.debug("%s: rolling update paused", self.key)
            return
        self.rolling_update()

    # --- in-place updates ------------------------------------------------------------------

    def refresh_in_place(self) -> None:
        """Advance the in-place updates of the set's pods (grace periods, readiness gate)."""
        for pod in [*self.replicas, *self.condemned]:
            if not is_created(pod) or is_terminating(pod):
                continue
            try:
                _, left = self.control.in_place.refresh(pod)
            except NotFound:
                continue
            if left > 0:
                self.delays.append(left)

    # --- replicas --------------------------------------------------------------------------

    def process_replica(self, i: int) -> bool:
        pod, sts, api = self.replicas[i], self.sts, self.pods_api
        if is_failed(pod) or is_succeeded(pod):
            if self._scale_exhausted():
                return False  # Kruise: wait for pods to finish before exceeding the budget
            if not is_terminating(pod):
                what = "failed" if is_failed(pod) else "terminated"
                api.record(
                    sts,
                    "Warning",
                    "RecreatingFailedPod" if is_failed(pod) else "RecreatingTerminatedPod",
                    f"StatefulSet {self.key} is recreating {what} Pod {meta.name(pod)}",
                )
                self._delete(pod)
            return True  # recreated on a later pass, once the old pod is gone
        if not is_created(pod):
            if api.pod_claim_is_stale(sts, pod):
                self.log.info("%s: a claim of pod %s is stale, waiting", self.key, meta.name(pod))
                return True
            try:
                api.create_pod(sts, pod)
            except Exception as err:
                self.failures[FAILED_CREATE_POD] = (FAILED_CREATE_POD, str(err))
                raise
            if self.monotonic:
                return True
            if self._scale_exhausted():
                return False
        if is_pending(pod):
            api.create_missing_claims(sts, pod)
        if self.monotonic:
            if is_terminating(pod):
                self.log.debug("%s: waiting for pod %s to terminate", self.key, meta.name(pod))
                return True
            if not is_running_and_ready(pod):
                self.log.debug(
                    "%s: waiting for pod %s to be Running and Ready", self.key, meta.name(pod)
                )
                return True
            if not self._available(pod):
                self.log.debug("%s: waiting for pod %s to be available", self.key, meta.name(pod))
                return True
        elif self.scale_left is not None and (
            (is_terminating(pod) and self._scale_exhausted())
            or (is_created(pod) and not self._available(pod) and self._scale_exhausted())
        ):
            self.log.debug(
                "%s: scaleStrategy.maxUnavailable reached at pod %s", self.key, meta.name(pod)
            )
            return False
        if not is_created(pod):
            return False  # just created (Parallel): nothing to repair yet
        try:
            retention_match = api.claims_match_retention_policy(self.update_set, pod)
        except Exception:
            retention_match = True  # upstream: an incomplete pod counts as matching
        if identity_matches(sts, pod) and storage_matches(sts, pod) and retention_match:
            return False
        api.update_pod(self.update_set, _deep_copy(pod))
        return False

    # --- condemned -------------------------------------------------------------------------

    def fix_condemned_claims(self, i: int) -> bool:
        pod, api = self.condemned[i], self.pods_api
        if not api.claims_match_retention_policy(self.update_set, pod):
            api.update_claims_for_retention_policy(self.update_set, pod)
        return False

    def process_condemned(self, i: int) -> bool:
        pod = self.condemned[i]
        if is_terminating(pod):
            self.log.debug(
                "%s: waiting for pod %s to terminate before scale down",
                self.key,
                meta.name(pod),
            )
            return self.monotonic
        if self.monotonic and pod is not self.first_unhealthy and not self._available(pod):
            self.log.debug(
                "%s: waiting for pod %s before scale down",
                self.key,
                meta.name(self.first_unhealthy or pod),
            )
            return True
        self.log.info("%s: deleting pod %s for scale down", self.key, meta.name(pod))
        modified, _ = self._delete(pod)
        return modified

    # --- rolling update --------------------------------------------------------------------

    def rolling_update(self) -> None:
        sts, replicas = self.sts, self.replicas
        budget = self.spec.max_unavailable
        parallel = not self.monotonic
        unavailable = 0
        unavailable_old = 0
        unavailable_names: set[str] = set()
        for pod in replicas:
            if self._unavailable(pod):
                unavailable += 1
                unavailable_names.add(meta.name(pod))
                if parallel and self._old(pod) and not is_terminating(pod):
                    unavailable_old += 1
        if self.enhanced:
            self.specified_deleted = self._delete_specified(budget, unavailable_names)
            unavailable = len(unavailable_names)
        self.rollout_checked = True
        if self.enhanced:
            self._kruise_rolling_update(budget, unavailable_names)
            return
        if unavailable >= budget and unavailable_old == 0:
            self.log.debug(
                "%s: %d unavailable pods, maxUnavailable %d: waiting",
                self.key,
                unavailable,
                budget,
            )
            return
        targets = self._unordered_targets() if self.spec.unordered else self._ordered_targets()
        targets = [p for p in targets if meta.name(p) not in self.specified_deleted]
        try:
            if parallel:
                for pod in targets:
                    if not self._available(pod):
                        self._update_target(pod)
                remaining = budget - unavailable
                for pod in targets:
                    if remaining <= 0:
                        break
                    if self._available(pod):
                        self._update_target(pod)
                        remaining -= 1
                return
            for pod in targets[: budget - unavailable]:
                self._update_target(pod)
        except _InPlaceRefused as refused:
            message = str(refused)
            self.log.warning("%s: %s", self.key, message)
            self.failures[FAILED_UPDATE_POD] = ("InPlaceOnly", message)
            self.pods_api.record(sts, "Warning", FAILED_UPDATE_POD, message)

    def _kruise_rolling_update(self, budget: int, unavailable: set[str]) -> None:
        """Kruise ``rollingUpdateStatefulsetPods``' loop: the targets in update order; once
        ``maxUnavailable`` pods are unavailable, stop at the first target that is still
        available (an unavailable one, e.g. released from ``PreparingDelete``, is processed);
        each processed target counts as unavailable."""
        targets = self._unordered_targets() if self.spec.unordered else self._ordered_targets()
        try:
            for pod in targets:
                name = meta.name(pod)
                if name in self.specified_deleted:
                    continue
                if len(unavailable) >= budget and name not in unavailable:
                    self.log.debug(
                        "%s: %d unavailable pods, maxUnavailable %d: %s waits",
                        self.key,
                        len(unavailable),
                        budget,
                        name,
                    )
                    return
                self._update_target(pod)
                unavailable.add(name)
        except _InPlaceRefused as refused:
            message = str(refused)
            self.log.warning("%s: %s", self.key, message)
            self.failures[FAILED_UPDATE_POD] = ("InPlaceOnly", message)
            self.pods_api.record(self.sts, "Warning", FAILED_UPDATE_POD, message)

    def _delete_specified(self, budget: int, unavailable: set[str]) -> set[str]:
        """Kruise ``handleSpecifiedDeletedPods``: replicas labelled
        :data:`~controllers.statefulset.utils.SPECIFIED_DELETE_LABEL` are deleted, highest
        ordinal first, within ``maxUnavailable`` (an unavailable one always; the partition
        does not hold them back), each then counted unavailable (``unavailable`` grows); the
        names deleted. A missing ordinal is recreated at the revision the partition gives it."""
        deleted: set[str] = set()
        for pod in reversed(self.replicas):
            if SPECIFIED_DELETE_LABEL not in meta.labels(pod) or is_terminating(pod):
                continue
            name = meta.name(pod)
            if len(unavailable) >= budget and name not in unavailable:
                continue
            self.log.info("%s: deleting pod %s (%s)", self.key, name, SPECIFIED_DELETE_LABEL)
            _, deleting = self._delete(pod)
            deleted.add(name)
            unavailable.add(name)
            if not deleting:
                continue  # held in PreparingDelete by its preDelete hook
            revision = pod_revision(pod)
            field = {self.current_name: "currentReplicas", self.update_name: "updatedReplicas"}
            if revision in field:
                counted = field[revision]
                self.status[counted] = int(self.status.get(counted) or 0) - 1
        return deleted

    def _unavailable(self, pod: Pod) -> bool:
        if is_unavailable(pod, self.min_ready, self.now):
            return True
        if not self.enhanced:
            return False
        if not lifecycle.is_normal(pod):
            return True
        if check_update_completed(pod) is not None:
            return True
        return bool(self.claims) and not claims_ready(pod_claims(self.sts, pod, self.claims))

    def _target(self, pod: Pod) -> bool:
        """A rolling-update target: an old revision, or claims to expand (Kruise, with
        ``volumeClaimUpdateStrategy`` OnPodRollingUpdate)."""
        if self._old(pod):
            return True
        return bool(self.claims) and not claims_matched(pod_claims(self.sts, pod, self.claims))

    def _claims_resized(self, pod: Pod) -> bool:
        """Expand the pod's claims that need it (Kruise ``TryPatchPVC``); whether they all
        completed (``IsOwnedPVCsCompleted``). The API server refuses a claim whose storage
        class does not allow expansion: that error stops the pass."""
        pairs = pod_claims(self.sts, pod, self.claims)
        if not claims_matched(pairs):
            try:
                patches = resize_patches(self.sts, pairs)
            except ResizeError as err:
                self.pods_api.record(self.sts, "Warning", "FailedUpdatePVC", str(err))
                raise
            for name, patch in patches.items():
                try:
                    self.control.history.patch(
                        PersistentVolumeClaim, name, patch, namespace=meta.namespace(pod)
                    )
                except Exception as err:
                    self.pods_api.record(
                        self.sts, "Warning", "FailedUpdate", f"Resize Claim {name} failed: {err}"
                    )
                    raise
                self.pods_api.record(
                    self.sts,
                    "Normal",
                    "SuccessfulUpdate",
                    f"Resize Claim {name} in StatefulSet {meta.name(self.sts)} success",
                )
            return False  # the cache shows the old claims this pass
        return claims_completed(pairs)

    def _ordered_targets(self) -> list[Pod]:
        """Old, non-terminating replicas from the highest ordinal down to ``start + partition``."""
        first = self.spec.start + self.spec.partition
        return [
            pod
            for pod in reversed(self.replicas)
            if ordinal_of(pod) >= first and self._target(pod) and not is_terminating(pod)
        ]

    def _unordered_targets(self) -> list[Pod]:
        """Kruise ``sortPodsToUpdate`` under ``unorderedUpdate``: updated (or terminating) pods
        first, then the old ones by priority, cut to ``replicas - partition``; the old ones of
        that cut."""
        replicas = self.replicas
        max_update = len(replicas) - self.spec.partition
        if max_update <= 0:
            return []
        done: list[int] = []
        waiting: list[int] = []
        for i in range(len(replicas) - 1, -1, -1):
            pod = replicas[i]
            (done if is_terminating(pod) or not self._target(pod) else waiting).append(i)
        waiting = priority_sort(self.spec.priority_strategy, replicas, waiting)
        chosen = set((done + waiting)[:max_update])
        return [replicas[i] for i in waiting if i in chosen]

    def _old(self, pod: Pod) -> bool:
        return pod_revision(pod) != self.update_name

    def _update_target(self, pod: Pod) -> None:
        """Bring ``pod`` to the update revision: in place when the policy allows and the change
        is in-place-able, else by deleting it (raises :class:`_InPlaceRefused` under
        InPlaceOnly)."""
        sts = self.sts
        policy = self.spec.pod_update_policy
        if self.claims and not self._claims_resized(pod):
            return  # counted unavailable until the claims are resized
        if not self._old(pod):
            return
        try:
            if policy in (IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY):
                spec = calculate_in_place_spec(
                    self.revisions.get(pod_revision(pod)), self.update_revision
                )
                if spec is not None:
                    held, extra_labels = (
                        self._in_place_hold(pod) if self.enhanced else (False, None)
                    )
                    if held:  # Kruise counts it as being updated
                        if pod_revision(pod) == self.current_name:
                            self.status["currentReplicas"] = (
                                int(self.status.get("currentReplicas") or 0) - 1
                            )
                        return
                    self.log.info("%s: updating pod %s in place", self.key, meta.name(pod))
                    delay = self.control.in_place.update(
                        pod,
                        spec,
                        grace_seconds=self.spec.grace_period_seconds,
                        extra_labels=extra_labels,
                        extra_annotations=(
                            lifecycle.state_patch(lifecycle.UPDATING, self.now)["metadata"][
                                "annotations"
                            ]
                            if extra_labels
                            else None
                        ),
                    )
                    if delay > 0:
                        self.delays.append(delay)
                    self.pods_api.record(
                        sts,
                        "Normal",
                        "SuccessfulUpdatePodInPlace",
                        f"successfully update pod {meta.name(pod)} in-place "
                        f"(revision {self.update_name})",
                    )
                    self.status["currentReplicas"] = (
                        int(self.status.get("currentReplicas") or 0) - 1
                    )
                    return
                if policy == IN_PLACE_ONLY:
                    raise _InPlaceRefused(
                        f"podUpdatePolicy InPlaceOnly: pod {meta.name(pod)} cannot be updated in "
                        f"place to revision {self.update_name} (only container images and "
                        "template labels/annotations may change); no pod is deleted"
                    )
            self._delete_for_update(pod)
        except (_InPlaceRefused, _LifecycleRefused, NotFound):
            raise
        except Exception as err:
            self.failures[FAILED_UPDATE_POD] = (FAILED_UPDATE_POD, str(err))
            raise

    def _delete_for_update(self, pod: Pod) -> None:
        self.log.info("%s: deleting pod %s for update", self.key, meta.name(pod))
        try:
            _, deleting = self._delete(pod)
        except NotFound:
            deleting = True
        if deleting:
            self.status["currentReplicas"] = int(self.status.get("currentReplicas") or 0) - 1

    # --- minReadySeconds -------------------------------------------------------------------

    def next_available_in(self) -> float | None:
        """Seconds until the next ready pod becomes available, if any will."""
        if self.min_ready <= 0:
            return None
        waits = []
        for pod in [*self.replicas, *self.condemned]:
            if is_running_and_ready(pod):
                available, left = is_available(pod, self.min_ready, self.now)
                if not available and left is not None:
                    waits.append(left + _REQUEUE_SLACK)
        return min(waits) if waits else None

    def requeue_after(self) -> float | None:
        """Seconds until a pod becomes available or an in-place grace period ends, if any."""
        waits = [d for d in self.delays if d > 0]
        available = self.next_available_in()
        if available is not None:
            waits.append(available)
        return min(waits) if waits else None

    # --- enhanced status -------------------------------------------------------------------

    def enhanced_status(self, claims: Sequence[Mapping[str, Any]], error: bool) -> None:
        """Add the enhanced kind's status fields and conditions to :attr:`status`."""
        sts, status = self.sts, self.status
        pods = [p for p in [*self.replicas, *self.condemned] if is_created(p)]
        updated_ready = updated_available = 0
        for pod in pods:
            if is_terminating(pod) or pod_revision(pod) != self.update_name:
                continue
            if is_running_and_ready(pod):
                updated_ready += 1
                if self._available(pod):
                    updated_available += 1
        status["updatedReadyReplicas"] = updated_ready
        status["updatedAvailableReplicas"] = updated_available
        try:
            status["labelSelector"] = str(label_selector_from_dict(meta.spec(sts).get("selector")))
        except ValueError:
            pass
        status["volumeClaims"] = _volume_claims_status(sts, self.replicas, claims)
        previous = meta.status(sts)
        create_failure = self.failures.get(FAILED_CREATE_POD)
        if create_failure is not None or not error:
            set_condition(status, previous, FAILED_CREATE_POD, create_failure, self.now)
        update_failure = self.failures.get(FAILED_UPDATE_POD)
        if update_failure is not None or self.rollout_checked:
            set_condition(status, previous, FAILED_UPDATE_POD, update_failure, self.now)
        if "conditions" not in status and previous.get("conditions"):
            status["conditions"] = list(previous["conditions"])


def _marks(hook: Mapping[str, Any] | None) -> bool:
    """The hook's ``markPodNotReady``."""
    return bool(hook and hook.get("markPodNotReady"))


class _InPlaceRefused(Exception):
    """InPlaceOnly and the change is not in-place-able (a user error: a condition, no retry)."""


class _LifecycleRefused(Exception):
    """An in-place update target is in a lifecycle state that forbids it (``PreparingDelete``):
    the pass fails and is retried, without a condition (Kruise)."""


def _claim_matches(claim: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    want, have = meta.spec(template), meta.spec(claim)
    if (want.get("resources") or {}).get("requests") != (have.get("resources") or {}).get(
        "requests"
    ):
        return False
    if sorted(want.get("accessModes") or ()) != sorted(have.get("accessModes") or ()):
        return False
    cls = want.get("storageClassName")
    return cls is None or cls == have.get("storageClassName")


def _volume_claims_status(
    sts: Mapping[str, Any], replicas: Sequence[Pod], claims: Sequence[Mapping[str, Any]]
) -> list[Obj]:
    """Per claim template: how many created replicas (and ready ones) have a claim whose
    requests, access modes and storage class match the template."""
    templates = meta.spec(sts).get("volumeClaimTemplates") or ()
    if not templates:
        return []
    by_name = {meta.name(c): c for c in claims}
    counts = {meta.name(t): [0, 0] for t in templates}
    by_template = {meta.name(t): t for t in templates}
    for pod in replicas:
        if not is_created(pod):
            continue
        for template_name, claim in claims_for_pod(sts, pod).items():
            current = by_name.get(meta.name(claim))
            template = by_template.get(template_name)
            if current is None or template is None or not _claim_matches(current, template):
                continue
            counts[template_name][0] += 1
            if is_running_and_ready(pod):
                counts[template_name][1] += 1
    return [
        {"volumeClaimName": name, "compatibleReplicas": n, "compatibleReadyReplicas": ready}
        for name, (n, ready) in counts.items()
    ]


def _deep_copy(pod: Pod) -> Obj:
    return meta.deep_copy(dict(pod))


class StatefulSetControl:
    """Runs :meth:`update` for one set per call; stateless between calls.

    ``history`` creates/reads/updates/deletes ControllerRevisions (a client); ``clock`` (a
    :class:`~kube_runtime.clock.Clock`; None: the clock current when the control is made)
    gives the time of each pass (minReadySeconds, condition and lifecycle timestamps) and
    the default in-place control's.
    """

    def __init__(
        self,
        pod_control: PodControl,
        status_updater: StatusUpdater,
        history: Client,
        *,
        clock: Clock | Callable[[], datetime] | None = None,
        in_place: InPlaceControl | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.pod_control = pod_control
        self.status_updater = status_updater
        self.history = history
        self.log = logger if logger is not None else log
        self.now: Callable[[], datetime]
        """The time of a pass (the clock's ``now``)."""
        if clock is not None and not hasattr(clock, "monotonic"):
            warnings.warn(
                "StatefulSetControl: a bare now() function as clock is deprecated; pass a"
                " kube_runtime.clock.Clock (FakeClock in tests)",
                DeprecationWarning,
                stacklevel=2,
            )
            self.clock: Clock = resolve(None, "StatefulSetControl")
            self.now = clock
        else:
            self.clock = resolve(clock, "StatefulSetControl")  # type: ignore[arg-type]
            self.now = self.clock.now
        self.in_place = in_place if in_place is not None else InPlaceControl(history, self.now)

    def update(
        self,
        sts: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
        pods: Sequence[Pod],
        claims: Sequence[Mapping[str, Any]] = (),
        *,
        spec: SetSpec | None = None,
    ) -> SyncResult:
        """One pass over ``sts`` (see the module docstring). ``revisions`` are the set's
        ControllerRevisions (adopted already), ``pods`` the pods it controls, ``claims`` the
        namespace's claims (the enhanced kind's ``status.volumeClaims``), ``spec`` the set's
        :class:`~controllers.statefulset.spec.SetSpec` if the caller read it already. Raises
        :class:`~controllers.statefulset.spec.InvalidSpecError` before any effect when the
        spec cannot be acted on; otherwise the first error of a step, after writing the
        status computed so far and truncating history."""
        if spec is None:
            spec = SetSpec.of(sts, teardown=in_ordered_teardown(sts))
        ordered = sort_revisions(revisions)
        current, update, collision_count = resolve_revisions(
            self.history, sts, ordered, controller_kind=kind_of(sts)
        )
        state = _Pass(
            self,
            sts,
            current,
            update,
            collision_count,
            pods,
            self.now(),
            spec,
            [*ordered, update],
            claims,
        )
        error: BaseException | None = None
        try:
            state.run()
        except Exception as err:
            error = err
            state.refresh_status()
        status = state.status
        if state.enhanced:
            state.enhanced_status(claims, error is not None)
        clear_invalid_spec(status, meta.status(sts), state.now)
        complete_rolling_update(sts, status)
        try:
            if status_changed(sts, status):
                self.status_updater.update_status(sts, status)
        except Exception as err:
            if error is None:
                error = err
        try:
            truncate_history(
                self.history, ordered, pods, current, update, spec.revision_history_limit
            )
        except Exception as err:
            if error is None:
                error = err
        if error is not None:
            raise error
        self.log.debug(
            "%s: synced; revisions current=%s update=%s",
            state.key,
            state.current_name,
            state.update_name,
        )
        return SyncResult(status, current, update, state.requeue_after())
