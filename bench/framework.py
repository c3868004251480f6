"""Benchmarks of the framework core: informers, work queue, cache memory, steady state.

Every scenario runs against a fresh plain-HTTP ``EmbeddedCluster`` in this process (the
helpers come from :mod:`bench.embedded_server`), with the framework's own
:class:`~kube_runtime.client.Client`. Server, informer, handler and worker threads share
one GIL: on a 2-core machine that is the dominant limit. The cache's mutation detector is
off (as in production); ``KUBE_CACHE_SHARE_SUBTREES`` is set per case where a table
compares sub-object sharing on and off.

Scenarios (run all, or name some): ``informer`` (watch events into an informer's store,
initial list+replace), ``queue`` (``WorkQueue`` throughput), ``memory`` (bytes per cached pod
vs its JSON), ``steady`` (a converged controller's resync makes no API request),
``deserialize-framework`` (``Client.list`` vs the official client's models).
"""

from __future__ import annotations

import gc
import itertools
import os
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson

from bench.embedded_server import (
    Context,
    Target,
    bench_cluster,
    core_api,
    deserialize_cluster,
    log,
    make_namespace,
    open_watchers,
    pct,
    pods_info,
    populate,
    read_body,
    spread,
    time_lists,
    typical_pod,
    warm_up_client,
    write_pods_in,
)
from kube_runtime import kinds, metrics
from kube_runtime.builder import Builder
from kube_runtime.cache import InformerCache, SharedInformer
from kube_runtime.cache.informer import ResourceEventHandlerFuncs
from kube_runtime.cache.store import (
    MUTATION_DETECTOR_ENV,
    SHARE_SUBTREES_ENV,
    reset_shared_values,
)
from kube_runtime.client import AlreadyExists, Client, NotFound
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.managers import running
from kube_runtime.manager import Manager
from kube_runtime.ownership import set_controller_reference
from kube_runtime.predicates import label_selector
from kube_runtime.reconcile import Request
from kube_runtime.workqueue import ItemExponentialFailureRateLimiter, WorkQueue

Obj = dict[str, Any]

MEMORY_TARGET_RATIO = 2.0


# --------------------------------------------------------------------------- sizes


@dataclass
class FrameworkContext(Context):
    """The server suite's context (its ``sizes`` hold this suite's too; one report for both)."""


# --------------------------------------------------------------------------- helpers


def framework_client(cluster: EmbeddedCluster) -> Client:
    """The framework's client for a bench cluster (plain HTTP, no token)."""
    return Client(cluster.api_client().configuration)


@contextmanager
def cache_settings(*, share_subtrees: bool) -> Iterator[None]:
    """Informer stores built inside the block share sub-objects or strings only."""
    saved = {k: os.environ.get(k) for k in (SHARE_SUBTREES_ENV, MUTATION_DETECTOR_ENV)}
    os.environ[SHARE_SUBTREES_ENV] = "true" if share_subtrees else "false"
    os.environ[MUTATION_DETECTOR_ENV] = "false"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll ``predicate`` every 0.5 ms; the perf_counter time it first held."""
    deadline = time.perf_counter() + timeout
    while True:
        now = time.perf_counter()
        if predicate():
            return now
        if now > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.0005)


def rest_requests(host: str) -> float:
    """Requests the framework's clients sent to ``host`` so far (``rest_client_requests_total``)."""
    total = 0.0
    for family in metrics.REST_REQUESTS.collect():
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.labels.get("host") == host:
                total += sample.value
    return total


def median(values: list[float]) -> float:
    return pct(values, 0.5)


# --------------------------------------------------------------------------- 1. informer


SHARING = {True: "sub-objects + strings shared (default)", False: "strings shared only"}


@dataclass(frozen=True)
class IngestCase:
    mode: str  # live | burst
    consumer: str  # informer | raw
    share: bool = True

    @property
    def label(self) -> str:
        who = (
            f"SharedInformer, {SHARING[self.share]}"
            if self.consumer == "informer"
            else "raw urllib3 watcher + orjson.loads (no store)"
        )
        return f"{self.mode}: {who}"


