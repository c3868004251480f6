"""Pod state predicates, ordinals and upstream's ActivePods / ActivePodsWithRanks order."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from kube_runtime.workloads.pods import (
    DELETION_COST_ANNOTATION,
    active_pods_less,
    colocation_ranks,
    deletion_cost,
    is_active,
    is_available,
    is_created,
    is_failed,
    is_healthy,
    is_pending,
    is_ready,
    is_running_and_ready,
    is_succeeded,
    is_terminating,
    max_container_restarts,
    parse_ordinal,
    parse_time,
    pod_in_ordinal_range,
    ready_time,
    sort_active_pods,
    sort_active_pods_with_ranks,
)

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def ts(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(
    name: str = "p",
    *,
    phase: str | None = "Running",
    ready: bool | None = None,
    ready_since: float | None = None,
    node: str = "",
    deleting: bool = False,
    restarts: tuple[int, ...] = (),
    created: float | None = None,
    uid: str = "",
    cost: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": uid or name}
    if deleting:
        meta["deletionTimestamp"] = ts(0)
    if created is not None:
        meta["creationTimestamp"] = ts(created)
    if cost is not None:
        meta["annotations"] = {DELETION_COST_ANNOTATION: cost}
    status: dict[str, Any] = {}
    if phase is not None:
        status["phase"] = phase
    if ready is not None:
        condition: dict[str, Any] = {"type": "Ready", "status": "True" if ready else "False"}
        if ready_since is not None:
            condition["lastTransitionTime"] = ts(ready_since)
        status["conditions"] = [{"type": "PodScheduled", "status": "True"}, condition]
    if restarts:
        status["containerStatuses"] = [
            {"name": f"c{i}", "restartCount": r} for i, r in enumerate(restarts)
        ]
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}, "status": status}


# --- predicates ----------------------------------------------------------------------------

PREDICATE_CASES = [
    # (pod, created, pending, failed, succeeded, terminating, ready, running&ready, healthy, active)
    (pod(phase=None), False, False, False, False, False, False, False, False, True),
    (pod(phase="Pending"), True, True, False, False, False, False, False, False, True),
    (pod(phase="Running"), True, False, False, False, False, False, False, False, True),
    (
        pod(phase="Running", ready=False),
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
        True,
    ),
    (pod(phase="Running", ready=True), True, False, False, False, False, True, True, True, True),
    (
        pod(phase="Running", ready=True, deleting=True),
        True,
        False,
        False,
        False,
        True,
        True,
        True,
        False,
        False,
    ),
    (pod(phase="Pending", ready=True), True, True, False, False, False, True, False, False, True),
    (pod(phase="Failed"), True, False, True, False, False, False, False, False, False),
    (pod(phase="Succeeded"), True, False, False, True, False, False, False, False, False),
    (pod(phase="Unknown", ready=True), True, False, False, False, False, True, False, False, True),
]


@pytest.mark.parametrize(
    (
        "p",
        "created",
        "pending",
        "failed",
        "succeeded",
        "terminating",
        "ready",
        "rr",
        "healthy",
        "active",
    ),
    PREDICATE_CASES,
)
def test_predicates(
    p: dict[str, Any],
    created: bool,
    pending: bool,
    failed: bool,
    succeeded: bool,
    terminating: bool,
    ready: bool,
    rr: bool,
    healthy: bool,
    active: bool,
) -> None:
    assert is_created(p) is created
    assert is_pending(p) is pending
    assert is_failed(p) is failed
    assert is_succeeded(p) is succeeded
    assert is_terminating(p) is terminating
    assert is_ready(p) is ready
    assert is_running_and_ready(p) is rr
    assert is_healthy(p) is healthy
    assert is_active(p) is active


@pytest.mark.parametrize(
    ("p", "min_ready", "expected"),
    [
        (pod(ready=False, ready_since=100), 10, (False, None)),
        (pod(ready=None), 0, (False, None)),
        (pod(ready=True, ready_since=1), 0, (True, 0.0)),
        (pod(ready=True), 0, (True, 0.0)),  # no transition time needed without minReadySeconds
        (pod(ready=True), 10, (False, None)),  # unknown transition time: never available
        (pod(ready=True, ready_since=100), 10, (True, 0.0)),
        (pod(ready=True, ready_since=4), 10, (False, 6.0)),
        (pod(ready=True, ready_since=10), 10, (False, 0.0)),  # strictly before now, as upstream
        (pod(ready=True, ready_since=11), 10, (True, 0.0)),
    ],
)
def test_is_available(
    p: dict[str, Any], min_ready: int, expected: tuple[bool, float | None]
) -> None:
    assert is_available(p, min_ready, NOW) == expected


def test_is_available_defaults_to_the_current_time() -> None:
    assert is_available(pod(ready=True, ready_since=10**9), 5) == (True, 0.0)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("web-0", ("web", 0)),
        ("web-12", ("web", 12)),
        ("my-web-3", ("my-web", 3)),
        ("web-3-4", ("web-3", 4)),
        ("web", ("", -1)),
        ("web-", ("", -1)),
        ("web-x", ("", -1)),
        ("web-1a", ("", -1)),
        ("-5", ("", 5)),
        ("web-2147483647", ("web", 2147483647)),
        ("web-2147483648", ("web", -1)),  # does not fit an int32
    ],
)
def test_parse_ordinal(name: str, expected: tuple[str, int]) -> None:
    assert parse_ordinal(name) == expected


@pytest.mark.parametrize(
    ("name", "spec", "expected"),
    [
        ("web-0", {"replicas": 3}, True),
        ("web-2", {"replicas": 3}, True),
        ("web-3", {"replicas": 3}, False),
        ("web-0", {"replicas": 0}, False),
        ("web-0", {}, True),  # replicas default 1
        ("web-1", {}, False),
        ("web-4", {"replicas": 2, "ordinals": {"start": 4}}, True),
        ("web-3", {"replicas": 2, "ordinals": {"start": 4}}, False),
        ("web-6", {"replicas": 2, "ordinals": {"start": 4}}, False),
        ("web", {"replicas": 3}, False),
    ],
)
def test_pod_in_ordinal_range(name: str, spec: dict[str, Any], expected: bool) -> None:
    assert pod_in_ordinal_range({"metadata": {"name": name}}, {"spec": spec}) is expected


def test_parse_time() -> None:
    assert parse_time("2024-05-01T12:00:00Z") == NOW
    assert parse_time("2024-05-01T14:00:00+02:00") == NOW
    assert parse_time("2024-05-01T12:00:00.5Z") == NOW + timedelta(milliseconds=500)
    assert parse_time("") is None and parse_time(None) is None


def test_small_helpers() -> None:
    assert max_container_restarts(pod(restarts=(1, 7, 3))) == 7
    assert max_container_restarts(pod()) == 0
    assert deletion_cost(pod(cost="-5")) == -5
    assert deletion_cost(pod(cost="abc")) == 0
    assert deletion_cost(pod(cost="99999999999")) == 0  # not an int32
    assert deletion_cost(pod()) == 0
    assert ready_time(pod(ready=True, ready_since=5)) == NOW - timedelta(seconds=5)
    assert ready_time(pod(ready=False, ready_since=5)) is None


# --- ActivePods ----------------------------------------------------------------------------

# Each case: (a, b) where a must come first (be deleted first) and b must not precede a.
ACTIVE_PODS_CASES = {
    "unassigned before assigned": (pod("a", node=""), pod("b", node="n1")),
    "pending before unknown": (
        pod("a", phase="Pending", node="n"),
        pod("b", phase="Unknown", node="n"),
    ),
    "unknown before running": (
        pod("a", phase="Unknown", node="n"),
        pod("b", phase="Running", node="n"),
    ),
    "succeeded counts as pending": (
        pod("a", phase="Succeeded", node="n"),
        pod("b", phase="Unknown", node="n"),
    ),
    "not ready before ready": (
        pod("a", ready=False, node="n"),
        pod("b", ready=True, ready_since=5, node="n"),
    ),
    "ready for no known time first": (
        pod("a", ready=True, node="n"),
        pod("b", ready=True, ready_since=5, node="n"),
    ),
    "ready for less time first": (
        pod("a", ready=True, ready_since=5, node="n"),
        pod("b", ready=True, ready_since=50, node="n"),
    ),
    "more restarts first": (
        pod("a", ready=True, ready_since=5, restarts=(0, 4), node="n", created=1),
        pod("b", ready=True, ready_since=5, restarts=(3,), node="n", created=100),
    ),
    "no creation time first": (pod("a", node="n"), pod("b", node="n", created=5)),
    "newer first": (pod("a", node="n", created=5), pod("b", node="n", created=50)),
    "assignment beats phase": (
        pod("a", phase="Running", ready=True, ready_since=5, node=""),
        pod("b", phase="Pending", node="n"),
    ),
    "two different nodes fall through": (
        pod("a", node="n1", created=1),
        pod("b", node="n2", created=9),
    ),
}


@pytest.mark.parametrize("case", sorted(ACTIVE_PODS_CASES))
def test_active_pods_rules(case: str) -> None:
    a, b = ACTIVE_PODS_CASES[case]
    assert active_pods_less(a, b)
    assert not active_pods_less(b, a)
    assert [p["metadata"]["name"] for p in sort_active_pods([b, a])] == ["a", "b"]


def test_active_pods_equal_pods_keep_their_order() -> None:
    pods = [pod(f"p{i}", node="n", created=5) for i in range(5)]
    assert not active_pods_less(pods[0], pods[1])
    assert sort_active_pods(pods) == pods


def test_active_pods_ignores_deletion_cost_and_ranks() -> None:
    cheap, dear = (
        pod("cheap", node="n", cost="-10", created=50),
        pod("dear", node="n", cost="10", created=5),
    )
    assert [p["metadata"]["name"] for p in sort_active_pods([cheap, dear])] == ["dear", "cheap"]


def test_active_pods_full_order_is_deterministic() -> None:
    pods = [
        pod("running-ready-old", ready=True, ready_since=500, node="n", created=900),
        pod("unassigned", phase="Pending"),
        pod("pending", phase="Pending", node="n"),
        pod("running-not-ready", ready=False, node="n"),
        pod("unknown", phase="Unknown", node="n"),
        pod("running-ready-new", ready=True, ready_since=5, node="n", created=10),
        pod(
            "running-ready-restarts",
            ready=True,
            ready_since=500,
            node="n",
            restarts=(2,),
            created=900,
        ),
    ]
    expected = [
        "unassigned",
        "pending",
        "unknown",
        "running-not-ready",
        "running-ready-new",
        "running-ready-restarts",
        "running-ready-old",
    ]
    for seed in range(5):
        shuffled = pods[:]
        random.Random(seed).shuffle(shuffled)
        assert [p["metadata"]["name"] for p in sort_active_pods(shuffled)] == expected


# --- ActivePodsWithRanks -------------------------------------------------------------------

RANKED_CASES = {
    # (a, rank_a, b, rank_b, now): a first
    "lower deletion cost first": (
        pod("a", node="n", cost="1"),
        0,
        pod("b", node="n", cost="2"),
        5,
        None,
    ),
    "cost after readiness": (
        pod("a", node="n", ready=False, cost="9"),
        0,
        pod("b", node="n", ready=True, ready_since=1, cost="1"),
        0,
        None,
    ),
    "higher rank first": (
        pod("a", node="n", created=900),
        3,
        pod("b", node="n", created=1),
        1,
        None,
    ),
    "rank before ready time": (
        pod("a", node="n", ready=True, ready_since=900),
        2,
        pod("b", node="n", ready=True, ready_since=1),
        1,
        None,
    ),
    "exact ready time without now": (
        pod("a", node="n", ready=True, ready_since=100),
        0,
        pod("b", node="n", ready=True, ready_since=101),
        0,
        None,
    ),
    "log scale: same bucket falls back to uid": (
        pod("b", node="n", ready=True, ready_since=101, uid="1"),
        0,
        pod("a", node="n", ready=True, ready_since=100, uid="2"),
        0,
        NOW,
    ),
    "log scale: younger bucket first": (
        pod("a", node="n", ready=True, ready_since=10),
        0,
        pod("b", node="n", ready=True, ready_since=100),
        0,
        NOW,
    ),
    "log scale creation: same bucket by uid": (
        pod("z", node="n", created=101, uid="1"),
        0,
        pod("y", node="n", created=100, uid="2"),
        0,
        NOW,
    ),
    "log scale creation: zero time first": (
        pod("a", node="n", uid="9"),
        0,
        pod("b", node="n", created=5, uid="1"),
        0,
        NOW,
    ),
}


@pytest.mark.parametrize("case", sorted(RANKED_CASES))
def test_active_pods_with_ranks_rules(case: str) -> None:
    a, rank_a, b, rank_b, now = RANKED_CASES[case]
    assert active_pods_less(a, b, ranks=(rank_a, rank_b), now=now)
    assert not active_pods_less(b, a, ranks=(rank_b, rank_a), now=now)
    ordered = sort_active_pods_with_ranks([b, a], [rank_b, rank_a], now=now)
    assert ordered == [a, b]


def test_ranks_must_match_pods() -> None:
    with pytest.raises(ValueError, match="one rank per pod"):
        sort_active_pods_with_ranks([pod()], [])


def test_colocation_ranks_count_active_related_pods_per_node() -> None:
    related = [
        pod("r1", node="n1"),
        pod("r2", node="n1"),
        pod("r3", node="n2"),
        pod("gone", node="n2", deleting=True),
        pod("done", node="n2", phase="Succeeded"),
        pod("unassigned", phase="Pending"),
    ]
    targets = [pod("t1", node="n1"), pod("t2", node="n2"), pod("t3", node="n3"), pod("t4")]
    assert colocation_ranks(targets, related) == [2, 1, 0, 1]
