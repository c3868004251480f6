"""The enhanced StatefulSet's validating webhook (issue 17 part 3): what neither its CRD's
schema nor its CEL rules can say.

The schema refuses wrong types, unknown enum values, negative counts and malformed
int-or-percent values; its CEL rules refuse a ``maxUnavailable`` that rounds to 0 and a
changed selector (on kube-apiserver 1.25+). The pod template and the claim templates are
left open by the schema (``x-kubernetes-preserve-unknown-fields``, as OpenKruise's are), so
their shape, a selector that does not match the template's labels, and everything else
:func:`~controllers.statefulset.spec.spec_field_errors` checks are refused here, with the field
paths, as OpenKruise's webhook refuses them, and what only Kruise's webhook checks
(:func:`kruise_errors`: pod restart policy and deadline, ``reserveOrdinals`` ranges,
``scaleStrategy.maxUnavailable`` and ``rollingUpdate.maxUnavailable`` other than 1 only with
Parallel pods, ``unorderedUpdate`` only with Parallel pods and a well-formed priority
strategy, ``rollingUpdate.minReadySeconds`` at most 300, no ``rollingUpdate`` with OnDelete,
the ``InPlaceUpdateReady`` readiness gate in the template of an in-place
``podUpdatePolicy``; on updates, changes to the fields Kruise keeps fixed and, under
InPlaceOnly, template changes beyond images). Kruise's StatefulSet webhook checks nothing
in ``lifecycle``.
On updates with ``volumeClaimUpdateStrategy.type: OnPodRollingUpdate`` it also refuses what
Kruise's ``ValidateVolumeClaimTemplateUpdate`` refuses (:func:`volume_claim_template_errors`):
claim templates added, removed or renamed, changed in more than their size, or grown (or
shrunk) while their StorageClass (the named one, or the cluster's default) says
``allowVolumeExpansion: false``; it reads StorageClasses (get, list) to know.
The defaulting webhook stores what OpenKruise's mutating webhook sets
(:func:`set_defaults`, Kruise's ``SetDefaultsStatefulSet``): the values the controller reads
absent fields as (:class:`~controllers.statefulset.spec.StatefulSetView`).
``kube-runtime run statefulset --webhook-port N``
serves both (:func:`setup_webhooks`); what reaches the controller anyway is reported with the
``InvalidSpec`` condition and a Warning event.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Final, TypeGuard

from controllers._register import namespaced_resource
from controllers.cloneset.webhooks import pod_template_errors, priority_strategy_error
from controllers.statefulset.spec import (
    DEFAULT_REVISION_HISTORY_LIMIT,
    IN_PLACE_IF_POSSIBLE,
    IN_PLACE_ONLY,
    RECREATE,
    spec_field_errors,
)
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime import meta, rbac, webhook
from kube_runtime.client.interfaces import Reader
from kube_runtime.kinds import Kind
from kube_runtime.manager import Manager
from kube_runtime.workloads.intstr import int_or_percent_error, scaled_value
from kube_runtime.workloads.pods import parse_time
from kube_runtime.workloads.quantity import parse_quantity
from kube_runtime.workloads.templates import template_problems

__all__ = [
    "DEFAULT_CLASS_ANNOTATION",
    "FIXED",
    "FIXED_MESSAGE",
    "IN_PLACE_UPDATE_READY",
    "MAX_MIN_READY_SECONDS",
    "RESOURCE",
    "STORAGE_CLASS",
    "UPDATABLE",
    "WEBHOOK_PERMISSIONS",
    "Errored",
    "StatefulSetValidator",
    "default_storage_class",
    "in_place_only_error",
    "kruise_errors",
    "set_defaults",
    "setup_webhooks",
    "spec_errors",
    "template_spec_changes",
    "volume_claim_template_errors",
]

RESOURCE = namespaced_resource(ENHANCED_STATEFULSET, "statefulsets")
"""The enhanced kind's resource, for the webhook configuration."""


def spec_errors(sts: Any) -> list[webhook.FieldError]:
    """What the webhook refuses in ``sts``'s spec: the template shapes first (the rest
    cannot be read from a template of the wrong shape), else the field values. The checks
    :func:`kruise_errors` makes in Kruise's words (a ``maxUnavailable`` that rounds to 0,
    ``reserveOrdinals``) are left to it."""
    spec = meta.spec(sts)
    problems = template_problems(spec) or [
        problem
        for problem in spec_field_errors(spec)
        if not problem.startswith("spec.reserveOrdinals:") and "must not round to 0" not in problem
    ]
    return [webhook.FieldError.parse(problem) for problem in problems]


