"""More of the StatefulSet controller on the embedded cluster (issue 5): Parallel pod
management, an unhealthy pod blocking ordered scale down, claim retention policies, adoption
and release, OnDelete, maxUnavailable, minReadySeconds, revision rollback and history,
``spec.ordinals.start``, identity repair, expectations under a lagging cache, failed API
writes, an invalid selector, and a set being deleted. Sequences are recorded from watches
(:class:`PodLog` of the basic e2e file, :class:`PodStates` here)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from controllers.statefulset import setup
from kube_runtime import Manager, kinds
from kube_runtime.cache.store import object_key
from kube_runtime.envtest.managers import running
from kube_runtime.workloads.pods import is_ready
from tests.e2e import test_statefulset_e2e as basic
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_faults,
    simulated_kubelet,
    simulated_namespace,
)
from tests.e2e.test_statefulset_e2e import PodLog, converged, make_sts, pods, scale

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

manager = basic.manager  # fixtures
pod_log = basic.pod_log

# In virtual time a deleted pod takes its whole grace period (30 s), as with a real kubelet,
# and an ordered scale down waits for each: timeouts in Kubernetes' own e2e minutes.
TIMEOUT = 600 if SIMULATED else basic.TIMEOUT
# Kubernetes' StatefulSet e2e ("AvailableReplicas should get updated accordingly when
# MinReadySeconds is enabled") uses 30 s; in real time 1 s.
MIN_READY = 30 if SIMULATED else 1

READY_AFTER = "sim.kube-runtime.io/ready-after"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
CLAIM_TEMPLATES = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


class PodStates:
    """Watches the namespace's pods and keeps, after every event, how many pods are ready
    and not terminating, and the highest number of terminating pods seen at once."""

    def __init__(self, client: Any, namespace: str) -> None:
        self._pods: dict[str, dict] = {}
        self._lock = threading.Lock()
        self.available_counts: list[int] = []
        self.max_terminating = 0
        self._watch = client.watch(kinds.Pod, namespace, resource_version="0")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for ev in self._watch:
            if ev.type not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            pod = ev.object
            name = pod["metadata"]["name"]
            with self._lock:
                if ev.type == "DELETED":
                    self._pods.pop(name, None)
                else:
                    self._pods[name] = pod
                live = self._pods.values()
                terminating = sum(1 for p in live if p["metadata"].get("deletionTimestamp"))
                self.max_terminating = max(self.max_terminating, terminating)
                self.available_counts.append(
                    sum(
                        1
                        for p in live
                        if is_ready(p) and not p["metadata"].get("deletionTimestamp")
                    )
                )

    def counts(self) -> list[int]:
        with self._lock:
            return list(self.available_counts)

    def close(self) -> None:
        self._watch.close()


@pytest.fixture
def pod_states(client, namespace) -> Iterator[PodStates]:
    states = PodStates(client, namespace)
    yield states
    states.close()


def set_image(client, namespace: str, image: str, **spec: Any) -> None:
    patch = {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}, **spec}
    client.patch(kinds.StatefulSet, "web", {"spec": patch}, namespace=namespace)


def claims(client, namespace: str) -> dict[str, dict]:
    return {
        c["metadata"]["name"]: c
        for c in client.list(kinds.PersistentVolumeClaim, namespace)["items"]
        if not c["metadata"].get("deletionTimestamp")
    }


def revisions(client, namespace: str) -> dict[str, int]:
    return {
        r["metadata"]["name"]: r["revision"]
        for r in client.list(kinds.ControllerRevision, namespace)["items"]
    }


def events(client, namespace: str, reason: str) -> list[dict]:
    return [e for e in client.list(kinds.Event, namespace)["items"] if e.get("reason") == reason]


def slow_template(seconds: float) -> dict:
    """A pod template whose pods become ready ``seconds`` after they start."""
    return {
        "metadata": {"labels": {"app": "web"}, "annotations": {READY_AFTER: str(seconds)}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


# --- Parallel ----------------------------------------------------------------------------


def test_parallel_creates_and_deletes_without_waiting(
    client, namespace, manager, pod_log, pod_states, kubelet, wait_for
) -> None:
    client.create(
        make_sts(namespace, 0, podManagementPolicy="Parallel", template=slow_template(0.5))
    )
    wait_for(converged(client, namespace, 0), TIMEOUT)
    scale(client, namespace, 5)
    wait_for(converged(client, namespace, 5), TIMEOUT)
    entries = pod_log.snapshot()
    first_ready = min(i for i, (event, _) in enumerate(entries) if event == "ready")
    created_before = {name for event, name in entries[:first_ready] if event == "created"}
    assert created_before == {f"web-{i}" for i in range(5)}

    kubelet.settings.grace_scale = 0.02  # pods linger terminating for 0.6 s
    scale(client, namespace, 0)
    wait_for(converged(client, namespace, 0), TIMEOUT)
    wait_for(lambda: not pods(client, namespace), TIMEOUT)
    assert sorted(pod_log.names("deleting")) == [f"web-{i}" for i in range(5)]
    assert pod_states.max_terminating == 5


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_unhealthy_pod_blocks_ordered_scale_down_only(
    client, namespace, manager, pod_log, wait_for, policy
) -> None:
    client.create(make_sts(namespace, 3, podManagementPolicy=policy))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    never_ready = {"sim.kube-runtime.io/never-ready": "true"}
    client.patch(
        kinds.Pod, "web-0", {"metadata": {"annotations": never_ready}}, namespace=namespace
    )
    wait_for(lambda: not is_ready(pods(client, namespace)["web-0"]), TIMEOUT)
    scale(client, namespace, 1)

    def observed() -> dict | None:
        sts = client.get(kinds.StatefulSet, "web", namespace)
        status = sts.get("status") or {}
        ok = status.get("observedGeneration") == sts["metadata"]["generation"]
        return (
            status
            if ok and status.get("readyReplicas", 0) == (2 if policy == "OrderedReady" else 0)
            else None
        )

    wait_for(observed, TIMEOUT)
    if policy == "OrderedReady":  # web-0 is not ready: no scale down
        assert pod_log.names("deleting") == []
        assert sorted(pods(client, namespace)) == ["web-0", "web-1", "web-2"]
    else:  # Parallel does not wait for web-0
        wait_for(lambda: sorted(pods(client, namespace)) == ["web-0"], TIMEOUT)
    client.patch(
        kinds.Pod,
        "web-0",
        {"metadata": {"annotations": {"sim.kube-runtime.io/never-ready": None}}},
        namespace=namespace,
    )
    wait_for(converged(client, namespace, 1), TIMEOUT)
    deleted = pod_log.names("deleting")
    assert sorted(deleted) == ["web-1", "web-2"]
    if policy == "OrderedReady":
        assert deleted == ["web-2", "web-1"]


# --- claim retention ---------------------------------------------------------------------


def retention_sts(namespace: str, replicas: int, when_deleted: str, when_scaled: str) -> dict:
    policy = {"whenDeleted": when_deleted, "whenScaled": when_scaled}
    return make_sts(
        namespace,
        replicas,
        podManagementPolicy="Parallel",
        volumeClaimTemplates=CLAIM_TEMPLATES,
        persistentVolumeClaimRetentionPolicy=policy,
    )


def delete_set(client, namespace: str, wait_for) -> None:
    client.delete(kinds.StatefulSet, "web", namespace, propagation_policy="Background")
    wait_for(lambda: not pods(client, namespace), TIMEOUT)


def test_when_scaled_delete_removes_condemned_claims_only(
    client, namespace, manager, wait_for
) -> None:
    client.create(retention_sts(namespace, 3, "Retain", "Delete"))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    assert sorted(claims(client, namespace)) == ["data-web-0", "data-web-1", "data-web-2"]
    scale(client, namespace, 1)
    wait_for(converged(client, namespace, 1), TIMEOUT)
    wait_for(lambda: sorted(claims(client, namespace)) == ["data-web-0"], TIMEOUT)
    # scaling up again makes fresh claims for the new pods
    scale(client, namespace, 2)
    wait_for(converged(client, namespace, 2), TIMEOUT)
    assert sorted(claims(client, namespace)) == ["data-web-0", "data-web-1"]
    # whenDeleted=Retain: deleting the set keeps the remaining claims, without owners
    delete_set(client, namespace, wait_for)
    wait_for(lambda: not client.list(kinds.StatefulSet, namespace)["items"], TIMEOUT)
    remaining = claims(client, namespace)
    assert sorted(remaining) == ["data-web-0", "data-web-1"]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_scale_back_up_while_condemned_claims_go(
    client, namespace, manager, kubelet, wait_for, policy
) -> None:
    sts = retention_sts(namespace, 3, "Retain", "Delete")
    sts["spec"]["podManagementPolicy"] = policy
    client.create(sts)
    wait_for(converged(client, namespace, 3), TIMEOUT)
    kubelet.settings.grace_scale = 0.01  # the condemned pods (and so their claims) linger
    old = {n: c["metadata"]["uid"] for n, c in claims(client, namespace).items()}
    scale(client, namespace, 1)
    wait_for(lambda: pods(client, namespace)["web-1"]["metadata"].get("deletionTimestamp"), TIMEOUT)
    scale(client, namespace, 3)
    wait_for(converged(client, namespace, 3), TIMEOUT)
    found = wait_for(lambda: (c := claims(client, namespace)) and len(c) == 3 and c, TIMEOUT)
    assert found["data-web-0"]["metadata"]["uid"] == old["data-web-0"]
    live = {p["metadata"]["uid"] for p in pods(client, namespace).values()}
    for claim in found.values():  # no claim is left owned by a pod that is gone
        refs = [r for r in claim["metadata"].get("ownerReferences") or [] if r["kind"] == "Pod"]
        assert all(r["uid"] in live for r in refs)
    volumes = pods(client, namespace)["web-1"]["spec"]["volumes"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}} in volumes


def test_when_deleted_delete_removes_claims_with_the_set(
    client, namespace, manager, wait_for
) -> None:
    client.create(retention_sts(namespace, 3, "Delete", "Retain"))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    sts = client.get(kinds.StatefulSet, "web", namespace)

    def owned_by_set() -> bool:
        found = claims(client, namespace)
        return len(found) == 3 and all(
            any(
                r["uid"] == sts["metadata"]["uid"]
                for r in c["metadata"].get("ownerReferences") or []
            )
            for c in found.values()
        )

    wait_for(owned_by_set, TIMEOUT)
    scale(client, namespace, 2)  # whenScaled=Retain: the condemned claim stays
    wait_for(converged(client, namespace, 2), TIMEOUT)
    assert sorted(claims(client, namespace)) == ["data-web-0", "data-web-1", "data-web-2"]
    delete_set(client, namespace, wait_for)
    wait_for(lambda: not client.list(kinds.PersistentVolumeClaim, namespace)["items"], TIMEOUT)


def test_retain_keeps_claims_on_scale_down_and_set_deletion(
    client, namespace, manager, wait_for
) -> None:
    client.create(retention_sts(namespace, 2, "Retain", "Retain"))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    scale(client, namespace, 0)
    wait_for(converged(client, namespace, 0), TIMEOUT)
    delete_set(client, namespace, wait_for)
    wait_for(lambda: not client.list(kinds.StatefulSet, namespace)["items"], TIMEOUT)
    found = claims(client, namespace)
    assert sorted(found) == ["data-web-0", "data-web-1"]
    assert all(not c["metadata"].get("ownerReferences") for c in found.values())


# --- adoption and release ----------------------------------------------------------------


def test_orphan_pod_adopted_and_foreign_pod_released(client, namespace, manager, wait_for) -> None:
    orphan = client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": namespace, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
        }
    )
    sts = client.create(make_sts(namespace, 1, updateStrategy={"type": "OnDelete"}))
    uid = sts["metadata"]["uid"]

    def adopted() -> dict | None:
        pod = pods(client, namespace).get("web-0")
        refs = (pod or {}).get("metadata", {}).get("ownerReferences") or []
        ok = any(r["uid"] == uid and r.get("controller") for r in refs)
        return pod if ok and pod["metadata"]["labels"].get(POD_NAME_LABEL) == "web-0" else None

    pod = wait_for(adopted, TIMEOUT)
    assert pod["metadata"]["uid"] == orphan["metadata"]["uid"]  # adopted, not replaced
    assert pod["metadata"]["labels"][POD_INDEX_LABEL] == "0"

    ref = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "web",
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "stray",
                "namespace": namespace,
                "labels": {"app": "web"},
                "ownerReferences": [ref],
            },
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
        }
    )

    def released() -> bool:
        pod = pods(client, namespace).get("stray")
        return pod is not None and not pod["metadata"].get("ownerReferences")

    wait_for(released, TIMEOUT)

    def counted() -> dict | None:
        status = client.get(kinds.StatefulSet, "web", namespace).get("status") or {}
        return status if status.get("replicas") == 1 and status.get("readyReplicas") == 1 else None

    # the adopted pod has no revision label: OnDelete leaves it alone, it counts as neither
    # current nor updated
    status = wait_for(counted, TIMEOUT)
    assert status.get("updatedReplicas", 0) == 0
    assert sorted(pods(client, namespace)) == ["stray", "web-0"]
    assert pods(client, namespace)["web-0"]["metadata"]["uid"] == orphan["metadata"]["uid"]


# --- OnDelete ----------------------------------------------------------------------------


def test_on_delete_only_replaces_pods_deleted_by_hand(
    client, namespace, manager, pod_log, wait_for
) -> None:
    client.create(make_sts(namespace, 3, updateStrategy={"type": "OnDelete"}))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    set_image(client, namespace, "nginx:2")

    def new_revision() -> dict | None:
        sts = client.get(kinds.StatefulSet, "web", namespace)
        status = sts.get("status") or {}
        ok = status.get("observedGeneration") == sts["metadata"]["generation"]
        return status if ok and status["updateRevision"] != status["currentRevision"] else None

    status = wait_for(new_revision, TIMEOUT)
    assert status.get("updatedReplicas", 0) == 0  # omitempty: kube-apiserver drops a 0
    old_uid = pods(client, namespace)["web-1"]["metadata"]["uid"]
    client.delete(kinds.Pod, "web-1", namespace)

    def replaced() -> dict | None:
        sts = client.get(kinds.StatefulSet, "web", namespace)
        status = sts.get("status") or {}
        pod = pods(client, namespace).get("web-1")
        ok = (
            pod is not None
            and pod["metadata"]["uid"] != old_uid
            and status.get("updatedReplicas") == 1
            and status.get("readyReplicas") == 3
        )
        return pod if ok else None

    pod = wait_for(replaced, TIMEOUT)
    assert pod["metadata"]["labels"]["controller-revision-hash"] == status["updateRevision"]
    images = {n: p["spec"]["containers"][0]["image"] for n, p in pods(client, namespace).items()}
    assert images == {"web-0": "nginx:1", "web-1": "nginx:2", "web-2": "nginx:1"}
    assert pod_log.names("deleting") == ["web-1"]


# --- maxUnavailable ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_unavailable", "policy", "budget"),
    [(2, "OrderedReady", 2), ("40%", "Parallel", 2), ("30%", "OrderedReady", 1)],  # rounds down
)
def test_max_unavailable_bounds_a_rolling_update(
    client, namespace, manager, pod_log, pod_states, wait_for, max_unavailable, policy, budget
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}}
    client.create(
        make_sts(
            namespace,
            5,
            updateStrategy=strategy,
            podManagementPolicy=policy,
            template=slow_template(0.3),
        )
    )
    wait_for(converged(client, namespace, 5), TIMEOUT)
    start = len(pod_states.counts())
    set_image(client, namespace, "nginx:2")
    wait_for(converged(client, namespace, 5), TIMEOUT)
    during = pod_states.counts()[start:]
    assert min(during) == 5 - budget  # `budget` pods went at once, never more
    images = {p["spec"]["containers"][0]["image"] for p in pods(client, namespace).values()}
    assert images == {"nginx:2"}
    deleted = pod_log.names("deleting")
    assert sorted(deleted) == [f"web-{i}" for i in range(5)]
    assert sorted(deleted[:budget]) == sorted(f"web-{4 - i}" for i in range(budget))


# --- minReadySeconds ---------------------------------------------------------------------


def watch_statuses(client, namespace: str) -> tuple[Any, list[tuple[int, int, int]]]:
    """Start recording ``(replicas, readyReplicas, availableReplicas)`` of every set status
    the server sends; returns the watch (close it) and the list."""
    seen: list[tuple[int, int, int]] = []
    watch = client.watch(kinds.StatefulSet, namespace, resource_version="0")

    def record() -> None:
        for ev in watch:
            if ev.type in ("ADDED", "MODIFIED"):
                status = ev.object.get("status") or {}
                counts = ("replicas", "readyReplicas", "availableReplicas")
                seen.append(tuple(status.get(k, 0) for k in counts))  # type: ignore[arg-type]

    threading.Thread(target=record, daemon=True).start()
    return watch, seen


def test_min_ready_seconds_delays_availability_and_requeues(
    client, namespace, manager, wait_for
) -> None:
    watch, seen = watch_statuses(client, namespace)
    try:
        client.create(
            make_sts(namespace, 2, podManagementPolicy="Parallel", minReadySeconds=MIN_READY)
        )
        wait_for(converged(client, namespace, 2), TIMEOUT)
    finally:
        watch.close()
    # available lags ready; once both pods were ready nothing but the controller's own
    # requeue (no pod or set event) could make them available
    assert (2, 2, 0) in seen
    assert all(available <= ready for _, ready, available in seen)


def test_ordered_ready_waits_for_availability_before_the_next_pod(
    client, namespace, manager, wait_for
) -> None:
    watch, seen = watch_statuses(client, namespace)
    try:
        client.create(make_sts(namespace, 2, minReadySeconds=MIN_READY))
        wait_for(converged(client, namespace, 2), TIMEOUT)
    finally:
        watch.close()
    assert (1, 1, 0) in seen
    first_with_two = next(s for s in seen if s[0] == 2)
    assert first_with_two[2] >= 1  # web-1 came only once web-0 was available


# --- revisions ---------------------------------------------------------------------------


def test_rollback_reuses_the_old_revision_and_history_is_truncated(
    client, namespace, manager, wait_for
) -> None:
    # a limit of 1 from the start (1.20 refuses to change it later): with the live revision
    # and one other, nothing is truncated until the third template
    client.create(make_sts(namespace, 2, revisionHistoryLimit=1))
    first = wait_for(converged(client, namespace, 2), TIMEOUT)["status"]["currentRevision"]
    set_image(client, namespace, "nginx:2")
    second = wait_for(converged(client, namespace, 2), TIMEOUT)["status"]["currentRevision"]
    assert revisions(client, namespace) == {first: 1, second: 2}
    set_image(client, namespace, "nginx:1")
    sts = wait_for(converged(client, namespace, 2), TIMEOUT)
    assert sts["status"]["updateRevision"] == first
    assert revisions(client, namespace) == {first: 3, second: 2}
    images = {p["spec"]["containers"][0]["image"] for p in pods(client, namespace).values()}
    assert images == {"nginx:1"}

    set_image(client, namespace, "nginx:3")
    third = wait_for(converged(client, namespace, 2), TIMEOUT)["status"]["updateRevision"]
    # the live revision plus the newest of the others (the rolled-back one, number 3)
    wait_for(lambda: revisions(client, namespace) == {first: 3, third: 4}, TIMEOUT)


# --- ordinals ----------------------------------------------------------------------------


def test_ordinals_start(client, namespace, manager, pod_log, wait_for) -> None:
    client.create(make_sts(namespace, 3, ordinals={"start": 5}))
    wait_for(converged(client, namespace, 3), TIMEOUT)
    assert pod_log.names("created") == ["web-5", "web-6", "web-7"]
    found = pods(client, namespace)
    assert {n: p["metadata"]["labels"][POD_INDEX_LABEL] for n, p in found.items()} == {
        "web-5": "5",
        "web-6": "6",
        "web-7": "7",
    }
    assert found["web-6"]["spec"]["hostname"] == "web-6"
    assert found["web-6"]["spec"]["subdomain"] == "web"
    client.patch(
        kinds.StatefulSet, "web", {"spec": {"ordinals": {"start": 6}}}, namespace=namespace
    )
    wait_for(converged(client, namespace, 3), TIMEOUT)
    # web-5 takes its grace period to go (30 s in virtual time)
    wait_for(lambda: sorted(pods(client, namespace)) == ["web-6", "web-7", "web-8"], TIMEOUT)
    assert pod_log.names("deleting") == ["web-5"]


# --- identity repair ---------------------------------------------------------------------


def test_tampered_identity_labels_are_repaired(client, namespace, manager, wait_for) -> None:
    client.create(make_sts(namespace, 2))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    uid = pods(client, namespace)["web-1"]["metadata"]["uid"]
    client.patch(
        kinds.Pod,
        "web-1",
        {"metadata": {"labels": {POD_NAME_LABEL: None, POD_INDEX_LABEL: "7"}}},
        namespace=namespace,
    )

    def repaired() -> bool:
        labels = pods(client, namespace)["web-1"]["metadata"]["labels"]
        return labels.get(POD_NAME_LABEL) == "web-1" and labels.get(POD_INDEX_LABEL) == "1"

    wait_for(repaired, TIMEOUT)
    assert pods(client, namespace)["web-1"]["metadata"]["uid"] == uid  # updated, not replaced
    wait_for(
        lambda: any(
            "web-1" in e.get("message", "") for e in events(client, namespace, "SuccessfulUpdate")
        ),
        TIMEOUT,
    )


# --- expectations under a slow informer --------------------------------------------------


class CountingApi:
    """Forwards to a client, counting pod creations and deletions per pod name."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.creates: Counter[str] = Counter()
        self.deletes: Counter[str] = Counter()

    def create(self, obj: dict, *args: Any, **kwargs: Any) -> dict:
        if obj.get("kind") == "Pod":
            self.creates[obj["metadata"]["name"]] += 1
        return self._inner.create(obj, *args, **kwargs)

    def delete(self, kind: Any, name: str, *args: Any, **kwargs: Any) -> dict:
        if kinds.as_kind(kind) == kinds.Pod:
            self.deletes[name] += 1
        return self._inner.delete(kind, name, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def slow_down(informer: Any, seconds: float, first_sight: float) -> None:
    """Make ``informer`` take ``seconds`` of real time over every watch event, and
    ``first_sight`` over the first event of an object it does not hold yet (a lagging cache).
    Real time, like the server's injected latency: the lag is the machine's, not a timer's
    (under simulation the event is still held while the informer takes it in, so a virtual
    sleep there could never end). A ``first_sight`` longer than the create latency keeps a new
    pod out of the cache after its create returned, for a sync that runs then to see it
    missing."""
    upsert: Callable[[dict], None] = informer._on_upsert
    delete: Callable[[dict], None] = informer._on_delete

    def slow_upsert(obj: dict) -> None:
        known = informer.indexer.get(object_key(obj)) is not None
        time.sleep(seconds if known else first_sight)
        upsert(obj)

    def slow_delete(obj: dict) -> None:
        time.sleep(seconds)
        delete(obj)

    informer._on_upsert = slow_upsert
    informer._on_delete = slow_delete


@pytest.mark.parametrize("policy", ["Parallel", "OrderedReady"])
def test_lagging_cache_never_creates_or_deletes_twice(
    client, namespace, kubelet, faults, wait_for, policy
) -> None:
    m = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        graceful_shutdown_timeout=10,
    )
    counting = CountingApi(m.api_reader)
    m.api_reader = counting
    slow_down(m.cache.informer_for(kinds.Pod), 0.03, first_sight=0.15)
    kubelet.settings.grace_scale = 0.01  # deleted pods linger terminating for 0.3 s
    setup(m, name=f"statefulset-{namespace}", max_concurrent_reconciles=2)
    log = PodLog(client, namespace)  # before the drops: watches opened later get cut
    faults.drop_watches_every(7)  # the controller's informers re-watch now and then
    faults.add_latency(0.05, "pods", "create")  # the watch shows a pod before create returns
    faults.add_latency(0.05, "pods", "delete")
    with running(m):
        try:
            client.create(make_sts(namespace, 4, podManagementPolicy=policy))
            wait_for(converged(client, namespace, 4), TIMEOUT)
            scale(client, namespace, 1)
            wait_for(converged(client, namespace, 1), TIMEOUT)
        finally:
            log.close()
    assert counting.creates == Counter({f"web-{i}": 1 for i in range(4)})
    assert counting.deletes == Counter({f"web-{i}": 1 for i in range(1, 4)})
    assert sorted(log.names("created")) == [f"web-{i}" for i in range(4)]
    deletions = events(client, namespace, "SuccessfulDelete")
    assert sum(e.get("count", 1) for e in deletions) == 3


