"""Lifecycle hooks of the Advanced StatefulSet (Kruise ``stateful_set_control.go``:
``deletePod``, ``refreshPodState``, ``inPlaceUpdatePod`` and the state set at creation), on the
FakeClient: the ``lifecycle.apps.kruise.io/state`` label through ``PreparingNormal``,
``PreparingUpdate`` / ``Updating`` / ``Updated`` and ``PreparingDelete``; and that apps/v1
sets are left alone."""

from __future__ import annotations

import json

from kube_runtime.kinds import Pod
from kube_runtime.workloads.lifecycle import LIFECYCLE_STATE_LABEL, LIFECYCLE_TIMESTAMP_ANNOTATION
from kube_runtime.workloads.podreadiness import KRUISE_POD_READY
from kube_runtime.workloads.revision import POD_REVISION_LABEL
from tests.support.enhanced_statefulset_harness import (
    EnhancedHarness,
    enhanced,
    set_image,
)
from tests.support.statefulset_harness import Harness, make_set


def state(h, ordinal):
    return h.pod(ordinal)["metadata"]["labels"].get(LIFECYCLE_STATE_LABEL)


def hooked_set(replicas=3, *, rolling=None, hook_label="hook", policy="OrderedReady", **lifecycle):
    """An enhanced set whose template carries ``hook_label: "true"``."""
    sts = enhanced(replicas, rolling, policy=policy, lifecycle=lifecycle)
    sts["spec"]["template"]["metadata"]["labels"][hook_label] = "true"
    return sts


def set_label(key, value):
    def change(pod):
        labels = pod["metadata"]["labels"]
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value

    return change


def test_new_pods_are_created_normal_with_a_timestamp():
    h = EnhancedHarness(enhanced(2, policy="Parallel"))
    h.sync()
    for ordinal in (0, 1):
        pod = h.pod(ordinal)
        assert pod["metadata"]["labels"][LIFECYCLE_STATE_LABEL] == "Normal"
        assert pod["metadata"]["annotations"][LIFECYCLE_TIMESTAMP_ANNOTATION].endswith("Z")


def test_pre_normal_holds_a_new_pod_until_its_hook_is_all_there():
    h = EnhancedHarness(enhanced(2, lifecycle={"preNormal": {"labelsHandler": {"lb": "on"}}}))
    h.sync()
    assert state(h, 0) == "PreparingNormal"
    h.set_ready(0)
    h.sync()
    assert state(h, 0) == "PreparingNormal"
    assert h.pod_names() == ["web-0"]  # OrderedReady: not available, so no web-1
    status = h.sts["status"]
    assert (status["readyReplicas"], status["availableReplicas"]) == (1, 0)
    h.edit_pod(0, set_label("lb", "on"))
    h.sync()
    assert state(h, 0) == "Normal"
    h.sync()
    assert h.pod_names() == ["web-0", "web-1"]
    assert state(h, 1) == "PreparingNormal"
    assert h.sts["status"]["availableReplicas"] == 1


def test_pre_normal_hook_on_the_template_is_normal_at_once():
    sts = enhanced(1, lifecycle={"preNormal": {"labelsHandler": {"lb": "on"}}})
    sts["spec"]["template"]["metadata"]["labels"]["lb"] = "on"
    h = EnhancedHarness(sts)
    h.sync()
    assert state(h, 0) == "Normal"


def test_pre_delete_holds_a_scaled_in_pod_until_released():
    h = EnhancedHarness(hooked_set(3, preDelete={"labelsHandler": {"hook": "true"}}))
    h.converge()
    h.edit(lambda s: s["spec"].update(replicas=2))
    h.sync()
    assert state(h, 2) == "PreparingDelete"
    assert h.pod_writes("delete") == []
    h.sync()
    h.sync()
    assert h.pod_names() == ["web-0", "web-1", "web-2"]
    assert h.sts["status"]["availableReplicas"] == 2
    h.edit_pod(2, set_label("hook", None))
    h.sync()
    assert h.pod_writes("delete") == ["web-2"]
    assert h.pod_names() == ["web-0", "web-1"]


