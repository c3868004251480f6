"""Typed API errors: the server's ``meta/v1 Status`` answer as an exception.

Every non-2xx response becomes an :class:`ApiError` subclass chosen by HTTP code and Status
``reason`` (as apimachinery's ``k8s.io/apimachinery/pkg/api/errors`` decides):

=====================  =======================================================
``BadRequest``         400
``Unauthorized``       401
``Forbidden``          403
``NotFound``           404
``MethodNotAllowed``   405
``AlreadyExists``      409 with reason ``AlreadyExists``
``Conflict``           409 otherwise (stale resourceVersion, failed precondition)
``Gone``               410, or reason ``Expired`` / ``Gone`` (a watch ERROR event)
``Invalid``            422 (``causes`` name the offending fields)
``TooManyRequests``    429 (``retry_after`` says how long to wait)
``ServerError``        5xx; ``ServerTimeout`` for 504 or reason ``Timeout``/``ServerTimeout``
=====================  =======================================================

Other codes give a plain :class:`ApiError`. A body that is not a Status (a proxy's HTML page,
plain text) still yields a Status-shaped ``.status`` with a message naming the code and the
start of the body.

Transport failures (connection refused, TLS errors, timeouts, a dropped connection) are not
answers from the server and raise :class:`ApiConnectionError`, a ``ConnectionError``: it has
no Status. client-go returns such failures as plain errors; here they get one type so that
retry loops (a reflector backing off) can catch "the API is unreachable" without catching
programming errors. ``is_*`` predicates accept any exception and are False for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

__all__ = [
    "STATUS_REASONS",
    "AlreadyExists",
    "ApiConnectionError",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MethodNotAllowed",
    "NotFound",
    "ServerError",
    "ServerTimeout",
    "TooManyRequests",
    "Unauthorized",
    "WriteRefused",
    "error_from_response",
    "error_from_status",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_forbidden",
    "is_gone",
    "is_invalid",
    "is_method_not_allowed",
    "is_not_found",
    "is_server_error",
    "is_server_timeout",
    "is_too_many_requests",
    "is_unauthorized",
    "suggests_client_delay",
]

# What the server meant, for bodies that are not a Status (as client-go's generic responses).
_GENERIC_MESSAGES = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    410: "the server reports the requested resource version is gone",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    500: "an error on the server has prevented the request from succeeding",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}
#: The Status ``reason`` of each HTTP code, as client-go gives a body that is not a Status.
STATUS_REASONS: Final[Mapping[int, str]] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
_BODY_SNIPPET = 200


class ApiError(Exception):
    """The API server refused a request; ``status`` is its ``meta/v1 Status`` (a dict).

    ``retry_after`` is the server's suggested delay in seconds (``Retry-After`` header, else
    ``details.retryAfterSeconds``), or None.
    """

    def __init__(self, status: Mapping[str, Any], *, retry_after: float | None = None) -> None:
        self.status: dict[str, Any] = dict(status)
        if retry_after is None:
            seconds = self.details.get("retryAfterSeconds")
            if isinstance(seconds, int | float) and seconds > 0:
                retry_after = float(seconds)
        self.retry_after = retry_after
        super().__init__(self.message)

    @property
    def code(self) -> int:
        code = self.status.get("code")
        return code if isinstance(code, int) else 0

    @property
    def reason(self) -> str:
        return str(self.status.get("reason") or "")

    @property
    def message(self) -> str:
        return str(self.status.get("message") or self.reason or f"API error {self.code}")

    @property
    def details(self) -> dict[str, Any]:
        details = self.status.get("details")
        return details if isinstance(details, dict) else {}

    @property
    def causes(self) -> list[dict[str, Any]]:
        """``details.causes``: each ``{reason, message, field}`` (keys may be missing)."""
        causes = self.details.get("causes")
        return [c for c in causes if isinstance(c, dict)] if isinstance(causes, list) else []

    def __str__(self) -> str:
        return f"({self.code} {self.reason}) {self.message}" if self.reason else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, message={self.message!r})"


class BadRequest(ApiError):
    """400."""


class Unauthorized(ApiError):
    """401: missing or rejected credentials."""


class Forbidden(ApiError):
    """403: authenticated but not allowed (RBAC)."""


class NotFound(ApiError):
    """404."""


class MethodNotAllowed(ApiError):
    """405: the verb is not supported on this resource or subresource."""


class Conflict(ApiError):
    """409: a write lost a race (stale ``resourceVersion``) or a precondition failed."""


class AlreadyExists(ApiError):
    """409 with reason ``AlreadyExists``: create of a name that is taken.

    Not a :class:`Conflict` subclass (``is_conflict`` is False for it), as in apimachinery.
    """


class Gone(ApiError):
    """410 / reason ``Expired``: the requested resourceVersion is no longer in the history.

    A watcher relists; a pager falls back to a full list.
    """


class Invalid(ApiError):
    """422: the object failed validation; ``causes`` name the fields."""


class TooManyRequests(ApiError):
    """429: throttled (API priority and fairness); wait ``retry_after`` seconds."""


class ServerError(ApiError):
    """5xx."""


class ServerTimeout(ServerError):
    """504 or reason ``Timeout``: the server gave up; the operation may still complete."""


class ApiConnectionError(ConnectionError):
    """The request did not get an answer: connection refused/reset, TLS failure, timeout.

    The urllib3 exception is chained as ``__cause__``. There is no Status, so every ``is_*``
    predicate is False for it.
    """


_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
    504: ServerTimeout,
}


def _error_class(code: int, reason: str) -> type[ApiError]:
    if reason in ("Expired", "Gone"):
        return Gone
    if reason in ("Timeout", "ServerTimeout"):
        return ServerTimeout
    if code == 409:
        return AlreadyExists if reason == "AlreadyExists" else Conflict
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls
    return ServerError if 500 <= code <= 599 else ApiError


def error_from_status(
    status: Mapping[str, Any], *, code: int | None = None, retry_after: float | None = None
) -> ApiError:
    """The typed error for a Status dict (``code`` overrides the Status's own, if given)."""
    if code is not None and status.get("code") != code:
        status = {**status, "code": code}
    resolved = status.get("code")
    cls = _error_class(
        resolved if isinstance(resolved, int) else 0, str(status.get("reason") or "")
    )
    return cls(status, retry_after=retry_after)


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (the delta-seconds form; dates are ignored)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds > 0 else None


def error_from_response(
    code: int, body: bytes, headers: Mapping[str, str] | None = None
) -> ApiError:
    """The typed error for an HTTP error response (``body`` need not be JSON)."""
    retry_after = _parse_retry_after((headers or {}).get("Retry-After"))
    status: dict[str, Any] | None = None
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        status = parsed
    if status is None:
        generic = _GENERIC_MESSAGES.get(code, f"the server responded with HTTP {code}")
        text = body[:_BODY_SNIPPET].decode("utf-8", "replace").strip()
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"{generic} ({text})" if text else generic,
            "reason": STATUS_REASONS.get(code, "Unknown" if code < 500 else "InternalError"),
            "code": code,
        }
    return error_from_status(status, code=code, retry_after=retry_after)


