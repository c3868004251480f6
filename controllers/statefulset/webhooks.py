"""The enhanced StatefulSet's validating webhook (issue 17 part 3): what neither its CRD's
schema nor its CEL rules can say.

The schema refuses wrong types, unknown enum values, negative counts and malformed
int-or-percent values; its CEL rules refuse a ``maxUnavailable`` that rounds to 0 and a
changed selector (on kube-apiserver 1.25+). The pod template and the claim templates are
left open by the schema (``x-kubernetes-preserve-unknown-fields``, as OpenKruise's are), so
their shape, a selector that does not match the template's labels, and everything else
:func:`~controllers.statefulset.spec.spec_field_errors` checks are refused here, with the field
paths, as OpenKruise's webhook refuses them. ``kube-runtime run statefulset --webhook-port N``
serves it (:func:`setup_webhooks`); what reaches the controller anyway is reported with the
``InvalidSpec`` condition and a Warning event.
"""

from __future__ import annotations

from typing import Any

from controllers.statefulset.spec import spec_field_errors
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime import meta, webhook
from kube_runtime.client.mapping import Resource
from kube_runtime.manager import Manager
from kube_runtime.workloads.templates import template_problems

__all__ = ["RESOURCE", "StatefulSetValidator", "setup_webhooks", "spec_errors"]

RESOURCE = Resource(
    group=ENHANCED_STATEFULSET.group,
    version=ENHANCED_STATEFULSET.version,
    kind=ENHANCED_STATEFULSET.kind,
    plural="statefulsets",
    namespaced=True,
)
"""The enhanced kind's resource, for the webhook configuration."""


def spec_errors(sts: Any) -> list[webhook.FieldError]:
    """What the webhook refuses in ``sts``'s spec: the template shapes first (the rest
    cannot be read from a template of the wrong shape), else the field values."""
    spec = meta.spec(sts)
    problems = template_problems(spec) or spec_field_errors(spec)
    return [webhook.FieldError.parse(problem) for problem in problems]


class StatefulSetValidator(webhook.Validator):
    """Refuses creates and updates whose spec the controller could not act on, and updates
    that change the selector (apps/v1 and OpenKruise forbid it)."""

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(obj)
        if errors:
            raise webhook.Invalid(errors=errors)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(new)
        if meta.spec(new).get("selector") != meta.spec(old).get("selector"):
            errors.append(
                webhook.FieldError.forbidden(
                    "spec.selector", "updates to the selector of a StatefulSet are forbidden"
                )
            )
        if errors:
            raise webhook.Invalid(errors=errors)


def setup_webhooks(manager: Manager) -> None:
    """Serve :class:`StatefulSetValidator` for the enhanced kind from ``manager``'s webhook
    server (:func:`kube_runtime.webhook.server_for`, made first by the caller with its port
    and certificates)."""
    webhook.for_kind(manager, ENHANCED_STATEFULSET, resource=RESOURCE).validator(
        StatefulSetValidator()
    )
