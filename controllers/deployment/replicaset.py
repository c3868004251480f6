"""The ReplicaSet controller (upstream ``pkg/controller/replicaset/replica_set.go``).

A sync (:meth:`ReplicaSetReconciler.reconcile`) reads the ReplicaSet from the cache, waits
for the pod creations and deletions of earlier syncs to show there (expectations, given up
after :data:`~kube_runtime.expectations.EXPECTATIONS_TIMEOUT`), claims the namespace's active
pods (adopting orphans its selector matches, releasing owned pods that stopped matching),
creates or deletes pods to reach ``spec.replicas`` and writes the status. As upstream:

* creations go in slow-start batches (1, 2, 4, ... pods, those of a batch concurrently; a
  failed batch stops the rest, :func:`slow_start_batch`), at most :data:`BURST_REPLICAS` per
  sync, each pod named ``<replicaset>-<random>`` from the template, controlled by the
  ReplicaSet; only a pod whose create succeeded is expected;
* deletions run concurrently too (upstream deletes every victim on its own goroutine), each
  expected before it is sent and no longer once it failed;
* the events of a sync's creations and deletions come out in the order of the calls, whatever
  order the calls end in; at most ``batch_limit`` calls run at a time;
* deletions take the pods that matter least first (:func:`pods_to_delete`: unscheduled,
  pending, not ready, more co-located pods of the same owner, lower deletion cost, ready for
  less time, more restarts, newer);
* the status (:func:`calculate_status`) counts the pods, those carrying every template
  label (``fullyLabeledReplicas``), the ready ones and those ready for ``minReadySeconds``
  (``availableReplicas``); a failed create or delete sets the ``ReplicaFailure`` condition
  (``FailedCreate`` / ``FailedDelete``), a sync without failure removes it; the status is
  written only when a count, the conditions or ``observedGeneration`` changes;
* a ReplicaSet with ready pods not yet available is synced again when the first of them
  becomes available.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controllers._register import collaborators, register
from controllers._scaling import observe_listed, wait_for_scale
from controllers.deployment.conditions import REPLICA_FAILURE, new_condition, remove_condition
from controllers.deployment.conditions import get_condition as _get_condition
from kube_runtime import clock as _clock
from kube_runtime import meta, rbac
from kube_runtime.cache import INDEX_CONTROLLER_UID
from kube_runtime.claiming import ControllerRefManager, claim_candidates, recheck_controller
from kube_runtime.client.errors import Conflict, NotFound
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.controller import Controller
from kube_runtime.events import Recorder
from kube_runtime.expectations import ScaleAction, ScaleExpectations
from kube_runtime.handlers import SelectingOwners
from kube_runtime.kinds import Pod, ReplicaSet
from kube_runtime.meta import ObjView as Obj
from kube_runtime.ownership import owner_reference
from kube_runtime.reconcile import Request, Result
from kube_runtime.selectors import LabelSelector, label_selector_from_dict
from kube_runtime.workloads import batches
from kube_runtime.workloads.batches import DEFAULT_LIMIT, call_each, in_order
from kube_runtime.workloads.pods import (
    colocation_ranks,
    is_active,
    is_available,
    is_ready,
    sort_active_pods_with_ranks,
)

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = [
    "BURST_REPLICAS",
    "COMPONENT",
    "CONTROLLER_NAME",
    "PERMISSIONS",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "ReplicaSetReconciler",
    "calculate_status",
    "pod_from_template",
    "pods_to_delete",
    "setup_replicasets",
    "slow_start_batch",
]

log = logging.getLogger(__name__)

CONTROLLER_NAME = "replicaset"
COMPONENT = "replicaset-controller"
"""The event source of the controller."""
BURST_REPLICAS = 500
"""The most pods one sync creates or deletes (upstream ``BurstReplicas``)."""
SLOW_START_INITIAL_BATCH_SIZE = 1
"""The first batch of pod creations; each successful batch doubles the next."""
EXPECTATIONS_RECHECK = 1.0
"""Seconds after which a sync held back by expectations looks again."""
AVAILABILITY_SLACK = 0.01
"""Seconds past the moment a ready pod becomes available at which its ReplicaSet is synced."""
"""Seconds after which a sync held back by expectations looks again."""


# --- pure decisions ---------------------------------------------------------------------------


def slow_start_batch(
    count: int,
    initial_batch_size: int,
    fn: Callable[[], None],
    *,
    limit: int = DEFAULT_LIMIT,
) -> tuple[int, BaseException | None]:
    """Call ``fn`` ``count`` times in batches of ``initial_batch_size``, doubling after each
    batch that fully succeeded, the calls of a batch concurrently (at most ``limit`` at a
    time, :func:`~kube_runtime.workloads.batches.slow_start_batch`; ``fn`` must be safe to
    call from several threads); stop after the first batch with a failure, once the rest of
    that batch has run. ``(successful calls, the first error or None)``."""
    return batches.slow_start_batch(count, initial_batch_size, lambda _i: fn(), limit=limit)


def pods_to_delete(
    filtered_pods: Sequence[Obj], related_pods: Iterable[Obj], diff: int
) -> list[Obj]:
    """The ``diff`` pods to delete of ``filtered_pods`` (upstream ``getPodsToDelete``): when
    not all go, ranked by ``ActivePodsWithRanks`` with ranks from the active ``related_pods``
    (those of every ReplicaSet of the same owner) on each pod's node."""
    if diff < len(filtered_pods):
        ranks = colocation_ranks(filtered_pods, related_pods)
        filtered_pods = sort_active_pods_with_ranks(filtered_pods, ranks)
    return list(filtered_pods[:diff])


