"""Differential check of the Deployment and ReplicaSet controllers (controllers/deployment)
against kube-controller-manager 1.20's, on the same kube-apiserver 1.20.

One scenario, run twice: on the session's real cluster, where kube-controller-manager runs
its deployment and replicaset controllers, and on a real cluster of this module's own whose
kube-controller-manager runs neither, with ours running in a :class:`Manager` against it.
The scenario: a Deployment created with 3 replicas (RollingUpdate, maxSurge 1,
maxUnavailable 0), an image change, a scale to 5 and a scale to 1, each waited for until
rolled out. Compared:

* each ReplicaSet's ``spec.replicas`` over time (every value a watch saw, consecutive repeats
  merged), the ReplicaSets keyed by their template's image: the revision they hold;
* after each step, the Deployment's status counters and revision annotation;
* at the end, the Deployment's conditions (type, status, reason, and the message with the
  ReplicaSet name masked) and every ``deployment.kubernetes.io/*`` annotation of each
  ReplicaSet (revision, desired-replicas, max-replicas) and of the Deployment.

Not compared: ReplicaSet and pod names (their ``pod-template-hash``: ours hashes the
template's Go JSON encoding where upstream hashes a spew dump of the Go struct, so the names
differ; controllers/deployment/hashing.py), timestamps, uids. Real backend only (``--backend real``): the embedded backend has no
kube-controller-manager to compare with.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client import Client
from kube_runtime.envtest import running
from kube_runtime.envtest.plugin import backend_of
from kube_runtime.envtest.real import RealCluster, missing_binaries
from kube_runtime.manager import Manager

pytestmark = pytest.mark.skipif(
    bool(missing_binaries()),
    reason="real kube-apiserver not cached: run scripts/real-apiserver.sh",
)

DEPLOYMENT = "apps/v1/Deployment"
REPLICASET = "apps/v1/ReplicaSet"
PREFIX = "deployment.kubernetes.io/"
TIMEOUT = 90.0


@pytest.fixture(scope="module")
def ours(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    """A client of a kube-apiserver 1.20 whose Deployments our controllers run (KCM's
    deployment and replicaset controllers off)."""
    if backend_of(request.config) != "real":
        pytest.skip("the Deployment differential check runs with the real backend (--backend real)")
    from controllers.deployment import setup

    tmp: Path = tmp_path_factory.mktemp("deployment-differential")
    cluster = RealCluster(
        controllers=("garbagecollector", "namespace", "pvc-protection"), pod_ready_after=0.02
    )
    cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(tmp / "kubeconfig")
        manager_client = Client.from_kubeconfig(kubeconfig)
        manager = Manager(
            manager_client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            graceful_shutdown_timeout=10,
        )
        setup(manager, max_concurrent_reconciles=2)
        with manager_client, Client.from_kubeconfig(kubeconfig) as client, running(manager):
            yield client
    finally:
        cluster.stop()


def deployment(name: str, replicas: int, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
    }


def image_of(rs: dict[str, Any]) -> str:
    return str(rs["spec"]["template"]["spec"]["containers"][0]["image"])


class ReplicaCounts:
    """Watches the ReplicaSets of a namespace on a thread: ``spec.replicas`` of each, by
    image, every value seen with consecutive repeats merged."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.counts: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        listed = client.list(REPLICASET, namespace)
        assert listed["items"] == []
        self._watch = client.watch(
            REPLICASET,
            namespace,
            resource_version=listed["metadata"]["resourceVersion"],
            allow_bookmarks=False,
        )
        self._thread = threading.Thread(target=self._run, name="rs-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for event in self._watch:
            if event.type not in ("ADDED", "MODIFIED"):
                continue
            rs = event.object
            seen = self.counts.setdefault(image_of(rs), [])
            replicas = int(rs["spec"].get("replicas", 0))
            with self._lock:
                if not seen or seen[-1] != replicas:
                    seen.append(replicas)

    def snapshot(self) -> dict[str, list[int]]:
        with self._lock:
            return {k: list(v) for k, v in self.counts.items()}

    def close(self) -> None:
        self._watch.close()
        self._thread.join(10)


def rolled_out(client: Client, namespace: str, name: str) -> Callable[[], dict[str, Any] | None]:
    """The Deployment once its generation is completely rolled out (no old pods left)."""

    def check() -> dict[str, Any] | None:
        d = client.get(DEPLOYMENT, name, namespace)
        status = d.get("status") or {}
        replicas = d["spec"]["replicas"]
        progressing = [c for c in status.get("conditions") or () if c["type"] == "Progressing"]
        done = (
            status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("updatedReplicas", 0) == replicas
            and status.get("replicas", 0) == replicas
            and status.get("availableReplicas", 0) == replicas
            and bool(progressing)
            and progressing[0].get("reason") == "NewReplicaSetAvailable"
        )
        return d if done else None

    return check


def summary(d: dict[str, Any]) -> dict[str, Any]:
    status = d.get("status") or {}
    counters = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")
    return {
        "revision": (d["metadata"].get("annotations") or {}).get(PREFIX + "revision"),
        **{k: status.get(k, 0) for k in (*counters, "unavailableReplicas")},
    }


def ours_annotations(obj: dict[str, Any]) -> dict[str, str]:
    annotations = obj["metadata"].get("annotations") or {}
    return {k: v for k, v in sorted(annotations.items()) if k.startswith(PREFIX)}


def scenario(client: Client, namespace: str, wait_for: Any) -> dict[str, Any]:
    """Run the rollout scenario in ``namespace``; what it observed, names masked."""
    name = "web"
    record: dict[str, Any] = {"steps": []}
    counts = ReplicaCounts(client, namespace)
    try:

        def step(label: str) -> None:
            d = wait_for(rolled_out(client, namespace, name), timeout=TIMEOUT, message=label)
            record["steps"].append((label, summary(d)))

        client.create(deployment(name, 3, "nginx:1"), namespace=namespace)
        step("created with 3")
        client.patch(
            DEPLOYMENT,
            name,
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}},
            namespace=namespace,
            patch_type="strategic",
        )
        step("image nginx:2")
        for replicas in (5, 1):
            client.patch(DEPLOYMENT, name, {"spec": {"replicas": replicas}}, namespace=namespace)
            step(f"scaled to {replicas}")

        sets = client.list(REPLICASET, namespace)["items"]
        final = {image_of(rs): int(rs["spec"]["replicas"]) for rs in sets}
        # the watch has seen every ReplicaSet's last write
        wait_for(
            lambda: {k: v[-1] for k, v in counts.snapshot().items()} == final,
            timeout=TIMEOUT,
            message="the watch caught up",
        )
    finally:
        counts.close()
    record["replica counts"] = counts.snapshot()
    record["replicasets"] = {
        image_of(rs): {
            "annotations": ours_annotations(rs),
            "replicas": rs["spec"]["replicas"],
            "status.replicas": (rs.get("status") or {}).get("replicas", 0),
        }
        for rs in sorted(sets, key=image_of)
    }
    d = client.get(DEPLOYMENT, name, namespace)
    record["deployment annotations"] = ours_annotations(d)
    hashes = {rs["metadata"]["name"] for rs in sets}
    record["conditions"] = sorted(
        (c["type"], c["status"], c.get("reason"), mask(c.get("message", ""), hashes))
        for c in d["status"]["conditions"]
    )
    return record


def mask(message: str, names: set[str]) -> str:
    for rs_name in names:
        message = message.replace(rs_name, "<replicaset>")
    return re.sub(r"\s+", " ", message)


def test_rolling_update_and_scaling_match_kube_controller_manager(
    client: Client, namespace: str, ours: Client, wait_for: Any
) -> None:
    upstream = scenario(client, namespace, wait_for)  # KCM 1.20's controllers
    ours.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        mine = scenario(ours, namespace, wait_for)
    finally:
        ours.delete("v1/Namespace", namespace)
    # the expected shape, so a scenario that did nothing cannot pass
    assert upstream["replica counts"]["nginx:1"][0] == 3
    assert upstream["replica counts"]["nginx:2"][-1] == 1
    for key in ("steps", "replica counts", "replicasets", "deployment annotations", "conditions"):
        assert mine[key] == upstream[key], f"{key}: ours {mine[key]} != KCM's {upstream[key]}"
