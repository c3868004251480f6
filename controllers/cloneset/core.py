"""Shared rules of the CloneSet controller (openkruise ``cloneset/core`` and ``cloneset/utils``).

The CloneSet kind, spec accessors with validation (:func:`validate`), whether a pod is ready /
available for the controller's purposes (a ``Normal`` lifecycle state and an
``InPlaceUpdateReady`` condition that is not ``False`` on top of the pod's own readiness), and
building the pods of a revision (:func:`new_versioned_pods`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from controllers.cloneset import lifecycle
from kube_runtime.expectations import equal_to_revision_hash
from kube_runtime.kinds import Kind
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.workloads.inplace import get_condition, inject_readiness_gate
from kube_runtime.workloads.intstr import scaled_value
from kube_runtime.workloads.pods import is_available, is_ready
from kube_runtime.workloads.pvc import INSTANCE_ID_LABEL, instance_pod_volumes_for
from kube_runtime.workloads.revision import POD_REVISION_LABEL

__all__ = [
    "CLONESET",
    "DEFAULT_MAX_UNAVAILABLE",
    "IN_PLACE_IF_POSSIBLE",
    "IN_PLACE_ONLY",
    "RECREATE",
    "SPECIFIED_DELETE_LABEL",
    "SpecError",
    "controller_key",
    "is_pod_available",
    "is_pod_ready",
    "is_pod_update_ready",
    "is_specified_delete",
    "is_updated",
    "new_versioned_pods",
    "partition",
    "replicas",
    "validate",
]

Obj = Mapping[str, Any]

CLONESET: Final = Kind("apps.kube-runtime.io/v1alpha1", "CloneSet")
SPECIFIED_DELETE_LABEL: Final = "apps.kruise.io/specified-delete"
DEFAULT_MAX_UNAVAILABLE: Final = "20%"
RECREATE: Final = "ReCreate"
IN_PLACE_IF_POSSIBLE: Final = "InPlaceIfPossible"
IN_PLACE_ONLY: Final = "InPlaceOnly"
_STRATEGIES = (RECREATE, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)


class SpecError(ValueError):
    """A CloneSet spec the controller cannot act on (a user error: reported, not retried)."""


def _spec(cs: Obj) -> Mapping[str, Any]:
    return cs.get("spec") or {}


def _update_strategy(cs: Obj) -> Mapping[str, Any]:
    return _spec(cs).get("updateStrategy") or {}


def controller_key(cs: Obj) -> str:
    """``namespace/name``: the key of the expectations of ``cs``."""
    meta = cs.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def replicas(cs: Obj) -> int:
    """``spec.replicas`` (default 1)."""
    value = _spec(cs).get("replicas")
    return 1 if value is None else int(value)


def partition(cs: Obj) -> int:
    """``updateStrategy.partition`` as a number of pods (a percentage rounds up), at most
    ``replicas``; 0 when unset."""
    raw = _update_strategy(cs).get("partition")
    if raw is None:
        return 0
    total = replicas(cs)
    return min(scaled_value(raw, total, True), total)


def max_surge(cs: Obj) -> int:
    """``updateStrategy.maxSurge`` (rounded up; 0 when paused or unset)."""
    strategy = _update_strategy(cs)
    raw = strategy.get("maxSurge")
    if raw is None or strategy.get("paused"):
        return 0
    return scaled_value(raw, replicas(cs), True)


def max_unavailable(cs: Obj, surge: int) -> int:
    """``updateStrategy.maxUnavailable`` (default 20%), rounded up unless maxSurge is used."""
    raw = _update_strategy(cs).get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE)
    if raw is None:
        raw = DEFAULT_MAX_UNAVAILABLE
    return scaled_value(raw, replicas(cs), surge == 0)


def scale_max_unavailable(cs: Obj) -> int | None:
    """``scaleStrategy.maxUnavailable`` (rounded up) or None (no limit)."""
    raw = (_spec(cs).get("scaleStrategy") or {}).get("maxUnavailable")
    return None if raw is None else scaled_value(raw, replicas(cs), True)


def validate(cs: Obj) -> None:
    """Raise :class:`SpecError` for specs upstream's webhook rejects and that this controller
    cannot act on: a bad selector (or one not matching the template), malformed
    int-or-percent values, an unknown strategy, InPlaceOnly with maxSurge."""
    spec = _spec(cs)
    raw_selector = spec.get("selector")
    try:
        selector = label_selector_from_dict(raw_selector)
    except ValueError as err:
        raise SpecError(f"invalid selector {raw_selector!r}: {err}") from None
    if not raw_selector or selector.matches_nothing():
        raise SpecError(f"selector {raw_selector!r} selects nothing or everything")
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not selector.matches(template_labels):
        raise SpecError("selector does not match the template's labels")
    if replicas(cs) < 0:
        raise SpecError("replicas must not be negative")
    strategy = _update_strategy(cs)
    kind = strategy.get("type") or RECREATE
    if kind not in _STRATEGIES:
        raise SpecError(f"unknown updateStrategy.type {kind!r} (one of {', '.join(_STRATEGIES)})")
    for path, raw in (
        ("updateStrategy.partition", strategy.get("partition")),
        ("updateStrategy.maxSurge", strategy.get("maxSurge")),
        ("updateStrategy.maxUnavailable", strategy.get("maxUnavailable")),
        ("scaleStrategy.maxUnavailable", (spec.get("scaleStrategy") or {}).get("maxUnavailable")),
    ):
        if raw is None:
            continue
        try:
            value = scaled_value(raw, replicas(cs), True)
        except ValueError as err:
            raise SpecError(f"{path}: {err}") from None
        if value < 0:
            raise SpecError(f"{path} must not be negative")
    if kind == IN_PLACE_ONLY and strategy.get("maxSurge") not in (None, 0, "0%"):
        raise SpecError("updateStrategy.maxSurge is not allowed with type InPlaceOnly")
    surge = max_surge(cs)
    if surge == 0 and max_unavailable(cs, surge) < 1 and strategy.get("maxUnavailable") is not None:
        raise SpecError("updateStrategy.maxUnavailable must be at least 1 when maxSurge is 0")


def is_specified_delete(cs: Obj, pod: Obj) -> bool:
    """The pod carries the specified-delete label or is named in ``scaleStrategy.podsToDelete``."""
    meta = pod.get("metadata") or {}
    if (meta.get("labels") or {}).get(SPECIFIED_DELETE_LABEL) is not None:
        return True
    return meta.get("name") in ((_spec(cs).get("scaleStrategy") or {}).get("podsToDelete") or ())


def is_updated(pod: Obj, update_revision: str) -> bool:
    """The pod is at ``update_revision`` (its ``controller-revision-hash`` label)."""
    return equal_to_revision_hash("", pod, update_revision)


def is_pod_update_ready(pod: Obj, min_ready_seconds: float, now: datetime | None = None) -> bool:
    """Upstream ``IsPodUpdateReady``: running, available for ``min_ready_seconds`` and no
    ``InPlaceUpdateReady`` condition other than True."""
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if not is_available(pod, min_ready_seconds, now)[0]:
        return False
    condition = get_condition(pod)
    return condition is None or condition.get("status") == "True"


def is_pod_available(cs: Obj, pod: Obj, now: datetime | None = None) -> bool:
    """Upstream ``IsPodAvailable``: Normal (or no) lifecycle state and update-ready with the
    set's minReadySeconds."""
    if lifecycle.get_state(pod) not in ("", lifecycle.NORMAL):
        return False
    return is_pod_update_ready(pod, float(_spec(cs).get("minReadySeconds") or 0), now)


