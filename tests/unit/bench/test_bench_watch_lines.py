"""How the benchmarks' lean watch readers split a watch stream into lines
(bench.embedded_server.watch_lines, shared by RawWatcher and the watch-ingest consumer)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from bench.embedded_server import watch_lines


class _Response:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.sizes: list[int] = []

    def stream(self, amt: int) -> Iterator[bytes]:
        self.sizes.append(amt)
        yield from self.chunks


def _lines(chunks: list[bytes]) -> list[list[bytes]]:
    return list(watch_lines(cast(Any, _Response(chunks))))


def test_lines_split_across_reads_are_joined() -> None:
    assert _lines([b'{"a"', b":1}\n{", b'"b":2}\n']) == [[b'{"a":1}'], [b'{"b":2}']]


def test_a_read_without_newline_yields_nothing_and_a_tail_is_held_back() -> None:
    assert _lines([b"x", b"y\nz\n\nw"]) == [[b"xy", b"z", b""]]


def test_reads_of_64_kib() -> None:
    response = _Response([b"a\n"])
    assert list(watch_lines(cast(Any, response))) == [[b"a"]]
    assert response.sizes == [1 << 16]
