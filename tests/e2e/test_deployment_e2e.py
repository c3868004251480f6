"""Deployments on the cluster's own Deployment and ReplicaSet controllers, with no test writing
a status: on the embedded backend the bundled ones (controllers/deployment, run by the
cluster), on the real backend kube-controller-manager 1.20's. Each test checks what both
must do: a Deployment becomes Available; a rolling update stays within maxSurge and
maxUnavailable and bumps the revision; Recreate never runs old and new pods together; scaling;
revisionHistoryLimit; a pause holds the rollout; a rollout stuck past progressDeadlineSeconds
is reported (600 virtual seconds on the embedded backend's simulated time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.client import Client
from kube_runtime.envtest.kubelet.simulator import ANNOTATION_NEVER_READY, ANNOTATION_READY_AFTER
from tests.e2e._fixtures import SIMULATED

DEPLOYMENT = "apps/v1/Deployment"
REPLICASET = "apps/v1/ReplicaSet"
REVISION = "deployment.kubernetes.io/revision"
HASH = "pod-template-hash"


def manifest(
    name: str,
    replicas: int = 3,
    *,
    image: str = "nginx:1",
    strategy: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }
    if annotations:
        template["metadata"]["annotations"] = annotations
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template,
            **spec,
        },
    }
    if strategy is not None:
        body["spec"]["strategy"] = strategy
    return body


def condition(d: dict[str, Any], type_: str) -> dict[str, Any]:
    for c in (d.get("status") or {}).get("conditions") or ():
        if c["type"] == type_:
            return dict(c)
    return {}


def replica_sets(client: Client, namespace: str, name: str) -> list[dict[str, Any]]:
    items = client.list(REPLICASET, namespace, label_selector=f"app={name}")["items"]
    return sorted(items, key=lambda rs: int(rs["metadata"]["annotations"].get(REVISION, "0")))


def pods(client: Client, namespace: str, name: str) -> list[dict[str, Any]]:
    return list(client.list("v1/Pod", namespace, label_selector=f"app={name}")["items"])


def rolled_out(client: Client, namespace: str, name: str) -> Callable[[], dict[str, Any] | None]:
    """A predicate: the Deployment's current generation completely rolled out (the
    Deployment, or None)."""

    def check() -> dict[str, Any] | None:
        d = client.get(DEPLOYMENT, name, namespace)
        status = d.get("status") or {}
        replicas = d["spec"]["replicas"]
        done = (
            status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("updatedReplicas", 0) == replicas
            and status.get("replicas", 0) == replicas
            and status.get("availableReplicas", 0) == replicas
            and condition(d, "Progressing").get("reason") == "NewReplicaSetAvailable"
        )
        return d if done else None

    return check


def when(value: Any, ok: Callable[[Any], bool]) -> Any:
    """``value`` when ``ok(value)``, else None (a predicate's result for ``wait_for``)."""
    return value if ok(value) else None


def set_image(client: Client, namespace: str, name: str, image: str) -> None:
    client.patch(
        DEPLOYMENT,
        name,
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}},
        namespace=namespace,
        patch_type="strategic",
    )


