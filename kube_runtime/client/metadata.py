"""Metadata-only reads: client-go's metadata client, for informers that cache only metadata.

A :class:`MetadataClient` asks the API server for ``meta.k8s.io/v1`` ``PartialObjectMetadata``
(``Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1``, and
``PartialObjectMetadataList`` for lists), so only each object's ``metadata`` crosses the wire
and is kept: a controller that needs an owner's labels, finalizers or owner references, not
its spec, caches a fraction of the bytes (controller-runtime's metadata informers, chosen by
watching ``metav1.PartialObjectMetadata``).

Contract:

* Objects come back as ``{"apiVersion": <the kind's>, "kind": <the kind>, "metadata": {...}}``:
  the server's ``PartialObjectMetadata`` with the real kind written in, as controller-runtime
  sets the GroupVersionKind on the objects of a metadata informer, so that handlers and owner
  mappings see the kind they watch. ``metadata`` is the object's whole metadata
  (``managedFields`` included; an informer's transform drops them).
* :meth:`list` and :meth:`watch` take the :class:`~kube_runtime.cache.reflector.ListerWatcher`
  arguments, so a :class:`~kube_runtime.cache.SharedInformer` can run on a MetadataClient;
  lists are fetched in pages of ``page_size`` joined as the REST client does.
* Errors are the REST client's (``NotFound``, ``Forbidden``, ...). A server that cannot answer
  metadata-only raises ``NotAcceptable`` (406).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Unpack

from kube_runtime.client.client import Client, _selector
from kube_runtime.client.mapping import Resource
from kube_runtime.client.options import ListPageKeywords, WatchKeywords, check_keywords
from kube_runtime.client.watch import Watch, WatchEvent
from kube_runtime.kinds import KindLike
from kube_runtime.meta import Obj

__all__ = ["ACCEPT_ITEM", "ACCEPT_LIST", "MetadataClient", "MetadataWatch"]

#: ``Accept`` for one object (get, and the objects of watch events).
ACCEPT_ITEM = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
#: ``Accept`` for a list.
ACCEPT_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def _typed(obj: Obj, resource: Resource) -> Obj:
    """``obj``'s metadata under the resource's own apiVersion and kind."""
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": obj.get("metadata") or {},
    }


class MetadataWatch(Iterator[WatchEvent]):
    """A :class:`~kube_runtime.client.watch.Watch` whose event objects carry the watched
    kind (see the module docstring); ``close()`` closes the stream."""

    def __init__(self, watch: Watch, resource: Resource) -> None:
        self._watch = watch
        self._resource = resource

    def __iter__(self) -> MetadataWatch:
        return self

    def __next__(self) -> WatchEvent:
        event = next(self._watch)
        return WatchEvent(event.type, _typed(event.object, self._resource))

    def close(self) -> None:
        """Close the underlying stream (from any thread)."""
        self._watch.close()

    def __enter__(self) -> MetadataWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MetadataClient:
    """Metadata-only get, list and watch through ``client``'s connection and REST mapping."""

    def __init__(self, client: Client, *, page_size: int = 500) -> None:
        self.client = client
        self.page_size = page_size

    def _resource(self, kind: KindLike) -> Resource:
        return self.client.mapper.resource_for(kind)

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Obj:
        """One object's metadata."""
        resource = self._resource(kind)
        found = self.client.request("GET", resource.path(namespace, name), accept=ACCEPT_ITEM)
        return _typed(found, resource)

    def list(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[ListPageKeywords]
    ) -> Obj:
        """Every matching object's metadata, as ``<Kind>List`` with the first page's
        ``metadata.resourceVersion`` (pages of ``limit``, default :attr:`page_size`)."""
        given = check_keywords("list", options, ListPageKeywords)
        resource = self._resource(kind)
        params: dict[str, Any] = {
            "labelSelector": _selector(given.get("label_selector")),
            "fieldSelector": _selector(given.get("field_selector")),
            "limit": given.get("limit") or self.page_size,
        }
        items: list[Obj] = []
        first: Obj | None = None
        while True:
            page = self.client.request(
                "GET", resource.path(namespace), query=params, accept=ACCEPT_LIST
            )
            first = first or page
            items.extend(_typed(item, resource) for item in page.get("items") or ())
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                break
            params["continue"] = token
        meta = dict((first or {}).get("metadata") or {})
        meta.pop("continue", None)
        meta.pop("remainingItemCount", None)
        return {
            "apiVersion": resource.api_version,
            "kind": resource.list_kind,
            "metadata": meta,
            "items": items,
        }

    def watch(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[WatchKeywords]
    ) -> MetadataWatch:
        """A watch whose events carry only metadata (bookmarks too); ``options`` as the REST
        client's :meth:`~kube_runtime.client.Client.watch` takes them."""
        given = check_keywords("watch", options, WatchKeywords)
        resource = self._resource(kind)
        return MetadataWatch(
            self.client.watch(kind, namespace, accept=ACCEPT_ITEM, **given), resource
        )
