"""CloneSet decisions that follow OpenKruise where the controller used to differ (issue 22),
on the FakeClient harness of :mod:`tests.support.cloneset_harness`:

* percent partitions as ``util.CalculatePartitionReplicas`` (upstream's own table);
* scaling counts a pod held in PreparingUpdate as updated (``PreparingUpdateAsUpdate``);
* the ``Progressing`` condition of ``progressDeadlineSeconds`` (``calculateProgressingStatus``);
* ``scaleStrategy.disablePVCReuse`` (``cleanupPVCs``);
* the ``apps.kruise.io/cloneset-scaling-exclude-preparing-delete`` label;
* in-place completion with an unchanged imageID (a retag);
* ``PreparingNormal`` and the ``preNormal`` hook (with ``preparing_normal``);
* container launch priority batches in in-place updates;
* the maxUnavailable check of Kruise's validating webhook, the defaults of its mutating one.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from controllers.cloneset.core import (
    SCALING_EXCLUDE_PREPARING_DELETE_LABEL,
    CloneSetView,
    InvalidSpecError,
    partition_replicas,
    validate,
)
from controllers.cloneset.pvc import INSTANCE_ID_LABEL, claims_without_reuse
from controllers.cloneset.scale import calculate_diffs
from controllers.cloneset.status import PROGRESSING, calculate_status, set_progressing
from controllers.cloneset.webhooks import set_defaults, setup_webhooks
from kube_runtime import Manager, meta, webhook
from kube_runtime.client.fake import FakeClient
from kube_runtime.kinds import Pod
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.inplace import (
    InPlaceControl,
    InPlaceSpec,
    check_update_completed,
    container_priorities,
    split_batch,
)
from tests.support.cloneset_harness import VCT, Harness, make_cs, revision

# --- partition ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "partition", "want"),
    [
        # upstream's TestCalculatePartitionReplicas (replicas nil is 1)
        (0, "99%", 0),
        (10, None, 0),
        (9, "99%", 8),
        (10, "90%", 9),
        (10, "1%", 1),
        (99, "99%", 98),
        (99, "100%", 99),
        (99, "0%", 0),
        (1, "100%", 1),
        (1, None, 0),
        (1, "1%", 1),
        (10, 5, 5),
        (10, 1, 1),
        (10, 0, 0),
        (10, 10, 10),
        (10, 11, 10),
        (10, "101%", 10),
        # the e2e scenario: "99%" of 4 keeps 3 and updates 1
        (4, "99%", 3),
        (2, "99%", 1),
        (3, "99%", 2),
    ],
)
def test_partition_replicas_as_upstream(replicas, partition, want):
    assert partition_replicas(partition, replicas) == want


def test_partition_99_percent_of_4_updates_one_pod():
    h = Harness(
        make_cs(
            4,
            updateStrategy={
                "type": "InPlaceIfPossible",
                "maxUnavailable": "50%",
                "partition": "99%",
            },
        )
    )
    h.settle()
    h.set_image("nginx:2")
    h.settle()
    status = h.status()
    assert status["updatedReplicas"] == 1 and status["expectedUpdatedReplicas"] == 1
    assert sorted(map(revision, h.pods().values())).count(status["updateRevision"]) == 1


# --- PreparingUpdateAsUpdate ----------------------------------------------------------------


def _pod(name: str, rev: str, state: str = lifecycle.NORMAL) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {"controller-revision-hash": rev, lifecycle.LIFECYCLE_STATE_LABEL: state},
            "creationTimestamp": "2020-01-01T00:00:00Z",
        },
        "spec": {"nodeName": "n"},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}
            ],
        },
    }


def _preparing_update_is_new(pod: Any, update_revision: str) -> bool:
    if lifecycle.get_state(pod) == lifecycle.PREPARING_UPDATE:
        return True
    return meta.labels(pod).get("controller-revision-hash") == update_revision


def test_scale_counts_preparing_update_as_updated():
    """Partition 1 of 2, one old pod held in PreparingUpdate, the other deleted: counted by
    revision the replacement would be new (overshooting the partition); counted as upstream's
    PreparingUpdateAsUpdate does, it is made at the current revision."""
    cs = make_cs(2, updateStrategy={"partition": "99%", "maxUnavailable": "50%"})
    held = _pod("a", "old", lifecycle.PREPARING_UPDATE)
    by_revision = calculate_diffs(cs, [held], "old", "new")
    assert (by_revision.scale_up_num, by_revision.scale_up_num_old_revision) == (1, 0)
    as_update = calculate_diffs(cs, [held], "old", "new", is_pod_update=_preparing_update_is_new)
    assert (as_update.scale_up_num, as_update.scale_up_num_old_revision) == (1, 1)


def test_rebuilt_pod_lands_on_the_current_revision_while_another_prepares_update():
    hook = {"inPlaceUpdate": {"labelsHandler": {"preparing-update-hook": "true"}}}
    h = Harness(
        make_cs(
            2,
            extra_labels={"preparing-update-hook": "true"},
            lifecycle=hook,
            updateStrategy={
                "type": "InPlaceIfPossible",
                "maxUnavailable": "50%",
                "partition": "99%",
            },
        )
    )
    h.settle()
    old = h.status()["updateRevision"]
    h.set_image("nginx:2")
    h.settle()
    states = {n: lifecycle.get_state(p) for n, p in h.pods().items()}
    assert sorted(states.values()) == [lifecycle.NORMAL, lifecycle.PREPARING_UPDATE]
    normal = next(n for n, s in states.items() if s == lifecycle.NORMAL)
    h.api.direct.delete(Pod, normal, NS_)
    h.settle()
    pods = h.pods()
    assert len(pods) == 2 and {revision(p) for p in pods.values()} == {old}
    # scaled to 3 ("99%" keeps 2): the new pod is old too
    h.patch_spec({"replicas": 3})
    h.settle()
    assert {revision(p) for p in h.pods().values()} == {old} and len(h.pods()) == 3


NS_ = "ns"


# --- Progressing ----------------------------------------------------------------------------

T = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _view(**spec: Any) -> CloneSetView:
    return CloneSetView.of(make_cs(2, **spec))


def _status(cs: CloneSetView, **counts: Any) -> dict[str, Any]:
    status = calculate_status(cs, [], "r1", "r2", 0)
    status.update(counts)
    return status


def _progressing(status: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or () if c["type"] == PROGRESSING), None)


def test_no_progressing_condition_without_a_deadline():
    for spec in ({}, {"progressDeadlineSeconds": 2**31 - 1}):
        cs = _view(**spec)
        status = _status(cs)
        status["conditions"] = [{"type": PROGRESSING, "status": "True", "reason": "x"}]
        assert set_progressing(cs, status, T) == 0
        assert "conditions" not in status


def test_progressing_reasons_in_upstream_order():
    cs = _view(progressDeadlineSeconds=10)
    status = _status(cs, replicas=2, updatedReplicas=0, updatedAvailableReplicas=0)
    delay = set_progressing(cs, status, T)
    cond = _progressing(status)
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "CloneSetUpdated",
        "CloneSet is progressing",
    )
    assert delay == pytest.approx(11.0)
    # later, still progressing: the condition keeps its time, the deadline comes closer
    assert set_progressing(cs, status, T + timedelta(seconds=4)) == pytest.approx(7.0)
    # past the deadline: exceeded, and it stays so
    set_progressing(cs, status, T + timedelta(seconds=11))
    cond = _progressing(status)
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert cond["message"] == "CloneSet revision r2 has timed out progressing"
    set_progressing(cs, status, T + timedelta(seconds=20))
    assert _progressing(status)["reason"] == "ProgressDeadlineExceeded"  # type: ignore[index]
    # everything updated and available: available
    status.update(currentRevision="r2", updatedReplicas=2, updatedAvailableReplicas=2)
    assert set_progressing(cs, status, T + timedelta(seconds=30)) == 0
    cond = _progressing(status)
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "CloneSetAvailable",
        "CloneSet is available",
    )


def test_progressing_paused_and_partition_available():
    paused = _view(progressDeadlineSeconds=10, updateStrategy={"paused": True})
    status = _status(paused, replicas=2)
    set_progressing(paused, status, T)
    assert _progressing(status)["reason"] == "CloneSetPaused"  # type: ignore[index]
    cs = _view(progressDeadlineSeconds=10, updateStrategy={"partition": 1})
    status = _status(cs, replicas=2, updatedReplicas=1, updatedAvailableReplicas=1)
    assert status["expectedUpdatedReplicas"] == 1
    set_progressing(cs, status, T)
    cond = _progressing(status)
    assert cond is not None
    assert (cond["reason"], cond["message"]) == (
        "ProgressPartitionAvailable",
        "CloneSet has been paused due to partition ready",
    )


def test_progressing_on_the_harness_is_written_and_requeued():
    h = Harness(make_cs(2, progressDeadlineSeconds=600))
    result, _ = h.step()
    assert h.conditions()[PROGRESSING]["reason"] == "CloneSetUpdated"
    assert result is not None and 590 < result.requeue_after <= 601
    h.settle()
    assert h.conditions()[PROGRESSING]["reason"] == "CloneSetAvailable"


# --- disablePVCReuse ------------------------------------------------------------------------


def _claim(ident: str) -> dict[str, Any]:
    return {"metadata": {"name": f"data-web-{ident}", "labels": {INSTANCE_ID_LABEL: ident}}}


def _with_id(ident: str) -> dict[str, Any]:
    return {"metadata": {"name": f"web-{ident}", "labels": {INSTANCE_ID_LABEL: ident}}}


def test_claims_without_reuse_split():
    claims = [_claim("a"), _claim("b"), _claim("c")]
    kept, deleted = claims_without_reuse([_with_id("a")], [_with_id("b")], claims)
    assert [meta.name(c) for c in kept] == ["data-web-a"]
    assert [meta.name(c) for c in deleted] == ["data-web-c"]


def test_disable_pvc_reuse_gives_new_ids_and_claims():
    h = Harness(make_cs(2, volumeClaimTemplates=VCT[:1]))
    h.settle()
    before_pods, before_claims = set(h.pods()), set(h.claims())
    for name in before_pods:
        h.api.direct.delete(Pod, name, NS_)
    h.settle()
    assert set(h.pods()) == before_pods and set(h.claims()) == before_claims  # reused
    h.patch_spec({"scaleStrategy": {"disablePVCReuse": True}})
    for name in before_pods:
        h.api.direct.delete(Pod, name, NS_)
    h.settle()
    pods, claims = h.pods(), h.claims()
    assert len(pods) == 2 and not set(pods) & before_pods
    assert len(claims) == 2 and not set(claims) & before_claims
    ids = {meta.labels(p)[INSTANCE_ID_LABEL] for p in pods.values()}
    assert {meta.labels(c)[INSTANCE_ID_LABEL] for c in claims.values()} == ids


# --- scaling-exclude-preparing-delete -------------------------------------------------------


def _pre_delete_set(exclude: bool) -> Harness:
    cs = make_cs(
        3,
        extra_labels={"lifecycle-hook": "true"},
        lifecycle={"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}},
    )
    if exclude:
        cs["metadata"]["labels"] = {SCALING_EXCLUDE_PREPARING_DELETE_LABEL: "true"}
    h = Harness(cs)
    h.settle()
    victim = sorted(h.pods())[0]
    h.patch_spec({"replicas": 2, "scaleStrategy": {"podsToDelete": [victim]}})
    h.settle()
    assert lifecycle.get_state(h.pods()[victim]) == lifecycle.PREPARING_DELETE
    assert len(h.pods()) == 3
    h.patch_spec({"replicas": 3})
    h.settle()
    return h


def test_scale_up_with_a_pod_preparing_delete_counts_it_by_default():
    assert len(_pre_delete_set(exclude=False).pods()) == 3


def test_scale_up_excluding_preparing_delete_creates_a_pod():
    h = _pre_delete_set(exclude=True)
    assert len(h.pods()) == 4 and h.status()["replicas"] == 4


# --- in-place completion with an unchanged imageID ------------------------------------------


def _updated_pod(spec_image: str, status_image: str, image_id: str) -> dict[str, Any]:
    state = '{"revision": "r2", "lastContainerStatuses": {"c": {"imageID": "sha-a"}}}'
    return {
        "metadata": {
            "labels": {"controller-revision-hash": "r2"},
            "annotations": {"apps.kruise.io/inplace-update-state": state},
        },
        "spec": {"containers": [{"name": "c", "image": spec_image}]},
        "status": {
            "containerStatuses": [{"name": "c", "image": status_image, "imageID": image_id}]
        },
    }


@pytest.mark.parametrize(
    ("spec_image", "status_image", "image_id", "done"),
    [
        ("nginx:b", "nginx:a", "sha-a", False),  # not restarted yet
        ("nginx:b", "nginx:b", "sha-b", True),  # a new image
        ("nginx:b", "nginx:b", "sha-a", True),  # a retag of the same image: upstream accepts it
        ("nginx", "nginx:latest", "sha-a", True),  # no tag means latest
        ("nginx:b", "nginx:b", "", False),  # not started yet
    ],
)
def test_in_place_completion_accepts_the_same_image_id_for_the_spec_image(
    spec_image, status_image, image_id, done
):
    pod = _updated_pod(spec_image, status_image, image_id)
    assert (check_update_completed(pod) is None) is done


# --- validation -----------------------------------------------------------------------------


def test_max_unavailable_below_one_is_allowed_with_zero_replicas():
    """Kruise's webhook rejects maxUnavailable < 1 with maxSurge < 1 only when replicas > 0."""
    validate(make_cs(0, updateStrategy={"maxUnavailable": "20%"}))
    validate(make_cs(0, updateStrategy={"maxUnavailable": 0}))
    with pytest.raises(InvalidSpecError, match="maxUnavailable"):
        validate(make_cs(2, updateStrategy={"maxUnavailable": 0}))
    validate(make_cs(2, updateStrategy={"maxUnavailable": 0, "maxSurge": 1}))


