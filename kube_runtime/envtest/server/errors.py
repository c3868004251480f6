"""API errors of the embedded server, rendered as ``meta/v1 Status`` bodies like kube-apiserver's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """An error the server answers with: HTTP ``code``, a Status ``reason`` and ``message``.

    ``details`` is the Status ``details`` (name, group, kind, causes, retryAfterSeconds).
    """

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or _REASONS.get(code, "Unknown")
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(group: str, kind: str, name: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": kind}
    if name is not None:
        d["name"] = name
    if group:
        d["group"] = group
    return d


def not_found(resource: str, group: str, name: str) -> ApiError:
    """``pods "x" not found`` (resource is the plural, plus ``.group`` for non-core groups)."""
    return ApiError(
        404,
        f'{resource} "{name}" not found',
        "NotFound",
        _details(group, resource.split(".")[0], name),
    )


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        f'{resource} "{name}" already exists',
        "AlreadyExists",
        _details(group, resource.split(".")[0], name),
    )


def conflict(resource: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {resource} "{name}": {why}',
        "Conflict",
        _details(group, resource.split(".")[0], name),
    )


STALE_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def invalid(kind: str, group: str, name: str, causes: Iterable[Any]) -> ApiError:
    """422 Invalid with field causes; each cause has ``field``, ``reason`` and ``message``."""
    cause_list = [{"reason": c.reason, "message": c.message, "field": c.field} for c in causes]
    summary = ", ".join(f"{c['field']}: {c['message']}" for c in cause_list)
    gk = f"{kind}.{group}" if group else kind
    details = _details(group, kind, name)
    details["causes"] = cause_list
    return ApiError(422, f'{gk} "{name}" is invalid: {summary}', "Invalid", details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


def gone(message: str) -> ApiError:
    return ApiError(410, message, "Expired")
