"""Watch stream decoding with a scripted response (no server)."""

from __future__ import annotations

import queue
import threading

import orjson
import pytest

from kube_runtime.client import Gone, ServerError, Watch, WatchEvent


class ScriptedResponse:
    """A response whose read1() returns queued chunks; b"" ends it; shutdown() unblocks."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks: queue.Queue[bytes] = queue.Queue()
        for c in chunks:
            self.chunks.put(c)
        self.released = False
        self.closed = False
        self.shut = False

    def read1(self, amt: int) -> bytes:
        return self.chunks.get(timeout=10)

    def shutdown(self) -> None:
        self.shut = True
        self.chunks.put(b"")

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        self.released = True


def line(type_: str, name: str, rv: str = "1") -> bytes:
    obj = {"kind": "ConfigMap", "metadata": {"name": name, "resourceVersion": rv}}
    return orjson.dumps({"type": type_, "object": obj}) + b"\n"


def test_events_split_across_chunks_and_batched() -> None:
    a, b, c = line("ADDED", "a"), line("MODIFIED", "b"), line("BOOKMARK", "", "9")
    resp = ScriptedResponse(a[:7], a[7:] + b[:3], b[3:] + c, b"")
    events = list(Watch(resp))
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("MODIFIED", "b"),
        ("BOOKMARK", ""),
    ]
    assert isinstance(events[0], WatchEvent)
    assert resp.released and not resp.closed


def test_event_available_before_the_stream_ends() -> None:
    resp = ScriptedResponse(line("ADDED", "a"))
    w = Watch(resp)
    assert next(w).object["metadata"]["name"] == "a"  # no end-of-stream needed
    w.close()
    assert list(w) == []


def test_error_event_raises_typed_error() -> None:
    gone = {
        "type": "ERROR",
        "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
    }
    resp = ScriptedResponse(line("ADDED", "a") + orjson.dumps(gone) + b"\n")
    w = Watch(resp)
    assert next(w).type == "ADDED"
    with pytest.raises(Gone, match="too old"):
        next(w)
    assert resp.released and resp.closed  # the stream's unread end never goes back to the pool
    other = {"type": "ERROR", "object": {"kind": "Status", "code": 500, "message": "boom"}}
    with pytest.raises(ServerError):
        next(Watch(ScriptedResponse(orjson.dumps(other) + b"\n")))


def test_close_from_another_thread_unblocks_iteration() -> None:
    resp = ScriptedResponse(line("ADDED", "a"))
    w = Watch(resp)
    seen: list[str] = []
    done = threading.Event()

    def consume() -> None:
        for ev in w:
            seen.append(ev.type)
        done.set()

    t = threading.Thread(target=consume)
    t.start()
    while not seen:
        threading.Event().wait(0.01)
    w.close()
    assert done.wait(5)
    t.join()
    assert resp.shut and resp.closed and resp.released
    assert w.closed


def test_broken_stream_just_ends() -> None:
    class Broken(ScriptedResponse):
        def read1(self, amt: int) -> bytes:
            data = super().read1(amt)
            if data == b"boom":
                raise ConnectionResetError("reset by peer")
            return data

    resp = Broken(line("ADDED", "a"), b"boom")
    assert [e.type for e in Watch(resp)] == ["ADDED"]


def test_context_manager_closes() -> None:
    resp = ScriptedResponse()
    with Watch(resp) as w:
        pass
    assert w.closed and resp.shut and resp.closed


def test_blank_and_whitespace_lines_carry_no_event() -> None:
    a, b = line("ADDED", "a"), line("MODIFIED", "b")
    # keep-alive lines, CRLF endings and a line split across reads
    resp = ScriptedResponse(b"\n\n" + a[:-1] + b"\r", b"\n \r\n" + b[:5], b[5:] + b"\n\n", b"")
    events = list(Watch(resp))
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("MODIFIED", "b"),
    ]
