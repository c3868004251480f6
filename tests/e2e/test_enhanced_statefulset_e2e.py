"""The enhanced StatefulSet (``apps.kube-runtime.io/v1beta1``, Kruise Advanced StatefulSet fields)
on the embedded cluster, reconciled by the StatefulSet controller's one algorithm: in-place
updates keep pods and claims, maxUnavailable, paused, unordered update by priority,
reserveOrdinals, ordered teardown, InPlaceOnly refusals, and both kinds served by one setup.

On the embedded backend every test runs on simulated time (``docs/simtime.md``), on a cluster
of its own, where a deleted pod takes its whole grace period (30 s) as with a real kubelet."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET, install_crd, setup
from controllers.statefulset.utils import ORDERED_TEARDOWN_FINALIZER
from kube_runtime import Manager, kinds
from kube_runtime.client.errors import is_not_found
from kube_runtime.workloads.pods import is_ready
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    running_manager,
    simulated_client,
    simulated_namespace,
)
from tests.e2e.test_statefulset_e2e import PodLog

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

# Virtual seconds under simulation, where the ordered teardown waits out each pod's 30 s grace
# period: minutes, as Kruise's own e2e gives them.
TIMEOUT = 300 if SIMULATED else 30
REVISION = "controller-revision-hash"


@pytest.fixture
def crd(client) -> None:
    """The enhanced StatefulSet's CRD installed in the test's cluster (per test: under
    simulation each test has a cluster of its own; on a shared cluster a no-op update)."""
    install_crd(client)


@pytest.fixture
def manager(client, namespace, crd) -> Iterator[Manager]:
    with running_manager(
        client, namespace, lambda m: setup(m, name=f"statefulset-{namespace}")
    ) as m:
        yield m


@pytest.fixture
def pod_log(client, namespace) -> Iterator[PodLog]:
    log = PodLog(client, namespace)
    yield log
    log.close()


def make_asts(
    namespace: str,
    replicas: int,
    rolling: dict[str, Any] | None = None,
    *,
    policy: str = "OrderedReady",
    **spec: Any,
) -> dict:
    return {
        "apiVersion": ENHANCED_STATEFULSET.api_version,
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "serviceName": "web",
            "replicas": replicas,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling or {}},
            **spec,
        },
    }


def live_pods(client, namespace) -> dict[str, dict]:
    return {
        p["metadata"]["name"]: p
        for p in client.list(kinds.Pod, namespace)["items"]
        if not p["metadata"].get("deletionTimestamp")
    }


def get_set(client, namespace) -> dict:
    return client.get(ENHANCED_STATEFULSET, "web", namespace)


def converged(client, namespace, names: set[str]):
    """The set's status shows ``names`` all ready and updated, and the pods are exactly those."""

    def check() -> dict | None:
        sts = get_set(client, namespace)
        status = sts.get("status") or {}
        n = len(names)
        ok = all(
            status.get(k, 0) == n
            for k in ("replicas", "readyReplicas", "updatedReplicas", "updatedReadyReplicas")
        )
        ok = ok and status.get("observedGeneration") == sts["metadata"]["generation"]
        ok = ok and status.get("currentRevision") == status.get("updateRevision")
        live = live_pods(client, namespace)
        ok = ok and set(live) == names and all(is_ready(p) for p in live.values())
        return sts if ok else None

    return check


def names(n: int) -> set[str]:
    return {f"web-{i}" for i in range(n)}


def patch_rolling(client, namespace, rolling: dict[str, Any], image: str | None = None) -> None:
    spec: dict[str, Any] = {"updateStrategy": {"rollingUpdate": rolling}}
    if image is not None:
        spec["template"] = {"spec": {"containers": [{"name": "c", "image": image}]}}
    client.patch(ENHANCED_STATEFULSET, "web", {"spec": spec}, namespace=namespace)


def images(client, namespace) -> dict[str, str]:
    return {n: p["spec"]["containers"][0]["image"] for n, p in live_pods(client, namespace).items()}


VCT = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


class ReadinessLog:
    """Watches the namespace's pods and tracks the most pods of ``expected`` that were not
    ready (or absent) at once, from :meth:`arm` on."""

    def __init__(self, client: Any, namespace: str, expected: set[str]) -> None:
        self.expected = expected
        self.ready: dict[str, bool] = {}
        self.max_unready = 0
        self._armed = False
        self._lock = threading.Lock()
        self._watch = client.watch(kinds.Pod, namespace, resource_version="0")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def arm(self) -> None:
        with self._lock:
            self._armed = True

    def _run(self) -> None:
        for ev in self._watch:
            if ev.type == "BOOKMARK":
                continue
            pod = ev.object
            name = pod["metadata"]["name"]
            with self._lock:
                self.ready[name] = ev.type != "DELETED" and is_ready(pod)
                if self._armed:
                    unready = sum(1 for n in self.expected if not self.ready.get(n))
                    self.max_unready = max(self.max_unready, unready)

    def close(self) -> None:
        self._watch.close()


