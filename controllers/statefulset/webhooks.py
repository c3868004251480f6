"""The enhanced StatefulSet's validating webhook (issue 17 part 3): what neither its CRD's
schema nor its CEL rules can say.

The schema refuses wrong types, unknown enum values, negative counts and malformed
int-or-percent values; its CEL rules refuse a ``maxUnavailable`` that rounds to 0 and a
changed selector (on kube-apiserver 1.25+). The pod template and the claim templates are
left open by the schema (``x-kubernetes-preserve-unknown-fields``, as OpenKruise's are), so
their shape, a selector that does not match the template's labels, and everything else
:func:`~controllers.statefulset.spec.spec_field_errors` checks are refused here, with the field
paths, as OpenKruise's webhook refuses them, and what only Kruise's webhook checks
(:func:`kruise_errors`: pod restart policy and deadline, ``maxUnavailable`` and
``unorderedUpdate`` only with Parallel pods, changes to the fields Kruise keeps fixed).
``kube-runtime run statefulset --webhook-port N``
serves it (:func:`setup_webhooks`); what reaches the controller anyway is reported with the
``InvalidSpec`` condition and a Warning event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controllers.statefulset.spec import spec_field_errors
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime import meta, webhook
from kube_runtime.client.mapping import Resource
from kube_runtime.manager import Manager
from kube_runtime.workloads.templates import template_problems

__all__ = [
    "FIXED",
    "RESOURCE",
    "StatefulSetValidator",
    "kruise_errors",
    "setup_webhooks",
    "spec_errors",
]

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


FIXED = ("podManagementPolicy", "serviceName")
"""Spec fields (besides the selector) an update may not change: Kruise's
``ValidateStatefulSetUpdate`` lets ``replicas``, ``ordinals``, ``template``,
``reserveOrdinals``, ``lifecycle``, ``revisionHistoryLimit``,
``persistentVolumeClaimRetentionPolicy``, ``scaleStrategy``, ``volumeClaimTemplates``,
``volumeClaimUpdateStrategy`` and ``updateStrategy`` change."""

_ROLLING = "spec.updateStrategy.rollingUpdate"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def kruise_errors(sts: Any) -> list[webhook.FieldError]:
    """What OpenKruise's ``validateStatefulSetSpec`` refuses beyond
    :func:`~controllers.statefulset.spec.spec_field_errors` (specs the controller could
    still act on): a restart policy other than Always, ``activeDeadlineSeconds``, a
    ``maxUnavailable`` other than 1 or an ``unorderedUpdate`` without Parallel pods."""
    spec = meta.spec(sts)
    errors: list[webhook.FieldError] = []
    pod_spec = _mapping(_mapping(spec.get("template")).get("spec"))
    policy = pod_spec.get("restartPolicy")
    if policy not in (None, "", "Always"):
        errors.append(
            webhook.FieldError.not_supported("spec.template.spec.restartPolicy", policy, ["Always"])
        )
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errors.append(
            webhook.FieldError.forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in StatefulSet is not Supported",
            )
        )
    strategy = _mapping(spec.get("updateStrategy"))
    rolling = _mapping(strategy.get("rollingUpdate"))
    parallel = spec.get("podManagementPolicy") == "Parallel"
    if strategy.get("type", "RollingUpdate") == "RollingUpdate" and not parallel:
        unavailable = rolling.get("maxUnavailable")
        if unavailable is not None and not (
            isinstance(unavailable, int) and not isinstance(unavailable, bool) and unavailable == 1
        ):
            errors.append(
                webhook.FieldError.invalid(
                    f"{_ROLLING}.maxUnavailable",
                    unavailable,
                    "maxUnavailable can just work with Parallel PodManagementPolicyType",
                )
            )
        if rolling.get("unorderedUpdate") is not None:
            errors.append(
                webhook.FieldError.required(
                    f"{_ROLLING}.unorderedUpdate",
                    "unorderedUpdate can only work with Parallel PodManagementPolicyType",
                )
            )
    return errors


class StatefulSetValidator(webhook.Validator):
    """Refuses creates and updates whose spec the controller could not act on or OpenKruise
    refuses (:func:`spec_errors`, :func:`kruise_errors`), and updates that change the selector
    or another of the fields Kruise keeps fixed (:data:`FIXED`)."""

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(obj) or kruise_errors(obj)
        if errors:
            raise webhook.Invalid(errors=errors)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(new) or kruise_errors(new)
        new_spec, old_spec = meta.spec(new), meta.spec(old)
        if new_spec.get("selector") != old_spec.get("selector"):
            errors.append(
                webhook.FieldError.forbidden(
                    "spec.selector", "updates to the selector of a StatefulSet are forbidden"
                )
            )
        if any(new_spec.get(k) != old_spec.get(k) for k in FIXED):
            errors.append(
                webhook.FieldError.forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', "
                    "'persistentVolumeClaimRetentionPolicy', 'scaleStrategy', "
                    "'volumeClaimTemplates', 'volumeClaimUpdateStrategy' and 'updateStrategy' "
                    "are forbidden",
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
