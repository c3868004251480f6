"""Pod lifecycle hooks of Kruise's workloads (openkruise ``pkg/util/lifecycle``), shared by the
CloneSet and the Advanced StatefulSet: states and hooks, no API calls (the state writes are
``CloneSetPodControl.update_pod_lifecycle`` and ``StatefulPodControl.update_pod_lifecycle``).

A pod's state lives in its ``lifecycle.apps.kruise.io/state`` label: a new pod is
``PreparingNormal`` until it is scheduled (or, with a ``preNormal`` hook, until it carries
every finalizer and label of the hook), then ``Normal`` →
(``PreparingUpdate`` →) ``Updating`` → (``Updated`` →) ``Normal`` for in-place updates, and
``PreparingDelete`` before a hooked pod is deleted. A hook (``spec.lifecycle.preDelete`` /
``spec.lifecycle.inPlaceUpdate``, as its wire dict) names finalizers (``finalizersHandler``)
and labels (``labelsHandler``); a pod carrying *any* of them is *hooked* and waits in the
preparing state until the user's controller removes them (``preNormal`` the other way round:
the pod waits until it carries all of them).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from kube_runtime import clock as _clock
from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj

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
    "hook_state_patch",
    "is_normal",
    "is_pod_all_hooked",
    "is_pod_hooked",
    "lifecycle_marks_pod_not_ready",
    "marks_pod_not_ready",
    "set_state",
    "state_patch",
]


LIFECYCLE_STATE_LABEL: Final = "lifecycle.apps.kruise.io/state"
LIFECYCLE_TIMESTAMP_ANNOTATION: Final = "lifecycle.apps.kruise.io/timestamp"


class LifecycleState(StrEnum):
    """The values of the state label (Kruise ``appspub.LifecycleStateType``)."""

    PREPARING_NORMAL = "PreparingNormal"
    NORMAL = "Normal"
    PREPARING_UPDATE = "PreparingUpdate"
    UPDATING = "Updating"
    UPDATED = "Updated"
    PREPARING_DELETE = "PreparingDelete"


PREPARING_NORMAL: Final = LifecycleState.PREPARING_NORMAL
NORMAL: Final = LifecycleState.NORMAL
PREPARING_UPDATE: Final = LifecycleState.PREPARING_UPDATE
UPDATING: Final = LifecycleState.UPDATING
UPDATED: Final = LifecycleState.UPDATED
PREPARING_DELETE: Final = LifecycleState.PREPARING_DELETE


def get_state(pod: Obj) -> str:
    """The pod's lifecycle state ("" when it has none)."""
    return str(meta.labels(pod).get(LIFECYCLE_STATE_LABEL) or "")


def is_normal(pod: Obj) -> bool:
    """The pod has no lifecycle state or is ``Normal`` (Kruise's StatefulSet counts any other
    state as unhealthy and unavailable)."""
    return get_state(pod) in ("", NORMAL)


def marks_pod_not_ready(hook: Obj | None) -> bool:
    """Whether ``hook`` (a hook's wire dict, None: no hook) says ``markPodNotReady`` (Kruise
    ``IsHookMarkPodNotReady``)."""
    return bool(hook and hook.get("markPodNotReady"))


def lifecycle_marks_pod_not_ready(spec_lifecycle: Obj | None) -> bool:
    """Whether a workload's ``spec.lifecycle`` (wire dict) has a ``preDelete`` or
    ``inPlaceUpdate`` hook saying ``markPodNotReady`` (Kruise ``IsLifecycleMarkPodNotReady``;
    ``preNormal``'s is not read, as there)."""
    if not spec_lifecycle:
        return False
    return marks_pod_not_ready(spec_lifecycle.get("preDelete")) or marks_pod_not_ready(
        spec_lifecycle.get("inPlaceUpdate")
    )


def is_pod_hooked(hook: Obj | None, pod: Obj) -> bool:
    """Whether the pod carries any finalizer or label of ``hook`` (None: never hooked)."""
    if not hook:
        return False
    finalizers = meta.finalizers(pod)
    if any(f in finalizers for f in hook.get("finalizersHandler") or ()):
        return True
    labels = meta.labels(pod)
    return any(labels.get(k) == v for k, v in (hook.get("labelsHandler") or {}).items())


def is_pod_all_hooked(hook: Obj | None, pod: Obj) -> bool:
    """Whether the pod carries every finalizer and label of ``hook`` (None: False)."""
    if not hook:
        return False
    finalizers = meta.finalizers(pod)
    if any(f not in finalizers for f in hook.get("finalizersHandler") or ()):
        return False
    labels = meta.labels(pod)
    return all(labels.get(k) == v for k, v in (hook.get("labelsHandler") or {}).items())


def state_patch(state: str, now: datetime | None = None) -> dict[str, Any]:
    """The merge patch that moves a pod to ``state``: the state label and its timestamp
    annotation (``now``, default the current clock's time, in whole UTC seconds)."""
    moment = now if now is not None else _clock.current().now()
    return {
        "metadata": {
            "labels": {LIFECYCLE_STATE_LABEL: str(state)},
            "annotations": {LIFECYCLE_TIMESTAMP_ANNOTATION: moment.strftime("%Y-%m-%dT%H:%M:%SZ")},
        }
    }


def hook_state_patch(state: str, hook: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The strategic merge patch that moves a pod to ``state`` (:func:`state_patch`) and,
    with ``hook`` (Kruise ``UpdatePodLifecycleWithHandler``), puts the hook's
    ``labelsHandler`` labels and ``finalizersHandler`` finalizers back in the same write (the
    finalizers merge into the pod's: strategic merge)."""
    patch = state_patch(state)
    if hook:
        labels = hook.get("labelsHandler")
        if isinstance(labels, Mapping):
            patch["metadata"]["labels"].update(labels)
        finalizers = hook.get("finalizersHandler")
        if isinstance(finalizers, list) and finalizers:
            patch["metadata"]["finalizers"] = list(finalizers)
    return patch


def set_state(pod: dict[str, Any], state: str, now: datetime | None = None) -> None:
    """Put ``state`` and its timestamp on ``pod`` (a private copy, not yet written; Kruise
    ``SetPodLifecycle``), as :func:`state_patch` would."""
    patch = state_patch(state, now)["metadata"]
    pod_meta = pod.setdefault("metadata", {})
    pod_meta["labels"] = {**(pod_meta.get("labels") or {}), **patch["labels"]}
    pod_meta["annotations"] = {**(pod_meta.get("annotations") or {}), **patch["annotations"]}
