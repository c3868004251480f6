"""Sharding (issue 20 part 4): ``python -m bench sharding`` converges the same workload with 1,
2 and 4 replicas of ``kube-runtime run statefulset cloneset --shards N``, the embedded API
server (and its simulated kubelet) in a process of its own and each replica in its own.

For each replica count it reports, per replica, what does not depend on the number of cores:
CPU seconds (``/proc/PID/stat``, from the first create until every pod is ready), the sets
assigned to it at the end (its shard label), watch events received by its controllers'
informers, reconciles, and objects cached at the end (``kube_runtime_informer_events_total``,
``controller_runtime_reconcile_total`` and ``kube_runtime_informer_objects`` from its
``/metrics``; the sharder's own metadata watches, labelled ``sharder:<kind>``, are counted
apart). The row "1 (off)" is one replica without
sharding, the baseline the goal (each of N replicas at most 1.1/N of it) refers to. Wall time
is reported too, but on 2 shared cores more processes do not mean more CPU.

Then the failover: with 4 replicas, every set's template changes (a rolling update) and one
replica that does not run the sharder is killed (SIGKILL) at once; reported: the time until
every set has rolled out, and the pods per set at the end (no duplicates).

The configuration "4 + sharder" runs the sharder in a fifth replica of its own
(``--sharder-only``; the shards ``--no-sharder``), so each shard's row is its share alone.

Sizes: 200 StatefulSets of 5 and 100 CloneSets of 10 (``--quick``: 40 of 5 and 20 of 10).

``sharding-cpu``: where the controller, not the API server, is the bottleneck. 400 ConfigMaps
rendered by :mod:`bench.cpu_replica` (about 20 ms of GIL-bound CPU per object, the same
calibrated work in every run) with 1 replica unsharded, then 1, 2 (also with the sharder
apart) and 4 sharded replicas: wall time until every object is rendered, each replica's CPU,
the server's CPU, and the speed-up of wall time over one replica (``--quick``: 80 objects).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.embedded_server import Context, log
from bench.scale import (
    _NAMESPACE,
    _controllers_command,
    _cpu_seconds,
    _free_port,
    _manager_flags,
    _start_server,
    _up,
    _wait,
)
from kube_runtime import kinds, meta
from kube_runtime.client import Client
from kube_runtime.sharding import RING_LABEL, shard_label

REPLICAS = (1, 2, 4)
LEASE = ("--lease-duration=4", "--renew-deadline=3", "--retry-period=0.5")
DEADLINE = 900.0
RING = "kube-runtime"
_LINE = re.compile(r"^([a-z_]+)\{([^}]*)\}\s+([0-9.e+-]+)$")


def _metrics(port: int) -> dict[str, float]:
    """Sums of the replica's metrics that the table reports."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out = dict.fromkeys(("events", "sharder_events", "reconciles", "objects"), 0.0)
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        name, labels, value = match.group(1), match.group(2), float(match.group(3))
        sharder = 'kind="sharder:' in labels
        if name == "kube_runtime_informer_events_total" and 'type="BOOKMARK"' not in labels:
            out["sharder_events" if sharder else "events"] += value
        elif name == "controller_runtime_reconcile_total":
            out["reconciles"] += value
        elif name == "kube_runtime_informer_objects" and not sharder:
            out["objects"] += value
    return out


@dataclass
class Replica:
    identity: str
    proc: subprocess.Popen[bytes]
    metrics_port: int
    cpu0: float = 0.0
    base: dict[str, float] = field(default_factory=dict)


