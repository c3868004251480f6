"""The ``watch`` verb: event streams with replay, bookmarks, a timeout and injected drops.

A stream replays the history after ``resourceVersion`` (an evicted one ends it with an ERROR
event carrying 410 Expired), then delivers live events that pass the request's selectors.
:class:`Watches` keeps the open streams so that :meth:`Watches.bookmark_tick` can send each a
BOOKMARK when it asked for them (every ``bookmark_interval`` seconds while one that asked is
open); ``call_later`` (set once the HTTP loop runs: the server's timers, on the store's clock)
closes a stream after its ``timeoutSeconds`` and drives the bookmarks.

Under a simulated clock (:class:`~kube_runtime.clock.SimClock`, the store's), a watch whose
request names a key of that clock in the
:data:`~kube_runtime.client.watch.SIM_WATCH_HEADER` header (a client that is a participant of
the simulation) is held: every line written to it (event, BOOKMARK, ERROR; a line the
conversion thread will write, when it is queued) holds the clock once under that key, and so
does the stream's end at its timeout or an injected drop. The client releases one hold per
event it handed on and forgets the key when the stream ended (the server forgets it when the
connection is lost), so virtual time never moves past an event on its way. Other watches
(kubectl, other processes) hold nothing.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import orjson

from kube_runtime import clock as _clock
from kube_runtime.client.watch import SIM_WATCH_HEADER
from kube_runtime.envtest.server import partialmeta, tables
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.faults import Faults
from kube_runtime.envtest.server.http import Request, Stream, StreamResponse
from kube_runtime.envtest.server.reads import matcher, served_objects
from kube_runtime.envtest.server.responses import JSON, object_bytes
from kube_runtime.envtest.server.routing import TRUE, Route
from kube_runtime.envtest.server.storage import Obj, Store, Stored

#: How long a watch lasts when the request names no ``timeoutSeconds``.
DEFAULT_TIMEOUT = 1800.0
_SIM_HEADER = SIM_WATCH_HEADER.lower()  # as Request.headers names it
#: The start of an event line of each type, up to the object.
_EVENT_HEADS = {
    t: b'{"type":"' + t.encode() + b'","object":' for t in ("ADDED", "MODIFIED", "DELETED")
}


def _watch_partial(accept: str) -> partialmeta.PartialTarget | None:
    """A watch sends ``PartialObjectMetadata`` events when asked for them; asked for a
    ``PartialObjectMetadataList`` kube-apiserver's per-event transformation fails and it
    sends the whole objects, and so does this server."""
    if tables.wants_table(accept):
        return None
    target = partialmeta.partial_target(accept)
    return target if target is not None and target.kind == partialmeta.ITEM else None


class Watches:
    """The open watch streams on ``store``; ``faults`` may cut them after N events.

    ``bookmark_interval``: seconds between the BOOKMARKs sent to the watches that asked for
    them (0: none are sent but by :meth:`bookmark_tick`).
    """

    def __init__(self, store: Store, faults: Faults, *, bookmark_interval: float = 1.0) -> None:
        self.store = store
        self.faults = faults
        self.bookmark_interval = bookmark_interval
        #: The server's timers (``HttpServer.call_later``), set before it serves; called on
        #: the server's loop only.
        self.call_later: Callable[[float, Callable[[], None]], Any] | None = None
        self._sessions: set[_WatchSession] = set()
        self._lock = threading.Lock()
        self._ticking = False  # a bookmark tick is scheduled

    def watch(self, request: Request, route: Route) -> StreamResponse:
        matches = matcher(request, route)
        if route.name:
            name = route.name
            inner = matches

            def matches_name(obj: Obj) -> bool:
                return obj["metadata"].get("name") == name and (inner is None or inner(obj))

            matches = matches_name
        timeout_text = request.param("timeoutSeconds")
        session = _WatchSession(
            self,
            route,
            matches,
            since=request.param("resourceVersion") or "",
            bookmarks=request.param("allowWatchBookmarks", "") in TRUE,
            initial_events=request.param("sendInitialEvents", "") in TRUE,
            table=tables.wants_table(request.headers.get("accept", "")),
            partial=_watch_partial(request.headers.get("accept", "")),
            include_object=request.param("includeObject"),
            timeout=float(timeout_text) if timeout_text else DEFAULT_TIMEOUT,
            drop_every=self.faults.watch_drop_every,
            sim_key=self._sim_key(request.headers.get(_SIM_HEADER)),
        )
        return StreamResponse(session.start, 200, JSON)

    def _sim_key(self, key: str | None) -> str | None:
        """``key`` when it is a key of the store's simulated clock (the watch is held)."""
        clock = self.store.clock
        if key and isinstance(clock, _clock.SimClock) and clock.owns_key(key):
            return key
        return None

    def bookmark_tick(self) -> None:
        """Send a BOOKMARK to every watch that asked for them (called periodically)."""
        with self._lock:
            sessions = list(self._sessions)
        for s in sessions:
            s.bookmark()

    def _tick(self) -> None:
        """A bookmark tick on the server's timers: again while a watch wants bookmarks."""
        self.bookmark_tick()
        with self._lock:
            self._ticking = False
            self._schedule_tick_locked()

    def _schedule_tick_locked(self) -> None:
        call_later = self.call_later
        if self._ticking or call_later is None or self.bookmark_interval <= 0:
            return
        if any(s.bookmarks for s in self._sessions):
            self._ticking = True
            call_later(self.bookmark_interval, self._tick)

    def register(self, session: _WatchSession) -> None:
        with self._lock:
            self._sessions.add(session)
            if session.bookmarks:
                self._schedule_tick_locked()

    def unregister(self, session: _WatchSession) -> None:
        with self._lock:
            self._sessions.discard(session)


