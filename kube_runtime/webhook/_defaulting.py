"""Defaulting (mutating) admission: the user's defaulter changes the object, the answer is the
JSON patch from what was sent to what it became (controller-runtime ``CustomDefaulter``).

A defaulter is a function ``fn(obj, request)`` or an object with ``default(obj, request)``. It
changes ``obj`` in place or returns the new object (a dict, or a model when the registration
has a model class). It may refuse the request by raising
:class:`~kube_runtime.webhook._errors.Denied` / :class:`~kube_runtime.webhook._errors.Invalid`
and add warnings with ``request.warn``. ``request.dry_run`` says nothing will be persisted.

Decisions, as controller-runtime's ``defaulterForType.Handle``:

* ``DELETE`` is allowed at once (code 200): there is nothing to default;
* a request with no object is answered 400;
* an object the registration's model class does not accept (a required field missing, a
  value out of bounds: Go's decoder, which checks types only, would have decoded it) is
  handed to the defaulter read leniently (:func:`kube_runtime.models.validate_lenient`: typed
  where it validates, a missing required field reads ``None``), so it can fill in what is
  missing. If the defaulter then raises anything but a deliberate refusal (``Denied``,
  ``Invalid``, an ``ApiError``), the request is allowed unchanged: the API server's schema
  validation answers with its own errors (``422 spec.image: Required value``), never a
  webhook error with pydantic's text;
* no change: allowed without a patch; otherwise the patch is computed from the raw object
  that was sent (``PatchResponseFromRaw``), so fields the decoding does not know are kept;
* removals that only the decoding made (a model round trip dropping a field) are left out of
  the patch (``dropSchemeRemovals``): a defaulter never deletes what it did not touch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import jsonpatch
from pydantic import BaseModel

from kube_runtime.client.errors import ApiError
from kube_runtime.webhook._errors import AdmissionError
from kube_runtime.webhook._handler import refusal
from kube_runtime.webhook._objects import DecodeError, decode_lenient, encode
from kube_runtime.webhook._review import AdmissionRequest, AdmissionResponse, allowed, errored

__all__ = ["DefaultFn", "Defaulter", "DefaultingHandler", "json_patch"]

log = logging.getLogger(__name__)

DefaultFn = Callable[[Any, AdmissionRequest], Any]
"""``fn(obj, request)``: change ``obj`` in place (return None) or return the new object."""


@runtime_checkable
class Defaulter(Protocol):
    """An object that sets defaults (controller-runtime ``CustomDefaulter``)."""

    def default(self, obj: Any, request: AdmissionRequest) -> Any:
        """Set defaults on ``obj`` in place (return None) or return the defaulted object;
        raise to refuse the request."""
        ...


def json_patch(original: dict[str, Any], current: dict[str, Any]) -> list[dict[str, Any]]:
    """The RFC 6902 operations turning ``original`` into ``current``."""
    operations: list[dict[str, Any]] = jsonpatch.make_patch(original, current).patch
    return operations


class DefaultingHandler:
    """Serves one kind's defaulter; ``model``: decode objects as this model class."""

    def __init__(self, defaulter: Defaulter | DefaultFn, model: type[BaseModel] | None = None):
        if isinstance(defaulter, Defaulter):
            self._fn: DefaultFn = defaulter.default
        elif callable(defaulter):
            self._fn = defaulter
        else:
            raise TypeError("a defaulter is fn(obj, request) or has default(obj, request)")
        self._model = model

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        """Default ``request.object``; see the module docstring."""
        if request.operation == "DELETE":
            return allowed()
        raw = request.object
        try:
            obj, invalid = decode_lenient(raw, self._model)
        except DecodeError as e:
            return errored(400, str(e))
        assert raw is not None  # decode refuses an empty object
        decoded = encode(obj, warn=invalid is None) if self._model is not None else raw
        try:
            returned = self._fn(obj, request)
            current = encode(obj if returned is None else returned, warn=invalid is None)
        except Exception as e:
            if invalid is None or isinstance(e, (AdmissionError, ApiError)):
                return refusal(e, request, "defaulter")
            log.info(
                "defaulter of %s %s/%s failed on an object its model does not accept (%s: %s); "
                "allowed unchanged, the API server validates it",
                request.kind_name,
                request.namespace,
                request.object_name,
                type(e).__name__,
                e,
            )
            return allowed().with_warnings(request.warnings)
        operations = json_patch(raw, current)
        if operations and decoded is not raw:
            dropped = {(op["op"], op["path"]) for op in json_patch(raw, decoded)}
            operations = [
                op
                for op in operations
                if not (op["op"] == "remove" and ("remove", op["path"]) in dropped)
            ]
        response = allowed()
        response.patch = operations
        return response.with_warnings(request.warnings)
