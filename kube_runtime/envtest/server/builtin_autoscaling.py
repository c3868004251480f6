"""``autoscaling`` HorizontalPodAutoscaler as kube-apiserver serves it: stored in ``v1``
(as 1.20 stores it), also served in ``v2`` and ``v2beta2`` through :func:`convert_hpas`
(upstream's conversion: the metrics v1 has no field for, the behavior, the other current
metrics and the conditions travel in ``autoscaling.alpha.kubernetes.io/*`` annotations).

Defaults (``SetDefaults_HorizontalPodAutoscaler``: ``minReplicas: 1``, 80% CPU without any
metric), the validation users
meet (``ValidateHorizontalPodAutoscaler``: replica bounds, the scale target reference, the CPU
target) and the ``kubectl get hpa`` printer (``printHorizontalPodAutoscaler`` with
``formatHPAMetrics``) as kube-apiserver 1.20 renders them. The status starts as kube-apiserver
writes it on create (``currentReplicas`` and ``desiredReplicas`` 0).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _get, _int, _str
from kube_runtime.validation import path_segment_errors

__all__ = [
    "GROUP",
    "HPA_COLUMNS",
    "check_hpa",
    "convert_hpas",
    "default_hpa",
    "initial_hpa_status",
]

GROUP: Final = "autoscaling"


def default_hpa(obj: dict[str, Any]) -> None:
    """``spec.minReplicas`` defaults to 1; an autoscaler with no metric at all (no CPU
    target, no other metric in the annotation) targets 80% CPU utilization, as
    kube-apiserver stores it."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    annotations = fe.as_map(fe.as_map(obj.get("metadata")).get("annotations"))
    if spec.get("targetCPUUtilizationPercentage") is None and not annotations.get(
        "autoscaling.alpha.kubernetes.io/metrics"
    ):
        spec["targetCPUUtilizationPercentage"] = 80


def initial_hpa_status() -> dict[str, Any]:
    """The status a created HorizontalPodAutoscaler reads back with."""
    return {"currentReplicas": 0, "desiredReplicas": 0}


