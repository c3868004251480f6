"""Event wiring and the sync of the CloneSet controller (openkruise
``cloneset/cloneset_controller.go``).

Watches (:func:`setup`): CloneSets; Pods and PersistentVolumeClaims by controller owner; Pods
without a controller wake every set of their namespace whose selector matches them (adoption).

A sync (:meth:`CloneSetReconciler.reconcile`), in upstream's order: read the set from the cache
(gone: forget its expectations); wait for our last status write to show; validate the spec
(an invalid one: Warning event + ``FailedScale`` condition, nothing else); wait until the pods
and claims this controller created/deleted show in the cache (scale expectations, requeue after
the remaining timeout); claim the namespace's active pods (adopt/release) and take the set's
claims; resolve the current/update revisions (collision count); wait for in-place updated pods
to show their new revision (update expectations) and for lifecycle/label writes to show
(resourceVersion expectations); scale, and only when scaling wrote nothing, update; write the
status; drop podsToDelete entries naming no pod; truncate the revision history; requeue for
in-place grace periods and minReadySeconds.
"""

from __future__ import annotations

import copy
import functools
import logging
import pathlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from controllers.cloneset import core
from controllers.cloneset.lifecycle import LifecycleControl
from controllers.cloneset.scale import ScaleControl
from controllers.cloneset.status import (
    FAILED_SCALE,
    FAILED_UPDATE,
    calculate_status,
    set_condition,
    status_changed,
)
from controllers.cloneset.update import UpdateControl, UpdateError
from kube_runtime import crds
from kube_runtime.builder import Builder
from kube_runtime.claiming import ControllerRefManager, recheck_controller
from kube_runtime.client.errors import is_not_found
from kube_runtime.controller import Controller
from kube_runtime.expectations import (
    ResourceVersionExpectations,
    ScaleAction,
    ScaleExpectations,
    UpdateExpectations,
    wait_result,
)
from kube_runtime.kinds import PersistentVolumeClaim, Pod
from kube_runtime.reconcile import Request, Result
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.workloads.inplace import InPlaceControl
from kube_runtime.workloads.pods import is_active, is_available
from kube_runtime.workloads.revision import (
    apply_revision,
    list_revisions,
    resolve_revisions,
    truncate_history,
)

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = ["CONTROLLER_NAME", "CRD_PATH", "CloneSetReconciler", "install_crd", "setup"]

log = logging.getLogger(__name__)

CONTROLLER_NAME = "cloneset"
COMPONENT = "cloneset-controller"
CRD_PATH = pathlib.Path(__file__).with_name("crd.yaml")
DEFAULT_HISTORY_LIMIT = 10
STATUS_RECHECK = 1.0
"""Seconds after which a sync waiting for its own status write to show looks again."""

Obj = Mapping[str, Any]


def _meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name") or "")


def _has_controller(obj: Obj) -> bool:
    return any(r.get("controller") is True for r in _meta(obj).get("ownerReferences") or ())


def _controlled_by(obj: Obj, uid: str) -> bool:
    return any(
        r.get("controller") is True and r.get("uid") == uid
        for r in _meta(obj).get("ownerReferences") or ()
    )


