"""The cost curve (issue 19 part 4): ``python -m bench scale`` converges N pods for growing N,
with the embedded API server (and its simulated kubelet) in one process and the controllers
(``kube-runtime run statefulset cloneset``) in another, as they run against a cluster.

Workloads of 10 pods each (N / 10 of them): apps/v1 StatefulSets (Parallel) without and with a
volumeClaimTemplate, and CloneSets. For each N it reports the wall time from the first create
until every pod is ready, the controller process's CPU time (``/proc/PID/stat``) and peak RSS
(``VmHWM``), its API writes (``rest_client_requests_total`` from its ``/metrics``, every
method but GET), and the server process's CPU time; then the growth of CPU and writes per pod
per 10x. Sizes: 100, 1,000, 5,000 and 10,000 pods (``--quick``: 100 and 500).

``scale-sts-real`` draws the StatefulSet curve on kube-apiserver 1.20 instead (etcd,
kube-apiserver and kube-controller-manager with its garbage-collector, namespace and
pvc-protection controllers, from ``scripts/real-apiserver.sh``), the simulated kubelet
(``kube-runtime kubelet``) and our controller each in a process of its own; "server CPU" is
then kube-apiserver's plus etcd's. Without the binaries it is skipped with a note.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from bench.embedded_server import Context, log
from kube_runtime.client import Client

FULL_PODS = (100, 1_000, 5_000, 10_000)
QUICK_PODS = (100, 500)
PODS_PER_SET = 10
DEADLINE = 600.0
_TICKS = os.sysconf("SC_CLK_TCK")
_NAMESPACE = "bench"
_METRIC = re.compile(r"^rest_client_requests_total\{([^}]*)\}\s+([0-9.e+]+)$")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _writes(metrics_port: int) -> int:
    """The controller's API writes so far (every request method but GET)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    total = 0.0
    for line in text.splitlines():
        match = _METRIC.match(line)
        if match and 'method="GET"' not in match.group(1):
            total += float(match.group(2))
    return int(total)


def _wait(what: str, check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


_CLI: Final = (sys.executable, "-m", "kube_runtime.cli")
"""``kube-runtime``, run by this interpreter."""


def _start_server(kubeconfig: Path, out: IO[bytes]) -> subprocess.Popen[bytes]:
    """``kube-runtime cluster`` (the embedded API server; pods ready at once, no auth) in a
    process of its own, returned once it answers ``/healthz`` and has written ``kubeconfig``."""
    port = _free_port()
    server = subprocess.Popen(
        [
            *_CLI,
            "cluster",
            f"--port={port}",
            f"--kubeconfig={kubeconfig}",
            "--no-auth",
            "--pod-ready-after=0",
        ],
        stdout=out,
        stderr=out,
    )
    _wait("the server", lambda: _up(f"http://127.0.0.1:{port}/healthz"), 60)
    _wait("the kubeconfig", kubeconfig.exists, 10)
    return server


def _manager_flags(kubeconfig: Path, metrics_port: int, health_port: int) -> list[str]:
    """The flags of every controller process here: its cluster, namespace and ports."""
    return [
        f"--kubeconfig={kubeconfig}",
        f"--namespace={_NAMESPACE}",
        f"--metrics-port={metrics_port}",
        f"--health-port={health_port}",
    ]


def _controllers_command(kubeconfig: Path, metrics_port: int, health_port: int) -> list[str]:
    """``kube-runtime run statefulset cloneset``, installing the CRDs and no webhooks (several
    replicas on one machine would share the webhook port)."""
    return [
        *_CLI,
        "run",
        "statefulset",
        "cloneset",
        "--install-crds",
        "--no-install-webhooks",
        *_manager_flags(kubeconfig, metrics_port, health_port),
    ]


def _template(name: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


def statefulset(claims: bool) -> Callable[[str], dict[str, Any]]:
    """A maker of apps/v1 Parallel StatefulSets of 10, with a claim template or not."""

    def make(name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "replicas": PODS_PER_SET,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": _template(name),
        }
        if claims:
            spec["volumeClaimTemplates"] = [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ]
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": _NAMESPACE},
            "spec": spec,
        }

    return make


def cloneset(name: str) -> dict[str, Any]:
    """A CloneSet of 10."""
    return {
        "apiVersion": "apps.kube-runtime.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": _NAMESPACE},
        "spec": {
            "replicas": PODS_PER_SET,
            "selector": {"matchLabels": {"app": name}},
            "template": _template(name),
        },
    }


