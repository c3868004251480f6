"""The CloneSet's webhooks. The validating one (issue 17 part 3) refuses, with field paths
(422 and one cause per problem, as OpenKruise's CloneSet webhook answers), what
:func:`spec_errors` finds: template and claim-template shapes, selectors, negative counts,
malformed int-or-percent values, a partition or maxUnavailable above 100%, unknown strategies, InPlaceOnly with maxSurge, both
maxUnavailable and maxSurge below 1, priority and scatter terms, duplicated podsToDelete,
lifecycle hook finalizers that are not qualified names; on
updates also changes to fields Kruise keeps fixed (the selector among them). Anything else
the controller could not act on (:func:`~controllers.cloneset.core.validate`) is refused
too. The defaulting one sets what OpenKruise's mutating webhook sets
(:func:`set_defaults`). ``kube-runtime run cloneset --webhook-port N`` serves both
(:func:`setup_webhooks`)."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

from controllers._register import namespaced_resource
from controllers.cloneset.core import (
    CLONESET,
    DEFAULT_MAX_UNAVAILABLE,
    IN_PLACE_IF_POSSIBLE,
    IN_PLACE_ONLY,
    RECREATE,
    InvalidSpecError,
    over_100_percent,
    validate,
)
from kube_runtime import meta, webhook
from kube_runtime.client.errors import NotFound
from kube_runtime.client.interfaces import Reader
from kube_runtime.kinds import Pod
from kube_runtime.manager import Manager
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.validation import qualified_name_errors
from kube_runtime.workloads.intstr import int_or_percent_error
from kube_runtime.workloads.templates import template_problems

__all__ = [
    "RESOURCE",
    "UPDATABLE",
    "CloneSetValidator",
    "pod_template_errors",
    "pods_to_delete_errors",
    "priority_strategy_error",
    "set_defaults",
    "setup_webhooks",
    "spec_errors",
]

RESOURCE = namespaced_resource(CLONESET, "clonesets")
"""The CloneSet's resource, for the webhook configuration."""


UPDATABLE = frozenset(
    {
        "replicas",
        "template",
        "lifecycle",
        "scaleStrategy",
        "updateStrategy",
        "minReadySeconds",
        "volumeClaimTemplates",
        "revisionHistoryLimit",
    }
)
"""The spec fields an update may change (Kruise's ``validateCloneSetUpdate``)."""

_TYPES = (RECREATE, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)
_PERCENT = re.compile(r"[+-]?[0-9]+%")


def _scaled(value: Any, replicas: int) -> int | None:
    """An int-or-percent scaled to ``replicas``, rounding up (Kruise's
    ``GetScaledValueFromIntOrPercent(..., true)``); None when malformed."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        return math.ceil(int(value[:-1]) * replicas / 100)
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def _nonnegative(errors: list[webhook.FieldError], spec: Mapping[str, Any], key: str) -> None:
    value = spec.get(key)
    if isinstance(value, int) and value < 0:
        errors.append(
            webhook.FieldError.invalid(f"spec.{key}", value, "must be greater than or equal to 0")
        )


def _selector_errors(spec: Mapping[str, Any]) -> list[webhook.FieldError]:
    raw = spec.get("selector")
    if raw is None:
        return [webhook.FieldError.required("spec.selector")]
    if not isinstance(raw, Mapping):
        return [webhook.FieldError.invalid("spec.selector", raw, "must be a label selector")]
    try:
        selector = label_selector_from_dict(raw)
    except ValueError as err:
        return [webhook.FieldError.invalid("spec.selector", raw, str(err))]
    if not raw.get("matchLabels") and not raw.get("matchExpressions"):
        return [
            webhook.FieldError.invalid(
                "spec.selector", raw, "empty selector is invalid for cloneset"
            )
        ]
    template = spec.get("template")
    labels = meta.labels(template) if isinstance(template, Mapping) else {}
    if not selector.matches(labels):
        return [
            webhook.FieldError.invalid(
                "spec.template.metadata.labels",
                labels,
                "`selector` does not match template `labels`",
            )
        ]
    return []


def pod_template_errors(spec: Mapping[str, Any], workload: str) -> list[webhook.FieldError]:
    """Kruise's checks of a workload's pod template: ``restartPolicy`` only ``Always`` and no
    ``activeDeadlineSeconds`` ("activeDeadlineSeconds in ``workload`` is not Supported", in
    the words each of Kruise's webhooks uses)."""
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
                f"activeDeadlineSeconds in {workload} is not Supported",
            )
        )
    return errors