# --- PreparingNormal ------------------------------------------------------------------------


class PreparingNormalHarness(Harness):
    """The harness (``preparing_normal`` is the default) with some pods left unscheduled."""

    def __init__(self, cs: dict[str, Any], unscheduled: frozenset[str] = frozenset()) -> None:
        super().__init__(cs)
        self.unscheduled = set(unscheduled)


def _states(h: Harness) -> list[str]:
    return sorted(lifecycle.get_state(p) for p in h.pods().values())


def test_new_pods_are_preparing_normal_until_scheduled():
    h = PreparingNormalHarness(make_cs(2))
    h.step()
    assert _states(h) == [lifecycle.PREPARING_NORMAL] * 2
    h.settle()
    assert _states(h) == [lifecycle.NORMAL] * 2
    assert h.status()["availableReplicas"] == 2


def test_an_unscheduled_pod_stays_preparing_normal_and_unavailable():
    h = PreparingNormalHarness(make_cs(1))
    h.step()
    (name,) = h.pods()
    h.unscheduled.add(name)
    h.settle()
    assert _states(h) == [lifecycle.PREPARING_NORMAL]
    assert h.status()["readyReplicas"] == 1 and h.status()["availableReplicas"] == 0
    h.unscheduled.clear()
    h.kubelet()
    h.settle()
    assert _states(h) == [lifecycle.NORMAL] and h.status()["availableReplicas"] == 1