class Cluster:
    """The server in one process, replicas in others; all stopped on exit."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.kubeconfig = workdir / "kubeconfig"
        self.out = (workdir / "log").open("ab")
        self.server = _start_server(self.kubeconfig, self.out)
        self.client = Client.from_kubeconfig(str(self.kubeconfig))
        self.client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": _NAMESPACE}}
        )
        self.replicas: list[Replica] = []

    def start(
        self,
        identity: str,
        shards: int | None,
        command: list[str] | None = None,
        extra: Sequence[str] = (),
    ) -> Replica:
        """Start a replica: ``kube-runtime run statefulset cloneset``, or ``command`` (which
        takes the same connection, identity, port and ``--shards`` flags); ``extra`` flags
        last (``--sharder-only``, ``--no-sharder``)."""
        metrics_port, health_port = _free_port(), _free_port()
        if command is not None:
            args = [*command, *_manager_flags(self.kubeconfig, metrics_port, health_port)]
            args.append(f"--identity={identity}")
        else:
            args = _controllers_command(self.kubeconfig, metrics_port, health_port)
            args += [f"--identity={identity}", f"--leader-election-namespace={_NAMESPACE}", *LEASE]
        if shards is not None:
            args.append(f"--shards={shards}")
        return self._spawn(identity, [*args, *extra], metrics_port, health_port)

    def _spawn(
        self, identity: str, args: list[str], metrics_port: int, health_port: int
    ) -> Replica:
        proc = subprocess.Popen(args, stdout=self.out, stderr=self.out)
        replica = Replica(identity, proc, metrics_port)
        _wait(f"{identity} up", lambda: _up(f"http://127.0.0.1:{health_port}/readyz"), 60)
        self.replicas.append(replica)
        return replica

    def ready_shards(self, ring: str = RING) -> set[str]:
        leases = self.client.list(kinds.Lease, _NAMESPACE, label_selector=f"{RING_LABEL}={ring}")[
            "items"
        ]
        return {
            meta.name(x)
            for x in leases
            if (x.get("spec") or {}).get("holderIdentity") == meta.name(x)
        }

    def sharder(self, ring: str = RING) -> str:
        try:
            lease = self.client.get(kinds.Lease, f"{ring}-sharder", _NAMESPACE)
        except Exception:
            return ""
        return str((lease.get("spec") or {}).get("holderIdentity") or "")

    def stop(self) -> None:
        for proc in [r.proc for r in self.replicas] + [self.server]:
            if proc.poll() is None:
                proc.terminate()
        for proc in [r.proc for r in self.replicas] + [self.server]:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.client.close()


def _workloads(kind: str, count: int, pods: int) -> tuple[str, Callable[[str], dict[str, Any]]]:
    template = {"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}

    def make(name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "replicas": pods,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, **template},
        }
        if kind == "StatefulSet":
            spec.update(serviceName=name, podManagementPolicy="Parallel")
            api = "apps/v1"
        else:
            api = "apps.kube-runtime.io/v1alpha1"
        return {
            "apiVersion": api,
            "kind": kind,
            "metadata": {"name": name, "namespace": _NAMESPACE},
            "spec": spec,
        }

    api = "apis/apps/v1" if kind == "StatefulSet" else "apis/apps.kube-runtime.io/v1alpha1"
    plural = "statefulsets" if kind == "StatefulSet" else "clonesets"
    return f"/{api}/namespaces/{_NAMESPACE}/{plural}", make


def _status_sum(client: Client, path: str, field_name: str) -> int:
    items = client.request("GET", path)["items"]
    return sum(int((o.get("status") or {}).get(field_name) or 0) for o in items)


def _rolled_out(client: Client, path: str, total: int) -> bool:
    items = client.request("GET", path)["items"]
    for o in items:
        status = o.get("status") or {}
        if status.get("observedGeneration") != meta.generation(o):
            return False
        want = int((o.get("spec") or {}).get("replicas") or 0)
        if (
            int(status.get("updatedReplicas") or 0) != want
            or int(status.get("readyReplicas") or 0) != want
        ):
            return False
    return bool(items) and _pods(client) == total


def _pods(client: Client) -> int:
    return len(client.list(kinds.Pod, _NAMESPACE)["items"])


SHARDER = "sharder"
"""The identity of the sharder-only replica (configurations "N + sharder")."""


def _start_replicas(
    cluster: Cluster,
    replicas: int,
    sharded: bool,
    apart: bool,
    ring: str = RING,
    command: list[str] | None = None,
) -> None:
    """Start a configuration: ``replicas`` shards (or one unsharded replica), and with
    ``apart`` a sharder-only replica too (the shards then run ``--no-sharder``)."""
    if apart:
        cluster.start(SHARDER, replicas, command, extra=("--sharder-only",))
    for i in range(replicas):
        extra = ("--no-sharder",) if apart else ()
        cluster.start(f"shard-{i}", replicas if sharded else None, command, extra=extra)
    if sharded:
        _wait("shards ready", lambda: len(cluster.ready_shards(ring)) == replicas, 60)
        _wait("the sharder", lambda: bool(cluster.sharder(ring)), 60)


def _held(cluster: Cluster, objects: list[Any], ring: str, sharded: bool) -> dict[str, int]:
    """Objects per replica identity: by their shard label, or all the single replica's."""
    key = shard_label(ring)
    held: dict[str, int] = {}
    for o in objects:
        shard = str(meta.labels(o).get(key) if sharded else cluster.replicas[0].identity)
        held[shard] = held.get(shard, 0) + 1
    return held


