"""The client's lean HTTP/1.1 exchange (``kube_runtime.client.transport``) against a scripted
socket server: framing (Content-Length, chunked, close-delimited), keep-alive reuse, and what
is sent again after a pooled connection the server closed."""

from __future__ import annotations

import random
import select
import socket
import threading
from collections.abc import Callable, Iterator

import pytest
import urllib3

from kube_runtime.client import transport
from kube_runtime.client.transport import TransportError, exchange

Handler = Callable[[socket.socket, bytes], bool]
"""Answers one request on a connection; returns whether to keep the connection open."""


class Server:
    """A loopback server answering each request with the next handler of ``script``;
    records the requests and the connections they came on."""

    def __init__(self, script: list[Handler]) -> None:
        self.script = list(script)
        self.requests: list[tuple[int, bytes]] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.script:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            number = self.connections
            with conn:
                buffer = b""
                while self.script:
                    while b"\r\n\r\n" not in buffer:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        buffer += chunk
                    if b"\r\n\r\n" not in buffer:
                        break
                    head, _, rest = buffer.partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    while len(rest) < length:
                        rest += conn.recv(65536)
                    request, buffer = head + b"\r\n\r\n" + rest[:length], rest[length:]
                    self.requests.append((number, request))
                    if not self.script.pop(0)(conn, request):
                        break

    def url(self, path: str = "/x") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.listener.close()


def reply(raw: bytes, keep: bool = True) -> Handler:
    def handle(conn: socket.socket, request: bytes) -> bool:
        conn.sendall(raw)
        return keep

    return handle


