"""A lean HTTP/1.1 exchange on urllib3's pooled connections: the client's request fast path.

urllib3 (with ``http.client`` and its ``email`` header parser beneath) costs about 200
microseconds of CPU per request on top of the bytes on the wire, some 800 Python calls: for
a controller that writes a few thousand objects it is a third of its CPU. :func:`exchange`
keeps what urllib3 is good at, the pool (one per host, bounded, thread-safe), connecting
(TLS with the kubeconfig's CA, client certificate, SNI and hostname checks; the socket
options) and the check that an idle pooled socket is still open, and does the exchange
itself: the request written in one ``sendall``, the status line and headers parsed by hand,
the body read by ``Content-Length`` or chunked encoding.

Contract:

* Only for a plain :class:`urllib3.PoolManager` (no proxy; the client uses urllib3's own
  request path for proxies and for watches).
* The connection goes back to the pool only after a complete response that lets it be
  kept (HTTP/1.1 without ``Connection: close``); anything else closes it.
* Failures raise :class:`TransportError` (the client's ``ApiConnectionError``): connecting
  is retried ``connect_retries`` times (nothing was sent); a request on a *reused* pooled
  connection that fails before any byte of the answer arrived (the server closed the idle
  connection as the request went out) is sent again once on a new connection when its
  method is idempotent, as urllib3's default retry policy does; nothing else is retried.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import urllib3
from urllib3.util.url import parse_url

__all__ = ["IDEMPOTENT", "Answer", "HostPools", "TransportError", "exchange", "supports"]

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
"""Methods sent again after a broken reused connection (urllib3's ``Retry`` defaults)."""

_MAX_LINE = 65536
_MAX_HEADERS = 200
_MAX_HEAD = 256 * 1024
"""Most bytes the status line and headers may take."""
_RECV_SIZE = 256 * 1024
_HEAD_END = re.compile(rb"\r?\n\r?\n")
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
    keeps its last value) and the ``data`` (the decoded body)."""

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
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    connect_timeout: float,
    read_timeout: float,
    connect_retries: int = 3,
    hostpools: HostPools | None = None,
) -> Answer:
    """Send one request on ``pool``'s connection to ``url``'s host and read the answer
    (see the module docstring for what is retried).

    ``hostpools``: the caller's memo of ``pool``'s connection pool per origin (looking it up
    in the manager costs more than the rest of the exchange's Python work); the caller
    empties it when it clears ``pool``. A pool found closed is looked up again.
    """
    target = _target(url)
    head = [
        f"{method} {target.request_uri} HTTP/1.1",
        f"Host: {target.host_header}",
    ]
    head.extend(f"{name}: {value}" for name, value in headers.items())
    if body is not None:
        head.append(f"Content-Length: {len(body)}")
    elif method in ("POST", "PUT", "PATCH"):
        head.append("Content-Length: 0")
    wire = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
    if body:
        wire += body
    resend = method in IDEMPOTENT
    fresh_pool = False
    while True:
        hostpool = _hostpool(pool, target, hostpools)
        try:
            return _once(hostpool, wire, method, connect_timeout, read_timeout, connect_retries)
        except urllib3.exceptions.ClosedPoolError as err:
            if fresh_pool or hostpools is None:
                raise TransportError(repr(err)) from err
            hostpools.clear()  # closed under the memo: take the manager's current pool
            fresh_pool = True
        except _Stale as stale:
            if not resend:
                raise TransportError(f"connection closed by the server: {stale}") from None
            resend = False  # once


class _Target(NamedTuple):
    scheme: str
    host: str
    port: int | None
    host_header: str
    request_uri: str


def _target(url: str) -> _Target:
    """``url`` split for a request: the origin parsed once per origin, the rest (path and
    query) sent as given when urllib3's parser would not change it, else as it makes it."""
    slash = url.find("/", url.find("//") + 2) if "//" in url else -1
    origin, rest = (url, "/") if slash < 0 else (url[:slash], url[slash:])
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


HostPools = dict[tuple[str, str, int | None], Any]
"""A caller's memo of the manager's connection pool per origin (see :func:`exchange`)."""


def _hostpool(pool: urllib3.PoolManager, target: _Target, memo: HostPools | None) -> Any:
    key = (target.scheme, target.host, target.port)
    hostpool = memo.get(key) if memo is not None else None
    if hostpool is None:
        hostpool = pool.connection_from_host(target.host, target.port, target.scheme)
        if memo is not None:
            memo[key] = hostpool
    return hostpool


@functools.lru_cache(maxsize=64)
def _host_header(host: str | None, port: int | None, scheme: str | None) -> str:
    """The ``Host`` header: the host (an IPv6 address keeps the brackets urllib3's parser
    gives it) and the port unless it is the scheme's default."""
    default = {"http": 80, "https": 443}.get(scheme or "http")
    return f"{host or ''}:{port}" if port and port != default else host or ""


def _once(
    hostpool: Any,
    wire: bytes,
    method: str,
    connect_timeout: float,
    read_timeout: float,
    connect_retries: int,
) -> Answer:
    conn = hostpool._get_conn()
    keep = False
    try:
        reused = conn.sock is not None
        if not reused:
            _connect(conn, connect_timeout, connect_retries)
        sock = conn.sock
        sock.settimeout(read_timeout)
        incoming = _Incoming(sock)
        try:
            sock.sendall(wire)
            got = incoming.fill()
        except (ConnectionError, TimeoutError, OSError) as err:
            if reused and not isinstance(err, TimeoutError):
                raise _Stale(repr(err)) from None
            raise TransportError(repr(err)) from err
        if not got:
            if reused:
                raise _Stale("no answer")
            raise TransportError("the server closed the connection without an answer")
        try:
            answer, keep = _read_answer(incoming, method)
        except (ConnectionError, TimeoutError, OSError, ValueError) as err:
            raise TransportError(f"reading the answer: {err!r}") from err
        return answer
    finally:
        if keep:
            hostpool._put_conn(conn)
        else:
            conn.close()
            hostpool._put_conn(None)


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
        data = self.sock.recv(_RECV_SIZE)
        if not data:
            return False
        if self.pos:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += data
        return True

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


def _read_answer(incoming: _Incoming, method: str) -> tuple[Answer, bool]:
    head = incoming.until(_HEAD_END, _MAX_HEAD, "status line and headers")
    lines = head.decode("latin-1").rstrip("\r\n").split("\n")
    status_line = lines[0]
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
    status = int(parts[1])
    http10 = parts[0] == "HTTP/1.0"
    if len(lines) > _MAX_HEADERS + 1:
        raise ValueError("too many header lines")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed header line {line[:80]!r}")
        headers[name.strip(" \t\r").lower()] = value.strip(" \t\r")
    connection = headers.get("connection", "").lower()
    keep = not http10 and "close" not in connection
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
