"""Deployment and ReplicaSet status conditions (upstream ``deployment_util.go``'s
``NewDeploymentCondition`` / ``SetDeploymentCondition`` and ``replica_set_utils.go``'s).

A Deployment condition carries ``lastUpdateTime`` and ``lastTransitionTime``; a ReplicaSet
condition only ``lastTransitionTime``. Setting a condition whose status and reason are
already recorded changes nothing; one with the same status keeps the recorded transition
time. Conditions are plain dicts in ``status["conditions"]``; the functions change the status
they are given.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from datetime import datetime
from typing import Any

from kube_runtime.conditions import format_time

__all__ = [
    "AVAILABLE",
    "FAILED_RS_CREATE_REASON",
    "FOUND_NEW_RS_REASON",
    "MINIMUM_REPLICAS_AVAILABLE",
    "MINIMUM_REPLICAS_UNAVAILABLE",
    "NEW_RS_AVAILABLE_REASON",
    "NEW_RS_REASON",
    "PAUSED_DEPLOY_REASON",
    "PROGRESSING",
    "REPLICA_FAILURE",
    "RESUMED_DEPLOY_REASON",
    "RS_UPDATED_REASON",
    "TIMED_OUT_REASON",
    "get_condition",
    "new_condition",
    "remove_condition",
    "replica_set_to_deployment_condition",
    "set_condition",
]

PROGRESSING = "Progressing"
AVAILABLE = "Available"
REPLICA_FAILURE = "ReplicaFailure"

RS_UPDATED_REASON = "ReplicaSetUpdated"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
PAUSED_DEPLOY_REASON = "DeploymentPaused"
RESUMED_DEPLOY_REASON = "DeploymentResumed"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"


def new_condition(
    type_: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
    *,
    update_time: bool = True,
) -> dict[str, Any]:
    """A condition stamped ``now``; ``update_time`` False leaves out ``lastUpdateTime`` (a
    ReplicaSet condition)."""
    stamp = format_time(now)
    condition: dict[str, Any] = {"type": type_, "status": status}
    if update_time:
        condition["lastUpdateTime"] = stamp
    condition["lastTransitionTime"] = stamp
    condition["reason"] = reason
    condition["message"] = message
    return condition


def get_condition(status: Mapping[str, Any], type_: str) -> dict[str, Any] | None:
    """The condition of ``type_`` in ``status``, or None."""
    for condition in status.get("conditions") or ():
        if condition.get("type") == type_:
            return condition
    return None


def set_condition(status: MutableMapping[str, Any], condition: Mapping[str, Any]) -> None:
    """Record ``condition`` in ``status``: nothing when one of its type has its status and
    reason already; otherwise it replaces that one (keeping its ``lastTransitionTime`` when
    the status is the same) at the end of the list."""
    current = get_condition(status, condition["type"])
    if (
        current is not None
        and current.get("status") == condition.get("status")
        and current.get("reason") == condition.get("reason")
    ):
        return
    new = dict(condition)
    if current is not None and current.get("status") == condition.get("status"):
        new["lastTransitionTime"] = current.get("lastTransitionTime")
    kept = [c for c in status.get("conditions") or () if c.get("type") != condition["type"]]
    status["conditions"] = [*kept, new]


def remove_condition(status: MutableMapping[str, Any], type_: str) -> None:
    """Drop the condition of ``type_`` (an empty list goes too)."""
    kept = [c for c in status.get("conditions") or () if c.get("type") != type_]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def replica_set_to_deployment_condition(condition: Mapping[str, Any]) -> dict[str, Any]:
    """A ReplicaSet's condition as a Deployment's (``lastUpdateTime`` its transition time)."""
    return {
        "type": condition.get("type"),
        "status": condition.get("status"),
        "lastUpdateTime": condition.get("lastTransitionTime"),
        "lastTransitionTime": condition.get("lastTransitionTime"),
        "reason": condition.get("reason"),
        "message": condition.get("message"),
    }
