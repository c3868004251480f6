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
   Parallel processes all replicas (slow-start batches whose steps run concurrently, an
   error ends the pass after its batch).
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
extensions (openkruise ``statefulset/stateful_set_control.go``). Each decision the kinds make
differently is a :class:`~controllers.statefulset.strategy.SetStrategy`'s: a pass asks its
strategy, :class:`~controllers.statefulset.strategy.AppsV1Strategy` answers as
kube-controller-manager (none of the extensions below), and
:class:`~controllers.statefulset.strategy.EnhancedStrategy` as Kruise:

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

from controllers.statefulset.spec import IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY, StatefulSetView
from controllers.statefulset.status import (
    FAILED_CREATE_POD,
    FAILED_UPDATE_POD,
    StatusUpdater,
    clear_invalid_spec,
    complete_rolling_update,
)
from controllers.statefulset.strategy import (
    InPlaceRefused,
    LifecycleRefused,
    SetStrategy,
    selector_text,
    strategy_for,
)
from controllers.statefulset.utils import (
    PodFacts,
    identity_matches,
    in_ordered_teardown,
    kind_of,
    new_versioned_pod,
    pod_revision,
    set_key,
    storage_matches,
)
from kube_runtime import meta
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Client
from kube_runtime.clock import Clock, resolve
from kube_runtime.meta import Obj
from kube_runtime.meta import ObjView as Pod
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.batches import DEFAULT_LIMIT, call_each, in_order
from kube_runtime.workloads.inplace import InPlaceControl, calculate_in_place_spec
from kube_runtime.workloads.pods import is_available
from kube_runtime.workloads.revision import (
    next_revision_number,
    resolve_revisions,
    revision_from_object,
    revision_view,
    sort_revisions,
    truncate_history,
)

__all__ = ["PodControl", "StatefulSetControl", "SyncResult", "compute_status"]

log = logging.getLogger(__name__)


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
    return _count(
        [PodFacts(pod, min_ready_seconds, now) for pod in pods],
        current_revision,
        update_revision,
        lifecycle_aware=lifecycle_aware,
    )


def _count(
    facts: Sequence[PodFacts],
    current_revision: str,
    update_revision: str,
    *,
    lifecycle_aware: bool = False,
) -> dict[str, int]:
    """:func:`compute_status` over pods read already."""
    replicas = ready = available = current = updated = 0
    for pod in facts:
        if pod.created:
            replicas += 1
        if pod.running_and_ready:
            ready += 1
            if pod.available and (not lifecycle_aware or lifecycle.is_normal(pod.pod)):
                available += 1
        if pod.created and not pod.terminating:
            if pod.revision == current_revision:
                current += 1
            if pod.revision == update_revision:
                updated += 1
    return {
        "replicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": available,
        "currentReplicas": current,
        "updatedReplicas": updated,
    }


class _StepError(Exception):
    """Several pods failed in one Parallel batch."""

    def __init__(self, errors: Sequence[BaseException]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(str(e) for e in self.errors))


def _run_for_all(
    count: int,
    fn: Callable[[int], bool],
    monotonic: bool,
    limit: int = DEFAULT_LIMIT,
    busy: Callable[[int], bool] | None = None,
) -> bool:
    """Upstream ``runForAll``: in order, stopping at the first ``True`` (monotonic); or in
    slow-start batches of 1, 2, 4, ... whose steps run concurrently (at most ``limit`` at a
    time; ``busy``: which steps may write, see
    :func:`~kube_runtime.workloads.batches.call_each`) and where a batch with errors ends the
    run (raised) once all its steps have ended. Returns whether the pass must stop here."""
    if monotonic:
        return any(fn(i) for i in range(count))
    index, batch = 0, 1
    while index < count:
        size = min(batch, count - index, MAX_BATCH_SIZE)
        errors = call_each(fn, range(index, index + size), limit=limit, busy=busy)
        if errors:
            raise errors[0] if len(errors) == 1 else _StepError(errors)
        index += size
        batch = size * 2
    return False


_UNRENDERED: Any = object()
"""The pass renders the selector itself when first asked."""


