"""Fluent wiring of a controller into a manager (controller-runtime ``pkg/builder``).

::

    Builder(manager).for_(kinds.StatefulSet).owns(kinds.Pod).complete(reconciler)

* ``for_(kind)`` -- the kind being reconciled; its events enqueue the object itself.
* ``owns(kind)`` -- kinds the reconciled objects create; their events enqueue the controller
  owner (ownerReference with ``controller: true``) of the ``for_`` kind.
* ``watches(kind, handler_or_fn)`` -- anything else; a plain function ``obj -> requests``
  is wrapped in :class:`~kube_runtime.handlers.EnqueueRequestsFromMapFunc`.
* predicates given to a watch apply to it; ``with_event_filter`` applies to all watches.
* the reconciler is an object with ``reconcile(request)`` or a plain function of the request;
  :meth:`Builder.complete_objects` takes a function of the ``for_`` object itself instead
  (read from the cache, a private copy; a model when ``for_`` was given a model class; a stored
  object the model does not accept arrives as a lenient instance, or goes to ``on_invalid``).
* the controller's name defaults to the lower-cased ``for_`` kind and must be unique in the
  manager (it labels metrics and logs).
* on a manager with sharding (:mod:`kube_runtime.sharding`), the ``for_`` and ``owns`` kinds
  are sharded: the cache holds this replica's objects only, and the reconciler is wrapped in
  a :class:`~kube_runtime.sharding.ShardGate` (drain answers, moves); ``watches`` kinds are
  cached whole. ``with_options(sharded=False)`` opts a controller out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from kube_runtime import rbac
from kube_runtime.client.options import check_keywords
from kube_runtime.controller import Controller
from kube_runtime.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    EventHandler,
)
from kube_runtime.kinds import Kind, KindLike, as_kind
from kube_runtime.predicates import Predicate
from kube_runtime.reconcile import (
    InvalidObjectFn,
    ObjectReconcileFn,
    Reconciler,
    Request,
    Result,
    as_reconciler,
)
from kube_runtime.source import KindSource, Source
from kube_runtime.workqueue import RateLimiter

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = [
    "Builder",
    "ControllerOptions",
    "MapFn",
    "ReconcileFn",
]

ReconcileFn = Callable[[Request], "Result | None"]
MapFn = Callable[[Mapping[str, Any]], Iterable[Any]]


class ControllerOptions(TypedDict, total=False):
    """The options of :meth:`Builder.with_options`; one left out or None keeps the
    controller's default (see :class:`~kube_runtime.controller.Controller`):
    ``max_concurrent_reconciles`` (1), ``rate_limiter`` (the default limiter),
    ``need_leader_election`` (True), ``cache_sync_timeout`` (120 s), ``sharded`` (True:
    gated by the manager's sharding, if any)."""

    max_concurrent_reconciles: int | None
    rate_limiter: RateLimiter | None
    need_leader_election: bool | None
    cache_sync_timeout: float | None
    sharded: bool | None


class _FunctionReconciler:
    def __init__(self, fn: ReconcileFn) -> None:
        self.fn = fn

    def reconcile(self, request: Request) -> Result | None:
        return self.fn(request)


class Builder:
    """Collects a controller's watches and options; :meth:`complete` registers it."""

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._name: str | None = None
        self._for: tuple[Kind, tuple[Predicate, ...]] | None = None
        self._for_kind: KindLike | None = None  # as given: a model class reads as models
        self._owns: list[tuple[Kind, tuple[Predicate, ...]]] = []
        self._watches: list[tuple[Source, EventHandler, tuple[Predicate, ...]]] = []
        self._filters: list[Predicate] = []
        self._options: dict[str, Any] = {}
        self._sharded = True

    def named(self, name: str) -> Builder:
        self._name = name
        return self

    def for_(self, kind: KindLike, *predicates: Predicate) -> Builder:
        if self._for is not None:
            raise ValueError("for_() may only be called once: a controller reconciles one kind")
        self._for = (as_kind(kind), predicates)
        self._for_kind = kind
        return self

    def owns(self, kind: KindLike, *predicates: Predicate) -> Builder:
        self._owns.append((as_kind(kind), predicates))
        return self

    def watches(
        self,
        kind_or_source: KindLike | Source,
        handler: EventHandler | MapFn,
        *predicates: Predicate,
    ) -> Builder:
        if isinstance(kind_or_source, (Kind, str, type)):
            source: Source = KindSource(self._manager.cache, kind_or_source)
        else:
            source = kind_or_source
        if not isinstance(handler, EventHandler):
            handler = EnqueueRequestsFromMapFunc(handler)
        self._watches.append((source, handler, predicates))
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        self._filters.extend(predicates)
        return self

    def with_options(self, **options: Unpack[ControllerOptions]) -> Builder:
        """Controller options (:class:`ControllerOptions`). ``sharded=False`` on a sharded
        manager: no shard gate, and the controller's ``for_``/``owns`` kinds are not narrowed
        for it (it reconciles on every replica, so it must be idempotent); a kind another
        controller of the manager shards is cached sharded for all of them, one informer per
        kind."""
        given = dict(check_keywords("with_options", options, ControllerOptions))
        sharded = given.pop("sharded", None)
        if sharded is not None:
            self._sharded = sharded
        self._options.update({k: v for k, v in given.items() if v is not None})
        return self

    def build(self, reconciler: Reconciler | ReconcileFn) -> Controller:
        """Create the controller with its watches and add it to the manager.

        Every watched kind is mapped first: one the server does not serve raises
        :class:`~kube_runtime.client.NoKindMatchError` here."""
        inner: Reconciler = (
            reconciler if isinstance(reconciler, Reconciler) else _FunctionReconciler(reconciler)
        )
        if self._for is None and not self._watches:
            raise ValueError("a controller needs for_() or at least one watches()")
        name = self._name or (self._for[0].kind.lower() if self._for else None)
        if not name:
            raise ValueError("name the controller with named() when it has no for_() kind")
        self._resolve_kinds()
        self._check_permissions(name)
        sharding = self._manager.sharding
        if sharding is not None and self._sharded and self._for is not None:
            inner = sharding.gate(
                inner,
                self._for[0],
                tuple(k for k, _ in self._owns),
                reader=self._manager.client,
                writer=self._manager.client,
            )
        options = dict(self._options)
        options.setdefault("clock", getattr(self._manager, "clock", None))
        controller = Controller(name, inner, **options)
        cache = self._manager.cache
        if self._for is not None:
            kind, preds = self._for
            controller.watch(
                KindSource(cache, kind), EnqueueRequestForObject(), *preds, *self._filters
            )
            namespaced = self._manager.is_namespaced(kind)
            for owned, owned_preds in self._owns:
                controller.watch(
                    KindSource(cache, owned),
                    EnqueueRequestForOwner(kind, owner_namespaced=namespaced),
                    *owned_preds,
                    *self._filters,
                )
        elif self._owns:
            raise ValueError("owns() needs for_(): the owner kind is the for_() kind")
        for source, handler, preds in self._watches:
            controller.watch(source, handler, *preds, *self._filters)
        self._manager.add(controller)
        return controller

    def _watched_kinds(self) -> list[KindLike]:
        watched: list[KindLike] = [k for k, _ in ([self._for] if self._for else [])]
        watched += [k for k, _ in self._owns]
        watched += [s.kind for s, _, _ in self._watches if isinstance(s, KindSource)]
        return watched

    def _resolve_kinds(self) -> None:
        """Map every watched kind now, so a kind the server does not serve (by discovery: an
        uninstalled CRD, a built-in kind of another release) fails here with
        :class:`~kube_runtime.client.NoKindMatchError` instead of a cache that never syncs."""
        mapper = self._manager.api_reader.mapper
        for kind in self._watched_kinds():
            mapper.resource_for(kind)

    def _check_permissions(self, name: str) -> None:
        """Inside a ``setup`` decorated with :func:`kube_runtime.rbac.requires`: the declared
        rules must grant what this controller's wiring needs
        (:func:`kube_runtime.rbac.check_controller`: its watches, creating what it owns, the
        ``for_`` kind's ``finalizers`` for the owner references' ``blockOwnerDeletion``)."""
        if rbac.declared() is None:
            return
        mapper = self._manager.api_reader.mapper

        def plural(kind: KindLike) -> tuple[str, str]:
            resource = mapper.resource_for(kind)
            return resource.group, resource.plural

        rbac.check_controller(
            f"controller {name!r}",
            owner=plural(self._for[0]) if self._for is not None else None,
            owned=[plural(k) for k, _ in self._owns],
            watched=[plural(s.kind) for s, _, _ in self._watches if isinstance(s, KindSource)],
        )

    def complete(self, reconciler: Reconciler | ReconcileFn) -> Controller:
        """Same as :meth:`build` (controller-runtime's name for it)."""
        return self.build(reconciler)

    def complete_objects(
        self, fn: ObjectReconcileFn, *, on_invalid: InvalidObjectFn | None = None
    ) -> Controller:
        """Register ``fn(obj)``, a reconciler of the ``for_`` object itself.

        The object comes from the manager's cache as a private copy (a model instance when
        ``for_`` got a resource model class); requests for objects already gone are done
        without a call. A stored object the model class does not accept is read leniently
        (typed where it validates, as stored where not): one being deleted always goes to
        ``fn`` (its finalizer must run); any other goes to ``on_invalid(InvalidObject)`` when
        given, else to ``fn``. See :class:`~kube_runtime.reconcile.ObjectReconciler`.
        """
        if self._for_kind is None:
            raise ValueError("complete_objects() needs for_(): it reads the for_() object")
        if on_invalid is not None and not callable(on_invalid):
            raise TypeError("on_invalid is a function of the InvalidObject")
        return self.build(as_reconciler(self._manager.client, self._for_kind, fn, on_invalid))