def priority_strategy_error(priority: Any) -> str | None:
    """Kruise's ``UpdatePriorityStrategy.FieldsValidation``: why ``priority`` (an
    ``updateStrategy.priorityStrategy``) is refused, or None when it is acceptable."""
    if not isinstance(priority, Mapping):
        return None
    weights = priority.get("weightPriority") or []
    if weights and priority.get("orderPriority"):
        return "only one of weightPriority and orderPriority can be used"
    for term in weights:
        weight = term.get("weight") if isinstance(term, Mapping) else None
        if not isinstance(weight, int) or not 0 <= weight <= 100:
            return "weight must be valid number in the range 1-100"
        selector = term.get("matchSelector") or {}
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            return "selector can not be empty"
        try:
            label_selector_from_dict(selector)
        except ValueError as err:
            return f"invalid selector {err}"
    for term in priority.get("orderPriority") or []:
        if not isinstance(term, Mapping) or not term.get("orderedKey"):
            return "order key can not be empty"
    return None


def _scatter_error(scatter: Any) -> str | None:
    """Kruise's ``CloneSetUpdateScatterStrategy.FieldsValidation``."""
    seen: set[str] = set()
    for term in scatter or []:
        key, value = (
            (term.get("key"), term.get("value")) if isinstance(term, Mapping) else (None, None)
        )
        if not key or not value:
            return "key and value in scatterStrategy term can not be empty"
        if f"{key}:{value}" in seen:
            return f"duplicated term key {key} value {value}"
        seen.add(f"{key}:{value}")
    return None


def _update_strategy_errors(strategy: Mapping[str, Any], replicas: int) -> list[webhook.FieldError]:
    """Kruise's ``validateUpdateStrategy`` (an absent maxUnavailable is the default 20%, as the
    defaulting webhook sets it), and apps/v1's ``IsNotMoreThan100Percent`` for ``partition``
    and ``maxUnavailable`` (a percentage above 100% names more pods than the set has)."""
    errors: list[webhook.FieldError] = []
    path = "spec.updateStrategy"
    kind = strategy.get("type") or RECREATE
    if kind not in _TYPES:
        errors.append(
            webhook.FieldError.invalid(
                f"{path}.type",
                kind,
                f"must be '{RECREATE}', {IN_PLACE_IF_POSSIBLE} or '{IN_PLACE_ONLY}'",
            )
        )
    scaled: dict[str, int] = {}
    for key in ("partition", "maxUnavailable", "maxSurge"):
        raw = strategy.get(key)
        if raw is None:
            continue
        value = _scaled(raw, replicas)
        why = int_or_percent_error(raw) or (over_100_percent(raw) if key != "maxSurge" else None)
        if value is None or why is not None:
            detail = why or "must be an integer or percentage (e.g '5%')"
            errors.append(webhook.FieldError.invalid(f"{path}.{key}", raw, detail))
        else:
            scaled[key] = value
    for key, problem in (
        ("priorityStrategy", priority_strategy_error(strategy.get("priorityStrategy"))),
        ("scatterStrategy", _scatter_error(strategy.get("scatterStrategy"))),
    ):
        if problem is not None:
            errors.append(webhook.FieldError.required(f"{path}.{key}", problem))
    surge = scaled.get("maxSurge", 0)
    if kind == IN_PLACE_ONLY and surge > 0:
        errors.append(
            webhook.FieldError.invalid(
                f"{path}.maxSurge",
                strategy.get("maxSurge"),
                "can not use maxSurge with strategy type InPlaceOnly",
            )
        )
    unavailable = scaled.get("maxUnavailable", 1 if strategy.get("maxUnavailable") is None else 0)
    if replicas > 0 and unavailable < 1 and surge < 1 and "maxUnavailable" in scaled:
        errors.append(
            webhook.FieldError.invalid(
                f"{path}.maxUnavailable",
                strategy.get("maxUnavailable"),
                "maxUnavailable and maxSurge should not both be less than 1",
            )
        )
    return errors


