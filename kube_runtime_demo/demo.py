"""The quick start's demo: the bundled StatefulSet controller on a fresh embedded cluster.

``make run`` (= ``kube-runtime demo``) starts an embedded cluster, runs the StatefulSet and
CloneSet controllers in one manager, applies ``examples/statefulset.yaml`` (3 replicas, one
volumeClaimTemplate) and drives it through a scale-up, a rolling image update and a
scale-down, then applies ``examples/cloneset.yaml`` and updates its image in place, printing
the pods (phase, readiness, revision, restarts) as they change. It ends with a summary of
what the controllers did, in the order a watch saw it, and exits 0 once every step converged
(1 with what was awaited otherwise).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from kube_runtime import clock as _clock
from kube_runtime import kinds, metrics
from kube_runtime.client import Client, NotFound
from kube_runtime.entrypoints import Command
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.waiting import WaitTimeout, wait_for
from kube_runtime.manager import Manager

NAMESPACE = "demo"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MANIFEST = EXAMPLES / "statefulset.yaml"
CLONESET_MANIFEST = EXAMPLES / "cloneset.yaml"
ADVANCED_MANIFEST = EXAMPLES / "advanced-statefulset.yaml"
ADVANCED = "apps.kube-runtime.io/v1beta1/StatefulSet"


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _rolled_out(
    client: Client, kind: str, name: str, selector: str, image: str
) -> Callable[[], bool]:
    """A check: workload ``kind``/``name`` observed its spec and its 3 pods (``selector``) are
    all updated, ready and running ``image``."""

    def check() -> bool:
        obj = client.get(kind, name, NAMESPACE)
        status = obj.get("status") or {}
        pods = client.list(kinds.Pod, NAMESPACE, label_selector=selector)["items"]
        return bool(
            status.get("observedGeneration") == obj["metadata"]["generation"]
            and status.get("updatedReadyReplicas") == 3 == status.get("readyReplicas")
            and len(pods) == 3
            and all(
                _ready(p) and all(c.get("image") == image for c in p["status"]["containerStatuses"])
                for p in pods
            )
        )

    return check


class _Progress:
    """Prints one line per change of the pods' state, with the time since the step began."""

    def __init__(self, client: Client, selector: str) -> None:
        self.client = client
        self.selector = selector
        self.last = ""

    def line(self) -> str:
        pods = self.client.list(kinds.Pod, NAMESPACE, label_selector=self.selector)["items"]
        cells = []
        for p in sorted(pods, key=lambda p: p["metadata"]["name"]):
            meta, status = p["metadata"], p.get("status") or {}
            revision = (meta.get("labels") or {}).get("controller-revision-hash", "?")
            image = p["spec"]["containers"][0]["image"]
            state = "Terminating" if meta.get("deletionTimestamp") else status.get("phase", "-")
            restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])
            cells.append(
                f"{meta['name']}:{state}{'/Ready' if _ready(p) else ''} {image} "
                f"rev={revision[-5:]} r={restarts}"
            )
        return " | ".join(cells) or "(no pods)"

    def step(self, title: str, done: Callable[[], bool], timeout: float = 60.0) -> None:
        print(f"==> {title}", flush=True)
        start = _clock.current().monotonic()

        def check() -> bool:
            line = self.line()
            if line != self.last:
                print(f"    [{_clock.current().monotonic() - start:5.2f}s] {line}", flush=True)
                self.last = line
            return done()

        wait_for(check, timeout=timeout, interval=0.05, message=title)


