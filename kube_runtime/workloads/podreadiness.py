"""Kruise's ``KruisePodReady`` readiness gate (openkruise ``pkg/util/podreadiness``): several
writers may hold a pod not ready, each under a ``(userAgent, key)`` message; the gate's
condition is ``False`` while any message is there and ``True`` once the last one is removed.

Pure functions: each returns the status *patch* (a strategic merge patch of
``status.conditions``, merged by condition type) that makes the change, or None when there is
nothing to write. Kruise's lifecycle uses the user agent ``Lifecycle`` with the keys
``preDeleteHook`` (``PreparingDelete``) and ``preUpdateHook`` (``PreparingUpdate``, removed at
``Updated``) when a hook says ``markPodNotReady``: the CloneSet's and the Advanced
StatefulSet's pod controls write these patches (``update_pod_lifecycle``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from datetime import datetime
from typing import Any, Final

from kube_runtime import clock as _clock
from kube_runtime.workloads import lifecycle

__all__ = [
    "KRUISE_POD_READY",
    "LIFECYCLE_USER_AGENT",
    "PRE_DELETE_KEY",
    "PRE_UPDATE_KEY",
    "add_not_ready_key",
    "get_condition",
    "has_gate",
    "initial_condition",
    "inject_gate",
    "lifecycle_not_ready_patch",
    "remove_not_ready_key",
]

KRUISE_POD_READY: Final = "KruisePodReady"
"""The readiness gate's condition type (Kruise ``appspub.KruisePodReadyConditionType``)."""
LIFECYCLE_USER_AGENT: Final = "Lifecycle"
PRE_DELETE_KEY: Final = "preDeleteHook"
PRE_UPDATE_KEY: Final = "preUpdateHook"


def _stamp(now: datetime | None) -> str:
    return (now or _clock.current().now()).strftime("%Y-%m-%dT%H:%M:%SZ")


