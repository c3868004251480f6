"""The StatefulSet reconciler with coalesced status writes (``status_window``): count-only
changes held back and requeued for, urgent and converged statuses written at once, and the
same object writes (the controller's decisions) as without coalescing."""

from __future__ import annotations

import functools
from typing import Any

from controllers.statefulset.controller import EXPECTATIONS_RECHECK, StatefulSetReconciler
from controllers.statefulset.status import (
    coalescing_window,
    ordered_progress,
    settled,
    urgent_change,
)
from kube_runtime.client.fake import not_found
from kube_runtime.clock import FakeClock, use
from kube_runtime.kinds import PersistentVolumeClaim, Pod, as_kind
from kube_runtime.workloads.statuswriter import DEFAULT_MAX_HOLD, DEFAULT_STEP_WINDOW
from tests.support.statefulset_harness import NS, make_set
from tests.support.statefulset_reconciler import Setup, StaleReader


def coalescing(sts: dict[str, Any], window: float = 1.0) -> tuple[Setup, FakeClock]:
    s = Setup(sts)
    with use(s.clock):  # the status writer's window runs on the cluster's clock
        s.reconciler = StatefulSetReconciler(
            s.fake, s.reader, s.recorder, kind=s.kind, status_window=window
        )
    assert s.reconciler.status_writer.clock is s.clock
    return s, s.clock


def status_writes(s: Setup) -> int:
    return len(s.done("update_status", "StatefulSet"))


def test_progress_is_held_back_and_the_converged_status_written_at_once() -> None:
    s, clock = coalescing(make_set(3, policy="Parallel"))
    result = s.reconcile()
    assert result is not None and result.requeue_after == 1.0
    assert status_writes(s) == 0  # observedGeneration and revisions held too
    pending = s.reconciler.status_writer.pending(s.sts)
    assert pending is not None and pending["observedGeneration"] == 1
    s.ready("web-0")
    clock.step(0.5)
    result = s.reconcile()
    assert status_writes(s) == 0 and result is not None and result.requeue_after == 0.5
    s.ready("web-1")
    s.ready("web-2")
    assert s.reconcile() is None
    assert status_writes(s) == 1
    assert s.sts["status"]["readyReplicas"] == 3
    assert s.sts["status"]["currentRevision"] == pending["currentRevision"]
    assert s.reconciler.status_writer.pending(s.sts) is None


def test_held_back_status_is_written_when_due() -> None:
    s, clock = coalescing(make_set(3, policy="Parallel"))
    s.reconcile()
    s.ready("web-0")
    clock.step(1.0)  # the requeue comes back
    assert s.reconcile() is None
    assert status_writes(s) == 1
    assert s.sts["status"]["readyReplicas"] == 1
    assert s.sts["status"]["observedGeneration"] == 1


def test_without_a_window_every_change_is_written() -> None:
    s = Setup(make_set(3, policy="Parallel"))
    s.reconcile()
    for name in ("web-0", "web-1", "web-2"):
        s.ready(name)
        s.reconcile()
    assert status_writes(s) == 4


def object_writes(s: Setup) -> list[tuple[str, str, str]]:
    return [w for w in s.writes if w[0] != "update_status"]


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def drive(s: Setup, step: Any) -> None:
    """Create, make one pod ready per sync, roll out an image, the same again."""
    for rounds in (12, 20):
        for _ in range(rounds):
            s.reconcile()
            step()
            for name in s.pods():
                pod = s.get(Pod, name)
                if not pod["metadata"].get("deletionTimestamp") and not _ready(pod):
                    s.ready(name)
                    break
        s.set_image("nginx:2")


def tick(clock: FakeClock) -> None:
    clock.step(0.3)


def test_decisions_are_the_same_as_without_coalescing() -> None:
    for policy in ("OrderedReady", "Parallel"):
        plain = Setup(make_set(3, policy=policy))
        drive(plain, lambda: None)
        held, clock = coalescing(make_set(3, policy=policy))
        drive(held, functools.partial(tick, clock))
        # a Parallel batch's writes run concurrently: the same writes, in any order
        same = sorted if policy == "Parallel" else list
        assert same(object_writes(held)) == same(object_writes(plain)), policy
        assert held.sts["status"] == plain.sts["status"], policy
        assert status_writes(held) < status_writes(plain), policy


