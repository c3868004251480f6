"""Event wiring and the sync of the StatefulSet controller (upstream ``stateful_set.go``).

Watches (:func:`setup`): StatefulSets; Pods and ControllerRevisions by controller owner;
Pods without a controller wake every set of their namespace whose selector matches them (so
orphans get adopted); a PersistentVolumeClaim wakes the set whose claim template made it
(found by the claim's name, :meth:`StatefulSetReconciler.sets_of_claim`).

A sync (:meth:`StatefulSetReconciler.reconcile`) reads the set from the cache, parses its
selector (an invalid one gets a Warning event and no retry), reads its spec once
(:class:`~controllers.statefulset.spec.StatefulSetView`; one it cannot act on gets the ``InvalidSpec``
status condition and a Warning event, and no retry), waits for the creations and
deletions of earlier syncs to show in the cache (expectations, given up after
:data:`~kube_runtime.expectations.EXPECTATIONS_TIMEOUT`), adopts orphan revisions, claims the
namespace's pods whose name is ``<set>-<ordinal>`` (adopting matching orphans, releasing
owned pods that stopped matching) and hands the result to
:class:`~controllers.statefulset.control.StatefulSetControl`. With ``minReadySeconds`` it
requeues for the moment the next pod becomes available.

The same reconciler serves the enhanced kind (``apps.kube-runtime.io/v1beta1`` StatefulSet,
Kruise's Advanced StatefulSet fields; :func:`setup` registers a second controller for it when
the CRD is served). For it a sync also: puts the ordered-teardown finalizer on the set (or takes
it off when the set opts out by annotation); waits until the cache shows the pod writes of
earlier in-place updates; hands the namespace's claims to the control for
``status.volumeClaims``; and, once a set being deleted has no pod left, removes the finalizer so
the set goes away.
"""

from __future__ import annotations

import functools
import logging
import pathlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from controllers._register import collaborators, register
from controllers._scaling import wait_for_scale
from controllers.statefulset.control import StatefulSetControl, SyncResult
from controllers.statefulset.pod_control import StatefulPodControl, observe_pods
from controllers.statefulset.spec import InvalidSpecError, StatefulSetView
from controllers.statefulset.status import (
    ApiStatusUpdater,
    invalid_spec_status,
)
from controllers.statefulset.utils import (
    ENHANCED_STATEFULSET,
    ORDERED_TEARDOWN_FINALIZER,
    in_ordered_teardown,
    is_member_of,
    ordered_teardown,
    set_key,
)
from controllers.statefulset.webhooks import WEBHOOK_PERMISSIONS
from kube_runtime import clock as _clock
from kube_runtime import crds, meta, rbac
from kube_runtime.claiming import ControllerRefManager, claim_candidates, recheck_controller
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.controller import Controller
from kube_runtime.events import Recorder
from kube_runtime.expectations import (
    ResourceVersionExpectations,
    ScaleAction,
    ScaleExpectations,
    wait_result,
)
from kube_runtime.finalizers import ensure_finalizer, ensure_finalizer_removed, has_finalizer
from kube_runtime.handlers import SelectingOwners
from kube_runtime.kinds import (
    ControllerRevision,
    Kind,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
)
from kube_runtime.meta import ObjView as Obj
from kube_runtime.predicates import Predicate
from kube_runtime.reconcile import Request, Result
from kube_runtime.selectors import LabelSelector, label_selector_from_dict, parse_label_selector
from kube_runtime.workloads.inplace import InPlaceControl
from kube_runtime.workloads.revision import list_revisions
from kube_runtime.workloads.specview import SpecViews
from kube_runtime.workloads.statuswriter import DEFAULT_WINDOW, CoalescingStatusWriter

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = [
    "COMPONENT",
    "CONTROLLER_NAME",
    "CRD_PATH",
    "ENHANCED_CONTROLLER_SUFFIX",
    "STATUS_WINDOW",
    "StatefulSetReconciler",
    "install_crd",
    "setup",
]