def _labels_match(template_labels: Mapping[str, str], labels: Mapping[str, str] | None) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in template_labels.items())


def calculate_status(
    rs: Obj,
    pods: Sequence[Obj],
    manage_error: BaseException | None,
    now: Any,
) -> tuple[dict[str, Any], float | None]:
    """The ReplicaSet's new status from its claimed active ``pods`` and the error of the
    sync's creations/deletions, and the seconds until the next ready pod becomes available
    (None when none is waiting for ``minReadySeconds``). ``now``: a ``datetime``."""
    spec = rs.get("spec") or {}
    status = dict(rs.get("status") or {})
    if status.get("conditions"):
        status["conditions"] = [dict(c) for c in status["conditions"]]
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    fully_labeled = ready = available = 0
    soonest: float | None = None
    for pod in pods:
        if _labels_match(template_labels, (pod.get("metadata") or {}).get("labels")):
            fully_labeled += 1
        if is_ready(pod):
            ready += 1
            ok, remaining = is_available(pod, min_ready, now)
            if ok:
                available += 1
            elif remaining is not None:
                soonest = remaining if soonest is None else min(soonest, remaining)
    failure = _get_condition(status, REPLICA_FAILURE)
    if manage_error is not None and failure is None:
        diff = len(pods) - int(spec.get("replicas", 1))
        reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
        status.setdefault("conditions", []).append(
            new_condition(
                REPLICA_FAILURE, "True", reason, str(manage_error), now, update_time=False
            )
        )
    elif manage_error is None and failure is not None:
        remove_condition(status, REPLICA_FAILURE)
    status["replicas"] = len(pods)
    status["fullyLabeledReplicas"] = fully_labeled
    status["readyReplicas"] = ready
    status["availableReplicas"] = available
    return status, soonest


def _count(status: Mapping[str, Any], field: str) -> int:
    return int(status.get(field) or 0)


def status_unchanged(rs: Obj, status: Mapping[str, Any]) -> bool:
    """Upstream's steady state: counts, conditions and ``observedGeneration`` as recorded."""
    old = rs.get("status") or {}
    return (
        all(
            _count(old, f) == _count(status, f)
            for f in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
        )
        and int((rs.get("metadata") or {}).get("generation") or 0)
        == _count(old, "observedGeneration")
        and (old.get("conditions") or []) == (status.get("conditions") or [])
    )


def pod_from_template(rs: Obj) -> dict[str, Any]:
    """A new pod of ``rs`` (upstream ``GetPodFromTemplate``): the template's labels,
    annotations, finalizers and spec, ``generateName`` ``<rs>-``, controlled by ``rs``."""
    template = (rs.get("spec") or {}).get("template") or {}
    template_meta = template.get("metadata") or {}
    metadata: dict[str, Any] = {
        "generateName": f"{meta.name(rs)}-",
        "namespace": meta.namespace(rs),
        "ownerReferences": [
            owner_reference(
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": rs["metadata"]},
                controller=True,
                block_owner_deletion=True,
            )
        ],
    }
    for field in ("labels", "annotations", "finalizers"):
        if template_meta.get(field):
            metadata[field] = meta.deep_copy(template_meta[field])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": meta.deep_copy(template.get("spec") or {}),
    }


# --- the controller ---------------------------------------------------------------------------


