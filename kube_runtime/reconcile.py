"""What a reconciler receives and returns (controller-runtime's ``pkg/reconcile``).

A reconciler is level-triggered: it gets only the object's name, reads the whole current state
(from the cache), and moves it one safe step toward the spec. It never learns which event woke it.

Return contract of :meth:`Reconciler.reconcile`, as the controller applies it:

* ``None`` or ``Result()`` -> done; the item's rate-limit history is forgotten.
* ``Result(requeue_after=s)`` with ``s > 0`` -> forgotten, then queued again after ``s`` seconds.
* ``Result(requeue=True)`` -> queued again through the rate limiter (backing off per item).
* raising :class:`TerminalError` -> logged and counted; not retried until a new event arrives.
* raising any other exception -> logged and counted; queued again through the rate limiter.

:func:`as_reconciler` adapts an *object reconciler* (a function of the object itself rather
than of its name, controller-runtime's ``ObjectReconciler``) to this contract; the builder's
``complete_objects`` uses it. A stored object its model no longer accepts still reaches the
object reconciler (see :class:`ObjectReconciler` and :class:`InvalidObject`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ValidationError

from kube_runtime import meta

if TYPE_CHECKING:
    from kube_runtime.kinds import KindLike
    from kube_runtime.webhook._errors import FieldError

__all__ = [
    "InvalidObject",
    "InvalidObjectFn",
    "ObjectReconcileFn",
    "ObjectReconciler",
    "Reconciler",
    "Request",
    "Result",
    "TerminalError",
    "as_reconciler",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class Request:
    """The object to reconcile: its name and, for namespaced kinds, its namespace."""

    name: str
    namespace: str | None = None

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name`` for cluster-scoped objects), as cache keys are."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def __str__(self) -> str:
        return self.key

    @classmethod
    def for_object(cls, obj: Any) -> Request:
        """The request naming ``obj``: a dict with ``metadata.name`` / ``metadata.namespace``,
        or a resource model with ``.metadata.name`` / ``.metadata.namespace``."""
        if isinstance(obj, Mapping):
            meta = obj.get("metadata") or {}
            return cls(meta.get("name", ""), meta.get("namespace") or None)
        meta = getattr(obj, "metadata", None)
        return cls(getattr(meta, "name", None) or "", getattr(meta, "namespace", None) or None)

    @classmethod
    def from_key(cls, key: str) -> Request:
        namespace, sep, name = key.partition("/")
        return cls(name, namespace) if sep else cls(namespace)


@dataclass(frozen=True)
class Result:
    """What to do with the request after a successful reconcile (see the module docstring)."""

    requeue: bool = False
    requeue_after: float | None = None

    @property
    def is_zero(self) -> bool:
        return not self.requeue and not self.requeue_after


@runtime_checkable
class Reconciler(Protocol):
    """Anything with ``reconcile(request) -> Result | None``."""

    def reconcile(self, request: Request) -> Result | None: ...


class TerminalError(Exception):
    """An error retrying cannot fix (bad input): logged, counted, and not requeued.

    Wrap the cause: ``raise TerminalError("spec.replicas must be >= 0") from err``.
    """


ObjectReconcileFn = Callable[[Any], "Result | None"]
"""An object reconciler: receives the object to reconcile (see :func:`as_reconciler`)."""


@dataclass(frozen=True)
class InvalidObject:
    """A stored object its model does not accept, as an ``on_invalid`` hook receives it.

    ``object`` is the lenient model instance (:func:`kube_runtime.models.validate_lenient`:
    typed where it validates, the stored value where it does not, ``None`` for a missing
    required field), a private copy the hook may change and write back; ``raw`` the stored
    object as a dict (a private copy too); ``error`` pydantic's ``ValidationError``.
    """

    request: Request
    object: Any
    raw: dict[str, Any]
    error: ValidationError

    @property
    def field_errors(self) -> list[FieldError]:
        """The invalid fields as apimachinery names them (``spec.replicas: Invalid value: 0:
        must be greater than or equal to 1``), e.g. for a condition's message."""
        from kube_runtime.webhook._errors import field_errors_of

        return field_errors_of(self.error)

    @property
    def being_deleted(self) -> bool:
        """Whether the object has a ``deletionTimestamp`` (its finalizers are pending)."""
        return bool((self.raw.get("metadata") or {}).get("deletionTimestamp"))