# --- API errors --------------------------------------------------------------------------


def test_failed_writes_are_reported_and_retried(
    client, namespace, manager, faults, wait_for
) -> None:
    faults.fail("pods", "create", 500, times=2)
    faults.fail("statefulsets", "update", 409, times=2)  # status writes hit conflicts
    client.create(make_sts(namespace, 2, podManagementPolicy="Parallel"))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    failed = events(client, namespace, "FailedCreate")
    assert failed and all(e["type"] == "Warning" for e in failed)
    assert all("web-" in e["message"] and "StatefulSet web" in e["message"] for e in failed)
    assert sorted(pods(client, namespace)) == ["web-0", "web-1"]


# --- invalid selector --------------------------------------------------------------------


def test_invalid_selector_warns_and_other_sets_keep_working(
    client, namespace, sim_cluster, manager, monkeypatch, wait_for
) -> None:
    strategy = sim_cluster.store.strategy
    validate = strategy.validate

    def lenient(info, obj, old) -> None:  # the API server would refuse the selector
        if obj.get("kind") == "StatefulSet" and obj["metadata"]["name"] == "bad":
            return None
        return validate(info, obj, old)

    monkeypatch.setattr(strategy, "validate", lenient)
    bad = make_sts(namespace, 2)
    bad["metadata"]["name"] = "bad"
    bad["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    client.create(bad)
    monkeypatch.undo()
    wait_for(lambda: events(client, namespace, "InvalidSelector"), TIMEOUT)
    client.create(make_sts(namespace, 2))
    wait_for(converged(client, namespace, 2), TIMEOUT)
    warnings = events(client, namespace, "InvalidSelector")
    assert [e["involvedObject"]["name"] for e in warnings] == ["bad"]
    assert warnings[0]["type"] == "Warning"
    assert warnings[0].get("count", 1) == 1  # not retried (the event would repeat)
    assert sorted(pods(client, namespace)) == ["web-0", "web-1"]  # none for "bad"
    assert not (client.get(kinds.StatefulSet, "bad", namespace).get("status") or {}).get(
        "observedGeneration"
    )


# --- deletion ----------------------------------------------------------------------------


def test_set_being_deleted_gets_no_new_pods(client, namespace, manager, pod_log, wait_for) -> None:
    sts = make_sts(namespace, 3, podManagementPolicy="Parallel")
    sts["metadata"]["finalizers"] = ["example.com/hold"]  # keeps the set while we look
    client.create(sts)
    wait_for(converged(client, namespace, 3), TIMEOUT)
    client.delete(kinds.StatefulSet, "web", namespace, propagation_policy="Foreground")
    wait_for(lambda: not pods(client, namespace), TIMEOUT)  # the garbage collector's work
    scale(client, namespace, 4)  # a sync of the deleting set: status only

    def observed() -> dict | None:
        sts = client.get(kinds.StatefulSet, "web", namespace)
        status = sts.get("status") or {}
        return sts if status.get("observedGeneration") == sts["metadata"]["generation"] else None

    sts = wait_for(observed, TIMEOUT)
    assert sts["status"]["replicas"] == 0
    assert not pods(client, namespace)
    assert sorted(pod_log.names("created")) == ["web-0", "web-1", "web-2"]
    client.patch(kinds.StatefulSet, "web", {"metadata": {"finalizers": None}}, namespace=namespace)
    wait_for(lambda: not client.list(kinds.StatefulSet, namespace)["items"], TIMEOUT)
