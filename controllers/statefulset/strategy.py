"""Where the StatefulSet algorithm lets a kind decide: :class:`SetStrategy`.

The algorithm (:mod:`controllers.statefulset.control`) is upstream's ``stateful_set_control.go``.
At each point where Kruise's Advanced StatefulSet (openkruise ``statefulset/
stateful_set_control.go``) decides otherwise, a pass asks its strategy:

- which ordinals the replicas have (:meth:`~SetStrategy.ordinals`), how many replicas may be
  missing or unavailable while they are processed (:meth:`~SetStrategy.scale_budget`), which
  revision a new pod gets and what it carries (:meth:`~SetStrategy.current_needed`,
  :meth:`~SetStrategy.prepare_new_pod`);
- what a pass does first (:meth:`~SetStrategy.refresh`: in-place updates and lifecycle
  states), whether a pod counts as healthy and available (:attr:`~SetStrategy.lifecycle_aware`,
  :meth:`~SetStrategy.unavailable`), whether a pod is held instead of deleted
  (:meth:`~SetStrategy.hold_delete`: the ``preDelete`` hook);
- whether the rolling update runs (:meth:`~SetStrategy.rollout_hold`), what it does first
  (:meth:`~SetStrategy.before_rollout`), which pods it updates in which order
  (:meth:`~SetStrategy.update_targets`), how many may be unavailable meanwhile
  (:meth:`~SetStrategy.rollout_gate`), whether a pod is ready to be updated and how
  (:meth:`~SetStrategy.ready_to_update`, :meth:`~SetStrategy.in_place_policy`,
  :meth:`~SetStrategy.hold_in_place`);
- what the status adds (:meth:`~SetStrategy.complete_status`).

:class:`AppsV1Strategy` answers as kube-controller-manager does: it refuses every extension's
knob (``reserveOrdinals``, ``scaleStrategy``, ``paused``, ``podUpdatePolicy``,
``unorderedUpdate``, ``lifecycle``, ``volumeClaimUpdateStrategy``, the specified-delete label),
which an apps/v1 object cannot carry on a real kube-apiserver anyway. :class:`EnhancedStrategy`
is the enhanced kind's (the module docstring of :mod:`controllers.statefulset.control` lists
its decisions). :func:`strategy_for` picks one by the set's kind. A strategy keeps no state:
what a pass learns lives on the pass (:class:`PassState`), and one strategy object serves
every set of its kind.
"""

from __future__ import annotations

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
from controllers.statefulset.spec import RECREATE, StatefulSetView
from controllers.statefulset.status import FAILED_CREATE_POD, FAILED_UPDATE_POD, set_condition
from controllers.statefulset.utils import SPECIFIED_DELETE_LABEL, PodFacts, is_enhanced, ordinal_of
from kube_runtime import meta
from kube_runtime.client.errors import NotFound
from kube_runtime.kinds import PersistentVolumeClaim
from kube_runtime.meta import Obj
from kube_runtime.meta import ObjView as Pod
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.workloads import lifecycle, podreadiness
from kube_runtime.workloads.inplace import check_update_completed, inject_readiness_gate
from kube_runtime.workloads.pods import is_created, is_running_and_ready, is_terminating
from kube_runtime.workloads.revision import pod_revision
from kube_runtime.workloads.updatesort import priority_sort

__all__ = [
    "APPS_V1",
    "ENHANCED",
    "AppsV1Strategy",
    "EnhancedStrategy",
    "InPlaceRefused",
    "LifecycleRefused",
    "PassState",
    "RolloutGate",
    "SetStrategy",
    "selector_text",
    "strategy_for",
]


class InPlaceRefused(Exception):
    """InPlaceOnly and the change is not in-place-able (a user error: a condition, no retry)."""


class LifecycleRefused(Exception):
    """An in-place update target is in a lifecycle state that forbids it (``PreparingDelete``):
    the pass fails and is retried, without a condition (Kruise)."""


