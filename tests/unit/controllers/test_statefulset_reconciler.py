"""The StatefulSet reconciler on the FakeClient: what one sync decides, from the set and the
pods its cache shows, and what it writes (the control's cases are in test_statefulset_control)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.statefulset.status import INVALID_SPEC
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime.client.errors import AlreadyExists
from kube_runtime.kinds import Pod, StatefulSet
from tests.support.statefulset_harness import NS, make_set, ready_status
from tests.support.statefulset_reconciler import Setup, image_of


def test_ordered_ready_scales_up_one_pod_at_a_time() -> None:
    s = Setup(make_set(3))
    assert s.reconcile() is None
    assert s.done("create") == ["web-0"]
    s.reconcile()  # web-0 is Pending: wait
    assert s.done("create") == ["web-0"]
    s.ready("web-0")
    s.reconcile()
    assert s.done("create") == ["web-0", "web-1"]
    s.converge()
    assert s.pods() == ["web-0", "web-1", "web-2"]
    assert s.sts["status"]["readyReplicas"] == 3


def test_parallel_creates_every_pod_in_one_sync() -> None:
    s = Setup(make_set(4, policy="Parallel"))
    s.reconcile()
    created = s.done("create")
    # slow-start batches 1, 2, 1; the creations of one batch run concurrently
    assert created[0] == "web-0" and sorted(created[1:3]) == ["web-1", "web-2"]
    assert created[3:] == ["web-3"]


def test_claims_are_created_per_ordinal_before_each_pod() -> None:
    template = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    s = Setup(make_set(2, policy="Parallel", templates=[template]))
    s.reconcile()
    assert [(k, n) for v, k, n in s.writes if v == "create" and k != "ControllerRevision"] == [
        ("PersistentVolumeClaim", "data-web-0"),
        ("Pod", "web-0"),
        ("PersistentVolumeClaim", "data-web-1"),
        ("Pod", "web-1"),
    ]
    volumes = s.get(Pod, "web-1")["spec"]["volumes"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}} in volumes


# --- updates -------------------------------------------------------------------------------


def test_rolling_update_starts_at_the_highest_ordinal() -> None:
    s = Setup(make_set(3))
    s.converge()
    s.set_image("nginx:2")
    s.reconcile()
    assert s.done("delete") == ["web-2"]
    s.reconcile()  # recreated at the update revision
    assert image_of(s.get(Pod, "web-2")) == "nginx:2"
    s.converge()
    assert s.done("delete") == ["web-2", "web-1", "web-0"]
    assert {image_of(p) for p in s.items(Pod)} == {"nginx:2"}
    status = s.sts["status"]
    assert status["currentRevision"] == status["updateRevision"]


def test_partition_keeps_the_lower_ordinals_at_the_old_revision() -> None:
    s = Setup(make_set(3, strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    s.converge()
    s.set_image("nginx:2")
    s.converge()
    assert s.done("delete") == ["web-2"]
    assert [image_of(s.get(Pod, f"web-{i}")) for i in range(3)] == ["nginx:1"] * 2 + ["nginx:2"]
    status = s.sts["status"]
    assert status["currentReplicas"] == 2 and status["updatedReplicas"] == 1

    def lower_partition(sts: dict[str, Any]) -> None:
        sts["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0

    s.edit_object(StatefulSet, "web", lower_partition)  # a new generation: the spec is read again
    s.converge()
    assert s.done("delete") == ["web-2", "web-1", "web-0"]


# --- ownership -----------------------------------------------------------------------------


def orphan(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


def test_matching_orphans_are_adopted_and_pods_that_stop_matching_released() -> None:
    s = Setup(make_set(1))
    s.seed(orphan("web-0", {"app": "web"}))
    s.seed(orphan("other-0", {"app": "other"}))
    s.reconcile()
    uid = s.sts["metadata"]["uid"]
    (ref,) = s.get(Pod, "web-0")["metadata"]["ownerReferences"]
    assert ref["uid"] == uid and ref["controller"] is True
    assert "ownerReferences" not in s.get(Pod, "other-0")["metadata"]
    assert s.done("patch") == ["web-0"] and s.done("create") == []

    s.edit_object(Pod, "web-0", lambda pod: pod["metadata"]["labels"].update(app="moved"))
    with pytest.raises(AlreadyExists):  # released, and its name is still taken
        s.reconcile()
    assert "ownerReferences" not in s.get(Pod, "web-0")["metadata"]
    assert s.done("patch") == ["web-0", "web-0"]


# --- stale caches --------------------------------------------------------------------------


def test_a_stale_cache_never_creates_twice() -> None:
    s = Setup(make_set(3, policy="Parallel"))
    s.reader.freeze()  # the cache will not show the pods created below
    s.reconcile()
    assert sorted(s.done("create")) == ["web-0", "web-1", "web-2"]
    result = s.reconcile()
    assert sorted(s.done("create")) == ["web-0", "web-1", "web-2"]
    assert result is not None and result.requeue_after  # comes back once the cache catches up
    s.reader.thaw()
    s.reconcile()
    assert sorted(s.done("create")) == ["web-0", "web-1", "web-2"]


def test_a_stale_cache_never_deletes_twice() -> None:
    s = Setup(make_set(2, policy="Parallel"))
    s.reconcile()
    s.edit_object(StatefulSet, "web", lambda sts: sts["spec"].update(replicas=0))
    s.graceful = True  # deleted pods linger with a deletionTimestamp
    s.reader.freeze()
    s.reconcile()
    assert sorted(s.done("delete")) == ["web-0", "web-1"]
    s.reconcile()
    assert sorted(s.done("delete")) == ["web-0", "web-1"]


# --- status and user errors ----------------------------------------------------------------


def test_status_is_written_once_and_not_again_when_unchanged() -> None:
    s = Setup(make_set(2))
    s.converge()
    status_writes = len(s.done("update_status", "StatefulSet"))
    for _ in range(3):
        s.reconcile()
    assert len(s.done("update_status", "StatefulSet")) == status_writes
    s.set_status(Pod, "web-1", ready_status(s.now, ready=False))
    s.reconcile()
    s.reconcile()
    assert len(s.done("update_status", "StatefulSet")) == status_writes + 1
    assert s.sts["status"]["readyReplicas"] == 1


def test_an_invalid_selector_is_reported_once_per_sync_without_retry() -> None:
    sts = make_set(1)
    sts["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    s = Setup(sts)
    assert s.reconcile() is None
    assert [e[1] for e in s.recorder.events] == ["InvalidSelector"]
    assert s.done("create") == []


def invalid_spec_condition(s: Setup) -> dict[str, Any] | None:
    conditions = s.sts.get("status", {}).get("conditions") or ()
    return next((c for c in conditions if c["type"] == INVALID_SPEC), None)


def test_an_invalid_spec_sets_a_condition_and_one_warning_without_retry() -> None:
    sts = make_set(2, reserveOrdinals=["4-2"])
    sts["apiVersion"] = ENHANCED_STATEFULSET.api_version
    s = Setup(sts)
    assert s.reconcile() is None
    condition = invalid_spec_condition(s)
    assert condition is not None and condition["status"] == "True"
    assert "spec.reserveOrdinals" in condition["message"]
    assert s.sts["status"]["observedGeneration"] == s.sts["metadata"]["generation"]
    assert [(t, r) for t, r, _ in s.recorder.events] == [("Warning", "InvalidSpec")]
    assert s.done("create") == []
    status_writes = len(s.done("update_status", "StatefulSet"))
    assert s.reconcile() is None  # reported already: nothing written, nothing recorded
    assert len(s.done("update_status", "StatefulSet")) == status_writes
    assert len(s.recorder.events) == 1

    s.edit_object(s.kind, "web", lambda sts: sts["spec"].update(reserveOrdinals=[1]))
    s.converge()
    assert s.pods() == ["web-0", "web-2"]
    condition = invalid_spec_condition(s)
    assert condition is not None and condition["status"] == "False"


def test_a_deleted_set_is_forgotten() -> None:
    s = Setup(make_set(1))
    s.fake.direct.delete(StatefulSet, "web", NS)
    assert s.reconcile() is None


def test_a_claim_wakes_the_set_whose_template_made_it_found_by_name() -> None:
    """``sets_of_claim``: ``<template>-<set>-<ordinal>`` read back by name lookups (dashes in
    both names), not by matching every set's selector (issue 19: that scan made CPU per pod
    grow with the number of sets)."""
    claim_template = {"metadata": {"name": "data-vol"}, "spec": {}}
    setup = Setup(make_set(1, name="my-web", templates=[claim_template]))
    setup.seed(make_set(1, name="other"))
    found = setup.reconciler.sets_of_claim(
        {"metadata": {"name": "data-vol-my-web-0", "namespace": NS, "labels": {"app": "x"}}}
    )
    assert [(r.namespace, r.name) for r in found] == [(NS, "my-web")]
    for name in ("data-vol-other-0", "data-vol-my-web", "cache-my-web-0", "unrelated"):
        claim = {"metadata": {"name": name, "namespace": NS, "labels": {"app": "my-web"}}}
        assert setup.reconciler.sets_of_claim(claim) == [], name


# --- per-generation facts (issue 31 item 9) -----------------------------------------------------

_SELECTOR_READERS = (
    "controllers.statefulset.controller",
    "controllers.statefulset.control",
    "controllers.statefulset.strategy",
    "kube_runtime.workloads.revision",
    "kube_runtime.claiming",
)
"""The modules a sync goes through that could parse the set's ``spec.selector`` mapping."""


