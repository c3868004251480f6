"""The CloneSet's validating webhook (issue 17 part 3): refuses the specs the controller
cannot act on (:func:`~controllers.cloneset.core.validate`: template and claim-template
shapes, selectors, negative counts, malformed int-or-percent values, unknown strategies,
InPlaceOnly with maxSurge) and selector changes, as OpenKruise's CloneSet webhook does.
``kube-runtime run cloneset --webhook-port N`` serves it (:func:`setup_webhooks`)."""

from __future__ import annotations

from typing import Any

from controllers.cloneset.core import CLONESET, SpecError, validate
from kube_runtime import meta, webhook
from kube_runtime.client.mapping import Resource
from kube_runtime.manager import Manager

__all__ = ["RESOURCE", "CloneSetValidator", "setup_webhooks"]

RESOURCE = Resource(
    group=CLONESET.group,
    version=CLONESET.version,
    kind=CLONESET.kind,
    plural="clonesets",
    namespaced=True,
)
"""The CloneSet's resource, for the webhook configuration."""


def _check(obj: Any) -> None:
    try:
        validate(dict(obj) if isinstance(obj, dict) else obj)
    except SpecError as err:
        raise webhook.Denied(f"invalid CloneSet spec: {err}") from None


class CloneSetValidator(webhook.Validator):
    """Refuses what :func:`~controllers.cloneset.core.validate` refuses, and selector changes."""

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        _check(obj)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        if meta.spec(new).get("selector") != meta.spec(old).get("selector"):
            raise webhook.Invalid(
                errors=[
                    webhook.FieldError.forbidden(
                        "spec.selector", "selector is immutable in a CloneSet"
                    )
                ]
            )
        _check(new)


def setup_webhooks(manager: Manager) -> None:
    """Serve :class:`CloneSetValidator` from ``manager``'s webhook server."""
    webhook.for_kind(manager, CLONESET, resource=RESOURCE).validator(CloneSetValidator())
