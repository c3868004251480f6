"""Watch events handed on once per socket read: ``Watch.buffered``, the reflector's
``flush()`` per batch, and the informer's one queueing per batch (order kept)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from pytest_mock import MockerFixture

from kube_runtime.cache.informer import SharedInformer
from kube_runtime.cache.reflector import Reflector
from kube_runtime.client import Watch


class Chunks:
    """A response whose ``read1()`` returns the given chunks, then b""."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)
        self.reads = 0

    def read1(self, amt: int) -> bytes:
        self.reads += 1
        return self.chunks.pop(0) if self.chunks else b""

    def shutdown(self) -> None:
        self.chunks = []

    def close(self) -> None:
        pass

    def release_conn(self) -> None:
        pass


def obj(name: str, rv: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)},
    }


def line(type_: str, name: str, rv: int) -> bytes:
    return orjson.dumps({"type": type_, "object": obj(name, rv)}) + b"\n"


def two_reads() -> Chunks:
    """Three events in the first read (the third cut short), two more in the second."""
    first = line("ADDED", "a", 2) + line("ADDED", "b", 3) + line("MODIFIED", "a", 4)
    second = line("ADDED", "c", 5) + line("DELETED", "b", 6)
    return Chunks(first + second[:10], second[10:])


class Source:
    """A list/watch source: an empty list, then one watch over ``response``."""

    def __init__(self, response: Chunks) -> None:
        self.response = response
        self.watches = 0

    def list(self, kind: Any, namespace: str | None = None, **kw: Any) -> Mapping[str, Any]:
        return {"metadata": {"resourceVersion": "1"}, "items": []}

    def watch(self, kind: Any, namespace: str | None = None, **kw: Any) -> Watch:
        self.watches += 1
        return Watch(self.response if self.watches == 1 else Chunks())


class RecordingSink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def replace(self, objs: list[dict[str, Any]], resource_version: str) -> None:
        self.calls.append(("replace", resource_version))

    def add(self, o: dict[str, Any]) -> None:
        self.calls.append(("add", o["metadata"]["name"]))

    def update(self, o: dict[str, Any]) -> None:
        self.calls.append(("update", o["metadata"]["name"]))

    def delete(self, o: dict[str, Any]) -> None:
        self.calls.append(("delete", o["metadata"]["name"]))

    def flush(self) -> None:
        self.calls.append(("flush", ""))


def test_buffered_counts_events_read_and_not_yet_returned() -> None:
    w = Watch(two_reads())
    assert w.buffered == 0
    assert next(w).object["metadata"]["name"] == "a"
    assert w.buffered == 2  # b and the MODIFIED a came with the same read
    next(w), next(w)
    assert w.buffered == 0  # the next event needs a read
    assert [e.type for e in w] == ["ADDED", "DELETED"]


def test_reflector_flushes_the_sink_once_per_socket_read() -> None:
    sink = RecordingSink()
    reflector = Reflector(Source(two_reads()), "v1/ConfigMap", sink, namespace="ns")
    reflector._list()
    reflector._watch_once(threading.Event())
    assert sink.calls == [
        ("replace", "1"),
        ("add", "a"),
        ("add", "b"),
        ("update", "a"),
        ("flush", ""),
        ("add", "c"),
        ("delete", "b"),
        ("flush", ""),
    ]
    assert reflector.last_sync_resource_version == "6"