def test_pre_normal_hook_holds_the_pod_until_all_of_it_is_there():
    hook = {"preNormal": {"finalizersHandler": ["example.io/f"], "labelsHandler": {"ok": "y"}}}
    h = PreparingNormalHarness(make_cs(1, lifecycle=hook))
    h.settle()
    (name,) = h.pods()
    assert _states(h) == [lifecycle.PREPARING_NORMAL]
    h.api.direct.patch(Pod, name, {"metadata": {"finalizers": ["example.io/f"]}}, namespace=NS_)
    h.settle()
    assert _states(h) == [lifecycle.PREPARING_NORMAL]  # the label is missing still
    h.label_pod(name, {"ok": "y"})
    h.settle()
    assert _states(h) == [lifecycle.NORMAL]


def test_pre_delete_pod_taken_back_returns_to_preparing_normal():
    hook = {"preDelete": {"labelsHandler": {"hold": "true"}}}
    h = PreparingNormalHarness(make_cs(2, lifecycle=hook, extra_labels={"hold": "true"}))
    h.settle()
    h.patch_spec({"replicas": 1})
    h.step()
    assert lifecycle.PREPARING_DELETE in _states(h)
    h.patch_spec({"replicas": 2})
    h.step()
    assert _states(h) == [lifecycle.NORMAL, lifecycle.PREPARING_NORMAL]
    h.settle()
    assert _states(h) == [lifecycle.NORMAL] * 2 and len(h.pods()) == 2