class ReplicaSetReconciler:
    """Reconciles apps/v1 ReplicaSets (see the module docstring).

    ``client`` reaches the API (every write; the fresh read before an adoption and after a
    conflict); ``reader`` serves the other reads (the manager's cache: pods by the
    ``controller-uid`` index and by label selector). ``recorder`` records events on the
    ReplicaSet. Time (``minReadySeconds``, condition stamps) comes from the clock current
    when the reconciler is made. ``batch_limit``: creations (of one slow-start batch) or
    deletions of a sync that run at a time (1: one after the other); ``client`` and
    ``recorder`` must then be safe to call from several threads.
    """

    def __init__(
        self,
        client: Client,
        reader: Reader,
        recorder: Recorder,
        *,
        burst_replicas: int = BURST_REPLICAS,
        batch_limit: int = DEFAULT_LIMIT,
        logger: logging.Logger | None = None,
    ) -> None:
        if batch_limit < 1:
            raise ValueError(
                f"ReplicaSetReconciler: batch_limit must be at least 1, not {batch_limit}"
            )
        self.clock = _clock.current()
        self.log = logger if logger is not None else log
        self._client = client
        self._reader = reader
        self._recorder = recorder
        self._selecting = SelectingOwners(reader, ReplicaSet)
        self.burst_replicas = burst_replicas
        self.batch_limit = batch_limit
        """Creations or deletions of one sync that run concurrently (see the class)."""
        self.expectations = ScaleExpectations()
        """Pods created or deleted by earlier syncs, per ReplicaSet, until the cache shows
        it."""

    # --- event mapping ----------------------------------------------------------------------

    def orphan_pod_requests(self, pod: Obj) -> list[Request]:
        """An orphan pod wakes the ReplicaSets of its namespace whose selector matches it."""
        return self._selecting(pod)

    # --- sync -----------------------------------------------------------------------------

    def reconcile(self, request: Request) -> Result | None:
        key = request.key
        try:
            rs = self._reader.get(ReplicaSet, request.name, request.namespace)
        except NotFound:
            self.expectations.delete_expectations(key)
            return None
        try:
            selector = label_selector_from_dict((rs.get("spec") or {}).get("selector"))
        except ValueError as err:
            self.log.warning("%s: invalid selector: %s", key, err)
            return None
        candidates = self._candidate_pods(rs, selector)
        self._observe(key, candidates)
        wait = wait_for_scale(self.expectations, key, recheck=EXPECTATIONS_RECHECK, logger=self.log)
        needs_sync = wait is None
        active = [p for p in candidates if is_active(p)]
        manager = ControllerRefManager(
            self._client, dict(rs), selector, ReplicaSet, recheck_controller(self._client, rs)
        )
        pods = manager.claim(active)
        manage_error: BaseException | None = None
        if needs_sync and not meta.is_deleting(rs):
            try:
                self._manage_replicas(key, rs, pods)
            except Exception as err:
                manage_error = err
        now = self.clock.now()
        status, soonest = calculate_status(rs, pods, manage_error, now)
        self._update_status(rs, status)
        if manage_error is not None:
            raise manage_error
        waits = [w for w in (soonest, wait.requeue_after if wait else None) if w is not None]
        if waits:
            # just past the moment (availability needs "strictly before now")
            return Result(requeue_after=min(waits) + AVAILABILITY_SLACK)
        return None

    def _candidate_pods(self, rs: Obj, selector: LabelSelector) -> list[dict[str, Any]]:
        """Pods the ReplicaSet controls plus the orphans its selector matches."""
        return claim_candidates(self._reader, Pod, rs, selector)

    def _observe(self, key: str, pods: Iterable[Obj]) -> None:
        observe_listed(self.expectations, key, pods)

    def _manage_replicas(self, key: str, rs: Obj, pods: Sequence[Obj]) -> None:
        """Create or delete pods toward ``spec.replicas``; raise the first failure."""
        diff = len(pods) - int((rs.get("spec") or {}).get("replicas", 1))
        if diff < 0:
            count = min(-diff, self.burst_replicas)
            self.log.info("%s: too few replicas, creating %d", key, count)
            _created, error = slow_start_batch(
                count,
                SLOW_START_INITIAL_BATCH_SIZE,
                lambda: self._create_pod(key, rs),
                limit=self.batch_limit,
            )
            if error is not None:
                raise error
        elif diff > 0:
            count = min(diff, self.burst_replicas)
            self.log.info("%s: too many replicas, deleting %d", key, count)
            victims = pods_to_delete(pods, self._related_pods(rs), count)
            # Expected before any is sent (upstream ExpectDeletions): a deletion's event can
            # reach a sync of this set before the call that made it returns.
            for pod in victims:
                self.expectations.expect_scale(key, ScaleAction.DELETE, meta.name(pod))
            errors = call_each(
                lambda i: self._delete_pod(key, rs, victims[i]),
                range(len(victims)),
                limit=self.batch_limit,
            )
            if errors:
                raise errors[0]

    def _create_pod(self, key: str, rs: Obj) -> None:
        """One creation (a step of a concurrent batch): only a created pod is expected (the
        name comes from the API); events in the order of the steps."""
        try:
            created = self._client.create(pod_from_template(rs))
        except Exception as err:
            if _namespace_terminating(err):
                return  # every create fails while the namespace goes; nothing to report
            message = f"Error creating: {err}"
            in_order(lambda: self._recorder.event(rs, "Warning", "FailedCreate", message))
            raise
        name = meta.name(created)
        self.expectations.expect_scale(key, ScaleAction.CREATE, name)
        in_order(
            lambda: self._recorder.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {name}")
        )

    def _delete_pod(self, key: str, rs: Obj, pod: Obj) -> None:
        """One deletion (a step of a concurrent batch); a failed one is no longer expected
        (its informer event will not come); a pod gone already is no failure."""
        name = meta.name(pod)
        try:
            self._client.delete(Pod, name, meta.namespace(pod))
        except NotFound:
            self.expectations.observe_scale(key, ScaleAction.DELETE, name)
            return
        except Exception as err:
            self.expectations.observe_scale(key, ScaleAction.DELETE, name)
            message = f"Error deleting: {err}"
            in_order(lambda: self._recorder.event(rs, "Warning", "FailedDelete", message))
            raise
        in_order(
            lambda: self._recorder.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        )

    def _related_pods(self, rs: Obj) -> list[dict[str, Any]]:
        """The pods of every ReplicaSet controlled by ``rs``'s controller (just ``rs``'s
        when it has none)."""
        namespace = meta.namespace(rs)
        owner = meta.controller_ref(rs)
        siblings: list[Obj] = [rs]
        if owner is not None:
            siblings = self._reader.list(
                ReplicaSet, namespace, index=(INDEX_CONTROLLER_UID, owner.get("uid") or "")
            )["items"]
        related: list[dict[str, Any]] = []
        for sibling in siblings:
            related.extend(
                self._reader.list(Pod, namespace, index=(INDEX_CONTROLLER_UID, meta.uid(sibling)))[
                    "items"
                ]
            )
        return related

    def _update_status(self, rs: Obj, status: dict[str, Any]) -> Obj | None:
        """Write ``status`` unless unchanged (None then); one fresh read and retry after a
        conflict, as upstream's ``statusUpdateRetries``."""
        if status_unchanged(rs, status):
            return None
        status["observedGeneration"] = int((rs.get("metadata") or {}).get("generation") or 0)
        current: Obj = rs
        for attempt in range(2):
            body = meta.deep_copy(dict(current))
            body["status"] = _omit_zero(status)
            try:
                return self._client.status().update(body)
            except NotFound:
                return None  # deleted meanwhile: nothing left to report
            except Conflict:
                if attempt:
                    raise
                current = self._client.get(ReplicaSet, meta.name(rs), meta.namespace(rs))
        return None


