"""Generated modules share the core types of kube_runtime.models (selectors, conditions, owner
references, object metadata) instead of each carrying a copy."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from codegen import from_text, generate
from codegen.shared import shared_type
from kube_runtime import models
from tests.support.codegen import CRD_DIR, CRD_FILES, load_module

REPO = Path(__file__).resolve().parents[3]


def _module(name: str, tmp_path: Path) -> Any:
    path = CRD_DIR / CRD_FILES[name]
    if not path.exists():
        pytest.skip(f"no CRD fixtures at {CRD_DIR}")
    return load_module(generate([from_text(path.name, path.read_bytes())]), tmp_path, name)


def test_two_modules_share_one_selector_class(tmp_path: Path) -> None:
    clone = _module("cloneset", tmp_path)
    asts = _module("asts", tmp_path)
    assert clone.CloneSetSpecSelector is asts.StatefulSetSpecSelector is models.LabelSelector
    selector = clone.CloneSetSpec.model_fields["selector"].annotation
    assert models.LabelSelector in (selector, *get_args(selector))
    wire = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "Exists"}]}
    spec = clone.CloneSetSpec.model_validate({"selector": wire, "template": {}})
    assert isinstance(spec.selector, asts.StatefulSetSpecSelector)
    assert spec.selector.match_expressions[0].operator == "Exists"
    assert spec.to_wire()["selector"] == wire


def test_metadata_and_conditions_are_the_frameworks(tmp_path: Path) -> None:
    route = _module("httproute", tmp_path)  # controller-gen's metav1.Condition
    assert route.HTTPRoute.model_fields["metadata"].annotation is models.ObjectMeta
    assert route.HTTPRouteStatusParentsItemConditionsItem is models.Condition
    condition = {
        "type": "Accepted",
        "status": "True",
        "observedGeneration": 2,
        "lastTransitionTime": "2024-01-31T12:00:00Z",
        "reason": "Accepted",
        "message": "",
    }
    parent = route.HTTPRouteStatusParentsItem.model_validate(
        {"parentRef": {"name": "gw"}, "controllerName": "example.com/gw", "conditions": [condition]}
    )
    assert isinstance(parent.conditions[0], models.Condition)


def test_a_looser_condition_type_is_its_own_class(tmp_path: Path) -> None:
    # cert-manager's CertificateCondition: reason and message optional, no bounds
    cert = _module("certificate", tmp_path)
    assert cert.CertificateStatusConditionsItem is not models.Condition
    status = cert.CertificateStatus.model_validate(
        {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}
    )
    assert status.conditions[0].observed_generation == 2


def test_a_different_shape_is_not_shared(tmp_path: Path) -> None:
    # OpenKruise's conditions have lastUpdateTime and a free-form status: not metav1's
    clone = _module("cloneset", tmp_path)
    assert clone.CloneSetStatusConditionsItem is not models.Condition
    selector: dict[str, Any] = {
        "type": "object",
        "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "operator"],
                    "properties": {
                        "key": {"type": "string", "description": "ignored"},
                        "operator": {"type": "string"},
                        "values": {"type": "array", "items": {"type": "string"}},
                    },
                },
                "x-kubernetes-list-type": "atomic",
            },
        },
        "x-kubernetes-map-type": "atomic",
        "description": "ignored too",
    }
    assert shared_type(selector) == "LabelSelector"
    stricter = copy.deepcopy(selector)
    stricter["properties"]["matchLabels"]["maxProperties"] = 3
    assert shared_type(stricter) is None
    extra = copy.deepcopy(selector)
    extra["properties"]["namespaces"] = {"type": "array", "items": {"type": "string"}}
    assert shared_type(extra) is None
    required = copy.deepcopy(selector)
    required["required"] = ["matchLabels"]
    assert shared_type(required) is None
    embedded = copy.deepcopy(selector) | {"x-kubernetes-embedded-resource": True}
    assert shared_type(embedded) is None


def test_committed_models_import_the_shared_types() -> None:
    for package in ("cloneset", "statefulset"):
        text = (REPO / "controllers" / package / "models.py").read_text()
        assert (
            "from kube_runtime.models import DateTime, KubeModel, LabelSelector, ObjectMeta, crd\n"
            in text
        )
        imports = [line for line in text.splitlines() if line.startswith(("from ", "import "))]
        assert not [line for line in imports if "codegen" in line]  # the runtime, not codegen
        assert "MatchExpressionsItem(KubeModel)" not in text


def test_output_is_deterministic(tmp_path: Path) -> None:
    path = CRD_DIR / CRD_FILES["asts"]
    if not path.exists():
        pytest.skip(f"no CRD fixtures at {CRD_DIR}")
    first = generate([from_text(path.name, path.read_bytes())])
    assert generate([from_text(path.name, path.read_bytes())]) == first
    assert first.count(" = LabelSelector\n") == 4  # spec.selector and matchSelector, 2 versions


def test_embedded_resource_with_a_selector_shape_is_generated(tmp_path: Path) -> None:
    crd = yaml.safe_load((REPO / "examples" / "greetings" / "crd.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["template"] = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}
        },
    }
    text = generate([from_text("crd.yaml", yaml.safe_dump(crd).encode())])
    assert "class GreetingSpecTemplate(KubeModel):" in text