class OneByOne:
    """A stream without ``buffered`` (a test double or a wrapper): flushed per event."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    def __iter__(self) -> Iterator[Any]:
        return iter(self.events)

    def close(self) -> None:
        pass


def test_reflector_flushes_after_every_event_of_a_stream_without_buffered(
    mocker: MockerFixture,
) -> None:
    sink = RecordingSink()
    events = list(Watch(two_reads()))
    source = Source(Chunks())
    watch = mocker.patch.object(source, "watch", return_value=OneByOne(events))
    reflector = Reflector(source, "v1/ConfigMap", sink, namespace="ns")
    reflector._watch_once(threading.Event())
    watch.assert_called_once()
    assert [c for c, _ in sink.calls] == ["add", "flush"] * 2 + ["update", "flush"] + [
        "add",
        "flush",
        "delete",
        "flush",
    ]


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, bool | None]] = []
        self.done = threading.Event()
        self.wanted = -1

    def expect(self, count: int) -> None:
        self.wanted = count

    def _record(self, entry: tuple[str, str, bool | None]) -> None:
        self.seen.append(entry)
        if len(self.seen) == self.wanted:
            self.done.set()

    def on_add(self, o: dict[str, Any], initial: bool) -> None:
        self._record(("add", o["metadata"]["name"], initial))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._record(("update", new["metadata"]["resourceVersion"], None))

    def on_delete(self, o: Any) -> None:
        self._record(("delete", o["metadata"]["name"], None))


def test_informer_queues_a_read_at_once_in_order(mocker: MockerFixture) -> None:
    informer = SharedInformer(Source(two_reads()), "v1/ConfigMap", namespace="ns")
    recorder = Recorder()
    registration = informer.add_event_handler(recorder)
    push_many = mocker.spy(registration, "_push_many")
    informer.reflector._list()
    informer.reflector._watch_once(threading.Event())
    pushes = [len(call.args[0]) for call in push_many.call_args_list]
    assert pushes == [1, 3, 2]  # the initial list's sync mark, then one push per read
    recorder.expect(5)
    registration._start()
    assert recorder.done.wait(5)
    registration._stop()
    registration._join(5)
    assert recorder.seen == [
        ("add", "a", False),
        ("add", "b", False),
        ("update", "4", None),
        ("add", "c", False),
        ("delete", "b", None),
    ]


def test_a_handler_registered_before_a_flush_sees_each_change_once() -> None:
    informer = SharedInformer(Source(Chunks()), "v1/ConfigMap", namespace="ns")
    informer.reflector._list()
    informer._on_upsert(obj("a", 2))  # in the store, its notification not queued yet
    recorder = Recorder()
    registration = informer.add_event_handler(recorder)
    informer._flush()  # the reflector's end of batch: nothing left for the new handler
    buffered = list(registration._buffer)
    assert [(tag, a["metadata"]["name"] if a else None) for tag, a, _ in buffered][:1] == [(0, "a")]
    assert len([n for n in buffered if n[0] == 0]) == 1  # one add of "a": the initial one
    assert buffered[0][2] is True


class Gated(Recorder):
    """A recorder whose first ``on_add`` waits for ``gate`` (``entered`` set meanwhile)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.gate = threading.Event()

    def on_add(self, o: dict[str, Any], initial: bool) -> None:
        if not self.entered.is_set():
            self.entered.set()
            assert self.gate.wait(5)
        super().on_add(o, initial)


def test_batches_queued_while_the_handler_is_busy_do_not_wake_it_again(
    mocker: MockerFixture,
) -> None:
    informer = SharedInformer(Source(Chunks()), "v1/ConfigMap", namespace="ns")
    informer.reflector._list()
    recorder = Gated()
    registration = informer.add_event_handler(recorder)
    recorder.expect(3)
    registration._start()
    informer._on_upsert(obj("a", 2))
    informer._flush()
    assert recorder.entered.wait(5)  # the handler thread is busy with "a"
    notify = mocker.spy(registration._cond, "notify")
    for name, rv in (("b", 3), ("c", 4)):
        informer._on_upsert(obj(name, rv))
        informer._flush()
    assert notify.call_count == 0  # it drains the buffer before it waits again
    recorder.gate.set()
    assert recorder.done.wait(5)
    assert [name for _, name, _ in recorder.seen] == ["a", "b", "c"]
    registration._stop()
    registration._join(5)
