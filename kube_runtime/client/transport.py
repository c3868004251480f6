"""A lean HTTP/1.1 exchange on urllib3's pooled connections: the client's request fast path.

urllib3 (with ``http.client`` and its ``email`` header parser beneath) costs about 200
microseconds of CPU per request on top of the bytes on the wire, some 800 Python calls: for
a controller that writes a few thousand objects it is a third of its CPU. :func:`exchange`
keeps what urllib3 is good at, the pool (one per host, bounded, thread-safe), connecting
(TLS with the kubeconfig's CA, client certificate, SNI and hostname checks; the socket
options) and the check that an idle pooled socket is still open, and does the exchange
itself: idle kept-alive connections held in a plain list in the caller's memo
(:data:`HostPools`, in front of urllib3's locked queue), the request written in one
``sendall`` (headers rendered once by :func:`header_block` when the caller keeps them), the
status line and headers parsed by hand,
the body read by ``Content-Length`` or chunked encoding. :func:`open_stream` does the same
for a watch: the body is handed on as it arrives (:class:`Stream`), chunked encoding removed
on the bytes of each socket read at once, where ``http.client`` reads chunk by chunk.

Contract:

* Only for a plain :class:`urllib3.PoolManager` (no proxy; the client uses urllib3's own
  request path for proxies).
* The connection goes back to the pool only after a complete response that lets it be
  kept (HTTP/1.1 without ``Connection: close``); anything else closes it.
* Failures raise :class:`TransportError` (the client's ``ApiConnectionError``): connecting
  is retried ``connect_retries`` times (nothing was sent); a request on a *reused* pooled
  connection that fails before any byte of the answer arrived (the server closed the idle
  connection as the request went out) is sent again once on a new connection when its
  method is idempotent, as urllib3's default retry policy does; nothing else is retried.
* ``read_timeout`` bounds each socket read and write (a ``TimeoutError``, never a stale
  connection). On Linux a plain TCP connection gets it as the kernel's socket timeout, in
  blocking mode (:func:`_set_timeout`): Python then makes one system call per read or write
  instead of a poll before each.
"""

from __future__ import annotations

import functools
import re
import select
import socket
import struct
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import urllib3
from urllib3.util.url import parse_url
from urllib3.util.wait import wait_for_read

from kube_runtime._bounded import remember

__all__ = [
    "IDEMPOTENT",
    "Answer",
    "HeaderBlock",
    "HostPools",
    "Stream",
    "TransportError",
    "close_hostpools",
    "exchange",
    "header_block",
    "open_stream",
    "supports",
]

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
"""Methods sent again after a broken reused connection (urllib3's ``Retry`` defaults)."""

_T = TypeVar("_T")

_MAX_LINE = 65536
_MAX_HEADERS = 200
_MAX_HEAD = 256 * 1024
"""Most bytes the status line and headers may take."""
_RECV_SIZE = 256 * 1024
# The blank line ending the head: "\n" then "\n" or "\r\n" (a "\r" before the first "\n" does
# not move the end). Starting with a literal lets the regex engine skip to each "\n"; a leading
# optional "\r" made it try a match at every byte, 25 us a head.
_HEAD_END = re.compile(rb"\n\r?\n")
# A request target sent as given: characters urllib3's URL parser would leave alone
# (no percent-encoding to add or upper-case, no dot segments to remove).
_PLAIN_TARGET = re.compile(rb"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-F]{2})*")


class TransportError(Exception):
    """The request could not be completed (connect, send or read failed, or the answer was
    not HTTP/1.x)."""


class _Stale(Exception):
    """A reused connection broke before any byte of the answer: safe to resend when
    idempotent."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A complete HTTP answer: ``status``, ``headers`` (names lower-cased; a repeated header
    keeps its last value; read-only: answers with the same head share one dict) and the
    ``data`` (the decoded body)."""

    status: int
    headers: Mapping[str, str]
    data: bytes


def supports(pool: Any) -> bool:
    """Whether :func:`exchange` can use ``pool`` (a direct ``PoolManager``, no proxy)."""
    return type(pool) is urllib3.PoolManager


