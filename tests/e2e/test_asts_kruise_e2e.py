"""Scenarios of OpenKruise's Advanced StatefulSet end-to-end suite
(``test/e2e/apps/v1beta1/statefulset.go`` in openkruise/kruise) replayed with Kruise's numbers
on the enhanced StatefulSet (``apps.kube-runtime.io/v1beta1``), on the embedded cluster and on
kube-apiserver 1.20 (the simulated kubelet plays the kubelet and the kruise-daemon)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime import kinds
from kube_runtime.workloads.containermeta import env_hashes_consistent
from kube_runtime.workloads.pods import is_ready
from tests.e2e.test_enhanced_statefulset_e2e import (  # noqa: F401 (fixtures)
    REVISION,
    TIMEOUT,
    converged,
    crd,
    get_set,
    live_pods,
    make_asts,
    manager,
    names,
)

GRACE_SECONDS = 2
ENV_FROM_LABEL = {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}


class GraceLog:
    """Watches the namespace's pods and records the pods seen at the update revision while
    their ``test-env`` label was still the old value and ``InPlaceUpdateReady`` False (the
    in-place grace period), and the pods ever deleted."""

    def __init__(self, client: Any, namespace: str) -> None:
        self.revision: str | None = None
        self.graced: set[str] = set()
        self.deleted: set[str] = set()
        self._lock = threading.Lock()
        self._watch = client.watch(kinds.Pod, namespace, resource_version="0")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for ev in self._watch:
            if ev.type == "BOOKMARK":
                continue
            pod = ev.object
            labels = pod["metadata"].get("labels") or {}
            gate = next(
                (
                    c.get("status")
                    for c in (pod.get("status") or {}).get("conditions") or ()
                    if c.get("type") == "InPlaceUpdateReady"
                ),
                None,
            )
            with self._lock:
                if ev.type == "DELETED" or pod["metadata"].get("deletionTimestamp"):
                    self.deleted.add(pod["metadata"]["name"])
                elif (
                    self.revision is not None
                    and labels.get(REVISION) == self.revision
                    and labels.get("test-env") == "foo"
                    and gate == "False"
                ):
                    self.graced.add(pod["metadata"]["name"])

    def close(self) -> None:
        self._watch.close()


@pytest.mark.usefixtures("manager")
def test_in_place_update_env_from_label(client, namespace, wait_for):
    """Kruise's "should in-place update env from label": 3 replicas, InPlaceIfPossible with an
    in-place grace period, an env var from the pod label ``test-env``; the label goes from foo
    to bar with partition 3 (a new revision, nothing updated), then partition 0: every pod is
    updated in place and its container restarted once (``restartCount`` 1), at the update
    revision. Kruise's grace period is 10 s; 2 s here keeps the test short (each pod is seen
    at the new revision with the old label and ``InPlaceUpdateReady`` False while it lasts)."""
    sts = make_asts(
        namespace,
        3,
        {
            "podUpdatePolicy": "InPlaceIfPossible",
            "inPlaceUpdateStrategy": {"gracePeriodSeconds": GRACE_SECONDS},
        },
    )
    template = sts["spec"]["template"]
    template["metadata"]["labels"]["test-env"] = "foo"
    template["spec"]["containers"][0]["env"] = [{"name": "TEST_ENV", "valueFrom": ENV_FROM_LABEL}]
    template["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    client.create(sts)
    created = wait_for(converged(client, namespace, names(3)), TIMEOUT)
    current = created["status"]["currentRevision"]

    # "Restoring Pods to the current revision": delete them all, they come back at it
    uids = {n: p["metadata"]["uid"] for n, p in live_pods(client, namespace).items()}
    for name in sorted(uids):
        client.delete(kinds.Pod, name, namespace)

    def restored() -> dict | None:
        pods = live_pods(client, namespace)
        fresh = set(pods) == names(3) and all(
            p["metadata"]["uid"] != uids[n] and is_ready(p) for n, p in pods.items()
        )
        return pods if fresh else None

    pods = wait_for(restored, TIMEOUT)
    assert {p["metadata"]["labels"][REVISION] for p in pods.values()} == {current}

    log = GraceLog(client, namespace)
    try:
        patch = {
            "spec": {
                "template": {"metadata": {"labels": {"test-env": "bar"}}},
                "updateStrategy": {"rollingUpdate": {"partition": 3}},
            }
        }
        client.patch(ENHANCED_STATEFULSET, "web", patch, namespace=namespace)

        def new_revision() -> dict | None:
            status = get_set(client, namespace).get("status") or {}
            return status if status.get("updateRevision", current) != current else None

        update = wait_for(new_revision, TIMEOUT)["updateRevision"]
        assert get_set(client, namespace)["status"]["currentRevision"] == current
        log.revision = update
        partition = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}
        client.patch(ENHANCED_STATEFULSET, "web", partition, namespace=namespace)
        sts = wait_for(converged(client, namespace, names(3)), TIMEOUT + 3 * GRACE_SECONDS)
        assert sts["status"]["updateRevision"] == update
        for name, pod in live_pods(client, namespace).items():
            assert pod["metadata"]["labels"][REVISION] == update, name
            assert pod["metadata"]["labels"]["test-env"] == "bar", name
            assert pod["status"]["containerStatuses"][0]["restartCount"] == 1, name
            assert env_hashes_consistent(pod) is None, name
        assert log.graced == names(3)
        assert log.deleted == set()  # updated in place
    finally:
        log.close()
