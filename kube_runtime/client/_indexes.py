"""The built-in indexes of cache-backed readers: their names and index functions.

``list(kind, namespace, index=(name, value))`` (:class:`kube_runtime.client.interfaces.Reader`)
looks objects up by an index; every cache-backed reader (the informer cache's
:class:`~kube_runtime.cache.Indexer`, :class:`~kube_runtime.client.cached.CachedClient`) and the
fake client serve these three, with these functions, so that an index lookup means the same
wherever it is served. They live with the client (below :mod:`kube_runtime.cache`, which
re-exports them) because the fake client, part of the client package, serves them too.

An index function maps an object to the index values it is found under (``[]``: none). Like
:func:`~kube_runtime.cache.store.object_key` they run for every object of every event and
list: plain dict reads (a :mod:`kube_runtime.meta` accessor costs about four times as much).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType

from kube_runtime.meta import Obj

__all__ = [
    "BUILTIN_INDEXES",
    "INDEX_CONTROLLER_UID",
    "INDEX_LABEL",
    "INDEX_NAMESPACE",
    "IndexFunc",
    "controller_uid_index",
    "label_index",
    "namespace_index",
]

#: ``obj -> the index values it is found under``.
IndexFunc = Callable[[Obj], list[str]]

#: Objects by namespace (:func:`namespace_index`).
INDEX_NAMESPACE = "namespace"
#: Objects by the uid of their controller owner (:func:`controller_uid_index`).
INDEX_CONTROLLER_UID = "controller-uid"
#: Objects by ``"key=value"`` label (:func:`label_index`).
INDEX_LABEL = "label"


def namespace_index(obj: Obj) -> list[str]:
    """The object's namespace (nothing for cluster-scoped objects)."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [namespace] if namespace else []


def controller_uid_index(obj: Obj) -> list[str]:
    """The uid of the ownerReference with ``controller: true``, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid"):
            return [ref["uid"]]
    return []


def label_index(obj: Obj) -> list[str]:
    """One ``"key=value"`` per label (interned: many objects share the same labels)."""
    labels = (obj.get("metadata") or {}).get("labels")
    if not labels:
        return []
    return [sys.intern(f"{k}={v}") for k, v in labels.items()]


BUILTIN_INDEXES: Mapping[str, IndexFunc] = MappingProxyType(
    {
        INDEX_NAMESPACE: namespace_index,
        INDEX_CONTROLLER_UID: controller_uid_index,
        INDEX_LABEL: label_index,
    }
)
"""The indexes every cache store and fake client keeps, by name (read-only)."""
