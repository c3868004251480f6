"""How each bundled workload controller registers with a manager: one place for the builder
chain the StatefulSet, CloneSet, Deployment and ReplicaSet controllers share, and for the
resource their webhooks are configured for."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kube_runtime.builder import Builder
from kube_runtime.client.mapping import Resource
from kube_runtime.kinds import Kind, KindLike
from kube_runtime.predicates import Predicate
from kube_runtime.reconcile import Reconciler

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client, Reader
    from kube_runtime.controller import Controller
    from kube_runtime.events import Recorder
    from kube_runtime.manager import Manager

__all__ = ["collaborators", "namespaced_resource", "register"]

MapFn = Callable[[Mapping[str, Any]], Iterable[Any]]


def collaborators(manager: Manager, component: str) -> tuple[Client, Reader, Recorder]:
    """What each bundled reconciler takes first, from ``manager``: the client of its writes
    (and the reads that must be fresh: ``manager.api_reader``), the reader of everything
    else (the cache-backed ``manager.client``) and the event recorder of ``component``."""
    return manager.api_reader, manager.client, manager.get_event_recorder(component)


def register(
    manager: Manager,
    reconciler: Reconciler,
    *,
    name: str,
    kind: KindLike,
    owns: Sequence[KindLike | tuple[KindLike, Predicate]],
    watches: Sequence[tuple[KindLike, MapFn] | tuple[KindLike, MapFn, Predicate]],
    workers: int,
) -> Controller:
    """Register ``reconciler`` as the controller ``name`` of ``kind`` with ``manager``: it
    owns the kinds of ``owns`` (events of an object they control wake it), each ``(kind,
    map_fn)`` of ``watches`` maps that kind's events to requests (an orphan's adopters,
    :class:`~kube_runtime.handlers.SelectingOwners`, and the like; ``(kind, map_fn,
    predicate)``: only the events ``predicate`` lets through), ``workers`` syncs at a
    time. An entry ``(kind, predicate)`` of ``owns``: only the events ``predicate`` lets
    through. Returns the controller."""
    builder = Builder(manager).named(name).for_(kind)
    for owned in owns:
        if isinstance(owned, tuple):
            builder = builder.owns(owned[0], owned[1])
        else:
            builder = builder.owns(owned)
    for watched, map_fn, *predicates in watches:
        builder = builder.watches(watched, map_fn, *predicates)
    return builder.with_options(max_concurrent_reconciles=workers).complete(reconciler)


def namespaced_resource(kind: Kind, plural: str) -> Resource:
    """The namespaced resource ``plural`` of ``kind`` (a webhook configuration's rule)."""
    return Resource(
        group=kind.group, version=kind.version, kind=kind.kind, plural=plural, namespaced=True
    )