class PassState(Protocol):
    """What a strategy reads and moves of one pass (``control._Pass``): the set, its spec and
    revisions, the pods, the status being computed, and the pass's API and bookkeeping."""

    sts: Mapping[str, Any]
    spec: StatefulSetView
    key: str
    now: datetime
    log: Any
    pods_api: Any
    """The :class:`~controllers.statefulset.control.PodControl`."""
    in_place: Any
    """The :class:`~kube_runtime.workloads.inplace.InPlaceControl`."""
    history: Any
    """The client that patches claims (the control's ``history``)."""
    status: Obj
    replicas: list[Pod]
    condemned: list[Pod]
    claims: dict[str, Mapping[str, Any]]
    """The namespace's claims by name when the strategy resizes claims, else empty."""
    delays: list[float]
    failures: dict[str, tuple[str, str]]
    rollout_checked: bool
    lifecycle_changed: bool
    current_name: str
    update_name: str

    @property
    def selector(self) -> str | None:
        """``spec.selector`` as canonical text (None: invalid)."""
        ...

    def available(self, pod: Pod) -> bool:
        """Running and ready for ``minReadySeconds`` (lifecycle-aware per the strategy)."""
        ...

    def facts(self, pod: Pod) -> PodFacts:
        """What the pass reads of ``pod``'s state, read once per pass."""
        ...

    def target(self, pod: Pod) -> bool:
        """A rolling-update target (old revision, or claims behind)."""
        ...

    def delete(self, pod: Pod) -> tuple[bool, bool]:
        """Delete ``pod`` unless the strategy holds it: ``(modified, actually deleting)``."""
        ...


class RolloutGate(Protocol):
    """How many pods a rolling update may make unavailable: orders the targets and admits them
    one by one (an admitted pod is updated; the first one refused ends the update)."""

    def order(self, targets: Sequence[Pod], available: Callable[[Pod], bool]) -> list[Pod]:
        """The targets in the order they are offered."""
        ...

    def admits(self, pod: Pod) -> bool:
        """Whether ``pod`` may be updated now (counting it if so)."""
        ...


class SetStrategy(Protocol):
    """The decisions a kind makes in the StatefulSet algorithm (see the module docstring)."""

    lifecycle_aware: bool
    """A pod in a lifecycle state other than ``Normal`` is neither healthy nor available."""

    def ordinals(self, spec: StatefulSetView) -> Sequence[int]:
        """The replicas' ordinals, ascending."""
        ...

    def scale_budget(self, spec: StatefulSetView) -> int | None:
        """How many replicas may be missing or unavailable while they are processed (the
        replicas are then walked one by one); None: no limit."""
        ...

    def resizes_claims(self, spec: StatefulSetView) -> bool:
        """Whether the rolling update expands claims (the pass then reads the claims)."""
        ...

    def current_needed(
        self, p: PassState, ordinal: int, slots: Sequence[Pod | None]
    ) -> bool | None:
        """Whether the new pod at ``ordinal`` gets the current revision; None: by ordinal
        (upstream ``newVersionedStatefulSetPod``)."""
        ...

    def prepare_new_pod(self, p: PassState, pod: Obj) -> None:
        """Add what the kind's new pods carry (readiness gates, lifecycle state) to ``pod``."""
        ...

    def refresh(self, p: PassState) -> None:
        """What a pass does before it processes the replicas."""
        ...

    def unavailable(self, p: PassState, pod: Pod) -> bool:
        """Whether a healthy, available pod still counts against ``maxUnavailable``."""
        ...

    def hold_delete(self, p: PassState, pod: Pod) -> bool | None:
        """Keep ``pod`` instead of deleting it: whether that modified it; None: delete it."""
        ...

    def rollout_hold(self, p: PassState) -> str | None:
        """Why the rolling update does not run this pass (a log line); None: it runs."""
        ...

    def before_rollout(self, p: PassState, budget: int, unavailable: set[str]) -> set[str]:
        """Run before the rolling update's targets are taken (``unavailable``: the names of
        the unavailable replicas, which it may grow); the names the update then skips."""
        ...

    def rollout_gate(self, budget: int, unavailable: set[str], parallel: bool) -> RolloutGate:
        """The gate of the rolling update (``budget``: ``maxUnavailable``)."""
        ...

    def update_targets(self, p: PassState) -> list[Pod]:
        """The rolling update's targets, in update order."""
        ...

    def claims_behind(self, p: PassState, pod: Pod) -> bool:
        """Whether ``pod`` is a target for its claims even at the update revision."""
        ...

    def ready_to_update(self, p: PassState, pod: Pod) -> bool:
        """Whether ``pod`` can be updated now (False: it waits, counted unavailable)."""
        ...

    def in_place_policy(self, spec: StatefulSetView) -> str:
        """How pods are updated: ``ReCreate``, ``InPlaceIfPossible`` or ``InPlaceOnly``."""
        ...

    def hold_in_place(self, p: PassState, pod: Pod) -> tuple[bool, dict[str, str] | None]:
        """Before an in-place update of ``pod``: ``(held, extra labels for the update)``."""
        ...

    def complete_status(
        self, p: PassState, claims: Sequence[Mapping[str, Any]], error: bool
    ) -> None:
        """Add the kind's status fields and conditions to ``p.status``."""
        ...