@dataclass
class IngestRun:
    store_s: float
    handler_s: float


def run_ingest(
    cluster: EmbeddedCluster, client: Client, case: IngestCase, ns: str, n: int
) -> IngestRun:
    """``n`` pods written through the store while ``case``'s consumer watches ``ns``."""
    make_namespace(cluster, ns)
    info = pods_info(cluster)
    names = [f"pod-{i:05d}" for i in range(n)]
    if case.consumer == "raw":
        rv = cluster.store.resource_version
        (watcher,) = open_watchers(cluster, ns, rv, 1, n)
        watcher.start()
        _, _, t0 = write_pods_in(case.mode, cluster, ns, names, None)
        watcher.join()
        return IngestRun(watcher.last_at - t0, watcher.last_at - t0)

    target = n + 1  # the canary and the pods
    handled = itertools.count(1)
    handler_done: list[float] = []

    def on_add(obj: Obj) -> None:
        if next(handled) == target:
            handler_done.append(time.perf_counter())

    with cache_settings(share_subtrees=case.share):
        informer = SharedInformer(client, kinds.Pod, namespace=ns)
    informer.add_event_handler(ResourceEventHandlerFuncs(on_add=on_add))
    informer.start()
    try:
        if not informer.wait_for_sync(30):
            raise RuntimeError("informer did not sync")
        # The watch is open once an object written now reaches the store.
        cluster.store.create(info, ns, typical_pod("canary"))
        wait_until(lambda: f"{ns}/canary" in informer.indexer, 30, "the canary pod")
        indexer = informer.indexer
        _, _, t0 = write_pods_in(case.mode, cluster, ns, names, None)
        stored = wait_until(lambda: len(indexer) >= target, 120, f"{n} pods in the store")
        wait_until(lambda: bool(handler_done), 120, "the handler")
        return IngestRun(stored - t0, handler_done[0] - t0)
    finally:
        informer.stop()


def time_initial_list(client: Client, ns: str, share: bool | None) -> float:
    """Seconds for a new informer on ``ns`` to sync (``share`` None: ``Client.list`` alone)."""
    started = time.perf_counter()
    if share is None:
        client.list(kinds.Pod, ns)
        return time.perf_counter() - started
    with cache_settings(share_subtrees=share):
        informer = SharedInformer(client, kinds.Pod, namespace=ns)
    informer.start()
    try:
        if not informer.wait_for_sync(60):
            raise RuntimeError("informer did not sync")
        return time.perf_counter() - started
    finally:
        informer.stop()


