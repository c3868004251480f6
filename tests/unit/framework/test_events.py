"""EventRecorder against an in-memory client: Event shape, dedup, aggregation, spam filter,
retries, the bounded queue, and that the caller is never blocked or raised at."""

from __future__ import annotations

import copy
import re
import threading
import time
from typing import Any

import pytest

from kube_runtime.client.errors import ApiConnectionError, BadRequest, NotFound, ServerError
from kube_runtime.clock import FakeClock
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.events import AGGREGATE_PREFIX, EventRecorder
from kube_runtime.kinds import Event


def _status(code: int, reason: str) -> dict[str, Any]:
    return {"kind": "Status", "code": code, "reason": reason, "message": reason}


class FakeClient:
    def __init__(self) -> None:
        self.events: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self.failures: list[Exception] = []  # raised by the next calls, in order
        self.gate: threading.Event | None = None

    def _maybe_fail(self) -> None:
        if self.gate is not None:
            self.gate.wait(10)
        if self.failures:
            raise self.failures.pop(0)

    def create(self, obj: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("create", obj["metadata"]["name"]))
        self._maybe_fail()
        assert obj["kind"] == "Event" and namespace == obj["metadata"]["namespace"]
        stored = copy.deepcopy(obj)
        stored["metadata"]["resourceVersion"] = "1"
        self.events[(namespace, obj["metadata"]["name"])] = stored
        return copy.deepcopy(stored)

    def patch(
        self, kind: Any, name: str, patch: dict[str, Any], *, namespace: str, patch_type: str
    ) -> dict[str, Any]:
        self.calls.append(("patch", name))
        self._maybe_fail()
        assert kind == Event and patch_type == "merge"
        stored = self.events.get((namespace, name))
        if stored is None:
            raise NotFound(_status(404, "NotFound"))
        stored.update(patch)
        return copy.deepcopy(stored)

    def only_event(self) -> dict[str, Any]:
        assert len(self.events) == 1, self.events
        return next(iter(self.events.values()))


def Clock() -> FakeClock:
    return FakeClock(start=1_700_000_000.0)


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "prod", "uid": "u-1", "resourceVersion": "42"},
}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "uid": "u-2"}}


@pytest.fixture
def client() -> FakeClient:
    return FakeClient()


def _recorder(client: FakeClient, **kw: Any) -> EventRecorder:
    kw.setdefault("retry_delay", 0.001)
    return EventRecorder(client, "my-controller", "host-1", **kw)


def test_an_event_has_client_go_fields(client: FakeClient) -> None:
    recorder = _recorder(client)
    recorder.eventf(POD, "Warning", "FailedCreate", "create %s failed: %d", "web-1", 3)
    assert recorder.flush(5)
    event = client.only_event()
    assert re.fullmatch(r"web-0\.[0-9a-f]{16}", event["metadata"]["name"])
    assert event["metadata"]["namespace"] == "prod"
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-0",
        "namespace": "prod",
        "uid": "u-1",
        "resourceVersion": "42",
    }
    assert (event["type"], event["reason"]) == ("Warning", "FailedCreate")
    assert event["message"] == "create web-1 failed: 3"
    assert event["source"] == {"component": "my-controller", "host": "host-1"}
    assert event["reportingComponent"] == "my-controller"
    assert event["reportingInstance"] == "host-1"
    assert event["count"] == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", event["firstTimestamp"])
    assert event["firstTimestamp"] == event["lastTimestamp"]
    recorder.close()


def test_two_recorders_at_one_instant_name_events_apart(client: FakeClient) -> None:
    """Two recorders of one process (two managers on one simulated clock) recording about
    one object at the same instant write two Events, not a 409 for the second."""
    clock = Clock()  # does not move
    first, second = _recorder(client, clock=clock), _recorder(client, clock=clock)
    first.event(POD, "Normal", "LeaderElection", "a became leader")
    assert first.flush(5)
    second.event(POD, "Normal", "LeaderElection", "b became leader")
    assert second.flush(5)
    assert sorted(e["message"] for e in client.events.values()) == [
        "a became leader",
        "b became leader",
    ]
    first.close()
    second.close()


