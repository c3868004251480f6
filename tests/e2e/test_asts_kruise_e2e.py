"""Scenarios of OpenKruise's Advanced StatefulSet end-to-end suite
(``test/e2e/apps/v1beta1/statefulset.go`` in openkruise/kruise) replayed with Kruise's numbers
on the enhanced StatefulSet (``apps.kube-runtime.io/v1beta1``), on the embedded cluster and on
kube-apiserver 1.20 (the simulated kubelet plays the kubelet and the kruise-daemon)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET, install_crd
from kube_runtime import kinds
from kube_runtime.client.errors import Forbidden, Invalid
from kube_runtime.kinds import Kind
from kube_runtime.workloads.containermeta import env_hashes_consistent
from kube_runtime.workloads.pods import is_ready
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_namespace,
)
from tests.e2e.test_enhanced_statefulset_e2e import (  # noqa: F401 (fixtures)
    REVISION,
    converged,
    get_set,
    live_pods,
    make_asts,
    manager,
    names,
)

GRACE_SECONDS = 2
STORAGE_CLASS = Kind("storage.k8s.io/v1", "StorageClass")
ENV_FROM_LABEL = {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own
# In virtual time pods take their whole 30 s grace period to go, as from a kubelet; Kruise's
# own tests wait minutes.
TIMEOUT = 300 if SIMULATED else 30


@pytest.fixture
def crd(client) -> None:
    install_crd(client)


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


@pytest.mark.slow
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


# --- volume expansion (Kruise "VolumeExpansion v1beta1", Resize PVC) ---------------------------

OLD_SIZE, NEW_SIZE = "1Gi", "2Gi"


@pytest.fixture
def storage_classes(client, namespace) -> Iterator[tuple[str, str]]:
    """Kruise's two classes, ``allow-volume-expansion`` and ``disallow-volume-expansion``
    (named after the namespace here: classes are cluster-scoped)."""
    names = (f"allow-{namespace}", f"disallow-{namespace}")
    for name, allow in zip(names, (True, False), strict=True):
        client.create(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": "example.com/simulated",
                "allowVolumeExpansion": allow,
            }
        )
    yield names
    for name in names:
        client.delete(STORAGE_CLASS, name)


def _expandable_set(namespace: str, policy: str, classes: list[str]) -> dict[str, Any]:
    """Kruise's ``validateExpandVCT`` set: 3 replicas, one claim template per class (1Gi,
    ``data<i>``), ``volumeClaimUpdateStrategy: OnPodRollingUpdate``."""
    rolling: dict[str, Any] = {}
    if policy == "InPlaceIfPossible":
        rolling["podUpdatePolicy"] = policy
    sts = make_asts(namespace, 3, rolling, volumeClaimUpdateStrategy={"type": "OnPodRollingUpdate"})
    sts["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": f"data{i}"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": sc,
                "resources": {"requests": {"storage": OLD_SIZE}},
            },
        }
        for i, sc in enumerate(classes)
    ]
    if policy == "InPlaceIfPossible":
        sts["spec"]["template"]["spec"]["readinessGates"] = [
            {"conditionType": "InPlaceUpdateReady"}
        ]
    return sts


def _claims(client, namespace) -> dict[str, dict]:
    return {
        c["metadata"]["name"]: c
        for c in client.list(kinds.PersistentVolumeClaim, namespace)["items"]
    }


def _expand(client, namespace, wait_for, policy: str, classes: list[str], resized: int) -> None:
    """Create the set, wait for it, then (Kruise's updateFn) a new image and the first
    ``resized`` templates at 2Gi: every claim ends with request = capacity = its template's
    size, the pods ready at the new image (in place or recreated)."""
    client.create(_expandable_set(namespace, policy, classes))
    wait_for(converged(client, namespace, names(3)), TIMEOUT)
    uids = {n: p["metadata"]["uid"] for n, p in live_pods(client, namespace).items()}
    templates = get_set(client, namespace)["spec"]["volumeClaimTemplates"]
    for template in templates[:resized]:
        template["spec"]["resources"]["requests"]["storage"] = NEW_SIZE
    patch = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
            "volumeClaimTemplates": templates,
        }
    }
    client.patch(ENHANCED_STATEFULSET, "web", patch, namespace=namespace)
    sizes = {
        t["metadata"]["name"]: t["spec"]["resources"]["requests"]["storage"] for t in templates
    }

    def expanded() -> dict | None:
        if not converged(client, namespace, names(3))():
            return None
        pods = live_pods(client, namespace)
        if {p["spec"]["containers"][0]["image"] for p in pods.values()} != {"nginx:2"}:
            return None
        claims = _claims(client, namespace)
        for name, claim in claims.items():
            want = sizes[name.split("-web-")[0]]
            request = claim["spec"]["resources"]["requests"]["storage"]
            capacity = (claim.get("status") or {}).get("capacity", {}).get("storage")
            if request != want or capacity != want:
                return None
        return claims

    claims = wait_for(expanded, TIMEOUT)
    assert len(claims) == 3 * len(classes)
    status = get_set(client, namespace)["status"]
    assert status["volumeClaims"] == [
        {"volumeClaimName": f"data{i}", "compatibleReplicas": 3, "compatibleReadyReplicas": 3}
        for i in range(len(classes))
    ]
    for name, claim in claims.items():
        if name.split("-web-")[0] in {t["metadata"]["name"] for t in templates[:resized]}:
            assert claim["metadata"]["annotations"]["apps.kruise.io/owned-by-asts"] == "web"
    pods = live_pods(client, namespace)
    kept = {n for n, p in pods.items() if p["metadata"]["uid"] == uids[n]}
    assert kept == (names(3) if policy == "InPlaceIfPossible" else set())


@pytest.mark.usefixtures("manager")
@pytest.mark.parametrize("policy", ["ReCreate", "InPlaceIfPossible"])
def test_expand_vct_with_sc_can_expand(client, namespace, wait_for, storage_classes, policy):
    """Kruise's ``recreate_expand_vct_with_sc_can_expand`` / ``inplace_...``."""
    _expand(client, namespace, wait_for, policy, [storage_classes[0]], 1)


@pytest.mark.usefixtures("manager")
def test_expand_only_can_expand_vct_with_mixed_sc(client, namespace, wait_for, storage_classes):
    """Kruise's ``inplace_expand_only_can_expand_vct_with_mixed_sc``: two templates, the
    first (expandable class) grows, the second (not expandable) stays."""
    _expand(client, namespace, wait_for, "InPlaceIfPossible", list(storage_classes), 1)


def test_claim_resize_admission(client, namespace, wait_for, storage_classes):
    """kube-apiserver's PersistentVolumeClaimResize admission and claim validation: a bound
    claim grows only when its class allows expansion; it never shrinks."""
    allow, disallow = storage_classes
    for name, sc in (("grow", allow), ("stuck", disallow)):
        client.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": sc,
                    "resources": {"requests": {"storage": OLD_SIZE}},
                },
            }
        )
    wait_for(
        lambda: all(
            (c.get("status") or {}).get("phase") == "Bound"
            for c in _claims(client, namespace).values()
        ),
        TIMEOUT,
    )

    def resize(name: str, size: str) -> dict:
        body = {"spec": {"resources": {"requests": {"storage": size}}}}
        return client.patch(kinds.PersistentVolumeClaim, name, body, namespace=namespace)

    with pytest.raises(Forbidden) as refused:
        resize("stuck", NEW_SIZE)
    assert str(refused.value.message) == (
        'persistentvolumeclaims "stuck" is forbidden: only dynamically provisioned pvc can be '
        "resized and the storageclass that provisions the pvc must support resize"
    )
    with pytest.raises(Invalid) as shrunk:
        resize("grow", "512Mi")
    assert (
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"
        in (str(shrunk.value.message))
    )
    assert resize("grow", NEW_SIZE)["spec"]["resources"]["requests"]["storage"] == NEW_SIZE