InvalidObjectFn = Callable[[InvalidObject], "Result | None"]
"""What ``on_invalid`` is: a function of the :class:`InvalidObject`, returning what a
reconciler returns."""


class _Getter(Protocol):
    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any: ...


class ObjectReconciler:
    """A :class:`Reconciler` that reads the requested object and hands it to ``fn``.

    ``fn(obj)`` gets a private copy of the current object from ``reader`` (the manager's
    cache-backed client: no API request), which it may change freely; a model instance when
    ``kind`` is a resource model class. A request whose object is gone is done without
    calling ``fn`` (owned objects are collected by their owner references; use a finalizer
    for cleanup elsewhere). ``fn`` returns what a reconciler returns.

    A stored object the model class does not accept (stored before its CRD gained a rule, a
    model stricter or newer than the installed schema) is never dropped: it is read leniently
    (:func:`kube_runtime.models.validate_lenient`), the invalid fields are logged, and

    * an object being deleted (``deletionTimestamp`` set) goes to ``fn`` as the lenient
      instance, always, so its finalizer runs;
    * otherwise it goes to ``on_invalid(InvalidObject)`` when one is given (e.g. to set a
      condition naming the fields and return), else to ``fn`` as the lenient instance, as a
      Go controller gets whatever its typed client decodes.
    """

    def __init__(
        self,
        reader: _Getter,
        kind: KindLike,
        fn: ObjectReconcileFn,
        on_invalid: InvalidObjectFn | None = None,
    ) -> None:
        self.reader = reader
        self.kind = kind
        self.fn = fn
        self.on_invalid = on_invalid

    def reconcile(self, request: Request) -> Result | None:
        from kube_runtime.client.errors import NotFound

        try:
            obj = self.reader.get(self.kind, request.name, request.namespace)
        except NotFound:
            return None
        except ValidationError as error:
            return self._reconcile_invalid(request, error)
        # Cached dicts are shared with every reader; models are fresh copies already.
        return self.fn(meta.deep_copy(obj) if isinstance(obj, dict) else obj)

    def _reconcile_invalid(self, request: Request, error: ValidationError) -> Result | None:
        from kube_runtime.client.errors import NotFound
        from kube_runtime.kinds import as_kind
        from kube_runtime.models import validate_lenient

        model = self.kind
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise error
        try:
            stored = self.reader.get(as_kind(model), request.name, request.namespace)
        except NotFound:
            return None
        raw: dict[str, Any] = meta.deep_copy(stored)
        lenient, error_now = validate_lenient(model, meta.deep_copy(raw))
        if error_now is None:  # changed in between: valid now
            return self.fn(lenient)
        invalid = InvalidObject(request, lenient, raw, error_now)
        fields = "; ".join(str(e) for e in invalid.field_errors)
        if invalid.being_deleted or self.on_invalid is None:
            log.warning(
                "%s %s does not satisfy %s (%s); reconciled as stored",
                as_kind(model).kind,
                request,
                model.__name__,
                fields,
            )
            return self.fn(lenient)
        log.info(
            "%s %s is invalid for %s (%s)", as_kind(model).kind, request, model.__name__, fields
        )
        return self.on_invalid(invalid)


def as_reconciler(
    reader: _Getter,
    kind: KindLike,
    fn: ObjectReconcileFn,
    on_invalid: InvalidObjectFn | None = None,
) -> ObjectReconciler:
    """Adapt ``fn(obj)`` to a :class:`Reconciler` of requests (see :class:`ObjectReconciler`)."""
    return ObjectReconciler(reader, kind, fn, on_invalid)
