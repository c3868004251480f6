"""OpenKruise's CloneSet e2e scenarios of in-place updates that change env from metadata
(``test/e2e/apps/v1alpha1/cloneset.go`` in openkruise/kruise), replayed with Kruise's numbers.

A container whose env takes a value from a pod label or annotation (``valueFrom.fieldRef``) is
restarted when that value changes in an in-place update: the kubelet resolves env only when a
container starts, so Kruise's node daemon (played by the simulated kubelet) kills it while the
pod's ``InPlaceUpdateReady`` is False, and the update completes once the daemon's
``apps.kruise.io/runtime-containers-meta`` reports, for *every* container of the pod, the hash
of the values it runs with.

On the embedded backend the tests run on simulated time (``docs/simtime.md``), so Kruise's
``minReadySeconds`` of 10 and its 10 s postStart hook cost milliseconds; on kube-apiserver
(``--backend real``) they run in real time with the shorter numbers of
``test_cloneset_kruise_e2e`` (``MIN_READY``; a 3 s hook).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kube_runtime.workloads.pods import parse_time
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_kubelet,
    simulated_namespace,
)
from tests.e2e.test_cloneset_e2e import make_cs, manager, pods  # noqa: F401 (fixtures)
from tests.e2e.test_cloneset_kruise_e2e import (  # noqa: F401 (fixtures)
    AVAILABLE,
    MIN_READY,
    TEN_MINUTES,
    UPDATED,
    crd,
    get_cs,
    observed,
    patch_spec,
    wait_progressing,
    wait_status,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

# Kruise's redis postStart hook sleeps 10 s; in real time 3 s shows the same ordering.
HOOK_SECONDS = 10 if SIMULATED else 3
STATE_ANNOTATION = "apps.kruise.io/inplace-update-state"


def _container_status(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod["status"]["containerStatuses"] if c["name"] == name)


def _the_pod(client, namespace) -> dict[str, Any]:
    (pod,) = pods(client, namespace).values()
    return pod


def _create_and_wait_available(client, namespace, wait_for, cs: dict[str, Any]) -> None:
    """Kruise's opening steps: create, Progressing "updated", 1 replica, ready, available."""
    client.create(cs)
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "replicas", 1, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    assert len(pods(client, namespace)) == 1


def _wait_updated_and_available(client, namespace, wait_for, timeout: float = 120) -> None:
    """Kruise's closing steps: Progressing "updated", generation observed, the pod updated and
    ready (within ``timeout``, Kruise's own), available."""
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_for(lambda: observed(client, namespace), 10)
    wait_status(client, namespace, wait_for, "updatedReadyReplicas", 1, timeout=timeout)
    wait_progressing(client, namespace, wait_for, AVAILABLE)


@pytest.mark.usefixtures("manager")
def test_in_place_update_image_and_env_from_metadata_with_priorities(client, namespace, wait_for):
    """``in-place update two container image and env from metadata with priorities``: redis
    (launch priority 10, a postStart hook of HOOK_SECONDS, its env ``CONFIG`` from the
    ``config`` annotation) and nginx; the annotation foo -> bar and nginx's image change in
    one update. Redis goes first (the annotation is set with its batch and the daemon restarts
    it), nginx's image only once redis is ready again: two batches, each container restarted
    once, nginx stopped after the new redis had run its hook."""
    cs = make_cs(
        namespace,
        1,
        updateStrategy={"type": "InPlaceIfPossible"},
        minReadySeconds=MIN_READY,
        progressDeadlineSeconds=TEN_MINUTES,
    )
    template = cs["spec"]["template"]
    template["metadata"]["annotations"] = {"config": "foo"}
    config_ref = {"fieldRef": {"fieldPath": "metadata.annotations['config']"}}
    template["spec"] = {
        "containers": [
            {"name": "nginx", "image": "nginx:alpine"},
            {
                "name": "redis",
                "image": "redis:alpine",
                "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    {"name": "CONFIG", "valueFrom": config_ref},
                ],
                "lifecycle": {"postStart": {"exec": {"command": ["sleep", str(HOOK_SECONDS)]}}},
            },
        ],
    }
    _create_and_wait_available(client, namespace, wait_for, cs)

    containers = get_cs(client, namespace)["spec"]["template"]["spec"]["containers"]
    containers[0]["image"] = "nginx:mainline-alpine"
    patch_spec(
        client,
        namespace,
        {
            "template": {
                "metadata": {"annotations": {"config": "bar"}},
                "spec": {"containers": containers},
            }
        },
    )
    _wait_updated_and_available(client, namespace, wait_for)

    pod = _the_pod(client, namespace)
    assert pod["metadata"]["annotations"]["config"] == "bar"
    assert pod["spec"]["containers"][0]["image"] == "nginx:mainline-alpine"
    nginx, redis = _container_status(pod, "nginx"), _container_status(pod, "redis")
    assert nginx["restartCount"] == 1 and redis["restartCount"] == 1
    # Kruise: nginx finished after the new redis started + 10 s; timestamps are whole seconds
    # and a simulated restart takes milliseconds, so "at least" where Kruise has "after"
    stopped = parse_time(nginx["lastState"]["terminated"]["finishedAt"])
    started = parse_time(redis["state"]["running"]["startedAt"])
    assert (stopped - started).total_seconds() >= HOOK_SECONDS
    state = json.loads(pod["metadata"]["annotations"][STATE_ANNOTATION])
    assert [b["containers"] for b in state["containerBatchesRecord"]] == [["redis"], ["nginx"]]


@pytest.mark.usefixtures("manager")
def test_in_place_update_both_image_and_env_from_label(client, namespace, wait_for):
    """``in-place update both image and env from label``: one nginx container with env
    ``TEST_ENV`` from the ``test-env`` label; the label foo -> bar and the image change in one
    update. The same pod, a new container, restarted exactly once (the image change's restart
    starts it with the new value, so the daemon has nothing left to restart)."""
    cs = make_cs(
        namespace,
        1,
        image="nginx:alpine",
        updateStrategy={"type": "InPlaceIfPossible"},
        minReadySeconds=MIN_READY,
        progressDeadlineSeconds=TEN_MINUTES,
    )
    template = cs["spec"]["template"]
    template["metadata"]["labels"]["test-env"] = "foo"
    label_ref = {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}
    template["spec"]["containers"][0]["env"] = [{"name": "TEST_ENV", "valueFrom": label_ref}]
    _create_and_wait_available(client, namespace, wait_for, cs)
    old = _the_pod(client, namespace)
    old_status = old["status"]["containerStatuses"][0]

    template = get_cs(client, namespace)["spec"]["template"]
    template["metadata"]["labels"]["test-env"] = "bar"
    template["spec"]["containers"][0]["image"] = "nginx:mainline-alpine"
    patch_spec(client, namespace, {"template": template})
    _wait_updated_and_available(client, namespace, wait_for, timeout=180)

    new = _the_pod(client, namespace)
    new_status = new["status"]["containerStatuses"][0]
    assert new["metadata"]["uid"] == old["metadata"]["uid"]
    assert new["metadata"]["labels"]["test-env"] == "bar"
    assert new_status["containerID"] != old_status["containerID"]
    assert new_status["restartCount"] == 1
