"""CloneSet decisions on the FakeClient: the reconciler runs with a FakeClient as its client
and (through :class:`LaggingReader`, which can hold back what the "cache" shows) as its
reader; a tiny kubelet stand-in makes pods run, become ready and report new images.

Covered: scale up (instance ids, one claim per volumeClaimTemplate, reuse of an orphaned
claim), scale down (podsToDelete, the specified-delete label, not-ready first), partition
(int and percent), maxUnavailable and maxSurge in an update, in-place update vs recreate,
InPlaceOnly, preDelete / inPlaceUpdate hooks, status counts and conditions, invalid specs,
expectations while the cache lags, adoption; and the algorithm (control.py) on a recording
pod control, without any client.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any

import pytest

from controllers.cloneset.control import CloneSetControl
from controllers.cloneset.controller import CloneSetReconciler
from controllers.cloneset.core import CLONESET, SPECIFIED_DELETE_LABEL, CloneSetView
from controllers.cloneset.pvc import INSTANCE_ID_LABEL
from controllers.cloneset.update import UpdateError
from kube_runtime import meta
from kube_runtime.client.errors import Conflict
from kube_runtime.client.fake import not_found
from kube_runtime.kinds import (
    ControllerRevision,
    PersistentVolumeClaim,
    Pod,
)
from kube_runtime.reconcile import Result
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.inplace import READINESS_GATE, InPlaceSpec
from kube_runtime.workloads.revision import POD_REVISION_LABEL
from tests.support.cloneset_harness import (
    NS,
    T0,
    VCT,
    Harness,
    converged,
    image,
    make_cs,
    revision,
    writes_of,
)


def test_scale_up_creates_pods_with_instance_ids_and_a_claim_per_template():
    h = Harness(make_cs(3, volumeClaimTemplates=VCT))
    result, writes = h.step()
    assert result is None
    pods, claims = h.pods(), h.claims()
    assert len(pods) == 3 and len(claims) == 6
    status = h.status()
    for name, pod in pods.items():
        instance = meta.labels(pod)[INSTANCE_ID_LABEL]
        assert name == f"web-{instance}" and len(instance) == 5
        assert revision(pod) == status["updateRevision"]
        # Kruise: PreparingNormal until scheduled (the kubelet stand-in schedules next)
        assert meta.labels(pod)[lifecycle.LIFECYCLE_STATE_LABEL] == lifecycle.PREPARING_NORMAL
        assert meta.controller_uid(pod) == "cs-uid"
        assert {"conditionType": READINESS_GATE} in pod["spec"]["readinessGates"]
        volumes = {
            v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"]
        }
        assert volumes == {"data": f"data-web-{instance}", "logs": f"logs-web-{instance}"}
        for template in ("data", "logs"):
            claim = claims[f"{template}-web-{instance}"]
            assert meta.labels(claim)[INSTANCE_ID_LABEL] == instance
            assert meta.controller_uid(claim) == "cs-uid"
    # the first revision, then slow start (1, then 2 pods), each pod's claims before it
    creates = [a.kind.kind for a in writes if a.verb == "create"]
    assert creates[:4] == ["ControllerRevision"] + ["PersistentVolumeClaim"] * 2 + ["Pod"]
    # the second batch's two creations run concurrently: each pod still after its claims
    second = [(a.kind.kind, a.name) for a in writes if a.verb == "create"][4:]
    assert sorted(kind for kind, _ in second) == ["PersistentVolumeClaim"] * 4 + ["Pod"] * 2
    for i, (kind, name) in enumerate(second):
        if kind == "Pod":
            instance = name.rsplit("-", 1)[1]
            claims_before = {n for k, n in second[:i] if k == "PersistentVolumeClaim"}
            assert {f"data-web-{instance}", f"logs-web-{instance}"} <= claims_before
    assert h.recorder.reasons().count("SuccessfulCreate") == 3
    # the status counts the pods the sync started from
    assert status["replicas"] == 0 and status["updatedReplicas"] == 0
    assert status["currentRevision"] == status["updateRevision"]
    assert status["labelSelector"] == "app=web"
    assert status["observedGeneration"] == 1
    h.step()
    status = h.status()
    assert status["replicas"] == status["updatedReplicas"] == 3 and status["readyReplicas"] == 0


def test_scale_up_reuses_an_orphaned_claim_of_the_same_instance():
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data-web-abcde",
            "namespace": NS,
            "labels": {"app": "web", INSTANCE_ID_LABEL: "abcde"},
            "ownerReferences": [
                {
                    "apiVersion": CLONESET.api_version,
                    "kind": "CloneSet",
                    "name": "web",
                    "uid": "cs-uid",
                    "controller": True,
                }
            ],
        },
        "spec": {"resources": {"requests": {"storage": "1Gi"}}},
    }
    h = Harness(make_cs(1, volumeClaimTemplates=VCT[:1]), claim)
    _, writes = h.step()
    assert list(h.pods()) == ["web-abcde"]
    assert writes_of(writes, "create", PersistentVolumeClaim) == []
    assert list(h.claims()) == ["data-web-abcde"]


def test_scale_up_stops_at_the_first_failed_batch_and_reports_failed_scale():
    h = Harness(make_cs(4))
    h.api.fail_next("create", RuntimeError("quota exceeded"), when=lambda a: a.kind == Pod)
    with pytest.raises(RuntimeError, match="quota"):
        h.reconcile()
    assert h.pods() == {}  # the first batch (1 pod) failed: nothing more was tried
    assert len(writes_of(h.api.actions, "create")) == 1
    condition = h.conditions()["FailedScale"]
    assert condition["status"] == "True" and "quota exceeded" in condition["message"]
    assert ("Warning", "FailedCreate") in [(t, r) for t, r, _ in h.recorder.events]
    # the expectation of the failed create was dropped: the next sync creates at once
    h.settle()
    assert len(h.pods()) == 4
    assert "FailedScale" not in h.conditions()


# --- scale down -------------------------------------------------------------------------------


def test_pods_to_delete_are_deleted_with_their_claims_then_truncated():
    h = Harness(make_cs(3, volumeClaimTemplates=VCT[:1]))
    h.settle()
    victim = sorted(h.pods())[1]
    instance = meta.labels(h.pods()[victim])[INSTANCE_ID_LABEL]
    h.patch_spec({"replicas": 2, "scaleStrategy": {"podsToDelete": [victim]}})
    _, writes = h.step()
    assert writes_of(writes, "delete") == [victim]
    assert writes_of(writes, "delete", PersistentVolumeClaim) == [f"data-web-{instance}"]
    assert victim not in h.pods() and len(h.pods()) == 2
    # Kept from before the restructuring: the truncating patch carries the resourceVersion
    # the sync read, which its own status write (replicas 3 -> 2) has just moved on.
    with pytest.raises(Conflict):
        h.reconcile()
    assert h.cs()["spec"]["scaleStrategy"]["podsToDelete"] == [victim]
    _, writes = h.step()
    assert [(a.verb, a.kind) for a in writes] == [("patch", CLONESET)]
    assert "podsToDelete" not in h.cs()["spec"]["scaleStrategy"]


def test_specified_delete_label_recreates_the_pod():
    h = converged(3)
    victim = sorted(h.pods())[0]
    h.label_pod(victim, {SPECIFIED_DELETE_LABEL: "true"})
    _, writes = h.step()
    assert writes_of(writes, "delete") == [victim]
    _, writes = h.step()
    assert len(writes_of(writes, "create")) == 1
    assert victim not in h.pods() and len(h.pods()) == 3


def test_scale_down_deletes_not_ready_pods_first():
    h = converged(3)
    sick = sorted(h.pods())[2]
    h.kubelet(not_ready={sick})
    h.patch_spec({"replicas": 2})
    _, writes = h.step()
    assert writes_of(writes, "delete") == [sick]


def test_specified_deletes_of_ready_pods_within_max_unavailable():
    h = converged(5, updateStrategy={"maxUnavailable": 1})
    victims = sorted(h.pods())[:3]
    h.patch_spec({"scaleStrategy": {"podsToDelete": victims}})
    _, writes = h.step()
    assert writes_of(writes, "delete") == victims[:1]  # one ready pod at a time
    h.settle()
    assert len(h.pods()) == 5 and not set(victims) & set(h.pods())


def test_scale_down_of_ready_pods_is_not_bound_by_max_unavailable():
    h = converged(5, updateStrategy={"maxUnavailable": 1})
    h.patch_spec({"replicas": 1})
    _, writes = h.step()
    # upstream's delete-ready limit counts the surplus: maxUnavailable + (5 - 1)
    assert len(writes_of(writes, "delete")) == 4


def test_a_pod_already_gone_is_not_a_failed_delete():
    h = converged(2)
    h.api.fail_next("delete", lambda action: not_found(Pod, action.name or ""))
    h.patch_spec({"replicas": 1})
    assert h.reconcile() is None
    assert "FailedDelete" not in h.recorder.reasons()
    assert "FailedScale" not in h.conditions()
    h.settle()
    assert len(h.pods()) == 1


# --- updates ----------------------------------------------------------------------------------


IN_PLACE_ALL = {"type": "InPlaceIfPossible", "maxUnavailable": "100%"}


@pytest.mark.parametrize(
    ("partition", "updated"),
    [(2, 2), ("25%", 3), ("30%", 2), (0, 4), (4, 0)],
)
def test_partition_keeps_old_pods(partition, updated):
    h = converged(4, updateStrategy={**IN_PLACE_ALL, "partition": partition})
    h.set_image("nginx:2")
    h.settle()
    pods = h.pods().values()
    assert sum(image(p) == "nginx:2" for p in pods) == updated
    assert sum(image(p) == "nginx:1" for p in pods) == 4 - updated
    status = h.status()
    assert status["expectedUpdatedReplicas"] == updated
    assert status["updatedReplicas"] == status["updatedReadyReplicas"] == updated
    assert status["replicas"] == status["readyReplicas"] == status["availableReplicas"] == 4


@pytest.mark.parametrize("max_unavailable", [1, 2])
def test_recreate_update_marks_max_unavailable_pods_at_a_time(max_unavailable):
    h = converged(4, updateStrategy={"maxUnavailable": max_unavailable})
    h.set_image("nginx:2")
    _, writes = h.step()
    marked = [n for n, p in h.pods().items() if SPECIFIED_DELETE_LABEL in meta.labels(p)]
    assert len(marked) == max_unavailable
    assert writes_of(writes, "patch") == sorted(marked)
    assert h.recorder.reasons().count("SuccessfulUpdatePodReCreate") == max_unavailable
    h.settle(rounds=40)  # each new pod goes PreparingNormal, then Normal once scheduled
    assert {image(p) for p in h.pods().values()} == {"nginx:2"} and len(h.pods()) == 4


def test_max_surge_creates_a_new_pod_before_deleting_old_ones():
    h = converged(4, updateStrategy={"maxSurge": 1, "maxUnavailable": 0})
    old = set(h.pods())
    h.set_image("nginx:2")
    _, writes = h.step()
    assert writes_of(writes, "delete") == []
    new = set(h.pods()) - old
    assert len(new) == 1 and len(h.pods()) == 5
    assert image(h.pods()[new.pop()]) == "nginx:2"
    h.settle()
    assert len(h.pods()) == 4 and {image(p) for p in h.pods().values()} == {"nginx:2"}


def test_in_place_update_keeps_the_pod_and_completes_when_the_image_runs():
    h = converged(1, updateStrategy={"type": "InPlaceIfPossible"})
    (name,) = h.pods()
    h.set_image("nginx:2")
    _, writes = h.step()
    pod = h.pods()[name]
    assert image(pod) == "nginx:2" and revision(pod) == h.status()["updateRevision"]
    assert meta.labels(pod)[lifecycle.LIFECYCLE_STATE_LABEL] == lifecycle.UPDATING
    gate = {c["type"]: c["status"] for c in pod["status"]["conditions"]}[READINESS_GATE]
    assert gate == "False"
    assert writes_of(writes, "delete") == []
    assert "SuccessfulUpdatePodInPlace" in h.recorder.reasons()
    assert h.status()["updatedReadyReplicas"] == 0  # not ready while the image changes
    h.settle()  # the kubelet reports the new image: the condition and the state follow
    pod = h.pods()[name]
    assert meta.labels(pod)[lifecycle.LIFECYCLE_STATE_LABEL] == lifecycle.NORMAL
    assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}[READINESS_GATE] == "True"
    assert h.status()["updatedReadyReplicas"] == 1


def test_in_place_if_possible_recreates_when_more_than_images_change():
    h = converged(1, updateStrategy={"type": "InPlaceIfPossible"})
    (name,) = h.pods()
    h.set_image("nginx:2", container={"env": [{"name": "A", "value": "1"}]})
    _, writes = h.step()
    assert writes_of(writes, "patch") == [name]
    assert SPECIFIED_DELETE_LABEL in meta.labels(h.pods()[name])
    h.settle()
    (new,) = h.pods()
    assert new != name and image(h.pods()[new]) == "nginx:2"


def test_in_place_only_refuses_other_changes():
    h = converged(2, updateStrategy={"type": "InPlaceOnly"})
    before = h.pods()
    h.set_image("nginx:2", container={"env": [{"name": "A", "value": "1"}]})
    h.api.clear_actions()
    with pytest.raises(UpdateError, match="InPlaceOnly"):
        h.reconcile()
    # the new revision and the status; no pod is touched
    assert [a.kind for a in h.writes()] == [ControllerRevision, CLONESET]
    assert h.pods() == before
    assert "InPlaceOnly" in h.conditions()["FailedUpdate"]["message"]
    assert ("Warning", "FailedUpdate") in [(t, r) for t, r, _ in h.recorder.events]


def test_paused_updates_nothing():
    h = converged(2, updateStrategy={"type": "InPlaceIfPossible", "paused": True})
    h.set_image("nginx:2")
    h.settle()
    assert {image(p) for p in h.pods().values()} == {"nginx:1"}
    assert h.status()["updatedReplicas"] == 0


# --- lifecycle hooks --------------------------------------------------------------------------


def test_pre_delete_hook_holds_the_pod_until_released():
    hook = {"preDelete": {"labelsHandler": {"hold": "true"}}}
    h = converged(2, lifecycle=hook, extra_labels={"hold": "true"})
    h.patch_spec({"replicas": 1})
    _, writes = h.step()
    assert writes_of(writes, "delete") == []
    (held,) = [
        n
        for n, p in h.pods().items()
        if meta.labels(p)[lifecycle.LIFECYCLE_STATE_LABEL] == lifecycle.PREPARING_DELETE
    ]
    _, writes = h.step()
    assert writes_of(writes, "delete") == [] and held in h.pods()
    h.label_pod(held, {"hold": None})
    _, writes = h.step()
    assert writes_of(writes, "delete") == [held]
    h.settle()
    assert len(h.pods()) == 1 and held not in h.pods()


def test_pre_delete_pod_returns_to_normal_when_scaled_back_up():
    hook = {"preDelete": {"labelsHandler": {"hold": "true"}}}
    h = converged(2, lifecycle=hook, extra_labels={"hold": "true"})
    h.patch_spec({"replicas": 1})
    h.step()
    h.patch_spec({"replicas": 2})
    _, writes = h.step()
    assert writes_of(writes, "create") == []
    states = {meta.labels(p)[lifecycle.LIFECYCLE_STATE_LABEL] for p in h.pods().values()}
    assert lifecycle.PREPARING_NORMAL in states and len(h.pods()) == 2  # taken back (Kruise)
    h.settle()
    states = {meta.labels(p)[lifecycle.LIFECYCLE_STATE_LABEL] for p in h.pods().values()}
    assert states == {lifecycle.NORMAL}


def test_without_preparing_normal_new_pods_are_normal_at_once():
    h = Harness(make_cs(2))
    h.reconciler = CloneSetReconciler(h.api, h.reader, h.recorder, preparing_normal=False)
    h.unscheduled.update(["web-a", "web-b"])
    h.step()
    states = {meta.labels(p)[lifecycle.LIFECYCLE_STATE_LABEL] for p in h.pods().values()}
    assert states == {lifecycle.NORMAL} and len(h.pods()) == 2


def test_in_place_update_hook_holds_the_pod_in_preparing_update():
    hook = {"inPlaceUpdate": {"labelsHandler": {"hold-update": "true"}}}
    h = converged(
        2,
        lifecycle=hook,
        extra_labels={"hold-update": "true"},
        updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": 1},
    )
    h.set_image("nginx:2")
    h.step()
    states = {n: meta.labels(p)[lifecycle.LIFECYCLE_STATE_LABEL] for n, p in h.pods().items()}
    (held,) = [n for n, s in states.items() if s == lifecycle.PREPARING_UPDATE]
    assert {image(p) for p in h.pods().values()} == {"nginx:1"}
    _, writes = h.step()
    assert writes_of(writes, "patch") == []  # held, and maxUnavailable is used up
    h.label_pod(held, {"hold-update": None})
    h.step()
    pod = h.pods()[held]
    assert image(pod) == "nginx:2"
    assert meta.labels(pod)[lifecycle.LIFECYCLE_STATE_LABEL] == lifecycle.UPDATING


# --- status and invalid specs -----------------------------------------------------------------


def test_status_counts():
    h = converged(3, updateStrategy={**IN_PLACE_ALL, "partition": 1}, minReadySeconds=10)
    status = h.status()
    assert {k: status[k] for k in ("replicas", "readyReplicas", "availableReplicas")} == {
        "replicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
    }
    h.set_image("nginx:2")
    h.settle(not_ready={sorted(h.pods())[0]})
    status = h.status()
    updated = [p for p in h.pods().values() if image(p) == "nginx:2"]
    assert len(updated) == 2
    assert status["updatedReplicas"] == 2 and status["expectedUpdatedReplicas"] == 2
    assert status["readyReplicas"] == status["availableReplicas"] == 2
    assert status["currentRevision"] != status["updateRevision"]
    assert status["observedGeneration"] == h.cs()["metadata"]["generation"]


def test_status_written_only_when_changed():
    h = converged(2)
    _, writes = h.step()
    assert writes == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"updateStrategy": {"maxUnavailable": "lots"}}, "maxUnavailable"),
        ({"replicas": "many"}, "spec.replicas"),
        ({"updateStrategy": {"type": "Rolling"}}, "type"),
        ({"selector": {"matchLabels": {"app": "other"}}}, "template"),
    ],
)
def test_invalid_spec_is_reported_and_not_retried(spec, message):
    cs = make_cs(2)
    cs["spec"].update(spec)
    cs["status"] = {"replicas": 2}  # partial: the generated status model would reject it
    h = Harness(cs)
    result, writes = h.step()
    assert result is None  # no requeue, no error: the user must change the spec
    assert h.pods() == {}
    assert [(a.verb, a.subresource) for a in writes] == [("update", "status")]
    condition = h.conditions()["FailedScale"]
    assert condition["message"].startswith("invalid spec: ") and message in condition["message"]
    assert [(t, r) for t, r, _ in h.recorder.events] == [("Warning", "InvalidSpec")]
    status = h.status()
    assert status["replicas"] == 2 and status["readyReplicas"] == 0
    result, writes = h.step()
    assert result is None and writes == []  # the same report is not written again


def test_valid_spec_again_clears_the_condition():
    h = converged(2)
    h.patch_spec({"updateStrategy": {"maxUnavailable": "lots"}})
    h.step()
    assert "FailedScale" in h.conditions()
    h.patch_spec({"updateStrategy": {"maxUnavailable": 1}})
    h.settle()
    assert "FailedScale" not in h.conditions()


# --- expectations and the cache ---------------------------------------------------------------


def test_scale_expectations_prevent_a_double_create_while_the_cache_lags():
    h = Harness(make_cs(3, volumeClaimTemplates=VCT[:1]))
    h.reader.lag(Pod, PersistentVolumeClaim)
    h.step()
    assert len(h.pods()) == 3
    result, writes = h.step()  # the cache shows no pod yet
    assert writes == []
    assert isinstance(result, Result) and result.requeue_after and result.requeue_after > 0
    h.reader.catch_up()
    _, writes = h.step()
    assert writes_of(writes, "create") == [] and len(h.pods()) == 3


def test_delete_expectations_prevent_a_double_delete_while_the_cache_lags():
    h = converged(3)
    h.patch_spec({"replicas": 2})
    h.reader.lag(Pod)
    _, writes = h.step()
    assert len(writes_of(writes, "delete")) == 1
    result, writes = h.step()  # the deleted pod still shows
    assert writes == [] and isinstance(result, Result)
    h.reader.catch_up()
    h.settle()
    assert len(h.pods()) == 2


def test_a_sync_waits_for_its_status_write_to_show():
    h = Harness(make_cs(1))
    h.reader.lag(CLONESET)  # the cache keeps the set as it was before our status write
    _, writes = h.step()
    assert [(a.verb, a.subresource) for a in writes if a.kind == CLONESET] == [("update", "status")]
    result, writes = h.step()
    assert writes == [] and result == Result(requeue_after=1.0)
    h.reader.catch_up()
    result, writes = h.step()
    assert result is None


def test_in_place_update_waits_for_the_pod_to_show_its_new_revision():
    h = converged(1, updateStrategy={"type": "InPlaceIfPossible"})
    h.reader.lag(Pod)
    h.set_image("nginx:2")
    _, writes = h.step()
    assert writes_of(writes, "patch") != []
    result, writes = h.step()
    assert writes == [] and isinstance(result, Result)


def test_deleted_set_forgets_its_expectations():
    h = Harness(make_cs(2))
    h.reader.lag(Pod)
    h.step()
    assert h.reconciler.expectations.scale.get_expectations(f"{NS}/web")
    h.api.direct.delete(CLONESET, "web", NS)
    assert h.reconcile() is None
    assert h.reconciler.expectations.scale.get_expectations(f"{NS}/web") is None


def test_orphan_pod_is_adopted_and_counted():
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stray", "namespace": NS, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }
    h = Harness(make_cs(1), orphan)
    assert [r.name for r in h.reconciler.orphan_pod_requests(orphan)] == ["web"]
    _, writes = h.step()
    assert meta.controller_uid(h.pods()["stray"]) == "cs-uid"
    assert writes_of(writes, "create") == []  # the adopted pod is the one replica
    assert h.status()["replicas"] == 1


def test_revision_history_is_truncated():
    h = converged(1, updateStrategy={"type": "InPlaceIfPossible"}, revisionHistoryLimit=1)
    for tag in ("2", "3", "4"):
        h.set_image(f"nginx:{tag}")
        h.settle()
    revisions = [meta.name(r) for r in h.api.objects(ControllerRevision, NS)]
    assert len(revisions) == 2  # the live one and one more


# --- the algorithm on a recording pod control (no client at all) ------------------------------


class RecordingPodControl:
    """A :class:`~controllers.cloneset.pod_control.PodControl` that only records."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def record(self, cs: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        self.calls.append(("record", reason))

    def create_pod(self, cs: CloneSetView, pod: Mapping[str, Any], existing: Set[str]) -> None:
        self.calls.append(("create", meta.name(pod)))

    def delete_pod(
        self, cs: CloneSetView, pod: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]
    ) -> bool:
        self.calls.append(("delete", (meta.name(pod), [meta.name(c) for c in claims])))
        return True

    def update_pod_lifecycle(
        self,
        pod: Mapping[str, Any],
        state: str,
        *,
        mark_not_ready: bool = False,
        hook: Mapping[str, Any] | None = None,
    ) -> tuple[bool, Any]:
        self.calls.append(("lifecycle", (meta.name(pod), state)))
        return True, pod

    def ensure_readiness_condition(self, pod: Mapping[str, Any]) -> bool:
        return False

    def mark_specified_delete(self, cs: CloneSetView, pod: Mapping[str, Any], rev: str) -> None:
        self.calls.append(("mark", meta.name(pod)))

    def refresh_in_place(self, pod: Mapping[str, Any]) -> tuple[bool, float]:
        return False, 0.0

    def update_in_place(
        self, cs: CloneSetView, pod: Mapping[str, Any], spec: InPlaceSpec, grace: int
    ) -> float:
        self.calls.append(("in-place", (meta.name(pod), spec.container_images, grace)))
        return float(grace)

    def truncate_pods_to_delete(self, cs: CloneSetView, kept: list[str]) -> None:
        self.calls.append(("truncate", kept))

    def delete_revision(self, revision: Mapping[str, Any]) -> None:
        self.calls.append(("delete-revision", meta.name(revision)))


