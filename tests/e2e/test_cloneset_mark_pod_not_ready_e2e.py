"""CloneSet ``lifecycle.*.markPodNotReady`` (Kruise's ``executePodNotReadyPolicy`` through the
``KruisePodReady`` readiness gate) against the bundled controller, on the embedded cluster and
on kube-apiserver 1.20 (the simulated kubelet computes ``Ready`` from the readiness gates).
Kruise's e2e suite has no markPodNotReady scenario; these follow its controller
(``cloneset_scale.go`` ``deletePods``, ``cloneset_update.go`` ``updatePod`` /
``refreshPodState``): a pod held for preDelete or inPlaceUpdate is not ready and not counted
ready, and ready again once its in-place update has run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.workloads.lifecycle import LIFECYCLE_STATE_LABEL
from kube_runtime.workloads.podreadiness import KRUISE_POD_READY, get_condition
from kube_runtime.workloads.pods import is_ready
from tests.e2e.test_cloneset_e2e import make_cs, pods
from tests.e2e.test_cloneset_kruise_e2e import (  # noqa: F401 (fixtures)
    TIMEOUT,
    crd,
    manager,
    patch_spec,
    set_image,
    status,
    wait_status,
)

HOOK = "lifecycle-hook"


def _hooked(namespace: str, replicas: int, **lifecycle: Any) -> dict[str, Any]:
    cs = make_cs(
        namespace,
        replicas,
        lifecycle=lifecycle,
        updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": 1},
    )
    cs["spec"]["template"]["metadata"]["labels"][HOOK] = "true"
    return cs


def _label_pod(client, namespace, name: str, value: str | None) -> None:
    client.patch(kinds.Pod, name, {"metadata": {"labels": {HOOK: value}}}, namespace=namespace)


def _in_state(client, namespace, state: str, ready: bool):
    """A check for the one pod in lifecycle ``state`` whose ``KruisePodReady`` condition and
    ``Ready`` both say ``ready``."""

    def check() -> dict[str, Any] | None:
        for pod in pods(client, namespace).values():
            if pod["metadata"]["labels"].get(LIFECYCLE_STATE_LABEL) != state:
                continue
            gate = get_condition(pod)
            want = "True" if ready else "False"
            if gate is not None and gate["status"] == want and is_ready(pod) == ready:
                return pod
        return None

    return check


def _messages(pod: dict[str, Any]) -> list[dict[str, str]]:
    condition = get_condition(pod)
    assert condition is not None
    return json.loads(condition.get("message") or "[]")


@pytest.mark.usefixtures("manager")
def test_pre_delete_mark_pod_not_ready(client, namespace, wait_for):
    """2 replicas with a marking preDelete hook (their pods carry the gate, True); scaled to
    1, the held pod goes not ready (``preDeleteHook``) and the set counts one ready replica;
    scaled back to 2 it stays held (Kruise allows no regret with markPodNotReady); released, it
    is deleted and replaced."""
    hook = {"labelsHandler": {HOOK: "true"}, "markPodNotReady": True}
    client.create(_hooked(namespace, 2, preDelete=hook))
    wait_status(client, namespace, wait_for, "readyReplicas", 2)
    for pod in pods(client, namespace).values():
        assert {"conditionType": KRUISE_POD_READY} in pod["spec"]["readinessGates"]
    patch_spec(client, namespace, {"replicas": 1})
    held = wait_for(_in_state(client, namespace, "PreparingDelete", ready=False), TIMEOUT)
    assert _messages(held) == [{"userAgent": "Lifecycle", "key": "preDeleteHook"}]
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    name = held["metadata"]["name"]
    patch_spec(client, namespace, {"replicas": 2})
    wait_for(lambda: status(client, namespace).get("observedGeneration") == 3, TIMEOUT)
    assert pods(client, namespace)[name]["metadata"]["labels"][LIFECYCLE_STATE_LABEL] == (
        "PreparingDelete"
    )
    _label_pod(client, namespace, name, None)
    wait_for(lambda: name not in pods(client, namespace), TIMEOUT)
    wait_status(client, namespace, wait_for, "readyReplicas", 2)


@pytest.mark.usefixtures("manager")
def test_in_place_update_mark_pod_not_ready(client, namespace, wait_for):
    """1 replica with a marking inPlaceUpdate hook; a new image holds the pod in
    PreparingUpdate not ready (``preUpdateHook``); released, it is updated in place and at
    Updated (the hook not back) ready again with no message; the hook back: Normal."""
    hook = {"labelsHandler": {HOOK: "true"}, "markPodNotReady": True}
    client.create(_hooked(namespace, 1, inPlaceUpdate=hook))
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    (name,) = pods(client, namespace)
    uid = pods(client, namespace)[name]["metadata"]["uid"]
    set_image(client, namespace, "nginx:2")
    held = wait_for(_in_state(client, namespace, "PreparingUpdate", ready=False), TIMEOUT)
    assert _messages(held) == [{"userAgent": "Lifecycle", "key": "preUpdateHook"}]
    assert held["spec"]["containers"][0]["image"] == "nginx:1"
    _label_pod(client, namespace, name, None)
    updated = wait_for(_in_state(client, namespace, "Updated", ready=True), TIMEOUT)
    assert updated["metadata"]["uid"] == uid
    assert updated["spec"]["containers"][0]["image"] == "nginx:2"
    assert _messages(updated) == []
    _label_pod(client, namespace, name, "true")
    wait_for(_in_state(client, namespace, "Normal", ready=True), TIMEOUT)
    wait_status(client, namespace, wait_for, "updatedReadyReplicas", 1)