@pytest.mark.parametrize("api_version", ["apps/v1", ENHANCED_STATEFULSET.api_version])
def test_the_selector_is_parsed_and_printed_once_per_set_generation(
    api_version: str, mocker: Any
) -> None:
    """The reconciler parses ``spec.selector`` and prints it (the revisions' query, the enhanced
    kind's ``status.labelSelector``) once per generation, not on every sync."""
    import importlib

    from kube_runtime.selectors import LabelSelector

    sts = make_set(2)
    sts["apiVersion"] = api_version
    s = Setup(sts)
    s.converge()
    parses = [
        mocker.spy(module, "label_selector_from_dict")
        for module in map(importlib.import_module, _SELECTOR_READERS)
        if hasattr(module, "label_selector_from_dict")
    ]
    prints = mocker.spy(LabelSelector, "__str__")

    def counted() -> tuple[int, int]:
        return sum(spy.call_count for spy in parses), prints.call_count

    for _ in range(3):
        s.reconcile()
    assert counted() == (0, 0)
    s.set_image("nginx:2")  # a new generation: parsed and printed once more
    for _ in range(3):
        s.reconcile()
    assert counted() == (1, 1)
    if api_version != "apps/v1":
        assert s.sts["status"]["labelSelector"] == "app=web"


def test_claim_events_that_wake_an_apps_v1_set() -> None:
    """The kubelet's binding and status writes of a claim wake no apps/v1 set (nothing it
    decides reads them); creations, deletions, owner and deletion changes do."""
    from controllers.statefulset.controller import _ClaimOwnershipChanged

    predicate = _ClaimOwnershipChanged()
    claim: dict[str, Any] = {
        "metadata": {"name": "data-web-0", "namespace": NS, "resourceVersion": "1"},
        "spec": {"accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Pending"},
    }
    bound = {
        "metadata": {
            **claim["metadata"],
            "resourceVersion": "2",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {**claim["spec"], "volumeName": "pv-1"},
        "status": {"phase": "Bound"},
    }
    assert predicate.create(claim) and predicate.delete(claim)
    assert not predicate.update(claim, bound)
    owned = {**bound, "metadata": {**bound["metadata"], "ownerReferences": [{"uid": "u"}]}}
    assert predicate.update(bound, owned)
    deleting = {
        **bound,
        "metadata": {**bound["metadata"], "deletionTimestamp": "2024-01-01T00:00:00Z"},
    }
    assert predicate.update(bound, deleting)


def test_pod_events_that_wake_an_apps_v1_set() -> None:
    """Binding and status writes that change neither the phase nor readiness wake no
    apps/v1 set; readiness, phase, labels, owners and deletion do."""
    from controllers.statefulset.controller import _PodStateChanged

    predicate = _PodStateChanged()
    pod: dict[str, Any] = {
        "metadata": {"name": "web-0", "namespace": NS, "uid": "u", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending"},
    }

    def changed(**parts: Any) -> dict[str, Any]:
        new = {key: dict(value) for key, value in pod.items()}
        for key, value in parts.items():
            new[key].update(value)
        return new

    scheduled = changed(
        spec={"nodeName": "node-1"},
        status={"conditions": [{"type": "PodScheduled", "status": "True"}]},
    )
    starting = changed(
        spec={"nodeName": "node-1"},
        status={
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [{"name": "c", "ready": False}],
        },
    )
    ready = changed(
        status={
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t1"}],
        }
    )
    assert predicate.create(pod) and predicate.delete(pod)
    assert not predicate.update(pod, scheduled)
    assert not predicate.update(scheduled, starting)
    assert predicate.update(starting, ready)
    again = changed(
        status={
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t2"}],
        }
    )
    assert predicate.update(ready, again)  # ready since another time (minReadySeconds)
    assert predicate.update(pod, changed(metadata={"labels": {"app": "other"}}))
    assert predicate.update(pod, changed(metadata={"deletionTimestamp": "t"}))
    assert predicate.update(pod, changed(metadata={"ownerReferences": []}))
    assert predicate.update(pod, changed(spec={"volumes": [{"name": "data"}]}))
    assert predicate.update(pod, changed(status={"phase": "Failed"}))