class RecordingStatus:
    def __init__(self) -> None:
        self.written: list[Mapping[str, Any]] = []

    def write(self, cs: Mapping[str, Any], status: Mapping[str, Any]) -> None:
        self.written.append(status)

    def update_if_changed(self, cs: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
        self.written.append(status)  # every computed status, changed or not
        return True


def rev(name: str, image: str) -> dict[str, Any]:
    template = {
        "$patch": "replace",
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }
    return {"metadata": {"name": name}, "revision": 1, "data": {"spec": {"template": template}}}


def pod(name: str, revision: str, ready: bool = True, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "creationTimestamp": T0,
            "labels": {
                "app": "web",
                POD_REVISION_LABEL: revision,
                INSTANCE_ID_LABEL: name.rsplit("-", 1)[-1],
                lifecycle.LIFECYCLE_STATE_LABEL: lifecycle.NORMAL,
                **labels,
            },
        },
        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "nginx:1"}]},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": T0}
            ],
        },
    }


def claim(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {INSTANCE_ID_LABEL: name.rsplit("-", 1)[-1]}}}


def control_sync(cs: dict[str, Any], pods: list[dict[str, Any]], claims=(), *, update=None):
    pod_control, status = RecordingPodControl(), RecordingStatus()
    control = CloneSetControl(pod_control, status)
    current = rev("web-1", "nginx:1")
    update = update or current
    result = control.sync(
        CloneSetView.of(cs), pods, list(claims), [current, update], current, update, 0
    )
    return result, pod_control.calls, status.written


