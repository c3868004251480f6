"""A client that reads from the informer cache and writes to the API server.

Contract (controller-runtime's default client: cache reader + direct writer):

* ``get`` / ``list`` are served by :class:`~kube_runtime.cache.InformerCache`: the first
  read of a kind starts and syncs its shared informer, every later read is a local look-up
  with no API request. Kinds listed in ``uncached`` (e.g. Secrets, which a controller
  should not hold in memory) are read from the API directly.
* What the cache returns is shared: **do not mutate** the objects (deep-copy first). The
  cache may lag the server; a read after a write may not see the write yet.
* ``get`` raises ``NotFound`` like the API server; ``list`` returns a List dict
  (``apiVersion``, ``kind: <Kind>List``, ``metadata.resourceVersion`` = the informer's last
  seen RV, ``items``). Label and field selectors are evaluated locally with the server's
  rules; ``limit`` truncates (no ``continue``); ``resource_version`` is ignored.
* Every write (create/update/update_status/patch/apply/delete/delete_all_of) and ``watch``
  go to :attr:`api_reader`, the direct :class:`~kube_runtime.client.Client`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from kube_runtime.cache import InformerCache
from kube_runtime.client.client import Client
from kube_runtime.kinds import Kind, KindLike, as_kind

__all__ = ["CachedClient"]

Obj = dict[str, Any]


def _model_class(kind: Any) -> type[BaseModel] | None:
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return kind
    return None


class CachedClient:
    """Reads from ``cache``, writes through ``client`` (see the module docstring)."""

    def __init__(
        self, client: Client, cache: InformerCache, *, uncached: Iterable[KindLike] = ()
    ) -> None:
        self.api_reader = client
        self.cache = cache
        self.uncached: frozenset[Kind] = frozenset(as_kind(k) for k in uncached)

    @property
    def mapper(self) -> Any:
        return self.api_reader.mapper

    def is_cached(self, kind: KindLike) -> bool:
        return as_kind(kind) not in self.uncached

    # --- reads (cache) -------------------------------------------------------------------------

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Any:
        """The object from the cache (a model when ``kind`` is a model class); ``NotFound``."""
        if not self.is_cached(kind):
            return self.api_reader.get(kind, name, namespace)
        obj = self.cache.get(kind, name, namespace)
        model = _model_class(kind)
        return model.model_validate(obj) if model is not None else obj

    def list(
        self,
        kind: KindLike,
        namespace: str | None = None,
        *,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
    ) -> Obj:
        """A List dict of the cached objects matching the namespace and selectors."""
        if not self.is_cached(kind):
            return self.api_reader.list(
                kind,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                resource_version=resource_version,
            )
        items: list[Any] = self.cache.list(
            kind, namespace, label_selector=label_selector, field_selector=field_selector
        )
        if limit:
            items = items[:limit]
        model = _model_class(kind)
        if model is not None:
            items = [model.model_validate(i) for i in items]
        resource = self.api_reader.mapper.resource_for(kind)
        rv = self.cache.informer_for(kind).last_sync_resource_version or ""
        return {
            "apiVersion": resource.api_version,
            "kind": resource.list_kind,
            "metadata": {"resourceVersion": rv},
            "items": items,
        }

    # --- writes and watches (API) --------------------------------------------------------------

    def create(self, obj: Any, **kwargs: Any) -> Any:
        return self.api_reader.create(obj, **kwargs)

    def update(self, obj: Any, **kwargs: Any) -> Any:
        return self.api_reader.update(obj, **kwargs)

    def update_status(self, obj: Any, **kwargs: Any) -> Any:
        return self.api_reader.update_status(obj, **kwargs)

    def patch(self, kind: KindLike, name: str, patch: Any, **kwargs: Any) -> Any:
        return self.api_reader.patch(kind, name, patch, **kwargs)

    def apply(self, obj: Any, **kwargs: Any) -> Any:
        return self.api_reader.apply(obj, **kwargs)

    def delete(self, kind: KindLike, name: str, namespace: str | None = None, **kwargs: Any) -> Obj:
        return self.api_reader.delete(kind, name, namespace, **kwargs)

    def delete_all_of(self, kind: KindLike, namespace: str | None = None, **kwargs: Any) -> Obj:
        return self.api_reader.delete_all_of(kind, namespace, **kwargs)

    def watch(self, kind: KindLike, namespace: str | None = None, **kwargs: Any) -> Any:
        return self.api_reader.watch(kind, namespace, **kwargs)

    def __repr__(self) -> str:
        return f"CachedClient({self.api_reader!r})"