# --- container launch priority in in-place updates ------------------------------------------


def _two_containers(**annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": NS_,
            "uid": "u",
            "labels": {"controller-revision-hash": "r1"},
            "annotations": dict(annotations),
        },
        "spec": {
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [
                {"name": "nginx", "image": "nginx:1"},
                {
                    "name": "redis",
                    "image": "redis:1",
                    "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}],
                },
            ],
        },
        "status": {
            "containerStatuses": [
                {"name": "nginx", "image": "nginx:1", "imageID": "nginx-1", "ready": True},
                {"name": "redis", "image": "redis:1", "imageID": "redis-1", "ready": True},
            ]
        },
    }


def test_container_priorities_as_kruise_assigns_them():
    pod = _two_containers()
    assert container_priorities(pod) == {"nginx": 0, "redis": 10}
    ordered = _two_containers(**{"apps.kruise.io/container-launch-priority": "Ordered"})
    assert container_priorities(ordered) == {"nginx": 0, "redis": -1}
    pod["spec"]["containers"][1]["env"] = [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "0"}]
    assert container_priorities(pod) == {}  # all equal: no priority
    barrier = {"configMapKeyRef": {"name": "p-barrier", "key": "p_5"}}
    pod["spec"]["containers"][0]["env"] = [
        {"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": barrier}
    ]
    assert container_priorities(pod) == {"nginx": 5}
    assert split_batch(_two_containers(), {"nginx": "nginx:2", "redis": "redis:2"}) == (
        {"redis": "redis:2"},
        {"nginx": "nginx:2"},
    )
    assert split_batch(_two_containers(), {"nginx": "nginx:2"}) == ({"nginx": "nginx:2"}, {})


