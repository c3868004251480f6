"""The CloneSet controller on the embedded cluster: scaling with instance ids and claim reuse,
podsToDelete, the scale subresource, in-place and recreate updates, partition, paused,
preDelete hooks, invalid specs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controllers.cloneset import CLONESET, install_crd, setup
from kube_runtime import Manager, kinds
from kube_runtime.testing.managers import running
from kube_runtime.workloads.pods import is_ready

TIMEOUT = 30
INSTANCE = "apps.kruise.io/cloneset-instance-id"
REVISION = "controller-revision-hash"


@pytest.fixture(scope="module")
def crd(client) -> None:
    install_crd(client)


@pytest.fixture
def manager(client, namespace, crd) -> Iterator[Manager]:
    m = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        graceful_shutdown_timeout=10,
    )
    setup(m, name=f"cloneset-{namespace}")
    with running(m):
        yield m


def make_cs(namespace: str, replicas: int, image: str = "nginx:1", **spec: Any) -> dict:
    return {
        "apiVersion": CLONESET.api_version,
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


def pods(client, namespace) -> dict[str, dict]:
    return {
        p["metadata"]["name"]: p
        for p in client.list(kinds.Pod, namespace)["items"]
        if not p["metadata"].get("deletionTimestamp")
    }


def claims(client, namespace) -> dict[str, dict]:
    return {
        c["metadata"]["name"]: c
        for c in client.list(kinds.PersistentVolumeClaim, namespace)["items"]
        if not c["metadata"].get("deletionTimestamp")
    }


def converged(client, namespace, replicas: int, updated: int | None = None):
    def check() -> dict | None:
        cs = client.get(CLONESET, "web", namespace)
        status = cs.get("status") or {}
        want = {
            "replicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "updatedReplicas": replicas if updated is None else updated,
        }
        ok = all(status.get(k, 0) == v for k, v in want.items())
        ok = ok and status.get("observedGeneration") == cs["metadata"]["generation"]
        live = pods(client, namespace)
        ok = ok and len(live) == replicas and all(is_ready(p) for p in live.values())
        return cs if ok else None

    return check


VCT = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


def test_scale_up_down_with_claim_reuse(client, namespace, manager, wait_for):
    client.create(make_cs(namespace, 3, volumeClaimTemplates=VCT))
    cs = wait_for(converged(client, namespace, 3), TIMEOUT)
    status = cs["status"]
    assert status["labelSelector"] == "app=web"
    assert status["currentRevision"] == status["updateRevision"]
    live = pods(client, namespace)
    for name, pod in live.items():
        instance = pod["metadata"]["labels"][INSTANCE]
        assert name == f"web-{instance}" and len(instance) == 5
        assert pod["metadata"]["labels"][REVISION] == status["updateRevision"]
        vols = {v["name"]: v for v in pod["spec"]["volumes"]}
        assert vols["data"]["persistentVolumeClaim"]["claimName"] == f"data-web-{instance}"
    assert set(claims(client, namespace)) == {f"data-web-{p.split('-')[1]}" for p in live}

    # a pod deleted behind the controller's back comes back with its instance id and claim
    victim = sorted(live)[0]
    old_uid = live[victim]["metadata"]["uid"]
    client.delete(kinds.Pod, victim, namespace)
    wait_for(
        lambda: (
            victim in pods(client, namespace)
            and pods(client, namespace)[victim]["metadata"]["uid"] != old_uid
            and converged(client, namespace, 3)()
        ),
        TIMEOUT,
    )
    assert len(claims(client, namespace)) == 3

    # scale down: the removed pods' claims go with them
    client.patch(CLONESET, "web", {"spec": {"replicas": 1}}, namespace=namespace)
    wait_for(converged(client, namespace, 1), TIMEOUT)
    remaining = next(iter(pods(client, namespace).values()))
    wait_for(
        lambda: (
            set(claims(client, namespace))
            == {f"data-web-{remaining['metadata']['labels'][INSTANCE]}"}
        ),
        TIMEOUT,
    )


def test_scale_subresource(client, namespace, manager, wait_for):
    client.create(make_cs(namespace, 1))
    wait_for(converged(client, namespace, 1), TIMEOUT)
    client.patch(
        CLONESET, "web", {"spec": {"replicas": 4}}, namespace=namespace, subresource="scale"
    )
    wait_for(converged(client, namespace, 4), TIMEOUT)
    scale = client.get_path(
        f"/apis/apps.kube-runtime.io/v1alpha1/namespaces/{namespace}/clonesets/web/scale"
    )
    assert scale["spec"]["replicas"] == 4
    assert scale["status"]["replicas"] == 4
    assert scale["status"]["selector"] == "app=web"


def test_pods_to_delete(client, namespace, manager, wait_for):
    client.create(make_cs(namespace, 3))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    victim = sorted(pods(client, namespace))[1]
    client.patch(
        CLONESET,
        "web",
        {"spec": {"scaleStrategy": {"podsToDelete": [victim]}}},
        namespace=namespace,
    )
    # replaced (replicas unchanged), and the list is truncated once the pod is gone
    wait_for(
        lambda: victim not in pods(client, namespace) and converged(client, namespace, 3)(),
        TIMEOUT,
    )
    wait_for(
        lambda: (
            not (client.get(CLONESET, "web", namespace)["spec"].get("scaleStrategy") or {}).get(
                "podsToDelete"
            )
        ),
        TIMEOUT,
    )
    # with replicas lowered at the same time, the chosen pod is the one that goes
    survivors = sorted(pods(client, namespace))
    client.patch(
        CLONESET,
        "web",
        {"spec": {"replicas": 2, "scaleStrategy": {"podsToDelete": [survivors[0]]}}},
        namespace=namespace,
    )
    wait_for(converged(client, namespace, 2), TIMEOUT)
    assert set(pods(client, namespace)) == set(survivors[1:])