def exchange(
    pool: urllib3.PoolManager,
    method: str,
    url: str,
    headers: Mapping[str, str] | HeaderBlock,
    body: bytes | None,
    *,
    connect_timeout: float,
    read_timeout: float,
    connect_retries: int = 3,
    hostpools: HostPools | None = None,
) -> Answer:
    """Send one request on ``pool``'s connection to ``url``'s host and read the answer
    (see the module docstring for what is retried).

    ``headers``: a mapping, or the same rendered once by :func:`header_block` (a caller that
    sends the same headers again and again keeps the block).

    ``hostpools``: the caller's memo of ``pool``'s connection pool per origin (looking it up
    in the manager costs more than the rest of the exchange's Python work), which also keeps
    the origin's idle kept-alive connections (see :class:`HostPools`); the caller closes it
    with :func:`close_hostpools` when it clears ``pool``. A pool found closed is looked up
    again.
    """

    def read(conns: _Conns, conn: Any, incoming: _Incoming) -> Answer:
        keep = False
        try:
            answer, keep = _read_answer(incoming, method)
        except (ConnectionError, TimeoutError, OSError, ValueError) as err:
            raise TransportError(f"reading the answer: {err!r}") from err
        finally:
            conns.release(conn, keep)
        return answer

    return _request(
        pool,
        method,
        url,
        headers,
        body,
        read,
        connect_timeout,
        read_timeout,
        connect_retries,
        hostpools,
    )


def open_stream(
    pool: urllib3.PoolManager,
    url: str,
    headers: Mapping[str, str] | HeaderBlock,
    *,
    connect_timeout: float,
    read_timeout: float | None,
    connect_retries: int = 3,
    hostpools: HostPools | None = None,
) -> Stream:
    """Send a GET whose answer is a stream (a watch) and return it once its status line and
    headers arrived; the body is read from the :class:`Stream` as it comes. ``read_timeout``
    None waits for data forever. Retries as :func:`exchange` does for a GET."""

    def start(conns: _Conns, conn: Any, incoming: _Incoming) -> Stream:
        try:
            return Stream(conns, conn, incoming)
        except (ConnectionError, TimeoutError, OSError, ValueError) as err:
            conns.release(conn, False)
            raise TransportError(f"reading the answer: {err!r}") from err

    return _request(
        pool,
        "GET",
        url,
        headers,
        None,
        start,
        connect_timeout,
        read_timeout,
        connect_retries,
        hostpools,
    )


def _request(
    pool: urllib3.PoolManager,
    method: str,
    url: str,
    headers: Mapping[str, str] | HeaderBlock,
    body: bytes | None,
    answer: Callable[[_Conns, Any, _Incoming], _T],
    connect_timeout: float,
    read_timeout: float | None,
    connect_retries: int,
    hostpools: HostPools | None,
) -> _T:
    """Send the request and hand the connection, once the first bytes of the answer
    arrived, to ``answer(conns, conn, incoming)``, which releases it."""
    target = _target(url)
    block = headers if isinstance(headers, HeaderBlock) else header_block(headers)
    if body is not None:
        length = f"Content-Length: {len(body)}\r\n"
    elif method in ("POST", "PUT", "PATCH"):
        length = "Content-Length: 0\r\n"
    else:
        length = ""
    wire = (
        f"{method} {target.request_uri} HTTP/1.1\r\nHost: {target.host_header}\r\n"
        f"{block.lines}{length}\r\n"
    ).encode("latin-1")
    if body:
        wire += body
    resend = method in IDEMPOTENT
    fresh_pool = False
    while True:
        conns = _hostpool(pool, target, hostpools)
        try:
            conn, incoming = _send(conns, wire, connect_timeout, read_timeout, connect_retries)
        except urllib3.exceptions.ClosedPoolError as err:
            if fresh_pool or hostpools is None:
                raise TransportError(repr(err)) from err
            close_hostpools(hostpools)  # closed under the memo: take the manager's current pool
            fresh_pool = True
            continue
        except _Stale as stale:
            if not resend:
                raise TransportError(f"connection closed by the server: {stale}") from None
            resend = False  # once
            continue
        return answer(conns, conn, incoming)


@dataclass(frozen=True, slots=True)
class HeaderBlock:
    """Request headers rendered once (:func:`header_block`): ``lines`` is every
    ``Name: value`` line, each ended by CRLF, as sent."""

    lines: str


