"""expectations.py: upstream ControllerExpectations (+ UID tracking) and kruise's scale, update
and resourceVersion expectations; expiry on a fake clock, concurrency with many threads."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.clock import FakeClock
from kube_runtime.expectations import (
    EXPECTATIONS_TIMEOUT,
    ControllerExpectations,
    ResourceVersionExpectations,
    ScaleAction,
    ScaleExpectations,
    UIDTrackingControllerExpectations,
    UpdateExpectations,
    equal_to_revision_hash,
    is_resource_version_newer,
)

KEY = "ns/web"


def run_threads(n: int, target: Callable[[int], None]) -> None:
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        target(i)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive()


def pod(
    name: str, *, uid: str = "", rv: str = "", revision: str | None = None, ns: str = "ns"
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": uid or f"uid-{name}",
        "resourceVersion": rv,
    }
    if revision is not None:
        meta["labels"] = {"controller-revision-hash": revision}
    return {"metadata": meta}


# --- ControllerExpectations --------------------------------------------------------------


def test_default_timeout_is_five_minutes() -> None:
    assert EXPECTATIONS_TIMEOUT == 300
    assert ControllerExpectations().ttl == 300


def test_never_set_is_satisfied() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    assert exp.satisfied(KEY)
    assert exp.get_expectations(KEY) is None


@pytest.mark.parametrize(
    ("setup", "satisfied"),
    [
        (lambda e: e.expect_creations(KEY, 2), False),
        (lambda e: (e.expect_creations(KEY, 2), e.creation_observed(KEY)), False),
        (
            lambda e: (
                e.expect_creations(KEY, 2),
                e.creation_observed(KEY),
                e.creation_observed(KEY),
            ),
            True,
        ),
        (
            lambda e: (
                e.expect_creations(KEY, 1),
                e.creation_observed(KEY),
                e.creation_observed(KEY),
            ),
            True,
        ),
        (lambda e: e.expect_deletions(KEY, 1), False),
        (lambda e: (e.expect_deletions(KEY, 1), e.deletion_observed(KEY)), True),
        (lambda e: (e.expect_deletions(KEY, 1), e.creation_observed(KEY)), False),
        (lambda e: e.set_expectations(KEY, 1, 1), False),
        (lambda e: (e.set_expectations(KEY, 1, 1), e.creation_observed(KEY)), False),
        (
            lambda e: (
                e.set_expectations(KEY, 1, 1),
                e.creation_observed(KEY),
                e.deletion_observed(KEY),
            ),
            True,
        ),
        (lambda e: e.set_expectations(KEY, 0, 0), True),
        (lambda e: (e.set_expectations(KEY, 3, 2), e.lower_expectations(KEY, 3, 2)), True),
        (lambda e: (e.set_expectations(KEY, 3, 2), e.lower_expectations(KEY, 3, 1)), False),
        (
            lambda e: (
                e.expect_creations(KEY, 1),
                e.creation_observed(KEY),
                e.raise_expectations(KEY, 1, 0),
            ),
            False,
        ),
        (lambda e: e.raise_expectations(KEY, 1, 1), True),  # no record: raise does not create one
        (lambda e: e.lower_expectations(KEY, 1, 1), True),
        (
            lambda e: (
                e.expect_creations(KEY, 5),
                e.expect_creations(KEY, 1),
                e.creation_observed(KEY),
            ),
            True,
        ),
        (lambda e: (e.expect_creations(KEY, 1), e.delete_expectations(KEY)), True),
        (lambda e: e.expect_creations("ns/other", 1), True),
    ],
    ids=[
        "expecting-creations",
        "one-of-two-creations",
        "all-creations",
        "more-observed-than-expected",
        "expecting-deletion",
        "deletion-observed",
        "wrong-kind-observed",
        "both",
        "both-half",
        "both-done",
        "zero",
        "lowered-to-zero",
        "lowered-partly",
        "raised-again",
        "raise-without-record",
        "lower-without-record",
        "set-replaces",
        "deleted",
        "other-key",
    ],
)
def test_controller_expectations_table(
    setup: Callable[[ControllerExpectations], Any], satisfied: bool
) -> None:
    exp = ControllerExpectations(clock=FakeClock())
    setup(exp)
    assert exp.satisfied(KEY) is satisfied


def test_get_expectations_is_a_copy_with_counts_and_timestamp() -> None:
    clock = FakeClock()
    exp = ControllerExpectations(clock=clock)
    exp.set_expectations(KEY, 3, 1)
    clock.step(5)
    exp.creation_observed(KEY)
    got = exp.get_expectations(KEY)
    assert got is not None
    assert (got.key, got.add, got.delete, got.timestamp) == (KEY, 2, 1, 0.0)
    got.add = 0
    assert exp.get_expectations(KEY).add == 2  # type: ignore[union-attr]


def test_expiry_after_ttl_from_set_not_from_observations(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    exp = ControllerExpectations(ttl=60, clock=clock)
    exp.expect_creations(KEY, 3)
    clock.step(59)
    exp.creation_observed(KEY)  # observations do not restart the clock
    clock.step(1)
    assert not exp.satisfied(KEY)  # exactly ttl: not yet expired (upstream: elapsed > ttl)
    clock.step(0.5)
    with caplog.at_level(logging.INFO, logger="kube_runtime.expectations"):
        assert exp.satisfied(KEY)
    assert any("expired" in r.getMessage() and KEY in r.getMessage() for r in caplog.records)
    # An expired record still exists (and still counts) until it is dropped one ttl later.
    assert exp.get_expectations(KEY) is not None
    exp.raise_expectations(KEY, 1, 0)
    assert exp.get_expectations(KEY).add == 3  # type: ignore[union-attr]
    clock.step(60)
    assert exp.get_expectations(KEY) is None
    assert exp.satisfied(KEY)


def test_setting_again_restarts_the_clock() -> None:
    clock = FakeClock()
    exp = ControllerExpectations(ttl=60, clock=clock)
    exp.expect_creations(KEY, 1)
    clock.step(100)
    assert exp.satisfied(KEY)
    exp.expect_creations(KEY, 1)
    clock.step(30)
    assert not exp.satisfied(KEY)


def test_concurrent_observations_are_all_counted() -> None:
    exp = ControllerExpectations(clock=FakeClock())
    threads, per_thread = 16, 250
    exp.set_expectations(KEY, threads * per_thread, threads * per_thread)

    def observe(i: int) -> None:
        for _ in range(per_thread):
            exp.creation_observed(KEY)
            exp.deletion_observed(KEY)
            exp.satisfied(KEY)

    run_threads(threads, observe)
    got = exp.get_expectations(KEY)
    assert got is not None and (got.add, got.delete) == (0, 0)
    assert exp.satisfied(KEY)


# --- UIDTrackingControllerExpectations ---------------------------------------------------


def test_uid_tracking_counts_each_uid_once() -> None:
    exp = UIDTrackingControllerExpectations(clock=FakeClock())
    exp.expect_deletions(KEY, ["a", "b", "a"])
    assert exp.get_uids(KEY) == {"a", "b"}
    assert exp.get_expectations(KEY).delete == 2  # type: ignore[union-attr]
    exp.deletion_observed(KEY, "a")
    exp.deletion_observed(KEY, "a")  # seen again (update with deletionTimestamp, then delete)
    exp.deletion_observed(KEY, "zzz")  # not expected
    exp.deletion_observed("ns/other", "b")  # other controller
    assert not exp.satisfied(KEY)
    assert exp.get_uids(KEY) == {"b"}
    exp.deletion_observed(KEY, "b")
    assert exp.satisfied(KEY)
    assert exp.get_uids(KEY) == set()


def test_uid_tracking_delegates_and_deletes_both() -> None:
    exp = UIDTrackingControllerExpectations(clock=FakeClock())
    exp.expect_creations(KEY, 1)
    assert not exp.satisfied(KEY)
    exp.creation_observed(KEY)
    assert exp.satisfied(KEY)
    exp.set_expectations(KEY, 2, 0)
    exp.lower_expectations(KEY, 1, 0)
    exp.raise_expectations(KEY, 0, 0)
    assert exp.get_expectations(KEY).add == 1  # type: ignore[union-attr]
    exp.expect_deletions(KEY, ["a"])
    exp.delete_expectations(KEY)
    assert exp.get_uids(KEY) is None and exp.get_expectations(KEY) is None
    assert exp.satisfied(KEY)
    exp.deletion_observed(KEY, "a")  # no-op after delete


def test_uid_tracking_replaces_earlier_uids(caplog: pytest.LogCaptureFixture) -> None:
    exp = UIDTrackingControllerExpectations(clock=FakeClock())
    exp.expect_deletions(KEY, ["a"])
    with caplog.at_level(logging.WARNING, logger="kube_runtime.expectations"):
        exp.expect_deletions(KEY, ["b"])
    assert "clobbering" in caplog.text
    exp.deletion_observed(KEY, "a")
    assert not exp.satisfied(KEY)
    exp.deletion_observed(KEY, "b")
    assert exp.satisfied(KEY)


def test_uid_tracking_expires() -> None:
    clock = FakeClock()
    exp = UIDTrackingControllerExpectations(ttl=10, clock=clock)
    exp.expect_deletions(KEY, ["a"])
    clock.step(11)
    assert exp.satisfied(KEY)
    clock.step(10)
    assert exp.get_uids(KEY) is None


def test_uid_tracking_concurrent_duplicate_observations() -> None:
    exp = UIDTrackingControllerExpectations(clock=FakeClock())
    uids = [f"u{i}" for i in range(200)]
    exp.expect_deletions(KEY, uids)

    def observe(i: int) -> None:
        for uid in uids:  # every thread observes every deletion
            exp.deletion_observed(KEY, uid)

    run_threads(8, observe)
    got = exp.get_expectations(KEY)
    assert got is not None and got.delete == 0  # counted once each, never below zero
    assert exp.satisfied(KEY)


# --- ScaleExpectations -------------------------------------------------------------------


def test_scale_expectations_lifecycle() -> None:
    clock = FakeClock()
    exp = ScaleExpectations(clock=clock)
    assert exp.satisfied_expectations(KEY) == (True, 0.0, {})
    assert exp.get_expectations(KEY) is None

    exp.expect_scale(KEY, ScaleAction.CREATE, "web-1")
    exp.expect_scale(KEY, "create", "web-0")
    exp.expect_scale(KEY, ScaleAction.DELETE, "web-9")
    assert exp.get_expectations(KEY) == {
        ScaleAction.CREATE: {"web-0", "web-1"},
        ScaleAction.DELETE: {"web-9"},
    }

    clock.step(3)
    ok, waited, details = exp.satisfied_expectations(KEY)
    assert (ok, waited) == (False, 0.0)  # the clock starts at the first unsatisfied check
    assert details == {ScaleAction.CREATE: ["web-0", "web-1"], ScaleAction.DELETE: ["web-9"]}

    clock.step(7)
    exp.observe_scale(KEY, ScaleAction.CREATE, "web-0")
    exp.observe_scale(KEY, ScaleAction.DELETE, "web-0")  # wrong action: nothing happens
    exp.observe_scale(KEY, ScaleAction.CREATE, "web-1")
    ok, waited, details = exp.satisfied_expectations(KEY)
    assert (ok, waited, details) == (False, 7.0, {ScaleAction.DELETE: ["web-9"]})

    exp.observe_scale(KEY, "delete", "web-9")
    assert exp.get_expectations(KEY) is None  # dropped once nothing is left
    assert exp.satisfied_expectations(KEY) == (True, 0.0, {})


def test_scale_expectations_satisfied_drops_an_empty_record_and_restarts_duration() -> None:
    clock = FakeClock()
    exp = ScaleExpectations(clock=clock)
    exp.expect_scale(KEY, ScaleAction.CREATE, "a")
    exp.satisfied_expectations(KEY)
    clock.step(50)
    exp.observe_scale(KEY, ScaleAction.CREATE, "a")
    assert exp.satisfied_expectations(KEY)[0]
    exp.expect_scale(KEY, ScaleAction.CREATE, "b")
    assert exp.satisfied_expectations(KEY)[1] == 0.0


def test_scale_expectations_observe_unknown_and_delete() -> None:
    exp = ScaleExpectations(clock=FakeClock())
    exp.observe_scale(KEY, ScaleAction.CREATE, "x")  # nothing expected: no record appears
    assert exp.get_expectations(KEY) is None
    exp.expect_scale(KEY, ScaleAction.CREATE, "x")
    copy = exp.get_expectations(KEY)
    copy[ScaleAction.CREATE].clear()  # type: ignore[index]
    assert exp.get_expectations(KEY) == {ScaleAction.CREATE: {"x"}}
    exp.delete_expectations(KEY)
    assert exp.satisfied_expectations(KEY)[0]
    with pytest.raises(ValueError):
        exp.expect_scale(KEY, "update", "x")


def test_scale_expectations_concurrent() -> None:
    exp = ScaleExpectations(clock=FakeClock())
    names = [f"web-{i}" for i in range(400)]
    for name in names:
        exp.expect_scale(KEY, ScaleAction.CREATE, name)

    def observe(i: int) -> None:
        for name in names[i::8]:
            exp.observe_scale(KEY, ScaleAction.CREATE, name)
            exp.satisfied_expectations(KEY)

    run_threads(8, observe)
    assert exp.get_expectations(KEY) is None
    assert exp.satisfied_expectations(KEY) == (True, 0.0, {})


# --- UpdateExpectations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "revision", "equal"),
    [
        ("web-5d4f", "web-5d4f", True),
        ("5d4f", "web-5d4f", True),
        ("web-5d4f", "5d4f", True),
        ("web-5d4f", "web-aaaa", False),
        (None, "web-5d4f", False),
    ],
)
def test_equal_to_revision_hash(label: str | None, revision: str, equal: bool) -> None:
    assert equal_to_revision_hash(KEY, pod("p", revision=label), revision) is equal


def test_update_expectations_lifecycle() -> None:
    clock = FakeClock()
    exp = UpdateExpectations(clock=clock)
    assert exp.satisfied_expectations(KEY, "web-v2") == (True, 0.0, [])
    exp.expect_updated(KEY, "web-v2", pod("web-1"))
    exp.expect_updated(KEY, "web-v2", pod("web-0"))
    assert exp.satisfied_expectations(KEY, "web-v2") == (False, 0.0, ["ns/web-0", "ns/web-1"])
    # Another revision does not hold back a sync at that revision.
    assert exp.satisfied_expectations(KEY, "web-v3") == (True, 0.0, [])

    clock.step(4)
    exp.observe_updated(KEY, "web-v2", pod("web-0", revision="web-v1"))  # still old: not ticked
    exp.observe_updated(KEY, "web-v2", pod("web-9", revision="web-v2"))  # not expected
    exp.observe_updated(KEY, "web-v2", pod("web-0", revision="web-v2"))
    ok, waited, names = exp.satisfied_expectations(KEY, "web-v2")
    # The duration restarted: the web-v3 check above reset it, as kruise does.
    assert (ok, waited, names) == (False, 0.0, ["ns/web-1"])
    clock.step(2)
    assert exp.satisfied_expectations(KEY, "web-v2")[1] == 2.0

    exp.observe_updated(KEY, "web-v2", pod("web-1", revision="v2"))  # short hash matches
    assert exp.satisfied_expectations(KEY, "web-v2") == (True, 0.0, [])


def test_update_expectations_new_revision_replaces_and_observing_another_revision_drops() -> None:
    exp = UpdateExpectations(clock=FakeClock())
    exp.expect_updated(KEY, "r1", pod("a"))
    exp.expect_updated(KEY, "r2", pod("b"))  # new revision: "a" forgotten
    assert exp.satisfied_expectations(KEY, "r2") == (False, 0.0, ["ns/b"])
    exp.observe_updated(KEY, "r1", pod("b", revision="r1"))  # the controller moved on: dropped
    assert exp.satisfied_expectations(KEY, "r2") == (True, 0.0, [])


def test_update_expectations_delete_object_and_custom_matcher() -> None:
    seen: list[tuple[str, str]] = []

    def matcher(key: str, obj: Any, revision: str) -> bool:
        seen.append((key, revision))
        return obj["metadata"].get("annotations", {}).get("rev") == revision

    exp = UpdateExpectations(matcher, clock=FakeClock())
    exp.expect_updated(KEY, "r1", pod("a"))
    exp.expect_updated(KEY, "r1", pod("b"))
    exp.delete_object(KEY, pod("a"))
    assert exp.satisfied_expectations(KEY, "r1")[2] == ["ns/b"]
    b = pod("b")
    b["metadata"]["annotations"] = {"rev": "r1"}
    exp.observe_updated(KEY, "r1", b)
    assert seen == [(KEY, "r1")]
    assert exp.satisfied_expectations(KEY, "r1")[0]
    exp.expect_updated(KEY, "r1", pod("c"))
    exp.delete_expectations(KEY)
    assert exp.satisfied_expectations(KEY, "r1") == (True, 0.0, [])
    exp.delete_object(KEY, pod("c"))  # no record: no-op


def test_update_expectations_concurrent() -> None:
    exp = UpdateExpectations(clock=FakeClock())
    pods = [pod(f"web-{i}", revision="r2") for i in range(300)]
    for p in pods:
        exp.expect_updated(KEY, "r2", p)

    def observe(i: int) -> None:
        for p in pods[i::6]:
            exp.observe_updated(KEY, "r2", p)
            exp.satisfied_expectations(KEY, "r2")

    run_threads(6, observe)
    assert exp.satisfied_expectations(KEY, "r2") == (True, 0.0, [])


# --- ResourceVersionExpectations ---------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "newer"),
    [
        ("", "5", True),
        ("", "x", True),
        ("5", "5", True),
        ("5", "6", True),
        ("5", "4", False),
        ("9", "10", True),  # numerically, not as strings
        ("10", "9", False),
        ("abc", "1", True),  # unparsable expectation: anything satisfies it
        ("5", "abc", False),  # unparsable observation: satisfies nothing
        ("5", "", False),
        ("5", "-7", False),
        ("18446744073709551616", "1", True),  # beyond uint64: unparsable
    ],
)
def test_is_resource_version_newer(old: str, new: str, newer: bool) -> None:
    assert is_resource_version_newer(old, new) is newer


def test_resource_version_expectations_lifecycle() -> None:
    clock = FakeClock()
    exp = ResourceVersionExpectations(clock=clock)
    assert exp.is_satisfied(pod("a", rv="1")) == (True, 0.0)

    exp.expect(pod("a", rv="10"))
    exp.expect(pod("a", rv="9"))  # an older write does not lower the expectation
    assert exp.is_satisfied(pod("a", rv="9")) == (False, 0.0)
    clock.step(5)
    assert exp.is_satisfied(pod("a", rv="9")) == (False, 5.0)
    assert exp.is_satisfied(pod("b", rv="1")) == (True, 0.0)  # other uid

    exp.observe(pod("a", rv="8"))  # stale event: kept
    assert not exp.is_satisfied(pod("a", rv="9"))[0]
    exp.observe(pod("a", rv="10"))
    assert exp.is_satisfied(pod("a", rv="9")) == (True, 0.0)  # observed: gone


def test_resource_version_satisfied_by_a_newer_copy_and_delete() -> None:
    exp = ResourceVersionExpectations(clock=FakeClock())
    exp.expect(pod("a", rv="10"))
    assert exp.is_satisfied(pod("a", rv="11")) == (True, 0.0)
    assert exp.is_satisfied(pod("a", rv="1")) == (True, 0.0)  # dropped when satisfied
    exp.expect(pod("a", rv="10"))
    exp.delete(pod("a"))
    assert exp.is_satisfied(pod("a", rv="1")) == (True, 0.0)
    exp.observe(pod("zzz", rv="1"))  # nothing expected: no-op


def test_resource_version_concurrent() -> None:
    exp = ResourceVersionExpectations(clock=FakeClock())
    objs = [pod(f"p{i}", rv="100") for i in range(300)]

    def work(i: int) -> None:
        for obj in objs:
            if i % 2:
                exp.expect(obj)
            else:
                exp.observe(pod(obj["metadata"]["name"], rv="100"))

    run_threads(8, work)
    for obj in objs:
        exp.observe(obj)
        assert exp.is_satisfied(pod(obj["metadata"]["name"], rv="1")) == (True, 0.0)