log = logging.getLogger(__name__)

CONTROLLER_NAME = "statefulset"
ENHANCED_CONTROLLER_SUFFIX = "-enhanced"
"""The enhanced kind's controller is named ``<name>-enhanced``."""
CRD_PATH = pathlib.Path(__file__).with_name("crd.yaml")
COMPONENT = "statefulset-controller"
"""The event source of the controller (``manager.get_event_recorder(COMPONENT)``)."""
EXPECTATIONS_RECHECK = 1.0
"""Seconds after which a sync held back by expectations looks again (the informer event
that satisfies them normally wakes it first)."""
STATUS_WINDOW = DEFAULT_WINDOW
"""Seconds a status change may be held back by a running controller (:func:`setup`) so that
the next ones make one write with it
(:class:`~kube_runtime.workloads.statuswriter.CoalescingStatusWriter`; which changes may
wait: :data:`~controllers.statefulset.status.COALESCED_FIELDS`)."""
_SELECTOR_CACHE_SIZE = 10_000
_SPEC_CACHE_SIZE = 10_000
_CREATED_CLAIMS_SIZE = 100_000
_UNPARSED = object()


class StatefulSetReconciler:
    """Reconciles StatefulSets of ``kind`` (apps/v1, or
    :data:`~controllers.statefulset.utils.ENHANCED_STATEFULSET`).

    ``client`` reaches the API: every write, and the few reads that must not come from a
    cache (the recheck before adopting, re-reads after a conflict). ``reader`` serves every
    other read: the manager's cache-backed client (``manager.client``) in a running
    controller (or a FakeClient in a test): pods are looked up by the cache's built-in
    ``controller-uid`` and ``label`` indexes (:data:`~kube_runtime.cache.INDEX_CONTROLLER_UID`,
    :data:`~kube_runtime.cache.INDEX_LABEL`). ``recorder`` records the events on the
    set; ``logger`` gets every record, each naming the set (``namespace/name``).

    ``status_window`` > 0 coalesces status writes (:attr:`status_writer`): a change of the
    pod counts, observedGeneration, revisions or collision count
    (:data:`~controllers.statefulset.status.COALESCED_FIELDS`) is held back up to that many
    seconds (the set is requeued for then); a change of a condition and a converged status
    are written at once; a set with ``minReadySeconds`` is not held back; the steps of an
    OrderedReady rollout (:func:`~controllers.statefulset.status.ordered_progress`) are held
    while each follows the last within the writer's ``step_window``, up to its ``max_hold``
    (:data:`~kube_runtime.workloads.statuswriter.DEFAULT_STEP_WINDOW`,
    :data:`~kube_runtime.workloads.statuswriter.DEFAULT_MAX_HOLD`); every sync decides
    on the set with its pending status laid over the recorded one (where upstream reads the
    status it wrote last). 0 (the default
    here; :func:`setup` uses :data:`STATUS_WINDOW`) writes every change at once.

    Time (the status window, minReadySeconds, condition timestamps) comes from the
    :class:`~kube_runtime.clock.Clock` current when the reconciler is made
    (:func:`kube_runtime.clock.current`; :attr:`clock`).
    """

    def __init__(
        self,
        client: Client,
        reader: Reader,
        recorder: Recorder,
        *,
        kind: Kind = StatefulSet,
        logger: logging.Logger | None = None,
        status_window: float = 0.0,
    ) -> None:
        self.kind = kind
        self.clock = _clock.current()
        """The clock of the status writer and of the control (the current one when made)."""
        self.log = logger if logger is not None else log
        self._enhanced = kind == ENHANCED_STATEFULSET
        self._client = client
        self._reader = reader
        self._recorder = recorder
        self._selectors: dict[tuple[str, int], tuple[LabelSelector, str] | None] = {}
        self.spec_views = SpecViews(StatefulSetView.of, size=_SPEC_CACHE_SIZE)
        """The sets' :class:`StatefulSetView` per generation (and ordered teardown or not)."""
        self._selecting_sets = SelectingOwners(reader, kind, selector_of=self._parsed_selector)
        self.claim_expectations = ScaleExpectations()
        """Claims created by earlier syncs, per set, until the cache shows them."""
        self._claims_lock = threading.Lock()
        self._created_claims: dict[tuple[str, str], tuple[str, Any]] = {}
        """(namespace, name) -> (set key, uid) of each claim this controller created, until
        its creation event arrives (:meth:`claim_created_quietly`)."""
        self._waiting_for_claims: set[str] = set()
        """Sets whose last sync was held back by a claim the cache did not show yet."""
        self.pod_writes = ResourceVersionExpectations()
        """Pods written by in-place updates and lifecycle changes: a sync waits until the
        cache shows them."""
        self.pod_control = StatefulPodControl(
            client,
            recorder,
            reader=reader,
            logger=self.log,
            on_claim_created=self._expect_claim,
            on_pod_written=self.pod_writes.expect,
        )
        self.status_updater = ApiStatusUpdater(client, reader=reader, logger=self.log)
        self.status_writer = CoalescingStatusWriter(
            self.status_updater, window=status_window, clock=self.clock
        )
        """Holds back count-only status changes (see ``status_window``)."""
        self.control = StatefulSetControl(
            self.pod_control,
            self.status_writer,
            client,
            clock=self.clock,
            in_place=InPlaceControl(client, on_write=self.pod_writes.expect, clock=self.clock),
            logger=self.log,
        )

    # --- event mapping ---------------------------------------------------------------------

    def sets_selecting(self, obj: Obj) -> list[Request]:
        """The sets of ``obj``'s namespace whose selector matches its labels."""
        return self._selecting_sets.selecting(obj)

    def sets_of_claim(self, claim: Obj) -> list[Request]:
        """The set whose claim template made ``claim``: claims are named
        ``<template>-<set>-<ordinal>``, so the candidates are read from the cache by name (a
        few lookups per event, whatever the number of sets) and kept when one of their claim
        templates has that name. Upstream reacts to no claim event at all; waking the set
        keeps ``status.volumeClaims`` and a deleted claim's re-creation prompt."""
        stem, sep, ordinal = meta.name(claim).rpartition("-")
        if not sep or not ordinal.isdigit():
            return []
        namespace = meta.namespace(claim)
        parts = stem.split("-")
        requests = []
        for i in range(1, len(parts)):
            template, set_name = "-".join(parts[:i]), "-".join(parts[i:])
            try:
                sts = self._reader.get(self.kind, set_name, namespace)
            except NotFound:
                continue
            templates = meta.spec(sts).get("volumeClaimTemplates") or ()
            if any(
                isinstance(t, dict) and (t.get("metadata") or {}).get("name") == template
                for t in templates
            ):
                requests.append(Request.for_object(sts))
        return requests

    def _parsed_selector(self, sts: Obj) -> LabelSelector | None:
        """``spec.selector`` parsed once per set generation (None when invalid): event
        handlers call this for every set of the namespace on every pod and PVC event."""
        parsed = self._selector_of(sts)
        return None if parsed is None else parsed[0]

    def _selector_of(self, sts: Obj) -> tuple[LabelSelector, str] | None:
        """``spec.selector`` parsed and printed (canonical query text) once per set
        generation (a spec change moves it; a set without one is parsed every time); None
        when it does not parse. The event handlers and every sync read it here."""
        # Per set, per pod or claim event: plain dict reads (an accessor costs ~4x).
        sts_meta = sts["metadata"]
        generation = sts_meta.get("generation")
        key = (sts_meta.get("uid"), generation)
        cached = self._selectors.get(key, _UNPARSED) if generation else _UNPARSED
        if cached is not _UNPARSED:
            return cached  # type: ignore[return-value]
        parsed: tuple[LabelSelector, str] | None
        try:
            selector = label_selector_from_dict(meta.spec(sts).get("selector"))
        except ValueError:
            parsed = None
        else:
            parsed = (selector, str(selector))
        if generation:
            if len(self._selectors) >= _SELECTOR_CACHE_SIZE:
                self._selectors.clear()
            self._selectors[key] = parsed
        return parsed

    def _spec(self, sts: Obj) -> StatefulSetView:
        """The set's :class:`StatefulSetView`, read once per set generation (a spec change
        moves the generation; :attr:`spec_views`): validating it costs more than the rest of a
        converged set's sync."""
        return self.spec_views.get(sts, teardown=in_ordered_teardown(sts))

    def _candidate_pods(self, sts: Obj, parsed: tuple[LabelSelector, str]) -> list[dict[str, Any]]:
        """The pods a claim can act on (:func:`~kube_runtime.claiming.claim_candidates`): those
        this set controls plus the orphans its selector matches, not the namespace's."""
        selector, text = parsed
        return claim_candidates(self._reader, Pod, sts, selector, text)

    def orphan_pod_requests(self, pod: Obj) -> Iterable[Request]:
        """An orphan pod wakes the sets that could adopt it."""
        return self._selecting_sets(pod)

    # --- sync ------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = request.key
        expectations = self.pod_control.expectations
        try:
            sts = self._reader.get(self.kind, request.name, request.namespace)
        except NotFound:
            self.log.debug("%s: StatefulSet has been deleted", key)
            expectations.delete_expectations(key)
            self.claim_expectations.delete_expectations(key)
            self.status_writer.forget(request.namespace or "", request.name)
            return None
        # The status this controller wrote last (currentReplicas after deleting a pod for an
        # update, say) must be in the cache first: decisions such as which revision a
        # recreated pod gets read it. The informer event for that write wakes us again.
        seen, waited = self.status_updater.written.is_satisfied(sts)
        wait = wait_result(
            seen,
            waited,
            key=key,
            what="our last status write",
            recheck=EXPECTATIONS_RECHECK,
            logger=self.log,
        )
        if wait is not None:
            return wait
        if self._enhanced and not self._ensure_finalizer(sts):
            return None
        parsed = self._selector(sts)
        if parsed is None:
            return None
        selector, selector_text = parsed
        try:
            spec = self._spec(sts)
        except InvalidSpecError as err:
            self._report_invalid_spec(sts, err)
            # A set being deleted whose spec cannot be acted on is not torn down in order:
            # its finalizer goes and the garbage collector deletes its pods.
            self._finish_teardown(sts, [])
            return None
        namespace = request.namespace
        all_pods = self._candidate_pods(sts, parsed)
        observe_pods(expectations, key, all_pods)
        wait = wait_for_scale(expectations, key, recheck=EXPECTATIONS_RECHECK, logger=self.log)
        if wait is not None:
            return wait
        wait = self._wait_for_claims(key, namespace)
        if wait is not None:
            return wait
        client = self._client

        def can_adopt() -> None:
            # Built when first needed: most syncs adopt nothing.
            recheck_controller(client, dict(sts))()

        revisions = self._adopt_orphan_revisions(sts, parsed, can_adopt)
        manager = ControllerRefManager(self._client, dict(sts), selector, self.kind, can_adopt)
        pods = manager.claim(all_pods, lambda pod: is_member_of(sts, pod))
        claims: list[dict[str, Any]] = []
        if self._enhanced:
            wait = self._wait_for_pod_writes(key, pods)
            if wait is not None:
                return wait
            if self._finish_teardown(sts, pods):
                return None
            claims = self._reader.list(PersistentVolumeClaim, namespace)["items"]

        # Decide on the status this controller last computed, held back or not.
        def decide(view: Obj) -> tuple[SyncResult, Obj]:
            result = self.control.update(
                view, revisions, pods, claims, spec=spec, selector=selector_text
            )
            return result, result.status

        result, due = self.status_writer.sync(sts, decide)
        waits = [w for w in (result.requeue_after, due) if w is not None]
        if waits:
            return Result(requeue_after=min(waits))
        return None

    # --- claims ------------------------------------------------------------------------------

    def _expect_claim(self, sts: Obj, claim: Obj) -> None:
        if not self._cache_shows(claim):
            return
        key, name = set_key(sts), meta.name(claim)
        self.claim_expectations.expect_scale(key, ScaleAction.CREATE, name)
        with self._claims_lock:
            if len(self._created_claims) >= _CREATED_CLAIMS_SIZE:
                self._created_claims.clear()  # a creation event then wakes its set, as before
            self._created_claims[(meta.namespace(claim) or "", name)] = (key, meta.uid(claim))

    def claim_created_quietly(self, claim: Obj) -> bool:
        """Whether the creation event of ``claim`` needs no sync of an apps/v1 set: the claim
        is one this controller created (the same uid; its set expects it), and no sync of that set is held
        back waiting for a claim. The event satisfies the expectation here (as the claim's
        appearance in the cache would in the next sync). The set's next sync, woken by its
        pod, sees the claim in the cache: a sync woken by this event would decide on the same
        pods and claims, and upstream reacts to no claim event at all."""
        claim_meta = claim.get("metadata") or {}
        name = claim_meta.get("name") or ""
        with self._claims_lock:
            created = self._created_claims.pop((claim_meta.get("namespace") or "", name), None)
            if created is None or not created[1] or created[1] != claim_meta.get("uid"):
                return False
            key = created[0]
            self.claim_expectations.observe_scale(key, ScaleAction.CREATE, name)
            if key in self._waiting_for_claims:
                self._waiting_for_claims.discard(key)
                return False
            return True

    def _cache_shows(self, claim: Obj) -> bool:
        """Whether the reader's claim cache can ever show ``claim``: not when it lists only
        labelled claims (sharding, where another controller of the manager shards claims) and
        the claim does not carry the labels, so no sync waits for a claim it cannot see."""
        cache = getattr(self._reader, "cache", None)
        selector_text = cache.label_selector(PersistentVolumeClaim) if cache is not None else None
        if not selector_text:
            return True
        return parse_label_selector(selector_text).matches(meta.labels(claim))

    def _wait_for_claims(self, key: str, namespace: str | None) -> Result | None:
        """Come back later while a claim created by an earlier sync is not in the cache yet
        (a pending pod's missing claims are created again otherwise: an AlreadyExists); its
        informer event wakes the set (:meth:`sets_of_claim`). None: all shown, or timed out."""
        expected = self.claim_expectations.get_expectations(key)
        if not expected:
            return None
        for name in expected.get(ScaleAction.CREATE, ()):
            try:
                self._reader.get(PersistentVolumeClaim, name, namespace)
            except NotFound:
                continue
            self.claim_expectations.observe_scale(key, ScaleAction.CREATE, name)
        with self._claims_lock:  # see claim_created_quietly
            wait = wait_for_scale(
                self.claim_expectations, key, recheck=EXPECTATIONS_RECHECK, logger=self.log
            )
            if wait is None:
                self._waiting_for_claims.discard(key)
            else:
                self._waiting_for_claims.add(key)
        return wait

    # --- the enhanced kind -----------------------------------------------------------------

    def _ensure_finalizer(self, sts: Obj) -> bool:
        """Keep the ordered-teardown finalizer in line with the opt-out annotation; False when
        the set is gone meanwhile."""
        wanted = ordered_teardown(sts)
        present = has_finalizer(sts, ORDERED_TEARDOWN_FINALIZER)
        try:
            if wanted and not present and not meta.is_deleting(sts):
                ensure_finalizer(self._client, dict(sts), ORDERED_TEARDOWN_FINALIZER)
                self.log.info("%s: added finalizer %s", set_key(sts), ORDERED_TEARDOWN_FINALIZER)
            elif present and not wanted:
                ensure_finalizer_removed(self._client, dict(sts), ORDERED_TEARDOWN_FINALIZER)
                self.log.info("%s: opted out of ordered teardown", set_key(sts))
        except NotFound:
            return False
        return True

    def _wait_for_pod_writes(self, key: str, pods: Iterable[Obj]) -> Result | None:
        """Come back later while the cache does not show a pod's in-place write yet (None:
        all shown, or the wait timed out)."""
        for pod in pods:
            self.pod_writes.observe(pod)
            seen, waited = self.pod_writes.is_satisfied(pod)
            if seen:
                continue
            wait = wait_result(
                seen,
                waited,
                key=key,
                what=f"pod {meta.name(pod)}",
                recheck=EXPECTATIONS_RECHECK,
                on_timeout=functools.partial(self.pod_writes.delete, pod),
                logger=self.log,
            )
            if wait is not None:
                return wait
        return None

    def _finish_teardown(self, sts: Obj, pods: list[dict[str, Any]]) -> bool:
        """A set being deleted with no pod left loses its finalizer (True: done)."""
        if not meta.is_deleting(sts) or pods:
            return False
        if not has_finalizer(sts, ORDERED_TEARDOWN_FINALIZER):
            return False
        try:
            ensure_finalizer_removed(self._client, dict(sts), ORDERED_TEARDOWN_FINALIZER)
        except NotFound:
            pass
        self.log.info("%s: ordered teardown done, finalizer removed", set_key(sts))
        self.pod_control.expectations.delete_expectations(set_key(sts))
        return True

    def _selector(self, sts: Obj) -> tuple[LabelSelector, str] | None:
        """The set's ``spec.selector`` parsed and printed (:meth:`_selector_of`), or None
        after a Warning event (a user error: no retry)."""
        raw = meta.spec(sts).get("selector")
        parsed = self._selector_of(sts)
        if parsed is None:
            message = f"invalid selector {raw!r}: {_parse_error(raw)}"
        elif not parsed[0].matches_nothing() and raw:
            return parsed
        else:
            message = f"selector {raw!r} selects nothing or everything"
        self.log.warning("%s: %s", set_key(sts), message)
        self._recorder.event(sts, "Warning", "InvalidSelector", message)
        return None

    def _report_invalid_spec(self, sts: Obj, err: InvalidSpecError) -> None:
        """A spec the algorithm cannot act on: the ``InvalidSpec`` condition (True, with
        ``observedGeneration``) and one Warning event, both only when the recorded status does
        not say so already; no retry (the spec's next change wakes the set)."""
        message = str(err)
        status = invalid_spec_status(sts, message, self.control.now())
        if status is None:
            self.log.debug("%s: invalid spec, reported already: %s", set_key(sts), message)
            return
        self.log.warning("%s: invalid spec: %s", set_key(sts), message)
        self.status_writer.discard(sts)
        self.status_updater.update_status(sts, status)
        self._recorder.event(sts, "Warning", "InvalidSpec", message)

    def _adopt_orphan_revisions(
        self, sts: Obj, parsed: tuple[LabelSelector, str], can_adopt: Callable[[], None]
    ) -> list[dict[str, Any]]:
        selector, text = parsed
        revisions = list_revisions(self._reader, sts, text)
        orphans = [r for r in revisions if not meta.has_controller(r)]
        if not orphans:
            return revisions
        manager = ControllerRefManager(self._client, dict(sts), selector, self.kind, can_adopt)
        adopted = manager.claim(orphans)
        return [r for r in revisions if meta.has_controller(r)] + adopted


