"""One pattern for how a workload controller reads its object's spec: a *spec view*.

A spec view (a subclass of :class:`SpecView`) is what one sync acts on of a workload's spec,
read and checked once: ``View.of(obj, **options)`` builds it, or raises
:class:`InvalidSpecError` (naming the field) for a spec the controller cannot act on -- a
user error, which the controller reports (a Warning event, a status condition) and does not
retry until the spec changes.

A spec changes only with the object's ``metadata.generation``, so a controller keeps its
views in a :class:`SpecViews` cache: one :meth:`~SpecView.of` per object (uid), generation and
options; an object without a generation (a test's bare dict) is read every time. A view that
also carries the object it was read from (for its metadata) overrides :meth:`SpecView.rebind`,
which hands a cached view the current object of the same generation.

The bundled StatefulSet (:class:`controllers.statefulset.spec.StatefulSetView`) and CloneSet
(:class:`controllers.cloneset.core.CloneSetView`) controllers read their sets this way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kube_runtime.meta import ObjView

__all__ = ["DEFAULT_CACHE_SIZE", "InvalidSpecError", "SpecView", "SpecViews"]

DEFAULT_CACHE_SIZE = 4096
"""Views a :class:`SpecViews` keeps before it starts over (one per object and generation)."""

V = TypeVar("V", bound="SpecView")


class InvalidSpecError(ValueError):
    """The workload's spec cannot be acted on (the message names the fields): a user error,
    reported and not retried until the spec changes."""


class SpecView:
    """Base of the spec views (see the module docstring): read-only by convention.

    Subclasses define a classmethod ``of(obj, **options)`` (the checked view, or
    :class:`InvalidSpecError`; its options are the subclass's own, hence not declared here)
    and, when they carry the object itself, :meth:`rebind`.
    """

    __slots__ = ()

    def rebind(self: V, obj: ObjView) -> V:
        """This view for ``obj``, a later copy of the object it was read from with the same
        generation (so the same spec). A view that does not hold the object returns itself."""
        return self


class SpecViews(Generic[V]):
    """Views built by ``build(obj, **options)`` (a :meth:`SpecView.of`), kept per object uid,
    ``metadata.generation`` and options: a sync of an unchanged spec reads none of it again.
    An object without a generation is read each time. A hit is :meth:`SpecView.rebind`-ed to
    the object asked about. Errors are not cached (the next sync reads the spec again).
    Thread-safe; at most ``size`` views are kept (then the cache starts over)."""

    def __init__(self, build: Callable[..., V], *, size: int = DEFAULT_CACHE_SIZE) -> None:
        self._build = build
        self._size = size
        self._views: dict[tuple[str, int, Hashable], V] = {}
        self._lock = threading.Lock()
        self.builds = 0
        """Spec reads (cache misses, failed ones included), for tests and benchmarks."""

    def get(self, obj: ObjView, **options: Hashable) -> V:
        """The view of ``obj`` (built with ``options``); :class:`InvalidSpecError` from the
        build when the spec cannot be acted on."""
        metadata = obj.get("metadata") or {}
        generation = metadata.get("generation")
        if not generation:
            self.builds += 1
            return self._build(obj, **options)
        key = (metadata.get("uid") or "", generation, tuple(sorted(options.items())))
        with self._lock:
            view = self._views.get(key)
        if view is not None:
            return view.rebind(obj)
        self.builds += 1
        view = self._build(obj, **options)
        with self._lock:
            if len(self._views) >= self._size:
                self._views.clear()
            self._views[key] = view
        return view

    def clear(self) -> None:
        """Forget every view."""
        with self._lock:
            self._views.clear()
