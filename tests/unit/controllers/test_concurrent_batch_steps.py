"""The steps of one slow-start batch run concurrently (upstream ``runForAll`` /
``slowStartBatch`` on goroutines): the StatefulSet's Parallel pass and the CloneSet's
creations. A failure lets the rest of its batch finish and stops the next batches; events
come out in the steps' order whatever order the calls finish in."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from controllers.cloneset.scale import slow_start_batch
from tests.support.cloneset_harness import Harness as CloneSetHarness
from tests.support.cloneset_harness import make_cs
from tests.support.statefulset_harness import Harness, make_set


class Boom(Exception):
    """What the API answers the failing create."""


def _intercept_creates(fake: Any, hook: Callable[[str, str], None]) -> None:
    """Call ``hook(kind, name)`` before each create the client sends."""
    create = fake.create

    def intercepted(obj: Any, *args: Any, **kwargs: Any) -> Any:
        hook(obj.get("kind", ""), obj["metadata"]["name"])
        return create(obj, *args, **kwargs)

    fake.create = intercepted


def test_statefulset_parallel_batch_creates_concurrently() -> None:
    h = Harness(make_set(3, policy="Parallel"))
    # batches 1, 2: web-1 and web-2 each wait until both have started (sequential: times out)
    barrier = threading.Barrier(2, timeout=5)

    def hook(kind: str, name: str) -> None:
        if kind == "Pod" and name in ("web-1", "web-2"):
            barrier.wait()

    _intercept_creates(h.fake, hook)
    h.sync()
    assert sorted(h.pod_writes("create")) == ["web-0", "web-1", "web-2"]


def test_statefulset_batch_limit_one_is_sequential() -> None:
    h = Harness(make_set(3, policy="Parallel"))
    h.control.batch_limit = 1
    threads: set[threading.Thread] = set()
    _intercept_creates(h.fake, lambda kind, name: threads.add(threading.current_thread()))
    h.sync()
    assert h.pod_writes("create") == ["web-0", "web-1", "web-2"]
    assert threads == {threading.current_thread()}


def test_statefulset_failure_lets_its_batch_finish_stops_the_next_and_keeps_event_order() -> None:
    h = Harness(make_set(7, policy="Parallel"))  # batches 1, 2, 4
    web2_done = threading.Event()

    def hook(kind: str, name: str) -> None:
        if kind != "Pod":
            return
        if name == "web-1":
            assert web2_done.wait(5)  # fails after its sibling was created
            raise Boom("boom")
        if name == "web-2":
            threading.Timer(0.05, web2_done.set).start()

    _intercept_creates(h.fake, hook)
    with pytest.raises(Boom):
        h.sync()
    assert sorted(h.pod_writes("create")) == ["web-0", "web-2"]  # web-3.. never tried
    creates = [(reason, msg.split()[2]) for _, reason, msg in h.recorder.events]
    # the batch's events in index order, though web-2's create finished first
    assert creates == [
        ("SuccessfulCreate", "web-0"),
        ("FailedCreate", "web-1"),
        ("SuccessfulCreate", "web-2"),
    ]


def test_cloneset_creation_batch_runs_concurrently() -> None:
    h = CloneSetHarness(make_cs(3))
    pods: list[str] = []
    barrier = threading.Barrier(2, timeout=5)
    lock = threading.Lock()

    def hook(kind: str, name: str) -> None:
        if kind != "Pod":
            return
        with lock:
            pods.append(name)
            second_batch = len(pods) > 1
        if second_batch:  # batches 1, 2: the second's two creations wait for each other
            barrier.wait()

    _intercept_creates(h.api, hook)
    h.step()
    assert len(h.pods()) == 3


def test_cloneset_slow_start_failure_stops_the_next_batch_not_its_siblings() -> None:
    called: list[int] = []
    third_done = threading.Event()

    def create(i: int) -> None:
        called.append(i)
        if i == 1:
            assert third_done.wait(5)
            raise Boom("boom")
        if i == 2:
            third_done.set()

    done, error = slow_start_batch(10, 1, create)
    assert done == 2 and isinstance(error, Boom)
    assert sorted(called) == [0, 1, 2]  # the batch of 4 after it never ran


@pytest.mark.parametrize("ready", [True, False])
def test_statefulset_pass_that_writes_nothing_starts_no_thread(ready: bool) -> None:
    template = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    h = Harness(make_set(3, policy="Parallel", templates=[template]))
    if ready:
        h.converge()
    else:
        h.sync()  # created with their claims, still Pending
        assert sorted(h.pod_writes("create")) == ["web-0", "web-1", "web-2"]
    threads: set[threading.Thread] = set()
    check = h.pod_control.claims_match_retention_policy

    def noted(sts: Any, pod: Any) -> bool:
        threads.add(threading.current_thread())
        return check(sts, pod)

    h.pod_control.claims_match_retention_policy = noted  # type: ignore[method-assign]
    h.sync()
    assert threads == {threading.current_thread()}
