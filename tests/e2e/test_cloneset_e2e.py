"""The CloneSet controller on the embedded cluster: scaling with instance ids and claim reuse,
podsToDelete, the scale subresource, in-place and recreate updates, partition, paused,
preDelete hooks, invalid specs.

On the embedded backend every test runs on simulated time (``docs/simtime.md``): a cluster of
its own on a clock that jumps to the next deadline whenever nothing can run, so a deleted pod
takes its whole 30 s grace period, as with a real kubelet, at no cost in wall time. On
kube-apiserver (``--backend real``) the tests run in real time on the session cluster.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from controllers.cloneset import CLONESET, install_crd, setup
from kube_runtime import Manager, clock, kinds
from kube_runtime.workloads.pods import is_ready
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    running_manager,
    simulated_client,
    simulated_namespace,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

# virtual seconds under simulation, where a deleted pod takes its 30 s grace period to go
TIMEOUT = 300 if SIMULATED else 30
INSTANCE = "apps.kruise.io/cloneset-instance-id"
REVISION = "controller-revision-hash"


@pytest.fixture
def crd(client) -> None:
    """The CloneSet CRD, installed in the test's cluster (its own, under simulation)."""
    install_crd(client)


@pytest.fixture
def manager(client, namespace, crd) -> Iterator[Manager]:
    with running_manager(client, namespace, lambda m: setup(m, name=f"cloneset-{namespace}")) as m:
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


def set_image(client, namespace, image: str, **strategy: Any) -> None:
    patch: dict[str, Any] = {
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}
    }
    if strategy:
        patch["spec"]["updateStrategy"] = strategy
    client.patch(CLONESET, "web", patch, namespace=namespace)


def images(client, namespace) -> dict[str, str]:
    return {n: p["spec"]["containers"][0]["image"] for n, p in pods(client, namespace).items()}


def test_in_place_update_keeps_pods(client, namespace, manager, wait_for):
    client.create(make_cs(namespace, 3, updateStrategy={"type": "InPlaceIfPossible"}))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    before = pods(client, namespace)
    set_image(client, namespace, "nginx:2")
    cs = wait_for(
        lambda: (
            converged(client, namespace, 3)()
            if set(images(client, namespace).values()) == {"nginx:2"}
            else None
        ),
        TIMEOUT,
    )
    after = pods(client, namespace)
    assert set(after) == set(before)
    for name, pod in after.items():
        old = before[name]
        assert pod["metadata"]["uid"] == old["metadata"]["uid"]
        assert pod["status"]["podIP"] == old["status"]["podIP"]
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 1
        assert pod["status"]["containerStatuses"][0]["image"] == "nginx:2"
        assert pod["metadata"]["labels"][REVISION] == cs["status"]["updateRevision"]
        gate = next(c for c in pod["status"]["conditions"] if c["type"] == "InPlaceUpdateReady")
        assert gate["status"] == "True"
    assert cs["status"]["currentRevision"] == cs["status"]["updateRevision"]


def test_in_place_only_refuses_recreate(client, namespace, manager, wait_for):
    client.create(make_cs(namespace, 2, updateStrategy={"type": "InPlaceOnly"}))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    before = {n: p["metadata"]["uid"] for n, p in pods(client, namespace).items()}
    # an env change cannot be applied in place
    client.patch(
        CLONESET,
        "web",
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}
                        ]
                    }
                }
            }
        },
        namespace=namespace,
    )

    def failed() -> dict | None:
        cs = client.get(CLONESET, "web", namespace)
        conds = {c["type"]: c for c in (cs.get("status") or {}).get("conditions") or ()}
        return conds.get("FailedUpdate")

    cond = wait_for(failed, TIMEOUT)
    assert "InPlaceOnly" in cond["message"]
    assert {n: p["metadata"]["uid"] for n, p in pods(client, namespace).items()} == before


def test_recreate_with_max_surge(client, namespace, manager, wait_for):
    client.create(
        make_cs(
            namespace, 3, updateStrategy={"type": "ReCreate", "maxSurge": 1, "maxUnavailable": 0}
        )
    )
    wait_for(converged(client, namespace, 3), TIMEOUT)
    before = set(pods(client, namespace))
    seen_max = [0]
    stop = clock.current().event()  # its waits are virtual under simulation

    def watch_count() -> None:
        while not stop.is_set():
            seen_max[0] = max(seen_max[0], len(client.list(kinds.Pod, namespace)["items"]))
            stop.wait(0.01)

    t = threading.Thread(target=watch_count, daemon=True)
    t.start()
    set_image(client, namespace, "nginx:2")
    try:
        wait_for(
            lambda: (
                converged(client, namespace, 3)()
                if set(images(client, namespace).values()) == {"nginx:2"}
                else None
            ),
            TIMEOUT,
        )
    finally:
        stop.set()
        t.join()
    assert not (set(pods(client, namespace)) & before)  # recreated: new names
    assert seen_max[0] > 3  # the surge pod existed