UPDATABLE: Final = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "scaleStrategy",
        "volumeClaimTemplates",
        "volumeClaimUpdateStrategy",
        "reserveOrdinals",
        "lifecycle",
        "revisionHistoryLimit",
    }
)
"""The spec fields an update may change (Kruise's ``ValidateStatefulSetUpdate``); any other
(``selector``, ``serviceName``, ``podManagementPolicy``, ...) is kept fixed."""
FIXED: Final = ("podManagementPolicy", "selector", "serviceName")
"""The spec fields of the enhanced kind an update may not change (every field not in
:data:`UPDATABLE`)."""
FIXED_MESSAGE: Final = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', "
    "'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, "
    "`VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden"
)
"""Kruise's words (at ``spec``) for an update that changes a field not in :data:`UPDATABLE`."""
IN_PLACE_UPDATE_READY: Final = "InPlaceUpdateReady"
"""The readiness gate an in-place ``podUpdatePolicy`` needs in the pod template."""
MAX_MIN_READY_SECONDS: Final = 300
"""Kruise's ``MaxMinReadySeconds``: the most ``rollingUpdate.minReadySeconds`` may be."""

_ROLLING = "spec.updateStrategy.rollingUpdate"
_RESERVE = "spec.reserveOrdinals"
_RANGE = re.compile(r"^\d+-\d+$")
_ATOI = re.compile(r"^[+-]?\d+$")
_IMAGE_PATCH = re.compile(r"/containers/([0-9]+)/image")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _max_unavailable_errors(value: Any, parallel: bool, path: str) -> list[webhook.FieldError]:
    """Kruise's ``validateMaxUnavailableField`` for ``value`` at ``path`` (a malformed value
    is :func:`spec_errors`'s): a value that rounds below 1 of one replica (rounded up), and
    anything but the integer 1 unless pods are managed ``Parallel``."""
    errors: list[webhook.FieldError] = []
    if int_or_percent_error(value) is None and scaled_value(value, 1, True) < 1:
        errors.append(webhook.FieldError.invalid(path, value, "should not be less than 1"))
    if not parallel and not (_is_int(value) and value == 1):
        errors.append(
            webhook.FieldError.invalid(
                path, value, "can only work with Parallel PodManagementPolicyType"
            )
        )
    return errors


def _atoi_error(text: str) -> str | None:
    """Go's ``strconv.Atoi`` error for ``text``, None when it parses."""
    return None if _ATOI.match(text) else f'strconv.Atoi: parsing "{text}": invalid syntax'


def _range_error(text: str) -> str | None:
    """Kruise's ``ParseRange`` error for ``text`` (``"a-b"``, ``a <= b``), None when valid."""
    parts = text.split("-")
    if len(parts) != 2:
        return f"invalid range {text}"
    for part in parts:
        error = _atoi_error(part)
        if error is not None:
            return error
    if int(parts[0]) > int(parts[1]):
        return f"invalid range {text}"
    return None


def _reserve_ordinal_errors(entries: Any) -> list[webhook.FieldError]:
    """Kruise's ``validateReserveOrdinals``: a string must be a range ``"a-b"`` with
    ``a <= b``, an integer must not be negative; Kruise's messages with the whole list as the
    value, at ``spec.reserveOrdinals`` (Kruise names the root, ``spec``: here the message
    names the field, as every other refusal does)."""
    errors: list[webhook.FieldError] = []
    if not isinstance(entries, list):
        return errors
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            if not _RANGE.match(entry):
                errors.append(
                    webhook.FieldError.invalid(
                        _RESERVE, entries, f"{i} th reserve ordinal is not a valid range: {entry}"
                    )
                )
            error = _range_error(entry)
            if error is not None:
                errors.append(
                    webhook.FieldError.invalid(
                        _RESERVE,
                        entries,
                        f"{i} th reserve ordinal is invalid: {entry}, err = {error}",
                    )
                )
        elif _is_int(entry) and entry < 0:
            errors.append(
                webhook.FieldError.invalid(
                    _RESERVE, entries, f"{i} th reserve ordinal is negative: {entry}"
                )
            )
    return errors


