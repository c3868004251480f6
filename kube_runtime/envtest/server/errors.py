"""The embedded server's errors: the framework's :class:`ApiError` family, worded as kube-apiserver.

The server raises the very types the client raises (:mod:`kube_runtime.client.errors`: one
class per HTTP code and Status reason), so in-process callers (the kubelet, the garbage
collector, tests) handle an error the same whether it came through HTTP or not. An error's
``status`` is the ``meta/v1 Status`` the server answers with; :func:`response_headers` adds
``Retry-After`` when it carries ``details.retryAfterSeconds``, as kube-apiserver does.
:class:`Cause` is one field error (a ``StatusCause``), as validation reports them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kube_runtime.client.errors import STATUS_REASONS, ApiError, error_from_status

__all__ = [
    "STALE_MESSAGE",
    "ApiError",
    "Cause",
    "already_exists",
    "api_error",
    "bad_request",
    "conflict",
    "gone",
    "invalid",
    "method_not_allowed",
    "not_found",
    "response_headers",
]

#: The reason a Status gets when the raiser names none: client-go's, but a 410 is ``Expired`` (a
#: watch from a compacted resourceVersion), plus the codes only the server answers with.
_REASONS = {
    **STATUS_REASONS,
    406: "NotAcceptable",
    410: "Expired",
    415: "UnsupportedMediaType",
}

STALE_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


@dataclass(frozen=True, slots=True)
class Cause:
    """One field error, shaped like a ``metav1.StatusCause``."""

    field: str
    reason: str
    message: str


def api_error(
    code: int, message: str, reason: str | None = None, details: dict[str, Any] | None = None
) -> ApiError:
    """The typed error answering HTTP ``code`` with a Failure Status (``details`` when given)."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or _REASONS.get(code, "Unknown"),
        "code": code,
    }
    if details is not None:
        status["details"] = details
    return error_from_status(status)


def internal_failure(message: str) -> ApiError:
    """kube-apiserver's answer for an error that is no Status (a conversion webhook's
    failure, a typed-patch error of server-side apply): code 500, no reason."""
    return error_from_status(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "code": 500,
        }
    )


def response_headers(err: ApiError) -> dict[str, str]:
    """Headers of the error's answer: ``Retry-After`` from ``details.retryAfterSeconds``."""
    seconds = err.details.get("retryAfterSeconds")
    return {} if seconds is None else {"Retry-After": str(seconds)}


def _details(group: str, kind: str, name: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": kind}
    if name is not None:
        d["name"] = name
    if group:
        d["group"] = group
    return d


def _about(code: int, reason: str, message: str, resource: str, group: str, name: str) -> ApiError:
    """An error about one object; ``resource`` is the plural, plus ``.group`` outside core."""
    return api_error(code, message, reason, _details(group, resource.split(".")[0], name))


def not_found(resource: str, group: str, name: str) -> ApiError:
    """``pods "x" not found``."""
    return _about(404, "NotFound", f'{resource} "{name}" not found', resource, group, name)


def already_exists(resource: str, group: str, name: str) -> ApiError:
    message = f'{resource} "{name}" already exists'
    return _about(409, "AlreadyExists", message, resource, group, name)


def conflict(resource: str, group: str, name: str, why: str) -> ApiError:
    message = f'Operation cannot be fulfilled on {resource} "{name}": {why}'
    return _about(409, "Conflict", message, resource, group, name)


def invalid(kind: str, group: str, name: str, causes: Iterable[Cause]) -> ApiError:
    """422 Invalid naming each cause's field in the message and in ``details.causes``."""
    cause_list = [{"reason": c.reason, "message": c.message, "field": c.field} for c in causes]
    # apimachinery's aggregate: distinct messages joined, in brackets when more than one
    lines = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in cause_list))
    summary = lines[0] if len(lines) == 1 else "[" + ", ".join(lines) + "]"
    gk = f"{kind}.{group}" if group else kind
    details = _details(group, kind, name)
    details["causes"] = cause_list
    return api_error(422, f'{gk} "{name}" is invalid: {summary}', "Invalid", details)


def bad_request(message: str) -> ApiError:
    return api_error(400, message, "BadRequest")


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
    details: dict[str, Any] | None = None,
) -> ApiError:
    return api_error(405, message, "MethodNotAllowed", details)


def gone(message: str) -> ApiError:
    return api_error(410, message, "Expired")
