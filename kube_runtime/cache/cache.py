"""The informer cache: one shared informer per kind, and reads served from their stores.

Contract (controller-runtime ``pkg/cache`` informer cache):

* :meth:`InformerCache.informer_for` returns the one :class:`SharedInformer` of a kind,
  creating it on first use; every controller, source and reader of that kind shares it
  (one list+watch per kind per process). Informers created after :meth:`start` start at
  once.
* :meth:`get` / :meth:`list` of a kind whose informer is not running start it and wait
  until it has synced (at most ``sync_timeout`` seconds, then ``TimeoutError``), as
  controller-runtime's reader does; later reads are plain dictionary look-ups.
* Returned objects are the cache's shared dicts: **do not mutate them** - deep-copy first
  (``copy.deepcopy``). The mutation detector (``KUBE_CACHE_MUTATION_DETECTOR=true``)
  catches violations.
* ``get`` of an absent object raises :class:`kube_runtime.client.errors.NotFound` with a
  Status like the API server's. The cache may lag the server: after a write, use the
  write's response or wait for the cache to catch up.
* Namespaces (controller-runtime's ``cache.Options.DefaultNamespaces``): a cache built with
  ``namespaces=["a", "b"]`` (or ``{"a": NamespaceConfig(label_selector=...), ...}``: selectors
  and transform per namespace) lists and watches each namespaced kind in those namespaces
  only, one list+watch per namespace, merged for reads, indexes and event handlers
  (:class:`~kube_runtime.cache._multinamespace.MultiNamespaceInformer`); ``namespace="a"`` is
  shorthand for ``namespaces=["a"]``; None (the default) caches every namespace, and
  :data:`~kube_runtime.cache.options.ALL_NAMESPACES` (``""``) as a name means "every
  namespace not named". ``ByObject(namespaces=...)`` replaces them for one kind.
  Cluster-scoped kinds (by the client's ``mapper``) are cached cluster-wide. Reading a
  namespace a kind is not cached in raises :class:`NamespaceNotCached` (a ``ValueError``)
  naming the cached ones; a read without a namespace covers every cached namespace.
* :meth:`InformerCache.set_label_selector` (before the kind's informer exists) makes that
  kind's informer list and watch only matching objects (controller-runtime's ``ByObject``
  label selectors): the cache then holds, and its readers see, only those. Sharding
  (:mod:`kube_runtime.sharding`) selects each replica's shard this way.
* ``by_object={kind: ByObject(...)}`` (or :meth:`InformerCache.set_options` before the kind
  is used) sets a kind's selectors, transform, or metadata-only caching
  (:mod:`kube_runtime.cache.options`); :meth:`is_metadata_only` tells readers which kinds
  hold metadata-only objects.
* Time: the cache's :class:`~kube_runtime.clock.Clock` (``clock=``; None: the clock current
  when the cache is made) runs its sync waits and is every informer's clock.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Unpack

from kube_runtime._bounded import remember
from kube_runtime.cache._multinamespace import MultiNamespaceInformer
from kube_runtime.cache.informer import SharedInformer, Transform, strip_managed_fields
from kube_runtime.cache.options import (
    ByObject,
    NamespaceConfig,
    NamespacesLike,
    _Default,
    normalize_namespaces,
    selector_text,
    with_metadata_cut,
)
from kube_runtime.cache.reflector import BackoffPolicy, ListerWatcher
from kube_runtime.cache.store import INDEX_LABEL, INDEX_NAMESPACE, IndexFunc
from kube_runtime.client.client import Client
from kube_runtime.client.errors import NotFound, error_from_status
from kube_runtime.client.mapping import BUILTIN_RESOURCES
from kube_runtime.client.metadata import MetadataClient
from kube_runtime.client.options import CacheListKeywords, check_keywords
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import Kind, KindLike, as_kind
from kube_runtime.meta import Obj
from kube_runtime.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    check_field_selector,
    convert_field_labels,
    label_selector_from_dict,
    object_fields,
    parse_field_selector,
    parse_label_selector,
)

__all__ = ["CacheStopping", "Informer", "InformerCache", "NamespaceNotCached", "not_found"]

LabelSelectorLike = str | Mapping[str, str] | LabelSelector

#: What :meth:`InformerCache.informer_for` returns: one informer, or one per namespace.
Informer = SharedInformer | MultiNamespaceInformer

_BUILTIN_KINDS = frozenset((r.group, r.kind) for r in BUILTIN_RESOURCES)


def not_found(kind: Kind, name: str) -> NotFound:
    """A 404 like the API server's for ``kind``/``name`` (resource named by lower-case kind)."""
    resource = kind.kind.lower()
    return NotFound(
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f'{resource} "{name}" not found',
            "reason": "NotFound",
            "details": {"name": name, "group": kind.group, "kind": resource},
            "code": 404,
        }
    )


