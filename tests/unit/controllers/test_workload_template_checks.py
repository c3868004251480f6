"""Kruise's pod-template checks shared by the CloneSet and the Advanced StatefulSet webhooks
(``controllers.cloneset.webhooks.pod_template_errors``): ``restartPolicy`` only ``Always``,
no ``activeDeadlineSeconds``, each webhook naming its own kind as Kruise's does."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.cloneset.webhooks import pod_template_errors, spec_errors
from controllers.statefulset.webhooks import kruise_errors


def _template(**pod_spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **pod_spec},
    }


def _messages(errors: list[Any]) -> list[str]:
    return [str(e) for e in errors if e.field.startswith("spec.template.spec.")]


def test_only_restart_policy_always_and_no_active_deadline() -> None:
    assert pod_template_errors({"template": _template()}, "cloneset") == []
    assert pod_template_errors({"template": _template(restartPolicy="Always")}, "x") == []
    spec = {"template": _template(restartPolicy="Never", activeDeadlineSeconds=5)}
    assert [str(e) for e in pod_template_errors(spec, "cloneset")] == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in cloneset is not Supported",
    ]


@pytest.mark.parametrize(
    ("errors_of", "api_version", "kind", "named"),
    [
        (spec_errors, "apps.kruise.io/v1alpha1", "CloneSet", "cloneset"),
        (kruise_errors, "apps.kruise.io/v1beta1", "StatefulSet", "StatefulSet"),
    ],
)
def test_each_webhook_refuses_them_naming_its_kind(
    errors_of: Any, api_version: str, kind: str, named: str
) -> None:
    obj = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": _template(activeDeadlineSeconds=5),
        },
    }
    assert _messages(errors_of(obj)) == [
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        f"activeDeadlineSeconds in {named} is not Supported"
    ]
