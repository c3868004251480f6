"""``scaleStrategy.maxUnavailable`` of the Advanced StatefulSet (Kruise
``getScaleMaxUnavailable`` / ``decreaseAndCheckMaxUnavailable`` in ``processReplica``) on the
FakeClient: while replicas are walked, each creation, failed, terminating or unavailable
replica takes one from the budget, and an exhausted budget ends the walk (the pass goes on to
scale-down and the rolling update)."""

from __future__ import annotations

from controllers.statefulset.spec import StatefulSetView
from kube_runtime.kinds import Pod
from tests.support.enhanced_statefulset_harness import EnhancedHarness, enhanced
from tests.support.statefulset_harness import Harness, make_set


def parallel(replicas, max_unavailable, **spec):
    return enhanced(
        replicas,
        policy="Parallel",
        scaleStrategy={"maxUnavailable": max_unavailable},
        **spec,
    )


def pending(h):
    for pod in h.pods():
        if not pod.get("status", {}).get("phase"):
            h.set_status(Pod, pod["metadata"]["name"], {"phase": "Pending"})


def reconcile_twice(h):
    for _ in range(2):
        pending(h)
        h.sync()


def test_scale_up_with_max_unavailable_as_kruise_unit_test():
    """Kruise ``TestScaleUpWithMaxUnavailable``: 5 replicas, Parallel, maxUnavailable 2."""
    h = EnhancedHarness(parallel(5, 2))
    reconcile_twice(h)
    assert h.sts["status"]["replicas"] == 2
    h.set_ready(1)
    reconcile_twice(h)
    assert h.sts["status"]["replicas"] == 3
    assert h.pod_names() == ["web-0", "web-1", "web-2"]


def test_budget_is_a_percent_of_replicas_rounded_down():
    assert StatefulSetView.of(parallel(5, "50%")).scale_max_unavailable == 2
    assert StatefulSetView.of(parallel(5, "10%")).scale_max_unavailable == 1
    assert StatefulSetView.of(parallel(5, 3)).scale_max_unavailable == 3
    assert StatefulSetView.of(enhanced(5, policy="Parallel")).scale_max_unavailable is None


def test_ready_pods_free_the_budget():
    h = EnhancedHarness(parallel(4, 2))
    h.sync()
    assert h.pod_names() == ["web-0", "web-1"]
    h.sync()
    assert h.pod_names() == ["web-0", "web-1"]
    h.all_ready()
    h.sync()
    assert h.pod_names() == ["web-0", "web-1", "web-2", "web-3"]


def test_without_the_strategy_parallel_creates_every_pod():
    h = EnhancedHarness(enhanced(5, policy="Parallel"))
    h.sync()
    assert len(h.pods()) == 5


def test_scale_down_is_not_limited():
    """Kruise applies the budget to the replicas' loop only: condemned pods all go."""
    h = EnhancedHarness(parallel(4, 1))
    h.converge()
    h.edit(lambda s: s["spec"].update(replicas=1))
    h.sync()
    assert sorted(h.pod_writes("delete")) == ["web-1", "web-2", "web-3"]


def test_terminating_replica_takes_from_the_budget():
    h = EnhancedHarness(parallel(3, 2))
    h.converge()
    created = len(h.pod_writes("create"))
    h.terminate_pod("web-0")
    h.remove_pod("web-1")
    h.set_ready(0, False)
    h.sync()
    # web-0 terminating and unavailable takes 2: the walk stops before recreating web-1
    assert len(h.pod_writes("create")) == created
    assert h.pod_names() == ["web-0", "web-2"]


def test_failed_replica_is_deleted_within_the_budget():
    h = EnhancedHarness(parallel(2, 2))
    h.converge()
    h.set_phase(0, "Failed")
    h.sync()
    assert h.pod_writes("delete") == ["web-0"]


def test_failed_replica_waits_when_it_would_exhaust_the_budget():
    """Kruise takes from the budget before deleting a failed pod: with 1 the failed pod is
    left for the rolling update."""
    h = EnhancedHarness(parallel(2, 1))
    h.converge()
    h.set_phase(1, "Failed")
    h.sync()
    assert h.pod_writes("delete") == []


def test_apps_v1_ignores_the_field():
    sts = make_set(3, policy="Parallel")
    sts["spec"]["scaleStrategy"] = {"maxUnavailable": 1}
    h = Harness(sts)
    h.sync()
    assert len(h.pods()) == 3
