"""Event wiring and the reconcile of the CloneSet controller (openkruise
``cloneset/cloneset_controller.go``).

Watches (:func:`setup`): CloneSets; Pods and PersistentVolumeClaims by controller owner; Pods
without a controller wake every set of their namespace whose selector matches them (adoption).

A reconcile (:meth:`CloneSetReconciler.reconcile`), in upstream's order: read the set from the
reader (gone: forget its expectations); wait for our last status write to show; parse and
validate the spec (once per generation; an invalid one: Warning event + ``FailedScale`` condition, nothing else, no
retry); wait until the pods and claims this controller created/deleted show in the reader
(scale expectations, requeue after the remaining timeout); with
``scaleStrategy.disablePVCReuse``, delete the claims whose pod is gone; claim the set's active
pods (adopt/release) and take its claims; resolve the current/update revisions (collision count);
wait for in-place updated pods to show their new revision (update expectations) and for
lifecycle/label writes to show (resourceVersion expectations); then hand over to
:meth:`CloneSetControl.sync <controllers.cloneset.control.CloneSetControl.sync>`.

The reconciler takes its collaborators: ``client`` (writes and the fresh reads adoption
needs: the API), ``reader`` (everything else: the manager's cache-backed client), an event
recorder and a logger. :func:`setup` builds them from a
:class:`~kube_runtime.manager.Manager`.
"""

from __future__ import annotations

import functools
import logging
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controllers._register import collaborators, register
from controllers._scaling import wait_for_scale
from controllers.cloneset.control import CloneSetControl
from controllers.cloneset.core import CLONESET, CloneSetView, InvalidSpecError
from controllers.cloneset.pod_control import CloneSetPodControl, Expectations
from controllers.cloneset.pvc import claims_without_reuse
from controllers.cloneset.revision import (
    FEATURE_GATES,
    RECREATE_POD_WHEN_CHANGE_VCT_GATE,
    feature_gate_enabled,
    resolve_revisions,
)
from controllers.cloneset.status import ApiStatusUpdater
from kube_runtime import crds, meta, rbac
from kube_runtime.cache import INDEX_CONTROLLER_UID
from kube_runtime.claiming import ControllerRefManager, claim_candidates, recheck_controller
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.controller import Controller
from kube_runtime.events import Recorder
from kube_runtime.expectations import wait_result
from kube_runtime.handlers import SelectingOwners
from kube_runtime.kinds import KindLike, PersistentVolumeClaim, Pod
from kube_runtime.meta import ObjView as Obj
from kube_runtime.reconcile import Request, Result
from kube_runtime.workloads.pods import is_active
from kube_runtime.workloads.revision import list_revisions
from kube_runtime.workloads.specview import SpecViews

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = ["COMPONENT", "CONTROLLER_NAME", "CRD_PATH", "CloneSetReconciler", "install_crd", "setup"]

log = logging.getLogger(__name__)

CONTROLLER_NAME = "cloneset"
COMPONENT = "cloneset-controller"
CRD_PATH = pathlib.Path(__file__).with_name("crd.yaml")
STATUS_RECHECK = 1.0
"""Seconds after which a sync waiting for its own status write to show looks again."""