def test_control_scale_down_deletes_the_not_ready_pod_with_its_claims():
    pods = [pod("web-a", "web-1"), pod("web-b", "web-1", ready=False), pod("web-c", "web-1")]
    claims = [claim("data-web-a"), claim("data-web-b"), claim("data-web-c")]
    result, calls, written = control_sync(make_cs(2), pods, claims)
    assert result is None
    assert calls == [("delete", ("web-b", ["data-web-b"]))]
    assert written[0]["replicas"] == 3 and written[0]["readyReplicas"] == 2


def test_control_in_place_update_with_a_grace_period_requeues():
    cs = make_cs(
        2,
        image="nginx:2",
        updateStrategy={
            "type": "InPlaceIfPossible",
            "maxUnavailable": 1,
            "inPlaceUpdateStrategy": {"gracePeriodSeconds": 5},
        },
    )
    pods = [pod("web-a", "web-1"), pod("web-b", "web-1")]
    result, calls, _ = control_sync(cs, pods, update=rev("web-2", "nginx:2"))
    assert calls == [("in-place", ("web-a", {"c": "nginx:2"}, 5))]
    assert result == Result(requeue_after=5.0)


def test_control_scale_up_takes_back_a_pod_preparing_delete():
    hooked = pod("web-b", "web-1", **{lifecycle.LIFECYCLE_STATE_LABEL: "PreparingDelete"})
    cs = make_cs(2, lifecycle={"preDelete": {"labelsHandler": {"hold": "true"}}})
    _, calls, _ = control_sync(cs, [pod("web-a", "web-1"), hooked])
    assert calls == [("lifecycle", ("web-b", lifecycle.PREPARING_NORMAL))]


def test_control_truncates_pods_to_delete_naming_no_pod():
    cs = make_cs(1, scaleStrategy={"podsToDelete": ["web-gone", "web-a"]})
    _, calls, _ = control_sync(cs, [pod("web-a", "web-1", **{SPECIFIED_DELETE_LABEL: "x"})])
    assert ("truncate", ["web-a"]) in calls


def test_control_deletes_only_the_oldest_unused_revisions_beyond_the_limit():
    revisions = [{**rev(f"web-{n}", f"nginx:{n}"), "revision": n} for n in range(1, 6)]
    current, update = revisions[3], revisions[4]  # web-4 and web-5
    pods = [pod("web-a", "web-4"), pod("web-b", "web-2")]  # web-2 is live through a pod
    pod_control, status = RecordingPodControl(), RecordingStatus()
    control = CloneSetControl(pod_control, status)
    control.sync(
        CloneSetView.of(make_cs(2, revisionHistoryLimit=1)),
        pods,
        [],
        revisions,
        current,
        update,
        0,
    )
    deleted = [name for call, name in pod_control.calls if call == "delete-revision"]
    assert deleted == ["web-1"]  # web-3 is the one kept; web-2, -4, -5 are live
