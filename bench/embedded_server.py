"""Benchmarks of the embedded API server (``kube_runtime.envtest.server``).

Every scenario runs against a fresh plain-HTTP ``EmbeddedCluster(kubelet=False,
deployments=False)`` in this process: no TLS, no token, no simulated kubelet writing pod
status behind our back, no Deployment/ReplicaSet controllers watching pods. The
clients (official ``kubernetes`` client, raw urllib3 watchers) run on threads of the same
process, so they share the GIL with the server's event-loop thread; on a 2-core machine
that is the dominant limit on throughput. One watch case runs its watcher in a child
process instead (:func:`reader_main`), as a controller outside the API server would.

Server-side times come from ``cluster.api.records`` (``ApiServer.record_requests``): the
time from the parsed request to the built response, measured on the server thread. They
exclude socket I/O and HTTP parsing, and include any time the server thread spent waiting
for the GIL while client threads ran (visible in the 4-client p90/p99).

Scenarios (:data:`SCENARIOS`, the ``server`` suite of ``python -m bench``): ``create``,
``update``, ``list``, ``watch``, ``deserialize``. ``--quick`` uses small sizes (a smoke
run, numbers are noisy); ``--profile`` runs cProfile on the server thread (and the watch
writer) and prints the top functions (timings are inflated under the profiler);
``--markdown PATH`` writes the tables.
"""

from __future__ import annotations

import cProfile
import datetime
import gc
import io
import math
import os
import platform
import pstats
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson
import urllib3
from kubernetes import client

from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.server.resources import ResourceInfo

Obj = dict[str, Any]

CREATE_TARGET_MS = 0.3
WATCH_TARGET_EPS = 20_000.0
MERGE_PATCH = "application/merge-patch+json"


# --------------------------------------------------------------------------- sizes


@dataclass(frozen=True)
class Sizes:
    """Sizes of the server and framework suites' scenarios; the defaults are the full run's."""

    create: int = 2_000
    update: int = 2_000
    list_sizes: tuple[int, ...] = (1_000, 5_000)
    list_reps: tuple[int, ...] = (20, 6)
    watch_events: int = 20_000
    fanout_watchers: int = 10
    fanout_events: int = 4_000
    replay_events: int = 20_000
    deser_pods: int = 1_000
    deser_reps: int = 5
    rounds: int = 3
    # the framework suite (bench.framework)
    ingest_pods: int = 5_000
    queue_items: int = 100_000
    memory_pods: int = 5_000
    memory_running_pods: int = 5_000
    steady_objects: int = 1_000
    resync_period: float = 8.0


FULL = Sizes()
QUICK = Sizes(
    create=300,
    update=300,
    list_reps=(3, 2),
    watch_events=3_000,
    fanout_events=500,
    replay_events=3_000,
    deser_reps=1,
    rounds=1,
    ingest_pods=1_000,
    queue_items=10_000,
    memory_pods=500,
    memory_running_pods=300,
    steady_objects=200,
    resync_period=2.0,
)


# --------------------------------------------------------------------------- the pod


def typical_pod(name: str, namespace: str | None = None) -> Obj:
    """A typical application pod: 2 containers with env, ports, resources, probes, volumes."""
    meta: Obj = {
        "name": name,
        "labels": {
            "app.kubernetes.io/name": "web",
            "app.kubernetes.io/instance": "web-prod",
            "app.kubernetes.io/version": "1.4.2",
            "app.kubernetes.io/component": "frontend",
            "pod-template-hash": "7d9f8c6b5",
        },
        "annotations": {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9090",
            "kubectl.kubernetes.io/default-container": "app",
        },
    }
    if namespace is not None:
        meta["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "serviceAccountName": "web",
            "terminationGracePeriodSeconds": 30,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 2000},
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "registry.example.com/web/app:1.4.2",
                    "imagePullPolicy": "IfNotPresent",
                    "args": ["--config=/etc/app/config.yaml", "--port=8080"],
                    "ports": [
                        {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                    ],
                    "env": [
                        {"name": "LOG_LEVEL", "value": "info"},
                        {"name": "APP_ENV", "value": "production"},
                        {
                            "name": "POD_NAME",
                            "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                        },
                        {
                            "name": "POD_IP",
                            "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
                        },
                        {
                            "name": "DB_PASSWORD",
                            "valueFrom": {"secretKeyRef": {"name": "web-db", "key": "password"}},
                        },
                    ],
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "256Mi"},
                        "limits": {"cpu": "1", "memory": "512Mi"},
                    },
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": "http"},
                        "initialDelaySeconds": 10,
                        "periodSeconds": 10,
                        "failureThreshold": 3,
                    },
                    "readinessProbe": {
                        "httpGet": {"path": "/ready", "port": 8080},
                        "periodSeconds": 5,
                    },
                    "volumeMounts": [
                        {"name": "config", "mountPath": "/etc/app", "readOnly": True},
                        {"name": "cache", "mountPath": "/var/cache/app"},
                    ],
                },
                {
                    "name": "log-shipper",
                    "image": "registry.example.com/infra/log-shipper:2.1.0",
                    "env": [
                        {"name": "TARGET", "value": "logs.example.com:5044"},
                        {
                            "name": "NODE_NAME",
                            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                        },
                    ],
                    "ports": [{"name": "shipper", "containerPort": 2020}],
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": {"cpu": "200m", "memory": "128Mi"},
                    },
                    "readinessProbe": {"tcpSocket": {"port": 2020}, "periodSeconds": 10},
                    "volumeMounts": [
                        {"name": "cache", "mountPath": "/var/cache/app", "readOnly": True}
                    ],
                },
            ],
            "volumes": [
                {"name": "config", "configMap": {"name": "web-config"}},
                {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
            ],
        },
    }


