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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import urllib3
from urllib3.util.url import parse_url

__all__ = ["IDEMPOTENT", "Answer", "TransportError", "exchange", "supports"]

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
"""Methods sent again after a broken reused connection (urllib3's ``Retry`` defaults)."""

_MAX_LINE = 65536
_MAX_HEADERS = 200


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
) -> Answer:
    """Send one request on ``pool``'s connection to ``url``'s host and read the answer
    (see the module docstring for what is retried)."""
    parsed = parse_url(url)
    hostpool = pool.connection_from_host(parsed.host, parsed.port, parsed.scheme)
    head = [
        f"{method} {parsed.request_uri} HTTP/1.1",
        f"Host: {_host_header(parsed.host, parsed.port, parsed.scheme)}",
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
    while True:
        try:
            return _once(hostpool, wire, method, connect_timeout, read_timeout, connect_retries)
        except _Stale as stale:
            if not resend:
                raise TransportError(f"connection closed by the server: {stale}") from None
            resend = False  # once


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
        try:
            sock.sendall(wire)
            reader = sock.makefile("rb")
            status_line = reader.readline(_MAX_LINE + 1)
        except (ConnectionError, TimeoutError, OSError) as err:
            if reused and not isinstance(err, TimeoutError):
                raise _Stale(repr(err)) from None
            raise TransportError(repr(err)) from err
        if not status_line:
            if reused:
                raise _Stale("no answer")
            raise TransportError("the server closed the connection without an answer")
        try:
            answer, keep = _read_answer(status_line, reader, method)
        except (ConnectionError, TimeoutError, OSError, ValueError) as err:
            raise TransportError(f"reading the answer: {err!r}") from err
        finally:
            reader.close()
        return answer
    finally:
        if keep:
            hostpool._put_conn(conn)
        else:
            conn.close()
            hostpool._put_conn(None)


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


def _read_answer(status_line: bytes, reader: Any, method: str) -> tuple[Answer, bool]:
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
    status = int(parts[1])
    http10 = parts[0] == b"HTTP/1.0"
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADERS):
        line = reader.readline(_MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            break
        if not line:
            raise ValueError("the connection closed inside the headers")
        name, sep, value = line.partition(b":")
        if not sep:
            raise ValueError(f"malformed header line {line[:80]!r}")
        headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
    else:
        raise ValueError("too many header lines")
    connection = headers.get("connection", "").lower()
    keep = not http10 and "close" not in connection
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        data = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        data = _read_chunked(reader)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        data = reader.read(length)
        if len(data) != length:
            raise ValueError(f"the body ended after {len(data)} of {length} bytes")
    else:  # delimited by the end of the connection
        data = reader.read()
        keep = False
    return Answer(status, headers, data), keep


def _read_chunked(reader: Any) -> bytes:
    chunks: list[bytes] = []
    while True:
        line = reader.readline(_MAX_LINE + 1)
        if not line:
            raise ValueError("the connection closed inside a chunked body")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while reader.readline(_MAX_LINE + 1) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(chunks)
        chunk = reader.read(size)
        if len(chunk) != size:
            raise ValueError("the connection closed inside a chunk")
        chunks.append(chunk)
        reader.read(2)  # CRLF after the chunk
