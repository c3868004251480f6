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
On updates with ``volumeClaimUpdateStrategy.type: OnPodRollingUpdate`` it also refuses what
Kruise's ``ValidateVolumeClaimTemplateUpdate`` refuses (:func:`volume_claim_template_errors`):
claim templates added, removed or renamed, changed in more than their size, or grown (or
shrunk) while their StorageClass (the named one, or the cluster's default) says
``allowVolumeExpansion: false``; it reads StorageClasses (get, list) to know.
The defaulting webhook stores what OpenKruise's mutating webhook sets
(:func:`set_defaults`, Kruise's ``SetDefaultsStatefulSet``): the values the controller reads
absent fields as (:class:`~controllers.statefulset.spec.SetSpec`).
``kube-runtime run statefulset --webhook-port N``
serves both (:func:`setup_webhooks`); what reaches the controller anyway is reported with the
``InvalidSpec`` condition and a Warning event.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Final

from controllers.statefulset.spec import DEFAULT_REVISION_HISTORY_LIMIT, RECREATE, spec_field_errors
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime import meta, rbac, webhook
from kube_runtime.client.interfaces import Reader
from kube_runtime.client.mapping import Resource
from kube_runtime.kinds import Kind
from kube_runtime.manager import Manager
from kube_runtime.workloads.pods import parse_time
from kube_runtime.workloads.quantity import parse_quantity
from kube_runtime.workloads.templates import template_problems

__all__ = [
    "DEFAULT_CLASS_ANNOTATION",
    "FIXED",
    "RESOURCE",
    "STORAGE_CLASS",
    "WEBHOOK_PERMISSIONS",
    "StatefulSetValidator",
    "default_storage_class",
    "kruise_errors",
    "set_defaults",
    "setup_webhooks",
    "spec_errors",
    "volume_claim_template_errors",
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


STORAGE_CLASS: Final = Kind("storage.k8s.io/v1", "StorageClass")
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
"""The annotation (value ``"true"``) that makes a StorageClass the cluster's default."""
WEBHOOK_PERMISSIONS: Final = (rbac.rule(STORAGE_CLASS.group, "storageclasses", "get", "list"),)
"""What the validating webhook reads besides its requests: StorageClasses, for
:func:`volume_claim_template_errors` (a named class is read, the default one found by a
list)."""
_ON_POD_ROLLING_UPDATE = "OnPodRollingUpdate"
_EPOCH = datetime.min.replace(tzinfo=timezone.utc)


def _storage(template: Mapping[str, Any], part: str) -> Any:
    """``spec.resources.<part>.storage`` as a number (absent: 0, as Kruise's ``Storage()``)."""
    resources = _mapping(_mapping(template.get("spec")).get("resources"))
    raw = _mapping(resources.get(part)).get("storage")
    if raw is None:
        return 0
    value = parse_quantity(raw)
    return raw if value is None else value


def _resized(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Kruise's ``isPVCResize``: the storage request or limit differs."""
    return any(_storage(old, part) != _storage(new, part) for part in ("requests", "limits"))


def _compatible_without_size(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Kruise's ``IsClaimCompatibleWithoutSize``: the same class when both name one, the same
    access modes in the same order."""
    a, b = _mapping(old.get("spec")), _mapping(new.get("spec"))
    if (
        a.get("storageClassName") is not None
        and b.get("storageClassName") is not None
        and a["storageClassName"] != b["storageClassName"]
    ):
        return False
    return list(a.get("accessModes") or ()) == list(b.get("accessModes") or ())


def default_storage_class(reader: Reader) -> Mapping[str, Any] | None:
    """The cluster's default StorageClass as Kruise's webhook picks it: among the classes
    annotated :data:`DEFAULT_CLASS_ANNOTATION` ``"true"``, the newest (the first of equals);
    None when there is none."""
    found: Mapping[str, Any] | None = None
    found_at = _EPOCH
    for sc in reader.list(STORAGE_CLASS)["items"]:
        if meta.annotations(sc).get(DEFAULT_CLASS_ANNOTATION) != "true":
            continue
        created = parse_time(meta.metadata(sc).get("creationTimestamp")) or _EPOCH
        if found is None or found_at < created:
            found, found_at = sc, created
    return found


def _template_name(template: Any) -> str:
    return str(meta.name(template)) if isinstance(template, Mapping) else ""


def volume_claim_template_errors(
    reader: Reader | None, sts: Any, old: Any
) -> list[webhook.FieldError]:
    """Kruise's ``ValidateVolumeClaimTemplateUpdate`` on an update from ``old`` to ``sts``
    (nothing unless ``sts`` has ``volumeClaimUpdateStrategy.type: OnPodRollingUpdate``), the
    first problem only, as Kruise: a different number of templates; a template whose name
    the old set does not have; a template changed in its class or access modes; a template
    whose storage size changed while its StorageClass (named, else the cluster's default
    :func:`default_storage_class`; none: no check) has ``allowVolumeExpansion: false``; a class
    that cannot be read. ``reader`` None: the StorageClass checks are left out."""
    spec, old_spec = meta.spec(sts), meta.spec(old)
    strategy = _mapping(spec.get("volumeClaimUpdateStrategy")).get("type")
    if strategy in (None, "", "OnDelete"):
        return []
    templates: Sequence[Any] = spec.get("volumeClaimTemplates") or []
    old_templates: Sequence[Any] = old_spec.get("volumeClaimTemplates") or []
    if len(templates) != len(old_templates):
        return [
            webhook.FieldError.invalid(
                "spec.volumeClaimTemplates",
                list(templates),
                f"volumeClaimTemplate can not be added or deleted when {_ON_POD_ROLLING_UPDATE}",
            )
        ]
    by_name = {_template_name(t): t for t in old_templates if isinstance(t, Mapping)}
    for template in templates:
        name = _template_name(template)
        path = f"spec.volumeClaimTemplates[{name}]"
        before = by_name.get(name)
        if before is None or not isinstance(template, Mapping):
            return [
                webhook.FieldError.forbidden(
                    f"{path}.name", "volumeClaimTemplate name can not be modified"
                )
            ]
        if not _compatible_without_size(before, template):
            return [
                webhook.FieldError.invalid(
                    path,
                    template,
                    f"volumeClaimTemplate can not be modified when {_ON_POD_ROLLING_UPDATE}",
                )
            ]
        if not _resized(before, template) or reader is None:
            continue
        class_name = _mapping(template.get("spec")).get("storageClassName")
        sc: Mapping[str, Any] | None
        if class_name is None:
            try:
                sc = default_storage_class(reader)
            except Exception:
                return [
                    webhook.FieldError.invalid(
                        f"{path}.spec.storageClassName", "nil", "can not list storage class"
                    )
                ]
            if sc is None:
                continue
        else:
            try:
                sc = reader.get(STORAGE_CLASS, str(class_name))
            except Exception:
                return [
                    webhook.FieldError.invalid(
                        f"{path}.spec.storageClassName", class_name, "can not get sc"
                    )
                ]
        if sc.get("allowVolumeExpansion") is False:
            return [
                webhook.FieldError.forbidden(
                    f"{path}.spec.resources.requests.storage",
                    f"storage class {meta.name(sc)} does not support volume expansion",
                )
            ]
    return []


class StatefulSetValidator(webhook.Validator):
    """Refuses creates and updates whose spec the controller could not act on or OpenKruise
    refuses (:func:`spec_errors`, :func:`kruise_errors`), updates that change the selector
    or another of the fields Kruise keeps fixed (:data:`FIXED`), and then updates whose claim
    templates change as Kruise's webhook refuses (:func:`volume_claim_template_errors`,
    reading StorageClasses with ``reader``; None: without the StorageClass checks)."""

    def __init__(self, reader: Reader | None = None) -> None:
        self.reader = reader

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(obj) or kruise_errors(obj)
        if errors:
            raise webhook.Invalid(errors=errors)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(new) or kruise_errors(new)
        # both as the defaulting webhook stores them: a set created without that webhook is
        # not refused for the defaults its update now carries
        new_spec, old_spec = meta.spec(set_defaults(new)), meta.spec(set_defaults(old))
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
        errors = volume_claim_template_errors(self.reader, new, old)
        if errors:
            raise webhook.Invalid(errors=errors)


def set_defaults(obj: Mapping[str, Any], request: Any = None) -> dict[str, Any]:
    """A copy of enhanced StatefulSet ``obj`` with OpenKruise's defaults
    (``SetDefaultsStatefulSet`` in ``apis/apps/defaults``, with the ``StatefulSetAutoDeletePVC``
    gate on as Kruise's default and ``StatefulSetAutoResizePVCGate`` on, as this controller
    always acts on ``volumeClaimUpdateStrategy``): ``podManagementPolicy`` OrderedReady,
    ``updateStrategy.type`` RollingUpdate and, for RollingUpdate, ``rollingUpdate`` with
    ``partition`` 0, ``maxUnavailable`` 1, ``podUpdatePolicy`` ReCreate and ``minReadySeconds``
    0; ``persistentVolumeClaimRetentionPolicy`` Retain/Retain;
    ``volumeClaimUpdateStrategy.type`` OnDelete; ``replicas`` 1; ``revisionHistoryLimit`` 10.
    The pod template's and claim templates' defaults (Kruise's ``SetDefaultPodSpec``) are left
    to the API server, which sets them on the pods and claims. ``request`` is the admission
    request (unused)."""
    result = copy.deepcopy(dict(obj))
    spec = result.setdefault("spec", {})
    if not isinstance(spec, dict):
        return result
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = spec.get("updateStrategy")
    if strategy is None:
        strategy = spec["updateStrategy"] = {}
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if rolling is None:
                rolling = strategy["rollingUpdate"] = {}
            if isinstance(rolling, dict):
                for key, value in (
                    ("partition", 0),
                    ("maxUnavailable", 1),
                    ("minReadySeconds", 0),
                ):
                    if rolling.get(key) is None:
                        rolling[key] = value
                if not rolling.get("podUpdatePolicy"):
                    rolling["podUpdatePolicy"] = RECREATE
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if retention is None:
        retention = spec["persistentVolumeClaimRetentionPolicy"] = {}
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            if not retention.get(key):
                retention[key] = "Retain"
    claims = spec.get("volumeClaimUpdateStrategy")
    if claims is None:
        claims = spec["volumeClaimUpdateStrategy"] = {}
    if isinstance(claims, dict) and not claims.get("type"):
        claims["type"] = "OnDelete"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = DEFAULT_REVISION_HISTORY_LIMIT
    return result


def setup_webhooks(manager: Manager) -> None:
    """Serve :func:`set_defaults` and :class:`StatefulSetValidator` (reading StorageClasses
    with the manager's API reader, :data:`WEBHOOK_PERMISSIONS`) for the enhanced kind from
    ``manager``'s webhook server (:func:`kube_runtime.webhook.server_for`, made first by the
    caller with its port and certificates)."""
    (
        webhook.for_kind(manager, ENHANCED_STATEFULSET, resource=RESOURCE)
        .defaulter(set_defaults)
        .validator(StatefulSetValidator(manager.api_reader))
    )