def scenario_informer(ctx: FrameworkContext) -> None:
    sizes = ctx.sizes
    n, rounds = sizes.ingest_pods, sizes.rounds
    table = ctx.table(
        "informer",
        f"F1. informer ingest: {n:,} typical-pod ADDED events into a `SharedInformer` on pods "
        f"({rounds} round(s), cases interleaved)",
        "case | events/s into the store (median) | events/s range | events/s through a handler (median) | vs raw watcher",
    )
    cases = [
        IngestCase(mode, consumer, share)
        for mode in ("live", "burst")
        for consumer, share in (("raw", True), ("informer", True), ("informer", False))
    ]
    runs: dict[IngestCase, list[IngestRun]] = {c: [] for c in cases}
    list_table = ctx.table(
        "informer",
        f"F1b. initial list + replace: a new informer on {n + 1:,} existing pods "
        f"({rounds} round(s))",
        "path | seconds (median) | pods/s (median) | vs `Client.list` alone",
    )
    list_paths: list[tuple[str, bool | None]] = [
        ("`Client.list` alone (paged, 500 per page)", None),
        *((f"`SharedInformer` start to synced, {SHARING[s]}", s) for s in (True, False)),
    ]
    list_runs: dict[str, list[float]] = {label: [] for label, _ in list_paths}
    with bench_cluster(history_size=(n + 10) * len(cases) * rounds + 1_000) as cluster:
        client = framework_client(cluster)
        warm_up_client(cluster, core_api(cluster))
        for r in range(rounds):
            for i, case in enumerate(cases):
                log(f"informer: round {r + 1}/{rounds}, {case.label}")
                gc.collect()
                run = run_ingest(cluster, client, case, f"ingest-{r}-{i}", n)
                runs[case].append(run)
                log(f"informer: {n / run.store_s:,.0f} events/s into the store")
            ns = f"ingest-{r}-0"
            client.list(kinds.Pod, ns)  # the server encodes each pod once: not measured
            for label, share in list_paths:
                gc.collect()
                list_runs[label].append(time_initial_list(client, ns, share))
        client.close()
    for case in cases:
        rates = [n / x.store_s for x in runs[case]]
        handler = [n / x.handler_s for x in runs[case]]
        raw = median([n / x.store_s for x in runs[IngestCase(case.mode, "raw")]])
        table.add(
            case.label,
            median(rates),
            spread(rates),
            median(handler) if case.consumer == "informer" else "-",
            f"{median(rates) / raw:.2f}x",
        )
    base = median(list_runs[list_paths[0][0]])
    for label, _ in list_paths:
        seconds = median(list_runs[label])
        list_table.add(label, seconds, (n + 1) / seconds, f"{seconds / base:.2f}x")
    table.notes.append(
        "**live**: the watch is open, then one thread creates the pods through "
        "`cluster.store.create` (defaulting, validation, commit; no HTTP), competing for the "
        "GIL with the server loop and the consumer; time = first write to the store holding "
        "every pod (polled every 0.5 ms) or to the handler's last `on_add`. **burst**: the "
        "server loop is held while the pods are written, then released: delivery + ingest "
        "with no writer competing. The raw watcher is the server's delivery ceiling in this "
        "process (`bench.embedded_server.RawWatcher`: split lines, `orjson.loads`, nothing "
        "stored). The informer adds: the `Client.watch` decoder, the reflector, "
        "`Indexer.update` (3 built-in indexes, sharing), one handler thread."
    )
    list_table.notes.append(
        "From `start()` to `has_synced()`: the paged list (500 per page) plus "
        "`Indexer.replace` (sharing and indexes) and queueing the initial adds. "
        "Pods were encoded by the server before timing."
    )


# --------------------------------------------------------------------------- 2. queue


@dataclass(frozen=True)
class QueueLoad:
    label: str
    distinct: int | None  # None: every item distinct
    delayed: str | None  # None | "add_after" | "add_rate_limited"


QUEUE_LOADS = [
    QueueLoad("`add`, unique items", None, None),
    QueueLoad("`add`, dedup-heavy (100 distinct keys)", 100, None),
    QueueLoad("`add_after` 1-10 ms, unique items", None, "add_after"),
    QueueLoad("`add_rate_limited` + `forget` (exponential, 1 ms base), unique", None, "rl"),
]