class _Recorder:
    """Records pod creations and deletions as a watch sees them (the controller's order)."""

    def __init__(self, client: Client, resource_version: str, prefix: str = "web-") -> None:
        self.events: list[str] = []
        self.prefix = prefix
        self._watch = client.watch(kinds.Pod, NAMESPACE, resource_version=resource_version)
        self._thread = threading.Thread(target=self._run, name="demo-recorder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for event in self._watch:
            if event.type in ("ADDED", "DELETED") and event.object["metadata"]["name"].startswith(
                self.prefix
            ):
                verb = "create" if event.type == "ADDED" else "delete"
                self.events.append(f"{verb} {event.object['metadata']['name']}")

    def close(self) -> None:
        self._watch.close()


def _sts(client: Client) -> dict[str, Any]:
    return client.get(kinds.StatefulSet, "web", NAMESPACE)


def _converged(client: Client, replicas: int) -> Callable[[], bool]:
    def check() -> bool:
        sts = _sts(client)
        status = sts.get("status") or {}
        return bool(
            status.get("observedGeneration") == sts["metadata"]["generation"]
            and status.get("replicas") == replicas
            and status.get("readyReplicas", 0) == replicas
            and status.get("updatedReplicas", 0) == replicas
            and status.get("currentRevision") == status.get("updateRevision")
            and len(client.list(kinds.Pod, NAMESPACE, label_selector="app=web")["items"])
            == replicas
        )

    return check


def run_demo(*, serve: bool = False, kubeconfig: Path | None = None, port: int = 0) -> int:
    """Run the demo; see the module docstring. Returns the process exit code."""
    cluster = EmbeddedCluster(port=port, token=EmbeddedCluster.new_token(), pod_ready_after=0.2)
    cluster.start()
    began = _clock.current().monotonic()
    manager: Manager | None = None
    manager_thread: threading.Thread | None = None
    recorder: _Recorder | None = None
    try:
        path = cluster.write_kubeconfig(
            kubeconfig or Path(tempfile.mkdtemp(prefix="kube-runtime-")) / "kubeconfig"
        )
        print(f"embedded cluster on {cluster.url} (kubeconfig: {path})", flush=True)
        client = Client.from_kubeconfig(str(path))
        manager = Manager(client, metrics_bind_address="0")
        from controllers import cloneset, statefulset

        statefulset.install_crd(client)
        statefulset.setup(manager, max_concurrent_reconciles=2, enhanced=True)
        cloneset.install_crd(client)
        cloneset.setup(manager, max_concurrent_reconciles=2)
        manager_thread = threading.Thread(target=manager.start, name="manager", daemon=True)
        manager_thread.start()
        print("StatefulSet (apps/v1 and enhanced) and CloneSet controllers running", flush=True)

        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        rv = client.list(kinds.Pod, NAMESPACE)["metadata"]["resourceVersion"]
        recorder = _Recorder(client, rv)
        requests_before = _api_writes()
        for doc in yaml.safe_load_all(MANIFEST.read_text()):
            client.create(doc, namespace=NAMESPACE)
        print(f"applied {MANIFEST.name}: Service web, StatefulSet web (replicas 3)", flush=True)
        progress = _Progress(client, "app=web")

        progress.step("scale up 0 -> 3 (OrderedReady: one pod at a time)", _converged(client, 3))
        first_revision = _sts(client)["status"]["currentRevision"]
        client.patch(
            kinds.StatefulSet,
            "web",
            {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.26"}]}}
                }
            },
            namespace=NAMESPACE,
            patch_type="strategic",
        )
        progress.step("rolling update to nginx:1.26 (highest ordinal first)", _converged(client, 3))
        second_revision = _sts(client)["status"]["currentRevision"]
        client.patch(kinds.StatefulSet, "web", {"spec": {"replicas": 1}}, namespace=NAMESPACE)
        progress.step("scale down 3 -> 1 (highest ordinal first)", _converged(client, 1))

        in_place = _cloneset_in_place(client)
        advanced = _advanced_statefulset(client)

        claims = sorted(
            c["metadata"]["name"]
            for c in client.list(kinds.PersistentVolumeClaim, NAMESPACE, label_selector="app=web")[
                "items"
            ]
        )
        revisions = client.list(kinds.ControllerRevision, NAMESPACE, label_selector="app=web")[
            "items"
        ]
        recorder.close()
        print("==> summary", flush=True)
        print(f"    pod operations seen by a watch: {', '.join(recorder.events)}", flush=True)
        print(
            f"    revisions: {first_revision} -> {second_revision} ({len(revisions)} kept)",
            flush=True,
        )
        print(f"    PVCs (kept after scale-down): {', '.join(claims)}", flush=True)
        print(f"    CloneSet in-place update: {in_place}", flush=True)
        print(f"    enhanced StatefulSet: {advanced}", flush=True)
        print(
            f"    API writes by the demo and controller: {_api_writes() - requests_before:.0f}",
            flush=True,
        )
        print(f"demo converged in {_clock.current().monotonic() - began:.1f}s", flush=True)
        if serve:
            from kube_runtime.envtest.cli import serve_until_signal

            serve_until_signal(cluster, path)
        return 0
    except WaitTimeout as e:
        print(f"demo failed: {e}", flush=True)
        return 1
    finally:
        if recorder is not None:
            recorder.close()
        if manager is not None:
            manager.stop()
        if manager_thread is not None:
            manager_thread.join(30)
        cluster.stop()