def _replica_name(cluster: Cluster, replica: Replica, sharded: bool, ring: str) -> str:
    """The replica's identity, marked when it holds the ring's sharder Lease."""
    runs_sharder = sharded and cluster.sharder(ring) == replica.identity
    return replica.identity + (" (sharder)" if runs_sharder else "")


def _label(replicas: int, sharded: bool, apart: bool) -> str:
    if not sharded:
        return "1 (off)"
    return f"{replicas} + sharder" if apart else f"{replicas}"


def _run(
    ctx: Any, kind: str, count: int, pods: int, replicas: int, sharded: bool, apart: bool = False
) -> list[tuple[Any, ...]]:
    """One convergence; rows of the table (one per replica)."""
    path, make = _workloads(kind, count, pods)
    with tempfile.TemporaryDirectory(prefix="bench-sharding-") as tmp:
        cluster = Cluster(Path(tmp))
        try:
            _start_replicas(cluster, replicas, sharded, apart)
            for r in cluster.replicas:
                r.cpu0 = _cpu_seconds(r.proc.pid)
                r.base = _metrics(r.metrics_port)
            started = time.perf_counter()
            for i in range(count):
                cluster.client.create(make(f"w{i}"))
            total = count * pods
            _wait(
                f"{total} ready pods",
                lambda: _status_sum(cluster.client, path, "readyReplicas") >= total,
                DEADLINE,
            )
            wall = time.perf_counter() - started
            time.sleep(2.0)  # the last status writes and their events
            held = _held(cluster, cluster.client.request("GET", path)["items"], RING, sharded)
            rows = []
            for r in cluster.replicas:
                now = _metrics(r.metrics_port)
                rows.append(
                    (
                        _label(replicas, sharded, apart),
                        _replica_name(cluster, r, sharded, RING),
                        f"{wall:.1f}",
                        f"{_cpu_seconds(r.proc.pid) - r.cpu0:.1f}",
                        held.get(r.identity, 0),
                        int(now["events"] - r.base["events"]),
                        int(now["reconciles"] - r.base["reconciles"]),
                        int(now["objects"]),
                        int(now["sharder_events"] - r.base["sharder_events"]),
                    )
                )
            return rows
        finally:
            cluster.stop()


def _set_done(o: dict[str, Any]) -> bool:
    status = o.get("status") or {}
    want = int((o.get("spec") or {}).get("replicas") or 0)
    return (
        status.get("observedGeneration") == meta.generation(o)
        and int(status.get("updatedReplicas") or 0) == want
        and int(status.get("readyReplicas") or 0) == want
    )


@dataclass
class Failover:
    plain: float  # a rollout of every set, all replicas up
    moved: float  # after the kill: until every set of the killed replica had a new shard
    victims_done: float  # ... until those sets had rolled out
    others_done: float  # ... until the other sets had rolled out
    victims: int
    pods: int
    most: int  # the most pods any one set had at the end