# --------------------------------------------------------------------------- output

_T0 = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - _T0:7.1f}s] {message}", flush=True)


@dataclass
class Table:
    scenario: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        row = [c if isinstance(c, str) else fmt(c) for c in cells]
        self.rows.append(row)
        log("result | " + " | ".join(f"{k}={v}" for k, v in zip(self.columns, row, strict=True)))

    def markdown(self) -> str:
        out = [f"### {self.title}", ""]
        out.append("| " + " | ".join(self.columns) + " |")
        out.append("|" + "|".join("---:" if i else "---" for i in range(len(self.columns))) + "|")
        out.extend("| " + " | ".join(r) + " |" for r in self.rows)
        if self.notes:
            out.append("")
            out.extend(self.notes)
        return "\n".join(out)


@dataclass
class Target:
    name: str
    measured: str
    goal: str
    met: bool


def fmt(value: object) -> str:
    if isinstance(value, float):
        if value >= 1000:
            return f"{value:,.0f}"
        if value >= 100:
            return f"{value:.0f}"
        if value >= 10:
            return f"{value:.1f}"
        if value >= 1:
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def spread(values: Sequence[float]) -> str:
    """``min-max`` of per-round rates."""
    return f"{min(values):,.0f}-{max(values):,.0f}"


def ms(values: Sequence[float]) -> tuple[float, float, float]:
    """Median, p90 and p99 in milliseconds."""
    return pct(values, 0.5) * 1e3, pct(values, 0.9) * 1e3, pct(values, 0.99) * 1e3


# --------------------------------------------------------------------------- context


@dataclass
class Context:
    sizes: Sizes
    profile: bool
    tables: list[Table] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)

    def table(self, scenario: str, title: str, columns: str) -> Table:
        """A new result table of ``scenario``; ``columns`` are the headers, ``" | "`` apart."""
        t = Table(scenario, title, columns.split(" | "))
        self.tables.append(t)
        return t

    @contextmanager
    def profiling(
        self, cluster: EmbeddedCluster, label: str, *, first: bool = True
    ) -> Iterator[list[cProfile.Profile]]:
        """cProfile the server's event-loop thread while the block runs (--profile, first round).

        Yields a list other threads may append their own enabled profiles to (the watch
        writer does); all of them are merged into the report.
        """
        extra: list[cProfile.Profile] = []
        if not (self.profile and first):
            yield extra
            return
        prof = cProfile.Profile()
        on_loop(cluster, prof.enable)
        try:
            yield extra
        finally:
            on_loop(cluster, prof.disable)
            stats = pstats.Stats(prof)
            for p in extra:
                stats.add(p)
            buf = io.StringIO()
            stats.stream = buf  # type: ignore[attr-defined]
            stats.sort_stats("tottime").print_stats(15)
            stats.sort_stats("cumulative").print_stats(25)
            print(f"---- profile: {label} (server loop thread{' + writer' if extra else ''})")
            print(buf.getvalue(), flush=True)


def on_loop(cluster: EmbeddedCluster, fn: Callable[[], object]) -> None:
    """Run ``fn`` on the server's event-loop thread and wait for it."""
    done = threading.Event()

    def call() -> None:
        try:
            fn()
        finally:
            done.set()

    cluster.http.call_soon(call)
    if not done.wait(10):
        raise RuntimeError("the server loop did not run the callback")


@contextmanager
def bench_cluster(history_size: int = 20_000) -> Iterator[EmbeddedCluster]:
    """A plain-HTTP cluster without kubelet or workload controllers (nothing else writes,
    or watches, while we measure: the Deployment/ReplicaSet controllers' pod informer would
    take a second copy of every watch event on this process's GIL)."""
    cluster = EmbeddedCluster(kubelet=False, deployments=False, history_size=history_size)
    with cluster:
        yield cluster


def pods_info(cluster: EmbeddedCluster) -> ResourceInfo:
    return cluster.resource("", "pods")


def make_namespace(cluster: EmbeddedCluster, name: str) -> None:
    cluster.store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": name}})


def populate(
    cluster: EmbeddedCluster, namespace: str, count: int, prefix: str = "pod"
) -> list[str]:
    """Create ``count`` typical pods through the store (server side, no HTTP)."""
    make_namespace(cluster, namespace)
    info = pods_info(cluster)
    names = [f"{prefix}-{i:05d}" for i in range(count)]
    for name in names:
        cluster.store.create(info, namespace, typical_pod(name))
    return names