def _rolling_update_errors(
    spec: Mapping[str, Any], rolling: Mapping[str, Any], parallel: bool
) -> list[webhook.FieldError]:
    """Kruise's ``validateRollingUpdateStatefulSetStrategyType`` beyond
    :func:`spec_errors`: ``minReadySeconds`` over :data:`MAX_MIN_READY_SECONDS`,
    ``maxUnavailable`` (:func:`_max_unavailable_errors`), an in-place ``podUpdatePolicy``
    without the :data:`IN_PLACE_UPDATE_READY` readiness gate in the template,
    ``unorderedUpdate`` without Parallel pods or with a malformed ``priorityStrategy``."""
    errors: list[webhook.FieldError] = []
    ready = rolling.get("minReadySeconds")
    if _is_int(ready) and ready > MAX_MIN_READY_SECONDS:
        errors.append(
            webhook.FieldError.invalid(
                f"{_ROLLING}.minReadySeconds", ready, "must be no more than 300 seconds"
            )
        )
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        errors += _max_unavailable_errors(unavailable, parallel, f"{_ROLLING}.maxUnavailable")
    policy = rolling.get("podUpdatePolicy")
    if policy in (IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY):
        gates = _mapping(_mapping(spec.get("template")).get("spec")).get("readinessGates")
        if not any(
            _mapping(gate).get("conditionType") == IN_PLACE_UPDATE_READY for gate in gates or ()
        ):
            errors.append(
                webhook.FieldError.invalid(
                    "spec.template.spec.readinessGates",
                    gates,
                    f"must contains {IN_PLACE_UPDATE_READY} when podUpdatePolicy is {policy}",
                )
            )
    unordered = rolling.get("unorderedUpdate")
    if unordered is not None:
        if not parallel:
            errors.append(
                webhook.FieldError.required(
                    f"{_ROLLING}.unorderedUpdate",
                    "unorderedUpdate can only work with Parallel PodManagementPolicyType",
                )
            )
        problem = priority_strategy_error(_mapping(unordered).get("priorityStrategy"))
        if problem is not None:
            errors.append(
                webhook.FieldError.required(f"{_ROLLING}.unorderedUpdate.priorityStrategy", problem)
            )
    return errors


def kruise_errors(sts: Any) -> list[webhook.FieldError]:
    """What OpenKruise's ``validateStatefulSetSpec`` refuses beyond :func:`spec_errors`
    (specs the controller could still act on), in Kruise's words and field paths:
    ``reserveOrdinals`` strings that are not ranges ``"a-b"`` and negative ones;
    ``scaleStrategy.maxUnavailable`` and ``rollingUpdate.maxUnavailable`` below 1 or other
    than 1 without Parallel pods; ``rollingUpdate`` with the OnDelete strategy; the
    rolling-update rules of :func:`_rolling_update_errors`; a restart policy other than
    Always; ``activeDeadlineSeconds``."""
    spec = meta.spec(sts)
    parallel = spec.get("podManagementPolicy") == "Parallel"
    errors = _reserve_ordinal_errors(spec.get("reserveOrdinals"))
    scale_unavailable = _mapping(spec.get("scaleStrategy")).get("maxUnavailable")
    if scale_unavailable is not None:
        errors += _max_unavailable_errors(
            scale_unavailable, parallel, "spec.scaleStrategy.maxUnavailable"
        )
    strategy = _mapping(spec.get("updateStrategy"))
    rolling = strategy.get("rollingUpdate")
    kind = strategy.get("type") or "RollingUpdate"
    if kind == "OnDelete" and rolling is not None:
        errors.append(
            webhook.FieldError.invalid(
                _ROLLING, rolling, "only allowed for updateStrategy 'RollingUpdate'"
            )
        )
    elif kind == "RollingUpdate" and rolling is not None:
        errors += _rolling_update_errors(spec, _mapping(rolling), parallel)
    errors += pod_template_errors(spec, "StatefulSet")
    return errors