def _failover(kind: str, count: int, pods: int) -> Failover:
    """4 replicas; a rollout of every set, then a second one with a non-sharder replica
    SIGKILLed as it begins (see :class:`Failover`)."""
    path, make = _workloads(kind, count, pods)
    key = shard_label(RING)
    with tempfile.TemporaryDirectory(prefix="bench-sharding-") as tmp:
        cluster = Cluster(Path(tmp))
        try:
            for i in range(4):
                cluster.start(f"shard-{i}", 4)
            _wait("shards ready", lambda: len(cluster.ready_shards()) == 4, 60)
            for i in range(count):
                cluster.client.create(make(f"w{i}"))
            total = count * pods
            _wait("ready", lambda: _rolled_out(cluster.client, path, total), DEADLINE)
            api_kind = kinds.Kind(make("x")["apiVersion"], kind)

            def rollout(value: str) -> None:
                for i in range(count):
                    cluster.client.patch(
                        api_kind,
                        f"w{i}",
                        {"spec": {"template": {"metadata": {"annotations": {"rollout": value}}}}},
                        namespace=_NAMESPACE,
                    )

            started = time.perf_counter()
            rollout("1")
            _wait("rolled out", lambda: _rolled_out(cluster.client, path, total), DEADLINE)
            plain = time.perf_counter() - started

            victim = next(r for r in cluster.replicas if r.identity != cluster.sharder())
            items = cluster.client.request("GET", path)["items"]
            theirs = {meta.name(o) for o in items if meta.labels(o).get(key) == victim.identity}
            started = time.perf_counter()
            rollout("2")
            victim.proc.send_signal(signal.SIGKILL)
            victim.proc.wait()
            moved = victims_done = others_done = 0.0
            deadline = started + DEADLINE
            while not (moved and victims_done and others_done):
                if time.perf_counter() > deadline:
                    raise TimeoutError("the rollout after the kill did not finish")
                items = cluster.client.request("GET", path)["items"]
                now = time.perf_counter() - started
                mine = [o for o in items if meta.name(o) in theirs]
                rest = [o for o in items if meta.name(o) not in theirs]
                if not moved and all(
                    meta.labels(o).get(key) not in (None, victim.identity) for o in mine
                ):
                    moved = now
                if not victims_done and all(_set_done(o) for o in mine):
                    victims_done = now
                if not others_done and all(_set_done(o) for o in rest):
                    others_done = now
                time.sleep(0.1)
            _wait("all pods", lambda: _rolled_out(cluster.client, path, total), DEADLINE)
            per_set: dict[str, int] = {}
            for pod in cluster.client.list(kinds.Pod, _NAMESPACE)["items"]:
                ref = meta.controller_ref(pod)
                if ref is not None:
                    per_set[str(ref.get("name"))] = per_set.get(str(ref.get("name")), 0) + 1
            return Failover(
                plain,
                moved,
                victims_done,
                others_done,
                len(theirs),
                _pods(cluster.client),
                max(per_set.values()),
            )
        finally:
            cluster.stop()