def selector_text(sts: Mapping[str, Any]) -> str | None:
    """``spec.selector`` as canonical query text; None when it does not parse."""
    try:
        return str(label_selector_from_dict(meta.spec(sts).get("selector")))
    except ValueError:
        return None


def ordered_targets(p: PassState) -> list[Pod]:
    """Upstream's order: targets that are not terminating, from the highest ordinal down to
    ``start + partition``."""
    first = p.spec.start + p.spec.partition
    targets = []
    for pod in reversed(p.replicas):
        facts = p.facts(pod)
        if facts.ordinal >= first and p.target(pod) and not facts.terminating:
            targets.append(pod)
    return targets


class _UpstreamGate:
    """Upstream's budget: ``budget`` minus the unavailable replicas. Under Parallel the
    unavailable targets go first and pass whatever the budget; each other admitted target
    takes one from it."""

    def __init__(self, budget: int, unavailable: int, parallel: bool) -> None:
        self.budget = budget
        self.used = unavailable
        self.parallel = parallel
        self._unavailable: set[int] = set()

    def order(self, targets: Sequence[Pod], available: Callable[[Pod], bool]) -> list[Pod]:
        if not self.parallel:
            return list(targets)
        down = [pod for pod in targets if not available(pod)]
        self._unavailable = {id(pod) for pod in down}
        return down + [pod for pod in targets if id(pod) not in self._unavailable]

    def admits(self, pod: Pod) -> bool:
        if id(pod) in self._unavailable:
            return True
        if self.used >= self.budget:
            return False
        self.used += 1
        return True


class _KruiseGate:
    """Kruise ``rollingUpdateStatefulsetPods``: once ``budget`` pods are unavailable, a target
    that is still available waits (an unavailable one, e.g. released from
    ``PreparingDelete``, passes); each admitted target counts as unavailable."""

    def __init__(self, budget: int, unavailable: set[str]) -> None:
        self.budget = budget
        self.unavailable = unavailable

    def order(self, targets: Sequence[Pod], available: Callable[[Pod], bool]) -> list[Pod]:
        return list(targets)

    def admits(self, pod: Pod) -> bool:
        name = meta.name(pod)
        if len(self.unavailable) >= self.budget and name not in self.unavailable:
            return False
        self.unavailable.add(name)
        return True


