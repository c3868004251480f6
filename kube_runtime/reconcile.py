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
``complete_objects`` uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kube_runtime import meta

if TYPE_CHECKING:
    from kube_runtime.kinds import KindLike


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


class _Getter(Protocol):
    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any: ...


class ObjectReconciler:
    """A :class:`Reconciler` that reads the requested object and hands it to ``fn``.

    ``fn(obj)`` gets a private copy of the current object from ``reader`` (the manager's
    cache-backed client: no API request), which it may change freely; a model instance when
    ``kind`` is a resource model class. A request whose object is gone is done without
    calling ``fn`` (owned objects are collected by their owner references; use a finalizer
    for cleanup elsewhere). ``fn`` returns what a reconciler returns.
    """

    def __init__(self, reader: _Getter, kind: KindLike, fn: ObjectReconcileFn) -> None:
        self.reader = reader
        self.kind = kind
        self.fn = fn

    def reconcile(self, request: Request) -> Result | None:
        from kube_runtime.client.errors import NotFound

        try:
            obj = self.reader.get(self.kind, request.name, request.namespace)
        except NotFound:
            return None
        # Cached dicts are shared with every reader; models are fresh copies already.
        return self.fn(meta.deep_copy(obj) if isinstance(obj, dict) else obj)


def as_reconciler(reader: _Getter, kind: KindLike, fn: ObjectReconcileFn) -> ObjectReconciler:
    """Adapt ``fn(obj)`` to a :class:`Reconciler` of requests (see :class:`ObjectReconciler`)."""
    return ObjectReconciler(reader, kind, fn)
