"""Pod lifecycle hooks of a CloneSet (openkruise ``pkg/util/lifecycle``).

A pod's state lives in its ``lifecycle.apps.kruise.io/state`` label: ``Normal`` →
(``PreparingUpdate`` →) ``Updating`` → (``Updated`` →) ``Normal`` for in-place updates, and
``PreparingDelete`` before a hooked pod is deleted. A hook (``spec.lifecycle.preDelete`` /
``spec.lifecycle.inPlaceUpdate``) names finalizers (``finalizersHandler``) and labels
(``labelsHandler``); a pod carrying *any* of them is *hooked* and waits in the preparing state
until the user's controller removes them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Final

from kube_runtime.kinds import Pod

__all__ = [
    "LIFECYCLE_STATE_LABEL",
    "LIFECYCLE_TIMESTAMP_ANNOTATION",
    "NORMAL",
    "PREPARING_DELETE",
    "PREPARING_UPDATE",
    "UPDATED",
    "UPDATING",
    "LifecycleControl",
    "get_state",
    "is_pod_all_hooked",
    "is_pod_hooked",
]

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]

LIFECYCLE_STATE_LABEL: Final = "lifecycle.apps.kruise.io/state"
LIFECYCLE_TIMESTAMP_ANNOTATION: Final = "lifecycle.apps.kruise.io/timestamp"

NORMAL: Final = "Normal"
PREPARING_UPDATE: Final = "PreparingUpdate"
UPDATING: Final = "Updating"
UPDATED: Final = "Updated"
PREPARING_DELETE: Final = "PreparingDelete"


def _labels(pod: Obj) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _finalizers(pod: Obj) -> list[str]:
    return list((pod.get("metadata") or {}).get("finalizers") or ())


def get_state(pod: Obj) -> str:
    """The pod's lifecycle state ("" when it has none)."""
    return str(_labels(pod).get(LIFECYCLE_STATE_LABEL) or "")


def is_pod_hooked(hook: Obj | None, pod: Obj) -> bool:
    """Whether the pod carries any finalizer or label of ``hook`` (None: never hooked)."""
    if not hook:
        return False
    finalizers = _finalizers(pod)
    if any(f in finalizers for f in hook.get("finalizersHandler") or ()):
        return True
    labels = _labels(pod)
    return any(labels.get(k) == v for k, v in (hook.get("labelsHandler") or {}).items())


def is_pod_all_hooked(hook: Obj | None, pod: Obj) -> bool:
    """Whether the pod carries every finalizer and label of ``hook`` (None: False)."""
    if not hook:
        return False
    finalizers = _finalizers(pod)
    if any(f not in finalizers for f in hook.get("finalizersHandler") or ()):
        return False
    labels = _labels(pod)
    return all(labels.get(k) == v for k, v in (hook.get("labelsHandler") or {}).items())


class LifecycleControl:
    """Writes lifecycle states (a merge patch of the label and its timestamp annotation)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def update_pod_lifecycle(self, pod: Obj, state: str) -> tuple[bool, Obj]:
        """Move ``pod`` to ``state``; ``(written, pod as returned)``; no write when already there."""
        if get_state(pod) == state:
            return False, pod
        meta = pod.get("metadata") or {}
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        patch = {
            "metadata": {
                "labels": {LIFECYCLE_STATE_LABEL: state},
                "annotations": {LIFECYCLE_TIMESTAMP_ANNOTATION: now},
            }
        }
        updated: Obj = self._client.patch(
            Pod, meta.get("name"), patch, namespace=meta.get("namespace")
        )
        log.info(
            "%s/%s: lifecycle %r -> %r",
            meta.get("namespace"),
            meta.get("name"),
            get_state(pod),
            state,
        )
        return True, updated
