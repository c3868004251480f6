"""CloneSet status (openkruise ``cloneset/cloneset_status.go``): counts of the active pods by
readiness, availability and revision, the revisions, the selector for the scale subresource
(HPA), the ``FailedScale`` / ``FailedUpdate`` conditions and the ``Progressing`` condition
driven by ``progressDeadlineSeconds`` (:func:`set_progressing`); and the write, through the
status subresource, only when it changed (:class:`ApiStatusUpdater`).

A status is a plain dict: the generated ``CloneSetStatus`` model requires fields a partial
status lacks, and a status is only compared and written here, never read for decisions.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Final, Protocol

from controllers.cloneset import core
from controllers.cloneset.core import CloneSetView
from kube_runtime import clock as _clock
from kube_runtime import meta
from kube_runtime.client.interfaces import Client
from kube_runtime.conditions import format_time, set_failure_condition
from kube_runtime.expectations import ResourceVersionExpectations
from kube_runtime.meta import ObjView as Obj
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.pods import parse_time
from kube_runtime.workloads.statuswriter import ApiStatusWriter

__all__ = [
    "FAILED_SCALE",
    "FAILED_UPDATE",
    "MAX_INT32",
    "PROGRESSING",
    "ApiStatusUpdater",
    "ProgressReason",
    "StatusUpdater",
    "calculate_status",
    "invalid_spec_status",
    "set_condition",
    "set_progressing",
    "status_changed",
]

log = logging.getLogger(__name__)


FAILED_SCALE: Final = "FailedScale"
FAILED_UPDATE: Final = "FailedUpdate"
PROGRESSING: Final = "Progressing"
MAX_INT32: Final = 2**31 - 1
"""``progressDeadlineSeconds`` of this value means no deadline, as upstream's
``HasProgressDeadline`` decides."""


class ProgressReason(StrEnum):
    """Reasons of the ``Progressing`` condition (upstream ``CloneSetConditionReason``)."""

    AVAILABLE = "CloneSetAvailable"
    PAUSED = "CloneSetPaused"
    PARTITION_AVAILABLE = "ProgressPartitionAvailable"
    DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
    UPDATED = "CloneSetUpdated"


_COUNTS = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "updatedReadyReplicas",
)


def calculate_status(
    cs: CloneSetView,
    pods: Sequence[Obj],
    current_revision: str,
    update_revision: str,
    collision_count: int,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The status ``cs`` should have (conditions copied from the old status)."""
    old = meta.status(cs.obj)
    status: dict[str, Any] = {
        "observedGeneration": meta.metadata(cs.obj).get("generation"),
        "replicas": len(pods),
        "readyReplicas": 0,
        "availableReplicas": 0,
        "updatedReplicas": 0,
        "updatedReadyReplicas": 0,
        "updatedAvailableReplicas": 0,
        "expectedUpdatedReplicas": max(cs.replicas - cs.partition, 0),
        "updateRevision": update_revision,
        "collisionCount": collision_count,
        "labelSelector": str(cs.selector),
    }
    for pod in pods:
        ready = core.is_pod_update_ready(pod, 0, now)
        if cs.min_ready_seconds == 0:  # the same check: spare it
            available = ready and lifecycle.get_state(pod) in ("", lifecycle.NORMAL)
        else:
            available = core.is_pod_available(cs, pod, now)
        updated = core.is_updated(pod, update_revision)
        status["readyReplicas"] += ready
        status["availableReplicas"] += available
        if updated:
            status["updatedReplicas"] += 1
            status["updatedReadyReplicas"] += ready
            status["updatedAvailableReplicas"] += available
    if status["updatedReplicas"] == status["replicas"] or not current_revision:
        status["currentRevision"] = update_revision
    else:
        status["currentRevision"] = current_revision
    if old.get("conditions"):
        status["conditions"] = copy.deepcopy(list(old["conditions"]))
    return status


def set_progressing(cs: CloneSetView, status: dict[str, Any], now: datetime | None = None) -> float:
    """Set the ``Progressing`` condition of ``status`` (computed by :func:`calculate_status`)
    as upstream's ``calculateProgressingStatus`` does; return the seconds after which the
    deadline passes (0: nothing to wait for).

    Without a deadline (``progressDeadlineSeconds`` unset or MaxInt32) the condition is
    removed. Otherwise, the first that holds: every pod updated and available
    (``CloneSetAvailable``); updates paused (``CloneSetPaused``); the pods the partition lets
    update are updated and available (``ProgressPartitionAvailable``); the deadline passed
    since the condition last changed, or passed already (False, ``ProgressDeadlineExceeded``);
    else ``CloneSetUpdated``. A condition keeps its times and message while its status and
    reason stay the same, so the deadline counts from when the set started progressing."""
    deadline = cs.spec.progress_deadline_seconds
    conditions = [dict(c) for c in status.get("conditions") or ()]
    if deadline is None or deadline == MAX_INT32:
        status["conditions"] = [c for c in conditions if c.get("type") != PROGRESSING]
        if not status["conditions"]:
            del status["conditions"]
        return 0.0
    moment = now if now is not None else _clock.current().now()
    replicas = cs.replicas
    current: Obj | None = next((c for c in conditions if c.get("type") == PROGRESSING), None)
    delay = 0.0
    if (
        status.get("currentRevision") == status.get("updateRevision")
        and status.get("replicas") == replicas
        and status.get("updatedReplicas") == replicas
        and status.get("updatedAvailableReplicas") == replicas
    ):
        new = ("True", ProgressReason.AVAILABLE, "CloneSet is available")
    elif cs.paused:
        new = ("True", ProgressReason.PAUSED, "CloneSet is paused")
    elif (expected := int(status.get("expectedUpdatedReplicas") or 0)) < replicas and (
        expected <= int(status.get("updatedAvailableReplicas") or 0)
    ):
        new = (
            "True",
            ProgressReason.PARTITION_AVAILABLE,
            "CloneSet has been paused due to partition ready",
        )
    elif _deadline_exceeded(current, deadline, moment):
        revision = status.get("updateRevision")
        new = (
            "False",
            ProgressReason.DEADLINE_EXCEEDED,
            f"CloneSet revision {revision} has timed out progressing",
        )
    else:
        new = ("True", ProgressReason.UPDATED, "CloneSet is progressing")
    in_effect = _set_progressing_condition(conditions, current, *new, moment)
    if new[1] == ProgressReason.UPDATED:
        since = parse_time(in_effect.get("lastUpdateTime")) or moment
        left = (since + timedelta(seconds=deadline) - moment).total_seconds()
        # a second more past the mark, as upstream: the deadline is judged strictly after it
        delay = left + 1.0 if left >= 1.0 else max(left, 0.05)
    status["conditions"] = sorted(conditions, key=lambda c: str(c.get("type")))
    return delay


