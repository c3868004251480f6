"""CloneSet status (openkruise ``cloneset/cloneset_status.go``): counts of the active pods by
readiness, availability and revision, the revisions, the selector for the scale subresource
(HPA), and the ``FailedScale`` / ``FailedUpdate`` conditions. Written through the status
subresource only when it changed."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from controllers.cloneset import core
from kube_runtime.conditions import remove_status_condition, set_status_condition
from kube_runtime.selectors import label_selector_from_dict

__all__ = [
    "FAILED_SCALE",
    "FAILED_UPDATE",
    "calculate_status",
    "set_condition",
    "status_changed",
]

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]

FAILED_SCALE: Final = "FailedScale"
FAILED_UPDATE: Final = "FailedUpdate"


def calculate_status(
    cs: Obj,
    pods: Sequence[Obj],
    current_revision: str,
    update_revision: str,
    collision_count: int,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The status ``cs`` should have (conditions copied from the old status)."""
    old = cs.get("status") or {}
    status: dict[str, Any] = {
        "observedGeneration": (cs.get("metadata") or {}).get("generation"),
        "replicas": len(pods),
        "readyReplicas": 0,
        "availableReplicas": 0,
        "updatedReplicas": 0,
        "updatedReadyReplicas": 0,
        "updatedAvailableReplicas": 0,
        "expectedUpdatedReplicas": max(core.replicas(cs) - core.partition(cs), 0),
        "updateRevision": update_revision,
        "collisionCount": collision_count,
        "labelSelector": str(label_selector_from_dict((cs.get("spec") or {}).get("selector"))),
    }
    for pod in pods:
        ready = core.is_pod_update_ready(pod, 0, now)
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


def set_condition(status: dict[str, Any], kind: str, error: BaseException | str | None) -> None:
    """Record ``error`` as a True condition of type ``kind`` (reason = kind), or drop the
    condition when ``error`` is None (kruise's Set/RemoveCloneSetCondition; the transition
    time moves only when the status does, see :mod:`kube_runtime.conditions`)."""
    conditions = [dict(c) for c in status.get("conditions") or ()]
    if error is None:
        remove_status_condition(conditions, kind)
    else:
        new = {"type": kind, "status": "True", "reason": kind, "message": str(error)}
        set_status_condition(conditions, new)
    if conditions:
        status["conditions"] = sorted(conditions, key=lambda c: str(c.get("type")))
    else:
        status.pop("conditions", None)


def status_changed(cs: Obj, status: Mapping[str, Any]) -> bool:
    """Whether ``status`` differs from the stored one."""
    return dict(cs.get("status") or {}) != dict(status)
