"""OpenKruise's CloneSet e2e scenario ``CloneSet Update with VolumeClaimTemplate changes``
(``testUpdateVolumeClaimTemplates`` in ``test/e2e/apps/v1alpha1/cloneset.go``), replayed with
Kruise's numbers (but one) on this project's CloneSet with Kruise's
``RecreatePodWhenChangeVCTInCloneSetGate`` on (``setup(recreate_pod_when_change_vct=True)``),
on the embedded cluster and on kube-apiserver 1.20.

Each step is Kruise's ``changeCloneSetAndWaitReady``: change the set, wait until it observed
the change and every pod is updated and ready and the ``Progressing`` condition says
available, then compare the pods' instance ids and the claims with those before.

On the embedded backend it runs on simulated time (``docs/simtime.md``) with Kruise's
``minReadySeconds`` of 10 s, waited out by each pod in turn at each step. In real time (on
kube-apiserver) that number only paces the rollouts this test checks the outcome of (which
pods and claims are recreated, the claims' sizes), so it is 1 s there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from controllers.cloneset import CLONESET, install_crd, setup
from kube_runtime import Manager
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    running_manager,
    simulated_client,
    simulated_namespace,
)
from tests.e2e.test_cloneset_e2e import claims, make_cs, pods

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of the test's own

REPLICAS = 4
TIMEOUT = 180  # Kruise waits 120 s per step; each pod waits MIN_READY in turn
MIN_READY = 10 if SIMULATED else 1  # Kruise's minReadySeconds is 10
INSTANCE = "apps.kruise.io/cloneset-instance-id"
AVAILABLE = ("True", "CloneSetAvailable", "CloneSet is available")

# Kruise's images: Nginx (alpine), NginxNew, Redis, Httpd
NGINX = "docker.io/library/nginx:alpine"
NGINX_NEW = "k8s.gcr.io/e2e-test-images/nginx:1.15-1"
REDIS = "k8s.gcr.io/e2e-test-images/redis:5.0.5-alpine"
HTTPD = "k8s.gcr.io/e2e-test-images/httpd:2.4.38-1"


@pytest.fixture
def crd(client) -> None:
    install_crd(client)


@pytest.fixture
def manager(client, namespace) -> Iterator[Manager]:
    """The controller with Kruise's RecreatePodWhenChangeVCTInCloneSetGate on (the test asks for
    ``crd`` too: module-scoped, it is installed first)."""
    with running_manager(
        client,
        namespace,
        lambda m: setup(m, name=f"cloneset-{namespace}", recreate_pod_when_change_vct=True),
    ) as m:
        yield m


def _vct(vol1: str, vol2: str) -> list[dict[str, Any]]:
    return [
        {
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
            },
        }
        for name, size in (("data-vol1", vol1), ("data-vol2", vol2))
    ]


def _get(client, namespace) -> dict[str, Any]:
    return client.get(CLONESET, "web", namespace)


def _progressing(cs: dict[str, Any]) -> tuple[str, str, str] | None:
    for c in (cs.get("status") or {}).get("conditions") or ():
        if c["type"] == "Progressing":
            return (c["status"], c.get("reason", ""), c.get("message", ""))
    return None


def _updated_ready(client, namespace) -> int:
    cs = _get(client, namespace)
    status = cs.get("status") or {}
    if status.get("observedGeneration") != cs["metadata"]["generation"]:
        return -1
    return int(status.get("updatedReadyReplicas") or 0)


Check = Callable[[set[str], set[str], set[str], dict[str, Any], dict[str, Any]], None]


def change_and_wait_ready(
    client,
    namespace,
    wait_for,
    spec: dict[str, Any],
    before: tuple[set[str], set[str]] | None,
    *checks: Check,
) -> tuple[set[str], set[str]]:
    """Kruise's ``changeCloneSetAndWaitReady``: ``(instance ids, claim names)`` after."""
    if spec:
        client.patch(CLONESET, "web", {"spec": spec}, namespace=namespace)
    wait_for(lambda: (_get(client, namespace).get("status") or {}).get("replicas") == REPLICAS, 10)
    wait_for(lambda: _updated_ready(client, namespace) == REPLICAS, TIMEOUT)
    wait_for(lambda: _progressing(_get(client, namespace)) == AVAILABLE, TIMEOUT)
    live = pods(client, namespace)
    assert len(live) == REPLICAS
    ids = {p["metadata"]["labels"][INSTANCE] for p in live.values()}
    pvcs = claims(client, namespace)
    if before is not None:
        for check in checks:
            check(before[0], ids, before[1], live, pvcs)
    for claim in pvcs.values():
        assert claim["metadata"]["labels"][INSTANCE] in ids
    return ids, set(pvcs)