def _pointer(path: str, key: str | int) -> str:
    """``path`` with a JSON pointer step for ``key`` (``~`` and ``/`` escaped)."""
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def template_spec_changes(old: Any, new: Any, path: str = "") -> list[tuple[str, str]]:
    """The JSON patch operations (``(op, path)``) that turn pod spec ``old`` into ``new``,
    as appscode/jsonpatch's ``CreatePatch`` makes them (which Kruise's InPlaceOnly check
    reads): a value of another type or a changed scalar is a ``replace``; a key only in
    ``new`` an ``add``, only in ``old`` a ``remove``; lists of different lengths lose their
    tail (``remove``, from the end) or gain one (``add``), their common items compared in
    turn. Keys are walked in sorted order (Go walks its maps in no fixed order)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        ops: list[tuple[str, str]] = []
        for key in sorted(new):
            if key in old:
                ops += template_spec_changes(old[key], new[key], _pointer(path, key))
            else:
                ops.append(("add", _pointer(path, key)))
        ops += [("remove", _pointer(path, key)) for key in sorted(old) if key not in new]
        return ops
    if isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        ops = [("remove", _pointer(path, i)) for i in range(len(old) - 1, common - 1, -1)]
        ops += [("add", _pointer(path, i)) for i in range(common, len(new))]
        for i in range(common):
            ops += template_spec_changes(old[i], new[i], _pointer(path, i))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [("replace", path)]


def in_place_only_error(old: Any, new: Any) -> str | None:
    """Kruise's ``validateTemplateInPlaceOnly`` on an update of a set whose
    ``podUpdatePolicy`` is InPlaceOnly: the first change of the pod template's spec that is
    not an image replaced (``"add /volumes"``), as Kruise's message carries it; None when
    only images changed."""
    before = _mapping(_mapping(meta.spec(old).get("template")).get("spec"))
    after = _mapping(_mapping(meta.spec(new).get("template")).get("spec"))
    for op, path in template_spec_changes(before, after):
        if op != "replace" or not _IMAGE_PATCH.search(path):
            return f"{op} {path}"
    return None


class Errored(webhook.AdmissionError):
    """A refusal with a code and a plain message, no field causes (controller-runtime's
    ``admission.Errored``, which Kruise's handler answers some refusals with)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code

    def status(self, group: str, kind: str, name: str) -> dict[str, Any]:
        """The code and the message as given."""
        return {"metadata": {}, "code": self.code, "message": self.message}


STORAGE_CLASS: Final = Kind("storage.k8s.io/v1", "StorageClass")
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
"""The annotation (value ``"true"``) that makes a StorageClass the cluster's default."""
WEBHOOK_PERMISSIONS: Final = (rbac.rule(STORAGE_CLASS.group, "storageclasses", "get", "list"),)
"""What the validating webhook reads besides its requests: StorageClasses, for
:func:`volume_claim_template_errors` (a named class is read, the default one found by a
list)."""
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
                "volumeClaimTemplate can not be added or deleted when OnRollingUpdate",
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
                    "volumeClaimTemplate can not be modified when OnRollingUpdate",
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
    """Refuses what OpenKruise's StatefulSet validating webhook refuses, in its order: specs
    the controller could not act on or Kruise refuses (:func:`spec_errors`,
    :func:`kruise_errors`) and updates that change a field Kruise keeps fixed (every spec
    field not in :data:`UPDATABLE`, :data:`FIXED_MESSAGE`), together; then updates whose claim
    templates change as Kruise's webhook refuses (:func:`volume_claim_template_errors`,
    reading StorageClasses with ``reader``; None: without the StorageClass checks); then, for
    a set whose ``podUpdatePolicy`` is InPlaceOnly, updates of the pod template's spec beyond
    its images (:func:`in_place_only_error`: a 422 without field causes, as Kruise's). An
    update that leaves the spec as it is (the defaults :func:`set_defaults` adds aside) passes
    (Kruise checks it again): the controller's finalizer can always be added and removed."""

    def __init__(self, reader: Reader | None = None) -> None:
        self.reader = reader

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        errors = spec_errors(obj) or kruise_errors(obj)
        if errors:
            raise webhook.Invalid(errors=errors)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        if meta.spec(set_defaults(new)) == meta.spec(set_defaults(old)):
            # metadata only, the defaulting webhook's defaults aside (this controller's
            # ordered-teardown finalizer among it): a set stored before the webhooks is not
            # held by them, its deletion not stuck
            return
        errors = spec_errors(new) or kruise_errors(new)
        # both as the defaulting webhook stores them: a set created without that webhook is
        # not refused for the defaults its update now carries
        new_spec, old_spec = meta.spec(set_defaults(new)), meta.spec(set_defaults(old))
        if any(
            new_spec.get(k) != old_spec.get(k)
            for k in set(new_spec) | set(old_spec)
            if k not in UPDATABLE
        ):
            errors.append(webhook.FieldError.forbidden("spec", FIXED_MESSAGE))
        if errors:
            raise webhook.Invalid(errors=errors)
        errors = volume_claim_template_errors(self.reader, new, old)
        if errors:
            raise webhook.Invalid(errors=errors)
        rolling = _mapping(_mapping(meta.spec(new).get("updateStrategy")).get("rollingUpdate"))
        if rolling.get("podUpdatePolicy") == IN_PLACE_ONLY:
            change = in_place_only_error(old, new)
            if change is not None:
                raise Errored(
                    422,
                    f"invalid template modified with InPlaceOnly strategy: {change}, "
                    "currently only image update is allowed for InPlaceOnly",
                )


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
