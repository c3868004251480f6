"""The skeleton the embedded cluster's background controllers share (garbage collector,
pvc-protection, CRD finalizer): a store listener that only enqueues, one worker thread that
handles the queued items, and idleness tracking for tests; plus the write the controllers
make most, editing an object's metadata unless it went away meanwhile.

The queue de-duplicates: an item already waiting is not queued again (the handlers are
level-based, reading the store when they run, so one look covers every event that asked for
it). An item is taken off the pending set before it is handled, so an event arriving while it
is being handled queues it once more.

The worker runs on the store's clock (:attr:`Store.clock`): its thread waits on a condition
of that clock, so under a :class:`~kube_runtime.clock.SimClock` an idle worker does not keep
virtual time from moving.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from kube_runtime.clock import Clock, RealClock, start_detached
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import Event, Obj, Store, Stored

T = TypeVar("T", bound=Hashable)


def start_thread(thread: threading.Thread, clock: Clock) -> None:
    """Start a thread of the embedded cluster that runs on ``clock``. On the real clock it is
    started outside any simulation (:func:`~kube_runtime.clock.start_detached`): its waits are
    real, and as a participant of a test's :class:`~kube_runtime.clock.SimClock` (a cluster
    started by one) it would keep virtual time from moving. On another clock it starts as
    usual, a participant when started by one."""
    if isinstance(clock, RealClock):
        start_detached(thread)
    else:
        thread.start()


class StoreWorker(Generic[T]):
    """A store listener plus one daemon thread, between :meth:`start` and :meth:`stop`.

    Subclasses set :attr:`thread_name` and :attr:`description` and supply :meth:`_on_event`
    (called under the store lock: only :meth:`enqueue`), :meth:`_handle` (on the worker
    thread) and optionally :meth:`_seed` (under the store lock at start, after the listener is
    registered, to enqueue work for existing objects). A failing :meth:`_handle` is logged on
    the subclass's module logger and the worker goes on.
    """

    thread_name = "embedded-worker"
    #: What a failure log names: ``"<description> failed on <item>"``.
    description = "worker"
    #: The resource keys (``(group, plural)``) whose events :meth:`_on_event` looks at (None:
    #: every kind's): the store does not call it for the others.
    event_kinds: frozenset[tuple[str, str]] | None = None

    def __init__(self, store: Store) -> None:
        self.store = store
        clock = store.clock
        self._pending_lock = threading.Lock()
        # What the worker takes next (None: stop); the condition says something was queued.
        self._queue: deque[T | None] = deque()
        self._queued = clock.condition(self._pending_lock)
        self._sleeping = False  # the worker waits on _queued (a notify is needed)
        self._pending: set[T] = set()  # queued, not yet taken by the worker
        self._outstanding = 0  # items queued or being handled
        self._idle = clock.event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._log = logging.getLogger(type(self).__module__)

    # ------------------------------------------------------------ subclasses

    def _on_event(self, event: Event) -> None:
        """Store listener (under the store lock): enqueue what ``event`` asks to look at."""
        raise NotImplementedError

    def _seed(self) -> None:
        """Enqueue work for existing objects (at start, under the store lock)."""

    def _handle(self, item: T) -> None:
        raise NotImplementedError

    def _describe(self, item: T) -> str:
        return str(item)

    # ----------------------------------------------------------------- writes

    @staticmethod
    def _ignore_gone(fn: Callable[[], Any]) -> None:
        """Call ``fn``; a 404 or 409 (the object went or changed meanwhile) is no error."""
        try:
            fn()
        except ApiError as e:
            if e.code not in (404, 409):
                raise

    def _edit_metadata(self, info: ResourceInfo, meta: Obj, edit: Callable[[Obj], None]) -> None:
        """Apply ``edit`` to the metadata of the object ``meta`` is from, unless it has gone
        or been replaced (another uid) meanwhile; the write needs no resourceVersion."""
        uid = meta.get("uid")

        def change(current: Obj) -> Obj:
            m = current["metadata"]
            if m.get("uid") != uid:
                return current
            edit(m)
            m.pop("resourceVersion", None)
            return current

        self._ignore_gone(
            lambda: self.store.mutate(info, meta.get("namespace"), meta["name"], change)
        )

    def _keep_protected(
        self, info: ResourceInfo, stored: Stored, finalizer: str, in_use: Callable[[Obj], bool]
    ) -> None:
        """A protection controller's step for one object (kube-controller-manager's
        pvc-protection and pv-protection; call with the store lock held): drop ``finalizer``
        when the object is being deleted and no longer ``in_use(object)``, add it when the object
        is live and lacks it, else nothing."""
        meta = stored.meta
        finalizers = list(meta.get("finalizers") or ())
        if meta.get("deletionTimestamp"):
            if finalizer not in finalizers or in_use(stored.obj):
                return
            finalizers.remove(finalizer)
        elif finalizer in finalizers:
            return
        else:
            finalizers.append(finalizer)

        def write(m: Obj) -> None:
            if finalizers:
                m["finalizers"] = finalizers
            else:
                m.pop("finalizers", None)

        self._edit_metadata(info, meta, write)

    # ------------------------------------------------------------------ queue

    def enqueue(self, item: T) -> None:
        """Queue ``item`` unless it is already waiting (never blocks)."""
        with self._pending_lock:
            if item in self._pending:
                return
            self._pending.add(item)
            self._outstanding += 1
            self._idle.clear()
            self._queue.append(item)
            if self._sleeping:
                self._queued.notify()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until nothing is queued or being handled (tests); False on timeout."""
        return self._idle.wait(timeout)

    # -------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Register the listener, seed the queue and start the worker thread. Idempotent."""
        if self._thread is not None:
            return
        with self.store.lock:
            self.store.add_listener(self._on_event, self.event_kinds)
            self._seed()
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        start_thread(self._thread, self.store.clock)

    def stop(self, timeout: float = 5.0) -> None:
        """Remove the listener, let the worker finish what is queued and join it. Idempotent."""
        self.store.remove_listener(self._on_event)
        thread, self._thread = self._thread, None
        if thread is None:
            return
        with self._pending_lock:
            self._queue.append(None)
            if self._sleeping:
                self._queued.notify()
        thread.join(timeout)

    def _run(self) -> None:
        queue, queued = self._queue, self._queued
        while True:
            with self._pending_lock:
                while not queue:
                    self._sleeping = True
                    try:
                        queued.wait()
                    finally:
                        self._sleeping = False
                item = queue.popleft()
                if item is None:
                    return
                self._pending.discard(item)
            try:
                self._handle(item)
            except Exception:
                self._log.exception("%s failed on %s", self.description, self._describe(item))
            finally:
                with self._pending_lock:
                    self._outstanding -= 1
                    if not self._outstanding:
                        self._idle.set()