class CloneSetReconciler:
    """Reconciles CloneSets: reads from ``manager.cache``, writes to the API."""

    def __init__(self, manager: Manager) -> None:
        self._cache = manager.cache
        self._api = manager.api_reader
        self._recorder = manager.get_event_recorder(COMPONENT)
        self.scale_expectations = ScaleExpectations()
        self.update_expectations = UpdateExpectations()
        self.rv_expectations = ResourceVersionExpectations()
        lifecycle_control = LifecycleControl(self._api)
        self.scale_control = ScaleControl(
            self._api,
            self._recorder,
            self.scale_expectations,
            self.rv_expectations,
            lifecycle_control,
        )
        self.update_control = UpdateControl(
            self._api,
            self._recorder,
            InPlaceControl(self._api, on_write=self.rv_expectations.expect),
            lifecycle_control,
            self.update_expectations,
            self.rv_expectations,
        )

    # --- event mapping ---------------------------------------------------------------------

    def sets_selecting(self, obj: Obj) -> list[Request]:
        """The CloneSets of ``obj``'s namespace whose selector matches its labels."""
        labels = _meta(obj).get("labels") or {}
        if not labels:
            return []
        requests = []
        for cs in self._cache.list(core.CLONESET, _meta(obj).get("namespace")):
            try:
                selector = label_selector_from_dict((cs.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not selector.matches_nothing() and selector.matches(labels):
                requests.append(Request.for_object(cs))
        return requests

    def orphan_pod_requests(self, pod: Obj) -> Iterable[Request]:
        """An orphan pod wakes the sets that could adopt it."""
        return [] if _has_controller(pod) else self.sets_selecting(pod)

    # --- sync ------------------------------------------------------------------------------

    def _forget(self, key: str) -> None:
        self.scale_expectations.delete_expectations(key)
        self.update_expectations.delete_expectations(key)

    def reconcile(self, request: Request) -> Result | None:
        key = f"{request.namespace}/{request.name}"
        try:
            cs = self._cache.get(core.CLONESET, request.name, request.namespace)
        except Exception as err:
            if is_not_found(err):
                log.debug("%s: CloneSet has been deleted", key)
                self._forget(key)
                return None
            raise
        seen, waited = self.rv_expectations.is_satisfied(cs)
        wait = wait_result(
            seen, waited, key=key, what="our last status write", recheck=STATUS_RECHECK
        )
        if wait is not None:
            return wait
        try:
            core.validate(cs)
        except core.SpecError as err:
            self._report_invalid(cs, err)
            return None

        namespace = request.namespace
        all_pods = self._cache.list(Pod, namespace)
        uid = str(_meta(cs).get("uid") or "")
        all_claims = self._cache.list(PersistentVolumeClaim, namespace)
        self._observe_scale(key, all_pods, all_claims)
        satisfied, waited, pending = self.scale_expectations.satisfied_expectations(key)
        wait = wait_result(
            satisfied,
            waited,
            key=key,
            what=pending,
            on_timeout=lambda: self.scale_expectations.delete_expectations(key),
        )
        if wait is not None:
            return wait

        selector = label_selector_from_dict((cs.get("spec") or {}).get("selector"))
        can_adopt = recheck_controller(self._api, dict(cs))
        manager = ControllerRefManager(self._api, dict(cs), selector, core.CLONESET, can_adopt)
        pods = manager.claim([p for p in all_pods if is_active(p)])
        claims = [
            c
            for c in all_claims
            if _controlled_by(c, uid) and not _meta(c).get("deletionTimestamp")
        ]

        revisions = list_revisions(self._cache, cs, (cs.get("spec") or {}).get("selector"))
        current, update, collision_count = resolve_revisions(
            self._api, cs, revisions, controller_kind=core.CLONESET
        )
        update_name = _name(update)
        if not any(_name(r) == update_name for r in revisions):
            revisions = [*revisions, dict(update)]

        for pod in pods:
            self.update_expectations.observe_updated(key, update_name, pod)
        satisfied, waited, names = self.update_expectations.satisfied_expectations(key, update_name)
        wait = wait_result(
            satisfied,
            waited,
            key=key,
            what=f"pods {names} at revision {update_name}",
            on_timeout=lambda: self.update_expectations.delete_expectations(key),
        )
        if wait is not None:
            return wait
        for pod in pods:
            self.rv_expectations.observe(pod)
            seen, waited = self.rv_expectations.is_satisfied(pod)
            wait = wait_result(
                seen,
                waited,
                key=key,
                what=f"pod {_name(pod)}",
                on_timeout=functools.partial(self.rv_expectations.delete, pod),
            )
            if wait is not None:
                return wait

        return self._sync(cs, pods, claims, revisions, current, update, collision_count)

    def _sync(
        self,
        cs: Obj,
        pods: list[dict[str, Any]],
        claims: list[dict[str, Any]],
        revisions: list[Any],
        current: Obj,
        update: Obj,
        collision_count: int,
    ) -> Result | None:
        key = core.controller_key(cs)
        current_name, update_name = _name(current), _name(update)
        current_cs = apply_revision(cs, current)
        scale_error: BaseException | None = None
        update_error: BaseException | None = None
        scaling = False
        delay = 0.0
        try:
            scaling = self.scale_control.scale(
                current_cs, cs, current_name, update_name, pods, claims
            )
        except Exception as err:
            log.warning("%s: scaling failed: %s", key, err)
            scale_error = err
        if not scaling and scale_error is None:
            try:
                delay = self.update_control.update(cs, current, update, revisions, pods)
            except Exception as err:
                log.warning("%s: updating failed: %s", key, err)
                update_error = err
                if isinstance(err, UpdateError):
                    self._recorder.event(cs, "Warning", "FailedUpdate", str(err))

        status = calculate_status(cs, pods, current_name, update_name, collision_count)
        set_condition(status, FAILED_SCALE, scale_error)
        set_condition(status, FAILED_UPDATE, update_error)
        self._write_status(cs, status)
        self._truncate_pods_to_delete(cs, pods)
        limit = (cs.get("spec") or {}).get("revisionHistoryLimit")
        truncate_history(
            self._api,
            revisions,
            pods,
            current,
            update,
            DEFAULT_HISTORY_LIMIT if limit is None else int(limit),
        )
        if scale_error is not None:
            raise scale_error
        if update_error is not None:
            raise update_error
        delay = _min_positive(delay, self._min_ready_requeue(cs, pods))
        return Result(requeue_after=delay) if delay > 0 else None

    def _observe_scale(self, key: str, pods: list[Any], claims: list[Any]) -> None:
        expected = self.scale_expectations.get_expectations(key)
        if not expected:
            return
        present = {_name(o): o for o in (*pods, *claims)}
        for name in expected.get(ScaleAction.CREATE, ()):
            if name in present:
                self.scale_expectations.observe_scale(key, ScaleAction.CREATE, name)
        for name in expected.get(ScaleAction.DELETE, ()):
            obj = present.get(name)
            if obj is None or _meta(obj).get("deletionTimestamp"):
                self.scale_expectations.observe_scale(key, ScaleAction.DELETE, name)

    def _report_invalid(self, cs: Obj, err: core.SpecError) -> None:
        key = core.controller_key(cs)
        log.warning("%s: invalid spec: %s", key, err)
        self._recorder.event(cs, "Warning", "InvalidSpec", str(err))
        status = copy.deepcopy(dict(cs.get("status") or {}))
        set_condition(status, FAILED_SCALE, f"invalid spec: {err}")
        status["observedGeneration"] = _meta(cs).get("generation")
        for field in (
            "replicas",
            "readyReplicas",
            "availableReplicas",
            "updatedReplicas",
            "updatedReadyReplicas",
        ):
            status.setdefault(field, 0)
        self._write_status(cs, status)

    def _write_status(self, cs: Obj, status: dict[str, Any]) -> None:
        if not status_changed(cs, status):
            return
        obj = copy.deepcopy(dict(cs))
        obj["status"] = status
        written = self._api.update_status(obj)
        self.rv_expectations.expect(written)
        log.debug("%s: status written", core.controller_key(cs))

    def _truncate_pods_to_delete(self, cs: Obj, pods: list[Any]) -> None:
        listed = ((cs.get("spec") or {}).get("scaleStrategy") or {}).get("podsToDelete") or []
        if not listed:
            return
        names = {_name(p) for p in pods}
        kept = [n for n in listed if n in names]
        if len(kept) == len(listed):
            return
        meta = _meta(cs)
        self._api.patch(
            core.CLONESET,
            _name(cs),
            {
                "metadata": {"resourceVersion": meta.get("resourceVersion")},
                "spec": {"scaleStrategy": {"podsToDelete": kept or None}},
            },
            namespace=meta.get("namespace"),
        )
        log.info("%s: podsToDelete truncated to %s", core.controller_key(cs), kept)

    @staticmethod
    def _min_ready_requeue(cs: Obj, pods: list[Any]) -> float:
        min_ready = float((cs.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready <= 0:
            return 0.0
        delay = 0.0
        for pod in pods:
            available, left = is_available(pod, min_ready)
            if not available and left is not None:
                delay = _min_positive(delay, left + 0.05)
        return delay


def _min_positive(a: float, b: float) -> float:
    if a <= 0:
        return b
    if b <= 0:
        return a
    return min(a, b)


def install_crd(client: Any, *, timeout: float = 30.0) -> None:
    """Create the CloneSet CRD from ``crd.yaml`` unless it exists; wait until it is Established
    (TimeoutError otherwise)."""
    crds.install_crd(client, CRD_PATH, timeout=timeout)


_install_crd = install_crd


def setup(
    manager: Manager,
    *,
    max_concurrent_reconciles: int = 1,
    name: str = CONTROLLER_NAME,
    install_crd: bool = False,
) -> Controller:
    """Register the CloneSet controller with ``manager``; return the controller.

    Entry point of ``kube-runtime run cloneset``. The CRD (``crd.yaml`` /
    ``deploy/cloneset-crd.yaml``) must be installed, as kruise requires; ``install_crd=True``
    installs it first when missing (handy on the embedded cluster).
    """
    if install_crd:
        _install_crd(manager.api_reader)
    reconciler = CloneSetReconciler(manager)
    return (
        Builder(manager)
        .named(name)
        .for_(core.CLONESET)
        .owns(Pod)
        .owns(PersistentVolumeClaim)
        .watches(Pod, reconciler.orphan_pod_requests)
        .with_options(max_concurrent_reconciles=max_concurrent_reconciles)
        .complete(reconciler)
    )
