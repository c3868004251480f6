"""One webhook path over HTTP: the request's method, content type and body in, a reply out.

Kept apart from the socket server so that handlers are tested with plain bytes.

* :class:`AdmissionEndpoint` serves an admission handler (controller-runtime ``Webhook``'s
  ``ServeHTTP``): the body must be a JSON AdmissionReview (``application/json``) of at most
  7 MiB; the answer is the review's response in the request's ``apiVersion``. As in
  controller-runtime, every answer is HTTP 200 with a review: a request that cannot be read
  (not ``POST``, no body, another content type, not JSON, no ``request``) gets a response
  with code 400 and the reason, a body over the limit code 413, an exception escaping the
  handler code 500 (a recovered panic). kube-apiserver then reports the webhook's refusal
  with that message rather than a failed call.
* :class:`ConversionEndpoint` serves :class:`~kube_runtime.webhook._conversion.Conversions`:
  a body that is not a ConversionReview with a request gets HTTP 400 (as controller-runtime)
  with a review whose result is ``Failure`` and the reason (413 over the limit); a review
  whose objects cannot be converted HTTP 200 and a ``Failure`` result.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from kube_runtime.webhook._conversion import CONVERSION_API_VERSIONS, Conversions, failure_review
from kube_runtime.webhook._handler import AdmissionHandler
from kube_runtime.webhook._review import (
    ADMISSION_API_VERSIONS,
    AdmissionRequest,
    ReviewError,
    errored,
)

__all__ = ["MAX_REQUEST_BYTES", "AdmissionEndpoint", "ConversionEndpoint", "Endpoint", "Reply"]

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 7 * 1024 * 1024
"""The largest request body read (controller-runtime's ``maxRequestSize``)."""

JSON = "application/json"
"""The only content type of reviews."""


@dataclass(frozen=True)
class Reply:
    """An HTTP answer."""

    status: int
    body: bytes
    content_type: str = JSON


class Endpoint(Protocol):
    """Serves one path."""

    def serve(self, method: str, content_type: str | None, body: bytes) -> Reply:
        """Answer one request."""
        ...

    def too_large(self) -> Reply:
        """The answer to a body over :data:`MAX_REQUEST_BYTES` (not read)."""
        ...


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _unreadable(method: str, content_type: str | None, body: bytes) -> str | None:
    """Why the request cannot be a review, or None."""
    if method != "POST":
        return f"method {method} is not allowed, expected POST"
    if not body:
        return "request body is empty"
    if _media_type(content_type) != JSON:
        return f"contentType={content_type or ''}, expected {JSON}"
    return None


def _too_large_message() -> str:
    return f"request entity is too large; limit is {MAX_REQUEST_BYTES} bytes"


class _ReviewEndpoint:
    """What both endpoints do before their own work: refuse what cannot be a review, and
    decode the JSON of ``review_kind``; each says how it answers an error (:meth:`_error`)."""

    review_kind = ""

    def _error(self, code: int, message: str) -> Reply:
        raise NotImplementedError

    def too_large(self) -> Reply:
        """An answer with code 413 saying the limit."""
        return self._error(413, _too_large_message())

    def _read(self, method: str, content_type: str | None, body: bytes) -> Any:
        """The decoded review document, or the :class:`Reply` refusing the request (wrong
        method or content type, empty, over :data:`MAX_REQUEST_BYTES`, not JSON)."""
        problem = _unreadable(method, content_type, body)
        if problem is not None:
            return self._error(400, problem)
        if len(body) > MAX_REQUEST_BYTES:
            return self.too_large()
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as e:
            return self._error(400, f"couldn't decode the {self.review_kind}: {e}")


class AdmissionEndpoint(_ReviewEndpoint):
    """Serves an admission handler (see the module docstring)."""

    review_kind = "AdmissionReview"

    def __init__(self, handler: AdmissionHandler) -> None:
        self.handler = handler

    def _error(self, code: int, message: str) -> Reply:
        review = errored(code, message).review("", ADMISSION_API_VERSIONS[0])
        return Reply(200, orjson.dumps(review))

    def serve(self, method: str, content_type: str | None, body: bytes) -> Reply:
        """Decode the AdmissionReview, run the handler, encode its answer."""
        doc = self._read(method, content_type, body)
        if isinstance(doc, Reply):
            return doc
        try:
            request = AdmissionRequest.from_review(doc)
        except ReviewError as e:
            return self._error(400, str(e))
        try:
            response = self.handler.handle(request)
        except Exception as e:
            log.error("admission handler failed (uid %s)", request.uid, exc_info=e)
            response = errored(500, f"panic: {e} [recovered]")
        review = response.review(request.uid, request.api_version)
        return Reply(200, orjson.dumps(review))


class ConversionEndpoint(_ReviewEndpoint):
    """Serves ``/convert`` (see the module docstring)."""

    review_kind = "ConversionReview"

    def __init__(self, conversions: Conversions) -> None:
        self.conversions = conversions

    def _error(self, status: int, message: str) -> Reply:
        return Reply(status, orjson.dumps(failure_review("", CONVERSION_API_VERSIONS[0], message)))

    def serve(self, method: str, content_type: str | None, body: bytes) -> Reply:
        """Decode the ConversionReview, convert, encode the answer."""
        doc = self._read(method, content_type, body)
        if isinstance(doc, Reply):
            return doc
        status, review = self.conversions.review(doc)
        return Reply(status, orjson.dumps(review))
