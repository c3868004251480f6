"""Where a controller's events come from (controller-runtime ``pkg/source``).

A source delivers object events to an :class:`EventSink` (the controller, which applies
predicates and the handler). :class:`KindSource` watches one kind through the shared informer
cache (one watch per kind, however many controllers use it); :class:`ChannelSource` turns
objects put on a :class:`queue.Queue` by your own code into generic events (for triggers that
do not come from the API server).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kube_runtime.kinds import KindLike, as_kind
from kube_runtime.meta import ObjView as Obj

if TYPE_CHECKING:
    from kube_runtime.cache import InformerCache, SharedInformer

log = logging.getLogger(__name__)


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
    """Events for every object of ``kind`` in ``cache`` (an ``InformerCache``)."""

    def __init__(self, cache: InformerCache, kind: KindLike) -> None:
        self.cache = cache
        self.kind = as_kind(kind)
        self._informer: SharedInformer | None = None

    def start(self, sink: EventSink, stop: threading.Event) -> None:
        self._informer = self.cache.informer_for(self.kind)
        self._informer.add_event_handler(_InformerAdapter(sink))
        self._informer.start()

    def wait_for_sync(self, timeout: float | None) -> bool:
        return self._informer is not None and bool(self._informer.wait_for_sync(timeout))

    def __repr__(self) -> str:
        return f"KindSource({self.kind})"


class ChannelSource:
    """Generic events for objects your code puts on ``channel`` (a ``queue.Queue``)."""

    def __init__(self, channel: queue.Queue[Obj]) -> None:
        self.channel = channel

    def start(self, sink: EventSink, stop: threading.Event) -> None:
        def pump() -> None:
            while not stop.is_set():
                try:
                    obj = self.channel.get(timeout=0.2)
                except queue.Empty:
                    continue
                try:
                    sink.on_generic(obj)
                except Exception:
                    log.exception("channel source: delivering a generic event failed")

        threading.Thread(target=pump, name="channel-source", daemon=True).start()

    def wait_for_sync(self, timeout: float | None) -> bool:
        return True