def is_pod_ready(pod: Obj) -> bool:
    """Upstream ``isPodReady``: available with minReadySeconds 0 (lifecycle included)."""
    if lifecycle.get_state(pod) not in ("", lifecycle.NORMAL):
        return False
    return is_pod_update_ready(pod, 0) and is_ready(pod)


def new_versioned_pods(
    current_cs: Obj,
    update_cs: Obj,
    current_revision: str,
    update_revision: str,
    count: int,
    current_count: int,
    instance_ids: Sequence[str],
) -> list[dict[str, Any]]:
    """``count`` pods to create: the first ``current_count`` from ``current_cs`` at
    ``current_revision``, the rest from ``update_cs``; named ``<set>-<instance id>``, labelled
    with the revision and the instance id, controlled by the set, with one claim volume per
    ``volumeClaimTemplates`` entry, the ``InPlaceUpdateReady`` readiness gate and the
    ``Normal`` lifecycle state."""
    pods = []
    for i in range(count):
        cs, revision = (
            (current_cs, current_revision) if i < current_count else (update_cs, update_revision)
        )
        pods.append(_new_pod(cs, revision, instance_ids[i]))
    return pods


def _new_pod(cs: Obj, revision: str, instance_id: str) -> dict[str, Any]:
    meta = cs.get("metadata") or {}
    template = copy.deepcopy(dict(_spec(cs).get("template") or {}))
    pod_meta = dict(template.get("metadata") or {})
    name = f"{meta.get('name')}-{instance_id}"
    labels = dict(pod_meta.get("labels") or {})
    labels[POD_REVISION_LABEL] = revision
    labels[INSTANCE_ID_LABEL] = instance_id
    labels[lifecycle.LIFECYCLE_STATE_LABEL] = lifecycle.NORMAL
    pod_meta.update(
        {
            "name": name,
            "namespace": meta.get("namespace"),
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": CLONESET.api_version,
                    "kind": CLONESET.kind,
                    "name": meta.get("name"),
                    "uid": meta.get("uid"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
    )
    pod_meta.pop("generateName", None)
    spec = dict(template.get("spec") or {})
    inject_readiness_gate(spec)
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
    if _spec(cs).get("volumeClaimTemplates"):
        spec["volumes"] = instance_pod_volumes_for(cs, pod)
    return pod