def _deadline_exceeded(current: Obj | None, deadline: int, now: datetime) -> bool:
    if current is None:
        return False
    if current.get("reason") == ProgressReason.DEADLINE_EXCEEDED:
        return True
    since = parse_time(current.get("lastUpdateTime"))
    return since is not None and since + timedelta(seconds=deadline) < now


def _set_progressing_condition(
    conditions: list[dict[str, Any]],
    current: Obj | None,
    state: str,
    reason: str,
    message: str,
    now: datetime,
) -> Obj:
    """Upstream ``SetCloneSetCondition``: nothing changes while status and reason stay; a
    new reason with the same status keeps ``lastTransitionTime``. The condition in effect."""
    if current is not None and current.get("status") == state and current.get("reason") == reason:
        return current
    stamp = format_time(now)
    new = {
        "type": PROGRESSING,
        "status": state,
        "reason": reason,
        "message": message,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
    }
    if current is not None and current.get("status") == state:
        new["lastTransitionTime"] = current.get("lastTransitionTime") or stamp
    conditions[:] = [c for c in conditions if c.get("type") != PROGRESSING]
    conditions.append(new)
    return new


def invalid_spec_status(cs: Obj, message: str) -> dict[str, Any]:
    """The status of a set whose spec is invalid: the old one with a ``FailedScale``
    condition saying so, the current generation observed, and zero counts where none were."""
    status = copy.deepcopy(dict(meta.status(cs)))
    set_condition(status, FAILED_SCALE, f"invalid spec: {message}")
    status["observedGeneration"] = meta.metadata(cs).get("generation")
    for field in _COUNTS:
        status.setdefault(field, 0)
    return status


def set_condition(status: dict[str, Any], kind: str, error: BaseException | str | None) -> None:
    """Record ``error`` as a True condition of type ``kind`` (reason = kind), or drop the
    condition when ``error`` is None (kruise's Set/RemoveCloneSetCondition; the transition
    time moves only when the status does, see :mod:`kube_runtime.conditions`)."""
    conditions = [dict(c) for c in status.get("conditions") or ()]
    failure = None if error is None else (kind, str(error))
    set_failure_condition(conditions, kind, failure, remove_on_success=True)
    if conditions:
        status["conditions"] = sorted(conditions, key=lambda c: str(c.get("type")))
    else:
        status.pop("conditions", None)


_VOLATILE_CONDITION_KEYS = ("message", "lastTransitionTime", "lastUpdateTime")


def _without_messages(status: Mapping[str, Any]) -> dict[str, Any]:
    plain = dict(status)
    if "conditions" in plain:
        plain["conditions"] = [
            {k: v for k, v in c.items() if k not in _VOLATILE_CONDITION_KEYS}
            for c in plain["conditions"] or ()
        ]
    return plain


def status_changed(cs: Obj, status: Mapping[str, Any]) -> bool:
    """Whether ``status`` differs from the stored one, conditions compared by type, status
    and reason: a failure that repeats with another message (a pod name drawn anew at each
    attempt) is not a change, so a failing set's retries write nothing, and its own status
    write never wakes it before its backoff is over. Any other change writes the whole status,
    new messages included."""
    stored = meta.status(cs)
    if dict(stored) == dict(status):
        return False
    return _without_messages(stored) != _without_messages(status)


class StatusUpdater(Protocol):
    """Writes a set's status."""

    def write(self, cs: Obj, status: Mapping[str, Any]) -> None:
        """Write ``status`` as the status of ``cs`` (whether or not it changed)."""

    def update_if_changed(self, cs: Obj, status: Mapping[str, Any]) -> bool:
        """:meth:`write` when :func:`status_changed` (compared once); whether it was."""


class ApiStatusUpdater(ApiStatusWriter):
    """:class:`StatusUpdater` over the API: a PUT of ``/status`` with the set as read (its
    resourceVersion: a stale copy is a ``Conflict``, raised for the sync to be retried),
    only when :func:`status_changed` (:meth:`update_if_changed`). ``written`` gets every version written, so the next
    sync waits until its cache shows it."""

    def __init__(
        self,
        client: Client,
        written: ResourceVersionExpectations | None = None,
        *,
        logger: logging.Logger = log,
    ) -> None:
        self.written = written if written is not None else ResourceVersionExpectations()
        """The versions this updater wrote: a sync waits until the cache shows them."""
        super().__init__(client, self.written, logger=logger)

    def write(self, cs: Obj, status: Mapping[str, Any]) -> None:
        self.put(cs, status)

    def update_if_changed(self, cs: Obj, status: Mapping[str, Any]) -> bool:
        if not status_changed(cs, status):
            return False
        self.put(cs, status)
        return True
