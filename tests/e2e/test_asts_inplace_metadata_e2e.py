"""The enhanced StatefulSet's in-place update of an image and env from metadata with launch
priorities: Kruise's CloneSet scenario "in-place update two container image and env from
metadata with priorities" (``test/e2e/apps/v1alpha1/cloneset.go``) on the Advanced StatefulSet,
which shares Kruise's ``pkg/util/inplaceupdate`` (here ``kube_runtime.workloads.inplace``) and so
its batches: the high-priority container whose env reads the changed annotation first (the
node daemon restarts it), the other container's image once it is ready again.

Simulated time on the embedded backend (Kruise's 10 s postStart hook), real time on
kube-apiserver (a 3 s hook).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime.workloads.containermeta import env_hashes_consistent
from kube_runtime.workloads.pods import parse_time
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_namespace,
)
from tests.e2e.test_asts_kruise_e2e import crd  # noqa: F401 (fixtures)
from tests.e2e.test_enhanced_statefulset_e2e import (  # noqa: F401 (fixtures)
    REVISION,
    converged,
    get_set,
    live_pods,
    make_asts,
    manager,
    names,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

HOOK_SECONDS = 10 if SIMULATED else 3
TIMEOUT = 300 if SIMULATED else 60
CONFIG_REF = {"fieldRef": {"fieldPath": "metadata.annotations['config']"}}


def _status(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod["status"]["containerStatuses"] if c["name"] == name)


@pytest.mark.usefixtures("manager")
def test_in_place_update_image_and_env_from_metadata_with_priorities(client, namespace, wait_for):
    """One replica, InPlaceIfPossible; redis (launch priority 10, a postStart hook, env
    ``CONFIG`` from the ``config`` annotation) and nginx. The annotation foo -> bar and nginx's
    image change together: the pod is updated in place in two batches (redis, then nginx once
    redis is ready), each container restarted once, and the set converges."""
    sts = make_asts(namespace, 1, {"podUpdatePolicy": "InPlaceIfPossible"})
    template = sts["spec"]["template"]
    template["metadata"]["annotations"] = {"config": "foo"}
    template["spec"] = {
        "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
        "containers": [
            {"name": "nginx", "image": "nginx:alpine"},
            {
                "name": "redis",
                "image": "redis:alpine",
                "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    {"name": "CONFIG", "valueFrom": CONFIG_REF},
                ],
                "lifecycle": {"postStart": {"exec": {"command": ["sleep", str(HOOK_SECONDS)]}}},
            },
        ],
    }
    client.create(sts)
    wait_for(converged(client, namespace, names(1)), TIMEOUT)
    (old,) = live_pods(client, namespace).values()

    containers = get_set(client, namespace)["spec"]["template"]["spec"]["containers"]
    containers[0]["image"] = "nginx:mainline-alpine"
    patch = {
        "spec": {
            "template": {
                "metadata": {"annotations": {"config": "bar"}},
                "spec": {"containers": containers},
            }
        }
    }
    client.patch(ENHANCED_STATEFULSET, "web", patch, namespace=namespace)
    sts = wait_for(
        lambda: (
            (s := converged(client, namespace, names(1))())
            and s["status"]["updateRevision"] != old["metadata"]["labels"][REVISION]
            and s
        ),
        TIMEOUT,
    )

    (pod,) = live_pods(client, namespace).values()
    assert pod["metadata"]["uid"] == old["metadata"]["uid"]  # in place
    assert pod["metadata"]["labels"][REVISION] == sts["status"]["updateRevision"]
    assert pod["metadata"]["annotations"]["config"] == "bar"
    assert env_hashes_consistent(pod) is None
    nginx, redis = _status(pod, "nginx"), _status(pod, "redis")
    assert nginx["restartCount"] == 1 and redis["restartCount"] == 1
    stopped = parse_time(nginx["lastState"]["terminated"]["finishedAt"])
    started = parse_time(redis["state"]["running"]["startedAt"])
    assert (stopped - started).total_seconds() >= HOOK_SECONDS
    state = json.loads(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"])
    assert [b["containers"] for b in state["containerBatchesRecord"]] == [["redis"], ["nginx"]]
