"""Where a controller's events come from (controller-runtime ``pkg/source``).

A source delivers object events to an :class:`EventSink` (the controller, which applies
predicates and the handler). :class:`KindSource` watches one kind through the shared informer
cache (one watch per kind, however many controllers use it); :class:`ChannelSource` turns
objects put on a :class:`Channel` (or a :class:`queue.Queue`) by your own code into generic
events (for triggers that do not come from the API server).

A :class:`Channel` waits on a :class:`~kube_runtime.clock.Clock`, so a channel source runs
under a simulated clock too: its thread counts as waiting, and a put wakes it at once. A
``queue.Queue`` cannot be waited on through a clock: on a virtual clock the source polls it
every 0.2 s of that clock's time instead (on the real clock it blocks on it, as before).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from kube_runtime import clock as _clock
from kube_runtime.kinds import KindLike, as_kind
from kube_runtime.meta import ObjView as Obj

if TYPE_CHECKING:
    from kube_runtime.cache import InformerCache
    from kube_runtime.cache.cache import Informer

__all__ = [
    "Channel",
    "ChannelSource",
    "EventSink",
    "KindSource",
    "Source",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

_POLL = 0.2
"""How often (s, on the source's clock) a channel source looks whether it was stopped."""


class EventSink(Protocol):
    """What a source feeds: the controller's event entry points."""

    def on_create(self, obj: Obj) -> None: ...
    def on_update(self, old: Obj, new: Obj) -> None: ...
    def on_delete(self, obj: Obj) -> None: ...
    def on_generic(self, obj: Obj) -> None: ...


class Source(Protocol):
    def start(self, sink: EventSink, stop: threading.Event) -> None:
        """Begin delivering events to ``sink`` (returns promptly; delivery runs in the background)."""

    def wait_for_sync(self, timeout: float | None) -> bool:
        """True once the initial state has been delivered (False on timeout)."""


class _InformerAdapter:
    """The informer-handler face of an :class:`EventSink` (unwraps delete tombstones)."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def on_add(self, obj: Obj, is_in_initial_list: bool = False) -> None:
        self.sink.on_create(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.sink.on_update(old, new)

    def on_delete(self, obj: Any) -> None:
        # A delete missed across a relist arrives as a tombstone: use its last known state.
        final = getattr(obj, "obj", obj)
        if isinstance(final, Mapping):
            self.sink.on_delete(final)


class KindSource:
    """Events for every object of ``kind`` in ``cache`` (an ``InformerCache``): with the
    kind cached in several namespaces, the handler is added to each namespace's informer,
    and each object's events come once, from the informer of its namespace."""

    def __init__(self, cache: InformerCache, kind: KindLike) -> None:
        self.cache = cache
        self.kind = as_kind(kind)
        self._informer: Informer | None = None

    def start(self, sink: EventSink, stop: threading.Event) -> None:
        informer = self._informer = self.cache.informer_for(self.kind)
        informer.add_event_handler(_InformerAdapter(sink))
        informer.start()

    def wait_for_sync(self, timeout: float | None) -> bool:
        return self._informer is not None and bool(self._informer.wait_for_sync(timeout))

    def __repr__(self) -> str:
        return f"KindSource({self.kind})"


class Channel(Generic[T]):
    """An unbounded FIFO between threads whose blocking ``get`` waits on a
    :class:`~kube_runtime.clock.Clock` (``clock``; None: the clock current when it is made).

    It answers what :class:`ChannelSource` and most producers use of ``queue.Queue``:
    ``put``, ``put_nowait``, ``get`` (raising ``queue.Empty`` on timeout), ``get_nowait``,
    ``qsize`` and ``empty``. Thread-safe.
    """

    def __init__(self, clock: _clock.Clock | None = None) -> None:
        self._items: deque[T] = deque()
        self._ready = _clock.resolve(clock, "Channel").condition(threading.Lock())

    def put(self, item: T, block: bool = True, timeout: float | None = None) -> None:
        """Append ``item`` and wake one waiting getter (never blocks: the channel is unbounded)."""
        with self._ready:
            self._items.append(item)
            self._ready.notify()

    def put_nowait(self, item: T) -> None:
        """:meth:`put`."""
        self.put(item)

    def get(self, block: bool = True, timeout: float | None = None) -> T:
        """The oldest item; waits for one (up to ``timeout`` seconds of the channel's clock)
        when ``block``, raising ``queue.Empty`` when none came."""
        with self._ready:
            if block and not self._items:
                self._ready.wait_for(lambda: bool(self._items), timeout)
            if not self._items:
                raise queue.Empty
            return self._items.popleft()

    def get_nowait(self) -> T:
        """The oldest item, or ``queue.Empty`` at once."""
        return self.get(block=False)

    def qsize(self) -> int:
        """How many items wait."""
        with self._ready:
            return len(self._items)

    def empty(self) -> bool:
        """Whether no item waits."""
        return self.qsize() == 0


class ChannelSource:
    """Generic events for objects your code puts on ``channel``: a :class:`Channel` (waits on
    its clock), or a ``queue.Queue`` (on a virtual ``clock`` polled every 0.2 s of it, since a
    queue's wait cannot run on a clock). ``clock``: None for the clock current when built."""

    def __init__(
        self, channel: Channel[Obj] | queue.Queue[Obj], clock: _clock.Clock | None = None
    ) -> None:
        self.channel = channel
        self._clock = _clock.resolve(clock, "ChannelSource")

    def start(self, sink: EventSink, stop: threading.Event) -> None:
        """Deliver what is put on the channel as generic events, on a thread, until ``stop``."""
        channel = self.channel
        poll = isinstance(channel, queue.Queue) and not isinstance(self._clock, _clock.RealClock)

        def pump() -> None:
            while not stop.is_set():
                try:
                    if poll:
                        obj = channel.get_nowait()
                    else:
                        obj = channel.get(timeout=_POLL)
                except queue.Empty:
                    if poll:
                        stop.wait(_POLL)
                    continue
                try:
                    sink.on_generic(obj)
                except Exception:
                    log.exception("channel source: delivering a generic event failed")

        threading.Thread(target=pump, name="channel-source", daemon=True).start()

    def wait_for_sync(self, timeout: float | None) -> bool:
        return True