def spec_errors(cs: Any, old: Any = None) -> list[webhook.FieldError]:
    """Every problem of CloneSet ``cs``'s spec, with its field path, as OpenKruise's
    ``validateCloneSetSpec`` (and, given the stored ``old`` set of an update,
    ``validateCloneSetUpdate``) finds them; the template and claim-template shapes first
    (nothing else can be read from a template of the wrong shape). Empty when valid."""
    spec = meta.spec(cs)
    problems = template_problems(spec)
    if problems:
        return [webhook.FieldError.parse(problem) for problem in problems]
    errors: list[webhook.FieldError] = []
    if old is not None:
        old_spec = meta.spec(old)
        fixed = sorted(
            k
            for k in set(spec) | set(old_spec)
            if k not in UPDATABLE and spec.get(k) != old_spec.get(k)
        )
        if "selector" in fixed:
            errors.append(
                webhook.FieldError.forbidden("spec.selector", "selector is immutable in a CloneSet")
            )
        if [k for k in fixed if k != "selector"]:
            errors.append(
                webhook.FieldError.forbidden(
                    "spec",
                    "updates to cloneset spec for fields other than "
                    + ", ".join(f"'{k}'" for k in sorted(UPDATABLE))
                    + " are forbidden",
                )
            )
    replicas = spec.get("replicas", 1)
    replicas = replicas if isinstance(replicas, int) else 1
    for key in ("replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        _nonnegative(errors, spec, key)
    errors += _selector_errors(spec)
    errors += pod_template_errors(spec, "cloneset")
    scale = _mapping(spec.get("scaleStrategy"))
    names = scale.get("podsToDelete") or []
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        errors.append(
            webhook.FieldError.invalid(
                "spec.scaleStrategy.podsToDelete", names, f"duplicated items {duplicated}"
            )
        )
    for i, name in enumerate(names):
        if not name:
            errors.append(
                webhook.FieldError.invalid(
                    f"spec.scaleStrategy.podsToDelete[{i}]", name, "a pod name is required"
                )
            )
    if scale.get("maxUnavailable") is not None:
        error = int_or_percent_error(scale["maxUnavailable"])
        if error is not None:
            errors.append(
                webhook.FieldError.invalid(
                    "spec.scaleStrategy.maxUnavailable", scale["maxUnavailable"], error
                )
            )
    errors += _update_strategy_errors(_mapping(spec.get("updateStrategy")), replicas)
    errors += _lifecycle_errors(_mapping(spec.get("lifecycle")))
    return errors


def _lifecycle_errors(lifecycle: Mapping[str, Any]) -> list[webhook.FieldError]:
    """A hook's finalizer that no pod could carry (not a qualified name): its owner could
    never mark the hook done and the set would wait for it forever."""
    errors: list[webhook.FieldError] = []
    for hook in ("preDelete", "preNormal", "inPlaceUpdate"):
        names = _mapping(lifecycle.get(hook)).get("finalizersHandler") or []
        for i, name in enumerate(names if isinstance(names, list) else []):
            problems = qualified_name_errors(name) if isinstance(name, str) else ("not a string",)
            if problems:
                errors.append(
                    webhook.FieldError.invalid(
                        f"spec.lifecycle.{hook}.finalizersHandler[{i}]", name, "; ".join(problems)
                    )
                )
    return errors


def pods_to_delete_errors(reader: Reader, cs: Any, old: Any = None) -> list[webhook.FieldError]:
    """Kruise's ``validateScaleStrategy`` reads: each pod newly named in
    ``scaleStrategy.podsToDelete`` (not in ``old``'s list) must exist, not be terminating and
    be controlled by this CloneSet (so a set being created may name none)."""
    names = _mapping(meta.spec(cs).get("scaleStrategy")).get("podsToDelete") or []
    before = (
        set(_mapping(meta.spec(old).get("scaleStrategy")).get("podsToDelete") or [])
        if old
        else set()
    )
    path = "spec.scaleStrategy.podsToDelete"
    errors: list[webhook.FieldError] = []
    namespace = meta.namespace(cs)
    for name in sorted({n for n in names if isinstance(n, str) and n} - before):
        try:
            pod = reader.get(Pod, name, namespace)
        except NotFound as err:
            errors.append(webhook.FieldError.invalid(path, name, f"find pod {name} failed: {err}"))
            continue
        owner = meta.controller_ref(pod)
        if meta.is_deleting(pod):
            errors.append(
                webhook.FieldError.invalid(path, name, f"find pod {name} already terminating")
            )
        elif owner is None or owner.get("uid") != meta.uid(cs):
            errors.append(
                webhook.FieldError.invalid(
                    path, name, f"find pod {name} owner is not this CloneSet"
                )
            )
    return errors


class CloneSetValidator(webhook.Validator):
    """Refuses what :func:`spec_errors` finds (with the field paths), given a ``reader`` the
    pods ``scaleStrategy.podsToDelete`` newly names that are not this set's
    (:func:`pods_to_delete_errors`), and then what :func:`~controllers.cloneset.core.validate`
    refuses; on updates also changes to fields Kruise keeps fixed (:data:`UPDATABLE` lists the
    others)."""

    def __init__(self, reader: Reader | None = None) -> None:
        self.reader = reader

    def _check(self, obj: Any, old: Any = None) -> None:
        errors = spec_errors(obj, old)
        if not errors and self.reader is not None:
            errors = pods_to_delete_errors(self.reader, obj, old)
        if errors:
            raise webhook.Invalid(errors=errors)
        try:
            validate(dict(obj) if isinstance(obj, dict) else obj)
        except InvalidSpecError as err:
            raise webhook.Denied(f"invalid CloneSet spec: {err}") from None

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        self._check(obj)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        self._check(new, old)


def set_defaults(obj: Mapping[str, Any], request: Any = None) -> dict[str, Any]:
    """A copy of CloneSet ``obj`` with OpenKruise's defaults (``SetDefaultsCloneSet`` in
    ``apis/apps/defaults``): ``replicas`` 1, ``revisionHistoryLimit`` 10,
    ``updateStrategy.type`` ReCreate (an in-place type gets an empty
    ``inPlaceUpdateStrategy``), ``partition`` 0, ``maxUnavailable`` 20%, ``maxSurge`` 0. The pod
    template's defaults (Kruise's ``SetDefaultPodSpec``) are left to the API server, which
    sets them on the pods. ``request`` is the admission request (unused)."""
    result = copy.deepcopy(dict(obj))
    spec = result.setdefault("spec", {})
    if not isinstance(spec, dict):
        return result
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    strategy = spec.get("updateStrategy")
    if strategy is None:
        strategy = spec["updateStrategy"] = {}
    if not isinstance(strategy, dict):
        return result
    if not strategy.get("type"):
        strategy["type"] = RECREATE
    elif (
        strategy["type"] in (IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)
        and strategy.get("inPlaceUpdateStrategy") is None
    ):
        strategy["inPlaceUpdateStrategy"] = {}
    for key, value in (
        ("partition", 0),
        ("maxUnavailable", DEFAULT_MAX_UNAVAILABLE),
        ("maxSurge", 0),
    ):
        if strategy.get(key) is None:
            strategy[key] = value
    return result


def setup_webhooks(manager: Manager) -> None:
    """Serve :func:`set_defaults` and :class:`CloneSetValidator` (reading pods with the
    manager's API reader) from ``manager``'s webhook server."""
    (
        webhook.for_kind(manager, CLONESET, resource=RESOURCE)
        .defaulter(set_defaults)
        .validator(CloneSetValidator(manager.api_reader))
    )