def test_urgent_and_settled_predicates() -> None:
    sts = make_set(2)
    sts["metadata"]["generation"] = 2
    base = {"observedGeneration": 2, "currentRevision": "a", "updateRevision": "a"}
    assert not urgent_change(base, {**base, "replicas": 1, "readyReplicas": 1})
    assert not urgent_change(base, {**base, "observedGeneration": 3, "updateRevision": "b"})
    assert not urgent_change(base, {**base, "collisionCount": 1, "volumeClaims": []})
    assert urgent_change(base, {**base, "conditions": [{"type": "X"}]})
    assert not urgent_change({"conditions": [{"type": "X"}]}, {"conditions": [{"type": "X"}]})
    counts = dict.fromkeys(("replicas", "readyReplicas", "currentReplicas", "updatedReplicas"), 2)
    assert settled(sts, {**base, **counts})
    assert settled(sts, {**base, **counts, "availableReplicas": 2})
    assert not settled(sts, {**base, **counts, "availableReplicas": 1})
    assert not settled(sts, {**base, **counts, "readyReplicas": 1})
    assert not settled(sts, {**base, **counts, "updateRevision": "b"})
    assert not settled(sts, {**base, **counts, "observedGeneration": 1})


class HidingReader(StaleReader):
    """A cache whose claim informer lags: claims are not found while ``hide`` is set."""

    hide = False

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        if self.hide and as_kind(kind) == PersistentVolumeClaim:
            raise not_found(kind, name)
        return super().get(kind, name, namespace)


def test_a_sync_waits_until_the_cache_shows_the_claims_it_created() -> None:
    template = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    s = Setup(make_set(1, policy="Parallel", templates=[template]))
    reader = HidingReader(s.fake)
    s.reconciler = StatefulSetReconciler(s.fake, reader, s.recorder, kind=s.kind)
    attempts: list[str] = []
    create = s.fake.create

    def counting_create(obj: Any, **options: Any) -> Any:
        attempts.append(obj["kind"])
        return create(obj, **options)

    s.fake.create = counting_create  # type: ignore[method-assign]
    s.reconcile()
    assert attempts.count("PersistentVolumeClaim") == 1
    reader.hide = True  # the pod is in the cache (Pending), its claim not yet
    result = s.reconcile()
    assert result is not None and result.requeue_after == EXPECTATIONS_RECHECK
    assert attempts.count("PersistentVolumeClaim") == 1  # not created again
    reader.hide = False
    s.reconcile()
    assert attempts.count("PersistentVolumeClaim") == 1
    assert not s.reconciler.claim_expectations.get_expectations(f"{NS}/web")


def test_a_set_with_min_ready_seconds_is_not_held_back() -> None:
    assert coalescing_window(make_set(2)) == float("inf")
    sts = make_set(2, policy="Parallel")
    sts["spec"]["minReadySeconds"] = 1
    assert coalescing_window(sts) == 0
    s, _ = coalescing(sts)
    assert s.reconcile() is None
    assert status_writes(s) == 1


def test_an_ordered_rollout_makes_one_status_write_when_each_step_follows_the_last() -> None:
    s, clock = coalescing(make_set(3))
    result = s.reconcile()  # creates web-0: a step of the rollout, waits for the next
    assert result is not None and result.requeue_after == DEFAULT_STEP_WINDOW
    for name in ("web-0", "web-1"):
        clock.step(1.5)  # each step longer than the window
        s.ready(name)
        s.reconcile()
        assert status_writes(s) == 0, name
    assert s.pods() == ["web-0", "web-1", "web-2"]
    s.ready("web-2")
    assert s.reconcile() is None
    assert status_writes(s) == 1  # the converged status, at once
    assert s.sts["status"]["readyReplicas"] == 3
    assert s.reconciler.status_writer.pending(s.sts) is None


def test_an_ordered_rollout_that_stops_is_written_a_step_window_after_its_last_step() -> None:
    s, clock = coalescing(make_set(3))
    s.reconcile()
    s.ready("web-0")
    clock.step(2.0)
    result = s.reconcile()  # creates web-1, which never becomes ready
    assert status_writes(s) == 0
    assert result is not None and result.requeue_after == DEFAULT_STEP_WINDOW
    clock.step(DEFAULT_STEP_WINDOW)
    s.reconcile()
    assert status_writes(s) == 1
    assert s.sts["status"]["readyReplicas"] == 1


