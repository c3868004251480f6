"""Shared informer: one reflector feeding one indexed store and any number of event handlers.

Contract (client-go ``tools/cache/shared_informer.go``):

* The reflector thread applies every change to :attr:`SharedInformer.indexer` first, then
  queues the matching notification to every handler. The changes of one batch of watch
  events (one socket read's) reach the store one by one and their notifications are queued
  together after the batch, one wake-up per handler; store updates, queueing and handler
  registration take one lock, and registration first queues what is pending, so a handler
  sees a consistent sequence: the objects cached when it registered, then every later change.
* Each handler has its own unbounded buffer and thread (client-go's ``processorListener``):
  a slow handler delays only itself, never the reflector or other handlers. Exceptions from
  a handler are logged with the object key and dropped.
* ``on_add(obj, is_in_initial_list)``: objects of the first list carry
  ``is_in_initial_list=True``; so do the synthetic adds a handler registered later receives
  for every object already cached. Watch events and later relists give False.
* ``on_update(old, new)`` for a changed object. ``on_delete(obj)`` with the final state
  from the watch, or a :class:`~kube_runtime.cache.store.DeletedFinalStateUnknown`
  tombstone for an object a relist no longer contains.
* A relist (after 410 Gone) compares each listed object with the cached one by
  resourceVersion: new -> add, different RV -> update, same RV -> nothing. client-go queues
  a "Replaced" delta for every object and its informer turns an unchanged one into a resync
  notification for handlers whose resync is due; here the periodic resync covers that case,
  so handlers are not woken by objects that did not change.
* Resync: every ``resync_period`` seconds (per handler, defaulting to the informer's),
  ``on_update(obj, obj)`` for every cached object, to that handler only.
* Time: every wait and timer (resyncs, the reflector's backoff, the handlers' buffers,
  :meth:`SharedInformer.wait_for_sync`) runs on the informer's
  :class:`~kube_runtime.clock.Clock` (``clock=``; None: the clock current when it is made).
* The objects handed to handlers are the cache's shared dicts: do not mutate them.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypedDict, Unpack

from kube_runtime import metrics
from kube_runtime.cache.reflector import BackoffPolicy, ListerWatcher, Reflector
from kube_runtime.cache.store import (
    CacheMutationError,
    CompactIndexer,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    object_key,
)
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import Kind, KindLike, as_kind
from kube_runtime.meta import Obj

__all__ = [
    "LAST_APPLIED_ANNOTATION",
    "HandlerRegistration",
    "ListWatchOptions",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "SharedInformer",
    "Transform",
    "strip_managed_fields",
]

log = logging.getLogger(__name__)


# How often the mutation detector re-checks the whole store (client-go: every second).
_MUTATION_CHECK_PERIOD = 1.0
_STOP_JOIN_TIMEOUT = 5.0


class ResourceEventHandler(Protocol):
    """What an informer calls; each method runs on the handler's own thread."""

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Obj, new: Obj) -> None: ...

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None: ...


