"""A client that reads from the informer cache and writes to the API server.

Contract (controller-runtime's default client: cache reader + direct writer):

* ``get`` / ``list`` are served by :class:`~kube_runtime.cache.InformerCache`: the first
  read of a kind starts and syncs its shared informer, every later read is a local look-up
  with no API request. Kinds listed in ``uncached`` (e.g. Secrets, which a controller
  should not hold in memory) are read from the API directly. Kinds the cache holds
  metadata-only (:class:`~kube_runtime.cache.ByObject`) are read as metadata-only dicts,
  even when asked for with a model class.
* What the cache returns is shared: **do not mutate** the objects (deep-copy first). The
  cache may lag the server; a read after a write may not see the write yet.
* ``get`` raises ``NotFound`` like the API server; ``list`` returns a List dict
  (``apiVersion``, ``kind: <Kind>List``, ``metadata.resourceVersion`` = the informer's last
  seen RV, ``items``). Label and field selectors are evaluated locally with the server's
  rules; ``limit`` truncates (no ``continue``); ``resource_version`` is ignored.
* ``list(index=(name, value))`` looks up an index of the kind's informer (added with
  :meth:`InformerCache.add_indexer <kube_runtime.cache.InformerCache.add_indexer>`, or one of
  the built-in ``namespace`` / ``controller-uid`` / ``label`` indexes); an unknown index name
  is a ``KeyError``. On an ``uncached`` kind it is the REST client's ``ValueError``.
* Every write (create/update/status()/update_status/patch/apply/delete/delete_all_of),
  ``subresource(name)`` and ``watch`` go to :attr:`api_reader`, the direct client (any
  :class:`~kube_runtime.client.interfaces.WithWatch`: the REST client, or a fake), through
  its public methods.

The cache is any :class:`CacheReader` (controller-runtime's ``client.CacheOptions.Reader``):
this module does not import :mod:`kube_runtime.cache`, which sits above the client package.

Implements :class:`kube_runtime.client.interfaces.WithWatch`.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Iterable
from typing import Any, Protocol, Unpack

from pydantic import BaseModel

from kube_runtime.client.base import ClientBase
from kube_runtime.client.interfaces import (
    ObjectLike,
    PatchBody,
    Selector,
    StatusWriter,
    SubResourceClient,
    WithWatch,
)
from kube_runtime.client.mapping import RestMapper, model_class
from kube_runtime.client.options import (
    CacheListKeywords,
    DeleteOptions,
    ListQuery,
    PatchOptions,
    WatchKeywords,
)
from kube_runtime.client.watch import Watch
from kube_runtime.kinds import Kind, KindLike, as_kind
from kube_runtime.meta import Obj

__all__ = ["CacheReader", "CachedClient", "SyncedInformer"]


class SyncedInformer(Protocol):
    """What :class:`CachedClient` reads from a kind's informer: the resource version of its
    last list or watch event (the List's ``metadata.resourceVersion``)."""

    @property
    def last_sync_resource_version(self) -> str | None:
        """The last resource version seen (None before the first list)."""
        ...


class CacheReader(Protocol):
    """The cache :class:`CachedClient` reads (:class:`kube_runtime.cache.InformerCache` is
    one): shared objects by kind, namespace, selectors and index."""

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Obj:
        """The cached object (shared: do not mutate); ``NotFound`` when absent."""
        ...

    def list(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[CacheListKeywords]
    ) -> builtins.list[Obj]:
        """The cached objects matching every filter (shared: do not mutate)."""
        ...

    def is_metadata_only(self, kind: KindLike) -> bool:
        """Whether ``kind`` is cached as metadata-only objects."""
        ...

    def informer_for(self, kind: KindLike) -> SyncedInformer:
        """The informer of ``kind`` (created on first use)."""
        ...


def _selector_text(value: Selector | None) -> str | None:
    """Query text for a selector given as text or as ``{key: value}`` equalities."""
    if value is None or isinstance(value, str):
        return value or None
    return ",".join(f"{k}={v}" for k, v in value.items()) or None


class CachedClient(ClientBase):
    """Reads from ``cache``, writes through ``client`` (see the module docstring)."""

    def __init__(
        self, client: WithWatch, cache: CacheReader, *, uncached: Iterable[KindLike] = ()
    ) -> None:
        #: The direct client: uncached reads, every write, subresources and watches.
        self.api_reader = client
        self.cache = cache
        self.uncached: frozenset[Kind] = frozenset(as_kind(k) for k in uncached)
        # A kind's apiVersion and list kind, looked up once: lists run on every watch event
        # of controllers that map events through the reader.
        self._list_types: dict[Kind, tuple[str, str]] = {}

    @property
    def mapper(self) -> RestMapper:
        """The REST client's kind -> resource mapper."""
        return self.api_reader.mapper

    def is_cached(self, kind: KindLike) -> bool:
        """Whether reads of ``kind`` are served by the cache (not listed in ``uncached``)."""
        return as_kind(kind) not in self.uncached

    # --- reads (cache) -------------------------------------------------------------------------

    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Any:
        if not self.is_cached(kind):
            return self.api_reader.get(kind, name, namespace)
        obj = self.cache.get(kind, name, namespace)
        model = self._model(kind)
        return model.model_validate(obj) if model is not None else obj

    def _model(self, kind: KindLike) -> type[BaseModel] | None:
        # Metadata-only objects (cache options) are dicts: a model of the kind needs its spec.
        return None if self.cache.is_metadata_only(kind) else model_class(kind)

    def _do_list(self, kind: KindLike, namespace: str | None, query: ListQuery) -> Obj:
        # The cached objects matching the namespace, selectors and index.
        if not self.is_cached(kind):
            return self.api_reader.list(kind, namespace, **dataclasses.asdict(query))
        items: list[Any] = self.cache.list(
            kind,
            namespace,
            label_selector=query.label_selector,
            field_selector=_selector_text(query.field_selector),
            index=query.index,
        )
        if query.limit:
            items = items[: query.limit]
        model = self._model(kind)
        if model is not None:
            items = [model.model_validate(i) for i in items]
        ref = as_kind(kind)
        list_type = self._list_types.get(ref)
        if list_type is None:
            resource = self.api_reader.mapper.resource_for(kind)
            list_type = self._list_types[ref] = (resource.api_version, resource.list_kind)
        rv = self.cache.informer_for(ref).last_sync_resource_version or ""
        return {
            "apiVersion": list_type[0],
            "kind": list_type[1],
            "metadata": {"resourceVersion": rv},
            "items": items,
        }

    # --- writes, subresources and watches (API) ------------------------------------------------

    def _do_create(
        self, obj: ObjectLike, namespace: str | None, field_manager: str | None, dry_run: bool
    ) -> Any:
        return self.api_reader.create(
            obj, namespace=namespace, field_manager=field_manager, dry_run=dry_run
        )

    def _do_update(self, obj: ObjectLike, field_manager: str | None, dry_run: bool) -> Any:
        return self.api_reader.update(obj, field_manager=field_manager, dry_run=dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Any:
        return self.api_reader.patch(kind, name, patch, **options.keywords())

    def _do_apply(self, obj: ObjectLike, field_manager: str, force: bool, dry_run: bool) -> Any:
        return self.api_reader.apply(obj, field_manager=field_manager, force=force, dry_run=dry_run)

    def _do_delete(
        self, kind: KindLike, name: str, namespace: str | None, options: DeleteOptions
    ) -> Obj:
        return self.api_reader.delete(kind, name, namespace, **dataclasses.asdict(options))

    def _do_delete_all_of(
        self, kind: KindLike, namespace: str | None, query: ListQuery, options: DeleteOptions
    ) -> Obj:
        return self.api_reader.delete_all_of(
            kind,
            namespace,
            label_selector=query.label_selector,
            field_selector=query.field_selector,
            propagation_policy=options.propagation_policy,
            grace_period_seconds=options.grace_period_seconds,
            dry_run=options.dry_run,
        )

    def status(self) -> StatusWriter:
        """The API's status writer (writes are never served by the cache)."""
        return self.api_reader.status()

    def subresource(self, name: str) -> SubResourceClient:
        """The API's client of subresource ``name`` (reads of it are not cached either)."""
        return self.api_reader.subresource(name)

    def watch(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[WatchKeywords]
    ) -> Watch:
        """A watch on the API (:meth:`Client.watch <kube_runtime.client.Client.watch>`)."""
        return self.api_reader.watch(kind, namespace, **options)

    def __repr__(self) -> str:
        return f"CachedClient({self.api_reader!r})"