def _conditions(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((pod.get("status") or {}).get("conditions") or ())


def has_gate(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's ``spec.readinessGates`` names :data:`KRUISE_POD_READY`."""
    gates = (pod.get("spec") or {}).get("readinessGates") or ()
    return any(g.get("conditionType") == KRUISE_POD_READY for g in gates)


def inject_gate(pod_spec: MutableMapping[str, Any]) -> None:
    """Add the :data:`KRUISE_POD_READY` readiness gate to a pod spec not yet created (what
    Kruise's pod mutating webhook does)."""
    gates = list(pod_spec.get("readinessGates") or ())
    if not any(g.get("conditionType") == KRUISE_POD_READY for g in gates):
        gates.append({"conditionType": KRUISE_POD_READY})
    pod_spec["readinessGates"] = gates


def get_condition(pod: Mapping[str, Any], kind: str = KRUISE_POD_READY) -> Mapping[str, Any] | None:
    """The pod's status condition of type ``kind`` (default the gate's), if any."""
    return next((c for c in _conditions(pod) if c.get("type") == kind), None)


def _messages(text: str | None) -> list[dict[str, str]]:
    if not text:
        return []
    try:
        parsed = json.loads(text)
    except ValueError:
        return []
    if not isinstance(parsed, list):
        return []
    return [
        {"userAgent": str(m.get("userAgent") or ""), "key": str(m.get("key") or "")}
        for m in parsed
        if isinstance(m, Mapping)
    ]


def _dump(messages: list[dict[str, str]]) -> str:
    ordered = sorted(messages, key=lambda m: (m["userAgent"], m["key"]))
    return json.dumps(ordered, separators=(",", ":"))


def initial_condition(pod: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any] | None:
    """Kruise's pod-readiness controller: a pod with the gate and no condition, not being
    deleted, gets the condition ``True``; the patch, or None."""
    if not has_gate(pod) or get_condition(pod) is not None:
        return None
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    condition = {"type": KRUISE_POD_READY, "status": "True", "lastTransitionTime": _stamp(now)}
    return {"status": {"conditions": [condition]}}


def _ready_after(pod: Mapping[str, Any], gate_status: str, now: datetime | None) -> dict | None:
    """Kruise ``SetPodReadyCondition`` with the gate's condition at ``gate_status``: when the
    pod has a ``Ready`` condition and ``ContainersReady`` is True, ``Ready`` follows the
    readiness gates (False with reason ``ReadinessGatesNotReady``)."""
    ready = get_condition(pod, "Ready")
    containers = get_condition(pod, "ContainersReady")
    if ready is None or containers is None or containers.get("status") != "True":
        return None
    unready = []
    for gate in (pod.get("spec") or {}).get("readinessGates") or ():
        kind = gate.get("conditionType")
        condition = get_condition(pod, kind)
        status = gate_status if kind == KRUISE_POD_READY else (condition or {}).get("status")
        if condition is None and kind != KRUISE_POD_READY:
            unready.append(
                f'corresponding condition of pod readiness gate "{kind}" does not exist.'
            )
        elif status != "True":
            unready.append(f'the status of pod readiness gate "{kind}" is not "True", but {status}')
    if not unready:
        return None  # Kruise writes Ready True here; the kubelet keeps it so
    if ready.get("status") == "False":
        return None
    return {
        "type": "Ready",
        "status": "False",
        "reason": "ReadinessGatesNotReady",
        "message": ", ".join(unready),
        "lastTransitionTime": _stamp(now),
    }


def add_not_ready_key(
    pod: Mapping[str, Any], user_agent: str, key: str, now: datetime | None = None
) -> dict[str, Any] | None:
    """Kruise ``AddNotReadyKey``: the patch that records ``(user_agent, key)`` in the gate's
    condition and sets it ``False`` (and ``Ready`` False as the gates say); None when the pod
    has no gate or the key is there already."""
    if not has_gate(pod):
        return None
    condition = get_condition(pod)
    messages = _messages((condition or {}).get("message"))
    wanted = {"userAgent": user_agent, "key": key}
    if wanted in messages and (condition or {}).get("status") != "True":
        return None
    if wanted not in messages:
        messages.append(wanted)
    patched = {
        "type": KRUISE_POD_READY,
        "status": "False",
        "message": _dump(messages),
        "lastTransitionTime": _stamp(now),
    }
    conditions: list[dict[str, Any]] = [patched]
    ready = _ready_after(pod, "False", now)
    if ready is not None:
        conditions.append(ready)
    return {"status": {"conditions": conditions}}


def remove_not_ready_key(
    pod: Mapping[str, Any], user_agent: str, key: str, now: datetime | None = None
) -> dict[str, Any] | None:
    """Kruise ``RemoveNotReadyKey``: the patch that drops ``(user_agent, key)`` from the gate's
    condition, ``True`` once no message is left; None when there is nothing to remove."""
    if not has_gate(pod):
        return None
    condition = get_condition(pod)
    if condition is None:
        return None
    messages = _messages(condition.get("message"))
    wanted = {"userAgent": user_agent, "key": key}
    if wanted not in messages:
        return None
    messages.remove(wanted)
    patched = {
        "type": KRUISE_POD_READY,
        "status": "False" if messages else "True",
        "message": _dump(messages),
        "lastTransitionTime": _stamp(now),
    }
    return {"status": {"conditions": [patched]}}


def lifecycle_not_ready_patch(pod: Mapping[str, Any], state: str) -> dict[str, Any] | None:
    """Kruise ``executePodNotReadyPolicy`` for a hook with ``markPodNotReady`` moving ``pod``
    to lifecycle ``state``: the ``Lifecycle`` user agent's key ``preDeleteHook`` added at
    ``PreparingDelete``, ``preUpdateHook`` added at ``PreparingUpdate`` and removed at
    ``Updated``; None for any other state or when there is nothing to write."""
    if state == lifecycle.PREPARING_DELETE:
        return add_not_ready_key(pod, LIFECYCLE_USER_AGENT, PRE_DELETE_KEY)
    if state == lifecycle.PREPARING_UPDATE:
        return add_not_ready_key(pod, LIFECYCLE_USER_AGENT, PRE_UPDATE_KEY)
    if state == lifecycle.UPDATED:
        return remove_not_ready_key(pod, LIFECYCLE_USER_AGENT, PRE_UPDATE_KEY)
    return None