def _cloneset_in_place(client: Client) -> str:
    """Apply the CloneSet example, update its image in place; describe what stayed the same."""
    doc = yaml.safe_load(CLONESET_MANIFEST.read_text())
    client.create(doc, namespace=NAMESPACE)
    print(f"applied {CLONESET_MANIFEST.name}: CloneSet cache (replicas 3, InPlaceIfPossible)")
    progress = _Progress(client, "app=cache")
    kind = "apps.kube-runtime.io/v1alpha1/CloneSet"

    def converged(image: str) -> Callable[[], bool]:
        return _rolled_out(client, kind, "cache", "app=cache", image)

    def identities() -> dict[str, tuple[str, str]]:
        pods = client.list(kinds.Pod, NAMESPACE, label_selector="app=cache")["items"]
        return {
            p["metadata"]["name"]: (p["metadata"]["uid"], p["status"].get("podIP", ""))
            for p in pods
        }

    progress.step("CloneSet scale up 0 -> 3", converged("redis:7.0"))
    before = identities()
    client.patch(
        kind,
        "cache",
        {"spec": {"template": {"spec": {"containers": [{"name": "redis", "image": "redis:7.2"}]}}}},
        namespace=NAMESPACE,
    )
    progress.step("CloneSet in-place update to redis:7.2 (same pods, containers restart)",
                  converged("redis:7.2"))  # fmt: skip
    after = identities()
    kept = before == after
    return (
        f"{len(after)} pods kept their names, UIDs and IPs"
        if kept
        else f"pods changed: {sorted(before)} -> {sorted(after)}"
    )


def _advanced_statefulset(client: Client) -> str:
    """Apply the enhanced StatefulSet, update its image in place, then delete it (ordered
    teardown); describe what happened."""
    client.create(yaml.safe_load(ADVANCED_MANIFEST.read_text()), namespace=NAMESPACE)
    print(f"applied {ADVANCED_MANIFEST.name}: enhanced StatefulSet db (replicas 3, in place)")
    progress = _Progress(client, "app=db")

    def pods() -> list[dict[str, Any]]:
        return client.list(kinds.Pod, NAMESPACE, label_selector="app=db")["items"]

    def converged(image: str) -> Callable[[], bool]:
        return _rolled_out(client, ADVANCED, "db", "app=db", image)

    progress.step("enhanced StatefulSet scale up 0 -> 3 (Parallel)", converged("postgres:15"))
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods()}
    # A JSON patch of just the image: a merge patch would replace the whole containers list
    # (dropping volumeMounts), which is a change no in-place update can apply.
    image = [
        {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "postgres:16"}
    ]
    client.patch(ADVANCED, "db", image, namespace=NAMESPACE, patch_type="json")
    progress.step("enhanced StatefulSet in-place update to postgres:16", converged("postgres:16"))
    after = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods()}
    restarts = sorted(
        sum(c.get("restartCount", 0) for c in p["status"]["containerStatuses"]) for p in pods()
    )
    rv = client.list(kinds.Pod, NAMESPACE)["metadata"]["resourceVersion"]
    recorder = _Recorder(client, rv, prefix="db-")
    client.delete(ADVANCED, "db", NAMESPACE)

    def gone() -> bool:
        try:
            client.get(ADVANCED, "db", NAMESPACE)
            return False
        except NotFound:
            return True

    progress.step("delete: ordered teardown, highest ordinal first", gone)
    recorder.close()
    deletions = [e.split()[1] for e in recorder.events if e.startswith("delete ")]
    same = "kept their names and UIDs" if before == after else "were replaced"
    return (
        f"in place: {len(after)} pods {same}, restarts {restarts}; "
        f"teardown deleted {', '.join(deletions)} before the set"
    )


def _api_writes() -> float:
    """POST/PUT/PATCH/DELETE requests counted by the client metrics so far."""
    total = 0.0
    for family in metrics.REST_REQUESTS.collect():
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.labels.get("method") in (
                "POST", "PUT", "PATCH", "DELETE"
            ):  # fmt: skip
                total += sample.value
    return total


def _demo_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kube-runtime demo",
        description="The quick start's demo on a fresh embedded cluster.",
    )
    p.add_argument("--serve", action="store_true", help="keep serving after the demo (for kubectl)")
    p.add_argument("--pods", action="store_true", help="the pod-lifecycle demo (no controller)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--kubeconfig", help="where to write the kubeconfig (default: a temp dir)")
    return p


def demo_main(argv: Sequence[str]) -> int:
    """``kube-runtime demo [--pods] [--serve] [--port N] [--kubeconfig PATH]``; exit code."""
    args = _demo_parser().parse_args(list(argv))
    kubeconfig = Path(args.kubeconfig) if args.kubeconfig else None
    if args.pods:
        from kube_runtime.envtest.demo import run_demo as run_pods_demo

        return run_pods_demo(serve=args.serve, kubeconfig=kubeconfig, port=args.port)
    return run_demo(serve=args.serve, kubeconfig=kubeconfig, port=args.port)


DEMO = Command(help="run the quick-start demo on a fresh embedded cluster", main=demo_main)
"""The ``kube-runtime demo`` command (entry point in the ``kube_runtime.commands`` group)."""