def test_pre_delete_finalizer_hook_holds_a_recreated_pod():
    """Parallel: under OrderedReady a replica held in ``PreparingDelete`` is not available and
    stops every pass before the rolling update (Kruise ``processReplica``), as in Kruise."""
    sts = enhanced(
        2,
        policy="Parallel",
        lifecycle={"preDelete": {"finalizersHandler": ["example.com/drain"]}},
    )
    sts["spec"]["template"]["metadata"]["finalizers"] = ["example.com/drain"]
    h = EnhancedHarness(sts)
    h.converge()
    old = h.pod(1)["metadata"]["labels"][POD_REVISION_LABEL]
    h.edit(set_image("nginx:2"))  # ReCreate
    h.sync()
    assert state(h, 1) == "PreparingDelete"
    assert h.pod_writes("delete") == []
    assert h.sts["status"]["currentReplicas"] == 2  # not counted as deleting
    h.sync()
    assert state(h, 0) == "Normal"  # maxUnavailable 1: the held pod uses it

    def release(pod):
        pod["metadata"]["finalizers"] = []

    h.edit_pod(1, release)
    h.sync()
    assert h.pod_writes("delete") == ["web-1"]
    h.converge()
    assert h.pod(1)["metadata"]["labels"][POD_REVISION_LABEL] != old


def test_pre_delete_without_the_hook_on_the_pod_deletes_at_once():
    h = EnhancedHarness(enhanced(2, lifecycle={"preDelete": {"labelsHandler": {"hook": "true"}}}))
    h.converge()
    h.edit(lambda s: s["spec"].update(replicas=1))
    h.sync()
    assert h.pod_writes("delete") == ["web-1"]


def test_specified_delete_goes_through_pre_delete():
    h = EnhancedHarness(hooked_set(2, preDelete={"labelsHandler": {"hook": "true"}}))
    h.converge()
    h.edit_pod(0, set_label("apps.kruise.io/specified-delete", "true"))
    h.sync()
    assert state(h, 0) == "PreparingDelete"
    assert h.pod_writes("delete") == []


def test_in_place_update_hook_as_kruise_lifecycle_hook_test():
    """Kruise ``TestStatefulSetControlLifecycleHook``: Parallel, 3 replicas, partition 2,
    InPlaceIfPossible, inPlaceUpdate hook ``unready-block: "true"`` on the template."""
    sts = hooked_set(
        3,
        rolling={"partition": 2, "podUpdatePolicy": "InPlaceIfPossible"},
        hook_label="unready-block",
        inPlaceUpdate={"labelsHandler": {"unready-block": "true"}},
    )
    sts["spec"]["podManagementPolicy"] = "Parallel"
    h = EnhancedHarness(sts)
    h.converge()
    old = h.pod(2)["metadata"]["labels"][POD_REVISION_LABEL]
    h.edit(set_image("foo"))
    h.sync()
    assert state(h, 2) == "PreparingUpdate"
    assert h.pod(2)["spec"]["containers"][0]["image"] == "nginx:1"
    h.sync()
    assert state(h, 2) == "PreparingUpdate"  # still hooked
    h.edit_pod(2, set_label("unready-block", "false"))
    h.sync()
    pod = h.pod(2)
    assert pod["spec"]["containers"][0]["image"] == "foo"
    assert pod["metadata"]["labels"][POD_REVISION_LABEL] != old
    assert state(h, 2) == "Updating"
    gate = next(c for c in pod["status"]["conditions"] if c["type"] == "InPlaceUpdateReady")
    assert gate["status"] == "False"
    h.set_ready(2)  # the kubelet reports the new image
    h.sync()
    assert state(h, 2) == "Updated"
    h.edit_pod(2, set_label("unready-block", "true"))
    h.sync()
    assert state(h, 2) == "Normal"
    h.sync()
    assert state(h, 1) == "Normal"  # partition 2: pod 1 is not prepared


def test_in_place_update_without_lifecycle_is_updating_then_normal():
    """Kruise ``TestStatefulSetControlInPlaceUpdate``: Updating during the update, Normal
    after (no ``lifecycle``: no Updated step)."""
    h = EnhancedHarness(enhanced(1, {"podUpdatePolicy": "InPlaceIfPossible"}))
    h.converge()
    h.edit(set_image("nginx:2"))
    h.sync()
    assert state(h, 0) == "Updating"
    h.set_ready(0)
    h.sync()
    assert state(h, 0) == "Normal"


