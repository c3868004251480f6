"""The simulated kubelet's store, served by any API server through the framework client.

:class:`ApiStore` implements :class:`~kube_runtime.envtest.kubelet.simulator.KubeletStore`, the calls
the simulated kubelet makes on the embedded ``Store``, the way KWOK does it against a real
cluster:

* **reads** (``try_get``, ``list``) come from three informers (pods, persistentvolumeclaims,
  nodes; cluster-wide), so a sync costs no request;
* **listeners** get an :class:`~kube_runtime.envtest.server.storage.Event` per informer event
  (``new`` is the object; for deletions the last state known);
* **mutate** is a read-modify-write with optimistic concurrency: ``fn`` gets a copy of the
  newest version known (cache, or our own last write when newer), the result is PUT with that
  ``resourceVersion`` (to ``/status`` for ``subresource="status"``), and a 409 re-reads the
  object with a GET and calls ``fn`` again (up to :data:`MUTATE_ATTEMPTS` times). A result
  equal to the input (its ``status`` for status writes) writes nothing. Setting
  ``spec.nodeName`` on an unbound pod (``subresource`` "" or "binding") is sent as a
  ``pods/binding`` POST, the only way kube-apiserver lets a pod be bound;
* **create** and **delete** are the client's; its errors are the
  :class:`~kube_runtime.client.errors.ApiError` family the embedded server raises too, so the
  kubelet handles them alike.

Objects handed out are the informers' shared copies: callers must not mutate them (the
kubelet never does).

``clock`` (None: the current clock when the store is built) is the kubelet's time: its delays,
waits and the timestamps it writes.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Any

from kube_runtime import clock as _clock
from kube_runtime import kinds
from kube_runtime.cache.informer import ResourceEventHandlerFuncs, SharedInformer
from kube_runtime.cache.store import DeletedFinalStateUnknown
from kube_runtime.client import errors as client_errors
from kube_runtime.client import options as client_options
from kube_runtime.envtest.server.errors import api_error
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import (
    ADDED,
    DELETED,
    MODIFIED,
    DeleteOptions,
    Event,
    EventListeners,
    ListResult,
    Stored,
)
from kube_runtime.kinds import Kind
from kube_runtime.meta import Obj

__all__ = ["MUTATE_ATTEMPTS", "ApiStore"]

log = logging.getLogger(__name__)

#: How often ``mutate`` re-reads and retries after a 409 before giving up.
MUTATE_ATTEMPTS = 5
SYNC_TIMEOUT = 30.0

_KINDS: dict[tuple[str, str], Kind] = {
    ("", "pods"): kinds.Pod,
    ("", "persistentvolumeclaims"): kinds.PersistentVolumeClaim,
    ("", "nodes"): kinds.Node,
}


def _cache_key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def _rv(obj: Obj | None) -> int:
    try:
        return int((obj or {}).get("metadata", {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class ApiStore(EventListeners):
    """The kubelet's view of one cluster through ``client`` (see the module docstring).

    Call :meth:`start` (informers synced) before handing it to a kubelet, :meth:`stop` after.
    Listeners are called with the informers' events, outside the store's lock.
    """

    def __init__(self, client: Any, *, clock: _clock.Clock | None = None) -> None:
        self.client = client
        self.registry = Registry()
        #: The kubelet's time (delays, waits, timestamps).
        self.clock: _clock.Clock = _clock.resolve(clock, "ApiStore", wall=True)
        self._lock = threading.Lock()
        self._listeners = []
        self._listeners_lock = self._lock
        self._informers: dict[tuple[str, str], SharedInformer] = {}
        # Our own writes, newer than the cache until its watch catches up.
        self._written: dict[tuple[tuple[str, str], str], Obj] = {}
        for key, kind in _KINDS.items():
            informer = SharedInformer(client, kind, clock=self.clock)
            informer.add_event_handler(self._handler(key))
            self._informers[key] = informer

    # ------------------------------------------------------------- lifecycle

    def start(self, timeout: float = SYNC_TIMEOUT) -> None:
        """Start the informers and wait until each has listed once."""
        for informer in self._informers.values():
            informer.start()
        for key, informer in self._informers.items():
            if not informer.wait_for_sync(timeout):
                raise TimeoutError(f"informer for {key[1]} did not sync in {timeout:.0f}s")

    def stop(self) -> None:
        for informer in self._informers.values():
            informer.stop()

    # ------------------------------------------------------------- listeners

    def _handler(self, key: tuple[str, str]) -> ResourceEventHandlerFuncs:
        def emit(type_: str, obj: Obj) -> None:
            info = self._info(key)
            if type_ == DELETED:
                meta = obj.get("metadata") or {}
                with self._lock:
                    self._written.pop((key, _cache_key(meta.get("namespace"), meta["name"])), None)
            event = Event(type_, info, Stored(obj), None, _rv(obj))
            with self._lock:
                listeners = list(self._listeners)
            for fn in listeners:
                fn(event)

        def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            emit(DELETED, obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj)

        return ResourceEventHandlerFuncs(
            on_add=lambda obj: emit(ADDED, obj),
            on_update=lambda _old, new: emit(MODIFIED, new),
            on_delete=on_delete,
        )

    # ----------------------------------------------------------------- reads

    def _info(self, key: tuple[str, str]) -> ResourceInfo:
        info = self.registry.by_key(*key)
        if info is None:
            raise LookupError(f"no resource {key}")
        return info

    def _informer(self, info: ResourceInfo) -> SharedInformer:
        informer = self._informers.get(info.key)
        if informer is None:
            raise LookupError(f"ApiStore does not serve {info.plural}.{info.group}")
        return informer

    def _newest(self, info: ResourceInfo, namespace: str | None, name: str) -> Obj | None:
        key = _cache_key(namespace, name)
        cached = self._informer(info).indexer.get(key)
        with self._lock:
            written = self._written.get((info.key, key))
        if written is None or cached is None:
            return cached
        same = written["metadata"].get("uid") == cached["metadata"].get("uid")
        return written if same and _rv(written) > _rv(cached) else cached

    def try_get(self, info: ResourceInfo, namespace: str | None, name: str) -> Stored | None:
        obj = self._newest(info, namespace, name)
        return None if obj is None else Stored(obj)

    def list(self, info: ResourceInfo, namespace: str | None) -> ListResult:
        items = self._informer(info).indexer.list()
        if namespace is not None:
            items = [o for o in items if o["metadata"].get("namespace") == namespace]
        return ListResult([Stored(o) for o in items], 0, None, None)

    # ---------------------------------------------------------------- writes

    def _remember(self, info: ResourceInfo, obj: Obj) -> Stored:
        meta = obj["metadata"]
        with self._lock:
            self._written[(info.key, _cache_key(meta.get("namespace"), meta["name"]))] = obj
        return Stored(obj)

    def create(self, info: ResourceInfo, namespace: str | None, obj: Obj) -> Stored:
        created = self.client.create(obj, namespace=namespace)
        return self._remember(info, created)

    def mutate(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        fn: Callable[[Obj], Obj],
        *,
        subresource: str = "",
    ) -> Stored:
        """Read-modify-write ``fn`` with optimistic concurrency (see the module docstring)."""
        kind = _KINDS[info.key]
        current = self._newest(info, namespace, name)
        for _ in range(MUTATE_ATTEMPTS):
            if current is None:
                current = self.client.get(kind, name, namespace)
            desired = fn(copy.deepcopy(current))
            if subresource == "status":
                unchanged = desired.get("status") == current.get("status")
            else:
                unchanged = desired == current
            if unchanged:
                return Stored(current)
            try:
                return self._remember(info, self._put(kind, current, desired, subresource))
            except client_errors.Conflict:
                log.debug("%s %s/%s: conflict, re-reading", info.plural, namespace, name)
                current = None
        raise api_error(409, f"{info.plural} {name!r}: still conflicting after retries")

    def _put(self, kind: Kind, current: Obj, desired: Obj, subresource: str) -> Obj:
        meta = desired["metadata"]
        node = (desired.get("spec") or {}).get("nodeName")
        if (
            kind == kinds.Pod
            and subresource in ("", "binding")
            and node
            and not (current.get("spec") or {}).get("nodeName")
        ):
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": meta["name"], "uid": meta.get("uid")},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            }
            self.client.request(
                "POST",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding",
                body=binding,
            )
            bound: Obj = self.client.get(kind, meta["name"], meta.get("namespace"))
            return bound
        if subresource == "status":
            result: Obj = self.client.update_status(desired)
            return result
        if subresource:
            raise ValueError(f"ApiStore cannot write subresource {subresource!r}")
        updated: Obj = self.client.update(desired)
        return updated

    def delete(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        opts: DeleteOptions | None = None,
    ) -> tuple[Stored, bool]:
        """DELETE with the options the kubelet uses (uid precondition, grace period)."""
        opts = opts or DeleteOptions()
        options = client_options.DeleteOptions(
            opts.propagation, opts.grace_seconds, opts.uid, opts.resource_version, opts.dry_run
        )
        body = self.client.delete(_KINDS[info.key], name, namespace, **dataclasses.asdict(options))
        gone = body.get("kind") == "Status" or not (body.get("metadata") or {}).get(
            "deletionTimestamp"
        )
        return Stored(body), gone