def _run(api: FakeClient, name: str, image: str, image_id: str, ready: bool) -> None:
    pod = api.get(Pod, "p", NS_)
    statuses = [dict(c) for c in pod["status"]["containerStatuses"]]
    for c in statuses:
        if c["name"] == name:
            c.update(image=image, imageID=image_id, ready=ready)
    api.direct.status().patch(Pod, "p", {"status": {"containerStatuses": statuses}}, namespace=NS_)


def _state(api: FakeClient) -> dict[str, Any]:
    pod = api.get(Pod, "p", NS_)
    return dict(json.loads(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"]))


def _images(api: FakeClient) -> dict[str, str]:
    return {c["name"]: c["image"] for c in api.get(Pod, "p", NS_)["spec"]["containers"]}


def test_in_place_update_in_priority_batches():
    api = FakeClient().with_objects(_two_containers())
    control = InPlaceControl(api)
    spec = InPlaceSpec("r2", {"nginx": "nginx:2", "redis": "redis:2"}, {}, {})
    control.update(api.get(Pod, "p", NS_), spec)
    assert _images(api) == {"nginx": "nginx:1", "redis": "redis:2"}
    state = _state(api)
    assert state["nextContainerImages"] == {"nginx": "nginx:2"}
    assert [b["containers"] for b in state["containerBatchesRecord"]] == [["redis"]]
    assert state["preCheckBeforeNext"] == {"containersRequiredReady": ["redis"]}
    assert check_update_completed(api.get(Pod, "p", NS_)) is not None
    # redis restarted with its new image but not ready (its postStart hook runs): nginx waits
    _run(api, "redis", "redis:2", "redis-2", ready=False)
    assert control.refresh(api.get(Pod, "p", NS_)) == (False, 0.0)
    assert _images(api)["nginx"] == "nginx:1"
    # redis ready: the next batch
    _run(api, "redis", "redis:2", "redis-2", ready=True)
    assert control.refresh(api.get(Pod, "p", NS_)) == (True, 0.0)
    assert _images(api) == {"nginx": "nginx:2", "redis": "redis:2"}
    state = _state(api)
    assert "nextContainerImages" not in state
    assert [b["containers"] for b in state["containerBatchesRecord"]] == [["redis"], ["nginx"]]
    assert state["lastContainerStatuses"] == {
        "nginx": {"imageID": "nginx-1"},
        "redis": {"imageID": "redis-1"},
    }
    assert check_update_completed(api.get(Pod, "p", NS_)) is not None
    _run(api, "nginx", "nginx:2", "nginx-2", ready=True)
    assert check_update_completed(api.get(Pod, "p", NS_)) is None
    assert control.refresh(api.get(Pod, "p", NS_)) == (True, 0.0)  # InPlaceUpdateReady True


# --- defaults (Kruise's mutating webhook) ---------------------------------------------------


def test_set_defaults_as_kruise():
    got = set_defaults(make_cs(3))
    assert got["spec"]["replicas"] == 3 and got["spec"]["revisionHistoryLimit"] == 10
    assert got["spec"]["updateStrategy"] == {
        "type": "ReCreate",
        "partition": 0,
        "maxUnavailable": "20%",
        "maxSurge": 0,
    }
    cs = make_cs(3, updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": 1})
    del cs["spec"]["replicas"]
    got = set_defaults(cs)
    assert got["spec"]["replicas"] == 1
    assert got["spec"]["updateStrategy"] == {
        "type": "InPlaceIfPossible",
        "inPlaceUpdateStrategy": {},
        "partition": 0,
        "maxUnavailable": 1,
        "maxSurge": 0,
    }
    assert (
        "updateStrategy" not in cs["spec"] or cs["spec"]["updateStrategy"].get("partition") is None
    )
    validate(set_defaults(make_cs(0)))  # 20% of 0 is allowed with no replicas


def test_defaulting_webhook_endpoint(tmp_path):
    manager = Manager(FakeClient(), metrics_bind_address="0")  # type: ignore[arg-type]
    server = webhook.server_for(manager, port=0, cert_dir=str(tmp_path))
    setup_webhooks(manager)
    request = {
        "uid": "1",
        "kind": {"group": "apps.kube-runtime.io", "version": "v1alpha1", "kind": "CloneSet"},
        "resource": {
            "group": "apps.kube-runtime.io",
            "version": "v1alpha1",
            "resource": "clonesets",
        },
        "name": "web",
        "namespace": NS_,
        "operation": "CREATE",
        "object": make_cs(2),
    }
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    endpoint = server.endpoint("/mutate-apps-kube-runtime-io-v1alpha1-cloneset")
    assert endpoint is not None, server.paths
    answer = json.loads(
        endpoint.serve("POST", "application/json", json.dumps(review).encode()).body
    )
    patch = json.loads(base64.b64decode(answer["response"]["patch"]))
    assert {
        "op": "add",
        "path": "/spec/updateStrategy",
        "value": {"type": "ReCreate", "partition": 0, "maxUnavailable": "20%", "maxSurge": 0},
    } in patch
    assert {"op": "add", "path": "/spec/revisionHistoryLimit", "value": 10} in patch


def test_the_old_lifecycle_path_warns_and_gives_the_shared_module_names() -> None:
    from controllers.cloneset import lifecycle as old_path

    with pytest.warns(DeprecationWarning, match="kube_runtime.workloads.lifecycle.get_state"):
        assert old_path.get_state is lifecycle.get_state
    with pytest.raises(AttributeError):
        old_path.no_such_name  # noqa: B018