def as_label_selector(selector: LabelSelectorLike | None) -> LabelSelector | None:
    """A parsed selector from query text, a ``{key: value}`` dict, or a LabelSelector. Query
    text is parsed once (a LabelSelector is immutable; a controller lists with the same text
    on every sync); text that does not parse raises every time."""
    if selector is None or isinstance(selector, LabelSelector):
        return selector
    if isinstance(selector, str):
        parsed = _parsed_selectors.get(selector)
        if parsed is None:
            parsed = parse_label_selector(selector)
            remember(_parsed_selectors, selector, parsed, _PARSED_SELECTORS_SIZE)
        return parsed
    return label_selector_from_dict({"matchLabels": dict(selector)})


_PARSED_SELECTORS_SIZE = 4096
_parsed_selectors: dict[str, LabelSelector] = {}
"""Query text -> its parsed selector (:func:`as_label_selector`); cleared when full."""


#: How often a read waiting for an informer to sync checks for :meth:`InformerCache.interrupt_waits`.
_WAIT_SLICE = 0.1


class CacheStopping(RuntimeError):
    """A read waited for an informer to sync while the cache was being stopped."""


class NamespaceNotCached(ValueError):
    """A read of a namespace the cache does not hold the kind in (controller-runtime: "unable
    to get: ... because of unknown namespace for the cache"). ``namespace``, ``kind`` and
    ``cached`` (the kind's cached namespaces) say which."""

    def __init__(self, kind: Kind, namespace: str, cached: Iterable[str]) -> None:
        self.kind = kind
        self.namespace = namespace
        self.cached = sorted(cached)
        names = ", ".join(repr(n) for n in self.cached)
        super().__init__(
            f"namespace {namespace!r} is not cached for {kind}: the cache holds it in "
            f"{names} only (Manager/InformerCache namespaces=, ByObject(namespaces=...))"
        )


class _Scope:
    """What one of a kind's informers lists and watches: a namespace (None: all) and the
    resolved selectors and transform."""

    __slots__ = ("field", "label", "namespace", "transform")

    def __init__(
        self, namespace: str | None, label: str | None, field: str | None, transform: Any
    ) -> None:
        self.namespace = namespace
        self.label = label
        self.field = field
        self.transform = transform


def _first(*values: Any) -> Any:
    """The first selector that is set (not None; ``""`` is set), else None."""
    return next((v for v in values if v is not None), None)


def _first_transform(*values: Transform | _Default | None) -> Transform | None:
    """The first transform that is set (not ``DEFAULT_TRANSFORM``; None, "store unchanged",
    is set), else the cache's default."""
    for value in values:
        if not isinstance(value, _Default):
            return value
    return strip_managed_fields