class CloneSetReconciler:
    """Reconciles CloneSets: reads from ``reader``, writes through ``client``;
    ``preparing_normal`` and ``recreate_pod_when_change_vct`` as
    :class:`~controllers.cloneset.control.CloneSetControl`."""

    def __init__(
        self,
        client: Client,
        reader: Reader,
        recorder: Recorder,
        *,
        preparing_normal: bool = True,
        recreate_pod_when_change_vct: bool = False,
        logger: logging.Logger = log,
    ) -> None:
        self._client = client
        self._reader = reader
        self._log = logger
        self._selecting_sets = SelectingOwners(reader, CLONESET)
        self.spec_views = SpecViews(CloneSetView.of)
        """The sets' checked :class:`CloneSetView` per generation (the spec parsed and
        validated once per generation, as the StatefulSet's)."""
        self.expectations = Expectations()
        self.pod_control = CloneSetPodControl(client, recorder, self.expectations, logger=logger)
        self.status_updater = ApiStatusUpdater(client, self.expectations.versions, logger=logger)
        self.control = CloneSetControl(
            self.pod_control,
            self.status_updater,
            preparing_normal=preparing_normal,
            recreate_pod_when_change_vct=recreate_pod_when_change_vct,
            logger=logger,
        )
        """The sync of one set; its clock is the one current when the reconciler is made."""

    def _items(self, kind: KindLike, namespace: str, **options: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self._reader.list(kind, namespace, **options)["items"]
        return items

    # --- event mapping ---------------------------------------------------------------------

    def sets_selecting(self, obj: Obj) -> list[Request]:
        """The CloneSets of ``obj``'s namespace whose selector matches its labels."""
        return self._selecting_sets.selecting(obj)

    def orphan_pod_requests(self, pod: Obj) -> Iterable[Request]:
        """An orphan pod wakes the sets that could adopt it."""
        return self._selecting_sets(pod)

    # --- reconcile -------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = request.key
        try:
            obj = self._reader.get(CLONESET, request.name, request.namespace)
        except NotFound:
            self._log.debug("%s: CloneSet has been deleted", key)
            self.expectations.forget(key)
            return None
        seen, waited = self.expectations.versions.is_satisfied(obj)
        wait = self._wait(seen, waited, key, "our last status write", recheck=STATUS_RECHECK)
        if wait is not None:
            return wait
        try:
            cs = self.spec_views.get(obj)
        except InvalidSpecError as err:
            self.control.report_invalid(obj, err)
            return None

        all_pods = self._candidate_pods(cs)
        claims = self._items(
            PersistentVolumeClaim, cs.namespace, index=(INDEX_CONTROLLER_UID, cs.uid)
        )
        self.expectations.observe_scale(key, [*all_pods, *claims])
        wait = wait_for_scale(self.expectations.scale, key, logger=self._log)
        if wait is not None:
            return wait

        live_claims: Sequence[Obj] = [c for c in claims if not meta.is_deleting(c)]
        if cs.disable_pvc_reuse:
            owned = [p for p in all_pods if meta.controller_uid(p) == cs.uid]
            live_claims, orphaned = claims_without_reuse(
                [p for p in owned if is_active(p)],
                [p for p in owned if not is_active(p)],
                live_claims,
            )
            self.pod_control.delete_claims(cs, orphaned)
        pods = self._claim_pods(cs, all_pods)
        revisions = list_revisions(self._reader, obj, cs.selector_dict)
        current, update, collision_count = resolve_revisions(
            self._client, obj, revisions, controller_kind=CLONESET
        )
        update_name = meta.name(update)
        if not any(meta.name(r) == update_name for r in revisions):
            revisions = [*revisions, dict(update)]

        wait = self._wait_for_pod_writes(key, pods, update_name)
        if wait is not None:
            return wait
        return self.control.sync(cs, pods, live_claims, revisions, current, update, collision_count)

    def _candidate_pods(self, cs: CloneSetView) -> list[dict[str, Any]]:
        """The pods a sync claims from: those the set controls (the cache's controller-uid
        index) and the orphans its selector matches (the cache's label index), never the
        whole namespace: with many sets in a namespace a scan of it per sync made the
        controller's CPU per pod grow with the namespace (x3.0 from 1,000 to 10,000 pods)."""
        return claim_candidates(self._reader, Pod, cs.obj, cs.selector)

    def _claim_pods(self, cs: CloneSetView, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The set's active pods after adoption and release, from ``pods`` (its own and the
        orphans it may adopt, :meth:`_candidate_pods`)."""
        can_adopt = recheck_controller(self._client, dict(cs.obj))
        manager = ControllerRefManager(self._client, dict(cs.obj), cs.selector, CLONESET, can_adopt)
        return manager.claim([p for p in pods if is_active(p)])

    def _wait_for_pod_writes(
        self, key: str, pods: Sequence[Obj], update_name: str
    ) -> Result | None:
        """Come back later while the reader does not show a pod at the revision it was
        updated to in place, or a pod's last write (None: all shown, or waits timed out)."""
        updates = self.expectations.update
        for pod in pods:
            updates.observe_updated(key, update_name, pod)
        satisfied, waited, names = updates.satisfied_expectations(key, update_name)
        wait = self._wait(
            satisfied,
            waited,
            key,
            f"pods {names} at revision {update_name}",
            on_timeout=lambda: updates.delete_expectations(key),
        )
        if wait is not None:
            return wait
        versions = self.expectations.versions
        for pod in pods:
            versions.observe(pod)
            seen, waited = versions.is_satisfied(pod)
            wait = self._wait(
                seen,
                waited,
                key,
                f"pod {meta.name(pod)}",
                on_timeout=functools.partial(versions.delete, pod),
            )
            if wait is not None:
                return wait
        return None

    def _wait(
        self,
        satisfied: bool,
        waited: float,
        key: str,
        what: object,
        **options: Any,
    ) -> Result | None:
        return wait_result(satisfied, waited, key=key, what=what, logger=self._log, **options)


def install_crd(client: Client, *, timeout: float = 30.0) -> None:
    """Create the CloneSet CRD from ``crd.yaml`` unless it exists; wait until it is Established
    (TimeoutError otherwise)."""
    crds.install_crd(client, CRD_PATH, timeout=timeout)


_install_crd = install_crd


#: The API access of the CloneSet controller (``kube-runtime rbac cloneset``), proven least
#: privilege on kube-apiserver 1.20 with RBAC by tests/e2e/test_rbac_e2e.py: every grant is
#: used there. Reads go through the cache except the owner's re-read before an adoption
#: (get); ``patch`` of the CloneSet trims ``scaleStrategy.podsToDelete``; pods are written by
#: patches only; revisions as for the StatefulSet (renumbered on a rollback, re-read after a
#: name collision; not adopted); claims of deleted
#: instances are deleted; ``pods/status``: the in-place update readiness condition;
#: ``clonesets/finalizers``: ``blockOwnerDeletion`` under OwnerReferencesPermissionEnforcement.
PERMISSIONS = (
    rbac.rule(CLONESET.group, "clonesets", rbac.READ, "patch"),
    rbac.rule(CLONESET.group, ["clonesets/status", "clonesets/finalizers"], "update"),
    rbac.rule("", "pods", rbac.CACHE, "create", "patch", "delete"),
    rbac.rule("", "pods/status", "patch"),
    rbac.rule("", "persistentvolumeclaims", rbac.CACHE, "create", "delete"),
    rbac.rule("apps", "controllerrevisions", rbac.READ, "create", "update", "delete"),
)


@rbac.requires(*PERMISSIONS)
def setup(
    manager: Manager,
    *,
    max_concurrent_reconciles: int = 1,
    name: str = CONTROLLER_NAME,
    install_crd: bool = False,
    preparing_normal: bool = True,
    recreate_pod_when_change_vct: bool | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> Controller:
    """Register the CloneSet controller with ``manager``; return the controller.

    Entry point of ``kube-runtime run cloneset``. The reconciler writes through
    ``manager.api_reader``, reads through ``manager.client`` (the cache) and records events as
    ``cloneset-controller``. The CRD (``crd.yaml`` / ``deploy/crd/cloneset-crd.yaml``) must be
    installed, as kruise requires; ``install_crd=True`` installs it first when missing (handy on
    the embedded cluster). By default new pods start in ``PreparingNormal`` and become
    ``Normal`` once scheduled or their ``lifecycle.preNormal`` hook is all there, as kruise's
    do; ``preparing_normal=False`` makes them ``Normal`` at once.

    ``recreate_pod_when_change_vct`` is Kruise's ``RecreatePodWhenChangeVCTInCloneSetGate``
    (off by default, as there): on, a pod whose revision's ``volumeClaimTemplates`` hash
    differs from the update revision's is recreated with new claims instead of being updated
    in place (not under ``InPlaceOnly``). None (the default) reads the gate from the
    environment variable ``KUBE_RUNTIME_FEATURE_GATES`` in Kruise's ``--feature-gates``
    syntax (``KUBE_RUNTIME_FEATURE_GATES=RecreatePodWhenChangeVCTInCloneSetGate=true``), unless
    ``feature_gates`` (what ``kube-runtime run cloneset --feature-gates Name=true,...`` passes,
    names of :data:`~controllers.cloneset.revision.FEATURE_GATES` only; ``ValueError``
    otherwise) names the gate: the flag wins.
    """
    unknown = sorted(set(feature_gates or {}) - set(FEATURE_GATES))
    if unknown:
        raise ValueError(f"unrecognized feature gate: {unknown[0]}")
    if recreate_pod_when_change_vct is None:
        if feature_gates and RECREATE_POD_WHEN_CHANGE_VCT_GATE in feature_gates:
            recreate_pod_when_change_vct = feature_gates[RECREATE_POD_WHEN_CHANGE_VCT_GATE]
        else:
            recreate_pod_when_change_vct = feature_gate_enabled(RECREATE_POD_WHEN_CHANGE_VCT_GATE)
    if install_crd:
        _install_crd(manager.api_reader)
    reconciler = CloneSetReconciler(
        *collaborators(manager, COMPONENT),
        preparing_normal=preparing_normal,
        recreate_pod_when_change_vct=recreate_pod_when_change_vct,
        logger=log,
    )
    return register(
        manager,
        reconciler,
        name=name,
        kind=CLONESET,
        owns=[Pod, PersistentVolumeClaim],
        watches=[(Pod, reconciler.orphan_pod_requests)],
        workers=max_concurrent_reconciles,
    )
