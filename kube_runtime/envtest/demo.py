"""The quick-start demo: an embedded cluster, seen through the official client.

It starts the cluster, creates pods and follows them through the simulated kubelet's
lifecycle (Pending -> Running -> Ready), changes one pod's image and watches the container
restart in place, deletes the pods gracefully, and prints a summary. Exits 0 when every step
converged, 1 (with what was awaited) otherwise.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kubernetes import client

from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.waiting import WaitTimeout, wait_for

NAMESPACE = "demo"
PODS = ("web-0", "web-1", "web-2")


def _pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
    }


def _line(core: Any) -> str:
    pods = core.list_namespaced_pod(NAMESPACE, label_selector="app=web").items
    cells = []
    for p in pods:
        statuses = p.status.container_statuses or []
        ready = all(s.ready for s in statuses) and bool(statuses)
        restarts = sum(s.restart_count for s in statuses)
        image = statuses[0].image if statuses else p.spec.containers[0].image
        cells.append(
            f"{p.metadata.name}:{p.status.phase}{'/Ready' if ready else ''} {image} r={restarts}"
        )
    return " | ".join(cells) or "(no pods)"


def _step(title: str, core: Any, predicate: Any, timeout: float = 20.0) -> None:
    print(f"==> {title}", flush=True)
    last = ""
    start = time.monotonic()

    def check() -> bool:
        nonlocal last
        line = _line(core)
        if line != last:
            print(f"    [{time.monotonic() - start:5.2f}s] {line}", flush=True)
            last = line
        return bool(predicate())

    wait_for(check, timeout=timeout, interval=0.05, message=title)


def run_demo(*, serve: bool = False, kubeconfig: Path | None = None, port: int = 0) -> int:
    cluster = EmbeddedCluster(port=port, token=EmbeddedCluster.new_token(), pod_ready_after=0.3)
    cluster.kubelet.settings.restart_delay = 0.3
    cluster.start()
    began = time.monotonic()
    try:
        path = cluster.write_kubeconfig(kubeconfig or Path("kubeconfig.embedded"))
        print(f"embedded cluster on {cluster.url} (kubeconfig: {path})", flush=True)
        api = cluster.api_client()
        core: Any = client.CoreV1Api(api)  # untyped use: the demo passes plain dicts
        core.create_namespace({"metadata": {"name": NAMESPACE}})
        for name in PODS:
            core.create_namespaced_pod(NAMESPACE, _pod(name))

        def all_ready() -> bool:
            pods = core.list_namespaced_pod(NAMESPACE).items
            return len(pods) == len(PODS) and all(
                any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
                for p in pods
            )

        _step("pods scheduled, started and Ready", core, all_ready)
        before = core.read_namespaced_pod("web-1", NAMESPACE)
        core.patch_namespaced_pod(
            "web-1", NAMESPACE, {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.26"}]}}
        )

        def restarted() -> bool:
            p = core.read_namespaced_pod("web-1", NAMESPACE)
            s = (p.status.container_statuses or [None])[0]
            return bool(s and s.image == "nginx:1.26" and s.ready and s.restart_count == 1)

        _step("image change on web-1 restarts its container in place", core, restarted)
        after = core.read_namespaced_pod("web-1", NAMESPACE)
        same = (
            after.metadata.uid == before.metadata.uid
            and after.status.pod_ip == before.status.pod_ip
        )
        print(f"    web-1 kept its UID and IP: {same}", flush=True)
        for name in PODS:
            core.delete_namespaced_pod(name, NAMESPACE)
        _step(
            "graceful deletion completes",
            core,
            lambda: not core.list_namespaced_pod(NAMESPACE).items,
        )
        print(
            f"demo converged in {time.monotonic() - began:.1f}s: {len(PODS)} pods created, 1 in-place restart, "
            f"{len(PODS)} deleted",
            flush=True,
        )
        api.close()
        if serve:
            from kube_runtime.envtest.cli import serve_until_signal

            serve_until_signal(cluster, path)
        return 0 if same else 1
    except WaitTimeout as e:
        print(f"demo failed: {e}", flush=True)
        return 1
    finally:
        cluster.stop()