class _Pass:
    """The state of one pass over a set's pods (upstream ``updateStatefulSet``); each decision
    a kind makes differently is its ``strategy``'s (:class:`~.strategy.SetStrategy`)."""

    def __init__(
        self,
        control: StatefulSetControl,
        sts: Mapping[str, Any],
        current: Mapping[str, Any],
        update: Mapping[str, Any],
        collision_count: int,
        pods: Sequence[Pod],
        now: datetime,
        spec: StatefulSetView,
        revisions: Sequence[Mapping[str, Any]] = (),
        claims: Sequence[Mapping[str, Any]] = (),
        *,
        strategy: SetStrategy,
        selector: Any = _UNRENDERED,
    ) -> None:
        self.strategy = strategy
        self.claims: dict[str, Mapping[str, Any]] = (
            {meta.name(c): c for c in claims} if strategy.resizes_claims(spec) else {}
        )
        self.pods_api = control.pod_control
        self.limit = control.batch_limit
        """Steps of one Parallel batch that run at a time. A step (:meth:`process_replica`,
        :meth:`fix_condemned_claims`, :meth:`process_condemned`) only reads the pass's state
        and hands what it changes (events, :attr:`failures`) to
        :func:`~kube_runtime.workloads.batches.in_order`."""
        self.in_place = control.in_place
        self.history = control.history
        self.sts = sts
        self.key = set_key(sts)
        self.spec = spec
        self.now = now
        self.log = control.log
        self._selector: Any = selector
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
        # Read-only views of the set at each revision (sharing the set's and the revisions'
        # objects: nothing a pass calls writes to them, new pods and claims are copies); one
        # applies both when they are the same revision (the common case: no rollout).
        view = control._views.view
        self.current_set: Mapping[str, Any] = view(sts, current)
        self.update_set: Mapping[str, Any] = (
            self.current_set
            if current is update or (self.current_name == self.update_name and current == update)
            else view(sts, update)
        )
        self.status: Obj = {
            "observedGeneration": meta.generation(sts),
            "currentRevision": self.current_name,
            "updateRevision": self.update_name,
            "collisionCount": collision_count,
        }
        self.scale_left: int | None = strategy.scale_budget(spec)
        """What is left of the strategy's scale budget while replicas are processed (Kruise
        ``decreaseAndCheckMaxUnavailable``); None: no limit."""
        self.scale_break = False
        """The replica loop stopped on the scale budget (the pass goes on)."""
        self.lifecycle_changed = False
        """A lifecycle state moved this pass (Kruise then skips the rolling update)."""
        self.replicas: list[Pod] = []
        self.condemned: list[Pod] = []
        self._facts: dict[int, PodFacts] = {}
        """:meth:`facts` by ``id`` of the pod (each holds its pod)."""
        facts = [self.facts(pod) for pod in pods]
        self._initial_counts = self._counts(facts)
        self.status.update(self._initial_counts)
        ordinals = strategy.ordinals(spec)
        slot_of = {ordinal: i for i, ordinal in enumerate(ordinals)}
        slots: list[Pod | None] = [None] * len(ordinals)
        condemned: list[Pod] = []
        for existing_facts in facts:
            existing, ordinal = existing_facts.pod, existing_facts.ordinal
            if ordinal in slot_of:
                slots[slot_of[ordinal]] = existing
            elif ordinal >= 0:
                condemned.append(existing)
        self._counted = len(condemned) + sum(1 for s in slots if s is not None) == len(pods)
        """Every pod is a replica or condemned (none without an ordinal, no two of one
        ordinal): the counts taken of ``pods`` are those of the replicas and the condemned
        pods (a pod to create counts for nothing), so :meth:`refresh_status` reuses them."""
        self.monotonic = spec.teardown or not spec.parallel
        for i, ordinal in enumerate(ordinals):
            if slots[i] is None:
                slots[i] = self._new_pod(ordinal, slots)
                if self.monotonic:
                    # An ordered pass ends at its first missing replica (it creates that pod,
                    # or waits for a stale claim): no later missing one is read, and a pod not
                    # created counts for nothing in the status. They are not built (building
                    # one costs more than the rest of a pass over a converged pod).
                    break
        self.replicas = [pod for pod in slots if pod is not None]
        """The replicas, ascending: existing pods and the pods to create (an ordered pass:
        the first pod to create only)."""
        self.condemned = sorted(condemned, key=lambda pod: self.facts(pod).ordinal, reverse=True)
        self.first_unhealthy: Pod | None = next(
            (p for p in [*self.replicas, *reversed(self.condemned)] if not self._healthy(p)), None
        )

    @property
    def selector(self) -> str | None:
        """``spec.selector`` as canonical text (None: invalid): the caller's, else rendered
        when first asked."""
        if self._selector is _UNRENDERED:
            self._selector = selector_text(self.sts)
        return self._selector

    def facts(self, pod: Pod) -> PodFacts:
        """What the pass reads of ``pod``'s state (:class:`~.utils.PodFacts`), read once."""
        found = self._facts.get(id(pod))
        if found is None or found.pod is not pod:
            found = self._facts[id(pod)] = PodFacts(pod, self.min_ready, self.now)
        return found

    def _counts(self, facts: Sequence[PodFacts]) -> dict[str, int]:
        return _count(
            facts,
            self.current_name,
            self.update_name,
            lifecycle_aware=self.strategy.lifecycle_aware,
        )

    def _new_pod(self, ordinal: int, slots: Sequence[Pod | None]) -> Pod:
        """The pod to create at ``ordinal``, at the revision the strategy or the ordinal
        picks, with what the strategy adds."""
        pod = new_versioned_pod(
            self.current_set,
            self.update_set,
            self.current_name,
            self.update_name,
            ordinal,
            current_needed=self.strategy.current_needed(self, ordinal, slots),
        )
        self.strategy.prepare_new_pod(self, pod)
        return pod

    # --- pod states --------------------------------------------------------------------------

    def _healthy(self, pod: Pod) -> bool:
        """Running, ready, not terminating; with a lifecycle-aware strategy also in no
        lifecycle state but ``Normal`` (Kruise ``isHealthy``)."""
        if self.strategy.lifecycle_aware and not lifecycle.is_normal(pod):
            return False
        return self.facts(pod).healthy

    def available(self, pod: Pod) -> bool:
        """Running and ready for ``minReadySeconds``; with a lifecycle-aware strategy also in
        no lifecycle state but ``Normal`` (Kruise ``isRunningAndAvailable``)."""
        if self.strategy.lifecycle_aware and not lifecycle.is_normal(pod):
            return False
        return self.facts(pod).available

    def _unavailable(self, pod: Pod) -> bool:
        """Counts against ``maxUnavailable``: unhealthy or not available, or so the strategy
        says."""
        if self.facts(pod).unavailable:
            return True
        return self.strategy.unavailable(self, pod)

    def _old(self, pod: Pod) -> bool:
        return self.facts(pod).revision != self.update_name

    def target(self, pod: Pod) -> bool:
        """A rolling-update target: an old revision, or claims behind (per the strategy)."""
        return self._old(pod) or self.strategy.claims_behind(self, pod)

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

    def delete(self, pod: Pod) -> tuple[bool, bool]:
        """Delete ``pod`` unless the strategy holds it (Kruise ``deletePod``:
        ``PreparingDelete``); ``(modified, actually deleting)``."""
        held = self.strategy.hold_delete(self, pod)
        if held is not None:
            return held, False
        self.pods_api.delete_pod(self.sts, pod)
        return True, True

    def refresh_status(self) -> None:
        """Reset the status counts to those of the replicas and the condemned pods (the pods
        do not change during a pass: the counts taken when it began, unless a pod was left
        out of both)."""
        if self._counted:
            self.status.update(self._initial_counts)
            return
        self.status.update(self._counts([self.facts(p) for p in [*self.replicas, *self.condemned]]))

    def run(self) -> None:
        sts = self.sts
        if meta.is_deleting(sts) and not self.teardown:
            return
        self.strategy.refresh(self)
        if self.scale_left is not None:
            # Kruise walks the replicas one by one while a scale budget is set
            # (runForAllWithBreak): an exhausted budget ends the loop, not the pass.
            for i in range(len(self.replicas)):
                if self.process_replica(i) and self.monotonic:
                    return
                if self.scale_break:
                    break
        elif _run_for_all(
            len(self.replicas),
            self.process_replica,
            self.monotonic,
            self.limit,
            self._replica_busy,
        ):
            return
        condemned = len(self.condemned)
        if _run_for_all(condemned, self.fix_condemned_claims, self.monotonic, self.limit):
            return
        if _run_for_all(
            condemned,
            self.process_condemned,
            self.monotonic,
            self.limit,
            lambda i: not self.facts(self.condemned[i]).terminating,
        ):
            return
        self.refresh_status()
        if self.spec.strategy == "OnDelete" or self.teardown:
            return
        hold = self.strategy.rollout_hold(self)
        if hold is not None:
            self.log.debug("%s: %s", self.key, hold)
            return
        self.rolling_update()

    # --- replicas --------------------------------------------------------------------------

    def _replica_busy(self, i: int) -> bool:
        """Whether :meth:`process_replica` will write for replica ``i`` on a Parallel pass
        (so is worth a thread): it creates or recreates the pod. What is rare is not counted
        (a Pending pod's missing claims: a pod is created with them; the repair of an
        existing pod's identity, storage or claim owners): it runs all the same, on the
        caller's thread when its batch has no other write."""
        facts = self.facts(self.replicas[i])
        return not facts.created or facts.failed or facts.succeeded

    def process_replica(self, i: int) -> bool:
        pod, sts, api = self.replicas[i], self.sts, self.pods_api
        facts = self.facts(pod)
        if facts.failed or facts.succeeded:
            if self._scale_exhausted():
                return False  # Kruise: wait for pods to finish before exceeding the budget
            if not facts.terminating:
                what = "failed" if facts.failed else "terminated"
                reason = "RecreatingFailedPod" if facts.failed else "RecreatingTerminatedPod"
                message = f"StatefulSet {self.key} is recreating {what} Pod {meta.name(pod)}"
                in_order(lambda: api.record(sts, "Warning", reason, message))
                self.delete(pod)
            return True  # recreated on a later pass, once the old pod is gone
        if not facts.created:
            if api.pod_claim_is_stale(sts, pod):
                self.log.info("%s: a claim of pod %s is stale, waiting", self.key, meta.name(pod))
                return True
            try:
                api.create_pod(sts, pod)
            except Exception as err:
                failure = (FAILED_CREATE_POD, str(err))
                in_order(lambda: self.failures.__setitem__(FAILED_CREATE_POD, failure))
                raise
            if self.monotonic:
                return True
            if self._scale_exhausted():
                return False
        if facts.pending:
            api.create_missing_claims(sts, pod)
        if self.monotonic:
            if facts.terminating:
                self.log.debug("%s: waiting for pod %s to terminate", self.key, meta.name(pod))
                return True
            if not facts.running_and_ready:
                self.log.debug(
                    "%s: waiting for pod %s to be Running and Ready", self.key, meta.name(pod)
                )
                return True
            if not self.available(pod):
                self.log.debug("%s: waiting for pod %s to be available", self.key, meta.name(pod))
                return True
        elif self.scale_left is not None and (
            (facts.terminating and self._scale_exhausted())
            or (facts.created and not self.available(pod) and self._scale_exhausted())
        ):
            self.log.debug(
                "%s: scaleStrategy.maxUnavailable reached at pod %s", self.key, meta.name(pod)
            )
            return False
        if not facts.created:
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
        if self.facts(pod).terminating:
            self.log.debug(
                "%s: waiting for pod %s to terminate before scale down",
                self.key,
                meta.name(pod),
            )
            return self.monotonic
        if self.monotonic and pod is not self.first_unhealthy and not self.available(pod):
            self.log.debug(
                "%s: waiting for pod %s before scale down",
                self.key,
                meta.name(self.first_unhealthy or pod),
            )
            return True
        self.log.info("%s: deleting pod %s for scale down", self.key, meta.name(pod))
        modified, _ = self.delete(pod)
        return modified

    # --- rolling update --------------------------------------------------------------------

    def rolling_update(self) -> None:
        """One loop for both kinds: the strategy's targets, in the order its gate offers them,
        each updated while the gate admits it (``maxUnavailable``); the first refused ends the
        update. InPlaceOnly refusing a change ends it with the ``FailedUpdatePod`` condition."""
        budget = self.spec.max_unavailable
        unavailable = {meta.name(pod) for pod in self.replicas if self._unavailable(pod)}
        skipped = self.strategy.before_rollout(self, budget, unavailable)
        self.rollout_checked = True
        gate = self.strategy.rollout_gate(budget, unavailable, not self.monotonic)
        targets = [p for p in self.strategy.update_targets(self) if meta.name(p) not in skipped]
        try:
            for pod in gate.order(targets, self.available):
                if not gate.admits(pod):
                    self.log.debug(
                        "%s: maxUnavailable %d reached: %s waits", self.key, budget, meta.name(pod)
                    )
                    return
                self._update_target(pod)
        except InPlaceRefused as refused:
            message = str(refused)
            self.log.warning("%s: %s", self.key, message)
            self.failures[FAILED_UPDATE_POD] = ("InPlaceOnly", message)
            self.pods_api.record(self.sts, "Warning", FAILED_UPDATE_POD, message)

    def _update_target(self, pod: Pod) -> None:
        """Bring ``pod`` to the update revision once the strategy has it ready: in place when
        its policy allows and the change is in-place-able, else by deleting it (raises
        :class:`~.strategy.InPlaceRefused` under InPlaceOnly)."""
        policy = self.strategy.in_place_policy(self.spec)
        if not self.strategy.ready_to_update(self, pod):
            return  # counted unavailable until it is
        if not self._old(pod):
            return
        try:
            if policy in (IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY):
                spec = calculate_in_place_spec(
                    self.revisions.get(pod_revision(pod)), self.update_revision
                )
                if spec is not None:
                    self._update_in_place(pod, spec)
                    return
                if policy == IN_PLACE_ONLY:
                    raise InPlaceRefused(
                        f"podUpdatePolicy InPlaceOnly: pod {meta.name(pod)} cannot be updated in "
                        f"place to revision {self.update_name} (only container images and "
                        "template labels/annotations may change); no pod is deleted"
                    )
            self._delete_for_update(pod)
        except (InPlaceRefused, LifecycleRefused, NotFound):
            raise
        except Exception as err:
            self.failures[FAILED_UPDATE_POD] = (FAILED_UPDATE_POD, str(err))
            raise

    def _update_in_place(self, pod: Pod, spec: Any) -> None:
        held, extra_labels = self.strategy.hold_in_place(self, pod)
        if held:  # Kruise counts it as being updated
            if pod_revision(pod) == self.current_name:
                self._uncount_current()
            return
        self.log.info("%s: updating pod %s in place", self.key, meta.name(pod))
        delay = self.in_place.update(
            pod,
            spec,
            grace_seconds=self.spec.grace_period_seconds,
            extra_labels=extra_labels,
            extra_annotations=(
                lifecycle.state_patch(lifecycle.UPDATING, self.now)["metadata"]["annotations"]
                if extra_labels
                else None
            ),
        )
        if delay > 0:
            self.delays.append(delay)
        self.pods_api.record(
            self.sts,
            "Normal",
            "SuccessfulUpdatePodInPlace",
            f"successfully update pod {meta.name(pod)} in-place (revision {self.update_name})",
        )
        self._uncount_current()

    def _uncount_current(self) -> None:
        self.status["currentReplicas"] = int(self.status.get("currentReplicas") or 0) - 1

    def _delete_for_update(self, pod: Pod) -> None:
        self.log.info("%s: deleting pod %s for update", self.key, meta.name(pod))
        try:
            _, deleting = self.delete(pod)
        except NotFound:
            deleting = True
        if deleting:
            self._uncount_current()

    # --- minReadySeconds -------------------------------------------------------------------

    def next_available_in(self) -> float | None:
        """Seconds until the next ready pod becomes available, if any will."""
        if self.min_ready <= 0:
            return None
        waits = []
        for pod in [*self.replicas, *self.condemned]:
            if self.facts(pod).running_and_ready:
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