@contextmanager
def recording(cluster: EmbeddedCluster) -> Iterator[None]:
    cluster.api.records.clear()
    cluster.api.record_requests = True
    try:
        yield
    finally:
        cluster.api.record_requests = False


def server_seconds(cluster: EmbeddedCluster, method: str, expected: int) -> list[float]:
    """Server-side handling times of the recorded ``method`` requests on pods (all 2xx)."""
    recs = [r for r in cluster.api.records if r.verb == method and "/pods" in r.resource]
    failed = [r for r in recs if r.status >= 300]
    if failed:
        raise RuntimeError(f"{len(failed)} {method} requests failed, e.g. {failed[0]}")
    if len(recs) != expected:
        raise RuntimeError(f"expected {expected} {method} records, got {len(recs)}")
    return [r.seconds for r in recs]


def run_threads(count: int, work: Callable[[int], None]) -> float:
    """Run ``work(i)`` on ``count`` threads started together; wall seconds until all finish."""
    barrier = threading.Barrier(count + 1)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if errors:
        raise errors[0]
    return wall


def core_api(cluster: EmbeddedCluster, *, warm: bool = False) -> Any:
    """The official client's ``CoreV1Api`` on ``cluster``; with ``warm``, warmed up first
    (:func:`warm_up_client`: validators built, connections open)."""
    api = client.CoreV1Api(cluster.api_client())
    if warm:
        warm_up_client(cluster, api)
    return api


def read_body(resp: Any) -> bytes:
    """Body of a ``_preload_content=False`` response; the connection goes back to the pool."""
    data: bytes = resp.data
    resp.release_conn()
    return data


def warm_up_client(
    cluster: EmbeddedCluster, api: Any, namespace: str = "warmup", count: int = 30
) -> None:
    """First calls build the client's pydantic validators and open connections: not measured."""
    make_namespace(cluster, namespace)
    for i in range(count):
        name = f"warm-{i}"
        read_body(api.create_namespaced_pod(namespace, typical_pod(name), _preload_content=False))
        current = orjson.loads(
            read_body(api.read_namespaced_pod(name, namespace, _preload_content=False))
        )
        current["metadata"]["labels"]["bench/revision"] = "1"
        read_body(api.replace_namespaced_pod(name, namespace, current, _preload_content=False))
        patch = {"metadata": {"annotations": {"bench/patched": "1"}}}
        read_body(
            api.patch_namespaced_pod(
                name, namespace, patch, _content_type=MERGE_PATCH, _preload_content=False
            )
        )


# --------------------------------------------------------------------------- 1. create


def scenario_create(ctx: Context) -> None:
    n, rounds = ctx.sizes.create, ctx.sizes.rounds
    table = ctx.table(
        "create",
        f"1. create: {n:,} typical pods per round, {rounds} round(s) per row (interleaved), "
        "`CoreV1Api.create_namespaced_pod(_preload_content=False)`",
        "client threads | pods | creates/s (median of rounds) | creates/s range | server median ms | server p90 ms | server p99 ms",
    )
    configs = (1, 4)
    rates: dict[int, list[float]] = {t: [] for t in configs}
    server: dict[int, list[float]] = {t: [] for t in configs}
    with bench_cluster() as cluster:
        warm_up_client(cluster, core_api(cluster))
        for r in range(rounds):
            for threads in configs:
                ns = f"create-{threads}t-{r}"
                make_namespace(cluster, ns)
                apis = [core_api(cluster) for _ in range(threads)]
                for api in apis:  # open each thread's connection before the clock starts
                    read_body(api.list_namespaced_pod(ns, _preload_content=False))
                bodies = [typical_pod(f"pod-{i:05d}") for i in range(n)]
                log(f"create: round {r + 1}/{rounds}, {n} pods from {threads} thread(s)")

                def work(
                    t: int,
                    apis: list[Any] = apis,
                    bodies: list[Obj] = bodies,
                    threads: int = threads,
                    ns: str = ns,
                ) -> None:
                    api = apis[t]
                    for body in bodies[t::threads]:
                        read_body(api.create_namespaced_pod(ns, body, _preload_content=False))

                with (
                    recording(cluster),
                    ctx.profiling(cluster, f"create {threads} thread(s)", first=r == 0),
                ):
                    wall = run_threads(threads, work)
                server[threads] += server_seconds(cluster, "POST", n)
                rates[threads].append(n / wall)
                log(f"create: {n / wall:,.0f} creates/s")
    for threads in configs:
        med, p90, p99 = ms(server[threads])
        table.add(
            threads, n * rounds, pct(rates[threads], 0.5), spread(rates[threads]), med, p90, p99
        )
        if threads == 1:
            ctx.targets.append(
                Target(
                    "create: server-side median per typical pod (1 client thread)",
                    f"{med:.3f} ms",
                    f"<= {CREATE_TARGET_MS} ms",
                    med <= CREATE_TARGET_MS,
                )
            )
    table.notes.append(
        "Server time = `ApiServer.__call__` (JSON decode, defaulting, validation, commit, "
        "response encoding), pooled over all rounds; it excludes socket I/O and HTTP parsing. "
        "With 4 client threads the server thread also waits for the GIL while client threads "
        "build requests (the client validates each body into a `V1Pod` model and serializes "
        "it back), which shows in p90/p99; creates/s is bounded by the client, not the server."
    )


