"""The Deployment controller's shared steps (upstream ``pkg/controller/deployment/sync.go``).

:class:`DeploymentControl` holds the API side of a sync (ReplicaSet creates, updates and
deletes, the Deployment's status writes, events) and the steps every strategy uses:

* :meth:`~DeploymentControl.get_all_replica_sets_and_sync_revision`: the new ReplicaSet (the
  one whose template equals the Deployment's but for ``pod-template-hash``), created when
  asked and missing, named ``<deployment>-<hash>`` with the hash in its labels, selector and
  template (:mod:`.hashing`), its revision one past the old ones', the Deployment's revision
  annotation following it; a name taken by a ReplicaSet with another template bumps
  ``status.collisionCount`` (a new hash on the next sync);
* :meth:`~DeploymentControl.scale`: a scaling of a Deployment in the middle of a rollout (or
  paused) shared among its active ReplicaSets in proportion to their size, newer ones first
  when growing, older ones first when shrinking;
* :meth:`~DeploymentControl.cleanup_deployment`: old ReplicaSets with nothing left, beyond
  ``revisionHistoryLimit``, deleted lowest revision first;
* :meth:`~DeploymentControl.sync_deployment_status` with :func:`calculate_status` (counts
  summed over the ReplicaSets, ``Available`` True when at least ``replicas - maxUnavailable``
  pods are available);
* :meth:`~DeploymentControl.check_paused_conditions`: ``Progressing`` Unknown with
  ``DeploymentPaused`` / ``DeploymentResumed``.

Objects from the cache are never changed: the sync works on copies. The strategies are in
:mod:`.rolling` and :mod:`.recreate`, the rollout's progress in :mod:`.progress`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping, Sequence
from datetime import datetime
from typing import Any

from controllers.deployment import conditions as cond
from controllers.deployment import util
from controllers.deployment.hashing import compute_hash
from kube_runtime import clock as _clock
from kube_runtime import meta
from kube_runtime.client.errors import AlreadyExists, NotFound
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.events import Recorder
from kube_runtime.expectations import ResourceVersionExpectations
from kube_runtime.kinds import ReplicaSet
from kube_runtime.meta import ObjView as Obj
from kube_runtime.ownership import owner_reference

__all__ = ["DeploymentControl", "calculate_status", "omit_zero"]

log = logging.getLogger(__name__)

Dict = dict[str, Any]


def omit_zero(status: Mapping[str, Any]) -> Dict:
    """A status as Go's ``omitempty`` writes it: zero counts and empty lists left out."""
    return {k: v for k, v in status.items() if v not in (0, None, [], {})}


