"""Event wiring and the sync of the Deployment controller (upstream ``deployment_controller.go``).

Watches (:func:`setup`): Deployments; ReplicaSets by controller owner; ReplicaSets without a
controller wake the Deployments of their namespace whose selector matches them (so orphans
get adopted); a pod wakes the Deployment of its ReplicaSet when that Deployment uses the
Recreate strategy (which waits for the old pods to go).

A sync (:meth:`DeploymentReconciler.reconcile`), as upstream's ``syncDeployment``: a
Deployment whose selector is empty selects everything and only gets a ``SelectingAll``
Warning event (and its ``observedGeneration``); otherwise its ReplicaSets are claimed
(adopting matching orphans, releasing owned ones that stopped matching), its pods grouped by
ReplicaSet; then a Deployment being deleted only gets its status, a pause or resume is
recorded in the ``Progressing`` condition, a paused Deployment or a scaling (an active
ReplicaSet sized for another ``spec.replicas``) is scaled proportionally
(:meth:`~.sync.DeploymentControl.sync`), and anything else takes a step of its strategy
(:mod:`.rolling`, :mod:`.recreate`). A step that shows no progress requeues the Deployment for
the moment its progress deadline passes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from controllers._register import collaborators, register
from controllers.deployment import util
from controllers.deployment.recreate import rollout_recreate
from controllers.deployment.replicaset import PERMISSIONS as REPLICASET_PERMISSIONS
from controllers.deployment.replicaset import setup_replicasets
from controllers.deployment.rolling import rollout_rolling
from controllers.deployment.sync import DeploymentControl
from kube_runtime import meta, rbac
from kube_runtime.claiming import ControllerRefManager, claim_candidates, recheck_controller
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.controller import Controller
from kube_runtime.events import Recorder
from kube_runtime.expectations import wait_result
from kube_runtime.handlers import SelectingOwners
from kube_runtime.kinds import Deployment, Pod, ReplicaSet
from kube_runtime.meta import ObjView as Obj
from kube_runtime.reconcile import Request, Result
from kube_runtime.selectors import LabelSelector, label_selector_from_dict

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = [
    "COMPONENT",
    "CONTROLLER_NAME",
    "PERMISSIONS",
    "DeploymentReconciler",
    "setup",
]

log = logging.getLogger(__name__)

CONTROLLER_NAME = "deployment"
COMPONENT = "deployment-controller"
"""The event source of the controller."""
EXPECTATIONS_RECHECK = 1.0
"""Seconds after which a sync held back by a write the cache does not show yet looks again
(the informer event of that write normally wakes the Deployment first)."""


class DeploymentReconciler:
    """Reconciles apps/v1 Deployments (see the module docstring).

    ``client`` reaches the API (every write; the fresh read before an adoption); ``reader``
    serves the other reads (the manager's cache, or a FakeClient in a test). ``recorder``
    records events on the Deployment.
    """

    def __init__(
        self,
        client: Client,
        reader: Reader,
        recorder: Recorder,
        *,
        logger: logging.Logger | None = None,
    ) -> None:
        self.log = logger if logger is not None else log
        self._client = client
        self._reader = reader
        self._recorder = recorder
        self._selecting = SelectingOwners(reader, Deployment)
        self.control = DeploymentControl(client, reader, recorder, logger=self.log)

    # --- event mapping ----------------------------------------------------------------------

    def orphan_replica_set_requests(self, rs: Obj) -> list[Request]:
        """An orphan ReplicaSet wakes the Deployments that could adopt it."""
        return self._selecting(rs)

    def recreate_pod_requests(self, pod: Obj) -> list[Request]:
        """A pod of a ReplicaSet of a Recreate Deployment wakes that Deployment."""
        ref = meta.controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return []
        namespace = meta.namespace(pod)
        try:
            rs = self._reader.get(ReplicaSet, str(ref.get("name") or ""), namespace)
        except NotFound:
            return []
        owner = meta.controller_ref(rs)
        if (
            owner is None
            or owner.get("kind") != "Deployment"
            or rs["metadata"].get("uid") != ref.get("uid")
        ):
            return []
        try:
            d = self._reader.get(Deployment, str(owner.get("name") or ""), namespace)
        except NotFound:
            return []
        if util.is_rolling_update(d) or meta.uid(d) != owner.get("uid"):
            return []
        return [Request.for_object(d)]

    # --- sync -----------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = request.key
        try:
            cached = self._reader.get(Deployment, request.name, request.namespace)
        except NotFound:
            self.log.debug("%s: Deployment has been deleted", key)
            return None
        wait = self._wait_for_writes(key, cached)
        if wait is not None:
            return wait
        d: dict[str, Any] = meta.deep_copy(dict(cached))
        raw_selector = (d.get("spec") or {}).get("selector")
        if raw_selector == {} or raw_selector is None:
            self._recorder.event(
                d,
                "Warning",
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            status = d.setdefault("status", {})
            if int(status.get("observedGeneration") or 0) < meta.generation(d):
                status["observedGeneration"] = meta.generation(d)
                self.control.update_status(d)
            return None
        try:
            selector = label_selector_from_dict(raw_selector)
        except ValueError as err:
            self.log.warning("%s: invalid selector: %s", key, err)
            self._recorder.event(d, "Warning", "InvalidSelector", f"invalid selector: {err}")
            return None
        rs_list = self._replica_sets_for(d, selector)
        for rs in rs_list:
            wait = self._wait_for_writes(key, rs)
            if wait is not None:
                return wait
        if meta.is_deleting(d):
            self.control.sync_status_only(d, rs_list)
            return None
        self.control.check_paused_conditions(d)
        if (d.get("spec") or {}).get("paused"):
            self.control.sync(d, rs_list)
            return None
        if self.control.is_scaling_event(d, rs_list):
            self.control.sync(d, rs_list)
            return None
        strategy = ((d.get("spec") or {}).get("strategy") or {}).get("type") or util.ROLLING_UPDATE
        if strategy == util.RECREATE:
            after = rollout_recreate(self.control, d, rs_list, self._pod_map(d, selector, rs_list))
        elif strategy == util.ROLLING_UPDATE:
            after = rollout_rolling(self.control, d, rs_list)
        else:
            self.log.warning("%s: unexpected deployment strategy type %s", key, strategy)
            return None
        if after is None:
            return None
        if after == 0:
            return Result(requeue=True)
        return Result(requeue_after=after)

    def _wait_for_writes(self, key: str, obj: Obj) -> Result | None:
        """Come back later while the cache shows ``obj`` older than this controller's last
        write of it (None: it shows it, or the wait timed out)."""
        seen, waited = self.control.written.is_satisfied(obj)
        return wait_result(
            seen,
            waited,
            key=key,
            what=f"our write of {meta.name(obj)}",
            recheck=EXPECTATIONS_RECHECK,
            on_timeout=lambda: self.control.written.delete(obj),
            logger=self.log,
        )

    def _replica_sets_for(self, d: dict[str, Any], selector: LabelSelector) -> list[Obj]:
        """The Deployment's ReplicaSets after adoption and release."""
        candidates = claim_candidates(self._reader, ReplicaSet, d, selector)
        manager = ControllerRefManager(
            self._client, d, selector, Deployment, recheck_controller(self._client, d)
        )
        return list(manager.claim(candidates))

    def _pod_map(self, d: Obj, selector: LabelSelector, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        """The pods the selector matches, by the uid of their ReplicaSet (among
        ``rs_list``)."""
        pod_map: dict[str, list[Obj]] = {meta.uid(rs): [] for rs in rs_list}
        pods = self._reader.list(Pod, meta.namespace(d), label_selector=str(selector))["items"]
        for pod in pods:
            ref = meta.controller_ref(pod)
            if ref is not None and ref.get("uid") in pod_map:
                pod_map[ref["uid"]].append(pod)
        return pod_map


#: The API access of the Deployment and ReplicaSet controllers (``kube-runtime rbac
#: deployment``): Deployments read through the cache with a fresh ``get`` before an
#: adoption, their status (and revision annotation) written through ``deployments/status``;
#: ReplicaSets created, updated (scaled), patched (adopted, released) and deleted (history);
#: the ``finalizers`` subresources for ``blockOwnerDeletion`` under
#: OwnerReferencesPermissionEnforcement.
PERMISSIONS = (
    rbac.rule("apps", "deployments", rbac.READ),
    rbac.rule("apps", ["deployments/status", "deployments/finalizers"], "update"),
    rbac.rule("apps", "replicasets", rbac.READ, rbac.WRITE),
    *REPLICASET_PERMISSIONS,
)


@rbac.requires(*PERMISSIONS)
def setup(
    manager: Manager,
    *,
    max_concurrent_reconciles: int = 1,
    name: str = CONTROLLER_NAME,
    replicasets: bool = True,
) -> Controller:
    """Register the Deployment controller with ``manager`` and, unless ``replicasets`` is
    False, the ReplicaSet controller (named ``replicaset``) that runs its pods; return the
    Deployment controller. Entry point of ``kube-runtime run deployment`` (``--workers`` ->
    ``max_concurrent_reconciles``, for both). On a cluster whose kube-controller-manager runs
    its own, switch those off first (``--controllers=*,-deployment,-replicaset``)."""
    reconciler = DeploymentReconciler(*collaborators(manager, COMPONENT), logger=log)
    controller = register(
        manager,
        reconciler,
        name=name,
        kind=Deployment,
        owns=[ReplicaSet],
        watches=[
            (ReplicaSet, reconciler.orphan_replica_set_requests),
            (Pod, reconciler.recreate_pod_requests),
        ],
        workers=max_concurrent_reconciles,
    )
    if replicasets:
        setup_replicasets(manager, max_concurrent_reconciles=max_concurrent_reconciles)
    return controller
