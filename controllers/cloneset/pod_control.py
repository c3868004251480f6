"""API side effects of the CloneSet controller: every write a sync makes, with its events and
its expectation bookkeeping (openkruise ``cloneset/sync`` calls into ``podControl``,
``lifecycle``, ``inplaceupdate`` and the expectations).

:class:`PodControl` is what the algorithm (:mod:`.control`, :mod:`.scale`, :mod:`.update`)
asks for; :class:`CloneSetPodControl` does it over a :class:`~kube_runtime.client.interfaces.Client`.
Unit tests drive the algorithm through this class on a
:class:`~kube_runtime.client.fake.FakeClient`, or replace it with a recording fake.

Expectations (:class:`Expectations`, shared with the controller that waits on them):

* scale: every pod and claim is expected *created* (by name) before its create request and
  expected *deleted* before its delete request; a request that fails drops its expectation
  again, so only writes the server took hold the next sync back;
* update: a pod updated in place is expected at its new revision;
* versions: every pod written (lifecycle state, specified-delete label, in-place patches) is
  expected at the resourceVersion the server answered, so the next sync does not act on an
  older copy from the cache.

Events on the set, as kruise words them: ``SuccessfulCreate`` / ``FailedCreate``,
``SuccessfulDelete`` / ``FailedDelete``, ``SuccessfulUpdatePodInPlace`` /
``FailedUpdatePodInPlace``, ``SuccessfulUpdatePodReCreate``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Protocol

from controllers._scaling import observe_listed
from controllers.cloneset.core import CLONESET, SPECIFIED_DELETE_LABEL, CloneSetView
from controllers.cloneset.pvc import instance_claims_for_pod
from kube_runtime import meta
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Client
from kube_runtime.events import Recorder
from kube_runtime.expectations import (
    ResourceVersionExpectations,
    ScaleAction,
    ScaleExpectations,
    UpdateExpectations,
)
from kube_runtime.kinds import Kind, PersistentVolumeClaim, Pod
from kube_runtime.meta import ObjView as Obj
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.batches import in_order
from kube_runtime.workloads.inplace import InPlaceControl, InPlaceSpec
from kube_runtime.workloads.podwrites import PodLifecycleWriter
from kube_runtime.workloads.revision import delete_revision

__all__ = [
    "CloneSetPodControl",
    "Expectations",
    "PodControl",
    "PodControlStep",
]

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Expectations:
    """The three expectation books of a CloneSet controller (see the module docstring)."""

    scale: ScaleExpectations = dataclasses.field(default_factory=ScaleExpectations)
    update: UpdateExpectations = dataclasses.field(default_factory=UpdateExpectations)
    versions: ResourceVersionExpectations = dataclasses.field(
        default_factory=ResourceVersionExpectations
    )

    def forget(self, key: str) -> None:
        """Drop the scale and update expectations of set ``key`` (it is gone)."""
        self.scale.delete_expectations(key)
        self.update.delete_expectations(key)

    def observe_scale(self, key: str, objects: Iterable[Obj]) -> None:
        """Tick off what the cache shows (``objects``: the pods and claims that may be the
        set's): an expected name exists (created), or is gone or being deleted (deleted)."""
        observe_listed(self.scale, key, objects)


class PodControl(Protocol):
    """The API side effects the CloneSet algorithm asks for.

    Pods and claims passed in may be shared cached objects: implementations never mutate
    them. Every method raises the API's error after recording what it must (an event, a
    dropped expectation), except where it says otherwise.
    """

    def record(self, cs: Obj, event_type: str, reason: str, message: str) -> None:
        """Record an event on the set (its wire object)."""

    def create_pod(self, cs: CloneSetView, pod: Obj, existing_claims: Set[str]) -> None:
        """Create the pod's claims that are not in ``existing_claims`` (by name), then the pod."""

    def delete_pod(self, cs: CloneSetView, pod: Obj, claims: Sequence[Obj]) -> bool:
        """Delete the pod, then ``claims`` (its instance's); False when the pod was already
        gone (its claims are then left alone)."""
        ...

    def update_pod_lifecycle(
        self,
        pod: Obj,
        state: str,
        *,
        mark_not_ready: bool = False,
        hook: Mapping[str, object] | None = None,
    ) -> tuple[bool, Obj]:
        """Move the pod to lifecycle ``state`` (Kruise ``UpdatePodLifecycle``): ``(written, the
        pod as the API returned it)``; no request when it is in that state already. With
        ``hook`` (``UpdatePodLifecycleWithHandler``) the hook's labels and finalizers are put
        back in the same write. ``mark_not_ready`` (the hook's ``markPodNotReady``) first
        holds the pod not ready through its ``KruisePodReady`` gate at ``PreparingDelete`` /
        ``PreparingUpdate`` and releases it at ``Updated`` (Kruise
        ``executePodNotReadyPolicy``), whatever the current state."""
        ...

    def ensure_readiness_condition(self, pod: Obj) -> bool:
        """Kruise's pod-readiness controller: a pod with the ``KruisePodReady`` readiness
        gate and no such condition gets it ``True``; whether a write was sent."""
        ...

    def mark_specified_delete(self, cs: CloneSetView, pod: Obj, revision: str) -> None:
        """Label the pod for deletion so that scaling recreates it at ``revision``."""

    def refresh_in_place(self, pod: Obj) -> tuple[bool, float]:
        """Advance the pod's in-place update (grace period, readiness condition):
        ``(written, seconds until a grace period ends or 0)``."""
        ...

    def update_in_place(
        self, cs: CloneSetView, pod: Obj, spec: InPlaceSpec, grace_seconds: int
    ) -> float:
        """Start the pod's in-place update to ``spec``; the grace delay (or 0)."""
        ...

    def truncate_pods_to_delete(self, cs: CloneSetView, kept: list[str]) -> None:
        """Shorten ``scaleStrategy.podsToDelete`` to ``kept``."""

    def delete_revision(self, revision: Obj) -> None:
        """Delete a ControllerRevision of the set's history (gone already: no error)."""


class PodControlStep:
    """A step of a CloneSet sync (scale, update, the whole sync): it decides, and writes
    through :attr:`pod_control`; :attr:`_log` is the logger its messages go to."""

    def __init__(self, pod_control: PodControl, *, logger: logging.Logger = log) -> None:
        self.pod_control = pod_control
        self._log = logger


class CloneSetPodControl:
    """:class:`PodControl` over the API: ``client`` writes, ``recorder`` records events,
    ``expectations`` are kept as the module docstring says."""

    def __init__(
        self,
        client: Client,
        recorder: Recorder,
        expectations: Expectations | None = None,
        *,
        logger: logging.Logger = log,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self.expectations = expectations if expectations is not None else Expectations()
        self._log = logger
        self._in_place = InPlaceControl(client, on_write=self.expectations.versions.expect)
        self._lifecycle = PodLifecycleWriter(client, self._expect_version)

    def record(self, cs: Obj, event_type: str, reason: str, message: str) -> None:
        """Record an event on the set; from a step of a concurrent batch, after the batch in
        the steps' order (:func:`~kube_runtime.workloads.batches.in_order`)."""
        in_order(lambda: self._recorder.event(cs, event_type, reason, message))

    # --- scaling -----------------------------------------------------------------------------

    def create_pod(self, cs: CloneSetView, pod: Obj, existing_claims: Set[str]) -> None:
        scale, key = self.expectations.scale, cs.key
        pod_name, namespace = meta.name(pod), meta.namespace(pod)
        scale.expect_scale(key, ScaleAction.CREATE, pod_name)
        try:
            for claim in instance_claims_for_pod(cs.obj, pod).values():
                self._create_claim(cs, claim, existing_claims)
        except Exception:
            scale.observe_scale(key, ScaleAction.CREATE, pod_name)
            raise
        try:
            self._client.create(pod, namespace=namespace)
        except Exception as err:
            scale.observe_scale(key, ScaleAction.CREATE, pod_name)
            self.record(
                cs.obj, "Warning", "FailedCreate", f"failed to create pod {pod_name}: {err}"
            )
            raise
        self.record(cs.obj, "Normal", "SuccessfulCreate", f"succeed to create pod {pod_name}")

    def _create_claim(self, cs: CloneSetView, claim: Obj, existing: Set[str]) -> None:
        name = meta.name(claim)
        if name in existing:
            return
        scale, key = self.expectations.scale, cs.key
        scale.expect_scale(key, ScaleAction.CREATE, name)
        try:
            self._client.create(claim, namespace=meta.namespace(claim))
        except Exception as err:
            scale.observe_scale(key, ScaleAction.CREATE, name)
            self.record(cs.obj, "Warning", "FailedCreate", f"failed to create pvc {name}: {err}")
            raise

    def delete_pod(self, cs: CloneSetView, pod: Obj, claims: Sequence[Obj]) -> bool:
        if not self._delete(cs, Pod, pod, "pod"):
            return False
        self.record(cs.obj, "Normal", "SuccessfulDelete", f"succeed to delete pod {meta.name(pod)}")
        for claim in claims:
            self._delete(cs, PersistentVolumeClaim, claim, "pvc")
        return True

    def delete_claims(self, cs: CloneSetView, claims: Sequence[Obj]) -> None:
        """Delete claims no pod will use again (``scaleStrategy.disablePVCReuse``), each with
        its scale expectation; a claim gone already is no error."""
        for claim in claims:
            if self._delete(cs, PersistentVolumeClaim, claim, "pvc"):
                self._log.info("%s: claim %s deleted (no reuse)", cs.key, meta.name(claim))

    def _delete(self, cs: CloneSetView, kind: Kind, obj: Obj, noun: str) -> bool:
        """Delete ``obj`` with its scale expectation; False when it was gone already."""
        scale, key, name = self.expectations.scale, cs.key, meta.name(obj)
        scale.expect_scale(key, ScaleAction.DELETE, name)
        try:
            self._client.delete(kind, name, meta.namespace(obj))
        except NotFound:
            scale.observe_scale(key, ScaleAction.DELETE, name)
            return False
        except Exception as err:
            scale.observe_scale(key, ScaleAction.DELETE, name)
            self.record(cs.obj, "Warning", "FailedDelete", f"failed to delete {noun} {name}: {err}")
            raise
        return True

    # --- pod writes --------------------------------------------------------------------------

    def update_pod_lifecycle(
        self,
        pod: Obj,
        state: str,
        *,
        mark_not_ready: bool = False,
        hook: Mapping[str, object] | None = None,
    ) -> tuple[bool, Obj]:
        written = self._lifecycle.update_lifecycle(
            pod, state, hook=hook, mark_not_ready=mark_not_ready
        )
        if written is None:
            return False, pod
        self._log.info(
            "%s: lifecycle %r -> %r", meta.key(pod), lifecycle.get_state(pod), str(state)
        )
        return True, written

    def ensure_readiness_condition(self, pod: Obj) -> bool:
        return self._lifecycle.ensure_readiness_condition(pod)

    def mark_specified_delete(self, cs: CloneSetView, pod: Obj, revision: str) -> None:
        name = meta.name(pod)
        got = self._client.patch(
            Pod,
            name,
            {"metadata": {"labels": {SPECIFIED_DELETE_LABEL: "true"}}},
            namespace=meta.namespace(pod),
        )
        self._expect_version(got)
        self.record(
            cs.obj,
            "Normal",
            "SuccessfulUpdatePodReCreate",
            f"successfully patch pod {name} specified-delete for update(revision {revision})",
        )

    def refresh_in_place(self, pod: Obj) -> tuple[bool, float]:
        return self._in_place.refresh(pod)

    def update_in_place(
        self, cs: CloneSetView, pod: Obj, spec: InPlaceSpec, grace_seconds: int
    ) -> float:
        name, revision = meta.name(pod), spec.revision
        updates = self.expectations.update
        updates.expect_updated(cs.key, revision, pod)
        try:
            delay = self._in_place.update(
                pod,
                spec,
                grace_seconds=grace_seconds,
                extra_labels={lifecycle.LIFECYCLE_STATE_LABEL: lifecycle.UPDATING},
            )
        except Exception as err:
            updates.delete_object(cs.key, pod)
            self.record(
                cs.obj,
                "Warning",
                "FailedUpdatePodInPlace",
                f"failed to update pod {name} in-place(revision {revision}): {err}",
            )
            raise
        self.record(
            cs.obj,
            "Normal",
            "SuccessfulUpdatePodInPlace",
            f"successfully update pod {name} in-place(revision {revision})",
        )
        return delay

    def _expect_version(self, written: Obj) -> None:
        if isinstance(written, Mapping) and meta.uid(written):
            self.expectations.versions.expect(written)

    # --- the set and its history -------------------------------------------------------------

    def truncate_pods_to_delete(self, cs: CloneSetView, kept: list[str]) -> None:
        self._client.patch(
            CLONESET,
            cs.name,
            {
                "metadata": {"resourceVersion": meta.resource_version(cs.obj)},
                "spec": {"scaleStrategy": {"podsToDelete": kept or None}},
            },
            namespace=cs.namespace,
        )
        self._log.info("%s: podsToDelete truncated to %s", cs.key, kept)

    def delete_revision(self, revision: Obj) -> None:
        delete_revision(self._client, revision)