def pods_recreated(recreate: bool) -> Check:
    """Kruise's ``checkPodsDoRecreate``."""

    def check(old_ids, ids, old_claims, live, pvcs) -> None:
        assert len(live) == REPLICAS
        for pod in live.values():
            assert (pod["metadata"]["labels"][INSTANCE] in old_ids) is not recreate

    return check


def claims_recreated(recreate: bool) -> Check:
    """Kruise's ``checkPVCsDoRecreate``."""

    def check(old_ids, ids, old_claims, live, pvcs) -> None:
        assert len(pvcs) == 2 * REPLICAS
        for name, claim in pvcs.items():
            ident = claim["metadata"]["labels"][INSTANCE]
            assert ident in ids
            assert (ident in old_ids) is not recreate
            assert (name in old_claims) is not recreate

    return check


def sizes(vol1: str, vol2: str) -> Check:
    """Kruise's ``checkPVCSize1`` / ``checkPVCSize2``."""

    def check(old_ids, ids, old_claims, live, pvcs) -> None:
        assert len(pvcs) == 2 * REPLICAS
        for name, claim in pvcs.items():
            assert claim["metadata"]["labels"][INSTANCE] in ids
            want = vol1 if "data-vol1" in name else vol2
            assert claim["spec"]["resources"]["requests"]["storage"] == want

    return check


def _image(image: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "image": image}]}}


@pytest.mark.slow
@pytest.mark.usefixtures("crd", "manager")
def test_update_with_volume_claim_template_changes(client, namespace, wait_for):
    """``CloneSet Update with VolumeClaimTemplate changes``."""
    cs = make_cs(
        namespace,
        REPLICAS,
        image=NGINX,
        updateStrategy={"type": "ReCreate"},
        minReadySeconds=MIN_READY,
        progressDeadlineSeconds=600,
        volumeClaimTemplates=_vct("1Gi", "1Gi"),
    )
    created = client.create(cs)
    assert created["spec"]["updateStrategy"]["type"] == "ReCreate"
    state = change_and_wait_ready(client, namespace, wait_for, {}, None)
    in_place = {"type": "InPlaceIfPossible"}

    # image + data-vol1 2Gi: pods and claims recreated
    state = change_and_wait_ready(
        client,
        namespace,
        wait_for,
        {"template": _image(NGINX_NEW), "volumeClaimTemplates": _vct("2Gi", "1Gi"),
         "updateStrategy": in_place},
        state,
        pods_recreated(True),
        claims_recreated(True),
        sizes("2Gi", "1Gi"),
    )  # fmt: skip
    # data-vol2 2Gi alone: nothing recreated, the claims keep their sizes
    state = change_and_wait_ready(
        client,
        namespace,
        wait_for,
        {"volumeClaimTemplates": _vct("2Gi", "2Gi"), "updateStrategy": in_place},
        state,
        pods_recreated(False),
        claims_recreated(False),
        sizes("2Gi", "1Gi"),
    )
    # image only, after the templates changed in the step before: recreated, all 2Gi
    state = change_and_wait_ready(
        client,
        namespace,
        wait_for,
        {"template": _image(REDIS), "updateStrategy": in_place},
        state,
        pods_recreated(True),
        claims_recreated(True),
        sizes("2Gi", "2Gi"),
    )
    only = {"type": "InPlaceOnly"}
    # InPlaceOnly, image: in place
    state = change_and_wait_ready(
        client,
        namespace,
        wait_for,
        {"template": _image(HTTPD), "updateStrategy": only},
        state,
        pods_recreated(False),
        claims_recreated(False),
        sizes("2Gi", "2Gi"),
    )
    # InPlaceOnly, image and templates 3Gi: in place, the claims unchanged
    change_and_wait_ready(
        client,
        namespace,
        wait_for,
        {"template": _image(REDIS), "volumeClaimTemplates": _vct("3Gi", "3Gi"),
         "updateStrategy": only},
        state,
        pods_recreated(False),
        claims_recreated(False),
        sizes("2Gi", "2Gi"),
    )  # fmt: skip