def hang_up(conn: socket.socket, request: bytes) -> bool:
    return False  # close without answering


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture
def serve() -> Iterator[Callable[[list[Handler]], Server]]:
    servers: list[Server] = []

    def start(script: list[Handler]) -> Server:
        servers.append(Server(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _send(
    pool: urllib3.PoolManager, method: str, url: str, body: bytes | None = None
) -> transport.Answer:
    return exchange(
        pool, method, url, {"Accept": "application/json"}, body, connect_timeout=2, read_timeout=2
    )


def test_content_length_and_keep_alive_reuse(serve: Callable[[list[Handler]], Server]) -> None:
    server = serve([reply(OK), reply(OK)])
    pool = urllib3.PoolManager()
    first = _send(pool, "POST", server.url("/a?b=c"), b'{"k":1}')
    second = _send(pool, "GET", server.url())
    assert (first.status, first.data, second.data) == (200, b"{}", b"{}")
    assert first.headers["content-type"] == "application/json"
    assert [n for n, _ in server.requests] == [1, 1]  # one connection, reused
    line, _, rest = server.requests[0][1].partition(b"\r\n")
    assert line == b"POST /a?b=c HTTP/1.1"
    assert b"Content-Length: 7\r\n" in rest and rest.endswith(b'{"k":1}')
    assert f"Host: 127.0.0.1:{server.port}".encode() in rest


def test_chunked_body_with_extensions_and_trailers(
    serve: Callable[[list[Handler]], Server],
) -> None:
    body = (
        b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4;ext=1\r\n{"a"\r\n5\r\n:[1]}\r\n0\r\nX-Trailer: y\r\n\r\n'
    )
    server = serve([reply(body), reply(OK)])
    pool = urllib3.PoolManager()
    answer = _send(pool, "GET", server.url())
    assert (answer.status, answer.data) == (201, b'{"a":[1]}')
    assert _send(pool, "GET", server.url()).data == b"{}"  # the connection stayed usable
    assert [n for n, _ in server.requests] == [1, 1]


def test_connection_close_and_close_delimited_bodies_are_not_reused(
    serve: Callable[[list[Handler]], Server],
) -> None:
    closing = b"HTTP/1.1 409 Conflict\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbad"
    delimited = b"HTTP/1.0 200 OK\r\n\r\nuntil the end"
    server = serve([reply(closing, keep=False), reply(delimited, keep=False), reply(OK)])
    pool = urllib3.PoolManager()
    conflict = _send(pool, "PUT", server.url(), b"{}")
    assert (conflict.status, conflict.data) == (409, b"bad")
    assert _send(pool, "GET", server.url()).data == b"until the end"
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert [n for n, _ in server.requests] == [1, 2, 3]


def test_a_stale_pooled_connection_is_resent_for_idempotent_methods_only(
    serve: Callable[[list[Handler]], Server],
) -> None:
    # The server answers, keeps the connection, then hangs up on the next request on it, as
    # a server closing an idle keep-alive connection while a request is on its way.
    server = serve([reply(OK), hang_up, reply(OK), reply(OK), hang_up])
    pool = urllib3.PoolManager()
    assert _send(pool, "GET", server.url()).status == 200
    assert _send(pool, "GET", server.url()).status == 200  # resent on a new connection
    assert [n for n, _ in server.requests] == [1, 1, 2]
    assert _send(pool, "GET", server.url()).status == 200
    with pytest.raises(TransportError, match="closed by the server"):
        _send(pool, "POST", server.url(), b"{}")  # a create is never sent twice
    assert len(server.requests) == 5


def test_garbage_and_refused_connections_are_transport_errors(
    serve: Callable[[list[Handler]], Server],
) -> None:
    server = serve([reply(b"SSH-2.0-OpenSSH\r\n\r\n", keep=False)])
    pool = urllib3.PoolManager()
    with pytest.raises(TransportError, match=r"not an HTTP/1\.x status line"):
        _send(pool, "GET", server.url())
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(TransportError, match="connecting"):
        exchange(
            pool,
            "GET",
            f"http://127.0.0.1:{port}/",
            {},
            None,
            connect_timeout=1,
            read_timeout=1,
            connect_retries=1,
        )


def test_only_a_direct_pool_is_supported() -> None:
    assert transport.supports(urllib3.PoolManager())
    assert not transport.supports(urllib3.ProxyManager("http://127.0.0.1:3128"))


def test_host_header_keeps_ipv6_brackets_and_drops_default_ports() -> None:
    assert transport._host_header("[::1]", 8080, "http") == "[::1]:8080"
    assert transport._host_header("h", 443, "https") == "h"
    assert transport._host_header("h", 80, "https") == "h:80"
    assert transport._host_header("h", None, "http") == "h"


def trickle(raw: bytes, size: int = 3, keep: bool = True) -> Handler:
    """Send the answer a few bytes at a time (each its own segment): framing must not
    depend on what one read returns."""

    def handle(conn: socket.socket, request: bytes) -> bool:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for start in range(0, len(raw), size):
            conn.sendall(raw[start : start + size])
        return keep

    return handle


def test_answers_split_across_many_reads_and_bare_line_feeds(
    serve: Callable[[list[Handler]], Server],
) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    )
    bare_lf = b"HTTP/1.1 200 OK\nContent-Length: 2\nX-A: b\n\n{}"
    server = serve([trickle(OK, 1), trickle(chunked, 2), trickle(bare_lf, 5), reply(OK)])
    pool = urllib3.PoolManager()
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert _send(pool, "GET", server.url()).data == b"abcde"
    answer = _send(pool, "GET", server.url())
    assert (answer.data, answer.headers["x-a"]) == (b"{}", "b")
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert [n for n, _ in server.requests] == [1, 1, 1, 1]  # every answer framed exactly


def test_bytes_beyond_the_answer_close_the_connection(
    serve: Callable[[list[Handler]], Server],
) -> None:
    server = serve([reply(OK + b"HTTP/1.1 200 OK\r\n"), reply(OK)])
    pool = urllib3.PoolManager()
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert [n for n, _ in server.requests] == [1, 2]  # not reused: the framing was off


def test_a_large_body_and_an_oversized_head(serve: Callable[[list[Handler]], Server]) -> None:
    big = bytes(range(256)) * 8192  # 2 MiB, several reads
    huge_head = b"HTTP/1.1 200 OK\r\nX: " + b"a" * (transport._MAX_HEAD + 10) + b"\r\n\r\n"
    server = serve(
        [
            reply(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big),
            reply(huge_head, keep=False),
        ]
    )
    pool = urllib3.PoolManager()
    assert _send(pool, "GET", server.url()).data == big
    with pytest.raises(TransportError, match="longer than"):
        _send(pool, "GET", server.url())


def test_request_targets_are_sent_as_urllib3_would_send_them(
    serve: Callable[[list[Handler]], Server],
) -> None:
    server = serve([reply(OK) for _ in range(4)])
    pool = urllib3.PoolManager()
    for path in (
        "/api/v1/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%29&limit=5",
        "/a b/%2f",  # a space to encode, a lower-case escape to upper-case
        "/x/./y/../z",  # dot segments
        "/ü",
    ):
        _send(pool, "GET", server.url(path))
    sent = [request.split(b" ", 2)[1] for _, request in server.requests]
    expected = [
        urllib3.util.parse_url(server.url(path)).request_uri.encode("latin-1")
        for path in ("/api/v1/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%29&limit=5",)
    ]
    assert sent[0] == expected[0]
    assert sent[1:] == [b"/a%20b/%2F", b"/x/z", b"/%C3%BC"]


def test_the_pool_memo_follows_the_manager(serve: Callable[[list[Handler]], Server]) -> None:
    server = serve([reply(OK), reply(OK), reply(OK)])
    pool = urllib3.PoolManager()
    memo: transport.HostPools = {}

    def send() -> int:
        return exchange(
            pool, "GET", server.url(), {}, None, connect_timeout=2, read_timeout=2, hostpools=memo
        ).status

    assert send() == 200 and len(memo) == 1
    pool.clear()
    memo.clear()  # what Client.close() does: the next request uses the manager's new pool
    assert send() == 200
    pool.clear()  # the manager drops its pool and the pool is closed, the memo not emptied:
    next(iter(memo.values())).hostpool.close()  # the closed pool is noticed and looked up again
    assert send() == 200
    assert [n for n, _ in server.requests] == [1, 2, 3]


def _stream(pool: urllib3.PoolManager, url: str) -> transport.Stream:
    return transport.open_stream(pool, url, {}, connect_timeout=2, read_timeout=2)


def _read_all(stream: transport.Stream) -> list[bytes]:
    reads = []
    while data := stream.read1(65536):
        reads.append(data)
    return reads


def test_a_chunked_stream_is_handed_on_as_it_arrives(
    serve: Callable[[list[Handler]], Server],
) -> None:
    events = [b'{"type":"ADDED","n":%d}\n' % n for n in range(50)]
    body = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    server = serve([trickle(head + body, 7), reply(head + body), reply(OK)])
    pool = urllib3.PoolManager()
    for _ in range(2):  # split anywhere (7-byte segments), then all in one read
        stream = _stream(pool, server.url("/w?watch=true"))
        assert stream.status == 200
        assert b"".join(_read_all(stream)) == b"".join(events)
        stream.release_conn()
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert [n for n, _ in server.requests] == [1, 1, 1]  # ended cleanly: the connection kept


def test_a_stream_error_answer_and_content_length(
    serve: Callable[[list[Handler]], Server],
) -> None:
    gone = b'{"kind":"Status","code":410}'
    server = serve([reply(b"HTTP/1.1 410 Gone\r\nContent-Length: %d\r\n\r\n" % len(gone) + gone)])
    pool = urllib3.PoolManager()
    stream = _stream(pool, server.url())
    assert (stream.status, stream.read()) == (410, gone)
    stream.release_conn()


def test_shutdown_ends_a_blocked_read_and_a_broken_stream_is_not_reused(
    serve: Callable[[list[Handler]], Server],
) -> None:
    opened = threading.Event()
    release = threading.Event()

    def endless(conn: socket.socket, request: bytes) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        opened.set()
        release.wait(5)
        return False

    server = serve([endless, reply(OK)])
    pool = urllib3.PoolManager()
    stream = transport.open_stream(pool, server.url(), {}, connect_timeout=2, read_timeout=None)
    assert stream.read1() == b"abc"
    opened.wait(2)
    threading.Timer(0.05, stream.shutdown).start()
    assert stream.read1() == b""  # unblocked by the shutdown from another thread
    stream.release_conn()
    release.set()
    assert _send(pool, "GET", server.url()).data == b"{}"
    assert [n for n, _ in server.requests] == [1, 2]


def test_targets_split_origin_and_rest() -> None:
    for url, origin, rest in [
        ("https://h:6443/api/v1/pods?limit=5", ("https", "h", 6443), "/api/v1/pods?limit=5"),
        ("http://h", ("http", "h", None), "/"),
        ("http://h?watch=1", ("http", "h", None), "/?watch=1"),
        ("https://h/k8s/clusters/c-1/api?x=/y", ("https", "h", None), "/k8s/clusters/c-1/api?x=/y"),
    ]:
        target = transport._target(url)
        assert (target.scheme, target.host, target.port) == origin
        assert target.request_uri == rest == urllib3.util.parse_url(url).request_uri


class _Bytes:
    """A socket whose recv() hands out ``data`` in pieces of ``size`` bytes."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size = data, size

    def recv(self, _: int) -> bytes:
        part, self.data = self.data[: self.size], self.data[self.size :]
        return part


@pytest.mark.parametrize("ending", [b"\r\n\r\n", b"\n\n", b"\r\n\n", b"\n\r\n"])
@pytest.mark.parametrize("size", [1, 2, 3, 4096])
def test_the_head_ends_at_the_first_blank_line_however_it_is_written(
    ending: bytes, size: int
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 4\nX-A: x" + ending
    incoming = transport._Incoming(_Bytes(head + b"\r\n\r\n", size))
    assert incoming.fill()
    status, headers, keep = transport._read_head(incoming)
    assert (status, headers, keep) == (200, {"content-length": "4", "x-a": "x"}, True)
    assert incoming.exactly(4, "body") == b"\r\n\r\n"  # the body starts right after the head


def test_head_is_rendered_as_before_and_a_block_is_the_same(
    serve: Callable[[list[Handler]], Server],
) -> None:
    """The request head: request line, Host, the headers in their order, Content-Length,
    whether the headers come as a mapping or as a block rendered once."""
    server = serve([reply(OK), reply(OK), reply(OK)])
    pool = urllib3.PoolManager()
    headers = {"Accept": "application/json", "User-Agent": "ua/1", "Content-Type": "a/b"}
    for given in (headers, transport.header_block(headers)):
        exchange(pool, "PUT", server.url("/p?q=1"), given, b"{}", connect_timeout=2, read_timeout=2)
    exchange(
        pool,
        "GET",
        server.url(),
        transport.header_block({}),
        None,
        connect_timeout=2,
        read_timeout=2,
    )
    host = f"Host: 127.0.0.1:{server.port}"
    put = (
        f"PUT /p?q=1 HTTP/1.1\r\n{host}\r\nAccept: application/json\r\nUser-Agent: ua/1\r\n"
        "Content-Type: a/b\r\nContent-Length: 2\r\n\r\n{}"
    ).encode()
    assert [r for _, r in server.requests] == [
        put,
        put,
        f"GET /x HTTP/1.1\r\n{host}\r\n\r\n".encode(),
    ]


@pytest.mark.parametrize("bad", ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\x00b"])
def test_a_header_with_a_line_break_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        transport.header_block({"Accept": "x", "Authorization": bad})
    with pytest.raises(ValueError, match="line break"):
        transport.header_block({bad: "x"})


def _idle(memo: transport.HostPools) -> list[object]:
    return next(iter(memo.values())).idle


def test_idle_connections_are_kept_in_the_memo_and_reused(
    serve: Callable[[list[Handler]], Server],
) -> None:
    server = serve([reply(OK)] * 3)
    pool = urllib3.PoolManager(maxsize=2)
    memo: transport.HostPools = {}

    def send(method: str = "GET") -> int:
        return exchange(
            pool, method, server.url(), {}, None, connect_timeout=2, read_timeout=2, hostpools=memo
        ).status

    assert send() == 200
    (conn,) = _idle(memo)
    assert send("POST") == 200 and _idle(memo) == [conn]
    assert send() == 200
    assert [n for n, _ in server.requests] == [1, 1, 1]
    transport.close_hostpools(memo)  # what Client.close() does: idle connections closed
    assert memo == {} and conn.sock is None  # type: ignore[attr-defined]


def test_an_idle_connection_the_server_closed_is_replaced_before_sending(
    serve: Callable[[list[Handler]], Server],
) -> None:
    """A POST (not sent again after a broken connection) on a pooled connection the server
    closed while it was idle: the closure is noticed before sending, as urllib3 does."""
    server = serve([reply(OK, keep=False), reply(OK)])
    pool = urllib3.PoolManager()
    memo: transport.HostPools = {}

    def send() -> int:
        return exchange(
            pool, "POST", server.url(), {}, b"{}", connect_timeout=2, read_timeout=2, hostpools=memo
        ).status

    assert send() == 200
    (conn,) = _idle(memo)
    # wait until the server's close reached this end (readable: EOF)
    assert select.select([conn.sock], [], [], 5.0)[0]  # type: ignore[attr-defined]
    assert send() == 200
    assert [n for n, _ in server.requests] == [1, 2]


class _FakeHostPool:
    """urllib3's pool as _Conns uses it: counts what is taken from and given back to it."""

    def __init__(self) -> None:
        self.pool: object | None = object()
        self.given: list[object | None] = []
        self.made = 0

    def _get_conn(self) -> object:
        self.made += 1
        return _FakeConn()

    def _put_conn(self, conn: object | None) -> None:
        self.given.append(conn)


class _FakeConn:
    sock = None

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_idle_list_holds_at_most_the_pool_size() -> None:
    hostpool = _FakeHostPool()
    conns = transport._Conns(hostpool, 2)
    taken = [conns.get() for _ in range(4)]
    assert hostpool.made == 4
    for conn in taken:
        conns.release(conn, True)
    assert conns.idle == taken[:2] and hostpool.given == taken[2:]  # the rest to urllib3's
    assert conns.get() is taken[1]  # last in, first out
    conns.release(taken[1], False)  # not kept: closed, its slot freed
    assert taken[1].closed and hostpool.given[-1] is None and conns.idle == [taken[0]]
    hostpool.pool = None  # closed: the idle ones are closed, nothing handed out
    with pytest.raises(urllib3.exceptions.ClosedPoolError):
        conns.get()
    assert taken[0].closed and conns.idle == []
    conns.release(taken[3], True)  # kept after the close: back to urllib3's (closed) pool
    assert conns.idle == [] and hostpool.given[-1] is taken[3]


def test_the_client_s_rendered_headers_follow_accept_user_agent_and_body(
    serve: Callable[[list[Handler]], Server],
) -> None:
    """Client.request renders its headers once per combination: what is sent still follows
    ``accept``, a changed ``user_agent`` and whether there is a body; close() closes the
    idle connection."""
    from kubernetes.client import Configuration

    from kube_runtime.client import Client

    server = serve([reply(OK)] * 4)
    cfg = Configuration()
    cfg.host = f"http://127.0.0.1:{server.port}"
    client = Client(cfg, user_agent="ua/1")
    client.request("GET", "/a")
    client.request("GET", "/a", accept="application/json;as=Table;g=meta.k8s.io;v=v1")
    client.user_agent = "ua/2"
    client.request("POST", "/a", body={"k": 1})
    client.request("GET", "/a")

    def headers(request: bytes) -> list[bytes]:
        return request.partition(b"\r\n\r\n")[0].split(b"\r\n")[2:]

    table = b"Accept: application/json;as=Table;g=meta.k8s.io;v=v1"
    assert [headers(r) for _, r in server.requests] == [
        [b"Accept: application/json", b"User-Agent: ua/1"],
        [table, b"User-Agent: ua/1"],
        [
            b"Accept: application/json",
            b"User-Agent: ua/2",
            b"Content-Type: application/json",
            b"Content-Length: 7",
        ],
        [b"Accept: application/json", b"User-Agent: ua/2"],
    ]
    (conn,) = _idle(client._hostpools)
    client.close()
    assert conn.sock is None  # type: ignore[attr-defined]


class _Pieces:
    """A socket whose recv() hands out ``data`` in the given pieces, then b""."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    def recv(self, _: int) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


class _NoConn:
    sock = None

    def close(self) -> None: ...


class _Released:
    def __init__(self) -> None:
        self.kept: list[bool] = []

    def release(self, conn: object, keep: bool) -> None:
        self.kept.append(keep)


def _chunked_stream(pieces: list[bytes]) -> tuple[transport.Stream, _Released]:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    incoming = transport._Incoming(_Pieces([head, *pieces]))
    assert incoming.fill()
    released = _Released()
    return transport.Stream(released, _NoConn(), incoming), released  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(40))
def test_chunked_framing_split_anywhere(seed: int) -> None:
    """Chunks of any size (extensions, bare LF or CRLF after the size and the data, blank
    padding after the data) cut at random points into reads: the data comes out whole and
    in order, and the stream ends cleanly after the trailers."""
    rng = random.Random(seed)
    payloads = [
        bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 9, 300]))) for _ in range(12)
    ]
    body = b""
    for data in payloads:
        size_line = (
            b"%x" % len(data) + rng.choice([b"", b";ext=1", b" ; a"]) + rng.choice([b"\r\n", b"\n"])
        )
        body += size_line + data + rng.choice([b"\r\n", b"\n", b" \r\n"])
    body += b"0\r\nX-Trailer: t\r\n" + rng.choice([b"\r\n", b"\n"])
    cuts = sorted(rng.sample(range(1, len(body)), rng.randrange(0, 25)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    stream, released = _chunked_stream(pieces)
    assert stream.read() == b"".join(payloads)
    stream.release_conn()
    assert released.kept == [True]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"3\r\nabcX\r\n0\r\n\r\n", "no line end after a chunk"),
        (b"zz\r\nab\r\n", "invalid literal"),
        (b"-2\r\nab\r\n", "negative chunk size"),
        (b"1" * (transport._MAX_LINE + 2), "chunk size line longer"),
    ],
)
def test_chunked_framing_errors(body: bytes, error: str) -> None:
    stream, _ = _chunked_stream([body])
    with pytest.raises(ValueError, match=error):
        stream.read()