def test_in_place_update_with_other_hooks_passes_through_updated():
    """Any ``lifecycle`` and no inPlaceUpdate hook: ``Updating`` -> ``Updated`` -> ``Normal``
    (Kruise tests ``set.Spec.Lifecycle != nil`` first)."""
    h = EnhancedHarness(
        enhanced(
            1,
            {"podUpdatePolicy": "InPlaceIfPossible"},
            lifecycle={"preDelete": {"labelsHandler": {"hook": "true"}}},
        )
    )
    h.converge()
    h.edit(set_image("nginx:2"))
    h.sync()
    h.set_ready(0)
    h.sync()
    assert state(h, 0) == "Updated"
    h.sync()
    assert state(h, 0) == "Normal"


def test_updated_pod_is_prepared_again_with_its_hook_put_back():
    """An ``Updated`` pod (its hook released) that a new revision reaches goes back to
    ``PreparingUpdate`` with the hook's label and finalizer restored
    (``UpdatePodLifecycleWithHandler``)."""
    hook = {"labelsHandler": {"hook": "true"}, "finalizersHandler": ["example.com/lb"]}
    sts = hooked_set(1, rolling={"podUpdatePolicy": "InPlaceIfPossible"}, inPlaceUpdate=hook)
    sts["spec"]["template"]["metadata"]["finalizers"] = ["example.com/lb"]
    sts["spec"]["podManagementPolicy"] = "Parallel"
    h = EnhancedHarness(sts)
    h.converge()
    h.edit(set_image("nginx:2"))
    h.sync()
    assert state(h, 0) == "PreparingUpdate"

    def release(pod):
        pod["metadata"]["labels"]["hook"] = "false"
        pod["metadata"]["finalizers"] = []

    h.edit_pod(0, release)
    h.sync()
    h.set_ready(0)
    h.sync()
    assert state(h, 0) == "Updated"
    h.edit(set_image("nginx:3"))
    h.sync()
    pod = h.pod(0)
    assert state(h, 0) == "PreparingUpdate"
    assert pod["metadata"]["labels"]["hook"] == "true"
    assert pod["metadata"]["finalizers"] == ["example.com/lb"]
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"


def test_preparing_update_rolled_back_returns_to_normal():
    """Kruise issue 1156: a pod waiting in ``PreparingUpdate`` whose set is rolled back to the
    pod's revision is not updated; its state moves on (hook all there: ``Normal``)."""
    h = EnhancedHarness(
        hooked_set(
            1,
            rolling={"podUpdatePolicy": "InPlaceIfPossible"},
            inPlaceUpdate={"labelsHandler": {"hook": "true"}},
        )
    )
    h.converge()
    h.edit(set_image("nginx:2"))
    h.sync()
    assert state(h, 0) == "PreparingUpdate"
    h.edit(set_image("nginx:1"))
    h.sync()
    assert state(h, 0) == "Normal"
    assert h.pod(0)["spec"]["containers"][0]["image"] == "nginx:1"


def test_apps_v1_pods_get_no_state_and_ignore_one():
    h = Harness(make_set(1))
    h.converge()
    assert LIFECYCLE_STATE_LABEL not in h.pod(0)["metadata"]["labels"]
    h.edit_pod(0, set_label(LIFECYCLE_STATE_LABEL, "PreparingNormal"))
    h.sync()
    assert h.sts["status"]["availableReplicas"] == 1


def test_ordered_ready_stops_at_a_held_replica_as_kruise():
    """OrderedReady: a replica in ``PreparingUpdate`` is not available, so every pass stops at
    it before the rolling update (Kruise ``processReplica``), even once its hook is released:
    the hooks serve Parallel sets."""
    h = EnhancedHarness(
        hooked_set(
            1,
            rolling={"podUpdatePolicy": "InPlaceIfPossible"},
            inPlaceUpdate={"labelsHandler": {"hook": "true"}},
        )
    )
    h.converge()
    h.edit(set_image("nginx:2"))
    h.sync()
    assert state(h, 0) == "PreparingUpdate"
    h.edit_pod(0, set_label("hook", "false"))
    h.sync()
    h.sync()
    assert state(h, 0) == "PreparingUpdate"
    assert h.pod(0)["spec"]["containers"][0]["image"] == "nginx:1"


