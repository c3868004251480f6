"""A small HTTP/1.1 server on asyncio, run on its own thread.

Just what the Kubernetes clients need: keep-alive, ``Content-Length`` and chunked request
bodies, plain responses, and chunked streaming responses for watches that may be fed from
any thread. Request handling is synchronous on the loop thread (the handlers only touch
in-memory state), which keeps one request's work atomic and the server simple.

Contracts:

* :class:`Handler` gets each :class:`Request` and returns a :class:`Response` or a
  :class:`StreamResponse`; exceptions become a 500.
* A :class:`Stream` may be written from any thread; chunks keep their order and are flushed
  in batches on the loop, at most :data:`MAX_CHUNK` bytes per HTTP chunk (a single larger
  write is one chunk of its own). ``close()`` ends the chunked body; after the client
  disconnects, the stream's ``on_close`` callback runs once. Written from another thread
  while such writes keep coming, a stream is flushed about every :data:`_FLUSH_COALESCE`
  seconds (real clock; one loop pass for all streams, see :meth:`HttpServer.flush_soon`).
* Flow control: a stream honours its transport's high-water mark. While the transport is
  paused (the client reads slower than the stream is fed), writes stay queued in the
  stream and are flushed when the transport drains, so a slow watcher never makes the
  transport buffer the whole backlog.
* ``stop()`` ends every open stream cleanly (terminating chunk) before closing sockets.
* What a request's handler wrote to streams on the loop thread (its watch events) is flushed
  in the same loop pass as its answer: after the answer on the real clock; on a virtual clock
  before it, the answer then written with the loop thread idle for the clock (see
  :meth:`_Connection._handle`). Clients must not rely on either order (kube-apiserver gives
  none).
* Over TLS a connection's first bytes are looked at before the handshake (:class:`_TlsSniffer`):
  plain HTTP gets Go's ``400 ... HTTPS server`` answer, as from kube-apiserver.
* Time: :meth:`HttpServer.call_later` runs on the server's :class:`~kube_runtime.clock.Clock`
  (the cluster's). On the real clock it is the loop's own ``call_later``. On a virtual clock
  the clock's timer fires, holds the clock (:meth:`~kube_runtime.clock.Clock.hold`) and posts
  the function to the loop, which releases the hold once it ran it; the loop waits in its
  selector as *idle* (:meth:`~kube_runtime.clock.Clock.idle`), so under a
  :class:`~kube_runtime.clock.SimClock` a server with nothing to do never keeps virtual time
  from moving, and one with work posted always does. Housekeeping no test waits for (idle
  connection sweeps, TLS handshake timeouts) and fault-injected latency (the client waiting
  for its answer counts as running, so virtual time could not move to end it) stay on the
  loop's real timers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import selectors
import ssl
import threading
import time
from asyncio import sslproto
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from kube_runtime import clock as _clock
from kube_runtime._bounded import remember

log = logging.getLogger(__name__)

_MAX_HEADER = 64 * 1024
MAX_CHUNK = 256 * 1024
# Write buffer limits of a streaming connection: paused above the high mark, resumed below
# the low one; a few chunks in flight keep the socket busy.
_STREAM_HIGH_WATER = 4 * MAX_CHUNK
_STREAM_LOW_WATER = MAX_CHUNK
#: Seconds a loop that ran stream flushes posted by other threads waits before it runs
#: those posted meanwhile (real clock only; see HttpServer.flush_soon): the most an event
#: written right after another waits for its socket write while writes keep coming.
_FLUSH_COALESCE = 0.001


#: What makes ``urlsplit`` do more than split an origin-form target at its ``?``: a
#: fragment, and the characters it strips or refuses.
_URLSPLIT_SPECIAL = re.compile(r"[#\t\r\n\x00-\x20\[\]]")


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    path: str = ""
    query: dict[str, list[str]] = field(default_factory=dict)
    received: float = 0.0

    def __post_init__(self) -> None:
        self.path, self.query = _split_target(self.target)

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default


def _split_target(target: str) -> tuple[str, dict[str, list[str]]]:
    """A request target's decoded path and its query parameters (:class:`Request`'s)."""
    if target[:1] == "/" and target[:2] != "//" and not _URLSPLIT_SPECIAL.search(target):
        # An origin-form target (every client's): what urlsplit would make of it.
        path, _, query = target.partition("?")
    else:
        parts = urlsplit(target)
        path, query = parts.path, parts.query
    return (
        unquote(path) if "%" in path else path,
        parse_qs(query, keep_blank_values=True) if query else {},
    )


_new_object = object.__new__


def _parsed_request(
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    path: str,
    query: dict[str, list[str]],
) -> Request:
    """``Request(method, target, headers, body, received=time.perf_counter())`` whose
    target's :func:`_split_target` is known to be ``(path, query)`` (shared: copied here)."""
    request: Request = _new_object(Request)
    request.method = method
    request.target = target
    request.headers = headers
    request.body = body
    request.path = path
    request.query = {name: values.copy() for name, values in query.items()} if query else {}
    request.received = time.perf_counter()
    return request


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class Stream:
    """The writable side of a streaming (chunked) response."""

    def __init__(self, conn: _Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._pending: list[bytes] = []
        self._scheduled = False
        self._closing = False
        self._paused = False
        self.closed = False
        #: The connection went away before the stream ended (set before ``on_close`` runs).
        self.lost = False
        self.on_close: Callable[[], None] | None = None

    def write(self, data: bytes) -> None:
        """Queue ``data`` as the next chunk; safe from any thread; dropped after close."""
        with self._lock:
            if self._closing or self.closed:
                return
            self._pending.append(data)
            if not self._scheduled and not self._paused:  # _schedule(), inline: per event
                self._scheduled = True
                self._conn.server.flush_soon(self._flush)

    def close(self) -> None:
        """End the response after the queued chunks (idempotent, any thread)."""
        with self._lock:
            if self._closing or self.closed:
                return
            self._closing = True
            self._schedule()

    def _schedule(self) -> None:
        # Lock held. While paused, resume() flushes what is queued.
        if not self._scheduled and not self._paused:
            self._scheduled = True
            self._conn.server.flush_soon(self._flush)

    def pause(self) -> None:
        """The transport is above its high-water mark: stop writing (loop thread)."""
        with self._lock:
            self._paused = True

    def resume(self) -> None:
        """The transport drained below its low-water mark: flush what queued (loop thread)."""
        with self._lock:
            self._paused = False
        self._flush()

    def _flush(self, *, force: bool = False) -> None:
        """Write queued data as chunks of <= MAX_CHUNK, at most the high-water mark per call.

        All chunks of one call go to the transport in one ``writelines`` (one socket write:
        when writer threads hold the GIL, every system call of the loop thread costs it a
        GIL switch interval). What is left is flushed on the next loop iteration, or after
        ``resume()`` when the transport paused. ``force`` writes everything regardless of
        the transport's state (shutdown).
        """
        with self._lock:
            pending, self._pending = self._pending, []
            self._scheduled = False
        if self.closed:
            return
        conn = self._conn
        start, count, written = 0, len(pending), 0
        parts: list[bytes] = []
        writable = count > 0 and (force or not self._paused)
        size = sum(map(len, pending)) if writable else 0
        if writable and (count == 1 or size <= MAX_CHUNK):
            # The usual flush, the writes since the last one (a request's watch event, a
            # writer's events of a few milliseconds) in one chunk: what the loop below makes of
            # them, joined at once.
            conn.write(b"".join((b"%x\r\n" % size, *pending, b"\r\n")))
            start = count
        elif writable:
            while start < count and (force or written < _STREAM_HIGH_WATER):
                end, size = start + 1, len(pending[start])
                while end < count and size + len(pending[end]) <= MAX_CHUNK:
                    size += len(pending[end])
                    end += 1
                parts.append(b"%x\r\n" % size)
                parts.extend(pending[start:end])
                parts.append(b"\r\n")
                written += size
                start = end
        if parts:
            # The transport joins or scatter-writes the parts: no copy of the data here.
            conn.writelines(parts)
        with self._lock:
            if start < count:
                self._pending[:0] = pending[start:]
            if self._pending:
                self._schedule()
            done = self._closing and not self._pending
        if done and not self.closed:
            conn.write(b"0\r\n\r\n")
            self._finish()
            conn.stream_ended()

    def _finish(self) -> None:
        if not self.closed:
            self.closed = True
            cb, self.on_close = self.on_close, None
            if cb is not None:
                try:
                    cb()
                except Exception:  # pragma: no cover - defensive
                    log.exception("stream close callback failed")


@dataclass
class StreamResponse:
    """A chunked response; ``start(stream)`` runs on the loop once the headers are sent."""

    start: Callable[[Stream], None]
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class DeferredResponse:
    """A response computed off the loop: ``run()`` is called on a thread of its own and its
    :class:`Response` sent when it returns (the connection reads no further request until
    then, and the request counts as in flight)."""

    run: Callable[[], Response]


class Handler(Protocol):
    def __call__(self, request: Request) -> Response | StreamResponse | DeferredResponse: ...


class _Malformed(Exception):
    """Framing the server refuses: answered ``status`` and the connection closed."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))


def _request_line(line: str) -> tuple[str, str, str]:
    parts = line.split(" ")
    if (
        len(parts) != 3
        or not parts[1]
        or (parts[0] not in _METHODS and not _TOKEN.fullmatch(parts[0]))
    ):
        raise _Malformed(400, "malformed HTTP request")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        if version.startswith("HTTP/"):
            raise _Malformed(505, f"unsupported protocol version {version!r}")
        raise _Malformed(400, "malformed HTTP version")
    return method, target, version


#: Header names already seen to be tokens, by their lower-case form (clients repeat the
#: same few on every request); bounded: starts afresh when full.
_HEADER_KEYS: dict[str, str] = {}
_HEADER_KEYS_SIZE = 256


def _header_key(name: str) -> str | None:
    """``name`` in lower case, None when it is not a token."""
    key = _HEADER_KEYS.get(name)
    if key is None:
        if not _TOKEN.fullmatch(name):
            return None
        key = remember(_HEADER_KEYS, name, name.lower(), _HEADER_KEYS_SIZE)
    return key


def _header_fields(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        key = _header_key(name) if colon else None
        if key is None:
            raise _Malformed(400, f"malformed MIME header line: {line[:80]!r}")
        value = value.strip()
        if key == "content-length" and key in headers and headers[key] != value:
            raise _Malformed(400, "message cannot contain multiple Content-Length headers")
        headers[key] = value
    return headers


#: A parsed request head: the method (upper case), the target, the header fields (not to be
#: changed), the body's Content-Length (-1: chunked), whether the connection is kept alive,
#: and the target's decoded path and query parameters (:func:`_split_target`, not to be
#: changed; None when that raises: then it raises where a request is made of the head).
_Head = tuple[str, str, dict[str, str], int, bool, tuple[str, dict[str, list[str]]] | None]
#: Request heads already parsed, by their bytes: a client repeats the same head (request
#: line and header fields) for every renewal of a Lease, every poll of an object. Bounded:
#: starts afresh when full; heads longer than _HEADS_KEPT_SIZE bytes are not kept.
_HEADS: dict[bytes, _Head] = {}
_HEADS_KEPT = 256
_HEADS_KEPT_SIZE = 4096


def _request_head(head: bytes) -> _Head:
    """The request line and header fields of ``head`` (the bytes before the blank line):
    :class:`_Malformed` for what Go's server refuses, checked in its order."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = _request_line(lines[0])
    headers = _header_fields(lines[1:])
    if "transfer-encoding" in headers:
        coding = headers["transfer-encoding"].lower()
        if coding != "chunked":
            raise _Malformed(501, f"unsupported transfer encoding: {coding!r}")
        length = -1  # a Content-Length beside it is ignored (RFC 9112)
    else:
        length = _content_length(headers.get("content-length"))
    conn = headers.get("connection", "").lower()
    keep_alive = conn != "close" and (version == "HTTP/1.1" or conn == "keep-alive")
    try:
        split: tuple[str, dict[str, list[str]]] | None = _split_target(target)
    except ValueError:  # an odd target urlsplit refuses: raised by Request() as before
        split = None
    return method.upper(), target, headers, length, keep_alive, split


def _content_length(value: str | None) -> int:
    if value is None or value == "":
        return 0
    if not value.isascii() or not value.isdigit():
        raise _Malformed(400, f"bad Content-Length {value!r}")
    length = int(value)
    if length > _MAX_BODY:
        raise _Malformed(413, f"request body over {_MAX_BODY} bytes")
    return length


def _dechunk(buf: bytearray, pos: int) -> tuple[bytearray, int] | None:
    """A complete chunked body from ``pos`` and the position after it (None: not complete)."""
    body = bytearray()
    while True:
        nl = buf.find(b"\r\n", pos)
        if nl < 0:
            if len(buf) - pos > 1024:
                raise _Malformed(400, "chunk size line too long")
            return None
        size_text = bytes(buf[pos:nl]).split(b";")[0].strip()
        if not size_text or len(size_text) > 16 or not _HEX.fullmatch(size_text):
            raise _Malformed(400, "invalid byte in chunk length")
        size = int(size_text, 16)
        if len(body) + size > _MAX_BODY:
            raise _Malformed(413, f"request body over {_MAX_BODY} bytes")
        start = nl + 2
        if size == 0:
            if buf[start : start + 2] == b"\r\n":
                return body, start + 2
            trailer_end = buf.find(b"\r\n\r\n", start)
            if trailer_end < 0:
                return None
            return body, trailer_end + 4
        if len(buf) < start + size + 2:
            return None
        if buf[start + size : start + size + 2] != b"\r\n":
            raise _Malformed(400, "malformed chunked encoding")
        body += buf[start : start + size]
        pos = start + size + 2


_HEX = re.compile(rb"[0-9A-Fa-f]+")
#: The largest request body buffered (kube-apiserver's 3 MiB limit, and room for framing);
#: the handlers answer 413 from 3 MiB with kube-apiserver's Status.
_MAX_BODY = 3 * 1024 * 1024 + 64 * 1024


class _Connection(asyncio.Protocol):
    def __init__(self, server: HttpServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.stream: Stream | None = None
        self.busy = False
        self.keep_alive = True
        self.writing_paused = False
        #: When the connection last started a request or finished an answer (monotonic).
        self.active = 0.0
        #: The class of the request whose answer is delayed (while ``busy``).
        self.mutating = False
        #: Inside :meth:`_handle` on a virtual clock: :meth:`_send` leaves its answer (bytes,
        #: whether to close after) in :attr:`answer` for :meth:`_handle` to write last.
        self.deferring = False
        self.answer: tuple[bytes, bool] | None = None

    def call_soon(self, fn: Callable[[], None]) -> None:
        self.server.call_soon(fn)

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def writelines(self, parts: list[bytes]) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.writelines(parts)

    def pause_writing(self) -> None:
        self.writing_paused = True
        if self.stream is not None:
            self.stream.pause()

    def resume_writing(self) -> None:
        self.writing_paused = False
        if self.stream is not None:
            self.stream.resume()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.active = time.monotonic()
        if len(self.server.connections) >= self.server.limits.max_connections:
            self.server.refused_connections += 1
            transport.abort()  # over the cap: no answer, no buffer, no log line each
            return
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        if self.busy:
            self.server.delayed[self.mutating] -= 1
            self.busy = False
        self.transport = None
        if self.stream is not None:
            self.stream.lost = True
            self.stream._finish()
            self.stream = None

    def data_received(self, data: bytes) -> None:
        if not self.buffer:
            self.active = time.monotonic()  # a new request starts: its head is timed from here
        self.buffer += data
        self.process()

    def idle_for(self, now: float) -> tuple[str, float] | None:
        """``("idle", s)`` for a keep-alive connection waiting for a request, ``("head", s)``
        for one whose request head is incomplete; None while a request or stream is served."""
        if self.busy or self.stream is not None or self.transport is None:
            return None
        return ("head" if self.buffer else "idle"), now - self.active

    def process(self) -> None:
        while not self.busy and self.stream is None and self.transport is not None:
            if not self.buffer:
                return  # the usual end: every request read was served
            try:
                request = self._parse()
            except _Malformed as bad:
                self._fail(bad.status, bad.reason)
                return
            if request is None:
                return
            self._handle(request)

    def _parse(self) -> Request | None:
        """The next complete request in the buffer (None: not complete yet); :class:`_Malformed`
        for framing Go's server refuses (then the connection is answered and closed)."""
        buf = self.buffer
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > _MAX_HEADER:
                raise _Malformed(431, "request header fields too large")
            return None
        if end > _MAX_HEADER:
            raise _Malformed(431, "request header fields too large")
        head = bytes(buf[:end])
        known = _HEADS.get(head)
        if known is None:
            known = _request_head(head)
            if end <= _HEADS_KEPT_SIZE:
                remember(_HEADS, head, known, _HEADS_KEPT)
        method, target, headers, length, keep_alive, split = known
        pos = end + 4
        if length < 0:
            chunked = _dechunk(buf, pos)
            if chunked is None:
                return None
            body, pos = chunked
        else:
            if len(buf) < pos + length:
                return None
            body = buf[pos : pos + length]
            pos += length
        del buf[:pos]
        self.keep_alive = keep_alive
        # A dict of the request's own: the parsed head is shared with later requests.
        if split is None:
            return Request(method, target, dict(headers), bytes(body), received=time.perf_counter())
        return _parsed_request(method, target, dict(headers), bytes(body), *split)

    def _fail(self, status: int, reason: str = "") -> None:
        """Answer ``status`` with Go's plain-text body and close the connection."""
        self.buffer.clear()
        body = f"{status} {HTTPStatus(status).phrase}: {reason}".encode() if reason else b""
        self.write(
            _head(status, "text/plain; charset=utf-8", len(body), {"Connection": "close"}) + body
        )
        if self.transport is not None:
            self.transport.close()

    def _handle(self, request: Request) -> None:
        """Serve ``request``; what the handler wrote to streams on the loop thread (watch
        events of a write) is flushed right after the answer, not on a later loop pass.

        On a virtual clock the order is the other way round and the answer is written as
        *idle* (:meth:`~kube_runtime.clock.Clock.idle`): the watch events first, then the
        plain answer, with the loop thread idle for the clock while it writes it. Everything
        the request set off is accounted for by then (its watch events are held, its sender
        counts as running until it reads the answer), so the loop thread is no longer the
        one whose wait lets the time move: the sender, reading its answer, usually is, and
        it wakes itself for its next deadline instead of being woken by the loop thread
        while that holds the GIL (three context switches each, on one CPU)."""
        server = self.server
        outer = server._flushes
        pending: list[Callable[[], None]] = []
        server._flushes = pending
        if server._answer_idle is not None:
            self.deferring = True
        try:
            self._serve_request(request)
        finally:
            server._flushes = outer
            self.deferring = False
            for flush in pending:
                flush()
            answer = self.answer
            if answer is not None:
                self.answer = None
                idle = server._answer_idle
                assert idle is not None
                with idle:
                    self._write_answer(*answer)

    def _serve_request(self, request: Request) -> None:
        limited = self.server.over_inflight_bound(request)
        if limited is not None:
            self._send(limited, request)
            return
        try:
            response = self.server.handler(request)
        except Exception:
            log.exception("handler failed for %s %s", request.method, request.target)
            response = Response(500, _INTERNAL_ERROR)
        if isinstance(response, StreamResponse):
            self._start_stream(response)
            return
        if isinstance(response, DeferredResponse):
            self._defer(response, request)
            return
        if response.delay > 0:
            self.busy = True
            self.mutating = request.method not in _READ_METHODS
            self.server.delayed[self.mutating] += 1
            if self.transport is not None:
                self.transport.pause_reading()
            # Injected latency is the network's: real time (see the module's contract).
            self.server.loop.call_later(
                response.delay, lambda: self._send_delayed(response, request)
            )
            return
        self._send(response, request)

    def _defer(self, deferred: DeferredResponse, request: Request) -> None:
        """Run ``deferred`` on a thread; its answer is sent from the loop like a delayed one."""
        self.busy = True
        self.mutating = request.method not in _READ_METHODS
        self.server.delayed[self.mutating] += 1
        if self.transport is not None:
            self.transport.pause_reading()

        def answer(response: Response) -> None:
            if response.delay > 0:
                self.server.loop.call_later(
                    response.delay, lambda: self._send_delayed(response, request)
                )
            else:
                self._send_delayed(response, request)

        def work() -> None:
            try:
                response = deferred.run()
            except Exception:
                log.exception("deferred handler failed for %s %s", request.method, request.target)
                response = Response(500, _INTERNAL_ERROR)
            self.server.call_soon(lambda: answer(response))

        threading.Thread(target=work, name="apiserver-deferred", daemon=True).start()

    def _send_delayed(self, response: Response, request: Request) -> None:
        if self.busy:
            self.server.delayed[self.mutating] -= 1
        self.busy = False
        if self.transport is not None:
            self.transport.resume_reading()
        self._send(response, request)
        self.process()

    def _send(self, response: Response, request: Request) -> None:
        body = b"" if request.method == "HEAD" else response.body
        if not response.headers and self.keep_alive:
            # The usual answer: the head's fixed part made once per status and content type.
            start = _PLAIN_HEADS.get((response.status, response.content_type))
            if start is None:
                start = _plain_head(response.status, response.content_type)
            data = b"".join((start, b"%d\r\n\r\n" % len(response.body), body))
        else:
            headers = dict(response.headers)
            if not self.keep_alive:
                headers["Connection"] = "close"
            data = _head(response.status, response.content_type, len(response.body), headers) + body
        self.server.observe(request, response.status)
        self.active = time.monotonic()
        if self.deferring:
            self.answer = (data, not self.keep_alive)  # written last by _handle, as idle
        else:
            self._write_answer(data, not self.keep_alive)

    def _write_answer(self, data: bytes, close: bool) -> None:
        """Write an answer, then close the connection when ``close``."""
        self.write(data)
        if close and self.transport is not None:
            self.transport.close()

    def _start_stream(self, response: StreamResponse) -> None:
        headers = dict(response.headers)
        headers["Transfer-Encoding"] = "chunked"
        self.write(_head(response.status, response.content_type, None, headers))
        if self.transport is not None:
            self.transport.set_write_buffer_limits(_STREAM_HIGH_WATER, _STREAM_LOW_WATER)
        stream = Stream(self)
        if self.writing_paused:
            stream.pause()
        self.stream = stream
        self.server.streams.add(stream)
        try:
            response.start(stream)
        except Exception:
            log.exception("watch start failed")
            stream.close()

    def stream_ended(self) -> None:
        if self.stream is not None:
            self.server.streams.discard(self.stream)
        self.stream = None
        if not self.keep_alive and self.transport is not None:
            self.transport.close()
            return
        self.process()


_PHRASES = {s.value: s.phrase for s in HTTPStatus}


def _head(status: int, content_type: str, length: int | None, headers: dict[str, str]) -> bytes:
    phrase = _PHRASES.get(status, "Unknown")
    lines = [
        f"HTTP/1.1 {status} {phrase}",
        f"Content-Type: {content_type}",
        "Cache-Control: no-cache, private",
    ]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines.extend(f"{k}: {v}" for k, v in headers.items())
    # UTF-8, as Go writes a header's bytes: a Warning may quote a field name with U+FFFD in it
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


#: What :func:`_head` writes before a Content-Length's digits when there are no other
#: header fields, by (status, content type); bounded: starts afresh when full.
_PLAIN_HEADS: dict[tuple[int, str], bytes] = {}


def _plain_head(status: int, content_type: str) -> bytes:
    """``_head(status, content_type, length, {})`` up to the length's digits (remembered)."""
    whole = _head(status, content_type, 0, {})
    start = whole[: -len(b"0\r\n\r\n")]
    return remember(_PLAIN_HEADS, (status, content_type), start, 64)


_READ_METHODS = frozenset(("GET", "HEAD", "OPTIONS"))
_INTERNAL_ERROR = (
    b'{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,'
    b'"reason":"InternalError","message":"internal error"}'
)
#: How often idle and slow connections are looked for (and loop errors summarised).
_SWEEP_EVERY = 5.0
_TOO_MANY_REQUESTS = (
    b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
    b'"message":"Too many requests, please try again later.","reason":"TooManyRequests",'
    b'"details":{"retryAfterSeconds":1},"code":429}\n'
)


def _default_max_connections() -> int:
    """Open connections allowed: 4,096, or fewer when the process may not open that many
    files (the soft limit is raised to the hard one first); some are kept for everything else."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or soft < hard:
            target = 65_536 if hard == resource.RLIM_INFINITY else hard
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except ImportError:  # not a POSIX system
        return 4_096
    return max(64, min(4_096, soft - 256))


#: Go's net/http answer when the first bytes on its TLS port are a plain HTTP request.
HTTP_ON_TLS_PORT = (
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
)
#: The request starts Go recognises as plain HTTP (its ``tlsRecordHeaderLooksLikeHTTP``).
_HTTP_STARTS = frozenset((b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO"))
#: First bytes of the records a TLS server reads on from a new client: alert and handshake.
_TLS_RECORD_TYPES = frozenset((0x15, 0x16))


class _TlsSniffer(asyncio.Protocol):
    """The first protocol of a connection on the TLS port: it looks at the first bytes.

    As Go's ``net/http`` over ``crypto/tls``: when the first byte starts a TLS alert or
    handshake record, the connection is handed to asyncio's TLS protocol (the bytes read so far
    are fed to it, its handshake bounded by :attr:`ServerLimits.tls_handshake_timeout`) over
    a :class:`_Connection`; when the first five bytes start a plain HTTP request Go knows, the
    client gets :data:`HTTP_ON_TLS_PORT` and the connection is closed; anything else is
    closed without an answer. A connection is counted in :attr:`HttpServer.opening` from
    accept to the end of its handshake (against :attr:`ServerLimits.max_connections` too),
    and one that sends nothing is closed after the handshake timeout.
    """

    def __init__(self, server: HttpServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.head = bytearray()
        self.timer: asyncio.TimerHandle | None = None
        self.counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        server = self.server
        self.transport = transport
        if len(server.connections) + server.opening >= server.limits.max_connections:
            server.refused_connections += 1
            transport.abort()
            return
        server.opening += 1
        self.counted = True
        self.timer = server.loop.call_later(server.limits.tls_handshake_timeout, self._timeout)

    def _timeout(self) -> None:
        if self.transport is not None:
            self.server.failed_handshakes += 1
            self.transport.abort()

    def _uncount(self) -> None:
        if self.counted:
            self.counted = False
            self.server.opening -= 1
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._uncount()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        transport = self.transport
        if transport is None:
            return
        self.head += data
        if self.head[0] in _TLS_RECORD_TYPES:
            self._start_tls(transport)
        elif len(self.head) >= 5:
            self._uncount()
            self.transport = None
            if bytes(self.head[:5]) in _HTTP_STARTS:
                self.server.plain_http_on_tls += 1
                transport.write(HTTP_ON_TLS_PORT)
                transport.close()  # after the answer is sent
            else:
                transport.abort()  # neither TLS nor HTTP

    def _start_tls(self, transport: asyncio.Transport) -> None:
        """Hand the connection to asyncio's TLS protocol (what ``loop.start_tls`` does, with
        the bytes already read fed to it first)."""
        server = self.server
        assert server.ssl_context is not None
        self.transport = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        app = _Connection(server)
        handshake: asyncio.Future[None] = server.loop.create_future()
        tls = sslproto.SSLProtocol(
            server.loop,
            app,
            server.ssl_context,
            handshake,
            server_side=True,
            # seconds as a float, whatever the stubs say (asyncio compares it to a float)
            ssl_handshake_timeout=server.limits.tls_handshake_timeout,  # type: ignore[arg-type]
        )

        def handshake_over(done: asyncio.Future[None]) -> None:
            self._uncount()
            if done.cancelled() or done.exception() is not None or app.transport is None:
                server.failed_handshakes += 1

        handshake.add_done_callback(handshake_over)
        transport.set_protocol(tls)
        tls.connection_made(transport)
        data = memoryview(bytes(self.head))
        while data and not transport.is_closing():
            buffer = tls.get_buffer(len(data))
            n = min(len(buffer), len(data))
            buffer[:n] = data[:n]
            tls.buffer_updated(n)
            data = data[n:]


@dataclass
class ServerLimits:
    """What :class:`HttpServer` bounds (kube-apiserver's defaults where it has them)."""

    #: Open connections; over it a new one is dropped at once (see :func:`_default_max_connections`).
    max_connections: int = field(default_factory=lambda: _default_max_connections())
    #: Seconds a keep-alive connection may wait for its next request.
    idle_timeout: float = 90.0
    #: Seconds a request head may take to arrive (slow clients).
    header_timeout: float = 60.0
    #: ``--max-requests-inflight`` / ``--max-mutating-requests-inflight`` (0: no bound).
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    #: Seconds a TLS connection may take to send its first bytes, and then to finish its
    #: handshake.
    tls_handshake_timeout: float = 10.0
    #: Seconds between looks for idle and slow connections.
    sweep_every: float = _SWEEP_EVERY


def _reusable_idle(clock: _clock.Clock) -> contextlib.AbstractContextManager[None]:
    """``clock.idle()`` made once for the loop thread to enter again and again (a
    :class:`~kube_runtime.clock.SimClock`'s idle block is reusable by one thread at a time,
    as is a null context); another clock's is made at each entry."""
    if isinstance(clock, _clock.SimClock):
        return clock.idle()
    return _FreshIdle(clock)


class _FreshIdle:
    """A block entering ``clock.idle()`` afresh each time (a clock whose idle blocks are not
    known to be reusable)."""

    __slots__ = ("_block", "_clock")

    def __init__(self, clock: _clock.Clock) -> None:
        self._clock = clock
        self._block: contextlib.AbstractContextManager[None] | None = None

    def __enter__(self) -> None:
        self._block = self._clock.idle()
        self._block.__enter__()

    def __exit__(self, *exc: object) -> None:
        block, self._block = self._block, None
        if block is not None:
            block.__exit__(None, None, None)


class _IdleSelector(selectors.DefaultSelector):
    """The loop's selector on a virtual clock: a wait for I/O is *idle* for the clock
    (:meth:`~kube_runtime.clock.Clock.idle`); a poll (timeout 0) is not, the loop has work."""

    def __init__(self, clock: _clock.Clock) -> None:
        super().__init__()
        self._idle = _reusable_idle(clock)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """The ready file objects, waiting up to ``timeout`` seconds as idle."""
        if timeout is not None and timeout <= 0:
            return super().select(timeout)
        with self._idle:
            return super().select(timeout)


class HttpServer:
    """Serves ``handler`` on ``host:port`` (port 0 picks a free one) from a background thread.

    ``clock``: what :meth:`call_later` runs on (None: the current clock; see the module's
    contract)."""

    def __init__(
        self,
        handler: Handler,
        host: str = "127.0.0.1",
        port: int = 0,
        observe: Callable[[Request, int], None] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        *,
        limits: ServerLimits | None = None,
        clock: _clock.Clock | None = None,
    ) -> None:
        self.handler = handler
        #: The clock of the server's timers (:meth:`call_later`).
        self.clock: _clock.Clock = _clock.resolve(clock, "HttpServer")
        self._real_time = isinstance(self.clock, _clock.RealClock)
        # What the server holds the clock under while work it posted waits for the loop.
        self._hold_key = f"http-server-{id(self):x}"
        #: The bounds this server keeps (may be changed while it runs).
        self.limits = limits if limits is not None else ServerLimits()
        #: Connections closed at once because :attr:`max_connections` were open.
        self.refused_connections = 0
        #: Requests answered 429 by the in-flight bound.
        self.throttled_requests = 0
        #: Requests taken whose answer is delayed, by class (mutating or not).
        self.delayed: dict[bool, int] = {False: 0, True: 0}
        #: Connections on the TLS port not served yet: before or in their handshake.
        self.opening = 0
        #: TLS handshakes that failed or timed out.
        self.failed_handshakes = 0
        #: Plain HTTP requests on the TLS port, answered :data:`HTTP_ON_TLS_PORT`.
        self.plain_http_on_tls = 0
        self.ssl_context = ssl_context
        self.host = host
        self.port = port
        self.observe: Callable[[Request, int], None] = observe or (lambda r, s: None)
        self.connections: set[_Connection] = set()
        self.streams: set[Stream] = set()
        self.loop = (
            asyncio.new_event_loop()
            if self._real_time
            else asyncio.SelectorEventLoop(_IdleSelector(self.clock))
        )
        self._thread: threading.Thread | None = None
        # The loop thread's ident, and the stream flushes the request it serves asked for
        # (None between requests; both only touched on the loop thread).
        self._loop_ident: int | None = None
        self._flushes: list[Callable[[], None]] | None = None
        # Stream flushes posted by other threads, and whether the loop will look at them
        # (a wake-up or a timed look is pending; see flush_soon).
        self._posted_lock = threading.Lock()
        self._posted: list[Callable[[], None]] = []
        self._posted_armed = False
        # On a virtual clock: the idle block the loop thread writes a request's answer in
        # (see _Connection._handle), reused (one thread, never nested); None on the real one.
        self._answer_idle: contextlib.AbstractContextManager[None] | None = (
            None if self._real_time else _reusable_idle(self.clock)
        )
        self._server: asyncio.AbstractServer | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._reported_refusals = 0
        self._loop_errors: dict[str, tuple[int, float]] = {}

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def call_soon(self, fn: Callable[[], None]) -> None:
        if self._thread is not None and threading.get_ident() == self._thread.ident:
            self.loop.call_soon(fn)
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(fn)

    def flush_soon(self, flush: Callable[[], None]) -> None:
        """Run a stream's ``flush`` on the loop: at the end of the request being served when
        called from its handler (one socket write per stream for all it wrote, with no
        extra loop pass); from the loop otherwise, as :meth:`call_soon`.

        From another thread (a writer committing outside a request) the flushes of all
        streams are posted together: the first one after a quiet moment wakes the loop,
        which runs every flush posted until it gets there; on the real clock the loop then
        looks again :data:`_FLUSH_COALESCE` seconds later and runs what was posted meanwhile,
        with no wake-up per write, for as long as writes keep coming (so a steady writer
        costs the loop one pass per period, not one per event, and its watchers get the
        events of a period in one socket write). On a virtual clock every post wakes the
        loop as before (a timer of the loop would be real time in a simulation).
        """
        ident = threading.get_ident()
        if ident == self._loop_ident:
            flushes = self._flushes
            if flushes is not None:
                flushes.append(flush)
            else:
                self.loop.call_soon(flush)
            return
        with self._posted_lock:
            self._posted.append(flush)
            if self._posted_armed:
                return  # the loop runs it at its next look (posted or timed)
            self._posted_armed = True
        try:
            self.loop.call_soon_threadsafe(self._run_posted)
        except RuntimeError:  # the loop is closed: the server stopped
            pass

    def _run_posted(self) -> None:
        """On the loop: run the flushes posted by other threads; on the real clock look
        again in :data:`_FLUSH_COALESCE` seconds when there were any (see :meth:`flush_soon`)."""
        with self._posted_lock:
            posted, self._posted = self._posted, []
            if not posted or not self._real_time:
                self._posted_armed = False
        if not posted:
            return
        if self._real_time:
            self.loop.call_later(_FLUSH_COALESCE, self._run_posted)
        for flush in posted:
            flush()

    def call_later(self, delay: float, fn: Callable[[], None]) -> _clock.Timer:
        """Run ``fn`` on the loop ``delay`` seconds from now on the server's clock; the
        handle's ``cancel()`` stops it from running (see the module's contract). Called on
        the loop thread (on the real clock it is the loop's own ``call_later``)."""
        if self._real_time:
            return self.loop.call_later(delay, fn)
        return self.clock.after(delay, lambda: self._post_held(fn))

    def _post_held(self, fn: Callable[[], None]) -> None:
        """From the clock's timer thread: run ``fn`` on the loop, the clock held until then."""
        clock, key = self.clock, self._hold_key
        clock.hold(key)

        def run() -> None:
            try:
                fn()
            finally:
                clock.release(key)

        try:
            self.loop.call_soon_threadsafe(run)
        except RuntimeError:  # the loop is closed: the server stopped
            clock.release(key)

    def over_inflight_bound(self, request: Request) -> Response | None:
        """kube-apiserver's ``--max-requests-inflight`` / ``--max-mutating-requests-inflight``:
        a 429 (``Retry-After: 1``) when as many requests of its class are in flight.

        Handlers run one at a time on the loop, so a request is in flight here from when it is
        taken until its answer is sent: the current one plus those whose answer is delayed
        (fault-injected latency). Watches and other long-running requests do not count, as
        upstream."""
        mutating = request.method not in _READ_METHODS
        bound = (
            self.limits.max_mutating_requests_inflight
            if mutating
            else self.limits.max_requests_inflight
        )
        if bound <= 0 or 1 + self.delayed[mutating] <= bound:
            return None  # 0: no bound, as upstream
        if not mutating and (request.param("watch") in ("true", "1") or "/watch/" in request.path):
            return None  # long-running
        self.throttled_requests += 1
        return Response(429, _TOO_MANY_REQUESTS, headers={"Retry-After": "1"})

    def sweep(self) -> None:
        """Close keep-alive connections idle for :attr:`idle_timeout` and those whose
        request head is not complete after :attr:`header_timeout` (slow clients); then look
        again in :attr:`sweep_every` seconds. Runs on the loop (``call_soon(sweep)``)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
        now = time.monotonic()
        for conn in list(self.connections):
            state = conn.idle_for(now)
            if state is None or conn.transport is None:
                continue
            what, seconds = state
            if seconds > (
                self.limits.header_timeout if what == "head" else self.limits.idle_timeout
            ):
                conn.transport.close()
        if self.refused_connections != self._reported_refusals:
            log.warning(
                "refused %d connection(s) over the cap of %d open connections",
                self.refused_connections - self._reported_refusals,
                self.limits.max_connections,
            )
            self._reported_refusals = self.refused_connections
        self._sweeper = self.loop.call_later(self.limits.sweep_every, self.sweep)

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        """The loop's errors (accept failures such as EMFILE, ...) at most once per kind every
        :data:`_SWEEP_EVERY` seconds, with how many there were: never a log flood."""
        key = str(context.get("message", ""))
        now = time.monotonic()
        count, last = self._loop_errors.get(key, (0, -1e9))
        if now - last >= _SWEEP_EVERY:
            exc = context.get("exception")
            log.error("event loop: %s%s (%d more since)", key, f": {exc!r}" if exc else "", count)
            self._loop_errors[key] = (0, now)
        else:
            self._loop_errors[key] = (count + 1, last)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="embedded-apiserver", daemon=True)
        if self._real_time:  # its waits are real: never a participant of a simulation
            _clock.start_detached(self._thread)
        else:
            self._thread.start()
        self._started.wait(10)
        if self._error is not None:
            raise RuntimeError(
                f"embedded API server failed to start: {self._error}"
            ) from self._error

    def _run(self) -> None:
        try:
            self._serve()
        finally:
            # What was posted and will never run, and stop()'s hold: nothing is in flight now.
            self.clock.forget(self._hold_key)

    def _serve(self) -> None:
        self._loop_ident = threading.get_ident()
        asyncio.set_event_loop(self.loop)
        try:
            tls = self.ssl_context is not None
            self._server = self.loop.run_until_complete(
                self.loop.create_server(
                    (lambda: _TlsSniffer(self)) if tls else (lambda: _Connection(self)),
                    self.host,
                    self.port,
                    reuse_address=True,
                    backlog=4096,  # as Go (somaxconn): bursts of connects wait for no SYN retry
                )
            )
            sock = self._server.sockets[0]
            self.port = sock.getsockname()[1]
        except BaseException as e:
            self._error = e
            self._started.set()
            return
        self.loop.set_exception_handler(self._loop_error)
        self._sweeper = self.loop.call_later(self.limits.sweep_every, self.sweep)
        self._started.set()
        self.loop.run_forever()
        self.loop.close()

    def stop(self, timeout: float = 5.0) -> None:
        """Close open streams cleanly, then stop accepting and close every connection."""
        if self._thread is None:
            return
        done = threading.Event()

        def shutdown() -> None:
            for stream in list(self.streams):
                stream.close()
                stream._flush(force=True)
            if self._server is not None:
                self._server.close()
            for conn in list(self.connections):
                if conn.transport is not None:
                    conn.transport.close()
            if self._sweeper is not None:
                self._sweeper.cancel()
            # The closed transports write what they hold and report connection_lost on the
            # loop: it stops once every connection is gone (at most 50 ms from now) rather
            # than after a fixed 50 ms, which was most of a test cluster's teardown.
            deadline = self.loop.time() + 0.05

            def stop_when_closed() -> None:
                if (not self.connections and not self.opening) or self.loop.time() >= deadline:
                    self.loop.stop()
                else:
                    self.loop.call_later(0.002, stop_when_closed)

            self.loop.call_soon(stop_when_closed)
            done.set()

        # On a virtual clock the time stands still until the loop thread has ended.
        self.clock.hold(self._hold_key)
        self.loop.call_soon_threadsafe(shutdown)
        done.wait(timeout)
        self._thread.join(timeout)
        self._thread = None