def calculate_status(
    all_rss: Sequence[Obj | None], new_rs: Obj | None, d: Obj, now: datetime
) -> Dict:
    """The Deployment's status from its ReplicaSets (upstream ``calculateStatus``): counts
    from their status (``updatedReplicas`` the new one's), ``unavailableReplicas`` the
    ReplicaSets' ``spec.replicas`` less the available pods (never below 0), the conditions
    carried over with ``Available`` set."""
    rss = [rs for rs in all_rss if rs is not None]
    available = sum(util.available_replicas(rs) for rs in rss)
    total = sum(util.spec_replicas(rs) for rs in rss)
    old = d.get("status") or {}
    status: Dict = {
        "observedGeneration": int(meta.metadata(d).get("generation") or 0),
        "replicas": sum(util.status_replicas(rs) for rs in rss),
        "updatedReplicas": util.status_replicas(new_rs),
        "readyReplicas": sum(util.ready_replicas(rs) for rs in rss),
        "availableReplicas": available,
        "unavailableReplicas": max(0, total - available),
    }
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if old.get("conditions"):
        status["conditions"] = [dict(c) for c in old["conditions"]]
    if available >= util.spec_replicas(d) - util.max_unavailable(d):
        condition = cond.new_condition(
            cond.AVAILABLE,
            "True",
            cond.MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.",
            now,
        )
    else:
        condition = cond.new_condition(
            cond.AVAILABLE,
            "False",
            cond.MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    cond.set_condition(status, condition)
    return status


def same_status(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two Deployment statuses equal as Go compares them (absent equals zero)."""
    return omit_zero(a) == omit_zero(b)


class DeploymentControl:
    """The API side and shared steps of a Deployment sync (see the module docstring).

    ``client`` writes (and reads a ReplicaSet fresh after a name collision); ``reader`` is
    the cache. ``recorder`` records events on the Deployment. ``clock`` stamps conditions and
    measures progress deadlines (the current clock when None).
    """

    def __init__(
        self,
        client: Client,
        reader: Reader,
        recorder: Recorder,
        *,
        clock: _clock.Clock | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.client = client
        self.reader = reader
        self.recorder = recorder
        self.clock = clock if clock is not None else _clock.current()
        self.log = logger if logger is not None else log
        self.written = ResourceVersionExpectations(self.clock)
        """The Deployments and ReplicaSets this controller wrote, at the version written: a
        sync waits until the cache shows them (a sync on an older copy would conflict)."""

    def now(self) -> datetime:
        """The current wall time of the controller's clock."""
        return self.clock.now()

    def _set_progressing(
        self, status: MutableMapping[str, Any], state: str, reason: str, message: str
    ) -> None:
        """Set the ``Progressing`` condition of ``status`` (upstream ``SetDeploymentCondition``
        of a ``NewDeploymentCondition(Progressing, ...)``), stamped now."""
        condition = cond.new_condition(cond.PROGRESSING, state, reason, message, self.now())
        cond.set_condition(status, condition)

    # --- writes ----------------------------------------------------------------------------

    def update_status(self, d: Dict) -> None:
        """Write ``d``'s status (and, as kube-apiserver's status strategy keeps them, its
        annotations) through the status subresource; ``d`` takes the new
        ``resourceVersion``. ``Conflict`` when ``d`` is stale (the sync is retried)."""
        body = meta.deep_copy(d)
        body["status"] = omit_zero(d.get("status") or {})
        written = self.client.status().update(body)
        self.written.expect(written)
        d["metadata"]["resourceVersion"] = meta.resource_version(written)

    def scale_replica_set_and_record_event(
        self, rs: Obj, new_scale: int, d: Obj
    ) -> tuple[bool, Obj]:
        """Scale ``rs`` to ``new_scale`` (nothing when it has that size); ``(scaled, rs as
        written)``."""
        if util.spec_replicas(rs) == new_scale:
            return False, rs
        operation = "up" if util.spec_replicas(rs) < new_scale else "down"
        return self.scale_replica_set(rs, new_scale, d, operation)

    def scale_replica_set(
        self, rs: Obj, new_scale: int, d: Obj, operation: str
    ) -> tuple[bool, Obj]:
        """Set ``rs``'s size and replicas annotations (one update when either changes); a
        size change records ``ScalingReplicaSet`` on the Deployment."""
        desired = util.spec_replicas(d)
        max_replicas = desired + util.max_surge(d)
        size_changes = util.spec_replicas(rs) != new_scale
        if not size_changes and not util.replicas_annotations_need_update(
            rs, desired, max_replicas
        ):
            return False, rs
        copy: Dict = meta.deep_copy(dict(rs))
        copy.setdefault("spec", {})["replicas"] = new_scale
        util.set_replicas_annotations(copy, desired, max_replicas)
        written = self.client.update(copy)
        self.written.expect(written)
        if size_changes:
            self.recorder.event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {operation} replica set {meta.name(written)} to {new_scale}",
            )
        return size_changes, written

    # --- the new ReplicaSet ----------------------------------------------------------------

    def get_all_replica_sets_and_sync_revision(
        self, d: Dict, rs_list: Sequence[Obj], create_if_missing: bool
    ) -> tuple[Obj | None, list[Obj]]:
        """``(new ReplicaSet or None, all old ReplicaSets)``, the new one's annotations and
        the Deployment's revision brought up to date (see :meth:`get_new_replica_set`)."""
        _, all_old = util.find_old_replica_sets(d, rs_list)
        new_rs = self.get_new_replica_set(d, rs_list, all_old, create_if_missing)
        return new_rs, all_old

    def get_new_replica_set(
        self, d: Dict, rs_list: Sequence[Obj], old_rss: Sequence[Obj], create: bool
    ) -> Obj | None:
        """The new ReplicaSet (upstream ``getNewReplicaSet``), its annotations and
        ``minReadySeconds`` synced; created when missing and ``create``. Writes the
        Deployment's status when its revision annotation or Progressing condition change."""
        existing = util.find_new_replica_set(d, rs_list)
        new_revision = str(util.max_revision(old_rss) + 1)
        spec = d.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        status = d.setdefault("status", {})
        if existing is not None:
            rs_copy: Dict = meta.deep_copy(dict(existing))
            changed = util.set_new_replica_set_annotations(d, rs_copy, new_revision, True)
            if changed or int((rs_copy.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
                rs_copy.setdefault("spec", {})["minReadySeconds"] = min_ready
                written: Obj = self.client.update(rs_copy)
                self.written.expect(written)
                return written
            needs_update = _set_deployment_revision(
                d, (meta.annotations(rs_copy)).get(util.REVISION_ANNOTATION, "")
            )
            if (
                util.has_progress_deadline(d)
                and cond.get_condition(status, cond.PROGRESSING) is None
            ):
                self._set_progressing(
                    status,
                    "True",
                    cond.FOUND_NEW_RS_REASON,
                    f'Found new replica set "{meta.name(rs_copy)}"',
                )
                needs_update = True
            if needs_update:
                self.update_status(d)
            return rs_copy
        if not create:
            return None
        new_rs = self._new_replica_set(d, old_rss, new_revision)
        name = meta.name(new_rs)
        replicas = util.spec_replicas(new_rs)
        already_exists = False
        try:
            created: Obj = self.client.create(new_rs)
        except AlreadyExists:
            found = self._fresh_replica_set(name, meta.namespace(d))
            ref = meta.controller_ref(found) if found is not None else None
            if (
                found is not None
                and ref is not None
                and ref.get("uid") == meta.uid(d)
                and util.equal_ignore_hash(spec.get("template"), meta.spec(found).get("template"))
            ):
                created, already_exists = found, True
            else:
                before = int(status.get("collisionCount") or 0)
                status["collisionCount"] = before + 1
                try:
                    self.update_status(d)
                    self.log.info(
                        "%s: hash collision on %s, collisionCount %d -> %d",
                        meta.key(d),
                        name,
                        before,
                        before + 1,
                    )
                except Exception:
                    pass
                raise
        except Exception as err:
            if "NamespaceTerminating" in str(err) or "being terminated" in str(err):
                raise
            message = f'Failed to create new replica set "{name}": {err}'
            if util.has_progress_deadline(d):
                self._set_progressing(status, "False", cond.FAILED_RS_CREATE_REASON, message)
                try:
                    self.update_status(d)
                except Exception:
                    pass
            self.recorder.event(d, "Warning", cond.FAILED_RS_CREATE_REASON, message)
            raise
        if not already_exists and replicas > 0:
            self.recorder.event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {meta.name(created)} to {replicas}",
            )
        needs_update = _set_deployment_revision(d, new_revision)
        if not already_exists and util.has_progress_deadline(d):
            self._set_progressing(
                status,
                "True",
                cond.NEW_RS_REASON,
                f'Created new replica set "{meta.name(created)}"',
            )
            needs_update = True
        if needs_update:
            self.update_status(d)
        return created

    def _new_replica_set(self, d: Obj, old_rss: Sequence[Obj], new_revision: str) -> Dict:
        spec = d.get("spec") or {}
        template: Dict = meta.deep_copy(dict(spec.get("template") or {}))
        collision = (d.get("status") or {}).get("collisionCount")
        pod_hash = compute_hash(spec.get("template"), collision)
        template_meta = template.setdefault("metadata", {})
        labels = dict(template_meta.get("labels") or {})
        labels[util.POD_TEMPLATE_HASH_LABEL] = pod_hash
        template_meta["labels"] = labels
        selector: Dict = meta.deep_copy(dict(spec.get("selector") or {}))
        match_labels = dict(selector.get("matchLabels") or {})
        match_labels[util.POD_TEMPLATE_HASH_LABEL] = pod_hash
        selector["matchLabels"] = match_labels
        new_rs: Dict = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta.name(d)}-{pod_hash}",
                "namespace": meta.namespace(d),
                "ownerReferences": [owner_reference(d, controller=True, block_owner_deletion=True)],
                "labels": dict(labels),
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        new_rs["spec"]["replicas"] = util.new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
        util.set_new_replica_set_annotations(d, new_rs, new_revision, False)
        return new_rs

    def _fresh_replica_set(self, name: str, namespace: str) -> Obj | None:
        for source in (self.reader, self.client):
            try:
                found: Obj = source.get(ReplicaSet, name, namespace)
                return found
            except NotFound:
                pass
        return None

    # --- scaling and history -----------------------------------------------------------------

    def scale(self, d: Obj, new_rs: Obj | None, old_rss: Sequence[Obj]) -> None:
        """Bring the ReplicaSets to the Deployment's size (upstream ``scale``): the one active
        (or newest) ReplicaSet to ``spec.replicas``; old ones to 0 when the new one is
        saturated; otherwise, under RollingUpdate, ``spec.replicas + maxSurge`` less what
        they have shared in proportion (:func:`proportional_sizes`)."""
        active_or_latest = util.find_active_or_latest(new_rs, old_rss)
        if active_or_latest is not None:
            if util.spec_replicas(active_or_latest) != util.spec_replicas(d):
                self.scale_replica_set_and_record_event(active_or_latest, util.spec_replicas(d), d)
            return
        if util.is_saturated(d, new_rs):
            for old in util.active_replica_sets(old_rss):
                self.scale_replica_set_and_record_event(old, 0, d)
            return
        if not util.is_rolling_update(d):
            return
        sizes, operation = proportional_sizes(d, [new_rs, *old_rss] if new_rs else old_rss)
        for rs, size in sizes:
            self.scale_replica_set(rs, size, d, operation)

    def cleanup_deployment(self, old_rss: Sequence[Obj], d: Obj) -> None:
        """Delete the oldest revisions beyond ``revisionHistoryLimit`` among the old
        ReplicaSets not being deleted; only those with no replica (spec and status) whose
        generation is observed go."""
        if not util.has_revision_history_limit(d):
            return
        cleanable = [rs for rs in old_rss if rs is not None and not meta.is_deleting(rs)]
        diff = len(cleanable) - int((d.get("spec") or {})["revisionHistoryLimit"])
        if diff <= 0:
            return
        for rs in util.sort_by_revision(cleanable)[:diff]:
            status = rs.get("status") or {}
            if (
                util.status_replicas(rs) != 0
                or util.spec_replicas(rs) != 0
                or int(meta.metadata(rs).get("generation") or 0)
                > int(status.get("observedGeneration") or 0)
            ):
                continue
            self.log.info("%s: deleting old replica set %s", meta.key(d), meta.name(rs))
            try:
                self.client.delete(ReplicaSet, meta.name(rs), meta.namespace(rs))
            except NotFound:
                pass

    # --- status --------------------------------------------------------------------------------

    def sync_deployment_status(
        self, all_rss: Sequence[Obj | None], new_rs: Obj | None, d: Dict
    ) -> None:
        """Write the status :func:`calculate_status` gives when it differs."""
        status = calculate_status(all_rss, new_rs, d, self.now())
        if same_status(d.get("status") or {}, status):
            return
        d["status"] = status
        self.update_status(d)

    def check_paused_conditions(self, d: Dict) -> None:
        """Record a pause (``Progressing`` Unknown, ``DeploymentPaused``) or a resume
        (``DeploymentResumed``) when a progress deadline is set, unless the rollout timed out
        already."""
        if not util.has_progress_deadline(d):
            return
        status = d.setdefault("status", {})
        current = cond.get_condition(status, cond.PROGRESSING)
        if current is not None and current.get("reason") == cond.TIMED_OUT_REASON:
            return
        paused_recorded = current is not None and current.get("reason") == cond.PAUSED_DEPLOY_REASON
        paused = bool((d.get("spec") or {}).get("paused"))
        if paused and not paused_recorded:
            reason, message = cond.PAUSED_DEPLOY_REASON, "Deployment is paused"
        elif not paused and paused_recorded:
            reason, message = cond.RESUMED_DEPLOY_REASON, "Deployment is resumed"
        else:
            return
        self._set_progressing(status, "Unknown", reason, message)
        self.update_status(d)

    def is_scaling_event(self, d: Dict, rs_list: Sequence[Obj]) -> bool:
        """Whether an active ReplicaSet was sized for another ``spec.replicas`` (its
        desired-replicas annotation)."""
        new_rs, old_rss = self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        for rs in util.active_replica_sets([new_rs, *old_rss]):
            desired = util.desired_replicas_annotation(rs)
            if desired is not None and desired != util.spec_replicas(d):
                return True
        return False

    def sync(self, d: Dict, rs_list: Sequence[Obj]) -> None:
        """A scaling or a paused Deployment: scale, clean up history when paused, write the
        status."""
        new_rs, old_rss = self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        self.scale(d, new_rs, old_rss)
        if (d.get("spec") or {}).get("paused"):
            self.cleanup_deployment(old_rss, d)
        self.sync_deployment_status([*old_rss, new_rs], new_rs, d)

    def sync_status_only(self, d: Dict, rs_list: Sequence[Obj]) -> None:
        """A Deployment being deleted: only its status."""
        new_rs, old_rss = self.get_all_replica_sets_and_sync_revision(d, rs_list, False)
        self.sync_deployment_status([*old_rss, new_rs], new_rs, d)


def proportional_sizes(d: Obj, rss: Sequence[Obj | None]) -> tuple[list[tuple[Obj, int]], str]:
    """The sizes a proportional scaling gives the active ReplicaSets among ``rss``, in the
    order to apply them, and the operation (``up``, ``down`` or ``""``): the replicas to add
    (``spec.replicas + maxSurge`` less their total; 0 replicas allow nothing) are shared by
    :func:`~controllers.deployment.util.get_proportion`, largest first (newer first when
    growing, older first when shrinking), and the leftover goes to the first (never below
    0)."""
    active = util.active_replica_sets(rss)
    total = sum(util.spec_replicas(rs) for rs in active)
    replicas = util.spec_replicas(d)
    allowed = replicas + util.max_surge(d) if replicas > 0 else 0
    to_add = allowed - total
    operation = ""
    if to_add > 0:
        active = util.sort_by_size_newer(active)
        operation = "up"
    elif to_add < 0:
        active = util.sort_by_size_older(active)
        operation = "down"
    added = 0
    sizes: list[list[Any]] = []
    for rs in active:
        if to_add != 0:
            proportion = util.get_proportion(rs, d, to_add, added)
            sizes.append([rs, util.spec_replicas(rs) + proportion])
            added += proportion
        else:
            sizes.append([rs, util.spec_replicas(rs)])
    if sizes and to_add != 0:
        sizes[0][1] = max(0, sizes[0][1] + to_add - added)
    return [(rs, size) for rs, size in sizes], operation


def _set_deployment_revision(d: Dict, revision: str) -> bool:
    """Set the Deployment's revision annotation (in place); True when it changed."""
    annotations = d.setdefault("metadata", {}).get("annotations")
    if annotations is None:
        annotations = d["metadata"]["annotations"] = {}
    if annotations.get(util.REVISION_ANNOTATION) == revision:
        return False
    annotations[util.REVISION_ANNOTATION] = revision
    return True