def run_queue(load: QueueLoad, workers: int, n: int, named: bool) -> tuple[float, int]:
    """Items offered per second (producer start to the last item done) and items processed."""
    limiter = ItemExponentialFailureRateLimiter(base=0.001, maximum=0.01)
    queue: WorkQueue[int] = WorkQueue(
        name=f"bench-{load.delayed}-{workers}-{time.monotonic_ns()}" if named else None,
        rate_limiter=limiter,
    )
    processed = itertools.count(1)
    counts = [0] * workers
    all_done = threading.Event()
    forget = load.delayed == "rl"
    wait_all = load.delayed is not None

    def worker(w: int) -> None:
        get, done = queue.get, queue.done
        while True:
            item, shutdown = get()
            if shutdown:
                return
            done(item)  # type: ignore[arg-type]
            if forget:
                queue.forget(item)  # type: ignore[arg-type]
            counts[w] += 1
            if wait_all and next(processed) == n:
                all_done.set()

    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(workers)]
    for t in threads:
        t.start()
    gc.collect()
    started = time.perf_counter()
    if load.delayed == "add_after":
        add_after = queue.add_after
        for i in range(n):
            add_after(i, 0.001 + (i % 10) * 0.001)
    elif load.delayed == "rl":
        add_rate_limited = queue.add_rate_limited
        for i in range(n):
            add_rate_limited(i)
    else:
        add, distinct = queue.add, load.distinct
        for i in range(n):
            add(i % distinct if distinct else i)
    if wait_all and not all_done.wait(120):
        raise RuntimeError(f"queue: {sum(counts)} of {n} items processed")
    queue.shutdown()  # queued items are still handed out; workers exit once it is empty
    for t in threads:
        t.join(60)
    wall = time.perf_counter() - started
    return n / wall, sum(counts)


def scenario_queue(ctx: FrameworkContext) -> None:
    sizes = ctx.sizes
    n, rounds = sizes.queue_items, sizes.rounds
    table = ctx.table(
        "queue",
        f"F2. `WorkQueue` throughput: {n:,} items offered by one producer thread while "
        f"workers `get` + `done` ({rounds} round(s), interleaved)",
        "load | workers | metrics | items/s (median) | items/s range | items processed (median)",
    )
    configs = [
        (load, workers, named)
        for load in QUEUE_LOADS
        for workers in (1, 4)
        for named in ((False, True) if load.delayed is None and load.distinct is None else (False,))
    ]
    rates: dict[Any, list[float]] = {c: [] for c in configs}
    processed: dict[Any, list[float]] = {c: [] for c in configs}
    for r in range(rounds):
        for config in configs:
            load, workers, named = config
            rate, count = run_queue(load, workers, n, named)
            rates[config].append(rate)
            processed[config].append(count)
        log(f"queue: round {r + 1}/{rounds} done")
    for config in configs:
        load, workers, named = config
        table.add(
            load.label,
            workers,
            "on" if named else "off",
            median(rates[config]),
            spread(rates[config]),
            int(median(processed[config])),
        )
    table.notes.append(
        "items/s = items offered / (first offer to the last item done). Workers only call "
        "`done` (and `forget` for the rate-limited load): this is the queue's own cost. "
        "**dedup-heavy**: an item already queued is not queued again, so fewer items are "
        "processed than offered. **metrics on**: a named queue (the `workqueue_*` "
        "Prometheus metrics, as every controller's queue). With 4 workers, threads contend "
        "for the queue's lock and the GIL: more workers help only when reconciles wait on I/O."
    )


# --------------------------------------------------------------------------- 3. memory


def deep_size(roots: list[Obj]) -> int:
    """``sys.getsizeof`` summed over every object reachable from ``roots``, each counted once."""
    seen: set[int] = set()
    total = 0
    stack: list[Any] = list(roots)
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, list):
            stack.extend(o)
    return total


@dataclass
class MemoryRun:
    pods: int
    json_bytes: int
    deep_bytes: int
    traced_bytes: int
    sync_s: float


def measure_cache(client: Client, ns: str, share: bool) -> MemoryRun:
    """An InformerCache's pods of ``ns``: bytes traced while it synced, deep size, sync time."""
    with cache_settings(share_subtrees=share):
        reset_shared_values()  # every run starts with empty sharing tables
        timed = InformerCache(client)
        gc.collect()
        started = time.perf_counter()
        timed.list(kinds.Pod, ns)
        sync_s = time.perf_counter() - started
        timed.stop()
        del timed
        reset_shared_values()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            cache = InformerCache(client)
            pods = cache.list(kinds.Pod, ns)
            gc.collect()
            traced = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    json_bytes = sum(len(orjson.dumps(p)) for p in pods)
    run = MemoryRun(len(pods), json_bytes, deep_size(pods), traced, sync_s)
    cache.stop()
    return run