@dataclass
class Run:
    """One workload at one size."""

    pods: int
    wall: float
    controller_cpu: float
    server_cpu: float
    writes: int
    peak_rss_mb: float


def _stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each process in order, SIGKILL what has not exited after 15 s."""
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Processes:
    """The server and the controllers, each in its own process; stopped on exit."""

    def __init__(self, workdir: Path) -> None:
        self.kubeconfig = workdir / "kubeconfig"
        self.metrics_port = _free_port()
        self.health_port = _free_port()
        out = (workdir / "log").open("ab")
        self.server = _start_server(self.kubeconfig, out)
        self.controllers = subprocess.Popen(
            _controllers_command(self.kubeconfig, self.metrics_port, self.health_port),
            stdout=out,
            stderr=out,
        )
        _wait(
            "the controllers (caches synced)",
            lambda: _up(f"http://127.0.0.1:{self.health_port}/readyz"),
            60,
        )

    def server_cpu(self) -> float:
        return _cpu_seconds(self.server.pid)

    def stop(self) -> None:
        _stop_all([self.controllers, self.server])


class RealProcesses:
    """kube-apiserver 1.20 (:class:`~kube_runtime.envtest.real.RealCluster`), the simulated
    kubelet and our StatefulSet controller, each in its own process; stopped on exit."""

    def __init__(self, workdir: Path) -> None:
        from kube_runtime.envtest.real import RealCluster

        self.metrics_port = _free_port()
        self.health_port = _free_port()
        self.cluster = RealCluster(
            controllers=("garbagecollector", "namespace", "pvc-protection"), kubelet=False
        ).start()
        self.children: list[subprocess.Popen[bytes]] = []
        try:
            self.kubeconfig = self.cluster.write_kubeconfig(workdir / "kubeconfig")
            out = (workdir / "log").open("ab")
            kubelet = [*_CLI, "kubelet", f"--kubeconfig={self.kubeconfig}", "--pod-ready-after=0"]
            self.children.append(subprocess.Popen(kubelet, stdout=out, stderr=out))
            self.controllers = subprocess.Popen(
                [
                    *_CLI,
                    "run",
                    "statefulset",
                    *_manager_flags(self.kubeconfig, self.metrics_port, self.health_port),
                ],
                stdout=out,
                stderr=out,
            )
            self.children.append(self.controllers)
            _wait(
                "the controller (caches synced)",
                lambda: _up(f"http://127.0.0.1:{self.health_port}/readyz"),
                60,
            )
        except BaseException:
            self.stop()
            raise

    def server_cpu(self) -> float:
        pids = self.cluster.pids()
        return sum(_cpu_seconds(pids[name]) for name in ("kube-apiserver", "etcd") if name in pids)

    def stop(self) -> None:
        _stop_all(list(reversed(self.children)))
        self.cluster.stop()


def _ready(client: Client, kind: str) -> int:
    listed = client.request("GET", kind)
    return sum(int((o.get("status") or {}).get("readyReplicas") or 0) for o in listed["items"])


def converge(make: Callable[[str], dict[str, Any]], pods: int, *, real: bool = False) -> Run:
    """Create ``pods / 10`` workloads from ``make`` on fresh processes (kube-apiserver 1.20
    with ``real``) and wait until every pod is ready."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        procs: Processes | RealProcesses = (RealProcesses if real else Processes)(Path(tmp))
        try:
            client = Client.from_kubeconfig(str(procs.kubeconfig))
            client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": _NAMESPACE}}
            )
            sample = make("probe")
            group_version = sample["apiVersion"]
            base = "/api/" if "/" not in group_version else "/apis/"
            plural = "statefulsets" if sample["kind"] == "StatefulSet" else "clonesets"
            path = f"{base}{group_version}/namespaces/{_NAMESPACE}/{plural}"
            cpu0 = _cpu_seconds(procs.controllers.pid)
            server0 = procs.server_cpu()
            writes0 = _writes(procs.metrics_port)
            started = time.perf_counter()
            for i in range(pods // PODS_PER_SET):
                client.create(make(f"w{i}"))
            _wait(f"{pods} ready pods", lambda: _ready(client, path) >= pods, DEADLINE)
            wall = time.perf_counter() - started
            time.sleep(1.0)  # trailing status writes of the last sets
            run = Run(
                pods=pods,
                wall=wall,
                controller_cpu=_cpu_seconds(procs.controllers.pid) - cpu0,
                server_cpu=procs.server_cpu() - server0,
                writes=_writes(procs.metrics_port) - writes0,
                peak_rss_mb=_peak_rss_mb(procs.controllers.pid),
            )
            client.close()
            return run
        finally:
            procs.stop()


def _curve(
    ctx: Any, title: str, make: Callable[[str], dict[str, Any]], *, real: bool = False
) -> None:
    quick = getattr(ctx, "controllers", None) is not None and ctx.controllers.parallel_sets <= 20
    sizes = QUICK_PODS if quick else FULL_PODS
    table = ctx.table(
        "scale",
        title,
        "pods | wall s | controller CPU s | CPU ms/pod | writes/pod | controller peak RSS MB | "
        "server CPU s",
    )
    runs: list[Run] = []
    for pods in sizes:
        log(f"{title}: {pods} pods")
        run = converge(make, pods, real=real)
        runs.append(run)
        table.add(
            run.pods,
            f"{run.wall:.1f}",
            f"{run.controller_cpu:.1f}",
            f"{1000 * run.controller_cpu / run.pods:.2f}",
            f"{run.writes / run.pods:.2f}",
            f"{run.peak_rss_mb:.0f}",
            f"{run.server_cpu:.1f}",
        )
    by_size = {r.pods: r for r in runs}
    for low, high in [(100, 500)] if quick else [(100, 1_000), (1_000, 10_000)]:
        a, b = by_size.get(low), by_size.get(high)
        if a is None or b is None:
            continue
        cpu = (b.controller_cpu / b.pods) / (a.controller_cpu / a.pods)
        writes = (b.writes / b.pods) / (a.writes / a.pods)
        table.notes.append(
            f"Growth from {low:,} to {high:,} pods: CPU per pod x{cpu:.2f}, "
            f"writes per pod x{writes:.2f}."
        )


def scenario_scale_sts(ctx: Context) -> None:
    _curve(ctx, "scale: StatefulSets of 10 (Parallel), no claims", statefulset(False))


def scenario_scale_sts_claims(ctx: Context) -> None:
    _curve(ctx, "scale: StatefulSets of 10 (Parallel), one claim template", statefulset(True))


def scenario_scale_cloneset(ctx: Context) -> None:
    _curve(ctx, "scale: CloneSets of 10", cloneset)


def scenario_scale_sts_real(ctx: Context) -> None:
    from kube_runtime.envtest.real import missing_binaries

    title = "scale: StatefulSets of 10 (Parallel), no claims, on kube-apiserver 1.20"
    missing = missing_binaries()
    if missing:
        table = ctx.table("scale", title, "pods | note")
        table.add("-", f"skipped: missing {', '.join(missing)} (bash scripts/real-apiserver.sh)")
        return
    _curve(ctx, title, statefulset(False), real=True)


SCENARIOS: dict[str, Callable[[Any], None]] = {
    "scale-sts": scenario_scale_sts,
    "scale-sts-claims": scenario_scale_sts_claims,
    "scale-cloneset": scenario_scale_cloneset,
    "scale-sts-real": scenario_scale_sts_real,
}