@dataclass(eq=False)
class _WatchSession:
    """One watch stream."""

    watches: Watches
    route: Route
    #: The objects the request's selectors select (None: every object).
    matches: Callable[[Obj], bool] | None
    _: KW_ONLY
    since: str
    bookmarks: bool
    initial_events: bool
    table: bool
    #: Metadata-only events (``as=PartialObjectMetadata``, :mod:`.partialmeta`).
    partial: partialmeta.PartialTarget | None
    include_object: str | None
    timeout: float
    drop_every: int | None
    #: The clock's key a simulated client named its watch with (see the module), else None.
    sim_key: str | None = None
    #: Holds the clock once under :attr:`sim_key` (None: the watch is not held).
    hold: Callable[[], None] | None = field(default=None, init=False)
    sent: int = field(default=0, init=False)
    stream: Stream | None = field(default=None, init=False)
    handle: Any = field(default=None, init=False)
    api_version: str = field(default="", init=False)
    #: The end of the stream at its timeout, on the server's timers (cancelled at its end).
    timer: _clock.Timer | None = field(default=None, init=False)
    #: With a conversion webhook: what is still to be written, in order, by a thread of the
    #: session's own (a conversion may take seconds; the store delivers under its lock);
    #: None in it: stop. The thread waits on a condition of the store's clock.
    converting: deque[Callable[[], bytes] | None] | None = field(default=None, init=False)
    _converting_cv: threading.Condition | None = field(default=None, init=False)
    #: Events go out as the stored bytes (no Table, metadata-only, conversion or other
    #: version): :meth:`deliver`'s short way.
    _as_stored: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.api_version = self.route.info.api_version(self.route.version)
        route = self.route
        self._as_stored = (
            not self.table
            and self.partial is None
            and route.convert is None
            and route.version == route.info.version
        )
        if self.sim_key is not None:
            self.hold = functools.partial(self.watches.store.clock.hold, self.sim_key)
        if self.route.convert is not None and self.partial is None:  # metadata is not converted
            self.converting = deque()
            self._converting_cv = self.watches.store.clock.condition(threading.Lock())
            threading.Thread(target=self._convert_loop, name="watch-convert", daemon=True).start()

    def _convert(self, produce: Callable[[], bytes] | None) -> None:
        """Queue ``produce`` (None: stop) for the conversion thread."""
        cv, pending = self._converting_cv, self.converting
        assert cv is not None and pending is not None
        with cv:
            pending.append(produce)
            cv.notify()

    def _convert_loop(self) -> None:
        cv, pending = self._converting_cv, self.converting
        assert cv is not None and pending is not None
        while True:
            with cv:
                while not pending:
                    cv.wait()
                produce = pending.popleft()
            stream = self.stream
            if produce is None or stream is None or stream.closed:
                return
            try:
                stream.write(produce())  # held when it was queued
            except ApiError as e:
                stream.write(b'{"type":"ERROR","object":' + orjson.dumps(e.status) + b"}\n")
                stream.close()
                return

    def _write(self, stream: Stream, line: bytes) -> None:
        """Write one line to the stream, the clock held for it first (a held watch)."""
        if self.hold is not None:
            self.hold()
        stream.write(line)

    def _close(self, stream: Stream) -> None:
        """End the stream from the server's side (held until the client has seen the end)."""
        if self.hold is not None and not stream.closed:
            self.hold()
        stream.close()

    def start(self, stream: Stream) -> None:
        self.stream = stream
        stream.on_close = self.stop
        store = self.watches.store
        since = self.since
        if self.initial_events and since in ("", "0"):
            since = ""
        try:
            with store.lock:
                self.handle = store.watch(
                    self.route.info, self.route.namespace, since, self.matches, self.deliver
                )
                if self.initial_events:
                    self._write_bookmark(store.resource_version, initial_end=True)
        except ApiError as e:
            self._write(stream, b'{"type":"ERROR","object":' + orjson.dumps(e.status) + b"}\n")
            stream.close()
            return
        self.watches.register(self)
        if self.watches.call_later is not None:
            self.timer = self.watches.call_later(
                self.timeout, functools.partial(self._close, stream)
            )

    def deliver(self, type_: str, stored: Stored, rv: int) -> None:
        stream = self.stream
        if stream is None or stream.closed:
            return
        if self._as_stored:  # what the general way below writes for such a watch
            head = _EVENT_HEADS.get(type_) or b'{"type":"' + type_.encode() + b'","object":'
            if self.hold is not None:
                self.hold()
            # the encoding a commit keeps (stored.raw's, no property call), else encoded now
            stream.write(b"".join((head, stored._raw or stored.raw, b"}\n")))
            self.sent += 1
            if self.drop_every and self.sent >= self.drop_every:
                self._close(stream)
            return
        if self.table:
            doc = tables.table(
                self.route.info,
                [stored.obj],
                str(rv),
                self.include_object,
                # not a CRD's webhook conversion: a network call on the serving loop
                None if self.route.info.custom else served_objects(self.route),
            )
            payload = orjson.dumps(doc)
        elif self.partial is not None:
            payload = orjson.dumps(partialmeta.as_partial(stored.obj, self.partial))
        elif self.converting is not None:
            route = self.route
            if self.hold is not None:
                self.hold()
            self._convert(
                lambda: (
                    b'{"type":"'
                    + type_.encode()
                    + b'","object":'
                    + object_bytes(route, stored)
                    + b"}\n"
                )
            )
            payload = b""
        else:
            payload = object_bytes(self.route, stored)
        if payload:
            head = _EVENT_HEADS.get(type_) or b'{"type":"' + type_.encode() + b'","object":'
            line = b"".join((head, payload, b"}\n"))  # one copy of the object's bytes
            if self.hold is not None:
                self.hold()
            stream.write(line)
        self.sent += 1
        if self.drop_every and self.sent >= self.drop_every:
            self._close(stream)

    def _write_bookmark(self, rv: int, initial_end: bool = False) -> None:
        if self.stream is None:
            return
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.route.info.kind, "apiVersion": self.api_version, "metadata": meta}
        if self.partial is not None:
            obj = partialmeta.as_partial(obj, self.partial)
        line = b'{"type":"BOOKMARK","object":' + orjson.dumps(obj) + b"}\n"
        if self.converting is not None:
            if self.hold is not None:
                self.hold()
            self._convert(lambda: line)  # after the events before it
        else:
            self._write(self.stream, line)

    def bookmark(self) -> None:
        if not self.bookmarks:
            return
        with self.watches.store.lock:
            self._write_bookmark(self.watches.store.resource_version)

    def stop(self) -> None:
        """The stream ended (``on_close``): stop watching, the timeout and the conversion
        thread; a lost connection's held lines will never be consumed: forgotten."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.converting is not None:
            self._convert(None)
        if self.handle is not None:
            self.handle.stop()
            self.handle = None
        self.watches.unregister(self)
        if self.sim_key is not None and self.stream is not None and self.stream.lost:
            self.watches.store.clock.forget(self.sim_key)
