"""The HTTP server's shortcuts give what its general path gives: a request head parsed again
from the table of known heads makes the same request (and a refused head is refused every
time), and a plain answer's head is the bytes ``_head`` writes."""

from __future__ import annotations

import random
from http import HTTPStatus

import pytest

from kube_runtime.envtest.server import http
from kube_runtime.envtest.server.http import _Connection, _head, _Malformed, _plain_head


def _parse(data: bytes) -> tuple[http.Request | str | None, bool, bytes]:
    conn = _Connection.__new__(_Connection)
    conn.buffer = bytearray(data)
    conn.keep_alive = True
    try:
        request = conn._parse()
    except _Malformed as bad:
        return f"{bad.status} {bad.reason}", conn.keep_alive, bytes(conn.buffer)
    return request, conn.keep_alive, bytes(conn.buffer)


def _fields(result: http.Request | str | None) -> object:
    if isinstance(result, http.Request):
        return (result.method, result.target, result.headers, result.body, result.path)
    return result


def _random_request(rng: random.Random) -> bytes:
    method = rng.choice(["GET", "PUT", "post", "PATCH", "BREW", "GE T", ""])
    target = rng.choice(["/api/v1/namespaces/b/leases/l", "/x?watch=1&a=%2F", "", "*"])
    version = rng.choice(["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTX"])
    body = rng.choice([b"", b'{"a":1}', b"x" * 40])
    lines = [f"{method} {target} {version}"]
    chunked = rng.random() < 0.2
    for _ in range(rng.randint(0, 4)):
        lines.append(
            rng.choice(
                [
                    "User-Agent: kube-runtime/1.0",
                    "Accept: application/json",
                    "Connection: " + rng.choice(["close", "keep-alive", "Keep-Alive"]),
                    "X-Odd :  spaced ",
                    "bad header",
                    "Content-Length: 7",
                    "Content-Length: x",
                ]
            )
        )
    if chunked:
        lines.append("Transfer-Encoding: " + rng.choice(["chunked", "gzip"]))
        framed = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
    else:
        lines.append(f"Content-Length: {len(body)}")
        framed = body
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + framed + b"GET / HTTP/1.1"


@pytest.mark.parametrize("seed", range(4))
def test_a_known_head_parses_as_it_did_the_first_time(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        data = _random_request(rng)
        http._HEADS.clear()
        first, first_alive, first_rest = _parse(data)
        again, again_alive, again_rest = _parse(data)  # from the table when it parsed
        assert _fields(again) == _fields(first)
        assert (again_alive, again_rest) == (first_alive, first_rest)
        if isinstance(first, http.Request) and isinstance(again, http.Request):
            assert again.headers is not first.headers  # each request has its own dict


def test_a_partial_body_waits_for_the_rest() -> None:
    head = b"PUT /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n"
    assert _parse(head + b"12345")[0] is None
    assert _parse(head + b"12345")[0] is None  # the head is known now
    request = _parse(head + b"1234567890")[0]
    assert isinstance(request, http.Request)
    assert request.body == b"1234567890"


@pytest.mark.parametrize("content_type", ["application/json", "text/plain; charset=utf-8", "é"])
def test_a_plain_head_is_what_head_writes(content_type: str) -> None:
    for status in [*(s.value for s in HTTPStatus), 299, 599]:
        for length in (0, 7, 123456):
            plain = _plain_head(status, content_type) + b"%d\r\n\r\n" % length
            assert plain == _head(status, content_type, length, {})


class _Wire:
    """A connection that keeps the bytes a stream writes."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.server = self

    def write(self, data: bytes) -> None:
        self.data += data

    def writelines(self, parts: list[bytes]) -> None:
        self.data += b"".join(parts)

    def flush_soon(self, flush: object) -> None:
        """The test flushes itself."""

    def stream_ended(self) -> None:
        """Nothing to do."""


def _chunks(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        line_end = data.index(b"\r\n", pos)
        size = int(data[pos:line_end], 16)
        start = line_end + 2
        assert data[start + size : start + size + 2] == b"\r\n"
        out.append(data[start : start + size])
        pos = start + size + 2
    return out


@pytest.mark.parametrize("seed", range(3))
def test_stream_flushes_frame_every_write_in_order(seed: int) -> None:
    """One write or many between flushes, small or over MAX_CHUNK, some while the transport
    is paused: the chunks carry the writes in order, none over MAX_CHUNK but a single larger
    write, then the last chunk."""
    rng = random.Random(seed)
    wire = _Wire()
    stream = http.Stream(wire)  # type: ignore[arg-type]
    written = []
    for _ in range(200):
        for _ in range(rng.choice([1, 1, 2, 5])):
            size = http.MAX_CHUNK + 3 if rng.random() < 0.03 else rng.choice([1, 50, 4000])
            data = bytes([rng.randrange(256)]) * size
            written.append(data)
            stream.write(data)
        if rng.random() < 0.1:  # the transport is full: nothing is written until it drains
            stream.pause()
            before = len(wire.data)
            stream._flush()
            assert len(wire.data) == before
            stream.resume()
        else:
            stream._flush()
    stream.close()
    stream._flush()
    chunks = _chunks(bytes(wire.data))
    assert chunks[-1] == b""
    assert b"".join(chunks) == b"".join(written)
    sizes = {len(w) for w in written}
    assert all(len(c) <= http.MAX_CHUNK or len(c) in sizes for c in chunks)
    assert stream.closed