class AppsV1Strategy:
    """apps/v1's answers (kube-controller-manager): no extension. Subclass it to change one
    decision."""

    lifecycle_aware = False

    def ordinals(self, spec: StatefulSetView) -> Sequence[int]:
        """``[start, start + replicas)`` (none during an ordered teardown)."""
        return () if spec.teardown else range(spec.start, spec.start + spec.replicas)

    def scale_budget(self, spec: StatefulSetView) -> int | None:
        """No limit."""
        return None

    def resizes_claims(self, spec: StatefulSetView) -> bool:
        """Never."""
        return False

    def current_needed(
        self, p: PassState, ordinal: int, slots: Sequence[Pod | None]
    ) -> bool | None:
        """By ordinal."""
        return None

    def prepare_new_pod(self, p: PassState, pod: Obj) -> None:
        """Nothing to add."""

    def refresh(self, p: PassState) -> None:
        """Nothing to do first."""

    def unavailable(self, p: PassState, pod: Pod) -> bool:
        """Never: healthy and available is available."""
        return False

    def hold_delete(self, p: PassState, pod: Pod) -> bool | None:
        """Never held."""
        return None

    def rollout_hold(self, p: PassState) -> str | None:
        """Never held (no ``paused``)."""
        return None

    def before_rollout(self, p: PassState, budget: int, unavailable: set[str]) -> set[str]:
        """Nothing first."""
        return set()

    def rollout_gate(self, budget: int, unavailable: set[str], parallel: bool) -> RolloutGate:
        """Upstream's budget (:class:`_UpstreamGate`)."""
        return _UpstreamGate(budget, len(unavailable), parallel)

    def update_targets(self, p: PassState) -> list[Pod]:
        """Highest ordinal first (:func:`ordered_targets`)."""
        return ordered_targets(p)

    def claims_behind(self, p: PassState, pod: Pod) -> bool:
        """Never (claims are not resized)."""
        return False

    def ready_to_update(self, p: PassState, pod: Pod) -> bool:
        """Always."""
        return True

    def in_place_policy(self, spec: StatefulSetView) -> str:
        """Recreation."""
        return RECREATE

    def hold_in_place(self, p: PassState, pod: Pod) -> tuple[bool, dict[str, str] | None]:
        """Never held, no extra labels."""
        return False, None

    def complete_status(
        self, p: PassState, claims: Sequence[Mapping[str, Any]], error: bool
    ) -> None:
        """apps/v1's status has nothing more."""


def _marks(hook: Mapping[str, Any] | None) -> bool:
    """The hook's ``markPodNotReady``."""
    return bool(hook and hook.get("markPodNotReady"))


