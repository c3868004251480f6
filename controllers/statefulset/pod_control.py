"""API side effects of the StatefulSet controller (upstream ``stateful_pod_control.go``):
create, update and delete pods and their PersistentVolumeClaims, with events.

Events follow upstream: ``SuccessfulCreate`` / ``FailedCreate``, ``SuccessfulUpdate`` /
``FailedUpdate``, ``SuccessfulDelete`` / ``FailedDelete`` on the set, with messages such as
``create Pod web-0 in StatefulSet web successful`` and
``create Claim data-web-0 for Pod web-0 in StatefulSet web success``.

Creations and deletions are recorded in :class:`~kube_runtime.expectations.ScaleExpectations`
(keyed ``namespace/name`` of the set; creations by pod name, deletions by
``<pod name>/<uid>``) before the request is sent and dropped again when it fails, so the
controller can hold back until its cache has seen them (:func:`observe_pods`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from controllers._scaling import observe_listed
from controllers.statefulset.pvc import (
    claim_names_for_pod,
    claim_owner_up_to_date,
    create_missing_claims,
    has_stale_owner_ref,
    update_claims_for_retention_policy,
)
from controllers.statefulset.utils import (
    identity_matches,
    set_key,
    storage_matches,
    update_identity,
    update_storage,
)
from kube_runtime import meta
from kube_runtime.client.errors import AlreadyExists, Conflict, NotFound
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.events import Recorder
from kube_runtime.expectations import ScaleAction, ScaleExpectations
from kube_runtime.kinds import PersistentVolumeClaim, Pod
from kube_runtime.meta import Obj
from kube_runtime.retry import retry_on_conflict
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.batches import in_order
from kube_runtime.workloads.podwrites import PodLifecycleWriter

__all__ = ["StatefulPodControl", "deletion_token", "observe_pods", "set_key"]

log = logging.getLogger(__name__)


def deletion_token(pod: Mapping[str, Any]) -> str:
    """How a pending deletion is named in the expectations: ``<name>/<uid>``."""
    return f"{meta.name(pod)}/{meta.uid(pod)}"


def observe_pods(
    expectations: ScaleExpectations, key: str, pods: Iterable[Mapping[str, Any]]
) -> None:
    """Tick off what the cache (``pods``: every pod of the namespace that may be the set's)
    shows: a pod of an expected name exists (created), or the expected pod is gone or being
    deleted (deleted)."""
    observe_listed(expectations, key, pods, token_of=deletion_token)


class StatefulPodControl:
    """The :class:`~controllers.statefulset.control.PodControl` of a running controller.

    ``client`` writes to the API (and re-reads a pod after a conflict); ``reader`` reads
    claims (a cache; default ``client``); ``recorder`` records the events on the set;
    ``on_claim_created(set, claim)`` hears of every claim created (so a sync can wait until
    the cache shows it).
    """

    def __init__(
        self,
        client: Client,
        recorder: Recorder,
        *,
        reader: Reader | None = None,
        expectations: ScaleExpectations | None = None,
        logger: logging.Logger | None = None,
        on_claim_created: Callable[[Mapping[str, Any], Mapping[str, Any]], None] | None = None,
        on_pod_written: Callable[[Obj], None] | None = None,
    ) -> None:
        self._client = client
        # on_pod_written is called with each pod a lifecycle write returned (resourceVersion
        # expectations).
        self._lifecycle = PodLifecycleWriter(client, on_pod_written)
        self._on_claim_created = on_claim_created
        """Called with (set, claim) for each claim this control created."""
        self._reader: Reader = reader if reader is not None else client
        self._recorder = recorder
        self.log = logger if logger is not None else log
        self.expectations = expectations if expectations is not None else ScaleExpectations()

    # --- events ----------------------------------------------------------------------------

    def record(self, sts: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """Record an event on the set; from a step of a concurrent batch, after the batch in
        the steps' order (:func:`~kube_runtime.workloads.batches.in_order`)."""
        in_order(lambda: self._recorder.event(sts, event_type, reason, message))

    def _pod_event(
        self, verb: str, sts: Mapping[str, Any], pod: Mapping[str, Any], err: BaseException | None
    ) -> None:
        pod_name, set_name = meta.name(pod), meta.name(sts)
        if err is None:
            message = f"{verb} Pod {pod_name} in StatefulSet {set_name} successful"
            self.record(sts, "Normal", f"Successful{verb.title()}", message)
        else:
            message = f"{verb} Pod {pod_name} in StatefulSet {set_name} failed error: {err}"
            self.record(sts, "Warning", f"Failed{verb.title()}", message)

    # --- claims ----------------------------------------------------------------------------

    def create_missing_claims(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """Create the pod's claims that do not exist (error: one is being deleted)."""
        created = create_missing_claims(self._client, sts, pod, reader=self._reader)
        pod_name, set_name = meta.name(pod), meta.name(sts)
        for claim in created:
            if self._on_claim_created is not None:
                self._on_claim_created(sts, claim)
            self.record(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {meta.name(claim)} for Pod {pod_name} in StatefulSet {set_name} "
                "success",
            )

    def _current_claims(
        self, sts: Mapping[str, Any], pod: Mapping[str, Any]
    ) -> list[Mapping[str, Any]]:
        """The pod's claims as the reader has them (missing ones skipped)."""
        current: list[Mapping[str, Any]] = []
        # Every pod, every sync: the claims' names suffice (no claim is built).
        namespace = (sts.get("metadata") or {}).get("namespace")
        for name in claim_names_for_pod(sts, pod):
            try:
                current.append(self._reader.get(PersistentVolumeClaim, name, namespace))
            except NotFound:
                pass
        return current

    def claims_match_retention_policy(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        """Whether every existing claim of the pod has the owners the policy asks for."""
        return all(claim_owner_up_to_date(c, sts, pod) for c in self._current_claims(sts, pod))

    def update_claims_for_retention_policy(
        self, sts: Mapping[str, Any], pod: Mapping[str, Any]
    ) -> None:
        update_claims_for_retention_policy(self._client, sts, pod, reader=self._reader)

    def pod_claim_is_stale(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        """A claim of the pod references a pod of its name with another UID (an old pod the
        garbage collector has not finished with)."""
        return any(has_stale_owner_ref(c, pod, Pod) for c in self._current_claims(sts, pod))

    # --- pods ------------------------------------------------------------------------------

    def create_pod(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """Claims first, then the pod, then the claims' owners for the retention policy."""
        try:
            self.create_missing_claims(sts, pod)
        except Exception as err:
            self._pod_event("create", sts, pod, err)
            raise
        key, name = set_key(sts), meta.name(pod)
        self.expectations.expect_scale(key, ScaleAction.CREATE, name)
        try:
            created = self._client.create(dict(pod))
        except AlreadyExists:
            self.expectations.observe_scale(key, ScaleAction.CREATE, name)
            raise
        except Exception as err:
            self.expectations.observe_scale(key, ScaleAction.CREATE, name)
            self._pod_event("create", sts, pod, err)
            raise
        try:
            self.update_claims_for_retention_policy(sts, created)
        except Exception as err:
            self._pod_event("update", sts, created, err)
            raise
        self._pod_event("create", sts, pod, None)

    def delete_pod(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """Delete the pod (its UID as precondition); a pod already gone is not an error."""
        key, token, name = set_key(sts), deletion_token(pod), meta.name(pod)
        self.expectations.expect_scale(key, ScaleAction.DELETE, token)
        try:
            self._client.delete(Pod, name, meta.namespace(pod), uid=meta.uid(pod) or None)
        except NotFound:
            self.expectations.observe_scale(key, ScaleAction.DELETE, token)
            self.log.debug("%s: pod %s already gone", key, name)
            return
        except Exception as err:
            self.expectations.observe_scale(key, ScaleAction.DELETE, token)
            self._pod_event("delete", sts, pod, err)
            raise
        self._pod_event("delete", sts, pod, None)

    def update_pod_lifecycle(
        self,
        sts: Mapping[str, Any],
        pod: Mapping[str, Any],
        state: str,
        *,
        hook: Mapping[str, Any] | None = None,
        mark_not_ready: bool = False,
    ) -> bool:
        """Move the pod to lifecycle ``state``
        (:meth:`~kube_runtime.workloads.podwrites.PodLifecycleWriter.update_lifecycle`).
        Whether a state write was sent (False: the pod is in ``state`` already)."""
        written = self._lifecycle.update_lifecycle(
            pod, state, hook=hook, mark_not_ready=mark_not_ready
        )
        if written is None:
            return False
        self.log.info(
            "%s: pod %s lifecycle %r -> %r",
            set_key(sts),
            meta.name(pod),
            lifecycle.get_state(pod),
            str(state),
        )
        return True

    def ensure_readiness_condition(self, pod: Mapping[str, Any]) -> bool:
        """Kruise's pod-readiness controller: a pod with the ``KruisePodReady`` gate and no
        condition gets it ``True``; whether a write was sent."""
        return self._lifecycle.ensure_readiness_condition(pod)

    def update_pod(self, sts: Mapping[str, Any], pod: Obj) -> None:
        """Repair the pod's identity and storage (creating missing claims) and its claims'
        retention owners; write the pod only if it changed, re-reading it from the reader (the
        cache, as upstream's lister) on a conflict."""
        state = {"pod": pod, "attempted": False}

        def attempt() -> None:
            current: Obj = state["pod"]  # type: ignore[assignment]
            consistent = True
            if not identity_matches(sts, current):
                update_identity(sts, current)
                consistent = False
            if not storage_matches(sts, current):
                update_storage(sts, current)
                consistent = False
                self.create_missing_claims(sts, current)
            if not self.claims_match_retention_policy(sts, current):
                self.update_claims_for_retention_policy(sts, current)
                consistent = False
            if consistent:
                return
            state["attempted"] = True
            try:
                self._client.update(current)
            except Conflict:
                # Upstream re-reads the pod from its lister (the cache), not the API.
                name = meta.name(current)
                try:
                    fresh = self._reader.get(Pod, name, meta.namespace(current))
                    state["pod"] = meta.deep_copy(dict(fresh))
                except Exception:
                    self.log.debug("re-reading pod %s failed", name, exc_info=True)
                raise

        error: BaseException | None = None
        try:
            retry_on_conflict(attempt)
        except Exception as err:
            error = err
        if state["attempted"] or error is not None:
            self._pod_event("update", sts, state["pod"], error)  # type: ignore[arg-type]
        if error is not None:
            raise error