def _deep_copy(pod: Pod) -> Obj:
    return meta.deep_copy(dict(pod))


_REVISION_MEMO_SIZE = 10_000


class _RevisionMemo:
    """The revision each set's spec makes (:func:`revision_from_object`, serialized and
    hashed), kept per set (uid) while what it is built from stays the same: the same
    ``spec.template`` object (what the revision records, template labels included), equal
    generation, annotations, name, namespace, apiVersion and kind, revision number and
    collision count. The passes of one version of a set (a running controller's cache hands
    out the same objects), and of the later versions that only changed its status or
    metadata (the cache shares an unchanged ``spec`` with the version before), build it
    once; a set read as a fresh copy (a fake client) never hits. A hit returns the revision
    built before, which nobody changes (:func:`resolve_revisions` only reads the one it
    builds, and copies it to create it)."""

    def __init__(self) -> None:
        self._by_uid: dict[Any, tuple[tuple[Any, ...], Any, Obj]] = {}

    def new(self, controller_kind: Any) -> Callable[[Mapping[str, Any], int, int], Obj]:
        def build(parent: Mapping[str, Any], number: int, collision_count: int) -> Obj:
            parent_meta = parent.get("metadata") or {}
            template = (parent.get("spec") or {}).get("template")
            key = (
                parent_meta.get("generation"),
                parent_meta.get("name"),
                parent_meta.get("namespace"),
                parent.get("apiVersion"),
                parent.get("kind"),
                number,
                collision_count,
                parent_meta.get("annotations"),
            )
            uid = parent_meta.get("uid")
            cached = self._by_uid.get(uid) if uid else None
            if cached is not None and cached[1] is template and cached[0] == key:
                return cached[2]
            revision = revision_from_object(
                parent, number, collision_count, controller_kind=controller_kind
            )
            if uid and template is not None:
                if len(self._by_uid) >= _REVISION_MEMO_SIZE:
                    self._by_uid.clear()
                self._by_uid[uid] = (key, template, revision)
            return revision

        return build