# --------------------------------------------------------------------------- 2. update


def scenario_update(ctx: Context) -> None:
    n, rounds = ctx.sizes.update, ctx.sizes.rounds
    table = ctx.table(
        "update",
        f"2. update: {n:,} replaces (PUT with the current resourceVersion) and {n:,} merge "
        f"patches per round, {rounds} round(s), 1 client thread",
        "operation | requests | requests/s (median of rounds) | requests/s range | server median ms | server p90 ms | server p99 ms",
    )
    ops = ("replace (PUT)", "merge patch")
    rates: dict[str, list[float]] = {op: [] for op in ops}
    server: dict[str, list[float]] = {op: [] for op in ops}
    with bench_cluster() as cluster:
        api = core_api(cluster, warm=True)
        info = pods_info(cluster)
        for r in range(rounds):
            ns = f"update-{r}"
            log(f"update: round {r + 1}/{rounds}, populating {n} pods")
            names = populate(cluster, ns, n)
            bodies = []
            for name in names:
                current = orjson.loads(cluster.store.get(info, ns, name).raw)
                current["metadata"]["labels"]["bench/revision"] = "2"
                bodies.append(current)

            def replace(
                _: int, ns: str = ns, names: list[str] = names, bodies: list[Obj] = bodies
            ) -> None:
                for name, body in zip(names, bodies, strict=True):
                    read_body(api.replace_namespaced_pod(name, ns, body, _preload_content=False))

            def patch(_: int, ns: str = ns, names: list[str] = names) -> None:
                for i, name in enumerate(names):
                    doc = {"metadata": {"annotations": {"bench/patched": str(i)}}}
                    read_body(
                        api.patch_namespaced_pod(
                            name, ns, doc, _content_type=MERGE_PATCH, _preload_content=False
                        )
                    )

            for op, work, method in ((ops[0], replace, "PUT"), (ops[1], patch, "PATCH")):
                log(f"update: round {r + 1}/{rounds}, {n} x {op}")
                with recording(cluster), ctx.profiling(cluster, f"update {op}", first=r == 0):
                    wall = run_threads(1, work)
                server[op] += server_seconds(cluster, method, n)
                rates[op].append(n / wall)
                log(f"update: {n / wall:,.0f} requests/s")
    for op in ops:
        table.add(op, n * rounds, pct(rates[op], 0.5), spread(rates[op]), *ms(server[op]))
    table.notes.append(
        "Each PUT sends the full pod as stored with one label changed; each merge patch "
        "(`application/merge-patch+json`) adds one annotation. Both commit a new resourceVersion."
    )


# --------------------------------------------------------------------------- 3. list


def scenario_list(ctx: Context) -> None:
    sizes = ctx.sizes
    table = ctx.table(
        "list",
        "3. list: all pods of a namespace, CoreV1Api.list_namespaced_pod(_preload_content=False), body read, not parsed",
        "pods | body MB | first list s (client) | first list s (server) | lists | list s median (client) | list s median (server) | list s p90 (server)",
    )
    with bench_cluster() as cluster:
        api = core_api(cluster, warm=True)
        for size, reps in zip(sizes.list_sizes, sizes.list_reps, strict=True):
            ns = f"list-{size}"
            log(f"list: populating {size} pods")
            populate(cluster, ns, size)
            log(f"list: {size} pods, 1 + {reps} lists")
            with recording(cluster):
                started = time.perf_counter()
                body = read_body(api.list_namespaced_pod(ns, _preload_content=False))
                first_client = time.perf_counter() - started
            (first_server,) = server_seconds(cluster, "GET", 1)
            if _item_count(body) != size:
                raise RuntimeError(f"list returned the wrong number of pods (expected {size})")
            client_times: list[float] = []
            with recording(cluster), ctx.profiling(cluster, f"list {size}"):
                for _ in range(reps):
                    started = time.perf_counter()
                    read_body(api.list_namespaced_pod(ns, _preload_content=False))
                    client_times.append(time.perf_counter() - started)
            server = server_seconds(cluster, "GET", reps)
            table.add(
                size,
                len(body) / 1e6,
                first_client,
                first_server,
                reps,
                pct(client_times, 0.5),
                pct(server, 0.5),
                pct(server, 0.9),
            )
    table.notes.append(
        "Pods are created through the store, so the first list also encodes every object "
        "(`Stored.raw` is computed lazily and cached); later lists reuse the cached bytes. "
        "Pods created over HTTP are already encoded by the create response."
    )


# --------------------------------------------------------------------------- 4. watch


def watch_lines(resp: urllib3.BaseHTTPResponse) -> Iterator[list[bytes]]:
    """A watch response's complete lines (some empty), a list per read of up to 64 KiB that
    ends one, as a lean client splits them: the caller may stop between lists."""
    pending = b""
    for data in resp.stream(1 << 16):
        pending += data
        if b"\n" not in data:
            continue
        lines = pending.split(b"\n")
        pending = lines.pop()
        yield lines