def running_pods(cluster: EmbeddedCluster, ns: str, count: int) -> None:
    """``count`` typical pods, scheduled and Running+Ready by the simulated kubelet."""
    populate(cluster, ns, count)
    info = pods_info(cluster)

    def all_running() -> bool:
        return (
            sum(
                1
                for s in cluster.store.objects(info)
                if s.obj.get("metadata", {}).get("namespace") == ns
                and (s.obj.get("status") or {}).get("phase") == "Running"
                and any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in s.obj["status"].get("conditions") or ()
                )
            )
            == count
        )

    wait_until(all_running, 300, f"{count} running pods")
    cluster.kubelet.stop()  # nothing changes the pods while we measure


def diverse_running_pods(cluster: EmbeddedCluster, ns: str, count: int) -> None:
    """Running pods of 10 templates on 20 nodes, every timestamp and id unique per pod.

    The hard case for sharing: pods that started at different times (a cluster that has
    been up a while) share no condition, start time or container status.
    """
    make_namespace(cluster, ns)
    info = pods_info(cluster)
    base = 1_700_000_000
    for i in range(count):
        template = i % 10
        pod = typical_pod(f"pod-{i:05d}")
        pod["metadata"]["labels"]["pod-template-hash"] = f"7d9f8c6b{template}"
        pod["metadata"]["labels"]["app.kubernetes.io/instance"] = f"web-{template}"
        pod["spec"]["containers"][0]["image"] = f"registry.example.com/web/app:1.4.{template}"
        pod["spec"]["nodeName"] = f"node-{i % 20:02d}"
        stored = cluster.store.create(info, ns, pod)
        ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + 37 * i))
        status: Obj = {
            "phase": "Running",
            "qosClass": "Burstable",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
            ]
            + [{"type": "PodScheduled", "status": "True", "lastTransitionTime": ts}],
            "hostIP": f"10.0.0.{i % 20 + 1}",
            "hostIPs": [{"ip": f"10.0.0.{i % 20 + 1}"}],
            "podIP": f"10.244.{i // 250}.{i % 250 + 2}",
            "podIPs": [{"ip": f"10.244.{i // 250}.{i % 250 + 2}"}],
            "startTime": ts,
            "containerStatuses": [
                {
                    "containerID": f"containerd://{os.urandom(32).hex()}",
                    "image": c["image"],
                    "imageID": f"{c['image']}@sha256:{template:064x}",
                    "lastState": {},
                    "name": c["name"],
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": ts}},
                }
                for c in pod["spec"]["containers"]
            ],
        }
        cluster.store.update(
            info,
            ns,
            pod["metadata"]["name"],
            {**stored.obj, "status": status},
            subresource="status",
        )


