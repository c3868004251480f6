"""Per-kind cache options: what a kind's informer lists, watches and keeps.

:class:`ByObject` is controller-runtime's ``cache.Options.ByObject`` plus its metadata-only
informers, given to :class:`~kube_runtime.cache.InformerCache` (``by_object=``) or to the
:class:`~kube_runtime.manager.Manager` (``cache_by_object=``). The usual reason is memory on
a real cluster: an operator that caches every ConfigMap or Secret of a cluster holds all of
them, where it needs the few it manages (a label selector), or only their metadata.

Contract:

* ``label_selector`` / ``field_selector`` (query text or ``{key: value}`` equalities) are
  sent with the kind's list and watch: the cache then holds, and every reader of the kind
  sees, only matching objects. A label selector is combined (AND) with one set by sharding.
* ``transform`` replaces the cache's default (:func:`~kube_runtime.cache.strip_managed_fields`)
  for this kind; None stores objects as the API sends them.
* ``metadata_only=True`` lists and watches ``PartialObjectMetadata``
  (:mod:`kube_runtime.client.metadata`) when the cache's client is the REST client, so only
  metadata crosses the wire; with any other source (a fake) objects are cut to their metadata
  on the way in. Cached objects are then ``{"apiVersion", "kind", "metadata"}`` dicts: reads
  of the kind return those, and handlers receive those.
* ``compact=True`` keeps the kind's objects as compact JSON bytes, decoded on each read
  (:class:`~kube_runtime.cache.store.CompactIndexer`): a fraction of the memory of parsed
  dicts, for a decode per object read; reads then return objects the caller owns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from kube_runtime.cache.informer import Transform, strip_managed_fields
from kube_runtime.meta import Obj

__all__ = ["DEFAULT_TRANSFORM", "ByObject", "metadata_of", "selector_text"]


class _Default:
    """The type of :data:`DEFAULT_TRANSFORM`."""

    def __repr__(self) -> str:
        return "DEFAULT_TRANSFORM"


#: "The cache's default transform" (distinct from None, which stores objects unchanged).
DEFAULT_TRANSFORM: Final = _Default()


@dataclass(frozen=True)
class ByObject:
    """How one kind is cached (see the module docstring)."""

    label_selector: str | Mapping[str, str] | None = None
    field_selector: str | Mapping[str, str] | None = None
    transform: Transform | _Default | None = DEFAULT_TRANSFORM
    metadata_only: bool = False
    compact: bool = False

    def effective_transform(self) -> Transform | None:
        """The transform the kind's informer applies (metadata cut included)."""
        base = strip_managed_fields if isinstance(self.transform, _Default) else self.transform
        if not self.metadata_only:
            return base
        if base is None:
            return metadata_of

        def metadata_then(obj: Obj, then: Transform = base) -> Obj:
            return then(metadata_of(obj))

        return metadata_then


def selector_text(value: str | Mapping[str, Any] | None) -> str | None:
    """Query text of a selector given as text or as ``{key: value}`` equalities."""
    if value is None or isinstance(value, str):
        return value or None
    return ",".join(f"{k}={v}" for k, v in value.items()) or None


def metadata_of(obj: Obj) -> Obj:
    """``obj`` cut to ``apiVersion``, ``kind`` and ``metadata`` (a metadata-only view; a
    ``PartialObjectMetadata`` from :mod:`kube_runtime.client.metadata` is already one)."""
    if obj.keys() <= {"apiVersion", "kind", "metadata"}:
        return obj
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": obj.get("metadata") or {},
    }