class _ClaimOwnershipChanged(Predicate):
    """The claim events an apps/v1 set acts on: creations and deletions, and updates that
    change the claim's owner references (the retention policy, a stale owner) or mark it for
    deletion. The kubelet's binding and status writes (two per claim) wake no set: an apps/v1
    set reads of its claims only whether they exist, are being deleted, and whom they belong
    to. With ``quiet_create`` (:meth:`StatefulSetReconciler.claim_created_quietly`), the
    creation of a claim the controller made itself wakes no set unless a sync waits for it.
    The enhanced kind's claims wake their set on every event (``status.volumeClaims``,
    resizing)."""

    def __init__(self, quiet_create: Callable[[Obj], bool] | None = None) -> None:
        self._quiet_create = quiet_create

    def create(self, obj: Obj) -> bool:
        return self._quiet_create is None or not self._quiet_create(obj)

    def update(self, old: Obj, new: Obj) -> bool:
        if not old or not new:
            return True
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        return bool(
            old_meta.get("ownerReferences") != new_meta.get("ownerReferences")
            or old_meta.get("deletionTimestamp") != new_meta.get("deletionTimestamp")
        )


class _PodStateChanged(Predicate):
    """The events of its own pods an apps/v1 set acts on: creations and deletions, and
    updates that change what a sync reads of a pod (:func:`_pod_state`). The kubelet's
    binding and its status writes that change neither the phase nor readiness (containers
    starting, the scheduling and initialization conditions) wake no set. The enhanced kind
    wakes on every event of its pods (in-place updates read container statuses, lifecycle
    hooks the annotations)."""

    def update(self, old: Obj, new: Obj) -> bool:
        if not old or not new:
            return True
        return _pod_state(old) != _pod_state(new)


