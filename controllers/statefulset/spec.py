"""The part of a set's spec one sync acts on, read once and checked: :class:`StatefulSetView`,
the set's :class:`~kube_runtime.workloads.specview.SpecView` (the reconciler keeps one per set
generation in a :class:`~kube_runtime.workloads.specview.SpecViews`).

``StatefulSetView.of(sts)`` reads replicas, ordinals (``ordinals.start``, the enhanced kind's
``reserveOrdinals``), the pod management policy, the update strategy, the history limit and
the enhanced kind's ``lifecycle`` hooks and ``scaleStrategy.maxUnavailable``.
The ``rollingUpdate`` block goes through the model generated from the enhanced kind's CRD
(:class:`~controllers.statefulset.models.StatefulSetSpecUpdateStrategyRollingUpdate`): it has
Kruise's fields (``podUpdatePolicy``, ``paused``, ``unorderedUpdate``,
``inPlaceUpdateStrategy``, ``minReadySeconds``) besides apps/v1's ``partition`` and
``maxUnavailable``, so one model reads both kinds; an apps/v1 set never carries the others and
gets the apps/v1 behaviour (RollingUpdate by recreation, never paused, ordered).

Only that block is validated, once per sync: 3.5 us for apps/v1's ``{"partition": 0}``, 6 us
for a full Kruise block, against 36 us for the whole object's model, which would also reject
objects that lack its required fields. Pods are never validated: per-pod reads stay dict reads.

A spec the algorithm cannot act on (a ``rollingUpdate`` the model rejects, a malformed
``reserveOrdinals`` entry or ``maxUnavailable``) raises :class:`InvalidSpecError` naming the
field; the reconciler reports it (a Warning event and the ``InvalidSpec`` status condition) and
does not retry until the spec changes. The API server's validation keeps such specs out of
apps/v1; the enhanced kind's CRD schema checks types, not these formats.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from controllers.statefulset.models import StatefulSetSpecUpdateStrategyRollingUpdate
from kube_runtime import meta
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.workloads.intstr import int_or_percent_error, scaled_value
from kube_runtime.workloads.specview import InvalidSpecError, SpecView
from kube_runtime.workloads.templates import template_problems

__all__ = [
    "DEFAULT_REVISION_HISTORY_LIMIT",
    "IN_PLACE_IF_POSSIBLE",
    "IN_PLACE_ONLY",
    "RECREATE",
    "InvalidSpecError",
    "RollingUpdate",
    "StatefulSetView",
    "ordinals_for",
    "over_100_percent",
    "parse_reserved_ordinals",
    "spec_field_errors",
]

RollingUpdate = StatefulSetSpecUpdateStrategyRollingUpdate
"""``spec.updateStrategy.rollingUpdate`` of either kind (the enhanced kind's generated model)."""

DEFAULT_REVISION_HISTORY_LIMIT = 10
RECREATE = "ReCreate"
IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
IN_PLACE_ONLY = "InPlaceOnly"

_ROLLING_PATH = "spec.updateStrategy.rollingUpdate"
_NO_ROLLING_UPDATE = RollingUpdate()


def parse_reserved_ordinals(entries: Iterable[Any] | None) -> frozenset[int]:
    """``reserveOrdinals`` entries (ints, ``"n"`` and inclusive ``"a-b"`` ranges) as ordinals;
    ``ValueError`` for a malformed entry or an empty range."""
    reserved: set[int] = set()
    for entry in entries or ():
        if isinstance(entry, int):
            reserved.add(entry)
            continue
        low, sep, high = str(entry).partition("-")
        if not sep:
            reserved.add(int(low))
            continue
        first, last = int(low), int(high)
        if first > last:
            raise ValueError(f"reserveOrdinals: empty range {entry!r}")
        reserved.update(range(first, last + 1))
    return frozenset(reserved)


def ordinals_for(start: int, count: int, reserved: frozenset[int]) -> list[int]:
    """``count`` ordinals from ``start`` on, ascending, skipping the ``reserved`` ones."""
    ordinals: list[int] = []
    ordinal = start
    while len(ordinals) < count:
        if ordinal not in reserved:
            ordinals.append(ordinal)
        ordinal += 1
    return ordinals


def _rolling_update(raw: Any) -> RollingUpdate:
    if raw is None:
        return _NO_ROLLING_UPDATE
    try:
        return RollingUpdate.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join([_ROLLING_PATH, *map(str, e['loc'])])}: {e['msg']}" for e in err.errors()
        )
        raise InvalidSpecError(problems) from None