def test_a_long_ordered_rollout_is_written_every_max_hold() -> None:
    s, clock = coalescing(make_set(40))
    s.reconcile()
    started = clock.monotonic()
    writes_at = []
    for ordinal in range(39):
        clock.step(DEFAULT_STEP_WINDOW - 1)
        s.ready(f"web-{ordinal}")
        before = status_writes(s)
        s.reconcile()
        if status_writes(s) > before:
            writes_at.append(clock.monotonic() - started)
    assert writes_at and writes_at[0] <= DEFAULT_MAX_HOLD + DEFAULT_STEP_WINDOW
    assert len(writes_at) <= 39 * (DEFAULT_STEP_WINDOW - 1) / DEFAULT_MAX_HOLD + 1


def test_a_status_that_stops_progressing_is_due_within_the_window() -> None:
    s, clock = coalescing(make_set(3))
    s.reconcile()
    s.ready("web-0")
    clock.step(2.0)
    s.reconcile()  # creates web-1
    s.set_status(Pod, "web-0", {"phase": "Running", "conditions": []})  # web-0 not ready
    clock.step(0.5)
    result = s.reconcile()
    assert status_writes(s) == 0
    assert result is not None and result.requeue_after == 1.0
    clock.step(1.0)
    s.reconcile()
    assert status_writes(s) == 1


def test_ordered_progress_predicate() -> None:
    sts = make_set(3)
    sts["metadata"]["generation"] = 1
    step = {
        "observedGeneration": 1,
        "replicas": 2,
        "readyReplicas": 1,
        "updatedReplicas": 2,
        "currentRevision": "r1",
        "updateRevision": "r1",
    }
    assert ordered_progress(sts, step)
    assert ordered_progress(sts, {**step, "readyReplicas": 2})
    assert not ordered_progress(sts, {**step, "readyReplicas": 0})  # two pods not ready
    assert not ordered_progress(sts, {**step, "updateRevision": "r2"})  # a rolling update
    assert not ordered_progress(sts, {**step, "observedGeneration": 0})
    assert not ordered_progress(sts, {**step, "replicas": 4, "updatedReplicas": 4})
    parallel = make_set(3, policy="Parallel")
    parallel["metadata"]["generation"] = 1
    assert not ordered_progress(parallel, step)


def test_the_creation_event_of_a_claim_we_made_wakes_the_set_only_when_a_sync_waits() -> None:
    """``claim_created_quietly``: the creation event of a claim this controller created (same
    uid) satisfies the set's expectation and wakes no sync; once a sync was held back waiting
    for it, the event wakes the set; a claim made by someone else (or another uid) wakes it."""
    from controllers.statefulset.controller import _ClaimOwnershipChanged
    from kube_runtime.expectations import ScaleAction

    template = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    s = Setup(make_set(2, policy="Parallel", templates=[template]))
    reader = HidingReader(s.fake)
    s.reconciler = StatefulSetReconciler(s.fake, reader, s.recorder, kind=s.kind)
    predicate = _ClaimOwnershipChanged(s.reconciler.claim_created_quietly)
    key = f"{NS}/web"
    s.reconcile()
    claims = {n: s.get(PersistentVolumeClaim, n) for n in ("data-web-0", "data-web-1")}
    assert s.reconciler.claim_expectations.get_expectations(key)
    # data-web-0 appears while no sync waits: quiet, and no longer expected.
    assert not predicate.create(claims["data-web-0"])
    assert s.reconciler.claim_expectations.get_expectations(key) == {
        ScaleAction.CREATE: {"data-web-1"}
    }
    # A sync held back by data-web-1: its creation event wakes the set.
    reader.hide = True
    result = s.reconcile()
    assert result is not None and result.requeue_after == EXPECTATIONS_RECHECK
    assert predicate.create(claims["data-web-1"])
    reader.hide = False
    s.reconcile()
    assert not s.reconciler.claim_expectations.get_expectations(key)
    # Events for claims not created by this controller (or seen already) wake the set.
    assert predicate.create(claims["data-web-0"])
    other_uid = {**claims["data-web-1"], "metadata": {**claims["data-web-1"]["metadata"]}}
    other_uid["metadata"]["uid"] = "someone-else"
    assert predicate.create(other_uid)
    assert _ClaimOwnershipChanged().create(claims["data-web-0"])