def test_partition_holds_old_pods(client, namespace, manager, wait_for):
    client.create(
        make_cs(namespace, 4, updateStrategy={"type": "InPlaceIfPossible", "partition": 3})
    )
    wait_for(converged(client, namespace, 4), TIMEOUT)
    set_image(client, namespace, "nginx:2")
    cs = wait_for(
        lambda: (
            converged(client, namespace, 4, updated=1)()
            if sorted(images(client, namespace).values()) == ["nginx:1"] * 3 + ["nginx:2"]
            else None
        ),
        TIMEOUT,
    )
    assert cs["status"]["expectedUpdatedReplicas"] == 1
    assert cs["status"]["currentRevision"] != cs["status"]["updateRevision"]
    # scaling up under a partition adds pods at the update revision (old ones stay 3)
    client.patch(CLONESET, "web", {"spec": {"replicas": 5}}, namespace=namespace)
    wait_for(
        lambda: (
            converged(client, namespace, 5, updated=2)()
            if sorted(images(client, namespace).values()) == ["nginx:1"] * 3 + ["nginx:2"] * 2
            else None
        ),
        TIMEOUT,
    )
    client.patch(
        CLONESET, "web", {"spec": {"updateStrategy": {"partition": 0}}}, namespace=namespace
    )
    wait_for(
        lambda: (
            converged(client, namespace, 5)()
            if set(images(client, namespace).values()) == {"nginx:2"}
            else None
        ),
        TIMEOUT,
    )


def test_paused_stops_updates(client, namespace, manager, wait_for):
    client.create(
        make_cs(namespace, 2, updateStrategy={"type": "InPlaceIfPossible", "paused": True})
    )
    wait_for(converged(client, namespace, 2), TIMEOUT)
    set_image(client, namespace, "nginx:2")
    wait_for(
        lambda: (
            (client.get(CLONESET, "web", namespace).get("status") or {}).get("observedGeneration")
            == client.get(CLONESET, "web", namespace)["metadata"]["generation"]
        ),
        TIMEOUT,
    )
    # scaling still works while paused, and the new pod is at the update revision
    client.patch(CLONESET, "web", {"spec": {"replicas": 3}}, namespace=namespace)
    wait_for(converged(client, namespace, 3, updated=1), TIMEOUT)
    assert sorted(images(client, namespace).values()) == ["nginx:1", "nginx:1", "nginx:2"]
    client.patch(
        CLONESET, "web", {"spec": {"updateStrategy": {"paused": False}}}, namespace=namespace
    )
    wait_for(
        lambda: (
            converged(client, namespace, 3)()
            if set(images(client, namespace).values()) == {"nginx:2"}
            else None
        ),
        TIMEOUT,
    )


def test_pre_delete_hook_holds_deletion(client, namespace, manager, wait_for):
    hook_label = "example.io/block-deleting"
    cs = make_cs(namespace, 2, lifecycle={"preDelete": {"labelsHandler": {hook_label: "true"}}})
    cs["spec"]["template"]["metadata"]["labels"][hook_label] = "true"
    client.create(cs)
    wait_for(converged(client, namespace, 2), TIMEOUT)
    client.patch(CLONESET, "web", {"spec": {"replicas": 1}}, namespace=namespace)

    def preparing() -> str | None:
        for name, pod in pods(client, namespace).items():
            if pod["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "PreparingDelete":
                return name
        return None

    victim = wait_for(preparing, TIMEOUT)
    # held: nobody deletes it while the hook label is there
    cs_now = wait_for(
        lambda: (
            lambda c: (
                c
                if (c.get("status") or {}).get("observedGeneration") == c["metadata"]["generation"]
                else None
            )
        )(client.get(CLONESET, "web", namespace)),
        TIMEOUT,
    )
    assert cs_now["status"]["replicas"] == 2
    assert victim in pods(client, namespace)
    client.patch(
        kinds.Pod, victim, {"metadata": {"labels": {hook_label: None}}}, namespace=namespace
    )
    wait_for(
        lambda: victim not in pods(client, namespace) and converged(client, namespace, 1)(), TIMEOUT
    )


def test_invalid_spec_reported(client, namespace, manager, wait_for):
    client.create(make_cs(namespace, 2))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    before = set(pods(client, namespace))
    # what the CRD's schema cannot refuse (the template is left open): a template whose
    # labels no longer match the selector (the bundled webhook would refuse it)
    client.patch(
        CLONESET,
        "web",
        {"spec": {"template": {"metadata": {"labels": {"app": "other"}}}}},
        namespace=namespace,
    )

    def reported() -> dict | None:
        cs = client.get(CLONESET, "web", namespace)
        conds = {c["type"]: c for c in (cs.get("status") or {}).get("conditions") or ()}
        return conds.get("FailedScale")

    cond = wait_for(reported, TIMEOUT)
    assert "selector" in cond["message"]
    wait_for(
        lambda: any(
            e.get("reason") == "InvalidSpec" and e.get("type") == "Warning"
            for e in client.list(kinds.Event, namespace)["items"]
        ),
        TIMEOUT,
    )
    assert set(pods(client, namespace)) == before
