"""Validating admission: the user's validator allows or refuses creates, updates and deletes
(controller-runtime ``CustomValidator``).

A validator is an object with any of::

    validate_create(obj, request)       -> warnings or None
    validate_update(old, new, request)  -> warnings or None
    validate_delete(obj, request)       -> warnings or None

(subclass :class:`Validator`, whose methods allow everything, and override what you need), or
a plain function ``fn(obj, request)`` that validates creates and updates (the old object is
``request.old_object``). It refuses by raising: :class:`~kube_runtime.webhook._errors.Denied`
or any other exception is code 403 with its text (controller-runtime's ``Denied(err.Error())``),
:class:`~kube_runtime.webhook._errors.Invalid` code 422 with field causes, an
:class:`~kube_runtime.client.errors.ApiError` its own Status (see
:func:`~kube_runtime.webhook._handler.refusal`). What it returns is a list of warnings (or one
string); ``request.warn`` adds more, kept also when it refuses. Objects are dicts, or models
when the registration has a model class; ``request.dry_run`` says nothing will be persisted.

Decisions, as controller-runtime's ``validatorForType.Handle``: ``CONNECT`` is allowed
without a call; ``UPDATE`` decodes both objects; ``DELETE`` validates ``oldObject`` (the object
being deleted); a request without the object is answered 400; an unknown operation 400.
The operations a configuration lists are those the validator has a method for
(:func:`operations_of`).

With a model class, an object the model does not accept is refused the way the API server
refuses what its schema does not accept, before the validator is called: code 422, reason
Invalid, one cause per field (``spec.image: Required value``, ``spec.replicas: Invalid value:
0: must be greater than or equal to 1``; :func:`~kube_runtime.webhook._errors.field_errors_of`),
never a 400 with pydantic's text. What was stored already is not held against a request
(as kube-apiserver's validation ratcheting does): the old object is read leniently
(:func:`kube_runtime.models.validate_lenient`), a ``DELETE`` is never refused for the model,
and an ``UPDATE`` is refused only for field errors the old object did not have; otherwise the
validator gets the lenient objects, so a metadata-only update of an object stored before a
stricter rule (adding or removing a finalizer) reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from kube_runtime.webhook._errors import FieldError, Invalid, field_errors_of
from kube_runtime.webhook._handler import refusal
from kube_runtime.webhook._objects import DecodeError, decode_lenient
from kube_runtime.webhook._review import AdmissionRequest, AdmissionResponse, allowed, errored

__all__ = ["ValidateFn", "ValidatingHandler", "Validator", "Warnings", "operations_of"]

Warnings = Iterable[str] | str | None
"""What a validator returns: warnings for the response (one string is one warning)."""
ValidateFn = Callable[[Any, AdmissionRequest], Warnings]
"""``fn(obj, request)``: validate a created or updated object."""

_METHODS = {
    "CREATE": "validate_create",
    "UPDATE": "validate_update",
    "DELETE": "validate_delete",
}


class Validator:
    """Base class of validators: every method allows; override those you need. Only the
    overridden ones are listed as operations of the generated configuration."""

    def validate_create(self, obj: Any, request: AdmissionRequest) -> Warnings:
        """Check a new object; return warnings, raise to refuse."""
        return None

    def validate_update(self, old: Any, new: Any, request: AdmissionRequest) -> Warnings:
        """Check a change from ``old`` to ``new``; return warnings, raise to refuse."""
        return None

    def validate_delete(self, obj: Any, request: AdmissionRequest) -> Warnings:
        """Check a deletion of ``obj``; return warnings, raise to refuse."""
        return None


class _FunctionValidator(Validator):
    def __init__(self, fn: ValidateFn) -> None:
        self.fn = fn

    def validate_create(self, obj: Any, request: AdmissionRequest) -> Warnings:
        return self.fn(obj, request)

    def validate_update(self, old: Any, new: Any, request: AdmissionRequest) -> Warnings:
        return self.fn(new, request)


def _as_validator(validator: object) -> object:
    if any(callable(getattr(validator, m, None)) for m in _METHODS.values()):
        return validator
    if callable(validator):
        return _FunctionValidator(validator)
    raise TypeError(
        "a validator has validate_create/validate_update/validate_delete or is fn(obj, request)"
    )


def operations_of(validator: object) -> tuple[str, ...]:
    """The operations ``validator`` checks: a :class:`Validator` subclass's overridden
    methods, any other object's methods (a function: ``CREATE`` and ``UPDATE``)."""
    validator = _as_validator(validator)
    found = []
    for operation, method in _METHODS.items():
        own = getattr(type(validator), method, None)
        if own is None or not callable(getattr(validator, method, None)):
            continue
        if isinstance(validator, Validator) and own is getattr(Validator, method):
            continue
        found.append(operation)
    return tuple(found)


class ValidatingHandler:
    """Serves one kind's validator; ``model``: decode objects as this model class."""

    def __init__(self, validator: object, model: type[BaseModel] | None = None) -> None:
        self._validator = _as_validator(validator)
        self._model = model

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        """Validate the request; see the module docstring."""
        operation = request.operation
        if operation == "CONNECT":
            return allowed()
        method = _METHODS.get(operation)
        if method is None:
            return errored(400, f"unknown operation {operation!r}")
        check = getattr(self._validator, method, None)
        refused: list[FieldError] = []
        try:
            if operation == "UPDATE":
                new, new_error = decode_lenient(request.object, self._model)
                old, old_error = decode_lenient(request.old_object, self._model)
                refused = _new_errors(new_error, old_error)
                args: tuple[Any, ...] = (old, new, request)
            elif operation == "DELETE":
                old, _ = decode_lenient(request.old_object, self._model)
                args = (old, request)
            else:
                obj, error = decode_lenient(request.object, self._model)
                refused = _new_errors(error, None)
                args = (obj, request)
        except DecodeError as e:
            return errored(400, str(e))
        if check is None:
            return allowed().with_warnings(request.warnings)
        if refused:
            return refusal(Invalid(errors=refused), request, "validator")
        try:
            returned = check(*args)
            if isinstance(returned, str):  # one warning
                returned = [returned]
            warnings = [str(w) for w in returned or ()]
        except Exception as e:
            return refusal(e, request, "validator")
        return allowed().with_warnings(request.warnings + warnings)


def _new_errors(error: ValidationError | None, before: ValidationError | None) -> list[FieldError]:
    """The field errors of ``error`` that ``before`` (the stored object's) did not have."""
    if error is None:
        return []
    found = field_errors_of(error)
    if before is None:
        return found
    stored = field_errors_of(before)
    return [e for e in found if e not in stored]
