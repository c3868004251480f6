"""Watch's direct read of a plain chunked body against urllib3's read1 (a real socket).

Every case is read twice from the same scripted server: through the shortcut
(``Watch._fast_read1``, the http.client body's read1) and through ``response.read1`` (the
shortcut switched off), and both must give the same events, the same bytes read, the same
end and the same state of the connection pool afterwards.
"""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Iterator

import orjson
import pytest
import urllib3

from kube_runtime.client.watch import Watch


def _line(name: str) -> bytes:
    obj = {"kind": "Pod", "metadata": {"name": name, "resourceVersion": "7"}, "spec": {"x": name}}
    return orjson.dumps({"type": "ADDED", "object": obj}) + b"\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
_STREAM = _line("a") + _line("b") + _line("c")
# path -> (bytes sent after the request, whether the connection is then closed)
_SCRIPTS: dict[str, tuple[bytes, bool]] = {
    # a watch as a server sends it: one chunk per flush, lines cut anywhere, then the end
    "/chunked": (
        _HEAD
        + b"Transfer-Encoding: chunked\r\n\r\n"
        + _chunk(_STREAM[:10])
        + _chunk(_STREAM[10:70])
        + _chunk(_STREAM[70:])
        + b"0\r\n\r\n",
        False,
    ),
    # the connection breaks inside a chunk
    "/broken": (
        _HEAD
        + b"Transfer-Encoding: chunked\r\n\r\n"
        + _chunk(_line("a"))
        + b"%x\r\n" % 500
        + _line("b")[:20],
        True,
    ),
    # a malformed chunk size
    "/garbled": (
        _HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + _chunk(_line("a")) + b"zz\r\n",
        True,
    ),
    # not taken: a length to count down, or an encoding to decode
    "/length": (_HEAD + b"Content-Length: %d\r\n\r\n" % len(_STREAM) + _STREAM, False),
    "/gzip": (
        _HEAD
        + b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
        + _chunk(gzip.compress(_STREAM))
        + b"0\r\n\r\n",
        False,
    ),
}


@pytest.fixture
def server() -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            pending = b""
            while not stop.is_set():
                while b"\r\n\r\n" not in pending:
                    data = conn.recv(65536)
                    if not data:
                        return
                    pending += data
                head, _, pending = pending.partition(b"\r\n\r\n")
                path = head.split(b" ")[1].decode()
                body, close = _SCRIPTS[path]
                conn.sendall(body)
                if close:
                    conn.shutdown(socket.SHUT_RDWR)
                    return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    listener.close()


def _read(url: str, path: str, plain: bool) -> tuple[list[bytes], list[str], int, int, bool]:
    """(bytes of each read, events' names, bytes counted, open pooled connections, whether
    the shortcut was taken) of reading ``path`` once to its end."""
    pool = urllib3.PoolManager()
    resp = pool.request("GET", url + path, preload_content=False, retries=False)
    watch = Watch(resp, path)
    taken = watch._fast_read1 is not None
    if not plain:
        watch._fast_read1 = None
    reads: list[bytes] = []
    real_read = watch._read

    def read() -> bytes:
        data = real_read()
        reads.append(data)
        return data

    watch._read = read  # type: ignore[method-assign]
    names = [event.object["metadata"]["name"] for event in watch]
    counted = resp.tell()
    conn_pool = pool.connection_from_url(url)
    queued = list(conn_pool.pool.queue)  # type: ignore[union-attr]
    idle = sum(1 for conn in queued if conn is not None and conn.sock is not None)
    return reads, names, counted, idle, taken


@pytest.mark.parametrize("path", ["/chunked", "/broken", "/garbled"])
def test_plain_read_as_urllib3_reads(server: str, path: str) -> None:
    fast = _read(server, path, plain=True)
    general = _read(server, path, plain=False)
    assert fast[4], "the shortcut applies to a plain chunked body"
    assert fast[:4] == general[:4]
    if path == "/chunked":
        assert fast[1] == ["a", "b", "c"] and fast[3] == 1  # ended cleanly, connection reusable
    else:
        assert fast[1] == ["a"] and fast[3] == 0  # ended at the break, connection dropped


@pytest.mark.parametrize("path", ["/length", "/gzip"])
def test_bodies_with_a_length_or_an_encoding_read_through_urllib3(server: str, path: str) -> None:
    fast = _read(server, path, plain=True)
    assert not fast[4]
    assert fast[1] == ["a", "b", "c"]
