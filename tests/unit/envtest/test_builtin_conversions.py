"""The embedded server's conversions between versions of built-in kinds (HPA, EndpointSlice):
each direction, and a round trip that changes nothing."""

from __future__ import annotations

import json
from typing import Any

from kube_runtime.envtest.server.builtin_autoscaling import convert_hpas
from kube_runtime.envtest.server.builtin_discovery import convert_endpoint_slices

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def _hpa(version: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"autoscaling/{version}",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": REF, "maxReplicas": 3, **spec},
        **extra,
    }


def test_v2_to_v1_keeps_cpu_in_its_field_and_the_rest_in_annotations() -> None:
    external = {
        "type": "External",
        "external": {
            "metric": {"name": "queue"},
            "target": {"type": "AverageValue", "averageValue": "30"},
        },
    }
    cpu = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    status = {
        "currentReplicas": 2,
        "desiredReplicas": 2,
        "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40}}}
        ],
        "conditions": [{"type": "AbleToScale", "status": "True"}],
    }
    v2 = _hpa("v2", {"metrics": [external, cpu], "behavior": behavior}, status=status)
    (v1,) = convert_hpas([v2], "v1")
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert "metrics" not in v1["spec"] and "behavior" not in v1["spec"]
    annotations = v1["metadata"]["annotations"]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "External", "external": {"metricName": "queue", "targetAverageValue": "30"}}
    ]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"]) == behavior
    assert v1["status"]["currentCPUUtilizationPercentage"] == 40
    (back,) = convert_hpas([v1], "v2")
    assert back["spec"]["metrics"] == [external, cpu]
    assert back["spec"]["behavior"] == behavior
    assert back["status"]["conditions"] == status["conditions"]
    assert "annotations" not in back["metadata"]
    assert v2["spec"]["metrics"] == [external, cpu]  # the input is not changed


def test_a_v2_write_without_metrics_targets_80_percent_cpu() -> None:
    (v1,) = convert_hpas([_hpa("v2beta2", {})], "v1")
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 80


def test_v2_and_v2beta2_differ_only_in_api_version() -> None:
    obj = _hpa("v2beta2", {"metrics": []})
    (v2,) = convert_hpas([obj], "v2")
    assert v2 == {**obj, "apiVersion": "autoscaling/v2"}


def test_endpoint_slice_topology_round_trip() -> None:
    beta = {
        "apiVersion": "discovery.k8s.io/v1beta1",
        "kind": "EndpointSlice",
        "addressType": "IPv4",
        "endpoints": [
            {
                "addresses": ["10.0.0.1"],
                "nodeName": "n1",
                "topology": {
                    "kubernetes.io/hostname": "n1",
                    "topology.kubernetes.io/zone": "z",
                    "rack": "r",
                },
            },
            {"addresses": ["10.0.0.2"]},
        ],
    }
    (v1,) = convert_endpoint_slices([beta], "v1")
    first, second = v1["endpoints"]
    assert first == {
        "addresses": ["10.0.0.1"],
        "nodeName": "n1",
        "zone": "z",
        "deprecatedTopology": {"rack": "r"},
    }
    assert second == {"addresses": ["10.0.0.2"]}
    (again,) = convert_endpoint_slices([v1], "v1beta1")
    assert again == beta