class ResourceEventHandlerFuncs:
    """A handler from plain functions; a missing one ignores its events.

    As client-go's ``ResourceEventHandlerFuncs``, ``on_add`` takes the object only; implement
    :class:`ResourceEventHandler` to see ``is_in_initial_list``.
    """

    def __init__(
        self,
        on_add: Callable[[Obj], Any] | None = None,
        on_update: Callable[[Obj, Obj], Any] | None = None,
        on_delete: Callable[[Obj | DeletedFinalStateUnknown], Any] | None = None,
    ) -> None:
        self._on_add = on_add
        self._on_update = on_update
        self._on_delete = on_delete

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if self._on_add is not None:
            self._on_add(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        if self._on_update is not None:
            self._on_update(old, new)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if self._on_delete is not None:
            self._on_delete(obj)


# Notification tags (tuples keep the per-event cost at one small allocation).
_ADD, _UPDATE, _DELETE, _SYNCED = range(4)
_Notification = tuple[int, Any, Any]


class HandlerRegistration:
    """One registered handler: its buffer, its thread and its resync schedule.

    :meth:`has_synced` is True once the handler has processed every notification of the
    informer's initial state (the objects cached when it registered, or the first list).
    Its waits run on ``clock`` (the informer's; None: the clock current now).
    """

    def __init__(
        self,
        handler: ResourceEventHandler,
        resync_period: float | None,
        name: str,
        clock: Clock | None = None,
    ) -> None:
        clock = resolve(clock, "HandlerRegistration")
        self.handler = handler
        self.resync_period = resync_period
        self.next_resync = clock.monotonic() + resync_period if resync_period else 0.0
        self._name = name
        self._buffer: deque[_Notification] = deque()
        self._cond = clock.condition(threading.Lock())
        self._stopped = False
        # The handler thread waits on _cond for an empty buffer (set and cleared under
        # _cond): a push wakes it only then, and once.
        self._asleep = False
        self._synced = clock.event()
        self._thread: threading.Thread | None = None

    def has_synced(self) -> bool:
        """True once the handler has processed the informer's initial state."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced`; False when ``timeout`` seconds passed first."""
        return self._synced.wait(timeout)

    def pending(self) -> int:
        """Notifications queued and not yet handled."""
        return len(self._buffer)

    # --- informer side -----------------------------------------------------------------------

    def _push(self, notification: _Notification) -> None:
        with self._cond:
            self._buffer.append(notification)
            if self._asleep:
                self._asleep = False
                self._cond.notify()

    def _push_many(self, notifications: list[_Notification]) -> None:
        """Queue several notifications in order with at most one wake-up of the handler
        thread: none while it is awake (it drains the buffer before it waits again)."""
        with self._cond:
            self._buffer.extend(notifications)
            if self._asleep:
                self._asleep = False
                self._cond.notify()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def _stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _join(self, timeout: float) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # --- handler thread ----------------------------------------------------------------------

    def _run(self) -> None:
        buffer = self._buffer
        handler = self.handler
        on_add, on_update, on_delete = handler.on_add, handler.on_update, handler.on_delete
        while True:
            with self._cond:
                while not buffer and not self._stopped:
                    self._asleep = True
                    self._cond.wait()
                self._asleep = False
            # Drain without the lock: the informer appends under it, this thread alone pops
            # (deque appends and pops are atomic), and it waits only on an empty buffer.
            while buffer:
                if self._stopped:
                    return
                tag, a, b = buffer.popleft()
                try:
                    if tag == _ADD:
                        on_add(a, b)
                    elif tag == _UPDATE:
                        on_update(a, b)
                    elif tag == _DELETE:
                        on_delete(a)
                    else:
                        self._synced.set()
                except Exception:
                    log.exception("%s: event handler failed on %s", self._name, _describe(a))
            if self._stopped:
                return


def _next_tick(now: float, period: float) -> float:
    """The first multiple of ``period`` after ``now``: the mutation checks of every informer
    fall on the same instants, so that a virtual clock moves once per period for all."""
    return (math.floor(now / period) + 1) * period


def _describe(obj: Any) -> str:
    try:
        return object_key(obj)
    except Exception:
        return repr(type(obj))


def _resource_version(obj: Obj) -> Any:
    # Every event: a plain dict read (a kube_runtime.meta accessor costs about four times as much).
    return (obj.get("metadata") or {}).get("resourceVersion")


LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"

Transform = Callable[[Obj], Obj]
"""A function applied to every object before it enters an informer's store (client-go's
``TransformFunc``): it returns what is stored, and must not change its argument in place
(the object may be shared with its source)."""


def strip_managed_fields(obj: Obj) -> Obj:
    """The default :data:`Transform` (controller-runtime's ``TransformStripManagedFields``,
    plus kubectl's last-applied annotation): ``metadata.managedFields`` and the
    ``kubectl.kubernetes.io/last-applied-configuration`` annotation are dropped, often most
    of a small object's size and read by no controller. Writing a cached object back is
    safe: an update without ``managedFields`` keeps the server's."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return obj
    annotations = metadata.get("annotations")
    last_applied = isinstance(annotations, dict) and LAST_APPLIED_ANNOTATION in annotations
    if "managedFields" not in metadata and not last_applied:
        return obj
    # Shallow copies of what changes: the object may be shared with its source.
    metadata = {k: v for k, v in metadata.items() if k != "managedFields"}
    if last_applied and isinstance(annotations, dict):
        kept = {k: v for k, v in annotations.items() if k != LAST_APPLIED_ANNOTATION}
        if kept:
            metadata["annotations"] = kept
        else:
            del metadata["annotations"]
    return {**obj, "metadata": metadata}


class _Sink:
    """The reflector's view of an informer (keeps replace/add/update/delete off its API);
    objects go through the informer's transform first."""

    def __init__(self, informer: SharedInformer, transform: Transform | None) -> None:
        self._informer = informer
        self._transform = transform
        # add/update: the informer's upsert with the transform bound (a C-level partial: no
        # Python frame of its own on the path of every watch event).
        upsert: Callable[[Obj], None] = functools.partial(informer._upsert_with, transform)
        self.add = self.update = upsert

    def replace(self, objs: list[Obj], resource_version: str) -> None:
        transform = self._transform
        self._informer._on_replace(objs if transform is None else [transform(o) for o in objs])

    def delete(self, obj: Obj) -> None:
        self._informer._on_delete(obj if self._transform is None else self._transform(obj))

    def flush(self) -> None:
        self._informer._flush()

    @property
    def shares_subtrees(self) -> bool:
        """Whether the informer's store shares equal sub-objects (the reflector then decodes
        watch events with :func:`~kube_runtime.cache.store.decode_watch_event`)."""
        return self._informer.indexer.shares_subtrees


class ListWatchOptions(TypedDict, total=False):
    """What a :class:`SharedInformer` lists and watches, and how: handed on to its
    :class:`~kube_runtime.cache.reflector.Reflector` as they are (absent: the reflector's
    defaults)."""

    #: Only this namespace's objects (None: every namespace).
    namespace: str | None
    label_selector: str | dict[str, str] | None
    field_selector: str | None
    #: Objects per page of the initial list (default 500).
    page_size: int
    #: The waits between failed list/watch attempts.
    backoff: BackoffPolicy | None
    #: The shortest server-side watch timeout asked for (seconds; default 300).
    min_watch_timeout: float


class SharedInformer:
    """List+watch one kind into :attr:`indexer` and fan events out to handlers.

    ``indexers`` are added to the built-in indexes. What it lists and watches, and how
    (:class:`ListWatchOptions`: namespace, selectors, page size, backoff, shortest watch
    timeout) go to its :class:`~kube_runtime.cache.reflector.Reflector`. ``transform`` is
    applied to every object before it is stored (default :func:`strip_managed_fields`; None keeps
    objects as the API sends them). ``compact=True`` stores objects as compact JSON
    (:class:`~kube_runtime.cache.store.CompactIndexer`). Start with :meth:`start`
    (idempotent), stop with :meth:`stop` (an informer is not restartable). ``clock`` (a
    :class:`~kube_runtime.clock.Clock`; None: the clock current when the informer is made)
    runs its resyncs, waits and the reflector's.
    """

    def __init__(
        self,
        client: ListerWatcher,
        kind: KindLike,
        *,
        resync_period: float | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = strip_managed_fields,
        compact: bool = False,
        clock: Clock | None = None,
        **list_watch: Unpack[ListWatchOptions],
    ) -> None:
        self._clock = resolve(clock, "SharedInformer")
        self.kind: Kind = as_kind(kind)
        self.namespace = list_watch.get("namespace")
        self.resync_period = resync_period
        self.indexer: Indexer = CompactIndexer(indexers) if compact else Indexer(indexers)
        self.reflector = Reflector(
            client, self.kind, _Sink(self, transform), clock=self._clock, **list_watch
        )
        # client-go's blockDeltas: store updates, distribution and registration are serial.
        self._lock = threading.RLock()
        self._listeners: list[HandlerRegistration] = []
        # Notifications of changes already in the store, not yet queued to the handlers:
        # the reflector's batch of watch events is handed on at once by _flush (under the
        # lock; registration and resync flush first, so every handler sees changes in order).
        self._undelivered: list[_Notification] = []
        self._synced = self._clock.event()
        self._stop = self._clock.event()
        # Wakes the housekeeping thread: stop, the first sync, a handler with a resync period.
        self._wake = self._clock.event()
        self._started = False
        self._threads: list[threading.Thread] = []
        self._objects_metric = metrics.INFORMER_OBJECTS.labels(kind=str(self.kind))

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the reflector and handler threads (no-op when already started)."""
        with self._lock:
            if self._started:
                return
            if self._stop.is_set():
                raise RuntimeError(f"informer for {self.kind} was stopped; create a new one")
            self._started = True
            for listener in self._listeners:
                listener._start()
            self._spawn(self.reflector.run, f"reflector-{self.kind}", self._stop)
            self._spawn(self._housekeeping, f"informer-housekeeping-{self.kind}")
        log.debug("%s: informer started", self.kind)

    def stop(self) -> None:
        """Stop the reflector (closing its watch) and every handler thread, then join them."""
        with self._lock:
            self._stop.set()
            self._wake.set()
            listeners = list(self._listeners)
        self.reflector.close_watch()
        for listener in listeners:
            listener._stop()
        current = threading.current_thread()
        for thread in self._threads:
            if thread is not current:
                thread.join(_STOP_JOIN_TIMEOUT)
        for listener in listeners:
            listener._join(_STOP_JOIN_TIMEOUT)
        log.debug("%s: informer stopped", self.kind)

    @property
    def clock(self) -> Clock:
        """The clock the informer's resyncs and waits run on."""
        return self._clock

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return self._started

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stop.is_set()

    def has_synced(self) -> bool:
        """True once the first list is in the store."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until synced; False when ``timeout`` seconds passed first."""
        return self._synced.wait(timeout)

    @property
    def last_sync_resource_version(self) -> str | None:
        """The resourceVersion of the reflector's last list or event."""
        return self.reflector.last_sync_resource_version

    # --- handlers ----------------------------------------------------------------------------

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> HandlerRegistration:
        """Register ``handler``; it first receives an add for every object already cached.

        ``resync_period`` defaults to the informer's. Returns the registration (its
        :meth:`~HandlerRegistration.has_synced` tells when the initial state was handled).
        """
        period = resync_period if resync_period is not None else self.resync_period
        with self._lock:
            if self._stop.is_set():
                raise RuntimeError(f"informer for {self.kind} was stopped; handler not added")
            name = f"handler-{self.kind}-{len(self._listeners)}"
            listener = HandlerRegistration(handler, period or None, name, self._clock)
            self._flush()
            self._listeners.append(listener)
            for obj in self.indexer.list():
                listener._push((_ADD, obj, True))
            if self._synced.is_set():
                listener._push((_SYNCED, None, None))
            if self._started:
                listener._start()
            if listener.resync_period:
                self._wake.set()  # the housekeeping thread schedules its resyncs
        return listener

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        """Unregister a handler and stop its thread (events still queued are dropped)."""
        with self._lock:
            if registration in self._listeners:
                self._listeners.remove(registration)
        registration._stop()

    # --- the reflector's sink (reflector thread) -----------------------------------------------

    def _on_replace(self, objs: list[Obj]) -> None:
        with self._lock:
            old = self.indexer.replace(objs)
            initial = not self._synced.is_set()
            for obj in objs:
                prev = old.pop(object_key(obj), None)
                if prev is None:
                    self._distribute((_ADD, obj, initial))
                elif _resource_version(prev) != _resource_version(obj):
                    self._distribute((_UPDATE, prev, obj))
            for key, prev in old.items():
                self._distribute((_DELETE, DeletedFinalStateUnknown(key, prev), None))
            if initial:
                self._synced.set()
                self._wake.set()  # resyncs wait for the first list
                self._distribute((_SYNCED, None, None))
            self._flush()
            self._objects_metric.set(len(self.indexer))

    def _on_upsert(self, obj: Obj) -> None:
        self._upsert_with(None, obj)

    def _upsert_with(self, transform: Transform | None, obj: Obj) -> None:
        """Store ``transform(obj)`` (``obj`` when None) and note its notification."""
        if transform is not None:
            obj = transform(obj)
        with self._lock:
            prev = self.indexer.update(obj)
            if prev is None:
                self._undelivered.append((_ADD, obj, False))
            else:
                self._undelivered.append((_UPDATE, prev, obj))

    def _on_delete(self, obj: Obj) -> None:
        with self._lock:
            prev = self.indexer.delete(obj)
            if prev is None:
                return  # never seen (as client-go's DeltaFIFO): nothing to tell handlers
            self._undelivered.append((_DELETE, obj, None))

    def _distribute(self, notification: _Notification) -> None:
        self._undelivered.append(notification)

    def _flush(self) -> None:
        """Queue the undelivered notifications to every handler (one wake-up each) and
        update the object-count gauge; the reflector calls it after each batch."""
        with self._lock:
            pending = self._undelivered
            if not pending:
                return
            self._undelivered = []
            for listener in self._listeners:
                listener._push_many(pending)
            self._objects_metric.set(len(self.indexer))

    # --- resync and the mutation detector ------------------------------------------------------

    def _housekeeping(self) -> None:
        """Deliver due resyncs; run the mutation detector's periodic check when it is on.
        Sleeps until the next of those is due, or until woken (:attr:`_wake`): no polling, so
        that on a virtual clock the time jumps straight to the next resync."""
        monotonic = self._clock.monotonic
        wake = self._wake
        next_check = _next_tick(monotonic(), _MUTATION_CHECK_PERIOD)
        while not self._stop.is_set():
            wake.clear()  # before reading the state: a later set() ends the wait below
            now = monotonic()
            synced = self._synced.is_set()
            with self._lock:
                self._flush()  # changes before the resync reach handlers before it
                due = [
                    listener
                    for listener in self._listeners
                    if listener.resync_period and now >= listener.next_resync
                ]
                if due and synced:
                    objs = self.indexer.list()
                    for listener in due:
                        for obj in objs:
                            listener._push((_UPDATE, obj, obj))
                        listener.next_resync = now + (listener.resync_period or 0.0)
                # Before the first list, resyncs wait for it (the sync wakes this thread).
                periods = (
                    [x.next_resync - now for x in self._listeners if x.resync_period]
                    if synced
                    else []
                )
            if self.indexer.mutation_detector:
                if now >= next_check:
                    next_check = _next_tick(now, _MUTATION_CHECK_PERIOD)
                    try:
                        self.indexer.check_mutations()
                    except CacheMutationError as exc:
                        log.error("%s: %s", self.kind, exc)
                periods.append(next_check - now)
            wake.wait(max(min(periods), 0.01) if periods else None)

    def _spawn(self, target: Callable[..., None], name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def __repr__(self) -> str:
        scope = f" in {self.namespace}" if self.namespace else ""
        return f"SharedInformer({self.kind}{scope}, {len(self.indexer)} objects)"
