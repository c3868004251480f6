"""The Deployment and ReplicaSet controllers' pure decisions, case by case as upstream's
deployment_util_test.go, sync_test.go, rolling_test.go, progress_test.go and
replica_set_test.go decide them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from controllers.deployment import conditions as cond
from controllers.deployment import util
from controllers.deployment.hashing import compute_hash, fnv32a
from controllers.deployment.progress import progress_check_after, rollout_status
from controllers.deployment.recreate import old_pods_running
from controllers.deployment.replicaset import (
    calculate_status,
    pod_from_template,
    pods_to_delete,
    slow_start_batch,
)
from controllers.deployment.rolling import (
    InvalidScaleDown,
    cleanup_unhealthy_sizes,
    max_scaled_down,
    rollout_rolling,
    scale_down_sizes,
)
from controllers.deployment.sync import calculate_status as deployment_status
from controllers.deployment.sync import proportional_sizes

NOW = datetime(2024, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def stamp(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def deployment(
    replicas: int = 10,
    *,
    surge: Any = "25%",
    unavailable: Any = "25%",
    strategy: str = "RollingUpdate",
    deadline: int | None = 600,
    status: dict[str, Any] | None = None,
    generation: int = 1,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "strategy": {"type": strategy}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    if deadline is not None:
        spec["progressDeadlineSeconds"] = deadline
    return {
        "metadata": {"name": "d", "generation": generation, "uid": "d-uid"},
        "spec": spec,
        "status": status or {},
    }


def replica_set(
    name: str,
    replicas: int,
    *,
    available: int = 0,
    created: float = 0,
    revision: int | None = None,
    max_replicas: int | None = None,
) -> dict[str, Any]:
    annotations = {}
    if revision is not None:
        annotations[util.REVISION_ANNOTATION] = str(revision)
    if max_replicas is not None:
        annotations[util.MAX_REPLICAS_ANNOTATION] = str(max_replicas)
    return {
        "metadata": {
            "name": name,
            "uid": f"{name}-uid",
            "creationTimestamp": stamp(1000 - created),
            "annotations": annotations,
        },
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "availableReplicas": available},
    }


# --- fenceposts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        ("25%", "25%", 10, (3, 2)),  # surge rounds up, unavailable down
        (0, 0, 10, (0, 1)),  # both zero: one may be unavailable
        ("1%", "1%", 10, (1, 0)),
        (0, "1%", 10, (0, 1)),  # floors to 0 with no surge: 1
        (None, None, 5, (0, 1)),
        (2, "50%", 3, (2, 1)),
    ],
)
def test_resolve_fenceposts(
    surge: Any, unavailable: Any, desired: int, expected: tuple[int, int]
) -> None:
    assert util.resolve_fenceposts(surge, unavailable, desired) == expected


def test_resolve_fenceposts_refuses_a_bad_value() -> None:
    with pytest.raises(ValueError, match="percentage"):
        util.resolve_fenceposts("5", 0, 10)


def test_max_unavailable_and_surge() -> None:
    assert util.max_unavailable(deployment(10)) == 2
    assert util.max_surge(deployment(10)) == 3
    assert util.max_unavailable(deployment(2, unavailable=5)) == 2  # capped at replicas
    assert util.max_unavailable(deployment(0)) == 0
    recreate = deployment(10, strategy="Recreate")
    assert util.max_unavailable(recreate) == 0 and util.max_surge(recreate) == 0


# --- the new ReplicaSet's size ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("surge", "old", "new", "expected"),
    [
        (1, 10, 0, 1),  # room for one above 10
        (3, 10, 0, 3),
        (3, 5, 5, 8),  # 13 allowed, 10 there: +3
        (3, 13, 0, 0),  # no room: stays
        (5, 0, 8, 10),  # never above spec.replicas
    ],
)
def test_new_rs_new_replicas_rolling(surge: int, old: int, new: int, expected: int) -> None:
    d = deployment(10, surge=surge, unavailable=0)
    old_rs, new_rs = replica_set("old", old), replica_set("new", new)
    assert util.new_rs_new_replicas(d, [old_rs, new_rs], new_rs) == expected


def test_new_rs_new_replicas_recreate_and_unknown() -> None:
    new_rs = replica_set("new", 0)
    assert util.new_rs_new_replicas(deployment(4, strategy="Recreate"), [new_rs], new_rs) == 4
    with pytest.raises(ValueError, match="isn't supported"):
        util.new_rs_new_replicas(deployment(4, strategy="Blue"), [new_rs], new_rs)


# --- rolling steps ----------------------------------------------------------------------------


def test_old_replicas_are_scaled_down_within_max_unavailable() -> None:
    d = deployment(10, surge=3, unavailable=2)
    old = replica_set("old", 10, available=10)
    new = replica_set("new", 3, available=0, created=10)
    all_rss = [old, new]
    # 13 replicas, 8 must stay available, 3 new ones unavailable: 2 may go
    assert max_scaled_down(all_rss, new, d) == 2
    assert scale_down_sizes(all_rss, [old], d) == [(old, 8)]


def test_unhealthy_old_replicas_go_first_oldest_first() -> None:
    older = replica_set("older", 3, available=1, created=0)
    old = replica_set("old", 4, available=2, created=5)
    assert cleanup_unhealthy_sizes([old, older], 3) == [(older, 1), (old, 3)]
    assert cleanup_unhealthy_sizes([old, older], 0) == []


class _RecordingControl:
    """What :func:`rollout_rolling` asks of a DeploymentControl, with its ReplicaSets given
    and its scalings recorded instead of written."""

    def __init__(self, new_rs: dict[str, Any], old_rss: list[dict[str, Any]]) -> None:
        self.sets = (new_rs, old_rss)
        self.scaled: list[tuple[str, int]] = []

    def get_all_replica_sets_and_sync_revision(
        self, d: Any, rs_list: Any, create_if_missing: bool
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return self.sets

    def scale_replica_set_and_record_event(
        self, rs: dict[str, Any], size: int, d: Any
    ) -> tuple[bool, dict[str, Any]]:
        self.scaled.append((rs["metadata"]["name"], size))
        return True, {**rs, "spec": {"replicas": size}}


def test_stale_available_count_refuses_the_unhealthy_cleanup() -> None:
    # scaled from 10 to 4 in the middle of a rollout: the old ReplicaSet is at 3 while its
    # status still counts the 5 pods it had; the cleanup's "scale down" would be 3 -> 5:
    # upstream's cleanupUnhealthyReplicas returns an error there (the sync is retried once
    # the status catches up), it never scales the old ReplicaSet up
    d = deployment(4, surge=3, unavailable=2)
    old = replica_set("old", 3, available=5)
    new = replica_set("new", 4, available=0, created=10)
    assert cleanup_unhealthy_sizes([old], 1) == [(old, 5)]
    control = _RecordingControl(new, [old])
    with pytest.raises(InvalidScaleDown, match="old 3 -> 5"):
        rollout_rolling(control, d, [old, new])  # type: ignore[arg-type]
    assert control.scaled == []


def test_no_scale_down_at_min_available() -> None:
    d = deployment(10, surge=3, unavailable=2)
    old = replica_set("old", 8, available=8)
    new = replica_set("new", 5, available=0, created=10)
    assert scale_down_sizes([old, new], [old], d) == []


# --- proportional scaling ---------------------------------------------------------------------


def test_scaling_up_mid_rollout_is_shared_by_size() -> None:
    # upstream sync_test "proportional scaling: 5 -> 10": rs sized for 5+1 surge
    d = deployment(10, surge=1, unavailable=0)
    new = replica_set("new", 3, created=10, max_replicas=6)
    old = replica_set("old", 3, created=0, max_replicas=6)
    sizes, operation = proportional_sizes(d, [new, old])
    assert operation == "up"
    # 5 to add: the newer gets round(3 * 11 / 6) - 3 = 3 first, the older what is left (2)
    assert [(rs["metadata"]["name"], size) for rs, size in sizes] == [("new", 6), ("old", 5)]


def test_scaling_down_mid_rollout_takes_from_the_older_first() -> None:
    d = deployment(5, surge=1, unavailable=0)
    new = replica_set("new", 5, created=10, max_replicas=11)
    old = replica_set("old", 5, created=0, max_replicas=11)
    sizes, operation = proportional_sizes(d, [new, old])
    assert operation == "down"
    by_name = {rs["metadata"]["name"]: size for rs, size in sizes}
    assert sum(by_name.values()) == 6
    assert by_name["old"] <= by_name["new"]


def test_scaling_to_zero_empties_every_replica_set() -> None:
    d = deployment(0, surge=1, unavailable=0)
    sizes, _ = proportional_sizes(
        d, [replica_set("a", 3, max_replicas=6), replica_set("b", 2, max_replicas=6)]
    )
    assert [size for _, size in sizes] == [0, 0]


def test_find_active_or_latest() -> None:
    new = replica_set("new", 0, created=10)
    old = replica_set("old", 0, created=0)
    assert util.find_active_or_latest(new, [old]) is new
    assert util.find_active_or_latest(None, [old]) is old
    active = replica_set("old2", 2, created=5)
    assert util.find_active_or_latest(new, [old, active]) is active
    assert util.find_active_or_latest(replica_set("n", 1), [active]) is None


# --- revisions --------------------------------------------------------------------------------


def test_new_replica_set_annotations() -> None:
    d = deployment(3, surge=1)
    d["metadata"]["annotations"] = {
        "team": "a",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        util.REVISION_ANNOTATION: "9",
    }
    rs: dict[str, Any] = {"metadata": {}, "spec": {"replicas": 0}}
    assert util.set_new_replica_set_annotations(d, rs, "4", exists=False)
    assert rs["metadata"]["annotations"] == {
        "team": "a",
        util.REVISION_ANNOTATION: "4",
        util.DESIRED_REPLICAS_ANNOTATION: "3",
        util.MAX_REPLICAS_ANNOTATION: "4",
    }
    # unchanged the second time
    assert not util.set_new_replica_set_annotations(d, rs, "4", exists=True)
    # a ReplicaSet coming back keeps its old revisions
    assert util.set_new_replica_set_annotations(d, rs, "6", exists=True)
    assert rs["metadata"]["annotations"][util.REVISION_HISTORY_ANNOTATION] == "4"
    util.set_new_replica_set_annotations(d, rs, "8", exists=True)
    assert rs["metadata"]["annotations"][util.REVISION_HISTORY_ANNOTATION] == "4,6"
    # a history beyond the limit drops its oldest entries
    util.set_new_replica_set_annotations(d, rs, "10", exists=True, history_limit_chars=2)
    assert rs["metadata"]["annotations"][util.REVISION_HISTORY_ANNOTATION] == "8"


def test_max_revision_skips_bad_ones() -> None:
    bad = replica_set("bad", 0)
    bad["metadata"]["annotations"][util.REVISION_ANNOTATION] = "x"
    assert util.max_revision([replica_set("a", 0, revision=3), bad, None]) == 3
    assert util.max_revision([]) == 0


def test_new_replica_set_is_found_ignoring_the_hash() -> None:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}]}}
    d = deployment(1)
    d["spec"]["template"] = template
    hashed = replica_set("x", 1)
    hashed["spec"]["template"] = {
        "metadata": {"labels": {"app": "a", util.POD_TEMPLATE_HASH_LABEL: "abc"}},
        "spec": {"containers": [{"name": "c"}]},
    }
    other = replica_set("y", 1)
    other["spec"]["template"] = {"metadata": {"labels": {"app": "b"}}, "spec": {}}
    assert util.find_new_replica_set(d, [other, hashed]) is hashed
    assert util.find_old_replica_sets(d, [other, hashed]) == ([other], [other])


def test_sort_by_revision() -> None:
    rss = [
        replica_set("c", 0, revision=3),
        replica_set("a", 0, revision=1),
        replica_set("b", 0, revision=2),
    ]
    assert [rs["metadata"]["name"] for rs in util.sort_by_revision(rss)] == ["a", "b", "c"]


# --- hashing ----------------------------------------------------------------------------------


def test_fnv32a_matches_go() -> None:
    # hash/fnv New32a: "" and "a" (Go's own test vectors)
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_pod_template_hash() -> None:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"image": "x"}]}}
    h = compute_hash(template)
    assert h == compute_hash(dict(template))
    assert len(h) <= 10 and not set(h) & set("aeiou")
    assert compute_hash(template, 1) != h != compute_hash(template, 0)
    changed = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"image": "y"}]}}
    assert compute_hash(changed) != h


# --- conditions and progress -------------------------------------------------------------------


def test_set_condition_keeps_transition_time_on_same_status() -> None:
    status: dict[str, Any] = {}
    first = cond.new_condition("Progressing", "True", "A", "m", NOW - timedelta(seconds=60))
    cond.set_condition(status, first)
    cond.set_condition(status, cond.new_condition("Progressing", "True", "A", "other", NOW))
    assert status["conditions"] == [first]  # same status and reason: nothing
    cond.set_condition(status, cond.new_condition("Progressing", "True", "B", "m", NOW))
    (only,) = status["conditions"]
    assert only["reason"] == "B" and only["lastTransitionTime"] == first["lastTransitionTime"]
    assert only["lastUpdateTime"] == stamp(0)
    cond.set_condition(status, cond.new_condition("Progressing", "False", "C", "m", NOW))
    assert status["conditions"][0]["lastTransitionTime"] == stamp(0)
    cond.remove_condition(status, "Progressing")
    assert "conditions" not in status


def test_available_condition() -> None:
    d = deployment(10, surge=3, unavailable=2)
    status = deployment_status([replica_set("a", 10, available=8)], None, d, NOW)
    assert cond.get_condition(status, "Available")["reason"] == "MinimumReplicasAvailable"
    status = deployment_status([replica_set("a", 10, available=7)], None, d, NOW)
    available = cond.get_condition(status, "Available")
    assert available["status"] == "False" and available["reason"] == "MinimumReplicasUnavailable"
    assert status["unavailableReplicas"] == 3


def progressing(reason: str, status: str = "True", updated_ago: float = 0) -> dict[str, Any]:
    return {
        "type": "Progressing",
        "status": status,
        "reason": reason,
        "lastUpdateTime": stamp(updated_ago),
        "lastTransitionTime": stamp(updated_ago + 100),
    }


def test_progress_reasons() -> None:
    new = replica_set("new", 3, available=3)
    new["status"]["readyReplicas"] = 3
    # complete: NewReplicaSetAvailable
    d = deployment(3, status={"conditions": [progressing("ReplicaSetUpdated", updated_ago=5)]})
    got = cond.get_condition(rollout_status([new], new, d, NOW), "Progressing")
    assert got["reason"] == "NewReplicaSetAvailable"
    assert got["message"] == 'ReplicaSet "new" has successfully progressed.'
    # progress: ReplicaSetUpdated, transition time kept, update time now
    partial = replica_set("new", 3, available=2)
    before = {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 1}
    d = deployment(
        3, status={**before, "conditions": [progressing("NewReplicaSetCreated", updated_ago=5)]}
    )
    got = cond.get_condition(rollout_status([partial], partial, d, NOW), "Progressing")
    assert got["reason"] == "ReplicaSetUpdated"
    assert got["lastUpdateTime"] == stamp(0) and got["lastTransitionTime"] == stamp(105)
    # no progress past the deadline: ProgressDeadlineExceeded
    stuck = {"replicas": 3, "updatedReplicas": 3, "availableReplicas": 2}
    d = deployment(
        3,
        deadline=60,
        status={**stuck, "conditions": [progressing("ReplicaSetUpdated", updated_ago=61)]},
    )
    got = cond.get_condition(rollout_status([partial], partial, d, NOW), "Progressing")
    assert (got["status"], got["reason"]) == ("False", "ProgressDeadlineExceeded")
    # not yet past it: unchanged, checked again a second after the deadline
    d = deployment(
        3,
        deadline=60,
        status={**stuck, "conditions": [progressing("ReplicaSetUpdated", updated_ago=20)]},
    )
    status = rollout_status([partial], partial, d, NOW)
    assert cond.get_condition(status, "Progressing")["reason"] == "ReplicaSetUpdated"
    assert progress_check_after(d, status, NOW) == pytest.approx(41.0)
    # without a deadline there is no Progressing condition
    d = deployment(3, deadline=None, status={"conditions": [progressing("ReplicaSetUpdated")]})
    assert cond.get_condition(rollout_status([new], new, d, NOW), "Progressing") is None


def test_replica_failure_is_copied_from_the_new_replica_set() -> None:
    new = replica_set("new", 3)
    failure = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": "quota",
        "lastTransitionTime": stamp(1),
    }
    new["status"]["conditions"] = [failure]
    status = rollout_status([new], new, deployment(3), NOW)
    got = cond.get_condition(status, "ReplicaFailure")
    assert got["reason"] == "FailedCreate" and got["lastUpdateTime"] == stamp(1)


def test_old_pods_running() -> None:
    new = replica_set("new", 1)
    old = replica_set("old", 0)
    old["status"]["replicas"] = 0
    done = {"status": {"phase": "Succeeded"}}
    running = {"status": {"phase": "Running"}}
    assert not old_pods_running(new, [old], {"old-uid": [done], "new-uid": [running]})
    assert old_pods_running(new, [old], {"old-uid": [running]})
    old["status"]["replicas"] = 1
    assert old_pods_running(new, [old], {})


# --- the ReplicaSet controller -------------------------------------------------------------------


def pod(
    name: str,
    *,
    node: str = "n1",
    phase: str = "Running",
    ready_ago: float | None = 100,
    created: float = 0,
    restarts: int = 0,
) -> dict[str, Any]:
    conditions = []
    if ready_ago is not None:
        conditions.append(
            {"type": "Ready", "status": "True", "lastTransitionTime": stamp(ready_ago)}
        )
    return {
        "metadata": {
            "name": name,
            "uid": name,
            "creationTimestamp": stamp(1000 - created),
            "labels": {"app": "a"},
        },
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [{"restartCount": restarts}],
        },
    }


def test_pods_to_delete_order() -> None:
    pods = [
        pod("ready-old", created=0),
        pod("pending", phase="Pending", ready_ago=None),
        pod("unscheduled", node="", phase="Pending", ready_ago=None),
        pod("not-ready", ready_ago=None),
        pod("ready-new", created=10, ready_ago=50),
        pod("crowded", node="n2", created=0),
    ]
    # n2 holds 5 active pods of the owner, n1 4: the ready pod on n2 goes first
    related = [*pods, *(pod(f"sibling{i}", node="n2") for i in range(4))]
    order = [p["metadata"]["name"] for p in pods_to_delete(pods, related, 5)]
    assert order == ["unscheduled", "pending", "not-ready", "crowded", "ready-new"]
    # deleting them all needs no ranking
    assert len(pods_to_delete(pods, related, 6)) == 6


def test_slow_start_batch() -> None:
    calls: list[int] = []

    def ok() -> None:
        calls.append(1)

    assert slow_start_batch(10, 1, ok) == (10, None)
    assert len(calls) == 10  # batches 1, 2, 4, 3
    count = {"n": 0}

    def fails_from_the_fourth() -> None:
        count["n"] += 1
        if count["n"] >= 4:
            raise RuntimeError("quota")

    done, error = slow_start_batch(10, 1, fails_from_the_fourth)
    # batches 1, 2 succeed; the batch of 4 runs whole and fails: the rest is skipped
    assert (done, str(error)) == (3, "quota") and count["n"] == 7


def test_replica_set_status() -> None:
    rs = {
        "metadata": {"generation": 2},
        "spec": {
            "replicas": 3,
            "minReadySeconds": 30,
            "template": {"metadata": {"labels": {"app": "a", "tier": "web"}}},
        },
        "status": {},
    }
    pods = [pod("a", ready_ago=100), pod("b", ready_ago=10), pod("c", ready_ago=None)]
    pods[0]["metadata"]["labels"]["tier"] = "web"
    status, soonest = calculate_status(rs, pods, None, NOW)
    assert (
        status["replicas"],
        status["fullyLabeledReplicas"],
        status["readyReplicas"],
        status["availableReplicas"],
    ) == (3, 1, 2, 1)
    assert soonest == pytest.approx(20.0)  # b becomes available in 20 s
    status, _ = calculate_status(rs, pods[:1], RuntimeError("quota exceeded"), NOW)
    (failure,) = status["conditions"]
    assert (failure["reason"], failure["message"]) == ("FailedCreate", "quota exceeded")
    rs["status"] = status
    status, _ = calculate_status(rs, pods[:1], None, NOW)
    assert "conditions" not in status


def test_pod_from_template() -> None:
    rs = {
        "metadata": {"name": "web-abc", "namespace": "ns", "uid": "u"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "a"}, "annotations": {"x": "1"}},
                "spec": {"containers": [{"name": "c"}]},
            }
        },
    }
    new = pod_from_template(rs)
    assert new["metadata"]["generateName"] == "web-abc-"
    assert new["metadata"]["labels"] == {"app": "a"} and new["metadata"]["annotations"] == {
        "x": "1"
    }
    (ref,) = new["metadata"]["ownerReferences"]
    assert ref == {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web-abc",
        "uid": "u",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert new["spec"] == {"containers": [{"name": "c"}]}


def test_size_orders_put_the_largest_first_and_break_ties_by_age() -> None:
    def rs(name: str, replicas: int, minute: int) -> dict[str, Any]:
        stamp = f"2024-01-01T00:{minute:02d}:00Z"
        return {
            "metadata": {"name": name, "creationTimestamp": stamp},
            "spec": {"replicas": replicas},
        }

    rss = [rs("old-2", 2, 1), rs("big", 5, 3), rs("new-2", 2, 2)]
    names = lambda ordered: [r["metadata"]["name"] for r in ordered]  # noqa: E731
    assert names(util.sort_by_size_newer(rss)) == ["big", "new-2", "old-2"]
    assert names(util.sort_by_size_older(rss)) == ["big", "old-2", "new-2"]