def test_a_deployment_becomes_available(client: Client, namespace: str, wait_for: Any) -> None:
    client.create(manifest("web", 3), namespace=namespace)
    d = wait_for(rolled_out(client, namespace, "web"), timeout=60, message="rolled out")
    assert d["metadata"]["annotations"][REVISION] == "1"
    assert condition(d, "Available")["reason"] == "MinimumReplicasAvailable"
    assert condition(d, "Available")["status"] == "True"
    assert d["status"]["readyReplicas"] == 3
    (rs,) = replica_sets(client, namespace, "web")
    pod_hash = rs["metadata"]["labels"][HASH]
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH: pod_hash}
    assert rs["metadata"]["annotations"][REVISION] == "1"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "3"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "4"
    (owner,) = rs["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "Deployment",
        d["metadata"]["uid"],
        True,
    )
    status = wait_for(
        lambda: when(
            client.get(REPLICASET, rs["metadata"]["name"], namespace)["status"],
            lambda s: s.get("fullyLabeledReplicas") == 3,
        ),
        timeout=30,
    )
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 3, 3)
    members = pods(client, namespace, "web")
    assert len(members) == 3
    for pod in members:
        assert pod["metadata"]["labels"][HASH] == pod_hash
        assert pod["metadata"]["name"].startswith(f"web-{pod_hash}-")
        assert pod["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]


def test_a_rolling_update_stays_within_its_bounds(
    client: Client, namespace: str, wait_for: Any
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
    slow = {ANNOTATION_READY_AFTER: "0.3"}
    client.create(manifest("roll", 4, strategy=strategy, annotations=slow), namespace=namespace)
    wait_for(rolled_out(client, namespace, "roll"), timeout=60)
    set_image(client, namespace, "roll", "nginx:2")
    seen = {"max_total": 0, "min_ready": 4, "samples": 0}

    def sample() -> dict[str, Any] | None:
        rss = replica_sets(client, namespace, "roll")
        seen["max_total"] = max(seen["max_total"], sum(rs["spec"]["replicas"] for rs in rss))
        live = [
            p for p in pods(client, namespace, "roll") if not p["metadata"].get("deletionTimestamp")
        ]
        ready = sum(
            1
            for p in live
            if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (p.get("status") or {}).get("conditions") or ()
            )
        )
        seen["min_ready"] = min(seen["min_ready"], ready)
        seen["samples"] += 1
        return rolled_out(client, namespace, "roll")()

    d = wait_for(sample, timeout=120, message="rolled out")
    assert seen["samples"] > 1
    assert seen["max_total"] <= 5  # replicas + maxSurge
    assert seen["min_ready"] >= 3  # replicas - maxUnavailable
    assert d["metadata"]["annotations"][REVISION] == "2"
    old, new = replica_sets(client, namespace, "roll")
    assert old["metadata"]["annotations"][REVISION] == "1" and old["spec"]["replicas"] == 0
    assert new["metadata"]["annotations"][REVISION] == "2" and new["spec"]["replicas"] == 4
    assert new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert old["metadata"]["labels"][HASH] != new["metadata"]["labels"][HASH]


def test_recreate_never_runs_old_and_new_pods_together(
    client: Client, namespace: str, wait_for: Any
) -> None:
    client.create(manifest("rec", 2, strategy={"type": "Recreate"}), namespace=namespace)
    wait_for(rolled_out(client, namespace, "rec"), timeout=60)
    (first,) = replica_sets(client, namespace, "rec")
    old_hash = first["metadata"]["labels"][HASH]
    set_image(client, namespace, "rec", "nginx:2")
    mixed: list[set[str]] = []

    def sample() -> dict[str, Any] | None:
        # Old pods that have finished (Succeeded/Failed: the kubelet stopped them and has not
        # removed them yet) are not running: upstream's oldPodsRunning lets the new
        # ReplicaSet start beside them.
        hashes = {
            p["metadata"]["labels"][HASH]
            for p in pods(client, namespace, "rec")
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        }
        if len(hashes) > 1:
            mixed.append(hashes)
        return rolled_out(client, namespace, "rec")()

    d = wait_for(sample, timeout=120, message="recreated")
    assert not mixed, f"old and new pods at once: {mixed}"
    assert d["metadata"]["annotations"][REVISION] == "2"
    hashes = {p["metadata"]["labels"][HASH] for p in pods(client, namespace, "rec")}
    assert len(hashes) == 1 and old_hash not in hashes


def test_scaling_up_and_down(client: Client, namespace: str, wait_for: Any) -> None:
    client.create(manifest("scale", 2), namespace=namespace)
    wait_for(rolled_out(client, namespace, "scale"), timeout=60)
    for replicas in (5, 1):
        client.patch(DEPLOYMENT, "scale", {"spec": {"replicas": replicas}}, namespace=namespace)
        wait_for(rolled_out(client, namespace, "scale"), timeout=60, message=f"{replicas} replicas")
        (rs,) = replica_sets(client, namespace, "scale")
        assert rs["spec"]["replicas"] == replicas
        assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == str(
            replicas
        )
        wait_for(lambda n=replicas: len(pods(client, namespace, "scale")) == n, timeout=30)


def test_revision_history_limit(client: Client, namespace: str, wait_for: Any) -> None:
    client.create(manifest("hist", 1, revisionHistoryLimit=1), namespace=namespace)
    wait_for(rolled_out(client, namespace, "hist"), timeout=60)
    for version in range(2, 5):
        set_image(client, namespace, "hist", f"nginx:{version}")
        wait_for(rolled_out(client, namespace, "hist"), timeout=60)
    rss = wait_for(
        lambda: when(replica_sets(client, namespace, "hist"), lambda found: len(found) == 2),
        timeout=60,
        message="history cut to one old ReplicaSet",
    )
    assert [rs["metadata"]["annotations"][REVISION] for rs in rss] == ["3", "4"]
    assert client.get(DEPLOYMENT, "hist", namespace)["metadata"]["annotations"][REVISION] == "4"


def test_a_paused_deployment_holds_its_rollout(
    client: Client, namespace: str, wait_for: Any
) -> None:
    client.create(manifest("pause", 2), namespace=namespace)
    wait_for(rolled_out(client, namespace, "pause"), timeout=60)
    client.patch(DEPLOYMENT, "pause", {"spec": {"paused": True}}, namespace=namespace)
    wait_for(
        lambda: (
            condition(client.get(DEPLOYMENT, "pause", namespace), "Progressing").get("reason")
            == "DeploymentPaused"
        ),
        timeout=30,
    )
    set_image(client, namespace, "pause", "nginx:2")
    generation = client.get(DEPLOYMENT, "pause", namespace)["metadata"]["generation"]
    wait_for(
        lambda: (
            client.get(DEPLOYMENT, "pause", namespace)["status"].get("observedGeneration")
            == generation
        ),
        timeout=30,
    )
    assert len(replica_sets(client, namespace, "pause")) == 1  # no new ReplicaSet while paused
    client.patch(DEPLOYMENT, "pause", {"spec": {"paused": False}}, namespace=namespace)
    d = wait_for(rolled_out(client, namespace, "pause"), timeout=60)
    assert d["metadata"]["annotations"][REVISION] == "2"
    assert len(replica_sets(client, namespace, "pause")) == 2


@pytest.mark.simtime
def test_progress_deadline_exceeded(sim_client: Client, sim_namespace: str, wait_for: Any) -> None:
    """Pods that never become ready: past ``progressDeadlineSeconds`` (600 s, virtual, on the
    embedded backend; 10 s in real time on the real one) Progressing turns False with
    ProgressDeadlineExceeded, and Available stays False."""
    deadline = 600 if SIMULATED else 10
    body = manifest(
        "stuck",
        2,
        annotations={ANNOTATION_NEVER_READY: "true"},
        progressDeadlineSeconds=deadline,
    )
    sim_client.create(body, namespace=sim_namespace)
    created = wait_for(
        lambda: (
            condition(sim_client.get(DEPLOYMENT, "stuck", sim_namespace), "Progressing") or None
        ),
        timeout=60,
    )
    assert created["reason"] in ("NewReplicaSetCreated", "ReplicaSetUpdated")
    progressing = wait_for(
        lambda: when(
            condition(sim_client.get(DEPLOYMENT, "stuck", sim_namespace), "Progressing"),
            lambda c: c.get("status") == "False",
        ),
        timeout=deadline * 2 + 60,
        message="ProgressDeadlineExceeded",
    )
    assert progressing["reason"] == "ProgressDeadlineExceeded"
    assert progressing["message"].endswith("has timed out progressing.")
    d = sim_client.get(DEPLOYMENT, "stuck", sim_namespace)
    assert condition(d, "Available")["status"] == "False"
    assert condition(d, "Available")["reason"] == "MinimumReplicasUnavailable"
    assert d["status"].get("availableReplicas", 0) == 0


def test_the_embedded_cluster_can_leave_deployments_alone(wait_for: Any) -> None:
    """``EmbeddedCluster(deployments=False)``: a Deployment gets no ReplicaSet."""
    if not SIMULATED:
        pytest.skip("real backend: the switch is the embedded cluster's")
    from kube_runtime.envtest.cluster import EmbeddedCluster

    with EmbeddedCluster(deployments=False) as cluster, cluster.client() as c:
        assert cluster.controllers is None
        c.create(manifest("alone", 1), namespace="default")
        c.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "later"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
            namespace="default",
        )
        # a pod created after the Deployment runs: the controllers would have acted by then
        wait_for(
            lambda: c.get("v1/Pod", "later", "default")["status"].get("phase") == "Running",
            timeout=10,
        )
        assert c.list(REPLICASET, "default")["items"] == []
        assert not c.get(DEPLOYMENT, "alone", "default").get("status")