def scenario_memory(ctx: FrameworkContext) -> None:
    sizes = ctx.sizes
    table = ctx.table(
        "memory",
        "F3. memory per cached pod: an `InformerCache` holding typical pods, vs the pods' JSON",
        "pods | store | count | JSON B/pod | traced B/pod | traced / JSON | objects only B/pod | objects / JSON | sync s (untraced)",
    )
    variants = [
        ("as created (Pending, unscheduled)", sizes.memory_pods, "created"),
        (
            "running, one template, started together (simulated kubelet)",
            sizes.memory_running_pods,
            "kubelet",
        ),
        (
            "running, 10 templates on 20 nodes, every timestamp and id unique",
            sizes.memory_pods,
            "diverse",
        ),
    ]
    results: dict[tuple[str, bool], MemoryRun] = {}
    for label, count, how in variants:
        log(f"memory: {count} pods, {label}")
        cluster = EmbeddedCluster(
            kubelet=how == "kubelet",
            deployments=False,
            pod_ready_after=0.0,
            history_size=4 * count + 1_000,
        )
        with cluster:
            ns = "memory"
            if how == "kubelet":
                running_pods(cluster, ns, count)
            elif how == "diverse":
                diverse_running_pods(cluster, ns, count)
            else:
                populate(cluster, ns, count)
            client = framework_client(cluster)
            client.list(kinds.Pod, ns)  # the server encodes each pod once: not measured
            for share in (False, True):
                run = measure_cache(client, ns, share)
                results[(label, share)] = run
                per = run.pods
                table.add(
                    label,
                    SHARING[share],
                    run.pods,
                    run.json_bytes / per,
                    run.traced_bytes / per,
                    f"{run.traced_bytes / run.json_bytes:.2f}x",
                    run.deep_bytes / per,
                    f"{run.deep_bytes / run.json_bytes:.2f}x",
                    run.sync_s,
                )
            client.close()
    table.notes.append(
        "**traced**: `tracemalloc` bytes still allocated after a new `InformerCache` listed and "
        "synced the pods (`gc.collect()` first, sharing tables emptied with "
        "`reset_shared_values()` so nothing allocated earlier is reused): the objects, the "
        "sharing tables, the store's dict and 3 built-in indexes, the informer's threads and "
        "buffers. **objects only**: `sys.getsizeof` over "
        "every dict, list, str and number reachable from the cached pods, each counted once. "
        "JSON = `orjson.dumps` of each cached pod (compact). Sub-object sharing stores "
        "equal containers, volumes, labels, ownerReferences, conditions... once "
        "(`kube_runtime.cache.store.share_values`); pods of one template share most of "
        "their spec. Every pod keeps a unique name, uid, podIP and containerIDs; the pods "
        "started together also share their conditions' timestamps, the last variant shares "
        "no timestamp (the worst case for sharing; the target is judged on it)."
    )
    label, count, _ = variants[2]
    run = results[(label, True)]
    ratio = run.traced_bytes / run.json_bytes
    ctx.targets.append(
        Target(
            "memory: cached running pod, 10 templates, unique timestamps (default store) "
            "vs its JSON",
            f"{ratio:.2f}x ({run.traced_bytes / run.pods:,.0f} B vs "
            f"{run.json_bytes / run.pods:,.0f} B JSON per pod, {count:,} pods, tracemalloc)",
            f"<= {MEMORY_TARGET_RATIO:.0f}x",
            ratio <= MEMORY_TARGET_RATIO,
        )
    )


# --------------------------------------------------------------------------- 4. steady


MIRROR_SUFFIX = "-mirror"


class MirrorReconciler:
    """Keep ``NAME-mirror`` (owned by NAME, same data) for each ``role=source`` ConfigMap.

    Reads come from the manager's cache; a write happens only when the mirror is missing or
    its data differs. Records when each request was reconciled.
    """

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.lock = threading.Lock()
        self.times: list[tuple[float, float, str]] = []  # (start, end, name)
        self.writes = 0
        self.in_flight = 0

    def reconcile(self, request: Request) -> None:
        started = time.perf_counter()
        with self.lock:
            self.in_flight += 1
        try:
            self._reconcile(request)
        finally:
            with self.lock:
                self.in_flight -= 1
                self.times.append((started, time.perf_counter(), request.name))

    def _reconcile(self, request: Request) -> None:
        try:
            source = self.client.get(kinds.ConfigMap, request.name, request.namespace)
        except NotFound:
            return
        name = request.name + MIRROR_SUFFIX
        try:
            mirror = self.client.get(kinds.ConfigMap, name, request.namespace)
        except NotFound:
            mirror = None
        data = source.get("data") or {}
        if mirror is None:
            new = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": request.namespace,
                    "labels": {"role": "mirror"},
                },
                "data": data,
            }
            with self.lock:
                self.writes += 1
            try:
                self.client.create(set_controller_reference(source, new))
            except AlreadyExists:
                pass  # created by an earlier reconcile; the cache has not seen it yet
        elif (mirror.get("data") or {}) != data:
            with self.lock:
                self.writes += 1
            self.client.update({**mirror, "data": data})

    def reconciled(self, since: float) -> dict[str, int]:
        """Reconciles per name that started at or after ``since``."""
        out: dict[str, int] = {}
        with self.lock:
            for started, _, name in self.times:
                if started >= since:
                    out[name] = out.get(name, 0) + 1
        return out


