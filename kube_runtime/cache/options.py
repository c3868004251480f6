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
* ``namespaces`` (controller-runtime's ``ByObject.Namespaces``) caches the kind in these
  namespaces instead of the cache's own (``InformerCache(namespaces=...)``,
  ``Manager(namespaces=...)``): a list of names, or ``{name: NamespaceConfig(...)}`` with
  per-namespace selectors and transform; :data:`ALL_NAMESPACES` (``""``) as a name means
  "every other namespace". None (the default) inherits the cache's namespaces. It must be
  None for a cluster-scoped kind (``ValueError`` when the kind is first used).

Namespaces (controller-runtime's ``cache.Options.DefaultNamespaces`` and ``cache.Config``):

* A kind cached in several namespaces gets one list+watch per namespace, merged for reads
  and events; a cluster-scoped kind is always cached cluster-wide.
* Which selector or transform applies to a kind in a namespace: the first one set of the
  kind's own ``NamespaceConfig`` for that namespace (from ``ByObject.namespaces``, or the
  cache's when the kind has none), the kind's ``ByObject`` selector or transform, the
  cache's ``NamespaceConfig`` of that namespace, then the cache's default (every object,
  :func:`~kube_runtime.cache.strip_managed_fields`), as controller-runtime defaults them.
  A selector of ``""`` is set (to "everything") and stops that fall-through; None is unset.
* ``ALL_NAMESPACES`` next to named namespaces lists and watches every namespace but those
  (a ``metadata.namespace!=<name>`` field selector per named one), so each object is in
  exactly one of the kind's informers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from kube_runtime.cache.informer import Transform, strip_managed_fields
from kube_runtime.meta import Obj

__all__ = [
    "ALL_NAMESPACES",
    "DEFAULT_TRANSFORM",
    "ByObject",
    "NamespaceConfig",
    "NamespacesLike",
    "metadata_of",
    "normalize_namespaces",
    "selector_text",
    "with_metadata_cut",
]


class _Default:
    """The type of :data:`DEFAULT_TRANSFORM`."""

    def __repr__(self) -> str:
        return "DEFAULT_TRANSFORM"


#: "The cache's default transform" (distinct from None, which stores objects unchanged).
DEFAULT_TRANSFORM: Final = _Default()


#: The namespace name meaning "every namespace" (controller-runtime's ``cache.AllNamespaces``):
#: next to named namespaces, "every namespace not named".
ALL_NAMESPACES: Final = ""


@dataclass(frozen=True)
class NamespaceConfig:
    """How a namespace is cached (controller-runtime's ``cache.Config``): a label or field
    selector (query text or ``{key: value}`` equalities) and a transform. None (selectors)
    or ``DEFAULT_TRANSFORM`` (transform) leave the setting to the next level (see the module
    docstring); ``""`` selects everything without falling through."""

    label_selector: str | Mapping[str, str] | None = None
    field_selector: str | Mapping[str, str] | None = None
    transform: Transform | _Default | None = DEFAULT_TRANSFORM


NamespacesLike: TypeAlias = Iterable[str] | Mapping[str, NamespaceConfig | None]
"""Namespaces to cache: names, or ``{name: NamespaceConfig | None}``."""


def normalize_namespaces(
    value: NamespacesLike | None, where: str = "namespaces"
) -> dict[str, NamespaceConfig] | None:
    """``value`` as ``{name: NamespaceConfig}`` (None stays None). ``TypeError`` for a bare
    string (give a list), ``ValueError`` for an empty collection (None caches every
    namespace; ``[ALL_NAMESPACES]`` says so explicitly) or a name that is not a string."""
    if value is None:
        return None
    if isinstance(value, str | bytes):
        raise TypeError(f"{where}: give a list of namespace names, not the string {value!r}")
    pairs = list(value.items()) if isinstance(value, Mapping) else [(n, None) for n in value]
    if not pairs:
        raise ValueError(
            f"{where}: no namespace given; use None to cache every namespace (or [ALL_NAMESPACES])"
        )
    out: dict[str, NamespaceConfig] = {}
    for name, config in pairs:
        if not isinstance(name, str):
            raise ValueError(f"{where}: a namespace name must be a string, not {name!r}")
        if config is not None and not isinstance(config, NamespaceConfig):
            raise TypeError(
                f"{where}[{name!r}]: expected a NamespaceConfig or None, not {type(config).__name__}"
            )
        out[name] = config or NamespaceConfig()
    return out


@dataclass(frozen=True)
class ByObject:
    """How one kind is cached (see the module docstring). ``namespaces`` is normalized to
    ``{name: NamespaceConfig}`` (:func:`normalize_namespaces`)."""

    label_selector: str | Mapping[str, str] | None = None
    field_selector: str | Mapping[str, str] | None = None
    transform: Transform | _Default | None = DEFAULT_TRANSFORM
    metadata_only: bool = False
    compact: bool = False
    namespaces: NamespacesLike | None = None

    def __post_init__(self) -> None:
        normalized = normalize_namespaces(self.namespaces, "ByObject(namespaces=...)")
        object.__setattr__(self, "namespaces", normalized)

    def effective_transform(self) -> Transform | None:
        """The transform the kind's informer applies (metadata cut included) when no
        namespace setting replaces the kind's own."""
        base = strip_managed_fields if isinstance(self.transform, _Default) else self.transform
        return with_metadata_cut(base, self.metadata_only)


def with_metadata_cut(transform: Transform | None, metadata_only: bool) -> Transform | None:
    """``transform``, preceded by the cut to metadata when ``metadata_only``."""
    if not metadata_only:
        return transform
    if transform is None:
        return metadata_of

    def metadata_then(obj: Obj, then: Transform = transform) -> Obj:
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