def check_hpa(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``validateHorizontalPodAutoscalerSpec`` on a v1 object, in its order: replica
    bounds, the scale target reference, then the metrics (the CPU target as the internal
    version's ``spec.metrics[0]``; scaling to zero needs an Object or External metric)."""
    spec = fe.as_map(obj.get("spec"))
    low = spec.get("minReplicas")
    high = spec.get("maxReplicas")
    if isinstance(low, int) and low < 1:
        out.append(fe.invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if not isinstance(high, int) or high < 1:
        out.append(
            fe.invalid(
                "spec.maxReplicas", high if isinstance(high, int) else 0, "must be greater than 0"
            )
        )
    if isinstance(low, int) and isinstance(high, int) and high < low:
        out.append(
            fe.invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`")
        )
    ref = fe.as_map(spec.get("scaleTargetRef"))
    for key in ("kind", "name"):
        value = _str(ref.get(key))
        if not value:
            out.append(fe.required(f"spec.scaleTargetRef.{key}"))
        for msg in path_segment_errors(value):
            out.append(fe.invalid(f"spec.scaleTargetRef.{key}", value, msg))
    target = spec.get("targetCPUUtilizationPercentage")
    if isinstance(target, int) and target < 1:
        out.append(
            fe.invalid(
                "spec.metrics[0].resource.target.averageUtilization",
                target,
                "must be greater than 0",
            )
        )
    if low == 0:
        out.append(
            fe.forbidden(
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
    ref = fe.as_map(_get(obj, "spec", "scaleTargetRef"))
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


# ------------------------------------------------------------------------------ conversion

METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/behavior"
_DEFAULT_CPU_UTILIZATION: Final = 80


def _is_cpu_utilization(metric: Mapping[str, Any]) -> bool:
    resource = fe.as_map(metric.get("resource"))
    return (
        metric.get("type") == "Resource"
        and resource.get("name") == "cpu"
        and fe.as_map(resource.get("target")).get("type") == "Utilization"
        and isinstance(fe.as_map(resource.get("target")).get("averageUtilization"), int)
    )


def _prune(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


#: Where each field of a v2beta1 metric source (the v1 annotation's form) is in the v2
#: source (``metric.resource``, ``metric.pods``, ...): one place for every metric type.
_ALPHA_PATHS: Final[dict[str, tuple[str, ...]]] = {
    "name": ("name",),
    "target": ("describedObject",),
    "metricName": ("metric", "name"),
    "selector": ("metric", "selector"),
    "metricSelector": ("metric", "selector"),
    "targetAverageUtilization": ("target", "averageUtilization"),
    "targetAverageValue": ("target", "averageValue"),
    "averageValue": ("target", "averageValue"),
    "targetValue": ("target", "value"),
}
#: Per v2 metric type, the fields of its v2beta1 form, in the order written.
_ALPHA_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "Resource": ("name", "targetAverageUtilization", "targetAverageValue"),
    "Pods": ("metricName", "targetAverageValue", "selector"),
    "Object": ("target", "metricName", "targetValue", "averageValue", "selector"),
    "External": ("metricName", "metricSelector", "targetValue", "targetAverageValue"),
}


def _alpha_spec(metric: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 metric spec in the v1 annotation's (v2beta1-shaped) form."""
    kind = metric.get("type")
    if not isinstance(kind, str) or kind not in _ALPHA_FIELDS:
        return dict(metric)
    source = fe.as_map(metric.get(kind.lower()))
    body: dict[str, Any] = {}
    for name in _ALPHA_FIELDS[kind]:
        *parents, leaf = _ALPHA_PATHS[name]
        parent = source
        for key in parents:
            parent = fe.as_map(parent.get(key))
        if parent.get(leaf) is not None:
            body[name] = parent[leaf]
    return {"type": kind, kind.lower(): body}


def _v2_metric(source: Mapping[str, Any], selector: str = "selector") -> dict[str, Any]:
    """The v2 ``MetricIdentifier`` of a v2beta1 metric source (``metricName``, ``selector``)."""
    return _prune({"name": source.get("metricName"), "selector": source.get(selector)})


def _v2_target(source: Mapping[str, Any], average: str) -> dict[str, Any]:
    """The v2 target of a v2beta1 object/external source: its ``average`` field's value as
    an AverageValue target when set, else its ``targetValue`` as a Value target."""
    if source.get(average) is not None:
        return {"type": "AverageValue", "averageValue": source[average]}
    return {"type": "Value", "value": source.get("targetValue")}


def _v2_spec(metric: Mapping[str, Any]) -> dict[str, Any]:
    """A metric of the v1 annotation back in v2 form (the inverse of :func:`_alpha_spec`)."""
    kind = metric.get("type")
    if kind == "Resource":
        res = fe.as_map(metric.get("resource"))
        if res.get("targetAverageUtilization") is not None:
            target = {"type": "Utilization", "averageUtilization": res["targetAverageUtilization"]}
        else:
            target = {"type": "AverageValue", "averageValue": res.get("targetAverageValue")}
        return {"type": kind, "resource": {"name": res.get("name"), "target": target}}
    if kind == "Pods":
        pods = fe.as_map(metric.get("pods"))
        target = {"type": "AverageValue", "averageValue": pods.get("targetAverageValue")}
        return {"type": kind, "pods": {"metric": _v2_metric(pods), "target": target}}
    if kind == "Object":
        obj = fe.as_map(metric.get("object"))
        return {
            "type": kind,
            "object": {
                "describedObject": obj.get("target"),
                "metric": _v2_metric(obj),
                "target": _v2_target(obj, "averageValue"),
            },
        }
    if kind == "External":
        ext = fe.as_map(metric.get("external"))
        described = _v2_metric(ext, "metricSelector")
        return {
            "type": kind,
            "external": {"metric": described, "target": _v2_target(ext, "targetAverageValue")},
        }
    return dict(metric)


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    return annotations


def _drop_empty_annotations(obj: dict[str, Any]) -> None:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("annotations") == {}:
        del meta["annotations"]


def _to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """A v2 (or v2beta2) object as autoscaling/v1: the CPU utilization target in
    ``targetCPUUtilizationPercentage``, every other metric, the behavior, the other current
    metrics and the conditions in the ``autoscaling.alpha.kubernetes.io/*`` annotations."""
    out = {**obj, "metadata": dict(fe.as_map(obj.get("metadata"))), "apiVersion": f"{GROUP}/v1"}
    if isinstance(out["metadata"].get("annotations"), dict):
        out["metadata"]["annotations"] = dict(out["metadata"]["annotations"])
    spec = dict(fe.as_map(obj.get("spec")))
    metrics = [m for m in spec.pop("metrics", None) or [] if isinstance(m, Mapping)]
    behavior = spec.pop("behavior", None)
    cpu = next((m for m in metrics if _is_cpu_utilization(m)), None)
    if cpu is not None:
        spec["targetCPUUtilizationPercentage"] = cpu["resource"]["target"]["averageUtilization"]
    others = [_alpha_spec(m) for m in metrics if m is not cpu]
    if others:
        _annotations(out)[METRICS_ANNOTATION] = json.dumps(others, separators=(",", ":"))
    if behavior is not None:
        _annotations(out)[BEHAVIOR_ANNOTATION] = json.dumps(behavior, separators=(",", ":"))
    out["spec"] = spec
    if isinstance(obj.get("status"), Mapping):
        status = dict(obj["status"])
        current = [m for m in status.pop("currentMetrics", None) or [] if isinstance(m, Mapping)]
        conditions = status.pop("conditions", None)
        for metric in current:
            res = fe.as_map(metric.get("resource"))
            value = fe.as_map(res.get("current")).get("averageUtilization")
            if metric.get("type") == "Resource" and res.get("name") == "cpu" and value is not None:
                status["currentCPUUtilizationPercentage"] = value
        if current:
            _annotations(out)[CURRENT_METRICS_ANNOTATION] = json.dumps(
                current, separators=(",", ":")
            )
        if conditions:
            _annotations(out)[CONDITIONS_ANNOTATION] = json.dumps(conditions, separators=(",", ":"))
        out["status"] = status
    _drop_empty_annotations(out)
    return out


def _from_v1(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """An autoscaling/v1 object in ``version`` (v2 or v2beta2): the inverse of
    :func:`_to_v1` (annotated metrics first, then the CPU target, as upstream)."""
    out = {
        **obj,
        "metadata": dict(fe.as_map(obj.get("metadata"))),
        "apiVersion": f"{GROUP}/{version}",
    }
    annotations = dict(fe.as_map(out["metadata"].get("annotations")))
    spec = dict(fe.as_map(obj.get("spec")))
    metrics = [_v2_spec(m) for m in _json_list(annotations.pop(METRICS_ANNOTATION, None))]
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if isinstance(cpu, int):
        metrics.append(
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": cpu},
                },
            }
        )
    if metrics:
        spec["metrics"] = metrics
    behavior = annotations.pop(BEHAVIOR_ANNOTATION, None)
    if behavior is not None:
        try:
            spec["behavior"] = json.loads(behavior)
        except ValueError:
            pass
    out["spec"] = spec
    current = _json_list(annotations.pop(CURRENT_METRICS_ANNOTATION, None))
    conditions = _json_list(annotations.pop(CONDITIONS_ANNOTATION, None))
    if isinstance(obj.get("status"), Mapping):
        status = dict(obj["status"])
        value = status.pop("currentCPUUtilizationPercentage", None)
        if isinstance(value, int):
            current.append(
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": value}},
                }
            )
        if current:
            status["currentMetrics"] = current
        if conditions:
            status["conditions"] = conditions
        out["status"] = status
    if annotations:
        out["metadata"]["annotations"] = annotations
    else:
        out["metadata"].pop("annotations", None)
    return out


def _json_list(text: Any) -> list[Any]:
    if not isinstance(text, str):
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def convert_hpas(objects: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """HorizontalPodAutoscalers in ``version`` (``v1`` stored; ``v2``, ``v2beta2``)."""
    out = []
    for obj in objects:
        current = str(obj.get("apiVersion", "")).rpartition("/")[2]
        if current == version:
            out.append(obj)
        elif version == "v1":  # a write in v2: decoded with the v2 defaults first
            defaulted = {**obj, "spec": dict(fe.as_map(obj.get("spec")))}
            default_v2_metrics(defaulted)
            out.append(_to_v1(defaulted))
        elif current == "v1":
            out.append(_from_v1(obj, version))
        else:  # v2 <-> v2beta2: the same fields
            out.append({**obj, "apiVersion": f"{GROUP}/{version}"})
    return out


def default_v2_metrics(obj: dict[str, Any]) -> None:
    """The v2 defaults kube-apiserver applies when decoding a v2 object: no metrics means
    a CPU utilization target of 80%."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {
                        "type": "Utilization",
                        "averageUtilization": _DEFAULT_CPU_UTILIZATION,
                    },
                },
            }
        ]