def _namespace_terminating(err: BaseException) -> bool:
    """A create refused because the namespace is being deleted (upstream's
    ``NamespaceTerminatingCause``)."""
    text = str(err)
    return "NamespaceTerminating" in text or "because it is being terminated" in text


def _omit_zero(status: Mapping[str, Any]) -> dict[str, Any]:
    """The status as Go's ``omitempty`` writes it (zero counts and empty lists left out)."""
    return {k: v for k, v in status.items() if v not in (0, None, [], {})}


#: The API access of the ReplicaSet controller (``kube-runtime rbac deployment``).
PERMISSIONS = (
    rbac.rule("apps", "replicasets", rbac.READ),
    rbac.rule("apps", ["replicasets/status", "replicasets/finalizers"], "update"),
    rbac.rule("", "pods", rbac.CACHE, "create", "delete", "patch"),
    rbac.rule("", "pods/finalizers", "update"),
)


def setup_replicasets(
    manager: Manager, *, max_concurrent_reconciles: int = 1, name: str = CONTROLLER_NAME
) -> Controller:
    """Register the ReplicaSet controller with ``manager``; return it."""
    reconciler = ReplicaSetReconciler(*collaborators(manager, COMPONENT), logger=log)
    return register(
        manager,
        reconciler,
        name=name,
        kind=ReplicaSet,
        owns=[Pod],
        watches=[(Pod, reconciler.orphan_pod_requests)],
        workers=max_concurrent_reconciles,
    )
