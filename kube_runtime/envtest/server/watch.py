"""The ``watch`` verb: event streams with replay, bookmarks, a timeout and injected drops.

A stream replays the history after ``resourceVersion`` (an evicted one ends it with an ERROR
event carrying 410 Expired), then delivers live events that pass the request's selectors.
:class:`Watches` keeps the open streams so that :meth:`Watches.bookmark_tick` can send each a
BOOKMARK when it asked for them; ``call_later`` (set once the HTTP loop runs) closes a stream
after its ``timeoutSeconds``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import orjson

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


def _watch_partial(accept: str) -> partialmeta.PartialTarget | None:
    """A watch sends ``PartialObjectMetadata`` events when asked for them; asked for a
    ``PartialObjectMetadataList`` kube-apiserver's per-event transformation fails and it
    sends the whole objects, and so does this server."""
    if tables.wants_table(accept):
        return None
    target = partialmeta.partial_target(accept)
    return target if target is not None and target.kind == partialmeta.ITEM else None


class Watches:
    """The open watch streams on ``store``; ``faults`` may cut them after N events."""

    def __init__(self, store: Store, faults: Faults) -> None:
        self.store = store
        self.faults = faults
        self.call_later: Callable[[float, Callable[[], None]], Any] | None = None
        self._sessions: set[_WatchSession] = set()
        self._lock = threading.Lock()

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
            matches or (lambda obj: True),
            since=request.param("resourceVersion") or "",
            bookmarks=request.param("allowWatchBookmarks", "") in TRUE,
            initial_events=request.param("sendInitialEvents", "") in TRUE,
            table=tables.wants_table(request.headers.get("accept", "")),
            partial=_watch_partial(request.headers.get("accept", "")),
            include_object=request.param("includeObject"),
            timeout=float(timeout_text) if timeout_text else DEFAULT_TIMEOUT,
            drop_every=self.faults.watch_drop_every,
        )
        return StreamResponse(session.start, 200, JSON)

    def bookmark_tick(self) -> None:
        """Send a BOOKMARK to every watch that asked for them (called periodically)."""
        with self._lock:
            sessions = list(self._sessions)
        for s in sessions:
            s.bookmark()

    def register(self, session: _WatchSession) -> None:
        with self._lock:
            self._sessions.add(session)

    def unregister(self, session: _WatchSession) -> None:
        with self._lock:
            self._sessions.discard(session)


@dataclass(eq=False)
class _WatchSession:
    """One watch stream."""

    watches: Watches
    route: Route
    matches: Callable[[Obj], bool]
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
    sent: int = field(default=0, init=False)
    stream: Stream | None = field(default=None, init=False)
    handle: Any = field(default=None, init=False)
    api_version: str = field(default="", init=False)
    #: With a conversion webhook: what is still to be written, in order, by a thread of the
    #: session's own (a conversion may take seconds; the store delivers under its lock).
    converting: queue.SimpleQueue[Callable[[], bytes] | None] | None = field(
        default=None, init=False
    )

    def __post_init__(self) -> None:
        self.api_version = self.route.info.api_version(self.route.version)
        if self.route.convert is not None and self.partial is None:  # metadata is not converted
            self.converting = queue.SimpleQueue()
            threading.Thread(target=self._convert_loop, name="watch-convert", daemon=True).start()

    def _convert_loop(self) -> None:
        pending = self.converting
        assert pending is not None
        while True:
            produce = pending.get()
            stream = self.stream
            if produce is None or stream is None or stream.closed:
                return
            try:
                stream.write(produce())
            except ApiError as e:
                stream.write(b'{"type":"ERROR","object":' + orjson.dumps(e.status) + b"}\n")
                stream.close()
                return

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
            stream.write(b'{"type":"ERROR","object":' + orjson.dumps(e.status) + b"}\n")
            stream.close()
            return
        self.watches.register(self)
        if self.watches.call_later is not None:
            self.watches.call_later(self.timeout, stream.close)

    def deliver(self, type_: str, stored: Stored, rv: int) -> None:
        stream = self.stream
        if stream is None or stream.closed:
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
            self.converting.put(
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
            stream.write(b'{"type":"' + type_.encode() + b'","object":' + payload + b"}\n")
        self.sent += 1
        if self.drop_every and self.sent >= self.drop_every:
            stream.close()

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
            self.converting.put(lambda: line)  # after the events before it
        else:
            self.stream.write(line)

    def bookmark(self) -> None:
        if not self.bookmarks:
            return
        with self.watches.store.lock:
            self._write_bookmark(self.watches.store.resource_version)

    def stop(self) -> None:
        if self.converting is not None:
            self.converting.put(None)
        if self.handle is not None:
            self.handle.stop()
            self.handle = None
        self.watches.unregister(self)
