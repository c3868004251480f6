"""A plain TCP connection of the client's lean exchange gets its read timeout from the kernel
(``SO_RCVTIMEO``/``SO_SNDTIMEO``) in blocking mode, so that Python does not poll before every
``recv`` and ``send``: a read that runs out of time is still a ``TimeoutError``, never a stale
connection sent again, and a connection handed back to urllib3's pool has the kernel's timeout
cleared."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
import urllib3

from kube_runtime.client import transport
from kube_runtime.client.transport import TransportError, exchange

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
)

pytestmark = pytest.mark.skipif(
    not transport._KERNEL_TIMEOUTS, reason="kernel timeouts are used on Linux only"
)


class _Server:
    """Answers the first ``answered`` requests of each connection with ``answer``, then reads
    on without answering; counts the requests."""

    def __init__(self, answer: bytes, answered: int) -> None:
        self.answer = answer
        self.answered = answered
        self.requests = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.open.append(conn)
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        served = 0
        buffer = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\r\n\r\n" in buffer:
                _, _, buffer = buffer.partition(b"\r\n\r\n")
                self.requests += 1
                if served < self.answered:
                    served += 1
                    conn.sendall(self.answer)

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/x"

    def close(self) -> None:
        self.listener.close()
        for conn in self.open:
            conn.close()


@pytest.fixture
def server_and_pool() -> Iterator[tuple[_Server, urllib3.PoolManager, transport.HostPools]]:
    server = _Server(OK, answered=1)
    pool = urllib3.PoolManager()
    memo: transport.HostPools = {}
    try:
        yield server, pool, memo
    finally:
        transport.close_hostpools(memo)
        pool.clear()
        server.close()


def _exchange(
    server: _Server, pool: urllib3.PoolManager, memo: transport.HostPools, timeout: float
) -> transport.Answer:
    return exchange(
        pool,
        "PUT",
        server.url(),
        {},
        b"{}",
        connect_timeout=2,
        read_timeout=timeout,
        hostpools=memo,
    )


def test_a_plain_socket_blocks_with_the_kernel_s_timeout(
    server_and_pool: tuple[_Server, urllib3.PoolManager, transport.HostPools],
) -> None:
    server, pool, memo = server_and_pool
    assert _exchange(server, pool, memo, 1.25).status == 200
    (conns,) = memo.values()
    (conn,) = conns.idle
    assert conn.sock.gettimeout() is None  # blocking: no poll before each recv and send
    raw = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.calcsize("ll"))
    seconds, micros = struct.unpack("ll", raw)
    assert abs(seconds + micros / 1e6 - 1.25) < 0.02  # the kernel keeps it in clock ticks


def test_a_read_that_runs_out_of_time_is_a_timeout_and_is_not_sent_again(
    server_and_pool: tuple[_Server, urllib3.PoolManager, transport.HostPools],
) -> None:
    server, pool, memo = server_and_pool
    assert _exchange(server, pool, memo, 2).status == 200
    # The reused connection's answer never comes: a timeout, not a stale connection.
    with pytest.raises(TransportError, match="timed out"):
        _exchange(server, pool, memo, 0.2)
    assert server.requests == 2


def test_a_stream_read_that_runs_out_of_time_raises_timeout_error() -> None:
    server = _Server(STREAM_HEAD, answered=1)
    pool = urllib3.PoolManager()
    try:
        stream = transport.open_stream(pool, server.url(), {}, connect_timeout=2, read_timeout=0.2)
        try:
            with pytest.raises(TimeoutError):
                stream.read1()
        finally:
            stream.close()
    finally:
        pool.clear()
        server.close()


def test_a_connection_handed_back_to_urllib3_has_no_kernel_timeout(
    server_and_pool: tuple[_Server, urllib3.PoolManager, transport.HostPools],
) -> None:
    server, pool, _ = server_and_pool
    # Without a memo every connection goes back to urllib3's pool.
    answer = exchange(pool, "PUT", server.url(), {}, b"{}", connect_timeout=2, read_timeout=2)
    assert answer.status == 200
    hostpool = pool.connection_from_url(server.url())
    conn = hostpool._get_conn()
    try:
        raw = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.calcsize("ll"))
        assert struct.unpack("ll", raw) == (0, 0)
    finally:
        hostpool._put_conn(conn)


def test_a_zero_timeout_keeps_python_s_and_a_timeout_set_is_remembered() -> None:
    class Conn:
        pass

    left, right = socket.socketpair()
    with left, right:
        conn = Conn()
        transport._set_timeout(conn, left, 0.0)  # non-blocking, as settimeout(0) makes it
        assert left.gettimeout() == 0.0
        transport._set_timeout(conn, left, 3.0)
        assert left.gettimeout() is None
        transport._set_timeout(conn, left, 3.0)  # remembered: nothing to set again
        assert conn._kr_timeout == (left, 3.0)  # type: ignore[attr-defined]
