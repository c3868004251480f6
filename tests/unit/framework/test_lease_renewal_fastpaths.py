"""The fast paths a Lease renewal takes under simulated time give what the general ways give:
MicroTime stamps from epoch seconds, the own update's watch event recognised by its bytes, a
stream read that brings one whole chunk, remembered HTTP heads, and a reader's idle block
that releases what it handed on."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import orjson
import pytest

from kube_runtime import clock
from kube_runtime.client import Client, transport
from kube_runtime.client.watch import Watch
from kube_runtime.leaderelection import (
    LeaderElectionRecord,
    LeaseLock,
    _micro_time,
    format_micro_time,
)


def _reference(epoch: float) -> str:
    return format_micro_time(datetime.fromtimestamp(epoch, timezone.utc))


@pytest.mark.parametrize(
    "epoch",
    [
        clock.SIM_EPOCH,
        clock.SIM_EPOCH + 2.0,
        clock.SIM_EPOCH + 59.9999995,  # rounds up into the next minute
        clock.SIM_EPOCH + 0.0000005,  # half a microsecond: half to even
        clock.SIM_EPOCH + 0.0000015,
        1_767_225_659.999_999_6,
        0.0,
        -1.5,  # before 1970: the general way
    ],
)
def test_micro_time_is_format_micro_time_of_the_same_moment(epoch: float) -> None:
    assert _micro_time(epoch) == _reference(epoch)


def test_micro_time_agrees_on_random_moments() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        epoch = round(rng.uniform(1.7e9, 1.8e9), rng.randint(0, 7))
        assert _micro_time(epoch) == _reference(epoch)


def test_a_client_of_another_type_is_updated_as_before() -> None:
    class Plain:
        def update(self, obj: dict[str, Any]) -> dict[str, Any]:
            return {**obj, "metadata": {**obj["metadata"], "resourceVersion": "2"}}

        def update_raw(self, obj: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
            raise AssertionError("only the REST client's own update_raw is used")

    lock = LeaseLock(Plain(), "ns", "lease")  # type: ignore[arg-type]
    lock._lease = {"metadata": {"name": "lease", "resourceVersion": "1"}}
    lock.update(LeaderElectionRecord(holder_identity="me"))
    assert lock.lease is not None and lock.lease["metadata"]["resourceVersion"] == "2"
    line = b'{"type":"MODIFIED","object":' + orjson.dumps(lock.lease) + b"}"
    assert lock.decode_event(line) == orjson.loads(line)


class _Reads:
    """A socket whose recv returns the scripted reads, then b"" (the peer closed)."""

    def __init__(self, reads: list[bytes]) -> None:
        self.reads = list(reads)

    def recv(self, _: int) -> bytes:
        return self.reads.pop(0) if self.reads else b""


def _stream(reads: list[bytes]) -> transport.Stream:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    incoming = transport._Incoming(_Reads([head, *reads]))
    return transport.Stream(None, None, incoming)  # type: ignore[arg-type]


def test_a_read_of_one_whole_chunk_and_every_other_shape_give_the_body() -> None:
    reads = [
        b"5\r\nhello\r\n",  # one whole chunk: answered from the read
        b"3;ext=1\r\nabc\r\n",  # an extension: the general way
        b"2\r\nde\r\n3\r\nfgh\r\n",  # two chunks in one read
        b"4\r\nij",  # a chunk cut across reads
        b"kl\r\n",
        b"A\r\n0123456789\r\n",  # hex digits
        b"0\r\n\r\n",
    ]
    stream = _stream(reads)
    got = []
    while data := stream.read1():
        got.append(data)
    assert b"".join(got) == b"helloabcdefghijkl0123456789"
    assert got[0] == b"hello"
    assert stream._done and stream._keep


def test_a_stream_ended_early_is_not_kept() -> None:
    stream = _stream([b"5\r\nhello\r\n"])
    assert stream.read1() == b"hello"
    assert stream.read1() == b""
    assert stream._done and not stream._keep


def test_a_remembered_head_answers_as_a_parsed_one() -> None:
    raw = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n"
    parsed = [transport._read_head(transport._Incoming(_Reads([raw + b"{}"]))) for _ in range(3)]
    assert parsed[0] == (201, {"content-type": "application/json", "content-length": "2"}, True)
    assert parsed[1] == parsed[0] and parsed[2] == parsed[0]


def test_a_reader_s_idle_block_releases_what_it_handed_on() -> None:
    sim = clock.SimClock(cpu=None)
    with sim.activate():
        key = sim.new_key()
        for _ in range(3):
            sim.hold(key)
        block = sim.reader_idle(key)
        block.releasing = 2
        with block:
            assert "'" + key + "': 1" in sim.describe()  # two released, one still held
        assert block.releasing == 0
        with block:  # reusable; nothing to release this time
            assert "'" + key + "': 1" in sim.describe()
        sim.release(key)
        assert "held nothing" in sim.describe()
        sim.sleep(1)  # time still moves as before
        assert sim.monotonic() == 1


@contextmanager
def _lease_watched(namespace: str) -> Iterator[tuple[Client, LeaseLock, dict[str, Any], Watch]]:
    """An embedded cluster with a Lease ``lease`` created in ``namespace`` by a LeaseLock, and
    a watch of that Lease from its creation on: (client, lock, the created Lease, the watch)."""
    from kube_runtime import kinds
    from kube_runtime.envtest import EmbeddedCluster

    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        client = cluster.client()
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        lock = LeaseLock(client, namespace, "lease")
        lock.create(LeaderElectionRecord(holder_identity="me", lease_duration_seconds=15))
        created = lock.lease
        assert created is not None
        watch = client.watch(
            kinds.Lease,
            namespace,
            field_selector="metadata.name=lease",
            resource_version=created["metadata"]["resourceVersion"],
        )
        with watch:
            yield client, lock, created, watch


def test_update_raw_answers_the_bytes_the_lease_watch_then_sends() -> None:
    with _lease_watched("raw") as (client, _, created, watch):
        stored, raw = client.update_raw(
            {**created, "spec": {**created["spec"], "renewTime": "2026-01-01T00:00:02.000000Z"}}
        )
        assert orjson.loads(raw) == stored
        lines: list[bytes] = []

        def loads(line: bytes) -> Any:
            lines.append(line)
            return orjson.loads(line)

        watch.loads = loads
        event = next(e for e in watch if e.type != "BOOKMARK")
        assert event.type == "MODIFIED" and event.object == stored
        assert lines[-1] == b'{"type":"MODIFIED","object":' + raw + b"}"


def test_the_own_update_s_event_is_recognised_by_its_bytes() -> None:
    with _lease_watched("own") as (_, lock, _, watch):
        lines: list[bytes] = []

        def keep(line: bytes) -> Any:
            lines.append(line)
            return lock.decode_event(line)

        watch.loads = keep
        lock.update(
            LeaderElectionRecord(
                holder_identity="me",
                lease_duration_seconds=15,
                renew_time="2026-01-01T00:00:02.000000Z",  # a change: a no-op is no event
            )
        )
        event = next(e for e in watch if e.type != "BOOKMARK")
        own = lock.lease
        assert event.object is own  # recognised: not decoded again
        assert orjson.loads(lines[-1]) == {"type": "MODIFIED", "object": own}
        # Any other line (another holder, another type) is decoded.
        other = {**own, "spec": {**own["spec"], "holderIdentity": "them"}}
        for different in (
            b'{"type":"MODIFIED","object":' + orjson.dumps(other) + b"}",
            b'{"type":"ADDED","object":' + orjson.dumps(own) + b"}",
        ):
            decoded = lock.decode_event(different)
            assert decoded == orjson.loads(different)
            assert decoded["object"] is not own
