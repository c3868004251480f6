"""The ReplicaSet controller's creations and deletions run concurrently (upstream
``slowStartBatch`` and ``manageReplicas`` on goroutines): a slow-start batch's creations are in
flight together, a failed one is not expected and stops the next batches, every deletion of a
sync is in flight together, and the events come out in the calls' order."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from controllers.deployment.replicaset import ReplicaSetReconciler
from kube_runtime.client.fake import FakeClient
from kube_runtime.expectations import ScaleAction
from kube_runtime.kinds import Pod, ReplicaSet
from kube_runtime.reconcile import Request

NS = "ns"
LABELS = {"app": "web"}


class Boom(Exception):
    """What the API answers the failing call."""


class Events:
    """A recorder keeping ``(reason, message)`` in the order recorded."""

    def __init__(self) -> None:
        self.recorded: list[tuple[str, str]] = []

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        self.recorded.append((reason, message))


def _rs(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": NS, "uid": "rs-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def _pod(name: str) -> dict[str, Any]:
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web",
        "uid": "rs-uid",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": dict(LABELS),
            "ownerReferences": [owner],
        },
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }


def _setup(replicas: int, *pods: str) -> tuple[ReplicaSetReconciler, FakeClient, Events]:
    fake = FakeClient([_rs(replicas), *(_pod(p) for p in pods)])
    events = Events()
    return ReplicaSetReconciler(fake, fake, events), fake, events  # type: ignore[arg-type]


def _sync(reconciler: ReplicaSetReconciler) -> Any:
    return reconciler.reconcile(Request("web", NS))


def _pods(fake: FakeClient) -> list[str]:
    return sorted(p["metadata"]["name"] for p in fake.list(Pod, NS)["items"])


def _expected(reconciler: ReplicaSetReconciler, action: ScaleAction) -> set[str]:
    return set((reconciler.expectations.get_expectations(f"{NS}/web") or {}).get(action, ()))


def _intercept(fake: FakeClient, verb: str, hook: Any) -> None:
    """Call ``hook(*args)`` before each ``verb`` call the client sends."""
    call = getattr(fake, verb)

    def intercepted(*args: Any, **kwargs: Any) -> Any:
        hook(*args)
        return call(*args, **kwargs)

    setattr(fake, verb, intercepted)


def test_a_slow_start_batch_creates_concurrently() -> None:
    reconciler, fake, events = _setup(3)
    # batches 1, 2: the two creations of the second batch each wait until both have started
    # (one after the other, the first would time out)
    barrier = threading.Barrier(2, timeout=5)
    calls: list[int] = []
    lock = threading.Lock()

    def hook(obj: Any, *args: Any) -> None:
        with lock:
            calls.append(len(calls))
            first = len(calls) == 1
        if not first:
            barrier.wait()

    _intercept(fake, "create", hook)
    _sync(reconciler)
    names = _pods(fake)
    assert len(names) == 3
    assert _expected(reconciler, ScaleAction.CREATE) == set(names)
    assert [reason for reason, _ in events.recorded] == ["SuccessfulCreate"] * 3


def test_a_failed_creation_is_not_expected_and_stops_the_next_batch() -> None:
    reconciler, fake, events = _setup(7)  # batches 1, 2, 4
    calls: list[int] = []
    lock = threading.Lock()
    other_done = threading.Event()

    def hook(obj: Any, *args: Any) -> None:
        with lock:
            calls.append(len(calls))
            n = len(calls)
        if n == 2:  # fails once the other creation of its batch has ended
            assert other_done.wait(5)
            raise Boom("quota")
        if n == 3:
            other_done.set()

    _intercept(fake, "create", hook)
    with pytest.raises(Boom):
        _sync(reconciler)
    names = _pods(fake)
    assert len(names) == 2 and len(calls) == 3  # the batch of 4 never ran
    assert _expected(reconciler, ScaleAction.CREATE) == set(names)
    reasons = sorted(reason for reason, _ in events.recorded)
    assert reasons == ["FailedCreate", "SuccessfulCreate", "SuccessfulCreate"]
    status = fake.get(ReplicaSet, "web", NS)["status"]
    assert status.get("replicas", 0) == 0  # omitted when 0
    assert [c["reason"] for c in status["conditions"]] == ["FailedCreate"]


def test_deletions_run_concurrently_and_report_in_order() -> None:
    reconciler, fake, events = _setup(0, "a", "b", "c")
    # all three deletions are in flight at once; "a" ends last and "b" fails
    barrier = threading.Barrier(3, timeout=5)
    others_done = threading.Semaphore(0)

    def hook(kind: Any, name: str, *args: Any) -> None:
        barrier.wait()
        if name == "a":
            for _ in range(2):
                assert others_done.acquire(timeout=5)
        else:
            others_done.release()
        if name == "b":
            raise Boom("denied")

    _intercept(fake, "delete", hook)
    with pytest.raises(Boom):
        _sync(reconciler)
    assert _pods(fake) == ["b"]
    assert _expected(reconciler, ScaleAction.DELETE) == {"a", "c"}
    assert events.recorded == [
        ("SuccessfulDelete", "Deleted pod: a"),
        ("FailedDelete", "Error deleting: denied"),
        ("SuccessfulDelete", "Deleted pod: c"),
    ]


def test_batch_limit_one_runs_the_calls_on_the_sync_thread() -> None:
    fake = FakeClient([_rs(0), _pod("a"), _pod("b")])
    reconciler = ReplicaSetReconciler(fake, fake, Events(), batch_limit=1)  # type: ignore[arg-type]
    threads: set[threading.Thread] = set()
    _intercept(fake, "delete", lambda *args: threads.add(threading.current_thread()))
    _sync(reconciler)
    assert _pods(fake) == [] and threads == {threading.current_thread()}
    with pytest.raises(ValueError):
        ReplicaSetReconciler(fake, fake, Events(), batch_limit=0)  # type: ignore[arg-type]