_POD_MANAGEMENT = ("OrderedReady", "Parallel")
_UPDATE_TYPES = ("RollingUpdate", "OnDelete")
_POD_UPDATE_POLICIES = (RECREATE, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)
_RETENTION = ("Delete", "Retain")


def _nonnegative(path: str, value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return f"{path}: Invalid value: {value}: must be greater than or equal to 0"
    return None


def over_100_percent(path: str, value: Any) -> str | None:
    """apps/v1's ``IsNotMoreThan100Percent`` for ``value`` at ``path``: a percentage above
    100% names more pods than the set has (a well-formed one; None otherwise)."""
    well_formed = isinstance(value, str) and value.endswith("%") and value[:-1].isdigit()
    if well_formed and int(value[:-1]) > 100:
        return f"{path}: Invalid value: {value!r}: must not be greater than 100%"
    return None


def _one_of(path: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    if value is None or value == "" or value in allowed:
        return None
    supported = ", ".join(f"{a!r}" for a in allowed)
    return f"{path}: Unsupported value: {value!r}: supported values: {supported}"


def spec_field_errors(spec: Mapping[str, Any]) -> list[str]:
    """What OpenKruise's validating webhook (and apps/v1 validation) rejects in a set's spec
    that the CRD's schema lets through: negative counts (``inPlaceUpdateStrategy.
    gracePeriodSeconds`` among them), unknown enum values, malformed or negative
    int-or-percent values, a ``maxUnavailable`` that rounds to 0 or is above 100%. One
    message per field, with its path; empty when the spec's values are acceptable. (The selector is
    checked by the reconciler, the template's shape by :func:`template_problems`.)"""
    strategy = spec.get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate") or {}
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    found = [
        _nonnegative("spec.replicas", spec.get("replicas")),
        _nonnegative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit")),
        _nonnegative("spec.minReadySeconds", spec.get("minReadySeconds")),
        _nonnegative("spec.ordinals.start", (spec.get("ordinals") or {}).get("start")),
        _one_of("spec.podManagementPolicy", spec.get("podManagementPolicy"), _POD_MANAGEMENT),
        _one_of("spec.updateStrategy.type", strategy.get("type"), _UPDATE_TYPES),
        _nonnegative(f"{_ROLLING_PATH}.partition", rolling.get("partition")),
        _nonnegative(f"{_ROLLING_PATH}.minReadySeconds", rolling.get("minReadySeconds")),
        _nonnegative(
            f"{_ROLLING_PATH}.inPlaceUpdateStrategy.gracePeriodSeconds",
            (rolling.get("inPlaceUpdateStrategy") or {}).get("gracePeriodSeconds")
            if isinstance(rolling.get("inPlaceUpdateStrategy"), Mapping)
            else None,
        ),
        over_100_percent(f"{_ROLLING_PATH}.maxUnavailable", rolling.get("maxUnavailable")),
        over_100_percent(f"{_ROLLING_PATH}.partition", rolling.get("partition")),
        _one_of(
            f"{_ROLLING_PATH}.podUpdatePolicy", rolling.get("podUpdatePolicy"), _POD_UPDATE_POLICIES
        ),
        _one_of(
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
            retention.get("whenDeleted"),
            _RETENTION,
        ),
        _one_of(
            "spec.persistentVolumeClaimRetentionPolicy.whenScaled",
            retention.get("whenScaled"),
            _RETENTION,
        ),
    ]
    for path, value in (
        (f"{_ROLLING_PATH}.maxUnavailable", rolling.get("maxUnavailable")),
        (
            "spec.scaleStrategy.maxUnavailable",
            (spec.get("scaleStrategy") or {}).get("maxUnavailable"),
        ),
    ):
        if value is None:
            continue
        error = int_or_percent_error(value)
        if error is None and path.startswith(_ROLLING_PATH) and scaled_value(value, 1, True) < 1:
            error = f"Invalid value: {value!r}: must not round to 0 (at least one pod at a time)"
        found.append(None if error is None else f"{path}: {error}")
    found.append(_selector_problem(spec))
    try:
        parse_reserved_ordinals(spec.get("reserveOrdinals"))
    except (ValueError, TypeError) as err:
        found.append(f"spec.reserveOrdinals: Invalid value: {err}")
    return [e for e in found if e is not None]


def _selector_problem(spec: Mapping[str, Any]) -> str | None:
    """apps/v1's selector rules: not empty, well formed, and matching the template's
    labels."""
    if "selector" not in spec:
        return None  # required by the schema (and the reconciler reports a missing one)
    raw = spec.get("selector")
    if not raw:
        return "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"
    try:
        selector = label_selector_from_dict(raw)
    except ValueError as err:
        return f"spec.selector: Invalid value: {err}"
    template = spec.get("template")
    if not isinstance(template, Mapping):
        return None
    labels = (template.get("metadata") or {}).get("labels") or {}
    if selector.matches_nothing() or selector.matches(labels):
        return None
    return (
        f"spec.template.metadata.labels: Invalid value: {dict(labels)!r}: "
        "`selector` does not match template `labels`"
    )


@dataclasses.dataclass(slots=True)
class StatefulSetView(SpecView):
    """What one sync reads of a set's spec (see the module docstring). Read-only by
    convention: not frozen, because a frozen dataclass takes 5 us to build, this 1.5 us.
    It holds no object: a cached view serves every copy of the set's generation as is."""

    replicas: int
    """``spec.replicas`` (the API defaults it to 1)."""
    start: int
    """``spec.ordinals.start`` (0 when unset)."""
    ordinals: tuple[int, ...]
    """The replicas' ordinals, ascending: ``replicas`` ordinals from ``start`` on, skipping
    ``reserveOrdinals``; empty during an ordered teardown."""
    teardown: bool
    """An ordered teardown: the set is being deleted and keeps its pods' order (no replicas,
    no rolling update; see :func:`~controllers.statefulset.utils.in_ordered_teardown`)."""
    parallel: bool
    """``podManagementPolicy: Parallel``."""
    strategy: str | None
    """``updateStrategy.type``: ``RollingUpdate`` (when absent) or ``OnDelete``."""
    partition: int
    """``rollingUpdate.partition`` (0 when unset): under ``unorderedUpdate`` the number of
    pods kept at the old revision, else the lowest ordinal (from ``start``) to update."""
    max_unavailable: int
    """``rollingUpdate.maxUnavailable`` scaled against the replicas (rounded down), at least 1
    (upstream ``getStatefulSetMaxUnavailable``)."""
    min_ready_seconds: float
    """``spec.minReadySeconds`` (apps/v1), else ``rollingUpdate.minReadySeconds`` (Kruise)."""
    revision_history_limit: int
    """``spec.revisionHistoryLimit`` (default 10)."""
    paused: bool = False
    """``rollingUpdate.paused``: the rolling update stops (creation and scaling go on)."""
    pod_update_policy: str = RECREATE
    """``rollingUpdate.podUpdatePolicy``: :data:`RECREATE`, :data:`IN_PLACE_IF_POSSIBLE` or
    :data:`IN_PLACE_ONLY`."""
    unordered: bool = False
    """``rollingUpdate.unorderedUpdate`` is set: pods update in priority order."""
    priority_strategy: Mapping[str, Any] | None = None
    """``unorderedUpdate.priorityStrategy`` as JSON (what ``priority_sort`` reads)."""
    grace_period_seconds: int = 0
    """``rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds``."""
    resize_claims: bool = False
    """``volumeClaimUpdateStrategy.type: OnPodRollingUpdate`` (Kruise): the rolling update
    expands the pods' claims (:mod:`controllers.statefulset.resize`)."""
    lifecycle: bool = False
    """``spec.lifecycle`` is present (even empty: Kruise tests the pointer, which decides
    whether an in-place-updated pod passes through ``Updated``)."""
    pre_delete: Mapping[str, Any] | None = None
    """``lifecycle.preDelete`` as JSON (``finalizersHandler``, ``labelsHandler``,
    ``markPodNotReady``), what :mod:`kube_runtime.workloads.lifecycle` reads."""
    pre_normal: Mapping[str, Any] | None = None
    """``lifecycle.preNormal`` as JSON."""
    in_place_update_hook: Mapping[str, Any] | None = None
    """``lifecycle.inPlaceUpdate`` as JSON."""
    scale_max_unavailable: int | None = None
    """``scaleStrategy.maxUnavailable`` scaled against the replicas (rounded down), at least 1;
    None when unset (Kruise ``getScaleMaxUnavailable``): how many replicas may be missing or
    unavailable while the replicas are processed (creations, failed and terminating pods)."""

    @classmethod
    def of(cls, sts: Mapping[str, Any], *, teardown: bool = False) -> StatefulSetView:
        """Read ``sts``'s spec; :class:`InvalidSpecError` when it cannot be acted on.

        ``teardown`` (an ordered teardown: no replicas, no rolling update) skips what such a
        pass does not use (ordinals, ``maxUnavailable``), so a malformed value there does not
        hold up the set's deletion.
        """
        spec = meta.spec(sts)
        problems = template_problems(spec)
        if not problems and not teardown:
            problems = spec_field_errors(spec)
        if problems:
            raise InvalidSpecError("; ".join(problems))
        strategy = spec.get("updateStrategy") or {}
        raw_rolling = strategy.get("rollingUpdate")
        if teardown and isinstance(raw_rolling, Mapping):  # not used: may be malformed
            raw_rolling = {k: v for k, v in raw_rolling.items() if k != "maxUnavailable"}
        rolling = _rolling_update(raw_rolling)
        replicas_value = spec.get("replicas")
        replicas = 1 if replicas_value is None else int(replicas_value)
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        ordinals: tuple[int, ...] = ()
        max_unavailable = 1
        scale_max_unavailable: int | None = None
        if not teardown:
            try:
                reserved = parse_reserved_ordinals(spec.get("reserveOrdinals"))
            except ValueError as err:
                raise InvalidSpecError(f"spec.reserveOrdinals: {err}") from None
            ordinals = tuple(ordinals_for(start, replicas, reserved))
            value = rolling.max_unavailable
            try:
                scaled = scaled_value(1 if value is None else value, replicas, False)
            except ValueError as err:
                raise InvalidSpecError(f"{_ROLLING_PATH}.maxUnavailable: {err}") from None
            max_unavailable = max(scaled, 1)
            scale_value = (spec.get("scaleStrategy") or {}).get("maxUnavailable")
            if scale_value is not None:
                try:
                    scaled = scaled_value(scale_value, replicas, False)
                except ValueError as err:
                    raise InvalidSpecError(f"spec.scaleStrategy.maxUnavailable: {err}") from None
                scale_max_unavailable = max(scaled, 1)
        unordered = rolling.unordered_update
        priority = unordered.priority_strategy if unordered is not None else None
        in_place = rolling.in_place_update_strategy
        history = spec.get("revisionHistoryLimit")
        hooks = spec.get("lifecycle")
        hooks_of = hooks if isinstance(hooks, Mapping) else {}
        return cls(
            replicas=replicas,
            start=start,
            ordinals=ordinals,
            teardown=teardown,
            parallel=spec.get("podManagementPolicy") == "Parallel",
            strategy=strategy.get("type", "RollingUpdate"),
            partition=int(rolling.partition or 0),
            max_unavailable=max_unavailable,
            min_ready_seconds=float(spec.get("minReadySeconds") or rolling.min_ready_seconds or 0),
            revision_history_limit=(
                DEFAULT_REVISION_HISTORY_LIMIT if history is None else int(history)
            ),
            paused=bool(rolling.paused),
            pod_update_policy=str(rolling.pod_update_policy or RECREATE),
            unordered=unordered is not None,
            priority_strategy=(
                priority.model_dump(by_alias=True, exclude_none=True) if priority else None
            ),
            grace_period_seconds=int(
                (in_place.grace_period_seconds if in_place is not None else None) or 0
            ),
            resize_claims=(spec.get("volumeClaimUpdateStrategy") or {}).get("type")
            == "OnPodRollingUpdate",
            lifecycle=hooks is not None,
            pre_delete=hooks_of.get("preDelete"),
            pre_normal=hooks_of.get("preNormal"),
            in_place_update_hook=hooks_of.get("inPlaceUpdate"),
            scale_max_unavailable=scale_max_unavailable,
        )
