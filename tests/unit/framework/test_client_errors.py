"""Error mapping: HTTP code + Status body -> typed ApiError, without a server."""

from __future__ import annotations

import orjson
import pytest

from kube_runtime.client import errors
from kube_runtime.client.errors import (
    AlreadyExists,
    ApiConnectionError,
    ApiError,
    Conflict,
    Gone,
    Invalid,
    NotFound,
    ServerError,
    ServerTimeout,
    TooManyRequests,
    error_from_response,
    error_from_status,
)


def status(code: int, reason: str, message: str = "msg", **details: object) -> bytes:
    body: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    if details:
        body["details"] = details
    return orjson.dumps(body)


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (400, "BadRequest", errors.BadRequest),
        (401, "Unauthorized", errors.Unauthorized),
        (403, "Forbidden", errors.Forbidden),
        (404, "NotFound", NotFound),
        (405, "MethodNotAllowed", errors.MethodNotAllowed),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (410, "Expired", Gone),
        (410, "Gone", Gone),
        (422, "Invalid", Invalid),
        (429, "TooManyRequests", TooManyRequests),
        (500, "InternalError", ServerError),
        (503, "ServiceUnavailable", ServerError),
        (504, "Timeout", ServerTimeout),
        (500, "ServerTimeout", ServerTimeout),
        (415, "UnsupportedMediaType", ApiError),
    ],
)
def test_code_and_reason_pick_the_class(code: int, reason: str, cls: type[ApiError]) -> None:
    err = error_from_response(code, status(code, reason, "the message"))
    assert type(err) is cls
    assert (err.code, err.reason, err.message) == (code, reason, "the message")
    assert err.status["kind"] == "Status"


def test_already_exists_is_not_a_conflict() -> None:
    err = error_from_response(409, status(409, "AlreadyExists"))
    assert errors.is_already_exists(err) and not errors.is_conflict(err)
    stale = error_from_response(409, status(409, "Conflict"))
    assert errors.is_conflict(stale) and not errors.is_already_exists(stale)


def test_predicates_accept_any_exception() -> None:
    for pred in (
        errors.is_not_found,
        errors.is_conflict,
        errors.is_gone,
        errors.is_invalid,
        errors.is_too_many_requests,
        errors.is_server_error,
    ):
        assert pred(ValueError("x")) is False
        assert pred(ApiConnectionError("down")) is False
    assert errors.is_not_found(error_from_response(404, status(404, "NotFound")))
    assert errors.is_server_timeout(error_from_response(504, b""))
    assert errors.is_server_error(error_from_response(504, b""))


def test_causes_and_details() -> None:
    causes = [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.x"}]
    err = error_from_response(
        422, status(422, "Invalid", "bad", name="n", kind="pods", causes=causes)
    )
    assert err.causes == causes
    assert err.details["name"] == "n"


def test_retry_after_from_header_then_details() -> None:
    from_header = error_from_response(
        429, status(429, "TooManyRequests", retryAfterSeconds=7), {"Retry-After": "3"}
    )
    assert from_header.retry_after == 3.0
    from_details = error_from_response(429, status(429, "TooManyRequests", retryAfterSeconds=7))
    assert from_details.retry_after == 7.0
    assert errors.suggests_client_delay(from_details) == 7.0
    assert error_from_response(404, status(404, "NotFound")).retry_after is None
    # An HTTP-date Retry-After is not understood; details still count.
    dated = error_from_response(
        429,
        status(429, "TooManyRequests", retryAfterSeconds=2),
        {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
    )
    assert dated.retry_after == 2.0


def test_non_json_body_still_makes_a_useful_error() -> None:
    err = error_from_response(503, b"<html>upstream connect error</html>")
    assert type(err) is ServerError
    assert err.code == 503 and err.reason == "ServiceUnavailable"
    assert "unable to handle the request" in err.message
    assert "upstream connect error" in err.message
    empty = error_from_response(404, b"")
    assert isinstance(empty, NotFound)
    assert empty.message == "the server could not find the requested resource"
    # JSON that is not a Status is treated like text.
    other = error_from_response(400, b'{"error": "nope"}')
    assert type(other) is errors.BadRequest and "nope" in other.message


def test_watch_error_event_status() -> None:
    err = error_from_status(
        {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
    )
    assert isinstance(err, Gone) and "too old" in str(err)
    assert isinstance(error_from_status({"reason": "Expired", "message": "x"}), Gone)
    assert type(error_from_status({"code": 500, "message": "boom"})) is ServerError


def test_str_and_repr() -> None:
    err = error_from_response(404, status(404, "NotFound", 'pods "x" not found'))
    assert str(err) == '(404 NotFound) pods "x" not found'
    assert "NotFound(code=404" in repr(err)