def header_block(headers: Mapping[str, str]) -> HeaderBlock:
    """``headers`` rendered for :func:`exchange` / :func:`open_stream` (in their order).
    ValueError for a name or value holding a line break or NUL (a header cannot carry one:
    it would end the line, as ``http.client`` refuses too)."""
    lines = "".join([f"{name}: {value}\r\n" for name, value in headers.items()])
    # Each clean line holds one CR and one LF, its end.
    count = len(headers)
    if lines.count("\n") != count or lines.count("\r") != count or "\x00" in lines:
        raise ValueError(f"a header name or value holds a line break or NUL: {list(headers)}")
    return HeaderBlock(lines)


class _Target(NamedTuple):
    scheme: str
    host: str
    port: int | None
    host_header: str
    request_uri: str


_TARGETS: dict[str, _Target] = {}
"""Recent URLs split (a controller sends the same few again and again); emptied when full."""
_TARGETS_MAX = 512


def _target(url: str) -> _Target:
    """``url`` split for a request (remembered for the URLs sent most)."""
    target = _TARGETS.get(url)
    if target is None:
        target = _split_target(url)
        remember(_TARGETS, url, target, _TARGETS_MAX)
    return target


def _split_target(url: str) -> _Target:
    """``url`` split for a request: the origin parsed once per origin, the rest (path and
    query) sent as given when urllib3's parser would not change it, else as it makes it."""
    start = url.find("//") + 2 if "//" in url else 0
    slash = url.find("/", start)
    query = url.find("?", start)
    if 0 <= query < slash or (slash < 0 and query >= 0):  # no path: "http://h?q" is "/?q"
        origin, rest = url[:query], "/" + url[query:]
    elif slash < 0:
        origin, rest = url, "/"
    else:
        origin, rest = url[:slash], url[slash:]
    scheme, host, port, host_header = _origin(origin)
    raw = rest.encode("latin-1", "replace")
    if "/." in rest or "#" in rest or not _PLAIN_TARGET.fullmatch(raw):
        rest = parse_url(url).request_uri
    return _Target(scheme, host, port, host_header, rest)


@functools.lru_cache(maxsize=64)
def _origin(origin: str) -> tuple[str, str, int | None, str]:
    parsed = parse_url(origin)
    scheme = parsed.scheme or "http"
    return scheme, parsed.host or "", parsed.port, _host_header(parsed.host, parsed.port, scheme)


class _Conns:
    """One origin's connections as the exchange takes and returns them: urllib3's pool for
    that origin (``hostpool``: it makes and connects the connections) and, in front of it, a
    plain list of ``idle`` kept-alive connections taken from it (at most the pool's size).

    urllib3's pool keeps idle connections in a ``queue.LifoQueue``: a lock and a condition
    per get and per put, about 4 us of a request's CPU. List ``pop``/``append`` are atomic,
    so the list needs no lock; it is used last in, first out like urllib3's queue. A
    connection taken from the list is checked as urllib3 checks a pooled one (the server may
    have closed it while idle: readable with nothing expected), and reconnects if it was.
    """

    __slots__ = ("hostpool", "idle", "limit")

    def __init__(self, hostpool: Any, limit: int) -> None:
        self.hostpool = hostpool
        self.idle: list[Any] = []
        self.limit = limit

    def get(self) -> Any:
        """An idle connection (checked), else urllib3's; ClosedPoolError when the pool was
        closed (the idle connections are closed then)."""
        if self.hostpool.pool is None:
            self.close()
            raise urllib3.exceptions.ClosedPoolError(self.hostpool, "Pool is closed.")
        try:
            conn = self.idle.pop()
        except IndexError:
            return self.hostpool._get_conn()
        sock = conn.sock
        if sock is not None and _readable(sock):
            conn.close()  # dropped by the peer (or it sent what nobody asked): reconnect
        return conn

    def release(self, conn: Any, keep: bool) -> None:
        """Keep ``conn`` for the next request (``keep``) or close it and free its slot."""
        if keep:
            idle = self.idle
            if len(idle) < self.limit and self.hostpool.pool is not None:
                idle.append(conn)
            else:
                _forget_kernel_timeout(conn)
                self.hostpool._put_conn(conn)
        else:
            conn.close()
            self.hostpool._put_conn(None)

    def close(self) -> None:
        """Close the idle connections (the pool's own are closed by the pool)."""
        idle = self.idle
        while idle:
            try:
                conn = idle.pop()
            except IndexError:
                break
            conn.close()


