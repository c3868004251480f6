"""One kind cached in several namespaces: an informer per namespace, read and watched as one.

Contract (controller-runtime ``pkg/cache/multi_namespace_cache.go``'s informer):

* :class:`MultiNamespaceInformer` holds one :class:`~kube_runtime.cache.SharedInformer` per
  namespace (``""``, :data:`~kube_runtime.cache.options.ALL_NAMESPACES`, for "every other
  namespace"). The namespaces' objects are disjoint, so a handler added with
  :meth:`~MultiNamespaceInformer.add_event_handler` (added to every namespace's informer)
  sees each change once.
* It answers what readers and sources use of a ``SharedInformer``: ``start``/``stop``,
  ``has_synced``/``wait_for_sync`` (all namespaces synced), ``add_event_handler`` /
  ``remove_event_handler``, ``indexer`` (a :class:`MergedIndexer`), ``kind``, ``clock``,
  ``last_sync_resource_version``.
* :meth:`~MultiNamespaceInformer.for_namespace` is the informer holding a namespace's
  objects (the named one, else the ``ALL_NAMESPACES`` one), or None when it is not cached.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from kube_runtime.cache.informer import HandlerRegistration, ResourceEventHandler, SharedInformer
from kube_runtime.cache.store import INDEX_NAMESPACE, IndexFunc
from kube_runtime.clock import Clock
from kube_runtime.kinds import Kind
from kube_runtime.meta import Obj

__all__ = ["MergedIndexer", "MultiHandlerRegistration", "MultiNamespaceInformer"]


class MultiHandlerRegistration:
    """A handler registered on every namespace's informer (one registration each)."""

    def __init__(self, registrations: Mapping[str, HandlerRegistration], clock: Clock) -> None:
        self.registrations = dict(registrations)
        self._clock = clock

    def has_synced(self) -> bool:
        """True once the handler has processed every namespace's initial state."""
        return all(r.has_synced() for r in self.registrations.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced`; False when ``timeout`` seconds passed first."""
        return _wait_all(
            [r.wait_for_sync for r in self.registrations.values()], timeout, self._clock
        )

    def pending(self) -> int:
        """Notifications queued and not yet handled, over all namespaces."""
        return sum(r.pending() for r in self.registrations.values())


def _wait_all(waits: builtins.list[Any], timeout: float | None, clock: Clock) -> bool:
    deadline = None if timeout is None else clock.monotonic() + timeout
    for wait in waits:
        left = None if deadline is None else max(0.0, deadline - clock.monotonic())
        if not wait(left):
            return False
    return True


class MergedIndexer:
    """Read-only view of several namespaces' stores as one (``get``, ``list``, ``by_index``,
    ``keys``, ``len``, ``in``); ``add_indexers`` adds to every store."""

    def __init__(self, informer: MultiNamespaceInformer) -> None:
        self._informer = informer

    def _stores(self) -> builtins.list[Any]:
        return [i.indexer for i in self._informer.informers.values()]

    def get(self, key: str) -> Obj | None:
        """The object of ``namespace/name`` (from that namespace's store), else None."""
        namespace, sep, _ = key.partition("/")
        if sep:
            informer = self._informer.for_namespace(namespace)
            return None if informer is None else informer.indexer.get(key)
        for store in self._stores():
            obj = store.get(key)
            if obj is not None:
                return obj
        return None

    def list(self) -> builtins.list[Obj]:
        """Every cached object of every namespace."""
        return [obj for store in self._stores() for obj in store.list()]

    def keys(self) -> builtins.list[str]:
        """Every key of every namespace."""
        return [key for store in self._stores() for key in store.keys()]  # noqa: SIM118 (an Indexer, not a dict)

    def by_index(self, index_name: str, value: str) -> builtins.list[Obj]:
        """Objects whose ``index_name`` values include ``value``, over every namespace
        (the ``namespace`` index reads that namespace's store only)."""
        if index_name == INDEX_NAMESPACE:
            informer = self._informer.for_namespace(value)
            return [] if informer is None else informer.indexer.by_index(index_name, value)
        return [obj for store in self._stores() for obj in store.by_index(index_name, value)]

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add ``indexers`` to every namespace's store."""
        for store in self._stores():
            store.add_indexers(indexers)

    def indexer_names(self) -> builtins.list[str]:
        """The index names (every store has the same)."""
        stores = self._stores()
        return stores[0].indexer_names() if stores else []

    def __len__(self) -> int:
        return sum(len(store) for store in self._stores())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None


class MultiNamespaceInformer:
    """One kind's informers by namespace, used as one informer (see the module docstring)."""

    #: The single namespace an informer is scoped to (None: more than one).
    namespace: str | None = None

    def __init__(self, kind: Kind, informers: Mapping[str, SharedInformer], clock: Clock) -> None:
        if len(informers) < 2:
            raise ValueError("a multi-namespace informer needs two namespaces or more")
        self.kind = kind
        self.informers: dict[str, SharedInformer] = dict(sorted(informers.items()))
        self._clock = clock
        self.indexer = MergedIndexer(self)

    @property
    def namespaces(self) -> builtins.list[str]:
        """The namespaces cached (``""`` for every namespace not named), sorted."""
        return list(self.informers)

    def for_namespace(self, namespace: str) -> SharedInformer | None:
        """The informer holding ``namespace``'s objects; None when it is not cached."""
        informer = self.informers.get(namespace)
        if informer is None and namespace:
            informer = self.informers.get("")
        return informer

    @property
    def clock(self) -> Clock:
        """The clock of the namespaces' informers."""
        return self._clock

    def start(self) -> None:
        """Start every namespace's informer (idempotent)."""
        for informer in self.informers.values():
            informer.start()

    def stop(self) -> None:
        """Stop every namespace's informer."""
        for informer in self.informers.values():
            informer.stop()

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return all(i.started for i in self.informers.values())

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return any(i.stopped for i in self.informers.values())

    def has_synced(self) -> bool:
        """True once every namespace's first list is in its store."""
        return all(i.has_synced() for i in self.informers.values())

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until every namespace has synced; False when ``timeout`` seconds passed."""
        return _wait_all([i.wait_for_sync for i in self.informers.values()], timeout, self._clock)

    @property
    def last_sync_resource_version(self) -> str | None:
        """The last-seen resourceVersion of the last namespace (as controller-runtime's
        list across namespaces reports it); None before any list."""
        last = None
        for informer in self.informers.values():
            last = informer.last_sync_resource_version or last
        return last

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> MultiHandlerRegistration:
        """Register ``handler`` on every namespace's informer (each object's events come
        from the one informer holding it)."""
        registrations = {
            ns: informer.add_event_handler(handler, resync_period)
            for ns, informer in self.informers.items()
        }
        return MultiHandlerRegistration(registrations, self._clock)

    def remove_event_handler(self, registration: MultiHandlerRegistration) -> None:
        """Unregister a handler from every namespace's informer."""
        for ns, one in registration.registrations.items():
            informer = self.informers.get(ns)
            if informer is not None:
                informer.remove_event_handler(one)

    def __repr__(self) -> str:
        names = ", ".join(ns or "<all others>" for ns in self.informers)
        return f"MultiNamespaceInformer({self.kind} in {names}, {len(self.indexer)} objects)"