class EnhancedStrategy(AppsV1Strategy):
    """Kruise's Advanced StatefulSet (see :mod:`controllers.statefulset.control`)."""

    lifecycle_aware = True

    def ordinals(self, spec: StatefulSetView) -> Sequence[int]:
        """The first ``replicas`` ordinals not in ``reserveOrdinals``."""
        return spec.ordinals

    def scale_budget(self, spec: StatefulSetView) -> int | None:
        """``scaleStrategy.maxUnavailable`` (Kruise ``decreaseAndCheckMaxUnavailable``)."""
        return spec.scale_max_unavailable

    def resizes_claims(self, spec: StatefulSetView) -> bool:
        """``volumeClaimUpdateStrategy.type: OnPodRollingUpdate``."""
        return spec.resize_claims

    def current_needed(
        self, p: PassState, ordinal: int, slots: Sequence[Pod | None]
    ) -> bool | None:
        """Under ``unorderedUpdate`` the new pod stays at the current revision while fewer
        than ``partition`` other replicas are not updated (Kruise ``isCurrentRevisionNeeded``)."""
        if not (p.spec.unordered and p.spec.strategy == "RollingUpdate"):
            return None
        not_updated = sum(
            1
            for s in slots
            if s is not None and ordinal_of(s) != ordinal and pod_revision(s) != p.update_name
        )
        return not_updated < p.spec.partition

    def prepare_new_pod(self, p: PassState, pod: Obj) -> None:
        """The ``InPlaceUpdateReady`` gate, the ``KruisePodReady`` gate when a hook marks pods
        not ready, and the lifecycle state (``PreparingNormal`` until the ``preNormal`` hook is
        all there)."""
        spec = p.spec
        inject_readiness_gate(pod.setdefault("spec", {}))
        if spec.lifecycle and (_marks(spec.pre_delete) or _marks(spec.in_place_update_hook)):
            podreadiness.inject_gate(pod["spec"])
        hook = spec.pre_normal
        prepared = not spec.lifecycle or not hook or lifecycle.is_pod_all_hooked(hook, pod)
        lifecycle.set_state(
            pod, lifecycle.NORMAL if prepared else lifecycle.PREPARING_NORMAL, p.now
        )

    def refresh(self, p: PassState) -> None:
        """Advance in-place updates (grace periods, readiness gate), then lifecycle states."""
        for pod in [*p.replicas, *p.condemned]:
            if not is_created(pod) or is_terminating(pod):
                continue
            try:
                _, left = p.in_place.refresh(pod)
            except NotFound:
                continue
            if left > 0:
                p.delays.append(left)
        self._refresh_lifecycle(p)

    def _refresh_lifecycle(self, p: PassState) -> None:
        """Move every created pod whose lifecycle state is due to move
        (:meth:`_lifecycle_target`); ``p.lifecycle_changed`` when one was written."""
        mark = _marks(p.spec.in_place_update_hook)
        for pod in [*p.replicas, *p.condemned]:
            if not is_created(pod):
                continue
            target = self._lifecycle_target(p, pod)
            try:
                p.pods_api.ensure_readiness_condition(pod)
                if not target:
                    continue
                if p.pods_api.update_pod_lifecycle(p.sts, pod, target, mark_not_ready=mark):
                    p.lifecycle_changed = True
            except NotFound:
                continue

    @staticmethod
    def _lifecycle_target(p: PassState, pod: Pod) -> str:
        """The state ``pod`` moves to this pass, or "" (Kruise ``refreshPodState``):
        ``PreparingNormal`` -> ``Normal`` once the preNormal hook is all there;
        ``PreparingUpdate`` of a pod already at the update revision (a rollback) and
        ``Updating`` once the in-place update completed -> ``Updated`` while the inPlaceUpdate
        hook is not all back (with any ``lifecycle``), else ``Normal``; ``Updated`` ->
        ``Normal`` once the hook is all back."""
        spec, state = p.spec, lifecycle.get_state(pod)
        hook = spec.in_place_update_hook
        if state == lifecycle.PREPARING_NORMAL:
            pre_normal = spec.pre_normal
            ready = not spec.lifecycle or not pre_normal
            return lifecycle.NORMAL if ready or lifecycle.is_pod_all_hooked(pre_normal, pod) else ""
        if state == lifecycle.UPDATED:
            ready = not spec.lifecycle or not hook
            return lifecycle.NORMAL if ready or lifecycle.is_pod_all_hooked(hook, pod) else ""
        done = (state == lifecycle.PREPARING_UPDATE and pod_revision(pod) == p.update_name) or (
            state == lifecycle.UPDATING and check_update_completed(pod) is None
        )
        if not done:
            return ""
        if spec.lifecycle and not lifecycle.is_pod_all_hooked(hook, pod):
            return lifecycle.UPDATED
        return lifecycle.NORMAL

    def unavailable(self, p: PassState, pod: Pod) -> bool:
        """Not ``Normal``, an in-place update not completed, or claims short of what they
        request."""
        if not lifecycle.is_normal(pod):
            return True
        if check_update_completed(pod) is not None:
            return True
        return bool(p.claims) and not claims_ready(pod_claims(p.sts, pod, p.claims))

    def hold_delete(self, p: PassState, pod: Pod) -> bool | None:
        """Kruise ``deletePod``: a pod its ``lifecycle.preDelete`` hook holds moves to
        ``PreparingDelete`` and is kept."""
        hook = p.spec.pre_delete
        if not hook or not lifecycle.is_pod_hooked(hook, pod):
            return None
        updated: bool = p.pods_api.update_pod_lifecycle(
            p.sts, pod, lifecycle.PREPARING_DELETE, mark_not_ready=_marks(hook)
        )
        if updated:
            p.log.info(
                "%s: pod %s held for its preDelete hook (PreparingDelete)", p.key, meta.name(pod)
            )
        return updated

    def rollout_hold(self, p: PassState) -> str | None:
        """A lifecycle state moved this pass (Kruise then waits), or ``rollingUpdate.paused``."""
        if p.lifecycle_changed:
            return "lifecycle states moved, rolling update next pass"
        if p.spec.paused:
            return "rolling update paused"
        return None

    def before_rollout(self, p: PassState, budget: int, unavailable: set[str]) -> set[str]:
        """Kruise ``handleSpecifiedDeletedPods``: replicas labelled
        :data:`~controllers.statefulset.utils.SPECIFIED_DELETE_LABEL` are deleted, highest
        ordinal first, within ``maxUnavailable`` (an unavailable one always; the partition
        does not hold them back), each then counted unavailable (``unavailable`` grows); the
        names deleted. A missing ordinal is recreated at the revision the partition gives it."""
        deleted: set[str] = set()
        for pod in reversed(p.replicas):
            if SPECIFIED_DELETE_LABEL not in meta.labels(pod) or is_terminating(pod):
                continue
            name = meta.name(pod)
            if len(unavailable) >= budget and name not in unavailable:
                continue
            p.log.info("%s: deleting pod %s (%s)", p.key, name, SPECIFIED_DELETE_LABEL)
            _, deleting = p.delete(pod)
            deleted.add(name)
            unavailable.add(name)
            if not deleting:
                continue  # held in PreparingDelete by its preDelete hook
            revision = pod_revision(pod)
            field = {p.current_name: "currentReplicas", p.update_name: "updatedReplicas"}
            if revision in field:
                counted = field[revision]
                p.status[counted] = int(p.status.get(counted) or 0) - 1
        return deleted

    def rollout_gate(self, budget: int, unavailable: set[str], parallel: bool) -> RolloutGate:
        """Kruise's loop, whatever the pod management policy (:class:`_KruiseGate`)."""
        return _KruiseGate(budget, unavailable)

    def update_targets(self, p: PassState) -> list[Pod]:
        """Upstream's order, or under ``unorderedUpdate`` Kruise ``sortPodsToUpdate``: updated
        (or terminating) pods first, then the old ones by priority (ties: higher ordinal
        first), cut to ``replicas - partition``; the old ones of that cut."""
        if not p.spec.unordered:
            return ordered_targets(p)
        replicas = p.replicas
        max_update = len(replicas) - p.spec.partition
        if max_update <= 0:
            return []
        done: list[int] = []
        waiting: list[int] = []
        for i in range(len(replicas) - 1, -1, -1):
            pod = replicas[i]
            (done if is_terminating(pod) or not p.target(pod) else waiting).append(i)
        waiting = priority_sort(p.spec.priority_strategy, replicas, waiting)
        chosen = set((done + waiting)[:max_update])
        return [replicas[i] for i in waiting if i in chosen]

    def claims_behind(self, p: PassState, pod: Pod) -> bool:
        """With ``volumeClaimUpdateStrategy`` OnPodRollingUpdate: claims request less than
        their templates."""
        return bool(p.claims) and not claims_matched(pod_claims(p.sts, pod, p.claims))

    def ready_to_update(self, p: PassState, pod: Pod) -> bool:
        """Claims resized first (when resizing): expand the pod's claims that need it (Kruise
        ``TryPatchPVC``); whether they all completed (``IsOwnedPVCsCompleted``). The API
        server refuses a claim whose storage class does not allow expansion: that error stops
        the pass."""
        if not p.claims:
            return True
        pairs = pod_claims(p.sts, pod, p.claims)
        if claims_matched(pairs):
            return claims_completed(pairs)
        try:
            patches = resize_patches(p.sts, pairs)
        except ResizeError as err:
            p.pods_api.record(p.sts, "Warning", "FailedUpdatePVC", str(err))
            raise
        for name, patch in patches.items():
            try:
                p.history.patch(PersistentVolumeClaim, name, patch, namespace=meta.namespace(pod))
            except Exception as err:
                p.pods_api.record(
                    p.sts, "Warning", "FailedUpdate", f"Resize Claim {name} failed: {err}"
                )
                raise
            p.pods_api.record(
                p.sts,
                "Normal",
                "SuccessfulUpdate",
                f"Resize Claim {name} in StatefulSet {meta.name(p.sts)} success",
            )
        return False  # the cache shows the old claims this pass

    def in_place_policy(self, spec: StatefulSetView) -> str:
        """``rollingUpdate.podUpdatePolicy``."""
        return spec.pod_update_policy

    def hold_in_place(self, p: PassState, pod: Pod) -> tuple[bool, dict[str, str] | None]:
        """Kruise ``inPlaceUpdatePod``'s lifecycle step before an in-place update: a
        ``Normal`` (or new) pod its inPlaceUpdate hook holds moves to ``PreparingUpdate``; an
        ``Updated`` pod goes back to ``PreparingUpdate`` with the hook's labels and finalizers
        put back; a ``PreparingUpdate`` pod waits while hooked; held pods count as being
        updated. A pod in another state (``PreparingDelete``) cannot be updated in place:
        :class:`LifecycleRefused`."""
        spec, state = p.spec, lifecycle.get_state(pod)
        hook = spec.in_place_update_hook
        if state in ("", lifecycle.PREPARING_NORMAL, lifecycle.NORMAL):
            if spec.lifecycle and lifecycle.is_pod_hooked(hook, pod):
                p.pods_api.update_pod_lifecycle(
                    p.sts, pod, lifecycle.PREPARING_UPDATE, mark_not_ready=_marks(hook)
                )
                return True, None
        elif state == lifecycle.UPDATED:
            if hook is not None:
                p.pods_api.update_pod_lifecycle(
                    p.sts, pod, lifecycle.PREPARING_UPDATE, hook=hook, mark_not_ready=_marks(hook)
                )
            return True, None
        elif state == lifecycle.PREPARING_UPDATE:
            if lifecycle.is_pod_hooked(hook, pod):
                return True, None
        elif state != lifecycle.UPDATING:
            raise LifecycleRefused(
                f"not allowed to in-place update pod {meta.name(pod)} in state {state}"
            )
        return False, ({lifecycle.LIFECYCLE_STATE_LABEL: lifecycle.UPDATING} if state else None)

    def complete_status(
        self, p: PassState, claims: Sequence[Mapping[str, Any]], error: bool
    ) -> None:
        """``updatedReadyReplicas``, ``updatedAvailableReplicas``, ``labelSelector``,
        ``volumeClaims`` and the ``FailedCreatePod`` / ``FailedUpdatePod`` conditions."""
        sts, status = p.sts, p.status
        updated_ready = updated_available = 0
        for pod in [*p.replicas, *p.condemned]:
            if not is_created(pod) or is_terminating(pod) or pod_revision(pod) != p.update_name:
                continue
            if is_running_and_ready(pod):
                updated_ready += 1
                if p.available(pod):
                    updated_available += 1
        status["updatedReadyReplicas"] = updated_ready
        status["updatedAvailableReplicas"] = updated_available
        if p.selector is not None:
            status["labelSelector"] = p.selector
        status["volumeClaims"] = _volume_claims_status(sts, p.replicas, claims)
        previous = meta.status(sts)
        create_failure = p.failures.get(FAILED_CREATE_POD)
        if create_failure is not None or not error:
            set_condition(status, previous, FAILED_CREATE_POD, create_failure, p.now)
        update_failure = p.failures.get(FAILED_UPDATE_POD)
        if update_failure is not None or p.rollout_checked:
            set_condition(status, previous, FAILED_UPDATE_POD, update_failure, p.now)
        if "conditions" not in status and previous.get("conditions"):
            status["conditions"] = list(previous["conditions"])


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


APPS_V1: SetStrategy = AppsV1Strategy()
"""The apps/v1 kind's strategy."""
ENHANCED: SetStrategy = EnhancedStrategy()
"""The enhanced kind's strategy."""


def strategy_for(sts: Mapping[str, Any]) -> SetStrategy:
    """:data:`ENHANCED` for a set of the enhanced kind, else :data:`APPS_V1`."""
    return ENHANCED if is_enhanced(sts) else APPS_V1
