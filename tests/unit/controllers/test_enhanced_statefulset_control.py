"""The StatefulSet algorithm on the enhanced kind against the FakeClient: reserveOrdinals,
in-place updates, InPlaceOnly refusals, unordered updates, paused, ordered teardown, the
status extras and conditions; and that apps/v1 sets get none of them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from controllers.statefulset.status import set_condition, status_changed
from controllers.statefulset.utils import (
    ENHANCED_STATEFULSET,
    ORDERED_TEARDOWN_FINALIZER,
    replica_ordinals,
    reserved_ordinals,
)
from kube_runtime.workloads.inplace import READINESS_GATE
from kube_runtime.workloads.revision import POD_REVISION_LABEL
from tests.support.enhanced_statefulset_harness import EnhancedHarness, enhanced, set_image
from tests.support.statefulset_harness import T0, Harness, make_set, ts


def test_reserved_ordinals_and_ranges():
    sts = enhanced(4, reserveOrdinals=[1, "3-4"])
    assert reserved_ordinals(sts) == {1, 3, 4}
    assert replica_ordinals(sts) == [0, 2, 5, 6]
    assert replica_ordinals(make_set(2)) == [0, 1]
    with pytest.raises(ValueError):
        reserved_ordinals(enhanced(1, reserveOrdinals=["4-2"]))


def test_reserve_ordinals_skip_pods_and_condemn_reserved_ones():
    h = EnhancedHarness(enhanced(3, policy="Parallel", reserveOrdinals=[1]))
    h.converge()
    assert h.pod_names() == ["web-0", "web-2", "web-3"]
    h.edit(lambda s: s["spec"].update(reserveOrdinals=[2]))
    h.converge()
    assert h.pod_names() == ["web-0", "web-1", "web-3"]


def test_new_pods_get_the_readiness_gate_and_its_condition():
    h = EnhancedHarness(enhanced(1))
    h.sync()
    pod = h.pod(0)
    assert {"conditionType": READINESS_GATE} in pod["spec"]["readinessGates"]
    h.set_ready(0)
    h.sync()
    gate = next(c for c in h.pod(0)["status"]["conditions"] if c["type"] == READINESS_GATE)
    assert gate["status"] == "True"


def test_in_place_update_patches_images_without_deleting():
    h = EnhancedHarness(enhanced(2, {"podUpdatePolicy": "InPlaceIfPossible"}))
    h.converge()
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in h.pods()}
    h.edit(set_image("nginx:2"))
    h.sync()
    assert h.pod(1)["spec"]["containers"][0]["image"] == "nginx:2"  # highest ordinal first
    assert h.pod(0)["spec"]["containers"][0]["image"] == "nginx:1"
    h.converge()
    assert {p["spec"]["containers"][0]["image"] for p in h.pods()} == {"nginx:2"}
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in h.pods()} == uids
    assert h.pod_writes("delete") == []
    status = h.sts["status"]
    assert status["updatedReadyReplicas"] == status["updatedAvailableReplicas"] == 2
    assert status["currentRevision"] == status["updateRevision"]
    assert status["labelSelector"] == "app=web"


def test_in_place_only_sets_a_condition_and_deletes_nothing():
    h = EnhancedHarness(enhanced(2, {"podUpdatePolicy": "InPlaceOnly"}))
    h.converge()

    def add_env(sts):
        sts["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]

    h.edit(add_env)
    h.sync()
    assert h.pod_writes("delete") == []
    cond = next(c for c in h.sts["status"]["conditions"] if c["type"] == "FailedUpdatePod")
    assert cond["status"] == "True" and cond["reason"] == "InPlaceOnly"
    assert "web-1" in cond["message"]
    assert ("Warning", "FailedUpdatePod") in {(t, r) for t, r, _ in h.recorder.events}
    # a change that is in-place-able clears it
    h.edit(lambda s: s["spec"]["template"]["spec"]["containers"][0].pop("env"))
    h.edit(set_image("nginx:3"))
    h.converge()
    cond = next(c for c in h.sts["status"]["conditions"] if c["type"] == "FailedUpdatePod")
    assert cond["status"] == "False"
    assert h.pod_writes("delete") == []


def test_paused_stops_the_rolling_update_only():
    h = EnhancedHarness(enhanced(2, {"paused": True}))
    h.converge()
    assert h.pod_names() == ["web-0", "web-1"]
    h.edit(set_image("nginx:2"))
    h.converge()
    assert h.pod_writes("delete") == []
    h.edit(lambda s: s["spec"]["updateStrategy"]["rollingUpdate"].update(paused=False))
    h.converge()
    assert h.pod_writes("delete") == ["web-1", "web-0"]


def test_unordered_update_by_priority_keeps_partition_pods():
    rolling = {
        "partition": 1,
        "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}},
    }
    h = EnhancedHarness(enhanced(3, rolling))
    h.converge()
    for ordinal, rank in ((0, "9"), (1, "1"), (2, "5")):
        h.edit_pod(ordinal, lambda pod, rank=rank: pod["metadata"]["labels"].update(rank=rank))
    h.edit(set_image("nginx:2"))
    h.converge()
    # web-0 first, then web-2; partition 1 keeps one old pod: the lowest priority, web-1
    assert h.pod_writes("delete") == ["web-0", "web-2"]
    update = h.sts["status"]["updateRevision"]
    old = [
        p["metadata"]["name"]
        for p in h.pods()
        if p["metadata"]["labels"][POD_REVISION_LABEL] != update
    ]
    assert old == ["web-1"]


def test_ordered_teardown_deletes_highest_first_one_at_a_time():
    sts = enhanced(3)
    sts["metadata"]["finalizers"] = [ORDERED_TEARDOWN_FINALIZER]
    h = EnhancedHarness(sts)
    h.converge()
    h.graceful = True
    h.mark_deleting(ENHANCED_STATEFULSET, "web")
    h.sync()
    h.sync()  # web-2 terminating: wait
    assert h.pod_writes("delete") == ["web-2"]
    h.remove_pod("web-2")
    h.sync()
    h.remove_pod("web-1")
    h.sync()
    assert h.pod_writes("delete") == ["web-2", "web-1", "web-0"]
    assert h.pod_writes("create") == ["web-0", "web-1", "web-2"]


def test_deleting_set_without_the_finalizer_is_left_alone():
    h = EnhancedHarness(enhanced(2))
    h.converge()
    h.mark_deleting(ENHANCED_STATEFULSET, "web")
    h.sync()
    assert h.pod_writes("delete") == []


def test_volume_claims_status_reports_matching_claims():
    template = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    h = EnhancedHarness(enhanced(2, templates=[template]))
    h.converge()
    claims = h.claims()
    claims[0]["spec"]["resources"]["requests"]["storage"] = "2Gi"
    h.control.update(h.sts, h.revisions(), h.pods(), claims)
    assert h.sts["status"]["volumeClaims"] == [
        {"volumeClaimName": "data", "compatibleReplicas": 1, "compatibleReadyReplicas": 1}
    ]


def test_apps_v1_status_has_no_extras():
    h = Harness(make_set(1))
    h.converge()
    status = h.sts["status"]
    assert "updatedReadyReplicas" not in status and "conditions" not in status
    assert "readinessGates" not in h.pod(0)["spec"]


def test_set_condition_keeps_transition_time_until_it_flips():
    status: dict = {}
    set_condition(status, {}, "FailedCreatePod", ("FailedCreatePod", "boom"), T0)
    first = status["conditions"][0]
    assert first["status"] == "True" and first["message"] == "boom"
    again: dict = {}
    later = T0 + timedelta(minutes=1)
    set_condition(again, status, "FailedCreatePod", ("FailedCreatePod", "boom 2"), later)
    assert again["conditions"][0]["lastTransitionTime"] == first["lastTransitionTime"]
    cleared: dict = {}
    set_condition(cleared, again, "FailedCreatePod", None, later)
    assert cleared["conditions"][0]["status"] == "False"
    assert cleared["conditions"][0]["lastTransitionTime"] == ts(later)
    untouched: dict = {}
    set_condition(untouched, {}, "FailedCreatePod", None, later)
    assert untouched == {}


def test_status_changed_compares_extra_fields():
    sts = {"status": {"replicas": 1, "updatedReadyReplicas": 0}}
    assert status_changed(sts, {"replicas": 1, "updatedReadyReplicas": 1})
    assert not status_changed(sts, {"replicas": 1, "updatedReadyReplicas": 0})


def test_specified_delete_within_max_unavailable_whatever_the_partition():
    """Kruise ``handleSpecifiedDeletedPods``: labelled replicas are deleted highest first while
    the unavailable count allows (an unavailable one always), partition or not; apps/v1 sets
    ignore the label."""
    h = EnhancedHarness(enhanced(4, {"partition": 4}, policy="Parallel"))
    h.converge()
    label = {"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}}
    for ordinal in (1, 3):
        h.edit_pod(ordinal, lambda p: p["metadata"]["labels"].update(label["metadata"]["labels"]))
    h.sync()
    assert h.pod_writes("delete") == ["web-3"]  # maxUnavailable 1: the highest first
    h.converge()
    assert h.pod_writes("delete")[:2] == ["web-3", "web-1"]
    assert "apps.kruise.io/specified-delete" not in h.pod(1)["metadata"]["labels"]
    plain = EnhancedHarness(make_set(2))
    plain.converge()
    plain.edit_pod(1, lambda p: p["metadata"]["labels"].update(label["metadata"]["labels"]))
    plain.converge()
    assert plain.pod_writes("delete") == []