def _readable(sock: Any) -> bool:
    """Whether ``sock`` has something to read now (urllib3's ``wait_for_read(sock, 0)``,
    with one poll object and no helper layers)."""
    if _POLL is None:
        return bool(wait_for_read(sock, timeout=0.0))
    poller = _POLL()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


_POLL = getattr(select, "poll", None)

HostPools = dict[tuple[str, str, int | None], _Conns]
"""A caller's memo of the manager's connection pool per origin, with that origin's idle
kept-alive connections (see :func:`exchange`); :func:`close_hostpools` closes and empties it."""


def close_hostpools(memo: HostPools) -> None:
    """Close the idle connections ``memo`` keeps and empty it (its owner cleared the
    manager, or found a pool closed)."""
    conns = list(memo.values())
    memo.clear()
    for entry in conns:
        entry.close()


def _hostpool(pool: urllib3.PoolManager, target: _Target, memo: HostPools | None) -> _Conns:
    key = (target.scheme, target.host, target.port)
    conns = memo.get(key) if memo is not None else None
    if conns is None:
        hostpool = pool.connection_from_host(target.host, target.port, target.scheme)
        if memo is None:  # nowhere to keep idle connections: all go back to urllib3's pool
            return _Conns(hostpool, 0)
        conns = memo[key] = _Conns(hostpool, getattr(hostpool.pool, "maxsize", 0) or 1)
    return conns


@functools.lru_cache(maxsize=64)
def _host_header(host: str | None, port: int | None, scheme: str | None) -> str:
    """The ``Host`` header: the host (an IPv6 address keeps the brackets urllib3's parser
    gives it) and the port unless it is the scheme's default."""
    default = {"http": 80, "https": 443}.get(scheme or "http")
    return f"{host or ''}:{port}" if port and port != default else host or ""


def _send(
    conns: _Conns,
    wire: bytes,
    connect_timeout: float,
    read_timeout: float | None,
    connect_retries: int,
) -> tuple[Any, _Incoming]:
    """Send ``wire`` on a pooled (or new) connection and wait for the first bytes of the
    answer. Raises :class:`_Stale` when a reused connection broke first (the connection is
    closed), :class:`TransportError` for other failures."""
    conn = conns.get()
    try:
        reused = conn.sock is not None
        if not reused:
            _connect(conn, connect_timeout, connect_retries)
        sock = conn.sock
        _set_timeout(conn, sock, read_timeout)
        incoming = _Incoming(sock)
        try:
            sock.sendall(wire)
            got = incoming.fill()
        except (ConnectionError, TimeoutError, OSError) as err:
            if isinstance(err, BlockingIOError):  # a kernel timeout ran out (_set_timeout)
                err = TimeoutError("timed out")
            if reused and not isinstance(err, TimeoutError):
                raise _Stale(repr(err)) from None
            raise TransportError(repr(err)) from err
        if not got:
            if reused:
                raise _Stale("no answer")
            raise TransportError("the server closed the connection without an answer")
    except BaseException:
        conns.release(conn, False)
        raise
    return conn, incoming


#: Whether a plain TCP socket's timeout is the kernel's (``SO_RCVTIMEO``/``SO_SNDTIMEO``) with
#: the socket in blocking mode, instead of Python's: Python polls before every ``recv`` and
#: ``send`` of a socket with a timeout (two system calls, each releasing and taking the GIL
#: again), the kernel's timeout costs none. Linux, whose ``struct timeval`` is packed here.
_KERNEL_TIMEOUTS = sys.platform.startswith("linux") and hasattr(socket, "SO_RCVTIMEO")


def _set_timeout(conn: Any, sock: Any, timeout: float | None) -> None:
    """Give ``sock`` (``conn``'s) the timeout ``timeout`` (None: none) for each read and write.

    A plain TCP socket gets it as the kernel's (see :data:`_KERNEL_TIMEOUTS`), in blocking
    mode: a read or write that runs out of time then raises ``BlockingIOError`` (EAGAIN),
    which the readers here turn into ``TimeoutError``. The timeout set is remembered on
    ``conn`` with its socket, so that an exchange after the first costs no system call; a
    socket whose Python timeout was set since (urllib3's own request path) gets blocking
    mode back. A TLS socket (or another platform) gets ``settimeout`` as before."""
    if _KERNEL_TIMEOUTS and type(sock) is socket.socket and (timeout is None or timeout > 0):
        if sock.gettimeout() is not None:
            sock.settimeout(None)  # blocking mode: reads and writes with no poll before
        applied = getattr(conn, "_kr_timeout", None)
        if applied is None or applied[0] is not sock or applied[1] != timeout:
            _kernel_timeout(sock, timeout)
            conn._kr_timeout = (sock, timeout)
    elif sock.gettimeout() != timeout:  # settimeout costs a system call each time
        sock.settimeout(timeout)


