"""CloneSet scaling decisions: calculate_diffs (the cases of upstream's
TestCalculateDiffsWithExpectation, with the current scaleUp/scaleDown split), the choice of
pods to delete, slow-start batches, instance ids."""

from __future__ import annotations

import itertools

import pytest

from controllers.cloneset.scale import (
    ExpectationDiffs,
    calculate_diffs,
    choose_pods_to_delete,
    slow_start_batch,
)

OLD, NEW = "old_rev", "new_rev"
_names = itertools.count()


def make_set(replicas, partition=0, max_unavailable=1, max_surge=0, **extra):
    return {
        "metadata": {"name": "cs", "namespace": "ns"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}},
            "updateStrategy": {
                "partition": partition,
                "maxUnavailable": max_unavailable,
                "maxSurge": max_surge,
            },
            **extra,
        },
    }


def make_pod(revision, ready=True, specified_delete=False, state="Normal", name=None, **status):
    labels = {"controller-revision-hash": revision, "lifecycle.apps.kruise.io/state": state}
    if specified_delete:
        labels["apps.kruise.io/specified-delete"] = "true"
    conditions = [
        {
            "type": "Ready",
            "status": "True" if ready else "False",
            "lastTransitionTime": "2020-01-01T00:00:00Z",
        }
    ]
    return {
        "metadata": {
            "name": name or f"p{next(_names)}",
            "labels": labels,
            "creationTimestamp": "2020-01-01T00:00:00Z",
        },
        "spec": {"nodeName": "n"},
        "status": {"phase": "Running", "conditions": conditions, **status},
    }


def pods(*specs):
    return [make_pod(*s) for s in specs]


R = (NEW, True, False)  # ready, at the update revision
CASES = [
    ("an empty cloneset", make_set(0), [], ExpectationDiffs()),
    (
        "increase replicas to 5 (1/2)",
        make_set(5),
        [],
        ExpectationDiffs(scale_up_num=5, scale_up_limit=5),
    ),
    ("increase replicas to 5 (2/2)", make_set(5), pods(*[R] * 5), ExpectationDiffs()),
    (
        "specified delete 1 pod (1/3)",
        make_set(5),
        pods((NEW, True, True), *[R] * 4),
        ExpectationDiffs(delete_ready_limit=1),
    ),
    (
        "specified delete 1 pod (2/3)",
        make_set(5),
        pods(*[R] * 4),
        ExpectationDiffs(scale_up_num=1, scale_up_limit=1),
    ),
    (
        "specified delete 2 pods (3/6): a new pod not ready yet",
        make_set(5),
        pods((NEW, True, True), *[R] * 3, (NEW, False, False)),
        ExpectationDiffs(),
    ),
    (
        "specified delete 2 pods (4/6)",
        make_set(5),
        pods((NEW, True, True), *[R] * 4),
        ExpectationDiffs(delete_ready_limit=1),
    ),
    (
        "specified delete 2 pods and replicas to 4",
        make_set(4),
        pods((NEW, False, True), (NEW, False, True), *[R] * 3),
        ExpectationDiffs(delete_ready_limit=2),
    ),
    (
        "scale down 5 -> 3",
        make_set(3),
        pods(*[R] * 5),
        ExpectationDiffs(scale_down_num=2, delete_ready_limit=3),
    ),
    (
        "update partition=3 (1/3)",
        make_set(5, partition=3),
        pods(*[(OLD, True, False)] * 5),
        ExpectationDiffs(update_num=2, update_max_unavailable=1),
    ),
    (
        "update partition=3 (2/3)",
        make_set(5, partition=3),
        pods(R, *[(OLD, True, False)] * 4),
        ExpectationDiffs(update_num=1, update_max_unavailable=1),
    ),
    (
        "update partition=3 (3/3)",
        make_set(5, partition=3),
        pods(R, R, *[(OLD, True, False)] * 3),
        ExpectationDiffs(),
    ),
    (
        "partition as a percentage rounds up (40% of 5 = 2)",
        make_set(5, partition="40%"),
        pods(*[(OLD, True, False)] * 5),
        ExpectationDiffs(update_num=3, update_max_unavailable=1),
    ),
    (
        "rollback partition=4 (1/3)",
        make_set(5, partition=4, max_unavailable=2),
        pods(*[R] * 4, (OLD, True, False)),
        ExpectationDiffs(update_num=-3, update_max_unavailable=2),
    ),
    (
        "rollback partition=4 (2/3)",
        make_set(5, partition=4, max_unavailable=2),
        pods(R, R, *[(OLD, True, False)] * 3),
        ExpectationDiffs(update_num=-1, update_max_unavailable=2),
    ),
    (
        "specified delete with maxSurge (1/4)",
        make_set(5, max_unavailable=0, max_surge=1),
        pods((NEW, True, True), *[R] * 4),
        ExpectationDiffs(scale_up_num=1, scale_up_limit=1, use_surge=1),
    ),
    (
        "specified delete with maxSurge (2/4)",
        make_set(5, max_unavailable=0, max_surge=1),
        pods((NEW, True, True), *[R] * 4, (NEW, False, False)),
        ExpectationDiffs(use_surge=1),
    ),
    (
        "specified delete with maxSurge (3/4)",
        make_set(5, max_unavailable=0, max_surge=1),
        pods((NEW, True, True), *[R] * 5),
        ExpectationDiffs(delete_ready_limit=1, use_surge=1),
    ),
    (
        "update in place partition=3 with maxSurge (1/4)",
        make_set(5, partition=3, max_unavailable=1, max_surge=1),
        pods(*[(OLD, True, False)] * 5),
        ExpectationDiffs(
            scale_up_num=1, scale_up_limit=1, use_surge=1, update_num=2, update_max_unavailable=1
        ),
    ),
    (
        "update in place partition=3 with maxSurge (2/4): surge pod not ready",
        make_set(5, partition=3, max_unavailable=1, max_surge=1),
        pods(*[(OLD, True, False)] * 5, (NEW, False, False)),
        ExpectationDiffs(use_surge=1, update_num=1, update_max_unavailable=2),
    ),
    (
        "recreate done with maxSurge: the surplus old pod goes",
        make_set(3, max_unavailable=0, max_surge=1),
        pods(*[R] * 3, (OLD, True, False)),
        ExpectationDiffs(
            scale_down_num=1,
            scale_down_num_old_revision=1,
            delete_ready_limit=1,
        ),
    ),
    (
        "a pod in PreparingDelete counts as unavailable and not active",
        make_set(3),
        pods(R, R, (NEW, True, False, "PreparingDelete")),
        ExpectationDiffs(),
    ),
    (
        "paused: maxSurge is not used",
        make_set(5, partition=3, max_surge=1, updateStrategy_paused=True),
        pods(*[(OLD, True, False)] * 5),
        ExpectationDiffs(update_num=2, update_max_unavailable=1),
    ),
]


