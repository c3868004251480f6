"""The simulated kubelet, driven against the in-memory store (no HTTP)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from kube_runtime.envtest.kubelet.simulator import (
    ANNOTATION_CRASH_LOOP,
    ANNOTATION_FAIL,
    ANNOTATION_NEVER_READY,
    ANNOTATION_READY_AFTER,
    ANNOTATION_SUCCEED,
    DEFAULT_NODE_NAME,
    KUBELET_VERSION,
    Kubelet,
    image_id,
)
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import DeleteOptions, Event, Store
from kube_runtime.workloads.containermeta import RUNTIME_META_ANNOTATION, env_hashes_consistent

Obj = dict[str, Any]
T = TypeVar("T")
NS = "default"


def _info(store: Store, plural: str) -> ResourceInfo:
    info = store.registry.by_key("", plural)
    assert info is not None
    return info


def wait_for(fn: Callable[[], T | None], timeout: float = 3.0, what: str = "condition") -> T:
    """Poll ``fn`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


class Env:
    def __init__(self, store: Store, kubelet: Kubelet) -> None:
        self.store = store
        self.kubelet = kubelet
        self.pods = _info(store, "pods")
        self.pvcs = _info(store, "persistentvolumeclaims")
        self.nodes = _info(store, "nodes")
        self.events: list[Event] = []
        self._events_lock = threading.Lock()
        store.add_listener(self._record)

    def _record(self, event: Event) -> None:
        with self._events_lock:
            self.events.append(event)

    def pod_history(self, name: str) -> list[Obj]:
        """Every committed version of pod ``name``, oldest first."""
        with self._events_lock:
            return [
                e.new.obj
                for e in self.events
                if e.info.plural == "pods" and e.new.meta["name"] == name
            ]

    def create_pod(
        self,
        name: str,
        *,
        annotations: dict[str, str] | None = None,
        image: str = "nginx:1.25",
        **spec: Any,
    ) -> Obj:
        meta: Obj = {"name": name}
        if annotations:
            meta["annotations"] = annotations
        body = {"metadata": meta, "spec": {"containers": [{"name": "app", "image": image}], **spec}}
        return self.store.create(self.pods, NS, body).obj

    def pod(self, name: str) -> Obj | None:
        stored = self.store.try_get(self.pods, NS, name)
        return stored.obj if stored is not None else None

    def wait_pod(self, name: str, pred: Callable[[Obj], bool], what: str = "") -> Obj:
        def check() -> Obj | None:
            pod = self.pod(name)
            return pod if pod is not None and pred(pod) else None

        return wait_for(check, what=what or f"pod {name}")


def status(pod: Obj) -> Obj:
    result: Obj = pod.get("status") or {}
    return result


def phase(pod: Obj) -> str | None:
    return status(pod).get("phase")


def condition(pod: Obj, type_: str) -> Obj | None:
    for c in status(pod).get("conditions") or ():
        if c.get("type") == type_:
            result: Obj = c
            return result
    return None


def cond_status(pod: Obj, type_: str) -> str | None:
    c = condition(pod, type_)
    return c.get("status") if c else None


def is_ready(pod: Obj) -> bool:
    return cond_status(pod, "Ready") == "True"


def container(pod: Obj, index: int = 0) -> Obj:
    result: Obj = status(pod)["containerStatuses"][index]
    return result


@pytest.fixture
def env() -> Iterator[Env]:
    store = Store(Registry())
    store.create(_info(store, "namespaces"), None, {"metadata": {"name": NS}})
    kubelet = Kubelet(store, ready_after=0.03, restart_delay=0.03)
    e = Env(store, kubelet)
    kubelet.start()
    yield e
    kubelet.stop()


# --------------------------------------------------------------------------- node


def test_node_is_registered_ready_and_kept_ready(env: Env) -> None:
    node = env.store.get(env.nodes, None, DEFAULT_NODE_NAME).obj
    st = node["status"]
    ready = [c for c in st["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
    assert st["nodeInfo"]["kubeletVersion"] == KUBELET_VERSION
    assert {"cpu", "memory", "pods"} <= set(st["capacity"]) and st["allocatable"]["pods"]
    assert {"type": "InternalIP", "address": "10.0.0.1"} in st["addresses"]
    assert {"type": "Hostname", "address": DEFAULT_NODE_NAME} in st["addresses"]
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == DEFAULT_NODE_NAME

    def unready(n: Obj) -> Obj:
        for c in n["status"]["conditions"]:
            if c["type"] == "Ready":
                c["status"] = "Unknown"
        return n

    env.store.mutate(env.nodes, None, DEFAULT_NODE_NAME, unready, subresource="status")

    def ready_again() -> bool:
        n = env.store.get(env.nodes, None, DEFAULT_NODE_NAME).obj
        return any(
            c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"]
        )

    wait_for(ready_again, what="node Ready restored")
    env.store.delete(env.nodes, None, DEFAULT_NODE_NAME)
    wait_for(lambda: env.store.try_get(env.nodes, None, DEFAULT_NODE_NAME), what="re-registered")


# ---------------------------------------------------------------------------- pods


def test_pod_is_scheduled_then_pending_then_running_and_ready(env: Env) -> None:
    created = env.create_pod("web")
    pod = env.wait_pod("web", is_ready, "Ready")

    assert pod["spec"]["nodeName"] == DEFAULT_NODE_NAME
    st = status(pod)
    assert st["phase"] == "Running"
    assert st["podIP"].startswith("10.244.") and st["podIPs"] == [{"ip": st["podIP"]}]
    assert st["hostIP"] == "10.0.0.1" and st["startTime"]
    types = [c["type"] for c in st["conditions"]]
    assert types == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert all(c["status"] == "True" and c["lastTransitionTime"] for c in st["conditions"])
    cs = container(pod)
    assert cs["name"] == "app" and cs["image"] == "nginx:1.25"
    assert cs["imageID"] == image_id("nginx:1.25")
    assert cs["imageID"].startswith("docker-pullable://nginx:1.25@sha256:")
    assert cs["containerID"].startswith("containerd://")
    assert cs["ready"] is True and cs["started"] is True and cs["restartCount"] == 0
    assert cs["state"]["running"]["startedAt"]

    history = env.pod_history("web")
    phases = [phase(p) for p in history]
    assert "Pending" in phases and phases.index("Pending") < phases.index("Running")
    pending = next(
        p for p in history if phase(p) == "Pending" and status(p).get("containerStatuses")
    )
    assert container(pending)["state"]["waiting"]["reason"] == "ContainerCreating"
    assert cond_status(pending, "Ready") == "False"
    scheduled_first = next(p for p in history if condition(p, "PodScheduled"))
    assert scheduled_first["spec"]["nodeName"] == DEFAULT_NODE_NAME
    assert pod["metadata"]["uid"] == created["metadata"]["uid"]


def test_pod_ips_are_unique(env: Env) -> None:
    for i in range(20):
        env.create_pod(f"p{i}")
    ips = [env.wait_pod(f"p{i}", is_ready)["status"]["podIP"] for i in range(20)]
    assert len(set(ips)) == 20


def test_init_containers_are_completed(env: Env) -> None:
    env.create_pod("init", initContainers=[{"name": "setup", "image": "busybox"}])
    pod = env.wait_pod("init", is_ready)
    init = status(pod)["initContainerStatuses"][0]
    assert init["state"]["terminated"]["reason"] == "Completed"
    assert init["state"]["terminated"]["exitCode"] == 0
    assert cond_status(pod, "Initialized") == "True"


def test_readiness_gate_holds_ready_until_condition_true(env: Env) -> None:
    gate = "example.com/load-balancer"
    env.create_pod("gated", readinessGates=[{"conditionType": gate}])
    pod = env.wait_pod("gated", lambda p: cond_status(p, "ContainersReady") == "True")
    assert phase(pod) == "Running"
    ready = condition(pod, "Ready")
    assert ready is not None and ready["status"] == "False"
    assert ready["reason"] == "ReadinessGatesNotReady"

    def set_gate(value: str) -> Callable[[Obj], Obj]:
        def fn(p: Obj) -> Obj:
            conds = [c for c in p["status"].get("conditions", []) if c["type"] != gate]
            conds.append({"type": gate, "status": value})
            p["status"]["conditions"] = conds
            return p

        return fn

    env.store.mutate(env.pods, NS, "gated", set_gate("True"), subresource="status")
    pod = env.wait_pod("gated", is_ready, "Ready after gate")
    assert cond_status(pod, gate) == "True"
    env.store.mutate(env.pods, NS, "gated", set_gate("False"), subresource="status")
    pod = env.wait_pod("gated", lambda p: cond_status(p, "Ready") == "False", "unready again")
    assert cond_status(pod, "ContainersReady") == "True"


def test_image_change_restarts_container_in_place(env: Env) -> None:
    before = env.wait_pod(env.create_pod("app")["metadata"]["name"], is_ready)
    old_cs = container(before)

    def new_image(p: Obj) -> Obj:
        p["spec"]["containers"][0]["image"] = "nginx:1.27"
        return p

    env.store.mutate(env.pods, NS, "app", new_image)
    after = env.wait_pod(
        "app",
        lambda p: container(p)["image"] == "nginx:1.27" and is_ready(p),
        "restarted with the new image",
    )
    cs = container(after)
    assert cs["restartCount"] == 1
    assert cs["imageID"] == image_id("nginx:1.27") != old_cs["imageID"]
    assert cs["containerID"] != old_cs["containerID"]
    assert cs["lastState"]["terminated"]["containerID"] == old_cs["containerID"]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert status(after)["podIP"] == status(before)["podIP"]
    # In between, the old container was stopped and the pod not ready.
    assert any(
        p["spec"]["containers"][0]["image"] == "nginx:1.27"
        and container(p)["ready"] is False
        and cond_status(p, "Ready") == "False"
        for p in env.pod_history("app")
        if status(p).get("containerStatuses")
    )


def test_declared_digest_makes_two_tags_one_image(env: Env) -> None:
    """``settings.image_digests`` (``--image-digest``): a container reports
    ``<repository>@<digest>``, and an in-place change to another tag with the same digest
    restarts the container with the same imageID."""
    digest = "sha256:" + "ab" * 32
    env.kubelet.settings.image_digests = {"nginx:1.25": digest, "nginx:1.25-alpine": digest}
    before = env.wait_pod(env.create_pod("tagged")["metadata"]["name"], is_ready)
    assert container(before)["imageID"] == f"docker-pullable://nginx@{digest}"

    def retag(p: Obj) -> Obj:
        p["spec"]["containers"][0]["image"] = "nginx:1.25-alpine"
        return p

    env.store.mutate(env.pods, NS, "tagged", retag)
    after = env.wait_pod(
        "tagged",
        lambda p: container(p)["image"] == "nginx:1.25-alpine" and is_ready(p),
        "restarted with the new tag",
    )
    assert container(after)["restartCount"] == 1
    assert container(after)["containerID"] != container(before)["containerID"]
    assert container(after)["imageID"] == container(before)["imageID"]


def test_env_from_metadata_change_restarts_container_during_in_place_update(env: Env) -> None:
    env_ref = {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}
    containers = [
        {"name": "app", "image": "nginx:1.25", "env": [{"name": "E", "valueFrom": env_ref}]}
    ]
    body = {
        "metadata": {"name": "envpod", "labels": {"test-env": "foo"}},
        "spec": {"containers": containers},
    }
    env.store.create(env.pods, NS, body)
    before = env.wait_pod(
        "envpod",
        lambda p: is_ready(p) and RUNTIME_META_ANNOTATION in p["metadata"].get("annotations", {}),
        "running with its runtime meta",
    )
    assert env_hashes_consistent(before) is None

    def relabel(p: Obj) -> Obj:
        p["metadata"]["labels"]["test-env"] = "bar"
        return p

    # outside an in-place update (no InPlaceUpdateReady=False) nothing restarts
    env.store.mutate(env.pods, NS, "envpod", relabel)
    pod = env.wait_pod("envpod", lambda p: env_hashes_consistent(p) is not None, "stale env")
    assert container(pod)["restartCount"] == 0

    def updating(p: Obj) -> Obj:
        conds = [c for c in p["status"].get("conditions", []) if c["type"] != "InPlaceUpdateReady"]
        conds.append({"type": "InPlaceUpdateReady", "status": "False"})
        p["status"]["conditions"] = conds
        return p

    env.store.mutate(env.pods, NS, "envpod", updating, subresource="status")
    after = env.wait_pod(
        "envpod",
        lambda p: env_hashes_consistent(p) is None and container(p)["restartCount"] == 1,
        "restarted with the new env",
    )
    cs = container(after)
    assert cs["containerID"] != container(before)["containerID"]
    assert cs["imageID"] == container(before)["imageID"]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]


def test_runtime_meta_hashes_every_container_of_a_pod_with_env_from_metadata(env: Env) -> None:
    """The kruise-daemon hashes every running container, those without env from metadata too,
    and Kruise's completion check (``checkAllContainersHashConsistent``) wants each container's
    hash: without the plain container's, an update of the other one never completes."""
    env_ref = {"fieldRef": {"fieldPath": "metadata.annotations['config']"}}
    containers = [
        {"name": "plain", "image": "nginx:1.25"},
        {"name": "app", "image": "redis:7", "env": [{"name": "CONFIG", "valueFrom": env_ref}]},
    ]
    body = {
        "metadata": {"name": "twopod", "annotations": {"config": "foo"}},
        "spec": {"containers": containers},
    }
    env.store.create(env.pods, NS, body)
    pod = env.wait_pod(
        "twopod",
        lambda p: is_ready(p) and env_hashes_consistent(p) is None,
        "both containers hashed",
    )
    entries = json.loads(pod["metadata"]["annotations"][RUNTIME_META_ANNOTATION])["containers"]
    assert sorted(e["name"] for e in entries) == ["app", "plain"]
    assert all("extractedEnvFromMetadataHash" in e["hashes"] for e in entries)

    def update_plain_image(p: Obj) -> Obj:
        p["spec"]["containers"][0]["image"] = "nginx:1.26"
        return p

    env.store.mutate(env.pods, NS, "twopod", update_plain_image)
    after = env.wait_pod(
        "twopod",
        lambda p: container(p)["restartCount"] == 1 and env_hashes_consistent(p) is None,
        "the restarted plain container hashed again",
    )
    assert container(after)["containerID"] != container(pod)["containerID"]


# ------------------------------------------------------------------------ deletion


def test_deletion_is_immediate_by_default(env: Env) -> None:
    env.wait_pod(env.create_pod("gone")["metadata"]["name"], is_ready)
    pending, removed = env.store.delete(env.pods, NS, "gone")
    assert not removed and pending.meta["deletionTimestamp"]  # graceful: 30s by default
    wait_for(lambda: env.pod("gone") is None, what="pod deleted")
    last = env.pod_history("gone")[-1]
    assert phase(last) == "Succeeded"
    assert container(last)["state"]["terminated"]["exitCode"] == 0


def test_deletion_waits_for_scaled_grace_period(env: Env) -> None:
    env.kubelet.settings.grace_scale = 0.01
    env.kubelet.settings.max_grace = 0.2
    env.wait_pod(env.create_pod("slow")["metadata"]["name"], is_ready)
    started = time.monotonic()
    env.store.delete(env.pods, NS, "slow", DeleteOptions(grace_seconds=100))  # 1.0s -> 0.2s cap
    assert env.pod("slow") is not None
    wait_for(lambda: env.pod("slow") is None, what="pod deleted")
    assert time.monotonic() - started >= 0.2


def test_finalizer_holds_deleted_pod_until_removed(env: Env) -> None:
    env.create_pod("held")
    env.store.mutate(
        env.pods, NS, "held", lambda p: {**p, "metadata": {**p["metadata"], "finalizers": ["x/y"]}}
    )
    env.wait_pod("held", is_ready)
    env.store.delete(env.pods, NS, "held")
    pod = env.wait_pod(
        "held",
        lambda p: p["metadata"].get("deletionGracePeriodSeconds") == 0 and phase(p) == "Succeeded",
        "stopped and force-deleted",
    )
    assert pod["metadata"]["finalizers"] == ["x/y"]

    def drop_finalizers(p: Obj) -> Obj:
        p["metadata"]["finalizers"] = []
        return p

    env.store.mutate(env.pods, NS, "held", drop_finalizers)
    wait_for(lambda: env.pod("held") is None, what="pod removed")


# --------------------------------------------------------------------- annotations


def test_never_ready(env: Env) -> None:
    env.create_pod("lazy", annotations={ANNOTATION_NEVER_READY: "true"})
    pod = env.wait_pod("lazy", lambda p: phase(p) == "Running")
    assert cond_status(pod, "Ready") == "False"
    assert cond_status(pod, "ContainersReady") == "False"
    cs = container(pod)
    assert cs["started"] is True and cs["ready"] is False and "running" in cs["state"]

    def clear(p: Obj) -> Obj:
        p["metadata"]["annotations"] = {}
        return p

    env.store.mutate(env.pods, NS, "lazy", clear)  # level-based: readiness follows
    env.wait_pod("lazy", is_ready, "Ready once the annotation is gone")


@pytest.mark.parametrize(
    ("annotation", "want_phase", "code", "reason", "ready_reason"),
    [
        (ANNOTATION_FAIL, "Failed", 1, "Error", "PodFailed"),
        (ANNOTATION_SUCCEED, "Succeeded", 0, "Completed", "PodCompleted"),
    ],
)
def test_terminal_annotations(
    env: Env, annotation: str, want_phase: str, code: int, reason: str, ready_reason: str
) -> None:
    env.create_pod("job", annotations={annotation: "true"})
    pod = env.wait_pod("job", lambda p: phase(p) == want_phase)
    terminated = container(pod)["state"]["terminated"]
    assert terminated["exitCode"] == code and terminated["reason"] == reason
    ready = condition(pod, "Ready")
    assert ready is not None and ready["status"] == "False" and ready["reason"] == ready_reason
    # Terminal pods are not restarted, even if the spec changes.
    env.store.mutate(
        env.pods,
        NS,
        "job",
        lambda p: {**p, "spec": {**p["spec"], "containers": [{"name": "app", "image": "x:2"}]}},
    )
    env.create_pod("marker")  # the worker handles events in order: once this runs...
    env.wait_pod("marker", is_ready)
    assert phase(env.pod("job") or {}) == want_phase  # ...the job was seen and left alone


def test_fail_annotation_on_running_pod(env: Env) -> None:
    env.wait_pod(env.create_pod("doomed")["metadata"]["name"], is_ready)
    env.store.mutate(
        env.pods,
        NS,
        "doomed",
        lambda p: {**p, "metadata": {**p["metadata"], "annotations": {ANNOTATION_FAIL: "true"}}},
    )
    pod = env.wait_pod("doomed", lambda p: phase(p) == "Failed")
    assert container(pod)["state"]["terminated"]["exitCode"] == 1


def test_ready_after_annotation_overrides_setting(env: Env) -> None:
    env.kubelet.settings.ready_after = 30.0
    env.create_pod("slow", annotations={ANNOTATION_READY_AFTER: "30"})
    env.create_pod("quick", annotations={ANNOTATION_READY_AFTER: "0.01"})
    env.wait_pod("quick", is_ready)
    slow = env.wait_pod("slow", lambda p: bool(status(p).get("containerStatuses")))
    assert phase(slow) == "Pending" and slow["spec"]["nodeName"] == DEFAULT_NODE_NAME


def test_crash_loop(env: Env) -> None:
    env.create_pod("crashy", annotations={ANNOTATION_CRASH_LOOP: "true"})
    pod = env.wait_pod("crashy", lambda p: phase(p) == "Running")
    assert container(pod)["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    pod = env.wait_pod("crashy", lambda p: container(p)["restartCount"] >= 3, "restarts")
    cs = container(pod)
    assert phase(pod) == "Running" and not is_ready(pod)
    assert cs["ready"] is False and cs["lastState"]["terminated"]["exitCode"] == 1
    assert not any(is_ready(p) for p in env.pod_history("crashy"))


# ----------------------------------------------------------------------- scheduling


def test_unschedulable_pods_wait_for_the_node(env: Env) -> None:
    env.create_pod("picky", nodeSelector={"disk": "ssd"})
    env.create_pod("other", schedulerName="my-scheduler")
    pod = env.wait_pod("picky", lambda p: cond_status(p, "PodScheduled") == "False")
    assert (condition(pod, "PodScheduled") or {})["reason"] == "Unschedulable"
    assert not pod["spec"].get("nodeName")

    def label(n: Obj) -> Obj:
        n["metadata"]["labels"]["disk"] = "ssd"
        return n

    env.store.mutate(env.nodes, None, DEFAULT_NODE_NAME, label)
    env.wait_pod("picky", is_ready, "scheduled after labelling the node")
    other = env.pod("other")
    assert other is not None and not other["spec"].get("nodeName")


def test_cordoned_node(env: Env) -> None:
    def cordon(value: bool) -> Callable[[Obj], Obj]:
        def fn(n: Obj) -> Obj:
            n["spec"]["unschedulable"] = value
            return n

        return fn

    env.store.mutate(env.nodes, None, DEFAULT_NODE_NAME, cordon(True))
    env.create_pod("waiting")
    env.wait_pod("waiting", lambda p: cond_status(p, "PodScheduled") == "False")
    env.store.mutate(env.nodes, None, DEFAULT_NODE_NAME, cordon(False))
    env.wait_pod("waiting", is_ready)


# ----------------------------------------------------------------------------- PVCs


def test_pvc_is_bound(env: Env) -> None:
    created = env.store.create(
        env.pvcs,
        NS,
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    ).obj

    def bound() -> Obj | None:
        pvc = env.store.get(env.pvcs, NS, "data").obj
        return pvc if (pvc.get("status") or {}).get("phase") == "Bound" else None

    pvc = wait_for(bound, what="PVC bound")
    assert pvc["spec"]["volumeName"] == f"pvc-{created['metadata']['uid']}"
    assert pvc["status"]["accessModes"] == ["ReadWriteOnce"]
    assert pvc["status"]["capacity"] == {"storage": "1Gi"}


def test_grown_claim_is_resized_once_a_running_pod_mounts_it(env: Env) -> None:
    classes = env.store.registry.by_key("storage.k8s.io", "storageclasses")
    assert classes is not None
    sc = {"metadata": {"name": "expandable"}, "provisioner": "x", "allowVolumeExpansion": True}
    env.store.create(classes, None, sc)
    spec = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "expandable",
        "resources": {"requests": {"storage": "1Gi"}},
    }
    env.store.create(env.pvcs, NS, {"metadata": {"name": "grow"}, "spec": spec})

    def claim() -> Obj:
        return env.store.get(env.pvcs, NS, "grow").obj

    def types(pvc: Obj) -> list[str]:
        return [c["type"] for c in (pvc.get("status") or {}).get("conditions", [])]

    wait_for(lambda: (claim().get("status") or {}).get("phase") == "Bound", what="bound")

    def grow(p: Obj) -> Obj:
        p["spec"]["resources"]["requests"]["storage"] = "2Gi"
        return p

    env.store.mutate(env.pvcs, NS, "grow", grow)
    pending = wait_for(
        lambda: claim() if types(claim()) == ["FileSystemResizePending"] else None,
        what="file system resize pending",
    )
    assert pending["status"]["capacity"] == {"storage": "1Gi"}
    assert any(
        [c["type"] for c in (p.get("status") or {}).get("conditions", [])] == ["Resizing"]
        for p in (e.new.obj for e in env.events if e.info.plural == "persistentvolumeclaims")
    )
    # no pod mounts it: it stays pending; a running pod mounting it completes the resize
    env.create_pod("user", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "grow"}}])
    env.wait_pod("user", is_ready)
    done = wait_for(
        lambda: claim() if claim()["status"]["capacity"] == {"storage": "2Gi"} else None,
        what="resized",
    )
    assert types(done) == []


# ------------------------------------------------------------------------ lifecycle


def test_new_kubelet_adopts_existing_pods(env: Env) -> None:
    running = env.wait_pod(env.create_pod("before")["metadata"]["name"], is_ready)
    env.kubelet.stop()
    env.create_pod("while-down")
    successor = Kubelet(env.store, ready_after=0.01)
    successor.start()
    try:
        env.wait_pod("while-down", is_ready)
        pod = env.pod("before")
        assert pod is not None and status(pod)["podIP"] == status(running)["podIP"]
        assert status(env.pod("while-down") or {})["podIP"] != status(running)["podIP"]
        env.store.delete(env.pods, NS, "before")
        wait_for(lambda: env.pod("before") is None, what="adopted pod deleted")
    finally:
        successor.stop()


def test_stop_is_prompt_with_timers_pending(env: Env) -> None:
    env.kubelet.settings.ready_after = 60.0
    env.create_pod("parked")
    env.wait_pod("parked", lambda p: phase(p) == "Pending" and bool(p["spec"].get("nodeName")))
    threads = list(env.kubelet._threads)
    assert threads
    started = time.monotonic()
    env.kubelet.stop()
    assert time.monotonic() - started < 0.5
    # Only this kubelet's threads: a session-wide embedded cluster may run its own kubelet.
    assert not any(t.is_alive() for t in threads)


def test_claim_status_asks_whether_it_is_mounted_only_while_its_resize_waits() -> None:
    """Whether a running pod mounts a claim scans the namespace's pods: asked only for a claim
    in FileSystemResizePending, never on the other claim syncs (pods x claims otherwise)."""
    from kube_runtime.envtest.kubelet.simulator import FS_RESIZE_PENDING, _pvc_status

    def never() -> bool:
        raise AssertionError("asked whether the claim is mounted")

    bound = {
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}},
    }
    assert _pvc_status(bound, "t", never)["capacity"] == {"storage": "1Gi"}
    waiting = {
        "spec": {"resources": {"requests": {"storage": "2Gi"}}},
        "status": {
            "phase": "Bound",
            "capacity": {"storage": "1Gi"},
            "conditions": [{"type": FS_RESIZE_PENDING, "status": "True"}],
        },
    }
    asked: list[bool] = []
    assert _pvc_status(waiting, "t", lambda: asked.append(True) or True)["capacity"] == {
        "storage": "2Gi"
    }
    assert asked == [True]
    assert _pvc_status(waiting, "t", lambda: False)["capacity"] == {"storage": "1Gi"}