def _kernel_timeout(sock: socket.socket, timeout: float | None) -> None:
    """Set ``sock``'s kernel timeouts for reads and writes to ``timeout`` (None: none)."""
    whole, micros = 0, 0
    if timeout is not None:
        whole = int(timeout)
        micros = (
            max(1, round((timeout - whole) * 1e6)) if whole == 0 else round((timeout - whole) * 1e6)
        )
        if micros >= 1_000_000:
            whole, micros = whole + 1, 0
    value = struct.pack("ll", whole, micros)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)


def _forget_kernel_timeout(conn: Any) -> None:
    """Clear the kernel timeouts :func:`_set_timeout` gave ``conn``'s socket, before the
    connection goes back to urllib3's pool (whose request path sets Python's timeout only)."""
    applied = getattr(conn, "_kr_timeout", None)
    if applied is not None:
        conn._kr_timeout = None
        sock = conn.sock
        if sock is applied[0] and applied[1] is not None:
            try:
                _kernel_timeout(sock, None)
            except OSError:  # closed meanwhile: nothing to clear
                pass


def _recv(sock: Any, size: int) -> bytes:
    """``sock.recv(size)``; a kernel timeout that ran out raises ``TimeoutError``."""
    try:
        data: bytes = sock.recv(size)
    except BlockingIOError:
        raise TimeoutError("timed out") from None
    return data


class _Incoming:
    """The bytes of one answer as they arrive: ``buf[pos:]`` is what is not consumed yet.

    Reads take whatever the socket holds (up to :data:`_RECV_SIZE`): a typical answer, status
    line, headers and body, arrives in one read.
    """

    __slots__ = ("buf", "pos", "sock")

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.pos = 0

    def fill(self) -> bool:
        """Read once more; False when the peer closed the connection."""
        data = _recv(self.sock, _RECV_SIZE)
        if not data:
            return False
        self.add(data)
        return True

    def add(self, data: bytes) -> None:
        """Append ``data`` (read from the socket) to what is not consumed yet."""
        if self.pos:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += data

    def until(
        self, pattern: re.Pattern[bytes], limit: int, what: str, *, end_ok: bool = False
    ) -> bytes:
        """The bytes up to and including the first match of ``pattern``; ValueError past
        ``limit`` bytes, or at the end of the connection (b"" instead when ``end_ok``)."""
        searched = self.pos
        while True:
            found = pattern.search(self.buf, searched)
            if found is not None and found.end() - self.pos <= limit:
                return self._take(found.end())
            if found is not None or len(self.buf) - self.pos > limit:
                raise ValueError(f"{what} longer than {limit} bytes")
            # a match may straddle the next read: search again from a few bytes back
            searched = max(self.pos, len(self.buf) - 4) - self.pos
            if not self.fill():
                if end_ok:
                    return b""
                raise ValueError(f"the connection closed inside the {what}")
            searched += self.pos

    def exactly(self, size: int, what: str) -> bytes:
        """The next ``size`` bytes; ValueError if the connection closes first."""
        while len(self.buf) - self.pos < size:
            if not self.fill():
                have = len(self.buf) - self.pos
                raise ValueError(f"the {what} ended after {have} of {size} bytes")
        return self._take(self.pos + size)

    def rest(self) -> bytes:
        """Everything until the peer closes the connection."""
        while self.fill():
            pass
        return self._take(len(self.buf))

    def _take(self, end: int) -> bytes:
        with memoryview(self.buf) as view:
            part = bytes(view[self.pos : end])
        self.pos = end
        return part


_LINE_END = re.compile(rb"\n")


def _connect(conn: Any, timeout: float, retries: int) -> None:
    conn.timeout = timeout
    for attempt in range(retries + 1):
        try:
            conn.connect()
            return
        except (OSError, urllib3.exceptions.HTTPError) as err:
            conn.close()
            if attempt == retries:
                raise TransportError(f"connecting: {err!r}") from err