# --- in-place update ---------------------------------------------------------------------------


def test_in_place_update_keeps_pods_and_claims(client, namespace, manager, wait_for, pod_log):
    client.create(
        make_asts(namespace, 3, {"podUpdatePolicy": "InPlaceIfPossible"}, volumeClaimTemplates=VCT)
    )
    sts = wait_for(converged(client, namespace, names(3)), TIMEOUT)
    assert ORDERED_TEARDOWN_FINALIZER in sts["metadata"]["finalizers"]
    assert sts["status"]["labelSelector"] == "app=web"
    assert sts["status"]["volumeClaims"] == [
        {"volumeClaimName": "data", "compatibleReplicas": 3, "compatibleReadyReplicas": 3}
    ]
    before = live_pods(client, namespace)
    claims_before = {
        c["metadata"]["name"]: c["metadata"]["uid"]
        for c in client.list(kinds.PersistentVolumeClaim, namespace)["items"]
    }
    patch_rolling(client, namespace, {}, image="nginx:2")
    sts = wait_for(
        lambda: (
            converged(client, namespace, names(3))()
            if set(images(client, namespace).values()) == {"nginx:2"}
            else None
        ),
        TIMEOUT,
    )
    after = live_pods(client, namespace)
    assert set(after) == set(before)
    for name, pod in after.items():
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        status = pod["status"]["containerStatuses"][0]
        assert status["restartCount"] == 1 and status["image"] == "nginx:2"
        assert pod["metadata"]["labels"][REVISION] == sts["status"]["updateRevision"]
    assert pod_log.names("deleting") == []  # no pod recreated
    claims_after = {
        c["metadata"]["name"]: c["metadata"]["uid"]
        for c in client.list(kinds.PersistentVolumeClaim, namespace)["items"]
    }
    assert claims_after == claims_before and len(claims_after) == 3
    assert sts["status"]["updatedAvailableReplicas"] == 3


def test_max_unavailable_two_at_a_time(client, namespace, manager, wait_for):
    rolling = {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}
    client.create(make_asts(namespace, 5, rolling, policy="Parallel"))
    wait_for(converged(client, namespace, names(5)), TIMEOUT)
    log = ReadinessLog(client, namespace, names(5))
    try:
        wait_for(lambda: len(log.ready) == 5 or None, TIMEOUT)
        log.arm()
        patch_rolling(client, namespace, {}, image="nginx:2")
        wait_for(
            lambda: (
                converged(client, namespace, names(5))()
                if set(images(client, namespace).values()) == {"nginx:2"}
                else None
            ),
            TIMEOUT,
        )
    finally:
        log.close()
    assert log.max_unready == 2


def test_paused_stops_mid_rollout_and_resumes(client, namespace, manager, wait_for):
    client.create(make_asts(namespace, 3, {"podUpdatePolicy": "InPlaceIfPossible"}))
    wait_for(converged(client, namespace, names(3)), TIMEOUT)
    # mid-rollout: the partition lets only web-2 update
    patch_rolling(client, namespace, {"partition": 2}, image="nginx:2")
    wait_for(
        lambda: (
            images(client, namespace)
            == {"web-0": "nginx:1", "web-1": "nginx:1", "web-2": "nginx:2"}
            or None
        ),
        TIMEOUT,
    )
    patch_rolling(client, namespace, {"partition": 0, "paused": True})

    def paused_seen() -> dict | None:
        sts = get_set(client, namespace)
        status = sts.get("status") or {}
        ok = status.get("observedGeneration") == sts["metadata"]["generation"]
        ok = ok and status.get("readyReplicas") == 3 and status.get("updatedReadyReplicas") == 1
        return sts if ok else None

    # a pass that saw every pod ready with partition 0 would have updated web-1 before
    # writing this status, unless paused
    sts = wait_for(paused_seen, TIMEOUT)
    revisions = {
        n: p["metadata"]["labels"][REVISION] for n, p in live_pods(client, namespace).items()
    }
    assert [n for n, r in revisions.items() if r == sts["status"]["updateRevision"]] == ["web-2"]
    patch_rolling(client, namespace, {"paused": False})
    wait_for(
        lambda: (
            converged(client, namespace, names(3))()
            if set(images(client, namespace).values()) == {"nginx:2"}
            else None
        ),
        TIMEOUT,
    )


