"""Status conditions with apimachinery's semantics (``k8s.io/apimachinery/pkg/api/meta/conditions.go``).

A condition is a dict in the ``metav1.Condition`` shape: ``type``, ``status`` (``"True"``,
``"False"`` or ``"Unknown"``), ``lastTransitionTime`` (RFC 3339), ``reason``, ``message`` and
optionally ``observedGeneration``. The list functions take ``status.conditions`` as a list of
such dicts; a condition's identity is its ``type``.

Contract of :func:`set_status_condition`, the function the others build on:

* A condition of a new type is appended; its ``lastTransitionTime`` is the one given, or now.
* For an existing type, ``lastTransitionTime`` moves only when ``status`` changes (to the
  given time, or now); ``reason``, ``message``, ``observedGeneration`` (and any other key the
  new condition carries) are brought in line without touching it. A key the new condition
  leaves out is removed from the stored one, as Go's zero values are (a missing ``reason``
  equals ``""``, a missing ``observedGeneration`` equals ``0``).
* The return value says whether anything changed, so a reconciler writes status only then.
* The list is changed in place, but the condition dicts in it are never modified: a changed
  condition is replaced by a new dict. A shallow copy (``list(cached["status"]["conditions"])``)
  of a cached object's list is therefore safe to pass.

"Now" is the current clock's (:func:`kube_runtime.clock.current`) unless a ``now`` is given: a
datetime, a :class:`kube_runtime.clock.Clock` (its ``now()``), or a function returning a
datetime. Times are written in UTC with whole seconds
(``2024-01-31T12:00:00Z``), as ``metav1.Time`` serializes. A naive datetime is taken as UTC.

:func:`set_condition` is the convenience for a whole object: it sets one condition in
``obj["status"]["conditions"]`` (creating both when missing), for dicts and typed models. It
writes ``metav1.Condition``s and checks them as a CRD with controller-gen's (and
:class:`kube_runtime.models.Condition`'s) schema does, so a condition it wrote is never refused
by the API server: the ``type`` a qualified name (``Ready``, ``example.com/Ready``, at most 316
characters), the ``reason`` a non-empty CamelCase identifier (``^[A-Za-z]([A-Za-z0-9_,:]*
[A-Za-z0-9_])?$``, at most 1024), the ``message`` at most 32768 characters (empty is fine),
``observed_generation`` not negative; anything else is a ``ValueError`` naming the field.
apimachinery's ``meta.SetStatusCondition`` checks nothing and leaves it to the server's 422;
its callers (kubebuilder's scaffolding) always pass a reason, so there is no default reason
here either. :func:`set_status_condition` checks only ``type`` and ``status``: it also serves
other condition types (``apps/v1``'s), whose reason may be empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from datetime import datetime, timezone
from functools import cache
from typing import Any, TypeAlias, get_args

from pydantic import BaseModel

from kube_runtime import clock

__all__ = [
    "Clock",
    "find_status_condition",
    "format_time",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "remove_status_condition",
    "set_condition",
    "set_failure_condition",
    "set_status_condition",
]

Clock = Callable[[], datetime]
"""A function returning the current time (injected by tests)."""

Now: TypeAlias = datetime | clock.Clock | Clock | None
"""When "now" is: a fixed time, a :class:`kube_runtime.clock.Clock`, a function returning a
datetime, or None for the current clock's time."""

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"

# Keys compared as Go compares a metav1.Condition's fields: a missing key equals the zero value.
_ZERO: dict[str, Any] = {"reason": "", "message": "", "observedGeneration": 0}


@cache
def _metav1_rules() -> tuple[re.Pattern[str], int, re.Pattern[str], int, int]:
    """The metav1.Condition schema's type pattern and length, reason pattern and length, and
    message length: :mod:`kube_runtime.models`' constants, imported on the first check (the
    models package builds pydantic models, ~50 ms of CPU at import, which a controller that
    only sets ``apps/v1`` conditions never needs)."""
    from kube_runtime.models import _meta

    return (
        re.compile(_meta.CONDITION_TYPE_PATTERN),
        _meta.CONDITION_TYPE_MAX_LENGTH,
        re.compile(_meta.CONDITION_REASON_PATTERN),
        _meta.CONDITION_REASON_MAX_LENGTH,
        _meta.CONDITION_MESSAGE_MAX_LENGTH,
    )


