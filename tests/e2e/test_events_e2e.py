"""EventRecorder against the embedded API server: Event fields, repeats counted on one Event,
and a recorder whose API calls all fail never troubling its caller."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from kube_runtime import clock
from kube_runtime.client.errors import ApiConnectionError
from kube_runtime.events import EventRecorder
from kube_runtime.kinds import Event


def _config_map(client: Any, namespace: str, name: str = "settings") -> dict[str, Any]:
    created: dict[str, Any] = client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {"k": "v"},
        }
    )
    return created


def _events(client: Any, namespace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.list(Event, namespace)["items"]
    return items


def test_an_event_is_written_with_its_fields(client: Any, namespace: str) -> None:
    cm = _config_map(client, namespace)
    recorder = EventRecorder(client, "settings-controller", "node-a")
    try:
        recorder.eventf(cm, "Warning", "InvalidValue", "key %s: %s", "k", "not a number")
        assert recorder.flush(10)
    finally:
        recorder.close()
    [event] = _events(client, namespace)
    assert re.fullmatch(r"settings\.[0-9a-f]{16}", event["metadata"]["name"])
    ref = event["involvedObject"]
    assert ref["apiVersion"] == "v1" and ref["kind"] == "ConfigMap"
    assert ref["name"] == "settings" and ref["namespace"] == namespace
    assert ref["uid"] == cm["metadata"]["uid"]
    assert ref["resourceVersion"] == cm["metadata"]["resourceVersion"]
    assert event["type"] == "Warning"
    assert event["reason"] == "InvalidValue"
    assert event["message"] == "key k: not a number"
    assert event["source"] == {"component": "settings-controller", "host": "node-a"}
    assert event["reportingComponent"] == "settings-controller"
    assert event["reportingInstance"] == "node-a"
    assert event["count"] == 1
    assert event["firstTimestamp"] == event["lastTimestamp"]


def test_repeats_are_counted_on_one_event(client: Any, namespace: str) -> None:
    cm = _config_map(client, namespace)
    recorder = EventRecorder(client, "settings-controller")
    try:
        for _ in range(3):
            recorder.event(cm, "Normal", "Synced", "settings applied")
        recorder.event(cm, "Normal", "Synced", "settings applied again")
        assert recorder.flush(10)
    finally:
        recorder.close()
    events = {e["message"]: e for e in _events(client, namespace)}
    assert set(events) == {"settings applied", "settings applied again"}
    assert events["settings applied"]["count"] == 3
    assert events["settings applied again"]["count"] == 1


def test_a_deleted_event_is_recreated_on_the_next_repeat(client: Any, namespace: str) -> None:
    cm = _config_map(client, namespace)
    recorder = EventRecorder(client, "settings-controller")
    try:
        recorder.event(cm, "Normal", "Synced", "settings applied")
        assert recorder.flush(10)
        [first] = _events(client, namespace)
        client.delete(Event, first["metadata"]["name"], namespace)
        recorder.event(cm, "Normal", "Synced", "settings applied")
        assert recorder.flush(10)
    finally:
        recorder.close()
    [event] = _events(client, namespace)
    assert event["message"] == "settings applied"
    assert event["count"] == 2


class _Unreachable:
    """A client whose every request fails as if the API server were down."""

    def __init__(self) -> None:
        self.calls = 0

    def create(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise ApiConnectionError("connection refused")

    patch = create


@pytest.mark.simtime  # the recorders' retry delays are virtual, on a cluster of the test's own
def test_a_failing_api_neither_raises_nor_blocks(
    sim_client: Any, sim_namespace: str, sim_cluster: Any, wait_for: Any
) -> None:
    client, namespace = sim_client, sim_namespace
    faults = sim_cluster.faults  # the real backend skips (no fault injection)
    cm = _config_map(client, namespace)
    # API errors from the server (every events write answered 500) ...
    faults.fail("events", "*", 500)
    recorder = EventRecorder(client, "settings-controller", retry_delay=0.01)
    # ... and a client that cannot reach any server.
    unreachable = _Unreachable()
    dead = EventRecorder(unreachable, "settings-controller", retry_delay=0.01)
    done = clock.current().event()

    def emit() -> None:
        for i in range(20):
            recorder.event(cm, "Warning", "Failed", f"attempt {i}")
            dead.event(cm, "Warning", "Failed", f"attempt {i}")
        done.set()

    threading.Thread(target=emit, daemon=True).start()
    wait_for(done.is_set, 10, message="20 event() calls to return")
    assert recorder.flush(30) and dead.flush(30)
    assert unreachable.calls >= 3  # retried before being dropped
    recorder.close()
    dead.close()
    faults.clear()
    assert _events(client, namespace) == []