class InformerCache:
    """Shared informers by kind plus reads from them (see the module docstring); ``clock``
    runs the sync waits and is given to every informer the cache makes."""

    def __init__(
        self,
        client: ListerWatcher,
        *,
        namespace: str | None = None,
        namespaces: NamespacesLike | None = None,
        resync_period: float | None = None,
        sync_timeout: float = 60.0,
        backoff: BackoffPolicy | None = None,
        by_object: Mapping[KindLike, ByObject] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._clock = resolve(clock, "InformerCache")
        self.client = client
        if namespace and namespaces is not None:
            raise ValueError("give namespace= (one) or namespaces= (several), not both")
        self._namespaces = normalize_namespaces([namespace] if namespace else namespaces)
        named = [n for n in self._namespaces or () if n]
        #: The one namespace the cache holds (``namespace=``, or ``namespaces=`` of one
        #: name); None when it holds several or every namespace.
        self.namespace: str | None = (
            named[0]
            if self._namespaces is not None and len(self._namespaces) == 1 and named
            else None
        )
        self.resync_period = resync_period
        self.sync_timeout = sync_timeout
        self._backoff = backoff
        self._lock = threading.Lock()
        self._informers: dict[Kind, Informer] = {}
        self._label_selectors: dict[Kind, str] = {}
        self._by_object: dict[Kind, ByObject] = {
            as_kind(k): v for k, v in (by_object or {}).items()
        }
        self._started = False
        self._stopped = False
        self._interrupted = self._clock.event()

    @property
    def clock(self) -> Clock:
        """The clock of the cache and of its informers."""
        return self._clock

    @property
    def namespaces(self) -> builtins.list[str] | None:
        """The namespaces cached by default, sorted (``""``: every namespace not named);
        None for every namespace."""
        return None if self._namespaces is None else sorted(self._namespaces)

    def namespaces_of(self, kind: KindLike) -> builtins.list[str] | None:
        """The namespaces ``kind`` is cached in, sorted (``""``: every namespace not named);
        None when cluster-wide (every namespace, or a cluster-scoped kind)."""
        scopes = self._scopes(as_kind(kind))
        if len(scopes) == 1 and scopes[0].namespace is None:
            return None
        return sorted(s.namespace or "" for s in scopes)

    # --- informers ---------------------------------------------------------------------------

    def informer_for(self, kind: KindLike) -> Informer:
        """The shared informer of ``kind`` (created on first use; started if the cache is): a
        :class:`SharedInformer`, or a :class:`MultiNamespaceInformer` when the kind is cached
        in several namespaces."""
        k = as_kind(kind)
        # Every cached read comes here: an informer that exists is read without the lock (a
        # dict read is atomic; informers are only ever added, under the lock).
        informer = self._informers.get(k)
        if informer is not None:
            return informer
        with self._lock:
            informer = self._informers.get(k)
            if informer is None:
                if self._stopped:
                    raise RuntimeError("the informer cache was stopped")
                informer = self._new_informer(k)
                self._informers[k] = informer
                if self._started:
                    informer.start()
            return informer

    def _new_informer(self, kind: Kind) -> Informer:
        options = self._by_object.get(kind)
        informers = {
            scope.namespace or "": self._informer_in(kind, scope, options)
            for scope in self._scopes(kind)
        }
        if len(informers) == 1:
            return next(iter(informers.values()))
        return MultiNamespaceInformer(kind, informers, self._clock)

    def _informer_in(self, kind: Kind, scope: _Scope, options: ByObject | None) -> SharedInformer:
        selectors = [self._label_selectors.get(kind), scope.label]
        return SharedInformer(
            self.client if options is None else self._source(options),
            kind,
            namespace=scope.namespace,
            label_selector=",".join(s for s in selectors if s) or None,
            field_selector=scope.field,
            resync_period=self.resync_period,
            backoff=self._backoff,
            transform=scope.transform,
            compact=options is not None and options.compact,
            clock=self._clock,
        )

    def _scopes(self, kind: Kind) -> builtins.list[_Scope]:
        """The informers ``kind`` gets: one per namespace it is cached in (as
        controller-runtime defaults ``ByObject.Namespaces``), or one for every namespace."""
        options = self._by_object.get(kind)
        own = None if options is None else normalize_namespaces(options.namespaces)
        namespaces = own if own is not None else self._namespaces
        if namespaces is not None and not self._is_namespaced(kind):
            if own is not None:
                raise ValueError(
                    f"{kind} is cluster-scoped: its ByObject(namespaces=...) must be None"
                )
            namespaces = None
        metadata_only = options is not None and options.metadata_only
        if namespaces is None:
            transform = options.effective_transform() if options else strip_managed_fields
            return [
                _Scope(
                    None,
                    selector_text(options.label_selector) if options else None,
                    selector_text(options.field_selector) if options else None,
                    transform,
                )
            ]
        named = sorted(n for n in namespaces if n)
        scopes = []
        for namespace, config in sorted(namespaces.items()):
            default = (self._namespaces or {}).get(namespace) or NamespaceConfig()
            kind_level = options or ByObject()
            label = _first(config.label_selector, kind_level.label_selector, default.label_selector)
            field = _first(config.field_selector, kind_level.field_selector, default.field_selector)
            chosen = _first_transform(config.transform, kind_level.transform, default.transform)
            fields = [selector_text(field)]
            if not namespace:  # every namespace but the named ones: each object in one informer
                fields += [f"metadata.namespace!={n}" for n in named]
            scopes.append(
                _Scope(
                    namespace or None,
                    selector_text(label),
                    ",".join(f for f in fields if f) or None,
                    with_metadata_cut(chosen, metadata_only),
                )
            )
        return scopes

    def _is_namespaced(self, kind: Kind) -> bool:
        """Whether ``kind`` is namespaced, by the client's mapper (a source without one, as
        in tests: assumed namespaced)."""
        mapper = getattr(self.client, "mapper", None)
        if mapper is None:
            return True
        return bool(mapper.resource_for(kind).namespaced)

    def _source(self, options: ByObject) -> ListerWatcher:
        """The REST client's metadata-only view for a metadata-only kind, else the client."""
        if not options.metadata_only:
            return self.client
        if isinstance(self.client, Client):
            return MetadataClient(self.client)
        return self.client  # a fake: the transform cuts objects to their metadata

    def set_options(self, kind: KindLike, options: ByObject) -> None:
        """Cache ``kind`` as ``options`` say (:mod:`kube_runtime.cache.options`): call it
        before anything uses the kind; ``ValueError`` once its informer exists."""
        k = as_kind(kind)
        with self._lock:
            if k in self._informers and self._by_object.get(k) != options:
                raise ValueError(
                    f"the informer of {k} already exists: set its cache options before it is used"
                )
            self._by_object[k] = options

    def options(self, kind: KindLike) -> ByObject | None:
        """The cache options of ``kind`` (None: the cache's defaults)."""
        return self._by_object.get(as_kind(kind))  # an atomic read; set under the lock

    def is_metadata_only(self, kind: KindLike) -> bool:
        """Whether ``kind`` is cached as metadata-only objects."""
        options = self.options(kind)
        return options is not None and options.metadata_only

    def set_label_selector(self, kind: KindLike, selector: str) -> None:
        """List and watch only ``kind`` objects matching ``selector`` (query text): call it
        before anything uses the kind. ``ValueError`` once the kind's informer exists with
        another selector (an informer cannot change what it watches)."""
        k = as_kind(kind)
        with self._lock:
            informer = self._informers.get(k)
            if informer is not None and self._label_selectors.get(k) != selector:
                raise ValueError(
                    f"the informer of {k} already exists "
                    f"(selector {self._label_selectors.get(k)!r}): set {selector!r} before it is used"
                )
            self._label_selectors[k] = selector

    def label_selector(self, kind: KindLike) -> str | None:
        """The label selector ``kind`` 's informer lists with (None: every object)."""
        with self._lock:
            return self._label_selectors.get(as_kind(kind))

    def informers(self) -> builtins.list[Informer]:
        """Every informer created so far (one per kind)."""
        with self._lock:
            return list(self._informers.values())

    def add_indexer(self, kind: KindLike, name: str, fn: IndexFunc) -> None:
        """Add an index to ``kind``'s store (before or after start; existing objects too)."""
        self.informer_for(kind).indexer.add_indexers({name: fn})

    def start(self) -> None:
        """Start every informer created so far, and any created later."""
        with self._lock:
            self._started = True
            informers = list(self._informers.values())
        for informer in informers:
            informer.start()

    def interrupt_waits(self) -> None:
        """Make reads waiting for an informer to sync give up at once (``CacheStopping``),
        and later ones not wait: a manager calls this first when it stops, so that a
        reconcile stuck on a kind whose list keeps failing (403, 404) lets its worker end."""
        self._interrupted.set()

    def stop(self) -> None:
        """Stop every informer (their watches are closed and threads joined)."""
        self._interrupted.set()
        with self._lock:
            self._stopped = True
            informers = list(self._informers.values())
        for informer in informers:
            informer.stop()

    def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """True once every informer created so far has synced; False on timeout."""
        monotonic = self._clock.monotonic
        deadline = None if timeout is None else monotonic() + timeout
        for informer in self.informers():
            left = None if deadline is None else max(0.0, deadline - monotonic())
            if not informer.wait_for_sync(left):
                return False
        return True

    # --- reads -------------------------------------------------------------------------------

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Obj:
        """The cached object (shared: do not mutate); ``NotFound`` when absent."""
        k = as_kind(kind)
        informer = self.informer_for(k)
        self._check_namespace(informer, namespace)
        informer = self._synced(informer, k)
        obj = informer.indexer.get(f"{namespace}/{name}" if namespace else name)
        if obj is None:
            raise not_found(k, name)
        return obj

    def list(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[CacheListKeywords]
    ) -> builtins.list[Obj]:
        """Cached objects of ``kind`` (shared: do not mutate).

        Filters combine: ``namespace``, ``label_selector`` (query text, a ``{key: value}``
        dict of equalities, or a LabelSelector), ``field_selector`` (evaluated on the
        object's selectable fields, as the server does) and ``index=(name, value)``.
        Candidates come from the most selective index available.
        """
        given = check_keywords("list", options, CacheListKeywords)
        index = given.get("index")
        k = as_kind(kind)
        informer = self.informer_for(k)
        self._check_namespace(informer, namespace)
        informer = self._synced(informer, k)
        labels = as_label_selector(given.get("label_selector"))
        fields = _field_selector(given.get("field_selector"), informer.kind)
        indexer = informer.indexer
        candidates: Iterable[Obj]
        if index is not None:
            candidates = indexer.by_index(*index)
        elif labels is not None and labels.equality_terms:
            key, value = next(iter(labels.equality_terms.items()))
            candidates = indexer.by_index(INDEX_LABEL, f"{key}={value}")
        elif namespace:
            candidates = indexer.by_index(INDEX_NAMESPACE, namespace)
        else:
            candidates = indexer.list()
        out = []
        for obj in candidates:
            # Every candidate of every read: a plain dict read (an accessor costs ~4x).
            meta = obj.get("metadata") or {}
            if namespace and meta.get("namespace") != namespace:
                continue
            if labels is not None and not labels.matches(meta.get("labels")):
                continue
            if fields is not None and not fields.matches(object_fields(obj)):
                continue
            out.append(obj)
        return out

    # --- internals ---------------------------------------------------------------------------

    def _synced(self, informer: Informer, kind: Kind) -> Informer:
        """``informer`` (``kind``'s) once it has synced: started if it is not, waited for up
        to :attr:`sync_timeout` (``TimeoutError``; ``CacheStopping`` once interrupted)."""
        if not informer.started:
            informer.start()
        if informer.has_synced():
            return informer
        monotonic = self._clock.monotonic
        deadline = monotonic() + self.sync_timeout
        while not informer.wait_for_sync(min(_WAIT_SLICE, max(0.0, deadline - monotonic()))):
            if self._interrupted.is_set():
                raise CacheStopping(f"the cache is stopping: {kind} was not synced")
            if monotonic() >= deadline:
                raise TimeoutError(f"the cache of {kind} did not sync within {self.sync_timeout}s")
        return informer

    @staticmethod
    def _check_namespace(informer: Informer, namespace: str | None) -> None:
        """``NamespaceNotCached`` when ``informer`` does not hold ``namespace``."""
        if not namespace:
            return
        if isinstance(informer, MultiNamespaceInformer):
            if informer.for_namespace(namespace) is None:
                raise NamespaceNotCached(informer.kind, namespace, informer.namespaces)
        elif informer.namespace and namespace != informer.namespace:
            raise NamespaceNotCached(informer.kind, namespace, [informer.namespace])


def _field_selector(selector: str | FieldSelector | None, kind: Kind) -> FieldSelector | None:
    """``selector`` parsed and checked as the API server checks it: a label the kind does not
    support raises the server's 400 ``BadRequest`` (never an empty answer)."""
    if selector is None:
        return None
    try:
        parsed = parse_field_selector(selector) if isinstance(selector, str) else selector
        custom = (kind.group, kind.kind) not in _BUILTIN_KINDS
        check_field_selector(parsed, kind.kind, kind.group, custom=custom)
    except SelectorError as err:
        status = {"kind": "Status", "status": "Failure", "reason": "BadRequest", "code": 400}
        raise error_from_status({**status, "message": str(err)}) from None
    return convert_field_labels(parsed, kind.kind, kind.group)
