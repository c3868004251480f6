"""The StatefulSet algorithm against the FakeClient (no server): one test per upstream case."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from controllers.statefulset.utils import POD_INDEX_LABEL, POD_NAME_LABEL
from kube_runtime.kinds import StatefulSet
from kube_runtime.workloads.revision import POD_REVISION_LABEL, revision_from_object
from tests.support.statefulset_harness import NS, Harness, make_set


def image_of(pod):
    return pod["spec"]["containers"][0]["image"]


def set_image(image):
    def edit(sts):
        sts["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return edit


# --- creation ------------------------------------------------------------------------------


def test_ordered_ready_creates_one_pod_at_a_time_after_its_predecessor_is_ready():
    h = Harness(make_set(3))
    h.sync()
    assert h.pod_names() == ["web-0"]
    h.sync()  # web-0 Pending: wait
    assert h.pod_writes("create") == ["web-0"]
    h.set_ready(0, ready=False)
    h.sync()  # running but not ready: wait
    assert h.pod_writes("create") == ["web-0"]
    h.set_ready(0)
    h.sync()
    assert h.pod_writes("create") == ["web-0", "web-1"]
    h.converge()
    assert h.pod_writes("create") == ["web-0", "web-1", "web-2"]
    status = h.sts["status"]
    assert status["replicas"] == status["readyReplicas"] == status["availableReplicas"] == 3
    assert status["currentReplicas"] == status["updatedReplicas"] == 3
    assert (
        status["currentRevision"]
        == status["updateRevision"]
        == h.revisions()[0]["metadata"]["name"]
    )
    assert status["observedGeneration"] == 1 and status["collisionCount"] == 0


def test_pods_carry_identity_owner_and_revision():
    h = Harness(make_set(1))
    h.sync()
    pod = h.pod(0)
    labels = pod["metadata"]["labels"]
    assert labels[POD_NAME_LABEL] == "web-0" and labels[POD_INDEX_LABEL] == "0"
    assert labels[POD_REVISION_LABEL] == h.revisions()[0]["metadata"]["name"]
    assert labels["app"] == "web"
    assert pod["spec"]["hostname"] == "web-0" and pod["spec"]["subdomain"] == "web"
    (ref,) = pod["metadata"]["ownerReferences"]
    assert (
        ref["kind"] == "StatefulSet"
        and ref["controller"] is True
        and ref["uid"] == h.sts["metadata"]["uid"]
    )
    assert (
        "Normal",
        "SuccessfulCreate",
        "create Pod web-0 in StatefulSet web successful",
    ) in h.recorder.events


def test_parallel_creates_all_pods_without_waiting():
    h = Harness(make_set(4, policy="Parallel"))
    h.sync()
    created = h.pod_writes("create")
    # slow-start batches 1, 2, 1; the creations of one batch run concurrently
    assert created[0] == "web-0" and sorted(created[1:3]) == ["web-1", "web-2"]
    assert created[3:] == ["web-3"]


def test_a_pass_builds_only_the_pods_it_may_create(monkeypatch):
    """An ordered pass stops at its first missing replica: later missing ones are not built
    (a Parallel pass creates them all)."""
    import controllers.statefulset.control as control

    built = []
    real = control.new_versioned_pod

    def counting(*args, **kwargs):
        built.append(args[4])
        return real(*args, **kwargs)

    monkeypatch.setattr(control, "new_versioned_pod", counting)
    h = Harness(make_set(4))
    h.sync()
    assert built == [0] and h.pod_names() == ["web-0"]
    h.converge()
    h.remove_pod("web-1")
    h.remove_pod("web-3")
    built.clear()
    h.sync()
    assert built == [1] and h.pod_writes("create")[-1] == "web-1"
    assert h.pod_names() == ["web-0", "web-1", "web-2"]
    assert h.sts["status"]["replicas"] == 2  # web-0 and web-2, as the pass began
    built.clear()
    p = Harness(make_set(4, policy="Parallel"))
    p.sync()
    assert sorted(built) == [0, 1, 2, 3]
    assert p.pod_names() == ["web-0", "web-1", "web-2", "web-3"]


def test_status_counts_the_replicas_and_condemned_pods_only():
    """The counts taken when a pass begins stand when every pod is a replica or condemned; a
    second pod of one ordinal (``web-01`` next to ``web-1``) is in neither, and the counts
    are taken again without it."""
    h = Harness(make_set(2))
    h.converge()
    assert h.sts["status"]["replicas"] == 2
    twin = copy.deepcopy(h.pod(1))
    twin["metadata"].update(name="web-01", uid="twin-uid")
    h.seed(twin)
    h.sync()
    assert h.sts["status"]["replicas"] == h.sts["status"]["readyReplicas"] == 2


def test_ordered_ready_waits_for_terminating_replica():
    h = Harness(make_set(2))
    h.converge()
    h.graceful = True
    h.terminate_pod("web-0")
    h.remove_pod("web-1")
    h.sync()
    assert h.pod_writes("create") == ["web-0", "web-1"]  # web-1 not recreated yet


def test_ordinals_start():
    h = Harness(make_set(3, ordinals={"start": 5}))
    h.converge()
    assert h.pod_names() == ["web-5", "web-6", "web-7"]
    assert h.pod(5)["metadata"]["labels"][POD_INDEX_LABEL] == "5"
    h.edit(lambda s: s["spec"].update(replicas=1))
    h.converge()
    assert h.pod_names() == ["web-5"]
    assert h.pod_writes("delete") == ["web-7", "web-6"]
    h.edit(lambda s: s["spec"].update(ordinals={"start": 0}))
    h.converge()
    assert h.pod_names() == ["web-0"]


# --- scale down ----------------------------------------------------------------------------


def test_ordered_scale_down_highest_first_one_at_a_time():
    h = Harness(make_set(5))
    h.converge()
    h.edit(lambda s: s["spec"].update(replicas=2))
    h.sync()
    assert h.pod_writes("delete") == ["web-4"]
    h.converge()
    assert h.pod_writes("delete") == ["web-4", "web-3", "web-2"]
    assert h.pod_names() == ["web-0", "web-1"]
    assert h.sts["status"]["replicas"] == 2


def test_ordered_scale_down_waits_for_terminating_pod():
    h = Harness(make_set(3))
    h.converge()
    h.graceful = True
    h.edit(lambda s: s["spec"].update(replicas=1))
    h.sync()
    h.sync()
    assert h.pod_writes("delete") == ["web-2"]


def test_scale_down_blocked_by_unhealthy_pod_that_is_not_the_first_unhealthy():
    h = Harness(make_set(5))
    h.converge()
    h.edit(lambda s: s["spec"].update(replicas=3))
    h.set_ready(3, ready=False)
    h.set_ready(4, ready=False)
    h.sync()  # first unhealthy is web-3; web-4 is unhealthy too: blocked
    assert h.pod_writes("delete") == []


def test_scale_down_deletes_the_first_unhealthy_pod():
    h = Harness(make_set(5))
    h.converge()
    h.edit(lambda s: s["spec"].update(replicas=3))
    h.set_ready(4, ready=False)
    h.sync()
    assert h.pod_writes("delete") == ["web-4"]


def test_parallel_scale_down_deletes_all_condemned_at_once():
    h = Harness(make_set(5, policy="Parallel"))
    h.converge()
    h.graceful = True
    h.edit(lambda s: s["spec"].update(replicas=1))
    h.set_ready(2, ready=False)
    h.sync()
    deleted = h.pod_writes("delete")
    # highest first, in slow-start batches 1, 2, 1 whose deletions run concurrently
    assert deleted[0] == "web-4" and sorted(deleted[1:3]) == ["web-2", "web-3"]
    assert deleted[3:] == ["web-1"]


# --- repair --------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["Failed", "Succeeded"])
def test_failed_pod_is_deleted_then_recreated(phase):
    h = Harness(make_set(3))
    h.converge()
    h.set_phase(1, phase)
    h.sync()
    assert h.pod_writes("delete") == ["web-1"]
    assert h.pod_names() == ["web-0", "web-2"]
    reason = "RecreatingFailedPod" if phase == "Failed" else "RecreatingTerminatedPod"
    assert any(e[1] == reason and "web-1" in e[2] for e in h.recorder.events)
    h.sync()
    assert h.pod_writes("create")[-1] == "web-1"


def test_identity_and_storage_are_repaired():
    templates = [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]
    h = Harness(make_set(2, templates=templates))
    h.converge()

    def break_identity_and_storage(pod):
        del pod["metadata"]["labels"][POD_NAME_LABEL]
        pod["spec"]["volumes"] = []

    h.edit_pod(1, break_identity_and_storage)
    h.fake.direct.delete("v1/PersistentVolumeClaim", "data-web-1", NS)
    h.sync()
    assert h.pod_writes("update") == ["web-1"]
    pod = h.pod(1)
    assert pod["metadata"]["labels"][POD_NAME_LABEL] == "web-1"
    assert pod["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}
    ]
    assert h.claim("data-web-1") is not None
    h.sync()
    assert h.pod_writes("update") == ["web-1"]  # nothing more to repair


def test_claims_created_before_pods_and_never_deleted_without_policy():
    templates = [
        {
            "metadata": {"name": "data", "labels": {"t": "x"}},
            "spec": {"accessModes": ["ReadWriteOnce"]},
        }
    ]
    h = Harness(make_set(2, templates=templates))
    h.converge()
    creates = [
        (k, n) for v, k, n in h.writes if v == "create" and k in ("Pod", "PersistentVolumeClaim")
    ]
    assert creates == [
        ("PersistentVolumeClaim", "data-web-0"),
        ("Pod", "web-0"),
        ("PersistentVolumeClaim", "data-web-1"),
        ("Pod", "web-1"),
    ]
    claim = h.claim("data-web-0")
    assert claim["metadata"]["labels"] == {"t": "x", "app": "web"}
    assert "ownerReferences" not in claim["metadata"]
    h.edit(lambda s: s["spec"].update(replicas=0))
    h.converge()
    assert h.pod_names() == []
    assert not [w for w in h.writes if w[1] == "PersistentVolumeClaim" and w[0] != "create"]


def test_retention_policy_when_scaled_delete_makes_the_pod_own_its_claims():
    templates = [{"metadata": {"name": "data"}, "spec": {}}]
    policy = {"whenDeleted": "Delete", "whenScaled": "Delete"}
    h = Harness(make_set(2, templates=templates, persistentVolumeClaimRetentionPolicy=policy))
    h.converge()
    set_uid = h.sts["metadata"]["uid"]
    refs = h.claim("data-web-1")["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"]) for r in refs] == [("StatefulSet", set_uid)]
    h.graceful = True
    h.edit(lambda s: s["spec"].update(replicas=1))
    pod_uid = h.pod(1)["metadata"]["uid"]
    h.sync()
    refs = h.claim("data-web-1")["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"]) for r in refs] == [("Pod", pod_uid)]
    assert h.pod_writes("delete") == ["web-1"]


def test_stale_claim_of_an_old_pod_blocks_creation():
    templates = [{"metadata": {"name": "data"}, "spec": {}}]
    policy = {"whenDeleted": "Retain", "whenScaled": "Delete"}
    h = Harness(make_set(1, templates=templates, persistentVolumeClaimRetentionPolicy=policy))
    h.seed(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "data-web-0",
                "namespace": NS,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": "web-0",
                        "uid": "old",
                        "controller": True,
                    }
                ],
            },
        }
    )
    h.sync()
    assert h.pod_writes("create") == []


# --- updates -------------------------------------------------------------------------------


def test_rolling_update_with_partition_recreates_highest_first_down_to_partition():
    h = Harness(make_set(5, strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    h.converge()
    old = h.sts["status"]["currentRevision"]
    h.edit(set_image("nginx:2"))
    h.sync()
    assert h.pod_writes("delete") == ["web-4"]
    h.sync()  # recreate web-4 at the update revision
    assert image_of(h.pod(4)) == "nginx:2"
    h.sync()  # web-4 not ready yet: wait
    assert h.pod_writes("delete") == ["web-4"]
    h.converge()
    assert h.pod_writes("delete") == ["web-4", "web-3", "web-2"]
    assert [image_of(h.pod(i)) for i in range(5)] == ["nginx:1"] * 2 + ["nginx:2"] * 3
    status = h.sts["status"]
    assert status["currentRevision"] == old != status["updateRevision"]
    assert status["currentReplicas"] == 2 and status["updatedReplicas"] == 3
    h.edit(lambda s: s["spec"]["updateStrategy"]["rollingUpdate"].update(partition=0))
    h.converge()
    status = h.sts["status"]
    assert status["currentRevision"] == status["updateRevision"]  # rolling update completed
    assert status["currentReplicas"] == status["updatedReplicas"] == 5


def test_recreated_pod_below_partition_takes_the_current_revision():
    h = Harness(make_set(3, strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 3}}))
    h.converge()
    h.edit(set_image("nginx:2"))
    h.remove_pod("web-1")
    h.converge()
    assert image_of(h.pod(1)) == "nginx:1"


def test_on_delete_never_deletes_for_update_and_recreates_at_update_revision():
    h = Harness(make_set(3, strategy={"type": "OnDelete"}))
    h.converge()
    h.edit(set_image("nginx:2"))
    h.converge()
    assert h.pod_writes("delete") == []
    h.remove_pod("web-1")
    h.converge()
    assert [image_of(h.pod(i)) for i in range(3)] == ["nginx:1", "nginx:2", "nginx:1"]


def test_max_unavailable_deletes_several_pods_at_once():
    h = Harness(
        make_set(5, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    )
    h.converge()
    h.edit(set_image("nginx:2"))
    h.sync()
    assert h.pod_writes("delete") == ["web-4", "web-3"]


def test_max_unavailable_budget_counts_already_unavailable_pods():
    h = Harness(
        make_set(5, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "40%"}})
    )
    h.converge()
    h.edit(set_image("nginx:2"))
    h.set_ready(0, ready=False)
    h.sync()  # OrderedReady blocks on web-0 before any update
    assert h.pod_writes("delete") == []
    h.edit(lambda s: s["spec"].update(podManagementPolicy="Parallel"))
    h.sync()  # Parallel: old unavailable web-0 first, then one available pod (budget 2, 1 used)
    assert h.pod_writes("delete") == ["web-0", "web-4"]


def test_rolling_update_waits_for_unhealthy_pod():
    h = Harness(make_set(3))
    h.converge()
    h.edit(set_image("nginx:2"))
    h.set_ready(1, ready=False)
    h.edit(lambda s: s["spec"].update(podManagementPolicy="Parallel"))
    h.sync()
    # Parallel: web-1 is old and unavailable: it goes first, no budget left for the others
    assert h.pod_writes("delete") == ["web-1"]


# --- revisions -----------------------------------------------------------------------------


def test_new_revision_then_rollback_reuses_the_old_revision():
    h = Harness(make_set(2))
    h.converge()
    (first,) = h.revisions()
    h.edit(set_image("nginx:2"))
    h.converge()
    assert len(h.revisions()) == 2
    h.edit(set_image("nginx:1"))
    h.converge()
    revisions = {r["metadata"]["name"]: r["revision"] for r in h.revisions()}
    assert len(revisions) == 2
    assert revisions[first["metadata"]["name"]] == 3
    assert h.sts["status"]["updateRevision"] == first["metadata"]["name"]


def test_collision_count_bumped_on_name_collision():
    sts = make_set(1)
    h = Harness(sts)
    live = h.sts
    squatter = revision_from_object(live, 1, 0)
    squatter["data"] = {
        "spec": {"template": {"$patch": "replace", "metadata": {"labels": {"other": "x"}}}}
    }
    squatter["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    h.seed(squatter)
    h.sync()
    status = h.sts["status"]
    assert status["collisionCount"] == 1
    assert status["updateRevision"] != squatter["metadata"]["name"]


def test_history_truncated_to_limit_keeping_live_revisions():
    h = Harness(make_set(2, revisionHistoryLimit=1))
    h.converge()
    names = []
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        names.append(h.sts["status"]["updateRevision"])
        h.edit(set_image(image))
        h.converge()
    live = h.sts["status"]["updateRevision"]
    remaining = {r["metadata"]["name"] for r in h.revisions()}
    assert live in remaining and names[-1] in remaining  # limit 1 keeps the newest history
    assert len(remaining) == 2


# --- minReadySeconds, deletion -------------------------------------------------------------


def test_min_ready_seconds_counts_available_and_requeues_when_next_is_available():
    h = Harness(make_set(2, minReadySeconds=10))
    h.sync()
    h.set_ready(0, since=h.now - timedelta(seconds=4))
    result = h.sync()
    assert h.pod_writes("create") == ["web-0"]  # OrderedReady waits for availability
    assert h.sts["status"]["readyReplicas"] == 1 and h.sts["status"]["availableReplicas"] == 0
    assert result.requeue_after == pytest.approx(6, abs=0.01)
    h.now += timedelta(seconds=6.01)
    h.sync()
    assert h.pod_writes("create") == ["web-0", "web-1"]
    assert h.sts["status"]["availableReplicas"] == 1


def test_set_being_deleted_only_gets_status():
    h = Harness(make_set(3))
    h.sync()
    h.set_ready(0)
    h.mark_deleting(StatefulSet, "web")
    writes = len(h.writes)
    h.sync()
    assert [w[0] for w in h.writes[writes:]] == ["update_status"]
    assert h.sts["status"]["readyReplicas"] == 1


def test_converged_set_writes_nothing():
    h = Harness(make_set(3))
    h.converge()
    writes = len(h.writes)
    h.sync()
    assert len(h.writes) == writes


def test_the_update_revision_is_built_once_per_version_of_a_set(monkeypatch):
    """Passes over one version of a set (the same objects, as a cache hands them out) build
    its update revision once; another version or other annotations build it again."""
    import controllers.statefulset.control as control

    built = []
    real = control.revision_from_object

    def counting(*args, **kwargs):
        built.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(control, "revision_from_object", counting)
    h = Harness(make_set(2))
    sts = h.sts
    first = h.control.update(sts, h.revisions(), h.pods())  # creates revision 1
    built.clear()
    for _ in range(3):  # the next number is 2 on each of them
        again = h.control.update(sts, h.revisions(), h.pods())
        assert meta_name(again.update_revision) == meta_name(first.update_revision)
    assert len(built) == 1
    annotated = {**sts, "metadata": {**sts["metadata"], "annotations": {"a": "b"}}}
    h.control.update(annotated, h.revisions(), h.pods())
    assert len(built) == 2
    fresh = h.sts
    h.control.update(fresh, h.revisions(), h.pods())  # a fresh copy: built again
    assert len(built) == 3
    # A later version of the set whose spec the cache shares (a status write): no build.
    rewritten = {
        **fresh,
        "metadata": {**fresh["metadata"], "resourceVersion": "999"},
        "status": {**(fresh.get("status") or {}), "observedGeneration": 99},
    }
    h.control.update(rewritten, h.revisions(), h.pods())
    assert len(built) == 3
    # A new template object (a spec change) is built again, and makes another revision.
    changed = copy.deepcopy(rewritten)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:9"
    changed["metadata"]["generation"] = int(fresh["metadata"].get("generation") or 1) + 1
    result = h.control.update(changed, h.revisions(), h.pods())
    assert len(built) == 4
    assert meta_name(result.update_revision) != meta_name(first.update_revision)
    assert result.update_revision == revision_from_object(
        changed, int(result.update_revision["revision"]), 0
    ) | {"metadata": result.update_revision["metadata"]}


def meta_name(obj):
    return obj["metadata"]["name"]


def _pod(name, phase=None, ready=None, deleting=False, revision=None, since=None):
    pod = {"metadata": {"name": name, "labels": {}}, "status": {}}
    if phase is not None:
        pod["status"]["phase"] = phase
    if ready is not None:
        condition = {"type": "Ready", "status": ready}
        if since is not None:
            condition["lastTransitionTime"] = since
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}, condition]
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2024-05-01T10:00:00Z"
    if revision is not None:
        pod["metadata"]["labels"][POD_REVISION_LABEL] = revision
    return pod


FACT_PODS = [
    {},
    _pod("web-0"),
    _pod("web-1", "Pending"),
    _pod("web-2", "Running", "False"),
    _pod("web-3", "Running", "True", revision="r1", since="2024-05-01T09:59:00Z"),
    _pod("web-4", "Running", "True", deleting=True, since="2024-05-01T09:59:59Z"),
    _pod("web-5", "Running", "True", revision="r2"),  # ready without a transition time
    _pod("web-6", "Failed", "True"),
    _pod("web-7", "Succeeded", deleting=True),
    _pod("web-x", "Unknown", "True"),
    _pod("other-2147483648", "Running", "True"),
]


@pytest.mark.parametrize("min_ready", [0, 30, -1])
@pytest.mark.parametrize("pod", FACT_PODS)
def test_pod_facts_answer_as_the_predicates(pod, min_ready):
    """A pass reads each pod's state once (PodFacts): every field is what the predicate it is
    named after answers for the same pod, minReadySeconds and time."""
    from datetime import datetime, timezone

    from controllers.statefulset.utils import (
        PodFacts,
        is_running_and_available,
        is_unavailable,
        ordinal_of,
        pod_revision,
    )
    from kube_runtime.workloads import pods

    now = datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)
    facts = PodFacts(pod, min_ready, now)
    assert facts.pod is pod
    assert (
        facts.created,
        facts.pending,
        facts.failed,
        facts.succeeded,
        facts.terminating,
        facts.running_and_ready,
        facts.healthy,
        facts.available,
        facts.unavailable,
        facts.ordinal,
        facts.revision,
    ) == (
        pods.is_created(pod),
        pods.is_pending(pod),
        pods.is_failed(pod),
        pods.is_succeeded(pod),
        pods.is_terminating(pod),
        pods.is_running_and_ready(pod),
        pods.is_healthy(pod),
        is_running_and_available(pod, min_ready, now),
        is_unavailable(pod, min_ready, now),
        ordinal_of(pod),
        pod_revision(pod),
    )


def test_the_set_at_a_revision_is_patched_once_per_spec(monkeypatch):
    """The pass's view of the set at a revision equals revision_view's; the patched spec is
    made again only for another spec or revision object, never for a status change (the
    cache and the status writer share the set's spec), and a fresh copy misses."""
    import controllers.statefulset.control as control
    from kube_runtime.workloads.revision import revision_view

    calls = []

    def counting(obj, revision):
        calls.append(obj)
        return revision_view(obj, revision)

    monkeypatch.setattr(control, "revision_view", counting)
    h = Harness(make_set(2))
    h.sync()
    sts = h.sts
    (revision,) = h.revisions()
    calls.clear()
    memo = control._ViewMemo()
    first = memo.view(sts, revision)
    assert first == revision_view(sts, revision)
    assert memo.view(sts, revision) == first
    status_only = {**sts, "status": {"observedGeneration": 7, "replicas": 1}}
    again = memo.view(status_only, revision)
    assert again == revision_view(status_only, revision)
    assert again["status"] == status_only["status"]
    assert len(calls) == 1
    memo.view(copy.deepcopy(sts), revision)  # a fresh copy: patched again
    assert len(calls) == 2
    other = copy.deepcopy(revision)
    other["data"]["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    other_view = memo.view(sts, other)  # same name, another revision object
    assert other_view == revision_view(sts, other)
    assert other_view["spec"]["template"]["metadata"]["labels"]["x"] == "y"
    assert len(calls) == 3
    directive = {**revision, "data": {"$patch": "replace", "spec": {"replicas": 1}}}
    assert memo.view(sts, directive) == revision_view(sts, directive)
    removing = {**revision, "data": {"spec": None, "extra": {"a": 1}}}
    assert memo.view(sts, removing) == revision_view(sts, removing)
    assert "spec" not in memo.view(sts, removing)


def test_revisions_are_resolved_once_per_version_of_a_set(monkeypatch):
    """A pass over the same set, revisions and built revision (a cache's objects) reuses the
    revisions resolved before when that wrote nothing; another revision list, current
    revision or spec resolves again, and the answers are those resolve_revisions gives."""
    import controllers.statefulset.control as control

    calls = []
    real = control.resolve_revisions

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(control, "resolve_revisions", counting)
    h = Harness(make_set(2))
    h.sync()  # creates the revision
    sts, revisions = h.sts, h.revisions()
    first = h.control.update(sts, revisions, h.pods())
    calls.clear()
    again = h.control.update(sts, revisions, h.pods())
    assert calls == []
    assert again.update_revision is first.update_revision
    assert again.current_revision is first.current_revision
    h.control.update(sts, h.revisions(), h.pods())  # fresh revision objects
    assert len(calls) == 1
    moved = {**sts, "status": {**(sts.get("status") or {}), "currentRevision": "other"}}
    result = h.control.update(moved, revisions, h.pods())
    assert len(calls) == 2
    assert result.current_revision is result.update_revision  # no revision named "other"
    changed = copy.deepcopy(sts)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:9"
    changed["metadata"]["generation"] = int(sts["metadata"].get("generation") or 1) + 1
    result = h.control.update(changed, revisions, h.pods())
    assert len(calls) == 3
    assert meta_name(result.update_revision) != meta_name(first.update_revision)
    h.control.update(changed, revisions, h.pods())  # it wrote a revision: not kept
    assert len(calls) == 4