def test_cluster_scoped_objects_get_events_in_default(client: FakeClient) -> None:
    recorder = _recorder(client)
    recorder.event(NODE, "Normal", "Ready", "node is ready")
    assert recorder.flush(5)
    assert client.only_event()["metadata"]["namespace"] == "default"
    recorder.close()


def test_annotated_eventf_sets_annotations(client: FakeClient) -> None:
    recorder = _recorder(client)
    recorder.annotated_eventf(POD, {"a": "b"}, "Normal", "Synced", "ok")
    assert recorder.flush(5)
    assert client.only_event()["metadata"]["annotations"] == {"a": "b"}
    recorder.close()


def test_repeats_patch_one_event(client: FakeClient) -> None:
    clock = Clock()
    recorder = _recorder(client, clock=clock)
    for _ in range(3):
        recorder.event(POD, "Normal", "Scaled", "scaled to 3")
        clock.step(5)
    assert recorder.flush(5)
    event = client.only_event()
    assert event["count"] == 3
    assert event["lastTimestamp"] > event["firstTimestamp"]
    assert [c[0] for c in client.calls] == ["create", "patch", "patch"]
    recorder.close()


def test_different_messages_are_different_events(client: FakeClient) -> None:
    recorder = _recorder(client)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    recorder.event(POD, "Normal", "Scaled", "scaled to 4")
    recorder.event(POD, "Warning", "Scaled", "scaled to 4")
    assert recorder.flush(5)
    assert len(client.events) == 3
    recorder.close()


def test_repeats_after_the_window_create_a_new_event(client: FakeClient) -> None:
    clock = Clock()
    recorder = _recorder(client, clock=clock)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    clock.step(601)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    assert [c[0] for c in client.calls] == ["create", "create"]
    assert all(e["count"] == 1 for e in client.events.values())
    recorder.close()


def test_a_deleted_event_is_created_again(client: FakeClient) -> None:
    recorder = _recorder(client)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    client.events.clear()  # the server's event TTL ran out
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    assert [c[0] for c in client.calls] == ["create", "patch", "create"]
    assert client.only_event()["count"] == 2
    recorder.close()


def test_many_similar_messages_are_combined(client: FakeClient) -> None:
    recorder = _recorder(client)
    for i in range(13):
        recorder.event(POD, "Warning", "BackOff", f"attempt {i}")
    assert recorder.flush(5)
    combined = [e for e in client.events.values() if e["message"].startswith(AGGREGATE_PREFIX)]
    # client-go: 9 distinct messages written as they are, the 10th and every later one combined
    assert len(client.events) == 10
    assert len(combined) == 1
    assert combined[0]["count"] == 4
    assert combined[0]["message"] == AGGREGATE_PREFIX + "attempt 12"
    assert sorted(e["message"] for e in client.events.values() if e not in combined) == [
        f"attempt {i}" for i in range(9)
    ]
    recorder.close()


def test_spam_filter_limits_events_per_object(client: FakeClient) -> None:
    recorder = _recorder(client)
    for _ in range(30):
        recorder.event(POD, "Normal", "Tick", "tick")
    recorder.event(NODE, "Normal", "Tick", "tick")
    assert recorder.flush(5)
    pod_calls = [c for c in client.calls if c[1].startswith("web-0.")]
    assert len(pod_calls) == 25
    assert any(c[1].startswith("node-1.") for c in client.calls)
    recorder.close()


def test_transient_failures_are_retried(client: FakeClient) -> None:
    client.failures = [ServerError(_status(500, "InternalError")), ApiConnectionError("refused")]
    recorder = _recorder(client)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    assert len(client.calls) == 3
    assert client.only_event()["count"] == 1
    recorder.close()


def test_rejected_events_are_not_retried(client: FakeClient) -> None:
    client.failures = [BadRequest(_status(400, "BadRequest"))]
    recorder = _recorder(client)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    assert len(client.calls) == 1
    assert client.events == {}
    recorder.close()


def test_a_failing_client_never_reaches_the_caller(client: FakeClient) -> None:
    client.failures = [ServerError(_status(500, "InternalError"))] * 100
    recorder = _recorder(client, max_tries=3)
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")
    assert recorder.flush(5)
    assert len(client.calls) == 3
    recorder.event(POD, "Normal", "Scaled", "scaled to 3")  # still accepted afterwards
    assert recorder.flush(5)
    recorder.close()