def test_unordered_update_follows_priority(client, namespace, manager, wait_for):
    rolling = {
        "podUpdatePolicy": "InPlaceIfPossible",
        "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}},
    }
    client.create(make_asts(namespace, 3, rolling, policy="Parallel"))
    wait_for(converged(client, namespace, names(3)), TIMEOUT)
    # bigger rank first: web-0, then web-2, then web-1 (not the ordinal order)
    for name, rank in (("web-0", "r-9"), ("web-1", "r-1"), ("web-2", "r-5")):
        client.patch(kinds.Pod, name, {"metadata": {"labels": {"rank": rank}}}, namespace=namespace)
    order: list[str] = []
    lock = threading.Lock()
    watch = client.watch(kinds.Pod, namespace, resource_version="0")

    def run() -> None:
        for ev in watch:
            if ev.type == "BOOKMARK":
                continue
            c = (ev.object["spec"].get("containers") or [{}])[0]
            with lock:
                if c.get("image") == "nginx:2" and ev.object["metadata"]["name"] not in order:
                    order.append(ev.object["metadata"]["name"])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        patch_rolling(client, namespace, {}, image="nginx:2")
        wait_for(
            lambda: (
                converged(client, namespace, names(3))()
                if set(images(client, namespace).values()) == {"nginx:2"}
                else None
            ),
            TIMEOUT,
        )
        wait_for(lambda: len(order) == 3 or None, TIMEOUT)
    finally:
        watch.close()
    assert order == ["web-0", "web-2", "web-1"]


def test_reserve_ordinals_skips_ordinals(client, namespace, manager, wait_for):
    client.create(make_asts(namespace, 3, reserveOrdinals=[1]))
    sts = wait_for(converged(client, namespace, {"web-0", "web-2", "web-3"}), TIMEOUT)
    assert sts["status"]["replicas"] == 3
    client.patch(
        ENHANCED_STATEFULSET,
        "web",
        {"spec": {"reserveOrdinals": [1, "3-4"]}},
        namespace=namespace,
    )
    wait_for(converged(client, namespace, {"web-0", "web-2", "web-5"}), TIMEOUT)


def test_ordered_teardown_highest_first_set_last(client, namespace, manager, wait_for):
    client.create(make_asts(namespace, 3))
    sts = wait_for(converged(client, namespace, names(3)), TIMEOUT)
    events: list[tuple[str, str, int]] = []
    lock = threading.Lock()
    pod_watch = client.watch(kinds.Pod, namespace, resource_version="0")
    set_watch = client.watch(
        ENHANCED_STATEFULSET, namespace, resource_version=sts["metadata"]["resourceVersion"]
    )

    def record(watch: Any) -> None:
        for ev in watch:
            if ev.type == "BOOKMARK":
                continue
            meta = ev.object["metadata"]
            if ev.type == "DELETED" or meta.get("deletionTimestamp"):
                kind = "set" if ev.object.get("kind") == "StatefulSet" else "pod"
                what = "gone" if ev.type == "DELETED" else "deleting"
                with lock:
                    events.append((f"{kind} {what}", meta["name"], int(meta["resourceVersion"])))

    threads = [
        threading.Thread(target=record, args=(w,), daemon=True) for w in (pod_watch, set_watch)
    ]
    for t in threads:
        t.start()
    try:
        client.delete(ENHANCED_STATEFULSET, "web", namespace)

        def gone() -> bool:
            try:
                get_set(client, namespace)
            except Exception as err:
                return is_not_found(err)
            return False

        wait_for(gone, TIMEOUT)
        wait_for(lambda: any(e[0] == "set gone" for e in events) or None, TIMEOUT)
    finally:
        pod_watch.close()
        set_watch.close()
    with lock:
        ordered = sorted(events, key=lambda e: e[2])
    pod_events: list[tuple[str, str]] = []
    for what, name, _rv in ordered:
        if what.startswith("pod") and (what, name) not in pod_events:
            pod_events.append((what, name))
    # one at a time: each pod is gone before the next lower one is deleted
    assert pod_events == [
        ("pod deleting", "web-2"),
        ("pod gone", "web-2"),
        ("pod deleting", "web-1"),
        ("pod gone", "web-1"),
        ("pod deleting", "web-0"),
        ("pod gone", "web-0"),
    ]
    last_pod_rv = max(rv for what, _n, rv in ordered if what == "pod gone")
    set_gone_rv = next(rv for what, _n, rv in ordered if what == "set gone")
    assert set_gone_rv > last_pod_rv


