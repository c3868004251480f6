"""What a defaulter or validator raises to refuse a request, and the Status it becomes.

controller-runtime's handlers turn a returned error into the admission response: an error
carrying an API Status (``apierrors.APIStatus``) is answered with that Status, any other error
with ``Denied(err.Error())`` (code 403, reason ``Forbidden``). The Python spellings:

* :class:`Denied` -- ``raise Denied("replicas may not shrink")``: code 403, reason Forbidden;
* :class:`Invalid` -- ``raise Invalid("spec.replicas", "must be at least 0", value=-3)``, or
  several :class:`FieldError` at once: code 422, reason Invalid, the field causes and the
  message apimachinery's ``NewInvalid`` gives (``Greeting.example.io "hello" is invalid:
  spec.replicas: Invalid value: -3: must be at least 0``);
* any :class:`~kube_runtime.client.errors.ApiError` (for instance one a client call raised):
  its Status as it is.

Each may carry ``warnings`` for the response. Any other exception is a bug in the webhook:
the handler answers 500 (controller-runtime's recovered panic) and logs the traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "OMIT",
    "AdmissionError",
    "Denied",
    "FieldError",
    "Invalid",
    "field_errors_of",
    "go_value",
]


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Final = _Omit()
"""A :class:`FieldError` value that is not shown (apimachinery's ``omitValue``)."""

# field.ErrorType -> its canonical text (ErrorType.String()).
_TYPE_TEXT: Final = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
# Types whose body never shows the value.
_VALUELESS: Final = frozenset(
    {"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"}
)


def go_value(value: Any) -> str:
    """A bad value as ``field.Error`` prints it: strings quoted, numbers and booleans plain,
    null as ``null``, anything else as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class FieldError:
    """One field-level problem (apimachinery's ``field.Error``).

    ``type`` is the cause type (``FieldValueInvalid``, ...); ``field`` the path
    (``spec.template.spec.containers[0].image``); ``value`` the offending value or
    :data:`OMIT`. Build them with the class methods, named as apimachinery's constructors.
    """

    type: str
    field: str
    detail: str = ""
    value: Any = OMIT

    def body(self) -> str:
        """The message without the field (``ErrorBody``), as a Status cause carries it."""
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.type not in _VALUELESS and self.value is not OMIT:
            text = f"{text}: {go_value(self.value)}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    @classmethod
    def parse(cls, message: str) -> FieldError:
        """A field error from its text, ``"<field>: <type text>[: <rest>]"`` (what
        ``str(FieldError)`` gives, and the wording validation code often returns): the type
        read off the text after the field, the rest kept as the detail. Text after the field
        that names no type is an ``Invalid value`` detail."""
        field, _, body = message.partition(": ")
        for error_type, text in _TYPE_TEXT.items():
            if body == text or body.startswith(text + ": "):
                return cls(error_type, field, body[len(text) + 2 :])
        return cls("FieldValueInvalid", field, body)

    @classmethod
    def invalid(cls, field: str, value: Any, detail: str) -> FieldError:
        """A malformed value (``field.Invalid``)."""
        return cls("FieldValueInvalid", field, detail, value)

    @classmethod
    def required(cls, field: str, detail: str = "") -> FieldError:
        """A value that must be given (``field.Required``)."""
        return cls("FieldValueRequired", field, detail)

    @classmethod
    def forbidden(cls, field: str, detail: str) -> FieldError:
        """A value not permitted here (``field.Forbidden``)."""
        return cls("FieldValueForbidden", field, detail)

    @classmethod
    def not_supported(cls, field: str, value: Any, supported: Iterable[str]) -> FieldError:
        """A value outside an enumeration (``field.NotSupported``)."""
        quoted = ", ".join(json.dumps(v) for v in supported)
        return cls(
            "FieldValueNotSupported",
            field,
            f"supported values: {quoted}" if quoted else "",
            value,
        )

    @classmethod
    def duplicate(cls, field: str, value: Any) -> FieldError:
        """A value that must be unique (``field.Duplicate``)."""
        return cls("FieldValueDuplicate", field, "", value)

    @classmethod
    def too_long(cls, field: str, max_length: int) -> FieldError:
        """A value longer than allowed (``field.TooLong``)."""
        return cls("FieldValueTooLong", field, f"must have at most {max_length} bytes")

    @classmethod
    def too_many(cls, field: str, actual: int, max_items: int) -> FieldError:
        """A list with too many items (``field.TooMany``)."""
        return cls("FieldValueTooMany", field, f"must have at most {max_items} items", actual)

    @classmethod
    def not_found(cls, field: str, value: Any) -> FieldError:
        """A reference to something that does not exist (``field.NotFound``)."""
        return cls("FieldValueNotFound", field, "", value)


# pydantic error type -> the detail apimachinery's validation gives for the same constraint.
_PYDANTIC_DETAIL: Final = {
    "greater_than_equal": "must be greater than or equal to {ge}",
    "greater_than": "must be greater than {gt}",
    "less_than_equal": "must be less than or equal to {le}",
    "less_than": "must be less than {lt}",
    "string_pattern_mismatch": "must match the regex {pattern}",
    "string_too_long": "may not be longer than {max_length}",
    "string_too_short": "should be at least {min_length} chars long",
    "too_short": "should have at least {min_length} items",
    "too_long": "may not have more than {max_length} items",
}


def _is_union_tag(part: str) -> bool:
    """A location step pydantic adds for a union member (``constrained-str``,
    ``function-after[...]``, ``int``), not a field of the object."""
    return part in {"int", "str", "float", "bool", "list", "dict"} or "-" in part or "[" in part


def field_errors_of(error: ValidationError, prefix: str = "") -> list[FieldError]:
    """The :class:`FieldError` list of a pydantic ``ValidationError`` raised by a resource
    model (fields named by their wire aliases): one ``Invalid value`` per field (``Required
    value`` for a missing one, as the API server says it), at the path
    apimachinery would name (``spec.updateStrategy.maxSurge``, list items as ``[i]``), under
    ``prefix``; the constraint's detail in apimachinery's words where there is one, else
    pydantic's message. The members of a union that all failed (an int-or-string) are one
    error: the first member's broken constraint (a pattern, a minimum) where one is, else the
    first member's detail."""
    found: dict[str, FieldError] = {}
    found_constraint: dict[str, bool] = {}
    for item in error.errors():
        path = prefix
        for part in item["loc"]:
            if isinstance(part, int):
                path += f"[{part}]"
            elif not _is_union_tag(part):
                path = f"{path}.{part}" if path else part
        if path in found and (found_constraint.get(path) or item["type"] not in _PYDANTIC_DETAIL):
            continue
        found_constraint[path] = item["type"] in _PYDANTIC_DETAIL
        template = _PYDANTIC_DETAIL.get(item["type"])
        context = item.get("ctx") or {}
        try:
            detail = template.format(**context) if template else ""
        except KeyError:
            detail = ""
        if not detail:
            message = str(item["msg"])
            detail = message[:1].lower() + message[1:]
        if item["type"] == "missing":
            found[path] = FieldError.required(path)
            continue
        value = item.get("input", OMIT)
        found[path] = FieldError.invalid(path, value, detail)
    return list(found.values())


class AdmissionError(Exception):
    """Base of the refusals a defaulter or validator raises; ``warnings`` go in the answer."""

    def __init__(self, message: str, *, warnings: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.warnings: list[str] = list(warnings)

    def status(self, group: str, kind: str, name: str) -> dict[str, Any]:
        """The ``meta/v1 Status`` of the response, for an object of ``group``/``kind``."""
        raise NotImplementedError


class Denied(AdmissionError):
    """Refuse the request: code 403, reason ``Forbidden`` (controller-runtime ``Denied``)."""

    def status(self, group: str, kind: str, name: str) -> dict[str, Any]:
        """Code 403, reason Forbidden, the message as given."""
        status: dict[str, Any] = {"metadata": {}, "code": 403, "reason": "Forbidden"}
        if self.message:
            status["message"] = self.message
        return status


class Invalid(AdmissionError):
    """Refuse the request for invalid fields: code 422, reason ``Invalid``, one cause per
    field (apimachinery ``NewInvalid``).

    ``Invalid("spec.replicas", "must be at least 0", value=-3)`` names one field;
    ``Invalid(errors=[FieldError.required("spec.image"), ...])`` several. The message names
    the object's kind and name, which the handler knows: ``str(error)`` lists the fields only.
    """

    def __init__(
        self,
        field: str | None = None,
        detail: str = "",
        *,
        value: Any = OMIT,
        errors: Iterable[FieldError] = (),
        warnings: Iterable[str] = (),
    ) -> None:
        found = list(errors)
        if field is not None:
            found.insert(0, FieldError.invalid(field, value, detail))
        if not found:
            raise ValueError("Invalid needs a field or errors=[FieldError, ...]")
        self.errors: Sequence[FieldError] = tuple(found)
        super().__init__(_aggregate(self.errors), warnings=warnings)

    def status(self, group: str, kind: str, name: str) -> dict[str, Any]:
        """Code 422, reason Invalid, one cause per field, the message naming the object."""
        qualified = f"{kind}.{group}" if group else kind
        return {
            "metadata": {},
            "status": "Failure",
            "message": f"{qualified} {json.dumps(name)} is invalid: {self.message}",
            "reason": "Invalid",
            "details": {
                "name": name,
                "group": group,
                "kind": kind,
                "causes": [
                    {"reason": e.type, "message": e.body(), "field": e.field} for e in self.errors
                ],
            },
            "code": 422,
        }


def _aggregate(errors: Sequence[FieldError]) -> str:
    """utilerrors.Aggregate's text: one message alone, several in brackets (duplicates once)."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
