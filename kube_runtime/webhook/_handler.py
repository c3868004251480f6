"""What an admission handler is, and how an exception raised by user code becomes a response.

A handler maps an :class:`~kube_runtime.webhook._review.AdmissionRequest` to an
:class:`~kube_runtime.webhook._review.AdmissionResponse` (controller-runtime's
``admission.Handler``). :func:`refusal` is the shared error path of the defaulting and
validating handlers, as controller-runtime's ``Handle`` treats an error a ``Default`` /
``ValidateCreate`` returned:

* an :class:`~kube_runtime.webhook._errors.AdmissionError` (``Denied``, ``Invalid``) or a
  :class:`~kube_runtime.client.errors.ApiError` carries a Status: it is the answer, code
  included (``validationResponseFromStatus``);
* any other exception is ``Denied(str(error))``: allowed false, code 403, reason Forbidden,
  its text as the message. A ``ValueError`` is the idiomatic "this value is wrong"; other
  types (``KeyError``, ``AttributeError``, ...) usually are bugs in the webhook, so they are
  also logged with their traceback.
"""

from __future__ import annotations

import logging
from typing import Protocol

from kube_runtime.client.errors import ApiError
from kube_runtime.webhook._errors import AdmissionError
from kube_runtime.webhook._review import AdmissionRequest, AdmissionResponse, denied, from_status

__all__ = ["AdmissionHandler", "refusal"]

log = logging.getLogger(__name__)


class AdmissionHandler(Protocol):
    """Decides one admission request."""

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        """The decision on ``request``; never raises for what user code raised."""
        ...


def refusal(error: Exception, request: AdmissionRequest, what: str) -> AdmissionResponse:
    """The response for ``error`` raised by the user's ``what`` (e.g. ``"defaulter"``),
    with the warnings the request collected and those the error carries."""
    if isinstance(error, AdmissionError):
        status = error.status(request.group, request.kind_name, request.object_name)
        return from_status(False, status).with_warnings(request.warnings + error.warnings)
    if isinstance(error, ApiError):
        return from_status(False, error.status).with_warnings(request.warnings)
    if not isinstance(error, ValueError):
        log.error(
            "%s of %s %s/%s raised %s (uid %s); answered 403",
            what,
            request.kind_name,
            request.namespace,
            request.object_name,
            type(error).__name__,
            request.uid,
            exc_info=error,
        )
    return denied(str(error) or type(error).__name__).with_warnings(request.warnings)