def _pod_state(pod: Obj) -> tuple[Any, ...]:
    """What an apps/v1 sync reads of one of its pods: labels, annotations, owner references,
    finalizers, uid and deletion mark; ``spec.volumes``; the phase, and whether the pod is
    Ready (with the ``Ready`` condition's transition time when it is: minReadySeconds)."""
    pod_meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    ready: Any = None
    for condition in status.get("conditions") or ():
        if condition.get("type") == "Ready":  # the first one, as is_ready reads it
            if condition.get("status") == "True":
                ready = ("True", condition.get("lastTransitionTime"))
            break
    return (
        pod_meta.get("uid"),
        pod_meta.get("labels"),
        pod_meta.get("annotations"),
        pod_meta.get("ownerReferences"),
        pod_meta.get("finalizers"),
        pod_meta.get("deletionTimestamp"),
        (pod.get("spec") or {}).get("volumes"),
        status.get("phase"),
        ready,
    )


def _parse_error(raw: Any) -> str:
    """Why ``raw`` does not parse as a label selector (an invalid set's Warning event)."""
    try:
        label_selector_from_dict(raw)
    except ValueError as err:
        return str(err)
    return "unparsable"


def install_crd(client: Client, *, timeout: float = 30.0) -> None:
    """Create the enhanced StatefulSet CRD from ``crd.yaml`` unless it exists; wait until it
    is Established (TimeoutError otherwise)."""
    crds.install_crd(client, CRD_PATH, timeout=timeout)