class RawWatcher:
    """A watch read the way a lean client would: urllib3 stream, split lines, orjson.loads."""

    def __init__(self, pool: urllib3.PoolManager, url: str, expected: int) -> None:
        self.expected = expected
        self.events = 0
        self.bookmarks = 0
        self.last_at = 0.0
        self.error: BaseException | None = None
        self.resp = pool.request(
            "GET",
            url,
            preload_content=False,
            timeout=urllib3.Timeout(connect=10.0, read=120.0),
            retries=False,
        )
        if self.resp.status != 200:
            raise RuntimeError(f"watch failed: {self.resp.status} {self.resp.data[:300]!r}")
        self.thread = threading.Thread(target=self._run, name="bench-watcher", daemon=True)

    def start(self) -> RawWatcher:
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            for lines in watch_lines(self.resp):
                for line in lines:
                    if not line:
                        continue
                    event = orjson.loads(line)
                    kind = event["type"]
                    if kind == "BOOKMARK":
                        self.bookmarks += 1
                    elif kind == "ERROR":
                        raise RuntimeError(f"watch error: {event['object']}")
                    else:
                        self.events += 1
                if self.events >= self.expected:
                    break
            self.last_at = time.perf_counter()
            if self.events < self.expected:
                raise RuntimeError(f"watch ended after {self.events} of {self.expected} events")
        except BaseException as e:
            self.error = e
        finally:
            self.resp.close()

    def join(self, timeout: float = 120.0) -> None:
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise RuntimeError(f"watcher stuck after {self.events} of {self.expected} events")
        if self.error is not None:
            raise self.error


def reader_main() -> None:
    """Child-process watcher: ``argv`` = URL, expected events; reads like :class:`RawWatcher`.

    Prints ``ready`` once the watch is open, then one JSON line with the events read and
    the ``time.perf_counter()`` of the last one (CLOCK_MONOTONIC on Linux, so comparable
    with the parent's clock).
    """
    url, expected = sys.argv[1], int(sys.argv[2])
    watcher = RawWatcher(urllib3.PoolManager(), url, expected)
    print("ready", flush=True)
    watcher.start().join()
    print(orjson.dumps({"events": watcher.events, "last_at": watcher.last_at}).decode(), flush=True)


class ProcessWatcher:
    """A :func:`reader_main` child process watching ``url``."""

    def __init__(self, url: str, expected: int) -> None:
        code = "from bench.embedded_server import reader_main; reader_main()"
        root = Path(__file__).resolve().parent.parent
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, url, str(expected)],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.proc.kill()
            raise RuntimeError(f"watch reader process failed to start: {line!r}")

    def result(self, timeout: float = 120.0) -> tuple[int, float]:
        """(events read, perf_counter of the last one) once the child is done."""
        out, _ = self.proc.communicate(timeout=timeout)
        if self.proc.returncode != 0:
            raise RuntimeError(f"watch reader process exited with {self.proc.returncode}")
        data = orjson.loads(out.strip().splitlines()[-1])
        return int(data["events"]), float(data["last_at"])


def open_watchers(
    cluster: EmbeddedCluster, ns: str, rv: int, count: int, expected: int
) -> list[RawWatcher]:
    api_client = cluster.api_client()
    pool = api_client.rest_client.pool_manager
    url = f"{cluster.url}/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}"
    return [RawWatcher(pool, url, expected) for _ in range(count)]


def write_pods(
    cluster: EmbeddedCluster, ns: str, names: Sequence[str], profiles: list[cProfile.Profile] | None
) -> tuple[float, float]:
    """Create pods through the store on this thread; returns (start, end) perf_counter times."""
    info = pods_info(cluster)
    bodies = [typical_pod(name) for name in names]
    prof = cProfile.Profile() if profiles is not None else None
    if prof is not None:
        prof.enable()
    started = time.perf_counter()
    for body in bodies:
        cluster.store.create(info, ns, body)
    ended = time.perf_counter()
    if prof is not None:
        prof.disable()
        assert profiles is not None
        profiles.append(prof)
    return started, ended


def write_pods_in(
    mode: str,
    cluster: EmbeddedCluster,
    ns: str,
    names: Sequence[str],
    profiles: list[cProfile.Profile] | None,
) -> tuple[float, float, float]:
    """:func:`write_pods` in ``mode``: ``live`` (watchers get events while pods are written)
    or ``burst`` (the server's loop held until all are written); returns (start, end, t0),
    t0 the time delivery could begin (the start, or the loop's release)."""
    if mode == "live":
        started, ended = write_pods(cluster, ns, names, profiles)
        return started, ended, started
    with loop_held(cluster) as release:
        started, ended = write_pods(cluster, ns, names, profiles)
        return started, ended, release()


@contextmanager
def loop_held(cluster: EmbeddedCluster) -> Iterator[Callable[[], float]]:
    """Block the server's event loop until the returned ``release()`` is called.

    Watch events written meanwhile queue up in the streams; ``release()`` lets the loop
    flush them and returns the release time (perf_counter).
    """
    held, go = threading.Event(), threading.Event()

    def block() -> None:
        held.set()
        go.wait(120)

    cluster.http.call_soon(block)
    if not held.wait(10):
        raise RuntimeError("could not hold the server loop")

    def release() -> float:
        at = time.perf_counter()
        go.set()
        return at

    try:
        yield release
    finally:
        go.set()