_HEADS: dict[bytes, tuple[int, dict[str, str], bool]] = {}
"""Heads parsed lately, by their bytes: a server answers a client's requests with the same
few heads (the same status and headers, often the same Content-Length); emptied when full."""
_HEADS_MAX = 256
_HEAD_MEMO_MAX_BYTES = 1024
"""Longer heads are parsed each time (not remembered)."""


def _read_head(incoming: _Incoming) -> tuple[int, dict[str, str], bool]:
    """The status code, the headers (names lower-cased) and whether the connection may be
    kept after the body (HTTP/1.1 without ``Connection: close``). A head seen lately answers
    from :data:`_HEADS`: its headers dict is then shared with the answers before it (the
    transport's callers only read it)."""
    head = incoming.until(_HEAD_END, _MAX_HEAD, "status line and headers")
    known = _HEADS.get(head)
    if known is not None:
        return known
    parsed = _parse_head(head)
    if len(head) <= _HEAD_MEMO_MAX_BYTES:
        remember(_HEADS, head, parsed, _HEADS_MAX)
    return parsed


def _parse_head(head: bytes) -> tuple[int, dict[str, str], bool]:
    lines = head.decode("latin-1").rstrip("\r\n").split("\n")
    status_line = lines[0]
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
    status = int(parts[1])
    if len(lines) > _MAX_HEADERS + 1:
        raise ValueError("too many header lines")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed header line {line[:80]!r}")
        headers[name.strip(" \t\r").lower()] = value.strip(" \t\r")
    keep = parts[0] != "HTTP/1.0" and "close" not in headers.get("connection", "").lower()
    return status, headers, keep


def _read_answer(incoming: _Incoming, method: str) -> tuple[Answer, bool]:
    status, headers, keep = _read_head(incoming)
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        data = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        data = _read_chunked(incoming)
    elif "content-length" in headers:
        data = incoming.exactly(int(headers["content-length"]), "body")
    else:  # delimited by the end of the connection
        data = incoming.rest()
        keep = False
    if incoming.pos != len(incoming.buf):
        keep = False  # bytes beyond the answer: the connection's framing is not to be trusted
    return Answer(status, headers, data), keep


def _read_chunked(incoming: _Incoming) -> bytes:
    chunks: list[bytes] = []
    while True:
        line = incoming.until(_LINE_END, _MAX_LINE, "chunk size line")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            # trailers, up to the blank line (or the end of the connection)
            while incoming.until(_LINE_END, _MAX_LINE, "trailer", end_ok=True) not in (
                b"\r\n",
                b"\n",
                b"",
            ):
                pass
            return b"".join(chunks)
        chunks.append(incoming.exactly(size, "chunk"))
        incoming.until(_LINE_END, _MAX_LINE, "chunk end")  # CRLF after the chunk