_install_crd = install_crd


def _served(client: Client, kind: Kind) -> bool:
    """Whether the API server serves ``kind`` (discovery through the client's mapper)."""
    mapper = getattr(client, "mapper", None)
    if mapper is None:
        return False
    try:
        mapper.resource_for(kind)
    except LookupError:
        return False
    return True


def _register(
    manager: Manager, kind: Kind, name: str, workers: int, status_window: float
) -> Controller:
    reconciler = StatefulSetReconciler(
        *collaborators(manager, COMPONENT),
        kind=kind,
        logger=log,
        status_window=status_window,
    )
    return register(
        manager,
        reconciler,
        name=name,
        kind=kind,
        owns=[
            Pod if kind == ENHANCED_STATEFULSET else (Pod, _PodStateChanged()),
            ControllerRevision,
        ],
        watches=[
            (Pod, reconciler.orphan_pod_requests),
            (PersistentVolumeClaim, reconciler.sets_of_claim)
            if kind == ENHANCED_STATEFULSET
            else (
                PersistentVolumeClaim,
                reconciler.sets_of_claim,
                _ClaimOwnershipChanged(reconciler.claim_created_quietly),
            ),
        ],
        workers=workers,
    )


#: The API access of both StatefulSet kinds (``kube-runtime rbac statefulset``), proven least
#: privilege on kube-apiserver 1.20 with RBAC by tests/e2e/test_rbac_e2e.py: every grant is
#: used there. Reads go through the cache (list, watch) except the owner's re-read before an
#: adoption (get). ``update`` of revisions renumbers one on a rollback, ``get`` re-reads one
#: after a name collision, ``patch`` adopts or releases (as for pods). The ``finalizers``
#: subresources: setting ``blockOwnerDeletion`` on an owner reference needs them where the
#: OwnerReferencesPermissionEnforcement admission plugin runs (owner: the set; for claims
#: deleted with their pod, the pod), and an owner reference on a claim needs ``delete`` of
#: claims. ``pods/status``: the in-place update readiness condition.
#: ``patch`` of the enhanced kind: its ordered-teardown finalizer. StorageClasses (get, list):
#: the enhanced kind's validating webhook (``--webhook-port``), which checks that a grown claim
#: template's class allows expansion (:data:`~controllers.statefulset.webhooks.WEBHOOK_PERMISSIONS`).
PERMISSIONS = (
    rbac.rule("apps", "statefulsets", rbac.READ),
    rbac.rule("apps", ["statefulsets/status", "statefulsets/finalizers"], "update"),
    rbac.rule(ENHANCED_STATEFULSET.group, "statefulsets", rbac.READ, "patch"),
    rbac.rule(
        ENHANCED_STATEFULSET.group, ["statefulsets/status", "statefulsets/finalizers"], "update"
    ),
    rbac.rule("", "pods", rbac.CACHE, rbac.WRITE),
    rbac.rule("", "pods/status", "patch"),
    rbac.rule("", "pods/finalizers", "update"),
    rbac.rule("", "persistentvolumeclaims", rbac.CACHE, "create", "update", "delete"),
    rbac.rule("apps", "controllerrevisions", rbac.READ, rbac.WRITE),
    *WEBHOOK_PERMISSIONS,
)


