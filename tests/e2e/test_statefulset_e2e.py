"""The StatefulSet controller on the embedded cluster: the observed order of pod creations and
deletions (recorded from a watch), rolling updates with a partition, claims, status.

On the embedded backend every test runs on simulated time (``docs/simtime.md``), on a cluster
of its own, where a deleted pod takes its whole grace period (30 s) as with a real kubelet;
``kubectl rollout status`` is another process and runs in real time in
``test_statefulset_kubectl_e2e``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from controllers.statefulset import setup
from kube_runtime import Manager, kinds
from kube_runtime.envtest import server_version
from kube_runtime.workloads.pods import is_ready
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    running_manager,
    simulated_client,
    simulated_namespace,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

# Virtual seconds under simulation, where each pod of an ordered scale down takes its 30 s
# grace period: minutes, as Kubernetes' own e2e gives them.
TIMEOUT = 600 if SIMULATED else 30


class PodLog:
    """Watches the namespace's pods and records ``(event, name)`` in order: ``created``,
    ``ready`` (first time Ready), ``deleting`` (first time with a deletionTimestamp or
    deleted)."""

    def __init__(self, client: Any, namespace: str) -> None:
        self.entries: list[tuple[str, str]] = []
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()
        self._watch = client.watch(kinds.Pod, namespace, resource_version="0")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _note(self, event: str, pod: dict) -> None:
        name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
        with self._lock:
            if (event, name, uid) not in self._seen:
                self._seen.add((event, name, uid))
                self.entries.append((event, name))

    def _run(self) -> None:
        for ev in self._watch:
            pod = ev.object
            if ev.type in ("ADDED", "MODIFIED"):
                self._note("created", pod)
                if is_ready(pod):
                    self._note("ready", pod)
                if pod["metadata"].get("deletionTimestamp"):
                    self._note("deleting", pod)
            elif ev.type == "DELETED":
                self._note("deleting", pod)

    def names(self, event: str) -> list[str]:
        with self._lock:
            return [n for e, n in self.entries if e == event]

    def snapshot(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self.entries)

    def close(self) -> None:
        self._watch.close()


@pytest.fixture
def manager(client, namespace) -> Iterator[Manager]:
    with running_manager(
        client, namespace, lambda m: setup(m, name=f"statefulset-{namespace}")
    ) as m:
        yield m


@pytest.fixture
def pod_log(client, namespace) -> Iterator[PodLog]:
    log = PodLog(client, namespace)
    yield log
    log.close()


def make_sts(namespace: str, replicas: int, **spec: Any) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "serviceName": "web",
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            **spec,
        },
    }


def pods(client, namespace) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in client.list(kinds.Pod, namespace)["items"]}


def converged(client, namespace, replicas: int):
    def check() -> dict | None:
        sts = client.get(kinds.StatefulSet, "web", namespace)
        status = sts.get("status") or {}
        want = {
            "replicas": replicas,
            "readyReplicas": replicas,
            "updatedReplicas": replicas,
            "currentReplicas": replicas,
        }
        if server_version(client) >= (1, 22):  # status.availableReplicas came with 1.22
            want["availableReplicas"] = replicas
        ok = all(status.get(k, 0) == v for k, v in want.items())
        ok = ok and status.get("observedGeneration") == sts["metadata"]["generation"]
        ok = ok and status.get("currentRevision") == status.get("updateRevision")
        ok = (
            ok
            and len(
                [
                    p
                    for p in pods(client, namespace).values()
                    if not p["metadata"].get("deletionTimestamp")
                ]
            )
            == replicas
        )
        return sts if ok else None

    return check


def scale(client, namespace, replicas: int) -> None:
    client.patch(kinds.StatefulSet, "web", {"spec": {"replicas": replicas}}, namespace=namespace)


def test_ordered_scale_up_then_down(client, namespace, manager, pod_log, wait_for) -> None:
    client.create(make_sts(namespace, 0))
    wait_for(converged(client, namespace, 0), TIMEOUT)
    scale(client, namespace, 5)
    sts = wait_for(converged(client, namespace, 5), TIMEOUT)
    assert pod_log.names("created") == [f"web-{i}" for i in range(5)]
    entries = pod_log.snapshot()
    for i in range(1, 5):
        assert entries.index(("ready", f"web-{i - 1}")) < entries.index(("created", f"web-{i}"))
    assert sts["status"]["currentRevision"]

    scale(client, namespace, 2)
    wait_for(converged(client, namespace, 2), TIMEOUT)
    assert pod_log.names("deleting") == ["web-4", "web-3", "web-2"]
    assert sorted(pods(client, namespace)) == ["web-0", "web-1"]


def test_rolling_update_with_partition_recreates_only_upper_pods(
    client, namespace, manager, pod_log, wait_for
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    client.create(make_sts(namespace, 5, updateStrategy=strategy))
    sts = wait_for(converged(client, namespace, 5), TIMEOUT)
    old_revision = sts["status"]["currentRevision"]
    client.patch(
        kinds.StatefulSet,
        "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}},
        namespace=namespace,
    )

    def updated() -> dict | None:
        sts = client.get(kinds.StatefulSet, "web", namespace)
        status = sts.get("status") or {}
        done = (
            status.get("updatedReplicas") == 3
            and status.get("readyReplicas") == 5
            and status.get("observedGeneration") == sts["metadata"]["generation"]
        )
        return sts if done else None

    sts = wait_for(updated, TIMEOUT)
    assert pod_log.names("deleting") == ["web-4", "web-3", "web-2"]
    images = {n: p["spec"]["containers"][0]["image"] for n, p in pods(client, namespace).items()}
    assert images == {
        "web-0": "nginx:1",
        "web-1": "nginx:1",
        "web-2": "nginx:2",
        "web-3": "nginx:2",
        "web-4": "nginx:2",
    }
    assert sts["status"]["currentRevision"] == old_revision != sts["status"]["updateRevision"]
    assert sts["status"].get("currentReplicas", 0) == 2
    revisions = client.list(kinds.ControllerRevision, namespace)["items"]
    assert len(revisions) == 2
    assert all(
        r["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"] for r in revisions
    )


def test_claims_created_per_template_and_kept_on_scale_down(
    client, namespace, manager, wait_for
) -> None:
    templates = [
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    ]
    client.create(
        make_sts(namespace, 2, podManagementPolicy="Parallel", volumeClaimTemplates=templates)
    )
    wait_for(converged(client, namespace, 2), TIMEOUT)
    claims = {
        c["metadata"]["name"]: c
        for c in client.list(kinds.PersistentVolumeClaim, namespace)["items"]
    }
    assert sorted(claims) == ["data-web-0", "data-web-1"]
    assert claims["data-web-0"]["metadata"]["labels"] == {"app": "web"}
    volumes = pods(client, namespace)["web-1"]["spec"]["volumes"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}} in volumes
    scale(client, namespace, 0)
    wait_for(converged(client, namespace, 0), TIMEOUT)
    claims = client.list(kinds.PersistentVolumeClaim, namespace)["items"]
    assert sorted(c["metadata"]["name"] for c in claims) == ["data-web-0", "data-web-1"]
    assert all(not c["metadata"].get("deletionTimestamp") for c in claims)


def test_crash_looping_pod_blocks_the_rollout(
    client, namespace, manager, pod_log, wait_for
) -> None:
    client.create(make_sts(namespace, 3))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    template = {
        "metadata": {"annotations": {"sim.kube-runtime.io/crash-loop": "true"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:2"}]},
    }
    client.patch(kinds.StatefulSet, "web", {"spec": {"template": template}}, namespace=namespace)

    def crash_looping() -> bool:
        pod = pods(client, namespace).get("web-2")
        if pod is None or pod["spec"]["containers"][0]["image"] != "nginx:2":
            return False
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        return any(s.get("restartCount", 0) >= 2 for s in statuses)

    wait_for(crash_looping, TIMEOUT)

    def blocked_status() -> dict | None:
        # status writes may be coalesced for up to a second (controllers/statefulset/status.py)
        status = client.get(kinds.StatefulSet, "web", namespace)["status"]
        counts = (status.get("updatedReplicas", 0), status.get("readyReplicas", 0))
        return status if counts == (1, 2) else None

    status = wait_for(blocked_status, TIMEOUT)
    assert status["currentRevision"] != status["updateRevision"]
    assert pod_log.names("deleting") == ["web-2"]


def test_failed_pod_is_recreated(client, namespace, manager, wait_for) -> None:
    client.create(make_sts(namespace, 2))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    old_uid = pods(client, namespace)["web-1"]["metadata"]["uid"]
    client.patch(
        kinds.Pod,
        "web-1",
        {"metadata": {"annotations": {"sim.kube-runtime.io/fail": "true"}}},
        namespace=namespace,
    )

    def recreated() -> bool:
        pod = pods(client, namespace).get("web-1")
        return pod is not None and pod["metadata"]["uid"] != old_uid

    wait_for(recreated, TIMEOUT)
    wait_for(converged(client, namespace, 2), TIMEOUT)
    wait_for(
        lambda: [
            e
            for e in client.list(kinds.Event, namespace)["items"]
            if e.get("reason") == "RecreatingFailedPod" and "web-1" in e.get("message", "")
        ],
        TIMEOUT,
    )