@dataclass(frozen=True)
class WatchCase:
    mode: str  # writer | live | process | burst | replay
    watchers: int
    events: int

    @property
    def label(self) -> str:
        if self.mode == "writer":
            return "writer alone (no watcher)"
        if self.mode == "replay":
            return "replay from an old resourceVersion, 1 watcher"
        if self.mode == "process":
            return "live, 1 watcher in another process"
        return f"{self.mode}, {self.watchers} watcher{'s' if self.watchers > 1 else ''}"


@dataclass
class WatchRun:
    writes_per_s: float = math.nan
    delivery_s: float = math.nan
    events_per_s: float = math.nan


def run_watch_case(ctx: Context, case: WatchCase, first: bool) -> WatchRun:
    """One round of one case on a fresh cluster (so memory does not pile up)."""
    out = WatchRun()
    # The previous round's cluster is garbage in reference cycles: collect it now, or the
    # cyclic GC walks it during this round's writes.
    gc.collect()
    with bench_cluster(history_size=case.events + 1_000) as cluster:
        ns = "bench"
        make_namespace(cluster, ns)
        names = [f"pod-{i:05d}" for i in range(case.events)]
        rv = cluster.store.resource_version
        if case.mode == "writer":
            started, ended = write_pods(cluster, ns, names, None)
            out.writes_per_s = case.events / (ended - started)
            return out
        if case.mode == "replay":
            write_pods(cluster, ns, names, None)
            with ctx.profiling(cluster, f"watch {case.label}", first=first):
                t0 = time.perf_counter()
                (watcher,) = open_watchers(cluster, ns, rv, 1, case.events)
                watcher.start().join()
            out.delivery_s = watcher.last_at - t0
            out.events_per_s = case.events / out.delivery_s
            return out
        if case.mode == "process":
            url = f"{cluster.url}/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}"
            reader = ProcessWatcher(url, case.events)
            with ctx.profiling(cluster, f"watch {case.label}", first=first) as extra:
                profiles = extra if ctx.profile and first else None
                started, ended = write_pods(cluster, ns, names, profiles)
                events, last_at = reader.result()
            if events != case.events:
                raise RuntimeError(f"watch reader got {events} of {case.events} events")
            out.writes_per_s = case.events / (ended - started)
            out.delivery_s = last_at - started
            out.events_per_s = case.events / out.delivery_s
            return out
        watchers = open_watchers(cluster, ns, rv, case.watchers, case.events)
        for w in watchers:
            w.start()
        with ctx.profiling(cluster, f"watch {case.label}", first=first) as extra:
            profiles = extra if ctx.profile and first else None
            started, ended, t0 = write_pods_in(case.mode, cluster, ns, names, profiles)
            for w in watchers:
                w.join()
        out.writes_per_s = case.events / (ended - started)
        out.delivery_s = max(w.last_at for w in watchers) - t0
        out.events_per_s = case.watchers * case.events / out.delivery_s
        return out


