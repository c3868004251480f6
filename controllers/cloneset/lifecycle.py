"""Pod lifecycle hooks of a CloneSet: moved to :mod:`kube_runtime.workloads.lifecycle`, which
the Advanced StatefulSet shares; this path re-exports it."""

from __future__ import annotations

from kube_runtime.workloads.lifecycle import (
    LIFECYCLE_STATE_LABEL,
    LIFECYCLE_TIMESTAMP_ANNOTATION,
    NORMAL,
    PREPARING_DELETE,
    PREPARING_NORMAL,
    PREPARING_UPDATE,
    UPDATED,
    UPDATING,
    LifecycleState,
    get_state,
    is_pod_all_hooked,
    is_pod_hooked,
    lifecycle_marks_pod_not_ready,
    marks_pod_not_ready,
    state_patch,
)

__all__ = [
    "LIFECYCLE_STATE_LABEL",
    "LIFECYCLE_TIMESTAMP_ANNOTATION",
    "NORMAL",
    "PREPARING_DELETE",
    "PREPARING_NORMAL",
    "PREPARING_UPDATE",
    "UPDATED",
    "UPDATING",
    "LifecycleState",
    "get_state",
    "is_pod_all_hooked",
    "is_pod_hooked",
    "lifecycle_marks_pod_not_ready",
    "marks_pod_not_ready",
    "state_patch",
]
