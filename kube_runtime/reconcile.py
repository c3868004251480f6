"""What a reconciler receives and returns (controller-runtime's ``pkg/reconcile``).

A reconciler is level-triggered: it gets only the object's name, reads the whole current state
(from the cache), and moves it one safe step toward the spec. It never learns which event woke it.

Return contract of :meth:`Reconciler.reconcile`, as the controller applies it:

* ``None`` or ``Result()`` -> done; the item's rate-limit history is forgotten.
* ``Result(requeue_after=s)`` with ``s > 0`` -> forgotten, then queued again after ``s`` seconds.
* ``Result(requeue=True)`` -> queued again through the rate limiter (backing off per item).
* raising :class:`TerminalError` -> logged and counted; not retried until a new event arrives.
* raising any other exception -> logged and counted; queued again through the rate limiter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


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
    def for_object(cls, obj: Mapping[str, Any]) -> Request:
        """The request naming ``obj`` (a dict with ``metadata.name`` / ``metadata.namespace``)."""
        meta = obj.get("metadata") or {}
        return cls(meta.get("name", ""), meta.get("namespace") or None)

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
