"""The embedded server's errors: the framework's :class:`ApiError` family, worded as kube-apiserver.

The server raises the very types the client raises (:mod:`kube_runtime.client.errors`: one
class per HTTP code and Status reason), so in-process callers (the kubelet, the garbage
collector, tests) handle an error the same whether it came through HTTP or not. An error's
``status`` is the ``meta/v1 Status`` the server answers with; :func:`response_headers` adds
``Retry-After`` when it carries ``details.retryAfterSeconds``, as kube-apiserver does.
:class:`Cause` is one field error (a ``StatusCause``), as validation reports them.

The constructors, their messages and :data:`STALE_MESSAGE` live in
:mod:`kube_runtime.client._apifacts`, which the fake client uses too (so both answer a failing
call with the same Status); they are re-exported here under their old names.
"""

from __future__ import annotations

from kube_runtime.client._apifacts import (
    STALE_MESSAGE,
    Cause,
    already_exists,
    api_error,
    bad_request,
    conflict,
    gone,
    internal_error,
    internal_failure,
    invalid,
    method_not_allowed,
    not_found,
    status_error,
)
from kube_runtime.client.errors import ApiError

__all__ = [
    "STALE_MESSAGE",
    "ApiError",
    "Cause",
    "already_exists",
    "api_error",
    "bad_request",
    "conflict",
    "gone",
    "internal_error",
    "internal_failure",
    "invalid",
    "method_not_allowed",
    "not_found",
    "response_headers",
    "status_error",
]


def response_headers(err: ApiError) -> dict[str, str]:
    """Headers of the error's answer: ``Retry-After`` from ``details.retryAfterSeconds``."""
    seconds = err.details.get("retryAfterSeconds")
    return {} if seconds is None else {"Retry-After": str(seconds)}