def is_not_found(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`NotFound` (404)."""
    return isinstance(err, NotFound)


def is_already_exists(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`AlreadyExists` (409 AlreadyExists)."""
    return isinstance(err, AlreadyExists)


def is_conflict(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`Conflict` (409)."""
    return isinstance(err, Conflict)


def is_gone(err: BaseException) -> bool:
    """410 Gone / Expired (client-go's ``IsGone`` or ``IsResourceExpired``)."""
    return isinstance(err, Gone)


def is_invalid(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`Invalid` (422)."""
    return isinstance(err, Invalid)


def is_bad_request(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`BadRequest` (400)."""
    return isinstance(err, BadRequest)


def is_unauthorized(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`Unauthorized` (401)."""
    return isinstance(err, Unauthorized)


def is_forbidden(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`Forbidden` (403)."""
    return isinstance(err, Forbidden)


def is_method_not_allowed(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`MethodNotAllowed` (405)."""
    return isinstance(err, MethodNotAllowed)


def is_too_many_requests(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`TooManyRequests` (429)."""
    return isinstance(err, TooManyRequests)


def is_server_error(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`ServerError` (5xx)."""
    return isinstance(err, ServerError)


def is_server_timeout(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`ServerTimeout` (504 / Timeout)."""
    return isinstance(err, ServerTimeout)


def suggests_client_delay(err: BaseException) -> float | None:
    """The delay in seconds the server asked for (429, some 5xx), or None."""
    return err.retry_after if isinstance(err, ApiError) else None


class WriteRefused(RuntimeError):
    """A write the client refused to send: its ``write_guard`` said no (for example, this
    process no longer holds its leader-election Lease). Nothing reached the API server."""