class _ViewMemo:
    """The set at a revision (:func:`revision_view`), the patched parts kept per set (uid)
    and revision name: a revision's data patches the set's top-level fields it names (a
    StatefulSet revision: ``spec``), so the view is the set with those fields patched, and
    the patched fields are made again only when the revision object or one of those fields
    of the set is another object. A running controller's cache hands out the same objects
    until they change and shares a set's unchanged ``spec`` with its next version (a status
    write), as does the status writer's view: the passes of a set apply each revision once
    per spec. Like :class:`_RevisionMemo`, it relies on an object passed again being
    unchanged (cached objects are never changed in place); a fresh copy never hits. Data
    with a top-level directive (``$patch``) is applied every time."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[Any, Any], tuple[tuple[Any, ...], Mapping[str, Any], Any]] = {}

    def view(self, sts: Mapping[str, Any], revision: Mapping[str, Any]) -> Mapping[str, Any]:
        data = revision.get("data")
        uid = (sts.get("metadata") or {}).get("uid")
        if not uid or not isinstance(data, Mapping) or any(k.startswith("$") for k in data):
            return revision_view(sts, revision)
        parts = tuple(sts.get(k) for k in data)
        key = (uid, (revision.get("metadata") or {}).get("name"))
        cached = self._by_key.get(key)
        if (
            cached is not None
            and cached[1] is revision
            and len(cached[0]) == len(parts)
            and all(a is b for a, b in zip(cached[0], parts, strict=True))
        ):
            patched = cached[2]
        else:
            patched = revision_view({k: sts[k] for k in data if k in sts}, revision)
            if len(self._by_key) >= _REVISION_MEMO_SIZE:
                self._by_key.clear()
            self._by_key[key] = (parts, revision, patched)
        viewed = dict(sts)
        for k in data:
            if k in patched:
                viewed[k] = patched[k]
            else:
                viewed.pop(k, None)
        return viewed


class StatefulSetControl:
    """Runs :meth:`update` for one set per call; stateless between calls.

    ``history`` creates/reads/updates/deletes ControllerRevisions (a client); ``clock`` (a
    :class:`~kube_runtime.clock.Clock`; None: the clock current when the control is made)
    gives the time of each pass (minReadySeconds, condition and lifecycle timestamps) and
    the default in-place control's. ``strategy`` (a :class:`~.strategy.SetStrategy`) makes
    the decisions the kinds make differently; None: apps/v1's or the enhanced kind's, by the
    set's ``apiVersion``. ``batch_limit`` bounds how many steps of one Parallel slow-start
    batch run at a time (default
    :data:`~kube_runtime.workloads.batches.DEFAULT_LIMIT`); the ``pod_control`` must then be
    safe to call from several threads.
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
        strategy: SetStrategy | None = None,
        batch_limit: int = DEFAULT_LIMIT,
    ) -> None:
        self.pod_control = pod_control
        if batch_limit < 1:
            raise ValueError(
                f"StatefulSetControl: batch_limit must be at least 1, got {batch_limit}"
            )
        self.batch_limit = batch_limit
        """Steps of one Parallel slow-start batch (creations, deletions, claim fixes) that run
        concurrently, upstream's goroutines per batch; 1: one after the other."""
        self.strategy = strategy
        """The decisions of every set's passes; None: by the set's kind
        (:func:`~controllers.statefulset.strategy.strategy_for`)."""
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
        self._revisions = _RevisionMemo()
        self._views = _ViewMemo()
        self._resolved: dict[Any, tuple[Any, Obj, tuple[Mapping[str, Any], ...], Any]] = {}
        """Per set: what :meth:`_resolve_revisions` answered last without a write."""

    def _resolve_revisions(
        self, sts: Mapping[str, Any], ordered: Sequence[Mapping[str, Any]]
    ) -> tuple[Mapping[str, Any], Mapping[str, Any], int]:
        """:func:`resolve_revisions`, its answer kept per set (uid) when it wrote nothing (the
        update revision is the newest one): the next pass of the set gets it again while the
        revisions are the same objects, the revision the set's spec makes is the same object
        (:class:`_RevisionMemo`) and ``status.currentRevision`` and ``collisionCount`` are the
        same (what else it reads), as the passes of a running controller do between spec
        changes."""
        kind = kind_of(sts)
        new = self._revisions.new(kind)
        status = sts.get("status") or {}
        collision_count = int(status.get("collisionCount") or 0)
        built = new(sts, next_revision_number(ordered), collision_count)
        uid = (sts.get("metadata") or {}).get("uid")
        key = (status.get("currentRevision"), collision_count)
        cached = self._resolved.get(uid) if uid else None
        if (
            cached is not None
            and cached[0] == key
            and cached[1] is built
            and len(cached[2]) == len(ordered)
            and all(a is b for a, b in zip(cached[2], ordered, strict=True))
        ):
            return cached[3]
        resolved = resolve_revisions(
            self.history, sts, ordered, controller_kind=kind, new=lambda *_: built
        )
        if uid and ordered and resolved[1] is ordered[-1]:
            if len(self._resolved) >= _REVISION_MEMO_SIZE:
                self._resolved.clear()
            self._resolved[uid] = (key, built, tuple(ordered), resolved)
        return resolved

    def update(
        self,
        sts: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
        pods: Sequence[Pod],
        claims: Sequence[Mapping[str, Any]] = (),
        *,
        spec: StatefulSetView | None = None,
        selector: str | None = None,
    ) -> SyncResult:
        """One pass over ``sts`` (see the module docstring). ``revisions`` are the set's
        ControllerRevisions (adopted already), ``pods`` the pods it controls, ``claims`` the
        namespace's claims (the enhanced kind's ``status.volumeClaims``), ``spec`` the set's
        :class:`~controllers.statefulset.spec.StatefulSetView` if the caller read it already,
        ``selector`` its ``spec.selector`` as canonical text if the caller has it (the
        enhanced kind's ``status.labelSelector``; None: rendered here when needed). Raises
        :class:`~controllers.statefulset.spec.InvalidSpecError` before any effect when the
        spec cannot be acted on; otherwise the first error of a step, after writing the
        status computed so far and truncating history."""
        if spec is None:
            spec = StatefulSetView.of(sts, teardown=in_ordered_teardown(sts))
        strategy = self.strategy if self.strategy is not None else strategy_for(sts)
        ordered = list(revisions) if len(revisions) < 2 else sort_revisions(revisions)
        current, update, collision_count = self._resolve_revisions(sts, ordered)
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
            strategy=strategy,
            selector=_UNRENDERED if selector is None else selector,
        )
        error: BaseException | None = None
        try:
            state.run()
        except Exception as err:
            error = err
            state.refresh_status()
        status = state.status
        strategy.complete_status(state, claims, error is not None)
        clear_invalid_spec(status, meta.status(sts), state.now)
        complete_rolling_update(sts, status)
        try:
            self.status_updater.update_if_changed(sts, status)
        except Exception as err:
            if error is None:
                error = err
        try:
            limit = spec.revision_history_limit
            if len(ordered) > max(int(limit), 0):  # else no revision is beyond the limit
                truncate_history(self.history, ordered, pods, current, update, limit)
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