def write_breakdown(ctx: Context) -> None:
    """Where one ``store.create`` of a typical pod spends its time (timing wrappers, no profiler)."""
    n = ctx.sizes.watch_events
    table = ctx.table(
        "watch",
        f"4b. the write path behind the live rows: `cluster.store.create` of {n:,} typical pods, "
        "no watcher",
        "part | us per create | share",
    )
    parts = {
        "defaulting (`strategy.prepare_create`)": 0.0,
        "validation (`strategy.validate`)": 0.0,
        "commit: resourceVersion, history, fan-out (`Store._commit`)": 0.0,
    }

    def timed(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[key] += time.perf_counter() - started

        return wrapper

    gc.collect()
    with bench_cluster(history_size=n + 1_000) as cluster:
        store = cluster.store
        keys = list(parts)
        # setattr: mypy refuses assigning to a method; the instance attribute shadows it.
        strategy = store.strategy
        setattr(strategy, "prepare_create", timed(keys[0], strategy.prepare_create))  # noqa: B010
        setattr(strategy, "validate", timed(keys[1], strategy.validate))  # noqa: B010
        setattr(store, "_commit", timed(keys[2], store._commit))  # noqa: B010
        make_namespace(cluster, "breakdown")
        for key in keys:
            parts[key] = 0.0
        log(f"watch: write-path breakdown, {n} store creates")
        started, ended = write_pods(cluster, "breakdown", [f"pod-{i:05d}" for i in range(n)], None)
        total = ended - started
        stored = store.objects(pods_info(cluster))
        began = time.perf_counter()
        for s in stored:
            orjson.dumps(s.obj)
        encode = time.perf_counter() - began
    rest = total - sum(parts.values())
    for key, seconds in [
        *parts.items(),
        ("the rest of `Store.create` (copies, uuid, timestamp, checks)", rest),
    ]:
        table.add(key, seconds / n * 1e6, f"{seconds / total:.0%}")
    table.add("**total `Store.create`**", total / n * 1e6, "100%")
    table.add(
        "JSON encoding of the stored pod (`orjson.dumps`, once per version, paid by the first watch event / list / response)",
        encode / n * 1e6,
        "-",
    )
    ceiling = n / total
    table.notes.append(
        "Measured with timing wrappers around the three calls (about 0.2 us of overhead each), "
        f"not a profiler. One writer thread creating typical pods tops out at ~{ceiling:,.0f} "
        f"writes/s here ({'below' if ceiling < WATCH_TARGET_EPS else 'above'} the "
        f"{WATCH_TARGET_EPS:,.0f} events/s watch target), before it shares the GIL with the "
        "server loop and the watchers."
    )


def scenario_watch(ctx: Context) -> None:
    sizes = ctx.sizes
    rounds = sizes.rounds
    table = ctx.table(
        "watch",
        "4. watch: typical-pod ADDED events to raw urllib3 watchers, writes through "
        f"`cluster.store.create` ({rounds} round(s), interleaved, fresh cluster each)",
        "case | watchers | events per watcher | writes/s (median) | delivery s (median) | events/s aggregate (median) | events/s range",
    )
    fan = sizes.fanout_watchers
    cases = [
        WatchCase("writer", 0, sizes.watch_events),
        WatchCase("live", 1, sizes.watch_events),
        WatchCase("process", 1, sizes.watch_events),
        WatchCase("live", fan, sizes.fanout_events),
        WatchCase("burst", 1, sizes.watch_events),
        WatchCase("burst", fan, sizes.fanout_events),
        WatchCase("replay", 1, sizes.replay_events),
    ]
    runs: dict[WatchCase, list[WatchRun]] = {c: [] for c in cases}
    for r in range(rounds):
        for case in cases:
            log(f"watch: round {r + 1}/{rounds}, {case.label}, {case.events} events")
            run = run_watch_case(ctx, case, first=r == 0)
            runs[case].append(run)
            log(
                f"watch: writes/s {run.writes_per_s:,.0f}, delivery {run.delivery_s:.3f} s, "
                f"{run.events_per_s:,.0f} events/s"
            )

    def med(values: list[float]) -> float | str:
        return "-" if math.isnan(values[0]) else pct(values, 0.5)

    summary: dict[WatchCase, float] = {}
    for case in cases:
        writes = [x.writes_per_s for x in runs[case]]
        delivery = [x.delivery_s for x in runs[case]]
        eps = [x.events_per_s for x in runs[case]]
        summary[case] = pct(eps, 0.5) if case.mode != "writer" else pct(writes, 0.5)
        table.add(
            case.label,
            case.watchers if case.watchers else "-",
            case.events,
            med(writes),
            med(delivery),
            med(eps),
            "-" if case.mode == "writer" else spread(eps),
        )

    write_breakdown(ctx)
    goal = f">= {WATCH_TARGET_EPS:,.0f} events/s"
    writer, live, process, burst, replay = (summary[cases[i]] for i in (0, 1, 2, 4, 6))
    ctx.targets += [
        Target(
            "watch: events/s to one watcher, live writes, watcher in another process",
            f"{process:,.0f} events/s (the writer alone: {writer:,.0f} writes/s)",
            goal,
            process >= WATCH_TARGET_EPS,
        ),
        Target(
            "watch: events/s to one watcher, live writes, watcher in the same process",
            f"{live:,.0f} events/s",
            goal,
            live >= WATCH_TARGET_EPS,
        ),
        Target(
            "watch: events/s to one watcher, burst (delivery only, no concurrent writer)",
            f"{burst:,.0f} events/s",
            goal,
            burst >= WATCH_TARGET_EPS,
        ),
        Target(
            "watch: events/s to one watcher, replay",
            f"{replay:,.0f} events/s",
            goal,
            replay >= WATCH_TARGET_EPS,
        ),
    ]
    table.notes.append(
        "All watches are `GET /api/v1/namespaces/NS/pods?watch=1&resourceVersion=RV` read by a "
        "thread that splits lines and `orjson.loads` each event (a typical pod, ~3 KB). "
        "**writer alone**: `cluster.store.create` of the pods with no watcher (the ceiling for "
        "the live rows). **live**: the watch is opened at the current resourceVersion, then one "
        "thread creates the pods through the store (defaulting + validation + commit + "
        "fan-out, no HTTP); delivery s = first write to the last event parsed by the slowest "
        "watcher. **live, ... in another process**: the same with the watcher (the same reader "
        "code) in a child process, as a controller outside the API server; only the writer "
        "and the server loop share the GIL. **burst**: the same, but the server loop is held while the pods are written, "
        "so the events queue in the watch streams; delivery s = releasing the loop to the last "
        "event parsed (the server's flush + socket + client parsing, no writer competing). "
        "**replay**: the pods were written before the watch, which starts at the "
        "resourceVersion before them; delivery s = opening the watch to the last event parsed "
        "(includes encoding each object once: objects created through the store are not "
        "encoded until first read). Writer, server loop and watcher threads share one GIL."
    )


# --------------------------------------------------------------------------- 5. deserialize


def _item_count(result: object) -> int:
    if isinstance(result, bytes):  # a list body (its items carry no kind, as upstream's)
        return len(orjson.loads(result)["items"])
    if isinstance(result, dict):
        return len(result["items"])
    return len(getattr(result, "items", None) or [])


def deserialize_cluster(cluster: EmbeddedCluster, n: int) -> tuple[Any, str]:
    """The warmed official client on ``cluster`` and a namespace holding ``n`` typical pods,
    listed once (the server caches their encoding) and the ``V1PodList`` validators built."""
    api = core_api(cluster, warm=True)
    ns = "deserialize"
    log(f"deserialize: populating {n} pods")
    populate(cluster, ns, n)
    read_body(api.list_namespaced_pod(ns, _preload_content=False))
    api.list_namespaced_pod("warmup")
    return api, ns


def time_lists(
    cluster: EmbeddedCluster,
    scenario: str,
    paths: Sequence[tuple[str, Callable[[], object]]],
    reps: int,
    expected: int,
    server: dict[str, list[float]] | None = None,
) -> dict[str, list[float]]:
    """Seconds per call of each of ``paths`` (list calls), ``reps`` runs interleaved.

    ``gc.collect()`` runs before each call (the previous path's garbage is not charged to
    the next); each result must hold ``expected`` items. With ``server``, each call's
    server-side seconds are appended to ``server[label]`` as well.
    """
    times: dict[str, list[float]] = {label: [] for label, _ in paths}
    for rep in range(reps):
        log(f"{scenario}: run {rep + 1}/{reps}")
        for label, fn in paths:
            gc.collect()
            with recording(cluster) if server is not None else nullcontext():
                started = time.perf_counter()
                result = fn()
                times[label].append(time.perf_counter() - started)
            if server is not None:
                server.setdefault(label, []).extend(server_seconds(cluster, "GET", 1))
            if (count := _item_count(result)) != expected:
                raise RuntimeError(f"{label}: {count} items, expected {expected}")
            del result
    return times


def scenario_deserialize(ctx: Context) -> None:
    n, reps = ctx.sizes.deser_pods, ctx.sizes.deser_reps
    table = ctx.table(
        "deserialize",
        f"5. official client models vs raw JSON: list of {n:,} typical pods "
        f"(the three paths interleaved, {reps} run(s) each)",
        "client path | s per list (median) | vs raw + orjson.loads | server s per list (median)",
    )
    with bench_cluster() as cluster:
        api, ns = deserialize_cluster(cluster, n)

        def raw_bytes() -> object:
            return read_body(api.list_namespaced_pod(ns, _preload_content=False))

        def raw_orjson() -> object:
            return orjson.loads(read_body(api.list_namespaced_pod(ns, _preload_content=False)))

        def models() -> object:
            return api.list_namespaced_pod(ns)

        paths: list[tuple[str, Callable[[], object]]] = [
            ("`_preload_content=False`, body bytes only", raw_bytes),
            ("`_preload_content=False` + `orjson.loads`", raw_orjson),
            ("`list_namespaced_pod()` -> `V1PodList` models", models),
        ]
        server: dict[str, list[float]] = {}
        times = time_lists(cluster, "deserialize", paths, reps, n, server)
        base = pct(times[paths[1][0]], 0.5)
        for label, _ in paths:
            med = pct(times[label], 0.5)
            table.add(label, med, f"{med / base:.1f}x", pct(server[label], 0.5))
    table.notes.append(
        "Same server work for all three (the list bytes are cached); the difference is the "
        "client: `orjson.loads` of the body versus the official client's `json.loads` plus "
        "building `V1Pod` models. `gc.collect()` runs before each timed call."
    )


# --------------------------------------------------------------------------- main

SCENARIOS: dict[str, Callable[[Context], None]] = {
    "create": scenario_create,
    "update": scenario_update,
    "list": scenario_list,
    "watch": scenario_watch,
    "deserialize": scenario_deserialize,
}


def machine_info() -> list[tuple[str, str]]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = _git("rev-parse", "--short", "HEAD") or "?"
    if _git("status", "--porcelain", "--", "kube_runtime"):
        commit += " + uncommitted changes under kube_runtime/"

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "?"

    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("nproc", str(affinity)),
        ("CPU", cpu),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("kubernetes client", version("kubernetes")),
        ("orjson / urllib3", f"{version('orjson')} / {version('urllib3')}"),
        ("git HEAD", commit),
        ("load average at start (1/5/15 min)", " / ".join(f"{x:.2f}" for x in os.getloadavg())),
    ]


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


def render_markdown(ctx: Context, command: str, info: list[tuple[str, str]], seconds: float) -> str:
    out = ["## Machine", ""]
    out.extend(f"- {k}: {v}" for k, v in info)
    out += ["", f"Command: `{command}` (total {seconds:.0f} s)", ""]
    for t in ctx.tables:
        out += [t.markdown(), ""]
    if ctx.targets:
        out += ["### Targets", "", "| target | measured | goal | met |", "|---|---|---|---|"]
        out.extend(
            f"| {t.name} | {t.measured} | {t.goal} | {'yes' if t.met else 'no'} |"
            for t in ctx.targets
        )
        out.append("")
    return "\n".join(out)