class Stream:
    """An answer whose body is read as it arrives (a watch), on a connection of its own.

    ``status`` and ``headers`` are known at once. :meth:`read1` returns the body's bytes
    available now (chunked encoding removed; blocking only when none are), b"" at the end.
    :meth:`read` reads the whole body (an error answer). :meth:`shutdown` may be called from
    another thread to end a blocked read; :meth:`release_conn` ends the stream: the
    connection returns to the pool only after a complete body that lets it be kept.
    """

    def __init__(self, conns: _Conns, conn: Any, incoming: _Incoming) -> None:
        self._conns = conns
        self._conn: Any = conn
        self._incoming = incoming
        self.status, self.headers, self._keep = _read_head(incoming)
        self._chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        length = self.headers.get("content-length")
        self._left: int | None = None if self._chunked or length is None else int(length)
        self._chunk_left = 0  # bytes of the current chunk not yet returned
        self._crlf_due = False  # a chunk's data ended: its CRLF comes next
        self._done = self._left == 0

    def read1(self, size: int = -1) -> bytes:
        """Body bytes available now (at least one unless the body ended); ``size`` is a hint
        for how much to read from the socket at most, not a cap on the bytes returned."""
        incoming = self._incoming
        if (
            self._chunked
            and not self._done
            and not self._chunk_left
            and not self._crlf_due
            and incoming.pos == len(incoming.buf)
        ):
            # Nothing buffered, at a chunk's start (a watch waiting for its next event): a
            # read that brings exactly one whole chunk, as a watch event usually comes, is
            # answered from the bytes read; anything else is buffered and decoded below.
            data = _recv(incoming.sock, _RECV_SIZE)
            if not data:
                self._done = True
                self._keep = False  # ended early: the framing is unfinished
                return b""
            newline = data.find(b"\n")
            if newline > 0:
                try:
                    length = int(data[:newline], 16)  # no extension (";"): else ValueError
                except ValueError:
                    length = 0
                end = newline + 1 + length
                if length > 0 and len(data) == end + 2 and data.endswith(b"\r\n"):
                    return data[newline + 1 : end]
            incoming.add(data)
        while not self._done:
            if incoming.pos < len(incoming.buf):  # else nothing buffered to decode
                data = self._decode_buffered()
                if data:
                    return data
                if self._done:
                    break
            if not incoming.fill():
                self._done = True
                self._keep = False  # ended early: the framing is unfinished
                break
        return b""

    def read(self) -> bytes:
        """The rest of the body."""
        parts: list[bytes] = []
        while True:
            data = self.read1()
            if not data:
                return b"".join(parts)
            parts.append(data)

    def _decode_buffered(self) -> bytes:
        incoming = self._incoming
        buf, pos = incoming.buf, incoming.pos
        if not self._chunked:
            end = len(buf) if self._left is None else min(len(buf), pos + self._left)
            data = incoming._take(end)
            if self._left is not None:
                self._left -= len(data)
                self._done = self._left == 0
            else:
                self._keep = False  # delimited by the end of the connection
            return data
        return self._decode_chunks()

    def _decode_chunks(self) -> bytes:
        """The chunks' data buffered now, framing removed, in one pass with the position
        and the chunk state in locals (a watch event usually arrives as one whole chunk per
        read: a size line, the data, CRLF)."""
        incoming = self._incoming
        buf = incoming.buf
        pos = incoming.pos
        size = len(buf)
        left = self._chunk_left  # bytes of the current chunk not yet returned
        crlf_due = self._crlf_due  # a chunk's data ended: its CRLF comes next
        parts: list[bytes] = []
        last = False
        with memoryview(buf) as view:
            while True:
                if left:
                    end = pos + left if pos + left < size else size
                    if end == pos:
                        break
                    parts.append(bytes(view[pos:end]))
                    left -= end - pos
                    pos = end
                    if left:
                        break
                    crlf_due = True
                if crlf_due and buf.startswith(b"\r\n", pos):
                    pos += 2  # the usual line end after a chunk; any other is read below
                    crlf_due = False
                newline = buf.find(b"\n", pos)
                if newline < 0:
                    if size - pos > _MAX_LINE:
                        raise ValueError(f"chunk size line longer than {_MAX_LINE} bytes")
                    break
                line = bytes(view[pos : newline + 1])
                pos = newline + 1
                if crlf_due:
                    crlf_due = False
                    if line.strip():
                        raise ValueError(f"no line end after a chunk: {line[:40]!r}")
                    continue
                left = int(line.split(b";", 1)[0].strip(), 16)
                if left <= 0:
                    if left < 0:
                        raise ValueError(f"negative chunk size: {line[:40]!r}")
                    last = True
                    break
        incoming.pos = pos
        self._chunk_left = left
        self._crlf_due = crlf_due
        if last:
            self._finish_chunked()  # reads on: the view on the buffer is released
        return b"".join(parts)

    def _finish_chunked(self) -> None:
        """The last chunk: read the trailers up to the blank line, then the body is done."""
        while self._incoming.until(_LINE_END, _MAX_LINE, "trailer", end_ok=True) not in (
            b"\r\n",
            b"\n",
            b"",
        ):
            pass
        self._done = True

    def shutdown(self) -> None:
        """Shut the socket down for reading: a blocked :meth:`read1` returns (from any
        thread)."""
        conn = self._conn
        if conn is None or conn.sock is None:
            raise RuntimeError("the stream's connection is already released")
        conn.sock.shutdown(socket.SHUT_RD)

    def close(self) -> None:
        """Close the connection (the stream cannot be resumed)."""
        self._keep = False
        conn = self._conn
        if conn is not None:
            conn.close()

    def release_conn(self) -> None:
        """End the stream: keep the connection for the next request if the body ended
        cleanly, else close it. Idempotent."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        keep = self._keep and self._done and self._incoming.pos == len(self._incoming.buf)
        self._conns.release(conn, keep)
