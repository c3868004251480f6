"""``autoscaling/v1`` HorizontalPodAutoscaler as kube-apiserver serves it.

Defaults (``SetDefaults_HorizontalPodAutoscaler``: ``minReplicas: 1``), the validation users
meet (``ValidateHorizontalPodAutoscaler``: replica bounds, the scale target reference, the CPU
target) and the ``kubectl get hpa`` printer (``printHorizontalPodAutoscaler`` with
``formatHPAMetrics``) as kube-apiserver 1.20 renders them. The status starts as kube-apiserver
writes it on create (``currentReplicas`` and ``desiredReplicas`` 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _get, _int, _str
from kube_runtime.envtest.server.validation import _forbidden, _invalid, _map, _required

__all__ = ["GROUP", "HPA_COLUMNS", "check_hpa", "default_hpa", "initial_hpa_status"]

GROUP: Final = "autoscaling"


def default_hpa(obj: dict[str, Any]) -> None:
    """``spec.minReplicas`` defaults to 1."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("minReplicas") is None:
        spec["minReplicas"] = 1


def initial_hpa_status() -> dict[str, Any]:
    """The status a created HorizontalPodAutoscaler reads back with."""
    return {"currentReplicas": 0, "desiredReplicas": 0}


def _path_segment_errors(name: str) -> list[str]:
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def check_hpa(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``validateHorizontalPodAutoscalerSpec`` on a v1 object, in its order: replica
    bounds, the scale target reference, then the metrics (the CPU target as the internal
    version's ``spec.metrics[0]``; scaling to zero needs an Object or External metric)."""
    spec = _map(obj.get("spec"))
    low = spec.get("minReplicas")
    high = spec.get("maxReplicas")
    if isinstance(low, int) and low < 1:
        out.append(_invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if not isinstance(high, int) or high < 1:
        out.append(
            _invalid(
                "spec.maxReplicas", high if isinstance(high, int) else 0, "must be greater than 0"
            )
        )
    if isinstance(low, int) and isinstance(high, int) and high < low:
        out.append(
            _invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    ref = _map(spec.get("scaleTargetRef"))
    for key in ("kind", "name"):
        value = _str(ref.get(key))
        if not value:
            out.append(_required(f"spec.scaleTargetRef.{key}"))
        for msg in _path_segment_errors(value):
            out.append(_invalid(f"spec.scaleTargetRef.{key}", value, msg))
    target = spec.get("targetCPUUtilizationPercentage")
    if isinstance(target, int) and target < 1:
        out.append(
            _invalid(
                "spec.metrics[0].resource.target.averageUtilization",
                target,
                "must be greater than 0",
            )
        )
    if low == 0:
        out.append(
            _forbidden(
                "spec.metrics",
                "must specify at least one Object or External metric to support scaling to zero "
                "replicas",
            )
        )


def _targets(obj: Mapping[str, Any]) -> str:
    """``formatHPAMetrics`` of a v1 object: its CPU target, ``<none>`` without one."""
    target = _get(obj, "spec", "targetCPUUtilizationPercentage")
    if not isinstance(target, int):
        return "<none>"
    current = _get(obj, "status", "currentCPUUtilizationPercentage")
    shown = f"{current}%" if isinstance(current, int) else "<unknown>"
    return f"{shown}/{target}%"


def _reference(obj: Mapping[str, Any]) -> str:
    ref = _map(_get(obj, "spec", "scaleTargetRef"))
    return f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}"


def _min_pods(obj: Mapping[str, Any]) -> str:
    low = _get(obj, "spec", "minReplicas")
    return str(low) if isinstance(low, int) else "<unset>"


#: ``kubectl get hpa``: MinPods is text (``<unset>`` possible), MaxPods and Replicas numbers,
#: all declared ``string`` as upstream does.
HPA_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Reference", _reference),
    _col("Targets", _targets),
    _col("MinPods", _min_pods),
    _col("MaxPods", lambda o: _int(_get(o, "spec", "maxReplicas"))),
    _col("Replicas", lambda o: _int(_get(o, "status", "currentReplicas"))),
    AGE,
]
