"""On a virtual clock the server writes a request's watch events before its answer, and the
answer with the loop thread idle for the clock (``_Connection._handle``): the sender, not the
loop thread, is then the one whose wait lets the time move. On the real clock the answer goes
first, as before."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

from kube_runtime import clock
from kube_runtime.envtest.server import http
from kube_runtime.envtest.server.http import HttpServer, Request, Response, Stream, StreamResponse


class _RecordingClock(clock.FakeClock):
    """A virtual clock that records whether the calling thread is inside an idle block."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = threading.local()

    def idle(self) -> contextlib.AbstractContextManager[None]:
        @contextlib.contextmanager
        def block() -> Iterator[None]:
            self.inside.idle = True
            try:
                yield
            finally:
                self.inside.idle = False

        return block()

    def is_idle(self) -> bool:
        return getattr(self.inside, "idle", False)


def _serve(
    server_clock: clock.Clock, monkeypatch: pytest.MonkeyPatch
) -> tuple[HttpServer, list[tuple[bytes, bool]]]:
    """A server whose GET opens a stream and whose PUT writes ``event`` to it and answers
    ``answer``; the writes its connections make, in order, with whether the loop thread was
    idle for the clock then."""
    streams: list[Stream] = []
    writes: list[tuple[bytes, bool]] = []
    is_idle = getattr(server_clock, "is_idle", lambda: False)
    original = http._Connection.write

    def write(conn: http._Connection, data: bytes) -> None:
        writes.append((data, is_idle()))
        original(conn, data)

    monkeypatch.setattr(http._Connection, "write", write)

    def handler(request: Request) -> Response | StreamResponse:
        if request.method == "GET":
            return StreamResponse(streams.append)
        streams[0].write(b"event\n")
        return Response(200, b"answer")

    server = HttpServer(handler, clock=server_clock)
    server.start()
    return server, writes


def _exchange(server: HttpServer) -> tuple[bytes, bytes]:
    """Open the stream, send the PUT: (what the stream got, the PUT's answer)."""
    with (
        socket.create_connection((server.host, server.port), timeout=10) as watch,
        socket.create_connection((server.host, server.port), timeout=10) as put,
    ):
        watch.sendall(b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n")
        seen = b""
        while b"\r\n\r\n" not in seen:
            seen += watch.recv(4096)
        put.sendall(b"PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        answer = b""
        while not answer.endswith(b"answer"):
            answer += put.recv(4096)
        while not seen.endswith(b"event\n\r\n"):
            seen += watch.recv(4096)
        return seen, answer


def test_on_a_virtual_clock_the_answer_goes_last_and_idle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, writes = _serve(_RecordingClock(), monkeypatch)
    try:
        seen, answer = _exchange(server)
    finally:
        server.stop()
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"\r\n\r\nanswer")
    assert seen.endswith(b"\r\n6\r\nevent\n\r\n")
    chunk = next(i for i, (data, _) in enumerate(writes) if data == b"6\r\nevent\n\r\n")
    reply = next(i for i, (data, _) in enumerate(writes) if data.endswith(b"answer"))
    assert chunk < reply  # the watch event first
    assert writes[reply][1] is True  # the answer written as idle
    assert writes[chunk][1] is False


def test_on_the_real_clock_the_answer_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    server, writes = _serve(clock.REAL, monkeypatch)
    try:
        seen, answer = _exchange(server)
    finally:
        server.stop()
    assert answer.endswith(b"\r\n\r\nanswer") and seen.endswith(b"\r\n6\r\nevent\n\r\n")
    chunk = next(i for i, (data, _) in enumerate(writes) if data == b"6\r\nevent\n\r\n")
    reply = next(i for i, (data, _) in enumerate(writes) if data.endswith(b"answer"))
    assert reply < chunk


def test_a_connection_closed_after_its_answer_still_gets_it_on_a_virtual_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, _ = _serve(_RecordingClock(), monkeypatch)
    try:
        with socket.create_connection((server.host, server.port), timeout=10) as watch:
            watch.sendall(b"GET /watch HTTP/1.1\r\nHost: x\r\n\r\n")
            seen = b""
            while b"\r\n\r\n" not in seen:
                seen += watch.recv(4096)
            with socket.create_connection((server.host, server.port), timeout=10) as put:
                put.sendall(
                    b"PUT /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                )
                answer = b""
                while chunk := put.recv(4096):
                    answer += chunk
    finally:
        server.stop()
    assert b"Connection: close\r\n" in answer and answer.endswith(b"answer")
