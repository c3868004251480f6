"""The Greeting validator on its own (no API server): an update is checked only when the spec
changed, so a Greeting stored before the webhook can still get its finalizer."""

from __future__ import annotations

from typing import Any

from kube_runtime import webhook

from .webhooks import GreetingValidator


def _review(operation: str, obj: dict[str, Any], old: dict[str, Any]) -> Any:
    request = webhook.AdmissionRequest(
        uid="u",
        operation=operation,
        kind={"group": "examples.kube-runtime.io", "version": "v1", "kind": "Greeting"},
        resource={"group": "examples.kube-runtime.io", "version": "v1", "resource": "greetings"},
        namespace="ns",
        object=obj,
        old_object=old,
    )
    return webhook.ValidatingHandler(GreetingValidator()).handle(request)


def test_metadata_only_updates_pass_the_validator() -> None:
    """A Greeting stored before the webhook (a blank message) can still get its finalizer."""
    stored = {"metadata": {"name": "g", "namespace": "ns"}, "spec": {"message": " "}}
    finalized = {**stored, "metadata": {**stored["metadata"], "finalizers": ["example.com/f"]}}
    assert _review("UPDATE", finalized, stored).allowed
    changed = {**stored, "spec": {"message": "  "}}
    refused = _review("UPDATE", changed, stored)
    assert not refused.allowed and refused.status is not None and refused.status["code"] == 422
