"""Event wiring and the sync of the StatefulSet controller (upstream ``stateful_set.go``).

Watches (:func:`setup`): StatefulSets; Pods and ControllerRevisions by controller owner;
Pods without a controller wake every set of their namespace whose selector matches them (so
orphans get adopted); PersistentVolumeClaims wake the sets whose selector matches their
labels (claims carry the selector's labels).

A sync (:meth:`StatefulSetReconciler.reconcile`) reads the set from the cache, parses its
selector (an invalid one gets a Warning event and no retry), waits for the creations and
deletions of earlier syncs to show in the cache (expectations, given up after
:data:`~kube_runtime.expectations.EXPECTATIONS_TIMEOUT`), adopts orphan revisions, claims the
namespace's pods whose name is ``<set>-<ordinal>`` (adopting matching orphans, releasing
owned pods that stopped matching) and hands the result to
:class:`~controllers.statefulset.control.StatefulSetControl`. With ``minReadySeconds`` it
requeues for the moment the next pod becomes available.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from controllers.statefulset.control import StatefulSetControl
from controllers.statefulset.pod_control import StatefulPodControl, observe_pods, set_key
from controllers.statefulset.status import ApiStatusUpdater
from controllers.statefulset.utils import is_member_of
from kube_runtime.builder import Builder
from kube_runtime.claiming import ControllerRefManager, recheck_controller
from kube_runtime.client.errors import is_not_found
from kube_runtime.controller import Controller
from kube_runtime.expectations import EXPECTATIONS_TIMEOUT
from kube_runtime.kinds import ControllerRevision, PersistentVolumeClaim, Pod, StatefulSet
from kube_runtime.reconcile import Request, Result
from kube_runtime.selectors import LabelSelector, label_selector_from_dict
from kube_runtime.workloads.revision import list_revisions

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = ["CONTROLLER_NAME", "StatefulSetReconciler", "setup"]

log = logging.getLogger(__name__)

CONTROLLER_NAME = "statefulset"
COMPONENT = "statefulset-controller"
EXPECTATIONS_RECHECK = 1.0
"""Seconds after which a sync held back by expectations looks again (the informer event
that satisfies them normally wakes it first)."""

Obj = Mapping[str, Any]


def _has_controller(obj: Obj) -> bool:
    return any(
        r.get("controller") is True
        for r in (obj.get("metadata") or {}).get("ownerReferences") or ()
    )


class StatefulSetReconciler:
    """Reconciles apps/v1 StatefulSets: reads from ``manager.cache``, writes to the API."""

    def __init__(self, manager: Manager) -> None:
        self._cache = manager.cache
        self._api = manager.api_reader
        self._recorder = manager.get_event_recorder(COMPONENT)
        self.pod_control = StatefulPodControl(self._api, self._recorder, reader=self._cache)
        self.status_updater = ApiStatusUpdater(self._api)
        self.control = StatefulSetControl(self.pod_control, self.status_updater, self._api)

    # --- event mapping ---------------------------------------------------------------------

    def sets_selecting(self, obj: Obj) -> list[Request]:
        """The sets of ``obj``'s namespace whose selector matches its labels."""
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        if not labels:
            return []
        requests = []
        for sts in self._cache.list(StatefulSet, meta.get("namespace")):
            try:
                selector = label_selector_from_dict((sts.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not selector.matches_nothing() and selector.matches(labels):
                requests.append(Request.for_object(sts))
        return requests

    def orphan_pod_requests(self, pod: Obj) -> Iterable[Request]:
        """An orphan pod wakes the sets that could adopt it."""
        return [] if _has_controller(pod) else self.sets_selecting(pod)

    # --- sync ------------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = f"{request.namespace}/{request.name}"
        expectations = self.pod_control.expectations
        try:
            sts = self._cache.get(StatefulSet, request.name, request.namespace)
        except Exception as err:
            if is_not_found(err):
                log.debug("%s: StatefulSet has been deleted", key)
                expectations.delete_expectations(key)
                return None
            raise
        # The status this controller wrote last (currentReplicas after deleting a pod for an
        # update, say) must be in the cache first: decisions such as which revision a
        # recreated pod gets read it. The informer event for that write wakes us again.
        seen, waited = self.status_updater.written.is_satisfied(sts)
        if not seen and waited < EXPECTATIONS_TIMEOUT:
            log.debug("%s: waiting for the cache to show our last status write", key)
            return Result(requeue_after=EXPECTATIONS_RECHECK)
        selector = self._selector(sts)
        if selector is None:
            return None
        namespace = request.namespace
        all_pods = self._cache.list(Pod, namespace)
        observe_pods(expectations, set_key(sts), all_pods)
        satisfied, waited, pending = expectations.satisfied_expectations(key)
        if not satisfied:
            if waited < EXPECTATIONS_TIMEOUT:
                log.debug("%s: waiting for the cache to show %s", key, pending)
                return Result(requeue_after=EXPECTATIONS_RECHECK)
            log.warning("%s: expectations %s timed out; syncing anyway", key, pending)
            expectations.delete_expectations(key)
        spec_selector = (sts.get("spec") or {}).get("selector")
        can_adopt = recheck_controller(self._api, dict(sts))
        revisions = self._adopt_orphan_revisions(sts, spec_selector, can_adopt)
        manager = ControllerRefManager(self._api, dict(sts), selector, StatefulSet, can_adopt)
        pods = manager.claim(all_pods, lambda pod: is_member_of(sts, pod))
        result = self.control.update(sts, revisions, pods)
        if result.requeue_after is not None:
            return Result(requeue_after=result.requeue_after)
        return None

    def _selector(self, sts: Obj) -> LabelSelector | None:
        """The parsed selector, or None after a Warning event (a user error: no retry)."""
        raw = (sts.get("spec") or {}).get("selector")
        try:
            selector = label_selector_from_dict(raw)
        except ValueError as err:
            message = f"invalid selector {raw!r}: {err}"
        else:
            if not selector.matches_nothing() and raw:
                return selector
            message = f"selector {raw!r} selects nothing or everything"
        log.warning("%s: %s", set_key(sts), message)
        self._recorder.event(sts, "Warning", "InvalidSelector", message)
        return None

    def _adopt_orphan_revisions(
        self, sts: Obj, selector: Any, can_adopt: Any
    ) -> list[dict[str, Any]]:
        revisions = list_revisions(self._cache, sts, selector)
        orphans = [r for r in revisions if not _has_controller(r)]
        if not orphans:
            return revisions
        manager = ControllerRefManager(self._api, dict(sts), selector, StatefulSet, can_adopt)
        adopted = manager.claim(orphans)
        return [r for r in revisions if _has_controller(r)] + adopted


def setup(
    manager: Manager, *, max_concurrent_reconciles: int = 1, name: str = CONTROLLER_NAME
) -> Controller:
    """Register the StatefulSet controller with ``manager``; return the controller.

    This is the entry point for ``kube-runtime run statefulset`` (``--workers`` ->
    ``max_concurrent_reconciles``).
    """
    reconciler = StatefulSetReconciler(manager)
    return (
        Builder(manager)
        .named(name)
        .for_(StatefulSet)
        .owns(Pod)
        .owns(ControllerRevision)
        .watches(Pod, reconciler.orphan_pod_requests)
        .watches(PersistentVolumeClaim, reconciler.sets_selecting)
        .with_options(max_concurrent_reconciles=max_concurrent_reconciles)
        .complete(reconciler)
    )
