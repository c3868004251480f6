"""StatefulSet status: completing a rolling update, deciding whether status changed, and
writing it through the status subresource (upstream ``stateful_set_status_updater.go`` and
``completeRollingUpdate`` / ``inconsistentStatus``).

A status is a plain ``dict`` with the apps/v1 ``StatefulSetStatus`` fields; the enhanced kind
adds Kruise's ``updatedReadyReplicas``, ``updatedAvailableReplicas``, ``labelSelector``,
``volumeClaims`` and the ``FailedCreatePod`` / ``FailedUpdatePod`` conditions
(:func:`set_condition`), compared like the others when present.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from kube_runtime import meta
from kube_runtime.client.errors import Conflict
from kube_runtime.client.interfaces import Client, Reader
from kube_runtime.conditions import is_status_condition_true, set_failure_condition
from kube_runtime.expectations import ResourceVersionExpectations
from kube_runtime.kinds import Kind, StatefulSet
from kube_runtime.meta import Obj
from kube_runtime.retry import retry_on_conflict
from kube_runtime.workloads.statuswriter import ApiStatusWriter

__all__ = [
    "COALESCED_FIELDS",
    "COMPARED_FIELDS",
    "FAILED_CREATE_POD",
    "FAILED_UPDATE_POD",
    "INVALID_SPEC",
    "ApiStatusUpdater",
    "StatusUpdater",
    "clear_invalid_spec",
    "coalescing_window",
    "complete_rolling_update",
    "invalid_spec_status",
    "ordered_progress",
    "set_condition",
    "settled",
    "status_changed",
    "urgent_change",
]

log = logging.getLogger(__name__)


COMPARED_FIELDS = (
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "currentReplicas",
    "updatedReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
)
"""Fields whose change makes a status write (upstream compares all but collisionCount; a new
collision count is written too so the next revision name is not recomputed from a stale one)."""

FAILED_CREATE_POD = "FailedCreatePod"
FAILED_UPDATE_POD = "FailedUpdatePod"
INVALID_SPEC = "InvalidSpec"
"""True while the spec cannot be acted on (message: what is wrong); False once it can."""

_DEFAULTS: dict[str, Any] = {
    "observedGeneration": 0,
    "replicas": 0,
    "readyReplicas": 0,
    "availableReplicas": 0,
    "currentReplicas": 0,
    "updatedReplicas": 0,
    "currentRevision": "",
    "updateRevision": "",
    "collisionCount": 0,
}


class StatusUpdater(Protocol):
    """Writes a set's status."""

    def update_status(self, sts: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        """Write ``status`` (whether or not it changed)."""

    def update_if_changed(self, sts: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
        """:meth:`update_status` when :func:`status_changed` (compared once); whether it
        was. The control calls this at the end of a sync."""


def complete_rolling_update(sts: Mapping[str, Any], status: Obj) -> None:
    """Under RollingUpdate, once every replica is updated and ready, the update revision
    becomes the current one (in place on ``status``)."""
    strategy = (meta.spec(sts).get("updateStrategy") or {}).get("type", "RollingUpdate")
    if (
        strategy == "RollingUpdate"
        and status.get("updatedReplicas") == status.get("replicas")
        and status.get("readyReplicas") == status.get("replicas")
    ):
        status["currentReplicas"] = status.get("updatedReplicas")
        status["currentRevision"] = status.get("updateRevision")


def _value(status: Mapping[str, Any], field: str) -> Any:
    value = status.get(field)
    return _DEFAULTS.get(field) if value is None else value


def set_condition(
    status: Obj,
    previous: Mapping[str, Any],
    condition_type: str,
    failure: tuple[str, str] | None,
    now: datetime,
) -> None:
    """Carry ``previous``'s conditions onto ``status`` (unless it has some already) and set
    ``condition_type``: True with ``failure = (reason, message)``, or, when ``failure`` is None
    and the condition was True, False (reason ``Succeeded``). ``lastTransitionTime`` moves only
    when the condition's status flips (:func:`kube_runtime.conditions.set_status_condition`)."""
    conditions = [dict(c) for c in status.get("conditions") or previous.get("conditions") or ()]
    set_failure_condition(conditions, condition_type, failure, now=now)
    if conditions:
        status["conditions"] = conditions


_REQUIRED_COUNTS = (
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
)
"""Status counts apps/v1 always serializes and the enhanced kind's schema requires."""


def invalid_spec_status(
    sts: Mapping[str, Any], message: str, now: datetime
) -> dict[str, Any] | None:
    """The status fields to write for a spec that cannot be acted on: ``observedGeneration``
    and the ``InvalidSpec`` condition (True, ``message``), or None when the recorded status
    says so already (then nothing is written, nor reported again)."""
    previous = meta.status(sts)
    status: Obj = {"observedGeneration": meta.generation(sts)}
    for count in _REQUIRED_COUNTS:  # a set with no status yet: schemas require the counts
        status[count] = previous.get(count) or 0
    set_condition(status, previous, INVALID_SPEC, (INVALID_SPEC, message), now)
    if _value(status, "observedGeneration") > _value(previous, "observedGeneration"):
        return status
    return status if status["conditions"] != previous.get("conditions") else None


def clear_invalid_spec(status: Obj, previous: Mapping[str, Any], now: datetime) -> None:
    """Once the spec can be acted on again, turn a True ``InvalidSpec`` condition False
    (nothing when there is none: apps/v1 statuses keep their upstream shape)."""
    if is_status_condition_true(
        status.get("conditions") or previous.get("conditions") or (), INVALID_SPEC
    ):
        set_condition(status, previous, INVALID_SPEC, None, now)


_COMPARED_WHEN_RECORDED = frozenset({"availableReplicas"})
"""Compared only when the recorded status has them: apps/v1 ``availableReplicas`` is 1.22+
(serialized from then on even when 0); older kube-apiservers drop it from every write, so
comparing it would make every sync rewrite an unchanged status."""


def status_changed(sts: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """Whether ``status`` differs from the set's recorded status (observedGeneration only
    counts when it moves forward, as upstream; see :data:`_COMPARED_WHEN_RECORDED`)."""
    old = meta.status(sts)
    if _value(status, "observedGeneration") > _value(old, "observedGeneration"):
        return True
    if any(
        _value(status, f) != _value(old, f)
        for f in COMPARED_FIELDS
        if f != "observedGeneration" and (f in old or f not in _COMPARED_WHEN_RECORDED)
    ):
        return True
    return any(status[f] != old.get(f) for f in status if f not in _DEFAULTS)


COALESCED_FIELDS = frozenset(
    {
        *_DEFAULTS,
        "updatedReadyReplicas",
        "updatedAvailableReplicas",
        "labelSelector",
        "volumeClaims",
    }
)
"""Fields a change of which may wait for the next one (a coalesced write, see
:mod:`kube_runtime.workloads.statuswriter`): pod counts, observedGeneration, the revisions
and collision count (the controller's own decisions read these from its pending status,
where upstream reads the status it wrote), the enhanced kind's selector and claims. A
change of anything else (``conditions``: a failure to report) is written at once."""


def urgent_change(recorded: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """Whether ``status`` differs from ``recorded`` in a field outside
    :data:`COALESCED_FIELDS` (such a write is not held back)."""
    return any(status[f] != recorded.get(f) for f in status if f not in COALESCED_FIELDS)


_SETTLED_COUNTS = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas")
_SETTLED_IF_PRESENT = ("availableReplicas", "updatedReadyReplicas", "updatedAvailableReplicas")


def settled(sts: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """Whether ``status`` is that of a converged set: observed at the set's generation, one
    revision, ``replicas``, ``readyReplicas``, ``currentReplicas`` and ``updatedReplicas``
    (and the available and updated-ready counts when computed) all equal to
    ``spec.replicas`` (default 1). Such a status is written at once, never held back."""
    want = meta.spec(sts).get("replicas")
    want = 1 if want is None else int(want)
    if _value(status, "observedGeneration") != meta.generation(sts):
        return False
    if _value(status, "currentRevision") != _value(status, "updateRevision"):
        return False
    return all(int(status.get(f) or 0) == want for f in _SETTLED_COUNTS) and all(
        int(status.get(f) or 0) == want for f in _SETTLED_IF_PRESENT if f in status
    )


def coalescing_window(sts: Mapping[str, Any]) -> float:
    """The longest a set's status may be held back: no limit (``inf``: the writer's window
    applies), or 0 for a set with ``minReadySeconds``, whose every ready-but-not-available
    phase is reported as it happens (what its users watch; no coalescing there)."""
    return 0.0 if (meta.spec(sts).get("minReadySeconds") or 0) > 0 else float("inf")


def ordered_progress(sts: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """Whether ``status`` is a step of an OrderedReady rollout the controller drives itself:
    observed at the set's generation, one revision, at most ``spec.replicas`` pods, all updated
    and all ready but the newest (the controller just created it, or created the next pod in
    the sync that computed this status): its ``Running``/``Ready`` events bring the next step.
    A held status of such a set waits for the next step (:mod:`kube_runtime.workloads.statuswriter`,
    ``progressing``: up to ``step_window`` after each step, ``max_hold`` in all): the counts
    of a rollout whose steps follow each other make one write, the converged status. A set
    that stops at such a step (a pod that never becomes ready, or a running set's one pod
    that stopped being ready: the shape is the same) is written ``step_window`` after its
    last step; a status of any other shape (two pods not ready, a rolling update, a scale
    down) within the window; a failure (a condition) at once."""
    spec = meta.spec(sts)
    if spec.get("podManagementPolicy") == "Parallel" or meta.is_deleting(sts):
        return False
    want = spec.get("replicas")
    want = 1 if want is None else int(want)
    replicas = int(status.get("replicas") or 0)
    return (
        replicas <= want
        and int(status.get("readyReplicas") or 0) >= replicas - 1
        and int(status.get("updatedReplicas") or 0) == replicas
        and _value(status, "observedGeneration") == meta.generation(sts)
        and _value(status, "currentRevision") == _value(status, "updateRevision")
    )


class ApiStatusUpdater(ApiStatusWriter):
    """:class:`StatusUpdater` over the API: PUT ``/status`` with the set's resourceVersion;
    on a conflict the set is re-read through ``reader`` and the write retried
    (``retry_on_conflict``, whose backoff gives a cache time to catch up), as upstream's
    updater re-reads its lister: the controller needs no ``get`` of sets from the API.
    ``reader`` defaults to ``client``. Fields of the status this controller does not compute
    (``conditions``) are kept.

    It is also the :class:`~kube_runtime.workloads.statuswriter.StatusPolicy` of the set's
    coalesced writes: :meth:`write` is :meth:`update_status`, and :func:`status_changed`,
    :func:`urgent_change`, :func:`settled`, :func:`coalescing_window` and
    :func:`ordered_progress` say which changes count, cannot wait, mean convergence, how long a
    set's may wait, and which steps of a set's rollout extend that wait."""

    def __init__(
        self,
        client: Client,
        written: ResourceVersionExpectations | None = None,
        *,
        reader: Reader | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.written = written if written is not None else ResourceVersionExpectations()
        """The versions this updater wrote: a sync waits until the cache shows them."""
        super().__init__(client, self.written, logger=logger if logger is not None else log)
        self._reader: Reader = reader if reader is not None else client

    def update_status(self, sts: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        name, namespace = meta.name(sts), meta.namespace(sts)
        state: dict[str, Mapping[str, Any]] = {"set": sts}
        kind = Kind.of(sts) if sts.get("apiVersion") and sts.get("kind") else StatefulSet

        def attempt() -> None:
            try:
                self.put(state["set"], status, merge=True)
            except Conflict:
                state["set"] = self._reader.get(kind, name, namespace)
                raise

        retry_on_conflict(attempt)

    def update_if_changed(self, sts: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
        if not self.changed(sts, status):
            return False
        self.update_status(sts, status)
        return True

    write = update_status
    changed = staticmethod(status_changed)
    urgent = staticmethod(urgent_change)
    final = staticmethod(settled)
    window_for = staticmethod(coalescing_window)
    progressing = staticmethod(ordered_progress)
