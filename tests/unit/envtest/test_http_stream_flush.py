"""Streams written from another thread are flushed by the server's loop in batches: one loop
wake-up while earlier posted flushes wait for the loop, every chunk delivered in order
(``HttpServer.flush_soon``)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from pytest_mock import MockerFixture

from kube_runtime.envtest.server.http import HttpServer, Request, Stream, StreamResponse


class Streams(list[Stream]):
    """The streams opened, in order; ``started`` is released once per stream."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Semaphore(0)


@pytest.fixture
def served() -> Iterator[tuple[HttpServer, Streams]]:
    """A server whose every request opens a stream, handed to the test."""
    streams = Streams()

    def start(stream: Stream) -> None:
        streams.append(stream)
        streams.started.release()

    def handler(request: Request) -> StreamResponse:
        return StreamResponse(start)

    server = HttpServer(handler)
    server.start()
    try:
        yield server, streams
    finally:
        server.stop()


def _open(server: HttpServer, streams: Streams) -> tuple[socket.socket, Stream]:
    """A new connection with its stream open (the response head read)."""
    sock = socket.create_connection((server.host, server.port), timeout=10)
    sock.sendall(b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    assert data.startswith(b"HTTP/1.1 200")
    assert streams.started.acquire(timeout=10)  # start() runs after the head is sent
    return sock, streams[-1]


def _read_lines(sock: socket.socket, rest: bytes, count: int) -> list[bytes]:
    """``count`` newline-ended lines of the chunked body (chunk framing dropped)."""
    buf, body = rest, b""
    while body.count(b"\n") < count:
        while True:
            head, sep, tail = buf.partition(b"\r\n")
            if not sep:
                break
            size = int(head, 16)
            if len(tail) < size + 2:
                break
            body += tail[:size]
            buf = tail[size + 2 :]
        if body.count(b"\n") < count:
            chunk = sock.recv(65536)
            assert chunk, "the stream ended early"
            buf += chunk
    return body.splitlines()


def _hold_loop(server: HttpServer) -> threading.Event:
    """Block the server's loop until the returned event is set."""
    held, go = threading.Event(), threading.Event()

    def block() -> None:
        held.set()
        go.wait(10)

    server.loop.call_soon_threadsafe(block)
    assert held.wait(10)
    return go


def test_writes_from_another_thread_wake_the_loop_once_per_batch(
    served: tuple[HttpServer, Streams], mocker: MockerFixture
) -> None:
    server, streams = served
    first, one = _open(server, streams)
    second, two = _open(server, streams)
    with first, second:
        go = _hold_loop(server)
        wake = mocker.spy(server.loop, "call_soon_threadsafe")
        lines = [b'{"n":%d}\n' % i for i in range(200)]

        def write() -> None:
            for line in lines:
                one.write(line)
                two.write(line)

        writer = threading.Thread(target=write)
        writer.start()
        writer.join(10)
        # The first write posted a flush; every later one, to either stream, joined it.
        assert wake.call_count == 1
        go.set()
        expected = [line.rstrip(b"\n") for line in lines]
        assert _read_lines(first, b"", len(lines)) == expected
        assert _read_lines(second, b"", len(lines)) == expected


def test_a_write_after_a_quiet_moment_is_flushed_without_waiting_for_more(
    served: tuple[HttpServer, Streams],
) -> None:
    server, streams = served
    sock, stream = _open(server, streams)
    with sock:
        for i in range(3):  # each write alone: the read below returns only once it is sent
            threading.Thread(target=stream.write, args=(b'{"n":%d}\n' % i,)).start()
            assert _read_lines(sock, b"", 1) == [b'{"n":%d}' % i]