@pytest.mark.parametrize(("name", "cs", "pod_list", "want"), CASES, ids=[c[0] for c in CASES])
def test_calculate_diffs(name, cs, pod_list, want):
    if cs["spec"].pop("updateStrategy_paused", False):
        cs["spec"]["updateStrategy"]["paused"] = True
    assert calculate_diffs(cs, pod_list, OLD, NEW) == want


def test_no_rollback_when_revisions_are_equal():
    cs = make_set(5, partition=4)
    assert calculate_diffs(cs, pods(*[R] * 5), NEW, NEW) == ExpectationDiffs()


def test_scale_strategy_max_unavailable_limits_scale_up():
    cs = make_set(5, scaleStrategy={"maxUnavailable": 2})
    got = calculate_diffs(cs, pods((NEW, False, False)), OLD, NEW)
    assert (got.scale_up_num, got.scale_up_limit) == (4, 1)


def test_choose_pods_to_delete_old_revision_first():
    old_ready = make_pod(OLD, name="old-ready")
    old_unready = make_pod(OLD, ready=False, name="old-unready")
    new_ready = make_pod(NEW, name="new-ready")
    new_pending = make_pod(NEW, name="new-pending")
    new_pending["status"]["phase"] = "Pending"
    new_pending["spec"] = {}
    not_updated, updated = [old_ready, old_unready], [new_ready, new_pending]

    def names(ps):
        return [p["metadata"]["name"] for p in ps]

    assert names(choose_pods_to_delete(1, 1, not_updated, updated)) == ["old-unready"]
    assert names(choose_pods_to_delete(2, 1, not_updated, updated)) == [
        "old-unready",
        "new-pending",
    ]
    assert names(choose_pods_to_delete(1, 0, not_updated, updated)) == ["new-pending"]
    assert names(choose_pods_to_delete(3, 3, not_updated, updated)) == ["old-ready", "old-unready"]


def test_slow_start_batches_stop_at_first_error():
    calls = []

    def fn(i):
        calls.append(i)
        if i == 4:
            raise RuntimeError("boom")

    done, err = slow_start_batch(10, 1, fn)
    # batches 1, 2, 4: the third batch (3..6) holds the failure; nothing after it runs
    assert calls == [0, 1, 2, 3, 4, 5, 6]
    assert done == 6 and isinstance(err, RuntimeError)
    calls.clear()
    assert slow_start_batch(5, 1, calls.append) == (5, None)
    assert calls == [0, 1, 2, 3, 4]