def _scenario(ctx: Any, kind: str, count: int, pods: int) -> None:
    quick = getattr(ctx, "controllers", None) is not None and ctx.controllers.parallel_sets <= 20
    if quick:
        count = max(4, count // 5)
    title = f"sharding: {count} {kind}s of {pods} ({count * pods} pods), replicas 1, 2, 4"
    table = ctx.table(
        "sharding",
        title,
        "replicas | replica | wall s | CPU s | sets | events | reconciles | cached objects | "
        "sharder events",
    )
    shares = []
    configurations = [(1, False, False), *[(n, True, False) for n in REPLICAS], (4, True, True)]
    for replicas, sharded, apart in configurations:
        log(f"{title}: {_label(replicas, sharded, apart)}")
        rows = _run(ctx, kind, count, pods, replicas, sharded, apart)
        for row in rows:
            table.add(*row)
        if sharded and replicas > 1 and not apart:
            most = max(int(row[4]) for row in rows)
            bound = -(-(11 * count) // (10 * replicas))
            shares.append(
                f"{replicas} replicas: the largest shard held {most} of {count} sets "
                f"({most / count:.3f}; 1.1/N = {1.1 / replicas:.3f}, bound {bound})"
            )
    table.notes.append("Largest shard (the load bound at load factor 1.1): " + "; ".join(shares))
    log(f"{title}: failover")
    f = _failover(kind, count, pods)
    table.notes.append(
        f"Failover, 4 replicas (lease 4 s): a rollout of every set took {f.plain:.1f} s. In the "
        f"next one a replica holding {f.victims} sets was SIGKILLed as it began: its sets had a "
        f"new shard after {f.moved:.1f} s and had rolled out after {f.victims_done:.1f} s, the "
        f"others after {f.others_done:.1f} s; {f.pods} pods at the end, at most {f.most} per "
        f"set (spec: {pods})."
    )


def scenario_sharding_sts(ctx: Context) -> None:
    _scenario(ctx, "StatefulSet", 200, 5)


def scenario_sharding_cloneset(ctx: Context) -> None:
    _scenario(ctx, "CloneSet", 100, 10)


SCENARIOS: dict[str, Callable[[Any], None]] = {
    "sharding-sts": scenario_sharding_sts,
    "sharding-cloneset": scenario_sharding_cloneset,
}


# --- a controller that is the bottleneck (scenario sharding-cpu) ----------------------------

CPU_OBJECTS = 400
CPU_WORK_MS = 20.0


def _cpu_run(
    count: int, replicas: int, sharded: bool, rounds: int, apart: bool = False
) -> list[tuple[Any, ...]]:
    """``count`` labelled ConfigMaps rendered by ``replicas`` replicas of
    :mod:`bench.cpu_replica`; rows of the table (one per replica)."""
    from bench.cpu_replica import RENDER_LABEL, RESULT_ANNOTATION

    with tempfile.TemporaryDirectory(prefix="bench-sharding-cpu-") as tmp:
        cluster = Cluster(Path(tmp))
        try:
            command = [sys.executable, "-m", "bench.cpu_replica", f"--rounds={rounds}"]
            _start_replicas(cluster, replicas, sharded, apart, "bench-cpu", command)
            for r in cluster.replicas:
                r.cpu0 = _cpu_seconds(r.proc.pid)
                r.base = _metrics(r.metrics_port)
            server_cpu0 = _cpu_seconds(cluster.server.pid)
            started = time.perf_counter()
            for i in range(count):
                cluster.client.create(
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "name": f"r{i}",
                            "namespace": _NAMESPACE,
                            "labels": {RENDER_LABEL: "true"},
                        },
                        "data": {"template": f"object {i}", "values": "x" * 200},
                    }
                )

            def rendered() -> int:
                items = cluster.client.list(
                    kinds.ConfigMap, _NAMESPACE, label_selector=f"{RENDER_LABEL}=true"
                )["items"]
                return sum(1 for o in items if RESULT_ANNOTATION in meta.annotations(o))

            _wait(f"{count} rendered", lambda: rendered() >= count, DEADLINE)
            wall = time.perf_counter() - started
            server_cpu = _cpu_seconds(cluster.server.pid) - server_cpu0
            time.sleep(1.0)
            rendered_objects = cluster.client.list(
                kinds.ConfigMap, _NAMESPACE, label_selector=f"{RENDER_LABEL}=true"
            )["items"]
            held = _held(cluster, rendered_objects, "bench-cpu", sharded)
            rows = []
            for r in cluster.replicas:
                now = _metrics(r.metrics_port)
                rows.append(
                    (
                        _label(replicas, sharded, apart),
                        _replica_name(cluster, r, sharded, "bench-cpu"),
                        f"{wall:.1f}",
                        f"{_cpu_seconds(r.proc.pid) - r.cpu0:.1f}",
                        f"{server_cpu:.1f}",
                        held.get(r.identity, 0),
                        int(now["reconciles"] - r.base["reconciles"]),
                    )
                )
            return rows
        finally:
            cluster.stop()


def scenario_sharding_cpu(ctx: Any) -> None:
    """Wall time of a CPU-bound controller with 1 replica (unsharded) and 2 and 4 sharded
    replicas: the goal "2 replicas at least 1.5x faster where the controller is the
    bottleneck"."""
    quick = getattr(ctx, "controllers", None) is not None and ctx.controllers.parallel_sets <= 20
    count = CPU_OBJECTS // 5 if quick else CPU_OBJECTS
    title = (
        f"sharding-cpu: {count} ConfigMaps rendered by a CPU-bound controller "
        f"(~{CPU_WORK_MS:.0f} ms of GIL-bound CPU each), replicas 1, 2, 4"
    )
    table = ctx.table(
        "sharding-cpu",
        title,
        "replicas | replica | wall s | CPU s | server CPU s | objects | reconciles",
    )
    from bench.cpu_replica import rounds_for

    rounds = rounds_for(CPU_WORK_MS)
    walls: dict[str, float] = {}
    for replicas, sharded, apart in [
        (1, False, False),
        (1, True, False),
        (2, True, False),
        (2, True, True),
        (4, True, False),
    ]:
        label = _label(replicas, sharded, apart)
        log(f"{title}: {label}")
        rows = _cpu_run(count, replicas, sharded, rounds, apart)
        for row in rows:
            table.add(*row)
        walls[label] = float(rows[0][2])
    base = walls["1 (off)"]
    table.notes.append(
        "Speed-up of wall time over one unsharded replica: "
        + ", ".join(f"{k}: {base / v:.2f}x" for k, v in walls.items() if k != "1 (off)")
    )


SCENARIOS["sharding-cpu"] = scenario_sharding_cpu
