"""A Lease update whose watch event was decoded first (the embedded server on a simulated
clock writes a write's watch events before its answer) takes its answer from that event's
object instead of decoding the same bytes again (``LeaseLock._decode_answer``)."""

from __future__ import annotations

from typing import Any

import orjson

from kube_runtime.leaderelection import LeaseLock

_LEASE: dict[str, Any] = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "lease", "namespace": "ns", "resourceVersion": "7"},
    "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
}


def _lock() -> LeaseLock:
    return LeaseLock(None, "ns", "lease")  # type: ignore[arg-type]  # no request is made


def test_the_answer_is_the_object_of_the_event_decoded_first() -> None:
    lock = _lock()
    raw = orjson.dumps(_LEASE)
    event = lock.decode_event(b'{"type":"MODIFIED","object":' + raw + b"}")
    answer = lock._decode_answer(raw)
    assert answer is event["object"]
    assert answer == orjson.loads(raw)


def test_other_bytes_are_decoded() -> None:
    lock = _lock()
    raw = orjson.dumps(_LEASE)
    other = orjson.dumps({**_LEASE, "spec": {**_LEASE["spec"], "holderIdentity": "them"}})
    assert lock._decode_answer(raw) == orjson.loads(raw)  # no event seen yet
    lock.decode_event(b'{"type":"MODIFIED","object":' + raw + b"}")
    assert lock._decode_answer(other) == orjson.loads(other)
    # An event of another type with the same object is not an update's.
    added = lock.decode_event(b'{"type":"ADDED","object":' + raw + b"}")
    answer = lock._decode_answer(raw)
    assert answer == orjson.loads(raw) and answer is not added["object"]


def test_an_event_recognised_as_the_own_update_s_is_not_decoded_again() -> None:
    lock = _lock()
    raw = orjson.dumps(_LEASE)
    line = b'{"type":"MODIFIED","object":' + raw + b"}"
    stored = orjson.loads(raw)
    lock._own_event = (line, {"type": "MODIFIED", "object": stored})
    assert lock.decode_event(line)["object"] is stored