def _check_metav1(
    condition_type: str, status: str, reason: str, message: str, generation: int | None
) -> None:
    """Refuse, with the field and the rule, what a metav1.Condition schema refuses."""
    type_pattern, type_max, reason_pattern, reason_max, message_max = _metav1_rules()
    problems = []
    if len(condition_type) > type_max or not type_pattern.fullmatch(condition_type):
        problems.append(
            f"type {condition_type!r} must be a qualified name (CamelCase or "
            f"example.com/CamelCase) of at most {type_max} characters"
        )
    if status not in (TRUE, FALSE, UNKNOWN):
        problems.append(f"status {status!r} must be True, False or Unknown")
    if len(reason) > reason_max or not reason_pattern.fullmatch(reason):
        problems.append(
            f"reason {reason!r} must be a non-empty CamelCase identifier (letters, digits, "
            f"'_', ',' and ':', starting with a letter) of at most {reason_max} characters"
        )
    if len(message) > message_max:
        problems.append(f"message must have at most {message_max} characters")
    if generation is not None and generation < 0:
        problems.append(f"observed_generation {generation} must not be negative")
    if problems:
        raise ValueError("invalid condition: " + "; ".join(problems))


def format_time(moment: datetime) -> str:
    """``moment`` as a ``metav1.Time`` string: UTC, whole seconds, ``Z`` (naive means UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now(now: Now) -> str:
    if now is None:
        return format_time(clock.current().now())
    if isinstance(now, datetime):
        return format_time(now)
    reader = getattr(now, "now", None)  # a kube_runtime.clock.Clock
    if reader is not None:
        return format_time(reader())
    return format_time(now())  # type: ignore[operator]


def _as_condition(new: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    if isinstance(new, BaseModel):
        data = new.model_dump(mode="json", by_alias=True, exclude_none=True)
    else:
        data = {k: v for k, v in new.items() if v is not None}
    if not data.get("type") or not data.get("status"):
        raise ValueError(f"a condition needs a type and a status: {data!r}")
    return data


def _value(condition: Mapping[str, Any], key: str) -> Any:
    value = condition.get(key)
    return _ZERO.get(key) if value is None else value


def find_status_condition(
    conditions: Iterable[Mapping[str, Any]] | None, condition_type: str
) -> Mapping[str, Any] | None:
    """The condition of ``condition_type`` in ``conditions`` (the element itself), or None."""
    for condition in conditions or ():
        if condition.get("type") == condition_type:
            return condition
    return None


def set_status_condition(
    conditions: list[dict[str, Any]],
    new: Mapping[str, Any] | BaseModel,
    *,
    now: Now = None,
) -> bool:
    """Set ``new`` in ``conditions`` (in place) with apimachinery's rules; True if it changed.

    See the module docstring: ``lastTransitionTime`` moves only when ``status`` changes.
    ``new`` is a dict or a model (``kube_runtime.models.Condition``); None values count as
    missing. Raises ``ValueError`` when ``new`` has no ``type`` or ``status``.
    """
    wanted = _as_condition(new)
    given_time = wanted.pop("lastTransitionTime", None)
    for index, existing in enumerate(conditions):
        if existing.get("type") != wanted["type"]:
            continue
        updated = dict(existing)
        changed = False
        if existing.get("status") != wanted["status"]:
            updated["status"] = wanted["status"]
            updated["lastTransitionTime"] = given_time or _now(now)
            changed = True
        for key in (set(wanted) | set(existing)) - {"type", "status", "lastTransitionTime"}:
            if key not in wanted and key not in _ZERO:
                continue  # a key outside metav1.Condition stays unless the new one sets it
            if _value(existing, key) != _value(wanted, key):
                changed = True
                if key in wanted:
                    updated[key] = wanted[key]
                else:
                    updated.pop(key, None)
        if changed:
            conditions[index] = updated
        return changed
    wanted["lastTransitionTime"] = given_time or _now(now)
    conditions.append(wanted)
    return True


def remove_status_condition(conditions: list[dict[str, Any]], condition_type: str) -> bool:
    """Remove the condition of ``condition_type`` from ``conditions`` (in place); True if
    there was one."""
    kept = [c for c in conditions if c.get("type") != condition_type]
    if len(kept) == len(conditions):
        return False
    conditions[:] = kept
    return True


def is_status_condition_present_and_equal(
    conditions: Iterable[Mapping[str, Any]] | None, condition_type: str, status: str
) -> bool:
    """Whether a condition of ``condition_type`` exists with exactly this ``status``."""
    condition = find_status_condition(conditions, condition_type)
    return condition is not None and condition.get("status") == status


def is_status_condition_true(
    conditions: Iterable[Mapping[str, Any]] | None, condition_type: str
) -> bool:
    """Whether the condition of ``condition_type`` is present with status ``"True"``."""
    return is_status_condition_present_and_equal(conditions, condition_type, TRUE)


def is_status_condition_false(
    conditions: Iterable[Mapping[str, Any]] | None, condition_type: str
) -> bool:
    """Whether the condition of ``condition_type`` is present with status ``"False"``
    (absent is neither true nor false)."""
    return is_status_condition_present_and_equal(conditions, condition_type, FALSE)


def set_failure_condition(
    conditions: list[dict[str, Any]],
    condition_type: str,
    failure: tuple[str, str] | None,
    *,
    remove_on_success: bool = False,
    now: Now = None,
) -> bool:
    """Report a failure of ``condition_type`` in ``conditions`` (in place), as the workload
    controllers do with ``FailedCreatePod``, ``FailedScale``, ...: with ``failure = (reason,
    message)`` the condition is True with that reason and message; with None it is removed
    (``remove_on_success``, kruise's ``RemoveCloneSetCondition``) or, only where it is True,
    turned False with reason ``Succeeded``. :func:`set_status_condition`'s rules apply
    (``lastTransitionTime`` moves only when the status does). True if anything changed."""
    if failure is not None:
        reason, message = failure
        new = {"type": condition_type, "status": TRUE, "reason": reason, "message": message}
        return set_status_condition(conditions, new, now=now)
    if remove_on_success:
        return remove_status_condition(conditions, condition_type)
    if not is_status_condition_true(conditions, condition_type):
        return False
    new = {"type": condition_type, "status": FALSE, "reason": "Succeeded"}
    return set_status_condition(conditions, new, now=now)


def set_condition(
    obj: MutableMapping[str, Any] | BaseModel,
    condition_type: str,
    status: str | bool,
    reason: str,
    message: str = "",
    *,
    observed_generation: int | None = None,
    now: Now = None,
) -> bool:
    """Set one condition on ``obj``'s ``status.conditions``; True if it changed.

    ``status`` is ``"True"``/``"False"``/``"Unknown"``, or a bool. ``obj`` is a dict (its
    ``status`` and ``status.conditions`` are created when missing and the list is replaced by
    a new one, so the object's previous list is not modified) or a typed model (its
    ``status`` is rebuilt through the status model when something changed; a model whose
    ``status`` is None gets one only if the status model validates with just conditions).
    The object itself is modified: never pass an object handed out by the cache, copy it.
    Rules as :func:`set_status_condition`. A condition a ``metav1.Condition`` schema would
    refuse (an empty or non-CamelCase ``reason``, a malformed ``type``, ...) raises
    ``ValueError`` naming the field, before anything changes (see the module docstring).
    """
    if isinstance(status, bool):
        status = TRUE if status else FALSE
    _check_metav1(condition_type, status, reason, message, observed_generation)
    new: dict[str, Any] = {
        "type": condition_type,
        "status": status,
        "reason": reason,
        "message": message,
    }
    if observed_generation is not None:
        new["observedGeneration"] = observed_generation
    if isinstance(obj, BaseModel):
        return _set_on_model(obj, new, now)
    current = obj.get("status")
    status_map: MutableMapping[str, Any] = current if isinstance(current, MutableMapping) else {}
    conditions = list(status_map.get("conditions") or ())
    changed = set_status_condition(conditions, new, now=now)
    if changed:
        status_map["conditions"] = conditions
        obj["status"] = status_map
    return changed


def _set_on_model(obj: BaseModel, new: dict[str, Any], now: Now) -> bool:
    current = getattr(obj, "status", None)
    if current is None:
        status_data: dict[str, Any] = {}
        status_class = _status_class(type(obj))
    else:
        status_data = current.model_dump(mode="json", by_alias=True, exclude_unset=True)
        status_class = type(current)
    conditions = list(status_data.get("conditions") or ())
    changed = set_status_condition(conditions, new, now=now)
    if changed:
        status_data["conditions"] = conditions
        obj.status = status_class.model_validate(status_data)  # type: ignore[attr-defined]
    return changed


def _status_class(model: type[BaseModel]) -> type[BaseModel]:
    field = model.model_fields.get("status")
    annotation = field.annotation if field is not None else None
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    raise TypeError(f"{model.__name__} has no typed status field to hold conditions")
