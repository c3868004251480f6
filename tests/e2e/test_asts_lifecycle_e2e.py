"""Lifecycle hooks (``markPodNotReady`` included) and ``scaleStrategy.maxUnavailable`` of the
Advanced StatefulSet (``apps.kube-runtime.io/v1beta1``), against the bundled controller on the
embedded cluster and on kube-apiserver 1.20. Kruise's suite has the ``scaleStrategy`` scenario
("Should can update pods when the statefulset scale strategy is set": 3 ready pods scaled to
10 with maxUnavailable 2 stop at 5 while the new ones are not ready); the hook scenarios
follow Kruise's ``stateful_set_control.go`` (its suite tests them on the CloneSet only).

On the embedded backend every test runs on simulated time (``docs/simtime.md``), on a cluster
of its own; on kube-apiserver in real time."""

from __future__ import annotations

import json
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime import kinds
from kube_runtime.envtest.kubelet.simulator import ANNOTATION_NEVER_READY
from kube_runtime.workloads.lifecycle import LIFECYCLE_STATE_LABEL
from kube_runtime.workloads.podreadiness import KRUISE_POD_READY, get_condition
from kube_runtime.workloads.pods import is_ready
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    simulated_client,
    simulated_namespace,
)
from tests.e2e.test_enhanced_statefulset_e2e import (  # noqa: F401 (fixtures)
    TIMEOUT,
    converged,
    crd,
    get_set,
    live_pods,
    make_asts,
    manager,
    names,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

HOOK = "lifecycle-hook"


def _state(client, namespace, name: str) -> str | None:
    pod = live_pods(client, namespace).get(name)
    return None if pod is None else pod["metadata"]["labels"].get(LIFECYCLE_STATE_LABEL)


def _label_pod(client, namespace, name: str, key: str, value: str | None) -> None:
    client.patch(kinds.Pod, name, {"metadata": {"labels": {key: value}}}, namespace=namespace)


def _hooked(namespace: str, replicas: int, policy: str, **lifecycle: Any) -> dict:
    sts = make_asts(
        namespace,
        replicas,
        {"podUpdatePolicy": "InPlaceIfPossible"},
        policy=policy,
        lifecycle=lifecycle,
    )
    template = sts["spec"]["template"]
    template["metadata"]["labels"][HOOK] = "true"
    template["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    return sts


@pytest.mark.usefixtures("manager")
def test_pre_delete_holds_a_scaled_in_pod_until_released(client, namespace, wait_for):
    """Kruise ``deletePod``: 3 replicas whose pods carry the preDelete hook's label; scaled
    to 2, web-2 goes to ``PreparingDelete`` and stays; without the label it is deleted."""
    client.create(
        _hooked(namespace, 3, "OrderedReady", preDelete={"labelsHandler": {HOOK: "true"}})
    )
    wait_for(converged(client, namespace, names(3)), TIMEOUT)
    assert {_state(client, namespace, n) for n in names(3)} == {"Normal"}
    client.patch(ENHANCED_STATEFULSET, "web", {"spec": {"replicas": 2}}, namespace=namespace)
    wait_for(lambda: _state(client, namespace, "web-2") == "PreparingDelete", TIMEOUT)

    def settled() -> dict | None:
        sts = get_set(client, namespace)
        status = sts.get("status") or {}
        ok = status.get("observedGeneration") == sts["metadata"]["generation"]
        return status if ok and status.get("availableReplicas") == 2 else None

    status = wait_for(settled, TIMEOUT)
    assert status["replicas"] == 3  # the held pod is still there
    assert set(live_pods(client, namespace)) == names(3)
    _label_pod(client, namespace, "web-2", HOOK, None)
    wait_for(lambda: set(live_pods(client, namespace)) == names(2), TIMEOUT)


@pytest.mark.usefixtures("manager")
def test_in_place_update_hook_states(client, namespace, wait_for):
    """Kruise ``inPlaceUpdatePod`` / ``refreshPodState`` (its unit test
    ``TestStatefulSetControlLifecycleHook``): Parallel, an inPlaceUpdate hook label on the
    pods; a new image moves the pod to ``PreparingUpdate`` and nothing is patched; released,
    it is updated in place (``Updating``), then ``Updated``; the label back: ``Normal``."""
    client.create(
        _hooked(namespace, 1, "Parallel", inPlaceUpdate={"labelsHandler": {HOOK: "true"}})
    )
    wait_for(converged(client, namespace, names(1)), TIMEOUT)
    uid = live_pods(client, namespace)["web-0"]["metadata"]["uid"]
    image = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
    client.patch(ENHANCED_STATEFULSET, "web", image, namespace=namespace)
    wait_for(lambda: _state(client, namespace, "web-0") == "PreparingUpdate", TIMEOUT)
    assert live_pods(client, namespace)["web-0"]["spec"]["containers"][0]["image"] == "nginx:1"
    _label_pod(client, namespace, "web-0", HOOK, "false")

    def updated() -> dict | None:
        pod = live_pods(client, namespace).get("web-0")
        done = pod is not None and pod["metadata"]["labels"].get(LIFECYCLE_STATE_LABEL) == "Updated"
        return pod if done else None

    pod = wait_for(updated, TIMEOUT)
    assert pod["metadata"]["uid"] == uid
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 1
    _label_pod(client, namespace, "web-0", HOOK, "true")
    wait_for(lambda: _state(client, namespace, "web-0") == "Normal", TIMEOUT)
    wait_for(converged(client, namespace, names(1)), TIMEOUT)


@pytest.mark.usefixtures("manager")
def test_pre_normal_holds_a_ready_pod(client, namespace, wait_for):
    """Kruise ``processReplica`` / ``refreshPodState``: with a preNormal hook the pod is
    created ``PreparingNormal`` and stays so (not available) although ready; once it carries
    the hook's label it becomes ``Normal`` and available."""
    sts = make_asts(namespace, 1, lifecycle={"preNormal": {"labelsHandler": {"lb": "on"}}})
    client.create(sts)

    def ready() -> dict | None:
        pod = live_pods(client, namespace).get("web-0")
        return pod if pod is not None and is_ready(pod) else None

    pod = wait_for(ready, TIMEOUT)
    assert pod["metadata"]["labels"][LIFECYCLE_STATE_LABEL] == "PreparingNormal"

    def counted() -> dict | None:
        status = get_set(client, namespace).get("status") or {}
        return status if status.get("readyReplicas") == 1 else None

    assert wait_for(counted, TIMEOUT).get("availableReplicas", 0) == 0
    _label_pod(client, namespace, "web-0", "lb", "on")
    wait_for(lambda: _state(client, namespace, "web-0") == "Normal", TIMEOUT)

    def available() -> dict | None:
        status = get_set(client, namespace).get("status") or {}
        return status if status.get("availableReplicas") == 1 else None

    wait_for(available, TIMEOUT)


@pytest.mark.usefixtures("manager")
def test_scale_strategy_max_unavailable_two_at_a_time(client, namespace, wait_for):
    """Kruise's "Should can update pods when the statefulset scale strategy is set": Parallel,
    3 ready replicas scaled to 10 with ``scaleStrategy.maxUnavailable: 2`` stop at 5 while
    the 2 new ones are not ready. The simulated kubelet holds new pods not ready (the
    template's ``never-ready`` annotation); releasing them lets 2 more come each time:
    3 -> 5 -> 7 -> 9 -> 10."""
    sts = make_asts(namespace, 3, policy="Parallel")
    sts["spec"]["template"]["metadata"]["annotations"] = {ANNOTATION_NEVER_READY: "true"}
    client.create(sts)

    def release(expected: set[str]) -> None:
        def running() -> dict | None:
            pods = live_pods(client, namespace)
            ok = set(pods) == expected and all(
                p.get("status", {}).get("phase") == "Running" for p in pods.values()
            )
            return pods if ok else None

        for name, pod in wait_for(running, TIMEOUT).items():
            if pod["metadata"].get("annotations", {}).get(ANNOTATION_NEVER_READY) == "true":
                patch = {"metadata": {"annotations": {ANNOTATION_NEVER_READY: None}}}
                client.patch(kinds.Pod, name, patch, namespace=namespace)

    release(names(3))
    wait_for(converged(client, namespace, names(3)), TIMEOUT)
    scale = {"spec": {"replicas": 10, "scaleStrategy": {"maxUnavailable": 2}}}
    client.patch(ENHANCED_STATEFULSET, "web", scale, namespace=namespace)
    for count in (5, 7, 9, 10):

        def settled(count: int = count) -> dict | None:
            sts = get_set(client, namespace)
            status = sts.get("status") or {}
            ok = status.get("observedGeneration") == sts["metadata"]["generation"]
            ok = ok and status.get("replicas") == count
            return status if ok else None

        wait_for(settled, TIMEOUT)
        pods = live_pods(client, namespace)
        assert set(pods) == names(count)  # no more than 2 not ready at once
        assert sum(not is_ready(p) for p in pods.values()) <= 2
        release(names(count))
    wait_for(converged(client, namespace, names(10)), TIMEOUT)


@pytest.mark.usefixtures("manager")
def test_mark_pod_not_ready_while_held_for_pre_delete(client, namespace, wait_for):
    """Kruise ``executePodNotReadyPolicy``: with ``preDelete.markPodNotReady`` the pods carry
    the ``KruisePodReady`` gate (True once created); held in ``PreparingDelete`` the pod's gate
    goes False and the kubelet reports it not ready; released, it is deleted."""
    hook = {"labelsHandler": {HOOK: "true"}, "markPodNotReady": True}
    client.create(_hooked(namespace, 2, "OrderedReady", preDelete=hook))
    wait_for(converged(client, namespace, names(2)), TIMEOUT)
    pod = live_pods(client, namespace)["web-1"]
    assert {"conditionType": KRUISE_POD_READY} in pod["spec"]["readinessGates"]
    client.patch(ENHANCED_STATEFULSET, "web", {"spec": {"replicas": 1}}, namespace=namespace)

    def held() -> dict | None:
        pod = live_pods(client, namespace).get("web-1")
        if pod is None or pod["metadata"]["labels"].get(LIFECYCLE_STATE_LABEL) != "PreparingDelete":
            return None
        gate = get_condition(pod)
        return pod if gate is not None and gate["status"] == "False" and not is_ready(pod) else None

    pod = wait_for(held, TIMEOUT)
    assert json.loads(get_condition(pod)["message"]) == [
        {"userAgent": "Lifecycle", "key": "preDeleteHook"}
    ]
    _label_pod(client, namespace, "web-1", HOOK, None)
    wait_for(lambda: set(live_pods(client, namespace)) == names(1), TIMEOUT)