@rbac.requires(*PERMISSIONS)
def setup(
    manager: Manager,
    *,
    max_concurrent_reconciles: int = 1,
    name: str = CONTROLLER_NAME,
    install_crd: bool = False,
    enhanced: bool | None = None,
    status_window: float = STATUS_WINDOW,
) -> Controller:
    """Register the StatefulSet controller with ``manager``; return the apps/v1 controller.

    This is the entry point for ``kube-runtime run statefulset`` (``--workers`` ->
    ``max_concurrent_reconciles``). It also registers the same reconciler for the enhanced
    kind (``apps.kube-runtime.io/v1beta1`` StatefulSet) as ``<name>-enhanced`` when
    ``enhanced`` is True, or, by default, when the API server serves that kind;
    ``install_crd=True`` installs the CRD first (:func:`install_crd`). ``status_window``:
    seconds a status change may be held back (see :class:`StatefulSetReconciler`;
    0 writes every change at once).
    """
    api = manager.api_reader
    if install_crd:
        _install_crd(api)
    controller = _register(manager, StatefulSet, name, max_concurrent_reconciles, status_window)
    if enhanced is None:
        enhanced = _served(api, ENHANCED_STATEFULSET)
        if not enhanced:
            log.info(
                "%s is not served (install deploy/crd/statefulset-crd.yaml): only apps/v1 "
                "StatefulSets are reconciled",
                ENHANCED_STATEFULSET,
            )
    if enhanced:
        _register(
            manager,
            ENHANCED_STATEFULSET,
            name + ENHANCED_CONTROLLER_SUFFIX,
            max_concurrent_reconciles,
            status_window,
        )
    return controller