def _condition(h, ordinal, kind):
    conditions = h.pod(ordinal).get("status", {}).get("conditions") or ()
    return next((c for c in conditions if c["type"] == kind), None)


def _running_ready(h, ordinal):
    """The kubelet's view: Running, ContainersReady and Ready True (keeping other conditions)."""
    pod = h.pod(ordinal)
    status = dict(pod.get("status") or {})
    kept = [
        c for c in status.get("conditions") or () if c["type"] not in ("Ready", "ContainersReady")
    ]
    stamp = "2024-05-01T09:00:00Z"
    kept += [
        {"type": "ContainersReady", "status": "True", "lastTransitionTime": stamp},
        {"type": "Ready", "status": "True", "lastTransitionTime": stamp},
    ]
    status.update(phase="Running", conditions=kept)
    status["containerStatuses"] = [
        {"name": "c", "imageID": "id-" + pod["spec"]["containers"][0]["image"]}
    ]
    h.set_status(Pod, f"web-{ordinal}", status)


def test_mark_pod_not_ready_on_pre_delete():
    """Kruise ``executePodNotReadyPolicy``: with ``preDelete.markPodNotReady`` new pods carry
    the ``KruisePodReady`` gate (Kruise's pod webhook) and get its condition True (its
    pod-readiness controller); ``PreparingDelete`` sets it False with the Lifecycle
    ``preDeleteHook`` message, and Ready False as the gates say."""
    h = EnhancedHarness(
        hooked_set(2, preDelete={"labelsHandler": {"hook": "true"}, "markPodNotReady": True})
    )
    h.converge()
    assert {"conditionType": KRUISE_POD_READY} in h.pod(1)["spec"]["readinessGates"]
    _running_ready(h, 1)
    h.sync()
    assert _condition(h, 1, KRUISE_POD_READY)["status"] == "True"
    h.edit(lambda s: s["spec"].update(replicas=1))
    h.sync()
    assert state(h, 1) == "PreparingDelete"
    gate = _condition(h, 1, KRUISE_POD_READY)
    assert gate["status"] == "False"
    assert json.loads(gate["message"]) == [{"userAgent": "Lifecycle", "key": "preDeleteHook"}]
    ready = _condition(h, 1, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ReadinessGatesNotReady")
    assert h.pod_writes("delete") == []


def test_mark_pod_not_ready_on_in_place_update_released_at_updated():
    h = EnhancedHarness(
        hooked_set(
            1,
            rolling={"podUpdatePolicy": "InPlaceIfPossible"},
            inPlaceUpdate={"labelsHandler": {"hook": "true"}, "markPodNotReady": True},
            policy="Parallel",
        )
    )
    h.converge()
    _running_ready(h, 0)
    h.sync()
    h.edit(set_image("nginx:2"))
    h.sync()
    assert state(h, 0) == "PreparingUpdate"
    gate = _condition(h, 0, KRUISE_POD_READY)
    assert gate["status"] == "False"
    assert json.loads(gate["message"]) == [{"userAgent": "Lifecycle", "key": "preUpdateHook"}]
    h.edit_pod(0, set_label("hook", "false"))
    h.sync()
    _running_ready(h, 0)  # the kubelet reports the new image
    h.sync()
    assert state(h, 0) == "Updated"
    gate = _condition(h, 0, KRUISE_POD_READY)
    assert (gate["status"], json.loads(gate["message"])) == ("True", [])


def test_without_mark_pod_not_ready_no_gate():
    h = EnhancedHarness(hooked_set(1, preDelete={"labelsHandler": {"hook": "true"}}))
    h.sync()
    gates = [g["conditionType"] for g in h.pod(0)["spec"]["readinessGates"]]
    assert KRUISE_POD_READY not in gates