def test_in_place_only_refuses_with_condition(client, namespace, manager, wait_for, pod_log):
    client.create(make_asts(namespace, 2, {"podUpdatePolicy": "InPlaceOnly"}))
    wait_for(converged(client, namespace, names(2)), TIMEOUT)
    before = {n: p["metadata"]["uid"] for n, p in live_pods(client, namespace).items()}
    container = {"name": "c", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}
    client.patch(
        ENHANCED_STATEFULSET,
        "web",
        {"spec": {"template": {"spec": {"containers": [container]}}}},
        namespace=namespace,
    )

    def failed() -> dict | None:
        status = get_set(client, namespace).get("status") or {}
        conds = {c["type"]: c for c in status.get("conditions") or ()}
        cond = conds.get("FailedUpdatePod")
        return cond if cond and cond["status"] == "True" else None

    cond = wait_for(failed, TIMEOUT)
    assert cond["reason"] == "InPlaceOnly" and "InPlaceOnly" in cond["message"]
    assert "web-1" in cond["message"]
    assert {n: p["metadata"]["uid"] for n, p in live_pods(client, namespace).items()} == before
    assert pod_log.names("deleting") == []


def test_one_setup_serves_both_kinds(client, namespace, manager, wait_for):
    apps_v1 = make_asts(namespace, 2)
    apps_v1["apiVersion"] = "apps/v1"
    apps_v1["metadata"]["name"] = "classic"
    apps_v1["spec"]["selector"] = {"matchLabels": {"app": "classic"}}
    apps_v1["spec"]["template"]["metadata"]["labels"] = {"app": "classic"}
    apps_v1["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    client.create(apps_v1)
    client.create(make_asts(namespace, 2))
    wait_for(
        lambda: (
            set(live_pods(client, namespace)) == {"web-0", "web-1", "classic-0", "classic-1"}
            or None
        ),
        TIMEOUT,
    )
    owners = {
        n: p["metadata"]["ownerReferences"][0]["apiVersion"]
        for n, p in live_pods(client, namespace).items()
    }
    assert owners == {
        "web-0": ENHANCED_STATEFULSET.api_version,
        "web-1": ENHANCED_STATEFULSET.api_version,
        "classic-0": "apps/v1",
        "classic-1": "apps/v1",
    }
    classic = client.get(kinds.StatefulSet, "classic", namespace)
    assert "finalizers" not in classic["metadata"]


# --- specified delete (Kruise test/e2e/apps/statefulset.go, testWithSpecifiedDeleted) ----------


def test_specified_delete_recreates_at_the_partitions_revision(
    client, namespace, manager, wait_for
):
    """Kruise's scenario: 4 replicas; pod 1 labelled ``apps.kruise.io/specified-delete`` is
    deleted and recreated; after an image update with partition 2, pod 2 (above the partition)
    and then pod 1 (below it) are deleted the same way: pods 2 and 3 end at the update revision,
    pods 0 and 1 at the current one."""
    client.create(make_asts(namespace, 4))
    sts = wait_for(converged(client, namespace, names(4)), TIMEOUT)
    current = sts["status"]["currentRevision"]

    def specified_delete(name: str) -> dict:
        old_uid = live_pods(client, namespace)[name]["metadata"]["uid"]
        client.patch(
            kinds.Pod,
            name,
            {"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}},
            namespace=namespace,
        )

        def recreated() -> dict | None:
            pod = live_pods(client, namespace).get(name)
            return pod if pod and pod["metadata"]["uid"] != old_uid and is_ready(pod) else None

        return wait_for(recreated, TIMEOUT)

    specified_delete("web-1")
    assert live_pods(client, namespace)["web-1"]["metadata"]["labels"][REVISION] == current
    patch_rolling(client, namespace, {"partition": 2}, image="nginx:2")
    specified_delete("web-2")

    def rolled() -> dict | None:
        sts = get_set(client, namespace)
        status = sts.get("status") or {}
        if status.get("observedGeneration") != sts["metadata"]["generation"]:
            return None
        pods = live_pods(client, namespace)
        update = status.get("updateRevision")
        done = update != current and all(
            pods.get(f"web-{i}", {}).get("metadata", {}).get("labels", {}).get(REVISION) == update
            for i in (2, 3)
        )
        return status if done and status.get("readyReplicas") == 4 else None

    status = wait_for(rolled, TIMEOUT)
    update = status["updateRevision"]
    assert status["currentRevision"] == current
    pod = specified_delete("web-1")
    assert pod["metadata"]["labels"][REVISION] == current  # below the partition
    revisions = {
        n: p["metadata"]["labels"][REVISION] for n, p in live_pods(client, namespace).items()
    }
    assert revisions == {"web-0": current, "web-1": current, "web-2": update, "web-3": update}