def source_config_map(name: str, i: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"role": "source", "app": "web"}},
        "data": {"index": str(i), "settings.yaml": f"replicas: {i % 7}\nmode: steady\n"},
    }


def scenario_steady(ctx: FrameworkContext) -> None:
    sizes = ctx.sizes
    n, period = sizes.steady_objects, sizes.resync_period
    table = ctx.table(
        "steady",
        f"F4. steady state: a Builder-made controller mirroring {n:,} ConfigMaps (owned copies), "
        f"then a full informer resync (`Manager(resync_period={period:g})`)",
        "phase | reconciles | objects reconciled | API requests (client) | API requests (server) | writes | seconds | reconciles/s",
    )
    with bench_cluster(history_size=4 * n + 1_000) as cluster:
        ns = "steady"
        make_namespace(cluster, ns)
        info = cluster.resource("", "configmaps")
        names = [f"cm-{i:05d}" for i in range(n)]
        for i, name in enumerate(names):
            cluster.store.create(info, ns, source_config_map(name, i))
        client = framework_client(cluster)
        manager = Manager(
            client,
            namespace=ns,
            resync_period=period,
            metrics_bind_address="0",
            health_probe_bind_address="0",
        )
        rec = MirrorReconciler(manager)
        controller = (
            Builder(manager)
            .named("bench-mirror")
            .for_(kinds.ConfigMap, label_selector("role=source"))
            .owns(kinds.ConfigMap)
            .complete(rec)
        )

        def idle() -> bool:
            return len(controller.queue) == 0 and rec.in_flight == 0

        def settled() -> bool:
            """Idle, and nothing reconciled for 0.3 s (handlers may still be queueing)."""
            with rec.lock:
                last = rec.times[-1][1] if rec.times else 0.0
            return idle() and time.perf_counter() - last > 0.3

        def mirrors() -> int:
            return len(manager.cache.list(kinds.ConfigMap, ns, label_selector="role=mirror"))

        cluster.api.records.clear()
        cluster.api.record_requests = True
        requests0 = rest_requests(client.host)
        with running(manager) as runner:
            started = time.perf_counter()
            wait_until(
                lambda: manager.cache.wait_for_cache_sync(0) and mirrors() == n, 120, "mirrors"
            )
            converge_s = wait_until(idle, 60, "the controller to go idle") - started
            wait_until(settled, 60, "the controller to settle")
            writes = rec.writes
            requests1 = rest_requests(client.host)
            server1 = len(cluster.api.records)
            first = rec.reconciled(0.0)
            log(f"steady: converged {n} objects in {converge_s:.2f} s, {writes} writes")
            if converge_s >= period:
                log("steady: convergence took longer than the resync period; resync s may span two")
            # The next resync reconciles every source again (through its own resync and its
            # mirror's), reading only the cache.
            mark = time.perf_counter()
            wait_until(lambda: len(rec.reconciled(mark)) >= n, 3 * period + 60, "a full resync")
            wait_until(settled, 60, "the controller to settle")
            requests2 = rest_requests(client.host)
            server2 = len(cluster.api.records)
            window = [t for t in rec.times if t[0] >= mark]
            resync_s = max(t[1] for t in window) - min(t[0] for t in window)
            after = rec.reconciled(mark)
            if runner.error is not None:
                raise runner.error
        cluster.api.record_requests = False
        client.close()
    first_total = sum(first.values())
    table.add(
        "converge: create every mirror",
        first_total,
        len(first),
        int(requests1 - requests0),
        server1,
        writes,
        converge_s,
        first_total / converge_s,
    )
    resync_reconciles = len(window)
    table.add(
        "full resync (every object already converged)",
        resync_reconciles,
        len(after),
        int(requests2 - requests1),
        server2 - server1,
        rec.writes - writes,
        resync_s,
        resync_reconciles / resync_s if resync_s > 0 else 0.0,
    )
    zero = requests2 == requests1 and server2 == server1 and len(after) >= n
    ctx.targets.append(
        Target(
            f"steady state: full resync of {n:,} converged objects",
            f"{int(requests2 - requests1)} client / {server2 - server1} server requests, "
            f"{len(after):,} of {n:,} objects reconciled again in {resync_s:.2f} s",
            "0 requests, every object reconciled",
            zero,
        )
    )
    table.notes.append(
        "One `ConfigMap` informer (namespace-scoped manager) serves `for_(ConfigMap, "
        "label_selector('role=source'))` and `owns(ConfigMap)`; the reconciler reads the "
        "source and its mirror from the cache and writes only when the mirror is missing or "
        "its data differs. **converge**: from `Manager.start` to every mirror in the cache "
        "and the queue idle; requests include the informer's list and watch. **resync**: "
        "the informer's periodic resync delivers `on_update(obj, obj)` for every cached "
        "object to both handlers (a source through `for_`, its owner through its mirror's "
        "`owns`), so a source can be reconciled twice; seconds = first to last reconcile of "
        "the resync. Client requests: `rest_client_requests_total` deltas; server: "
        "`cluster.api.records`."
    )


