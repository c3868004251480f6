"""Event handlers: turn an object event into reconcile requests (controller-runtime ``pkg/handler``).

A handler gets each event that passed the predicates plus the controller's queue, and adds
:class:`~kube_runtime.reconcile.Request` s to it. The queue deduplicates, so enqueueing the
same request many times is cheap and correct. Objects are the cache's shared dicts: read only.

* :class:`EnqueueRequestForObject` -- the object itself (``for_``).
* :class:`EnqueueRequestForOwner` -- the object's owner of a given kind (``owns``), by default
  only the controller owner; on update both the old and the new owner are enqueued, so a pod
  that changes hands wakes both sets.
* :class:`EnqueueRequestsFromMapFunc` -- whatever a function maps the object to (``watches``).

:class:`SelectingOwners` is such a function for the workload controllers: an object without
a controller (an orphan pod, ReplicaSet, ...) maps to the workloads of its namespace whose
selector matches it, the ones that could adopt it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from kube_runtime import meta
from kube_runtime.client.interfaces import Reader
from kube_runtime.kinds import KindLike, as_kind
from kube_runtime.meta import ObjView as Obj
from kube_runtime.reconcile import Request
from kube_runtime.selectors import LabelSelector, objects_selecting

__all__ = [
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventHandler",
    "Funcs",
    "Queue",
    "SelectingOwners",
]


class Queue(Protocol):
    """The part of the work queue a handler uses."""

    def add(self, item: Any) -> None: ...


class EventHandler:
    """Base handler: every event enqueues nothing. Override the events you map."""

    def create(self, obj: Obj, queue: Queue) -> None:
        pass

    def update(self, old: Obj, new: Obj, queue: Queue) -> None:
        pass

    def delete(self, obj: Obj, queue: Queue) -> None:
        pass

    def generic(self, obj: Obj, queue: Queue) -> None:
        pass


class _PerObject(EventHandler):
    """A handler defined by one function from an object to its requests."""

    def requests(self, obj: Obj) -> Iterable[Request]:
        raise NotImplementedError

    def _add(self, queue: Queue, *objs: Obj) -> None:
        seen: set[Request] = set()
        for obj in objs:
            if not obj:
                continue
            for request in self.requests(obj):
                if request not in seen:
                    seen.add(request)
                    queue.add(request)

    def create(self, obj: Obj, queue: Queue) -> None:
        self._add(queue, obj)

    def update(self, old: Obj, new: Obj, queue: Queue) -> None:
        self._add(queue, old, new)

    def delete(self, obj: Obj, queue: Queue) -> None:
        self._add(queue, obj)

    def generic(self, obj: Obj, queue: Queue) -> None:
        self._add(queue, obj)


class EnqueueRequestForObject(_PerObject):
    """Enqueue the object's own name (on update, the new object's: names never change)."""

    def requests(self, obj: Obj) -> Iterable[Request]:
        return (Request.for_object(obj),)

    def update(self, old: Obj, new: Obj, queue: Queue) -> None:
        self._add(queue, new or old)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


class EnqueueRequestForOwner(_PerObject):
    """Enqueue the owners of kind ``owner_kind`` named in the object's ownerReferences.

    Owners match by API group and kind (the version is ignored, as upstream). With
    ``only_controller`` (the default, as ``owns``) only the reference with ``controller: true``
    counts. The owner is assumed to live in the object's namespace (owner references cannot
    cross namespaces); a cluster-scoped owner is requested without a namespace when
    ``owner_namespaced`` is False.
    """

    def __init__(
        self, owner_kind: KindLike, *, only_controller: bool = True, owner_namespaced: bool = True
    ) -> None:
        kind = as_kind(owner_kind)
        self.group, self.kind = kind.group, kind.kind
        self.only_controller = only_controller
        self.owner_namespaced = owner_namespaced

    def requests(self, obj: Obj) -> Iterable[Request]:
        # Every watch event of an owned kind: a plain dict read (an accessor costs ~4x).
        metadata = obj.get("metadata") or {}
        namespace = metadata.get("namespace") if self.owner_namespaced else None
        out = []
        for ref in metadata.get("ownerReferences") or ():
            if self.only_controller and not ref.get("controller"):
                continue
            if ref.get("kind") == self.kind and _group(ref.get("apiVersion", "")) == self.group:
                out.append(Request(ref.get("name", ""), namespace or None))
        return out


class EnqueueRequestsFromMapFunc(_PerObject):
    """Enqueue whatever ``fn(obj)`` returns (requests, or ``(name, namespace)`` pairs).

    On update both the old and the new object are mapped, so a change that moves an object
    from one target to another wakes both.
    """

    def __init__(self, fn: Callable[[Obj], Iterable[Request | tuple[str, str | None]]]) -> None:
        self.fn = fn

    def requests(self, obj: Obj) -> Iterable[Request]:
        for item in self.fn(obj) or ():
            yield item if isinstance(item, Request) else Request(*item)


class SelectingOwners:
    """The map function (``Builder.watches(kind, SelectingOwners(reader, owner_kind))``) of a
    workload controller that adopts objects by selector (upstream's ``getPodStatefulSets``,
    ``getDeploymentsForReplicaSet``, kruise's ``getPodCloneSets``): an object without a
    controller owner wakes the ``owner_kind`` objects of its namespace, listed through
    ``reader`` (the cache), whose ``spec.selector`` matches its labels
    (:func:`~kube_runtime.selectors.objects_selecting`: a missing, empty or invalid
    selector matches nothing); an object with a controller wakes none (its owner hears of it
    through ``owns``). ``selector_of(owner)`` gives an owner's parsed selector (None:
    invalid) where the controller keeps them parsed per generation."""

    def __init__(
        self,
        reader: Reader,
        owner_kind: KindLike,
        *,
        selector_of: Callable[[Obj], LabelSelector | None] | None = None,
    ) -> None:
        self.reader = reader
        self.owner_kind = owner_kind
        self.selector_of = selector_of

    def selecting(self, obj: Obj) -> list[Request]:
        """The owners of ``obj``'s namespace whose selector matches its labels, whether or
        not ``obj`` has a controller."""
        labels = meta.labels(obj)
        if not labels:
            return []
        owners = self.reader.list(self.owner_kind, meta.namespace(obj))["items"]
        found = objects_selecting(owners, labels, selector_of=self.selector_of)
        return [Request.for_object(owner) for owner in found]

    def __call__(self, obj: Obj) -> list[Request]:
        """The owners that could adopt ``obj``: none when it has a controller."""
        return [] if meta.has_controller(obj) else self.selecting(obj)


class Funcs(EventHandler):
    """A handler from optional functions (each gets the event's objects and the queue)."""

    def __init__(
        self,
        create: Callable[[Obj, Queue], None] | None = None,
        update: Callable[[Obj, Obj, Queue], None] | None = None,
        delete: Callable[[Obj, Queue], None] | None = None,
        generic: Callable[[Obj, Queue], None] | None = None,
    ) -> None:
        self._create, self._update, self._delete, self._generic = create, update, delete, generic

    def create(self, obj: Obj, queue: Queue) -> None:
        if self._create:
            self._create(obj, queue)

    def update(self, old: Obj, new: Obj, queue: Queue) -> None:
        if self._update:
            self._update(old, new, queue)

    def delete(self, obj: Obj, queue: Queue) -> None:
        if self._delete:
            self._delete(obj, queue)

    def generic(self, obj: Obj, queue: Queue) -> None:
        if self._generic:
            self._generic(obj, queue)