def test_bad_input_is_logged_not_raised(client: FakeClient) -> None:
    recorder = _recorder(client)
    recorder.event(POD, "Bogus", "Scaled", "x")
    recorder.event({"metadata": {"name": "x"}}, "Normal", "Scaled", "no kind")
    recorder.eventf(POD, "Normal", "Scaled", "%d replicas", "not a number")
    assert recorder.flush(5)
    assert [e["message"] for e in client.events.values()] == ["%d replicas not a number"]
    recorder.close()


def test_a_full_queue_drops_instead_of_blocking(client: FakeClient) -> None:
    client.gate = threading.Event()  # the writer hangs on its first request
    recorder = _recorder(client, max_queued=3)
    recorder.event(POD, "Normal", "Scaled", "first")
    wait_for(lambda: client.calls, 5, message="the writer to block on its first request")
    started = time.monotonic()
    for i in range(9):
        recorder.event(POD, "Normal", "Scaled", f"scaled to {i}")
    assert time.monotonic() - started < 5.0  # not blocked behind the hung writer
    assert not recorder.flush(0.05)
    client.gate.set()
    assert recorder.flush(5)
    # the one being written when the queue filled, and the three queued
    assert len(client.events) == 4
    recorder.close()


def test_close_writes_what_is_queued_then_drops(client: FakeClient) -> None:
    recorder = _recorder(client)
    for i in range(5):
        recorder.event(POD, "Normal", "Scaled", f"scaled to {i}")
    recorder.close()
    assert len(client.events) == 5
    recorder.event(POD, "Normal", "Scaled", "late")
    assert recorder.flush(1)
    assert len(client.events) == 5


def _pods(count: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"web-{i}", "namespace": "prod", "uid": f"u-{i}"},
        }
        for i in range(count)
    ]


def test_events_about_different_objects_are_written_side_by_side(client: FakeClient) -> None:
    # The first create waits until a second create is in flight: with one writer thread no
    # second request comes while the first one waits.
    started: list[str] = []
    second_in_flight = threading.Event()
    lock = threading.Lock()
    overlapped: list[bool] = []

    class Rendezvous(FakeClient):
        def create(self, obj: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
            with lock:
                started.append(obj["metadata"]["name"])
                first = len(started) == 1
            if first:
                overlapped.append(second_in_flight.wait(5))
            else:
                second_in_flight.set()
            return super().create(obj, namespace)

    concurrent = Rendezvous()
    recorder = _recorder(concurrent, writers=4)
    pods = _pods(8)
    for pod in pods:
        recorder.event(pod, "Normal", "Created", "created")
    assert recorder.flush(10)
    recorder.close()
    assert overlapped == [True]
    assert sorted(name.split(".")[0] for _, name in concurrent.events) == sorted(
        p["metadata"]["name"] for p in pods
    )


def test_one_objects_events_keep_their_order_across_writers(client: FakeClient) -> None:
    recorder = _recorder(client, writers=4)
    pods = _pods(6)
    for step in range(5):
        for pod in pods:
            recorder.event(pod, "Normal", f"Step{step}", f"step {step}")
    assert recorder.flush(10)
    recorder.close()
    by_object: dict[str, list[str]] = {}
    for (_, name), event in client.events.items():
        by_object.setdefault(event["involvedObject"]["name"], []).append(name)
    assert set(by_object) == {p["metadata"]["name"] for p in pods}
    for pod in pods:
        reasons = [
            client.events[("prod", name)]["reason"]
            for kind, name in client.calls
            if kind == "create" and name.startswith(pod["metadata"]["name"] + ".")
        ]
        assert reasons == [f"Step{step}" for step in range(5)]


def test_the_queue_bound_covers_all_writers(client: FakeClient) -> None:
    client.gate = threading.Event()  # every writer hangs on its first request
    recorder = _recorder(client, max_queued=4, writers=4)
    for pod in _pods(20):
        recorder.event(pod, "Normal", "Created", "created")
    client.gate.set()
    assert recorder.flush(5)
    recorder.close()
    # at most 4 queued at any time: the writers took at most 4 off the queue before blocking
    assert 4 <= len(client.events) <= 8