# --------------------------------------------------------------------------- 5. deserialize


def scenario_deserialize_framework(ctx: FrameworkContext) -> None:
    sizes = ctx.sizes
    n, reps = sizes.deser_pods, sizes.deser_reps
    table = ctx.table(
        "deserialize-framework",
        f"F5. `Client.list` (raw JSON dicts) vs the official client's models: {n:,} typical "
        f"pods ({reps} run(s) each, interleaved)",
        "client path | s per list (median) | vs `Client.list`",
    )
    with bench_cluster() as cluster:
        api, ns = deserialize_cluster(cluster, n)
        client = framework_client(cluster)
        client.list(kinds.Pod, ns)  # open the connection

        def ours() -> object:
            return client.list(kinds.Pod, ns, limit=n)

        def ours_paged() -> object:
            return client.list(kinds.Pod, ns)

        def raw() -> object:
            return orjson.loads(read_body(api.list_namespaced_pod(ns, _preload_content=False)))

        def models() -> object:
            return api.list_namespaced_pod(ns)

        paths: list[tuple[str, Callable[[], object]]] = [
            (f"`Client.list(Pod, ns, limit={n})` (one page)", ours),
            ("`Client.list(Pod, ns)` (default pages of 500)", ours_paged),
            ("`CoreV1Api.list_namespaced_pod(_preload_content=False)` + `orjson.loads`", raw),
            ("`CoreV1Api.list_namespaced_pod()` -> `V1PodList` models", models),
        ]
        times = time_lists(cluster, "deserialize-framework", paths, reps, n)
        client.close()
    base = median(times[paths[0][0]])
    for label, _ in paths:
        med = median(times[label])
        table.add(label, med, f"{med / base:.2f}x")
    table.notes.append(
        "Same server work for every path (the pods' JSON is cached by the server). "
        "`Client.list` fills in each item's apiVersion/kind and returns plain dicts; the "
        "official client `json.loads` the body and builds `V1Pod` model trees."
    )


# --------------------------------------------------------------------------- registry

SCENARIOS: dict[str, Callable[[FrameworkContext], None]] = {
    "informer": scenario_informer,
    "queue": scenario_queue,
    "memory": scenario_memory,
    "steady": scenario_steady,
    "deserialize-framework": scenario_deserialize_framework,
}
