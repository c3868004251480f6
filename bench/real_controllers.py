"""Suite ``real``: our StatefulSet controller against kube-controller-manager's, side by side.

Each contender runs **alone** against a fresh real control plane
(:class:`~kube_runtime.envtest.real.RealCluster`: etcd, kube-apiserver and
kube-controller-manager 1.20 as built by ``scripts/real-apiserver.sh``), one fresh cluster
per contender and workload, so every count starts from a clean etcd:

* ``ours``: ``kube-runtime run statefulset --kubeconfig K --metrics-port 0 --health-port 0
  --workers 2`` as its own process; kube-controller-manager runs only
  ``garbagecollector,namespace,pvc-protection`` (what the cluster needs, not the StatefulSet
  controller);
* ``kcm``: kube-controller-manager with ``--controllers=statefulset,garbagecollector,
  namespace,pvc-protection`` and its default client rate limit (``--kube-api-qps 20
  --kube-api-burst 30`` in 1.20; ``--concurrent-statefulset-syncs`` 5);
* ``kcm-fast``: the same with ``--kube-api-qps=1000 --kube-api-burst=2000``;
* ``ours-5``: ours with ``--workers 5`` (KCM's default number of concurrent syncs).

The simulated kubelet runs as its own process (``kube-runtime kubelet --pod-ready-after 0``)
from before the sets are created: it binds pods (``pods/binding``), reports their status,
and binds every claim (``PUT persistentvolumeclaims`` to set ``volumeName``, then
``PUT persistentvolumeclaims/status`` Bound), the same for every contender.

The benchmark (this process) creates the sets in one namespace per cluster from 4 threads
as fast as the API server takes them, watches them with an informer, and takes API writes
from kube-apiserver's ``/metrics`` (``apiserver_request_total``), as the delta between a
snapshot before the first create (after the API saw no write for :data:`QUIET_SECONDS`) and
one after convergence (again once quiet). Writes are attributed by resource, subresource
and verb (:func:`component`): the kubelet's, the benchmark's, events, and the rest, which
is the controller's. Reads (GET, LIST, WATCH) are counted too, all clients together, with
what reached etcd, the watch events sent by kind and the bytes answered
(:data:`EXTRA_COUNTERS`; the requests table of :func:`report`). CPU seconds of each process
come from ``/proc/PID/stat``. With ``KUBE_RUNTIME_BENCH_POD_WATCH=1`` the benchmark also
watches pods and reports, per set, how long its status trailed its last pod turning Ready
(:class:`SetTimes`).

While converging, the benchmark samples the sum of the sets' ``status.readyReplicas`` every
50 ms; each workload's curves (every contender on one chart, :mod:`bench.chart`) are written
to ``bench/real-<policy>-<sets>x<replicas>.png`` (:func:`chart_path`).

Scenarios: ``real-parallel`` and ``real-ordered``. ``KUBE_RUNTIME_BENCH_CONTENDERS`` (a
comma-separated subset of :data:`CONTENDERS` keys) limits the contenders, for debugging.
"""

from __future__ import annotations

import os
import re
import signal
import ssl
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bench.controllers import ControllersContext, ControllerSizes, shared_table, statefulset
from bench.embedded_server import _T0, Table
from kube_runtime.envtest.real import ChildProcess

Obj = dict[str, Any]

#: (verb, resource, subresource, code) as ``apiserver_request_total`` labels them.
Key = tuple[str, str, str, str]
K = TypeVar("K")

WRITE_VERBS = frozenset({"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY"})
QUIET_SECONDS = 3.0
"""Writes are counted until kube-apiserver served none for this long (polled every 0.5 s)."""
QUIET_TIMEOUT = 180.0
CONVERGE_TIMEOUT = 900.0
CREATE_THREADS = 4
NAMESPACE = "bench"
POD_READY_AFTER = 0.0
KCM_STS_SYNCS = 5
"""kube-controller-manager 1.20's default ``--concurrent-statefulset-syncs``."""
OUR_DEFAULT_WORKERS = 2
"""``kube-runtime run --workers`` default."""

#: Writes the simulated kubelet makes: binding and status of pods, its Node, and binding a
#: claim (``PUT persistentvolumeclaims`` setting ``volumeName``) plus the claim's status.
KUBELET_WRITES = frozenset(
    {
        ("POST", "pods", "binding"),
        ("PUT", "pods", "status"),
        ("PATCH", "pods", "status"),
        ("POST", "nodes", ""),
        ("PUT", "nodes", ""),
        ("PATCH", "nodes", ""),
        ("PUT", "nodes", "status"),
        ("PATCH", "nodes", "status"),
        ("PUT", "persistentvolumeclaims", ""),
        ("PUT", "persistentvolumeclaims", "status"),
    }
)
#: The benchmark's own writes: the sets and the namespace.
HARNESS_WRITES = frozenset({("POST", "statefulsets", ""), ("POST", "namespaces", "")})
COMPONENTS = ("controller", "events", "kubelet", "harness")
POD_WATCH_ENV = "KUBE_RUNTIME_BENCH_POD_WATCH"
"""Set to ``1``: the benchmark also watches pods, for each set's status lag
(:class:`SetTimes`); off by default, as the watch is one more load on kube-apiserver."""

_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>.*)\}\s+(?P<value>\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def log(message: str) -> None:
    """A progress line on stderr (the tables go to stdout)."""
    print(f"[{time.perf_counter() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- pure parts


def parse_request_counts(text: str) -> Counter[Key]:
    """``apiserver_request_total`` from Prometheus text, summed over every label but verb,
    resource, subresource and code."""
    counts: Counter[Key] = Counter()
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m is None:
            continue
        labels = dict(_LABEL.findall(m.group("labels")))
        key = (
            labels.get("verb", ""),
            labels.get("resource", ""),
            labels.get("subresource", ""),
            labels.get("code", ""),
        )
        counts[key] += int(float(m.group("value")))
    return counts


_ANY_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)")

#: Counter families read besides ``apiserver_request_total`` (:func:`parse_counters`):
#: what reached etcd (operation, type), the watch cache's lists, watch events sent and the
#: bytes of the answers kube-apiserver wrote (``apiserver_response_sizes_sum``).
EXTRA_COUNTERS: dict[str, tuple[str, ...]] = {
    "etcd_request_duration_seconds_count": ("operation", "type"),
    "apiserver_cache_list_total": ("resource_prefix", "index"),
    "apiserver_cache_list_fetched_objects_total": ("resource_prefix", "index"),
    "apiserver_watch_events_total": ("kind",),
    "apiserver_watch_events_sizes_sum": ("kind",),
    "apiserver_response_sizes_sum": ("verb", "resource", "subresource"),
    "apiserver_request_duration_seconds_sum": ("verb", "resource", "subresource"),
}

#: (metric family, its labels of :data:`EXTRA_COUNTERS` in order).
ExtraKey = tuple[str, tuple[str, ...]]


def parse_counters(
    text: str, families: Mapping[str, Sequence[str]] = EXTRA_COUNTERS
) -> dict[ExtraKey, float]:
    """The samples of ``families`` in Prometheus text, each summed over every label but the
    family's own (``{"apiserver_watch_events_total": ("kind",)}``); float values (seconds,
    bytes) are kept as they are."""
    out: dict[ExtraKey, float] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = _ANY_SAMPLE.match(line)
        if m is None or m.group("name") not in families:
            continue
        name = m.group("name")
        labels = dict(_LABEL.findall(m.group("labels") or ""))
        key = (name, tuple(labels.get(k, "") for k in families[name]))
        out[key] = out.get(key, 0.0) + float(m.group("value"))
    return out


def delta(after: Mapping[K, Any], before: Mapping[K, Any]) -> Counter[K]:
    """Requests (or any counters) counted in ``after`` and not yet in ``before`` (counters
    only grow)."""
    out: Counter[K] = Counter()
    for key, n in after.items():
        d = n - before.get(key, 0)
        if d > 0:
            out[key] = d
    return out


def is_write(key: Key) -> bool:
    return key[0] in WRITE_VERBS


def succeeded(key: Key) -> bool:
    return key[3].startswith("2")


def component(key: Key) -> str:
    """Who made a write: ``kubelet``, ``harness`` (the benchmark), ``events`` (the event
    recorder of either controller) or ``controller`` (everything else)."""
    verb, resource, subresource, _ = key
    if (verb, resource, subresource) in KUBELET_WRITES:
        return "kubelet"
    if (verb, resource, subresource) in HARNESS_WRITES:
        return "harness"
    if resource == "events":
        return "events"
    return "controller"


def split_writes(requests: Mapping[Key, int]) -> dict[str, Counter[Key]]:
    """The write requests of ``requests`` by :func:`component` (every component present)."""
    out: dict[str, Counter[Key]] = {c: Counter() for c in COMPONENTS}
    for key, n in requests.items():
        if is_write(key) and n:
            out[component(key)][key] += n
    return out


def resource_name(key: Key) -> str:
    return key[1] + (f"/{key[2]}" if key[2] else "")


def count(writes: Mapping[Key, int], verb: str, resource: str, *, ok: bool = True) -> int:
    """Successful (``ok``) or failed writes of ``verb`` on ``resource`` (``pods/status``)."""
    return sum(
        n
        for k, n in writes.items()
        if k[0] == verb and resource_name(k) == resource and succeeded(k) == ok
    )


def total(writes: Mapping[Key, int], *, ok: bool = True) -> int:
    return sum(n for k, n in writes.items() if succeeded(k) == ok)


def status_writes(writes: Mapping[Key, int]) -> int:
    """Successful PUT and PATCH of ``statefulsets/status``."""
    return count(writes, "PUT", "statefulsets/status") + count(
        writes, "PATCH", "statefulsets/status"
    )


def breakdown(writes: Mapping[Key, int]) -> str:
    """``POST pods 1,000, PUT statefulsets/status 400, ...`` (successful, largest first)."""
    by: Counter[tuple[str, str]] = Counter()
    for k, n in writes.items():
        if succeeded(k):
            by[(k[0], resource_name(k))] += n
    return ", ".join(f"{v} {r} {n:,}" for (v, r), n in by.most_common()) or "none"


def read_summary(reads: Mapping[Key, int]) -> str:
    """``LIST pods 3, GET statefulsets 2, WATCH pods 1`` (every code, largest first)."""
    by: Counter[tuple[str, str]] = Counter()
    for k, n in reads.items():
        by[(k[0], resource_name(k))] += n
    return ", ".join(f"{v} {r} {n:,}" for (v, r), n in by.most_common()) or "none"


def verb_summary(*requests: Mapping[Key, int]) -> str:
    """``POST 4,200, PUT 5,400, GET 1,030, ...`` over every mapping given (largest first)."""
    by: Counter[str] = Counter()
    for mapping in requests:
        for k, n in mapping.items():
            by[k[0]] += n
    return ", ".join(f"{v} {n:,}" for v, n in by.most_common()) or "none"


def family_summary(extra: Mapping[ExtraKey, float], family: str, by: int | None = None) -> str:
    """One family of :data:`EXTRA_COUNTERS` as ``label 1,234, ...`` (largest first); ``by``:
    the index of the one label to group by (default: all the family's labels)."""
    out: dict[str, float] = {}
    for (name, labels), n in extra.items():
        if name == family:
            label = "/".join(labels) if by is None else labels[by]
            out[label] = out.get(label, 0.0) + n
    ranked = sorted(out.items(), key=lambda item: -item[1])
    return ", ".join(f"{k} {int(n):,}" for k, n in ranked) or "none"


def failures(writes: Mapping[Key, int]) -> str:
    """``PUT statefulsets/status 409: 3, ...`` or ``none``."""
    failed = sorted((k, n) for k, n in writes.items() if not succeeded(k))
    return ", ".join(f"{k[0]} {resource_name(k)} {k[3]}: {n:,}" for k, n in failed) or "none"


def sts_converged(sts: Mapping[str, Any], replicas: int) -> bool:
    """Converged as apps/v1 1.20 reports it: ``observedGeneration`` current, ``replicas``,
    ``readyReplicas``, ``currentReplicas`` and ``updatedReplicas`` all equal to ``replicas``,
    one revision. Zero-valued fields are omitted by kube-apiserver, hence ``.get(f, 0)``;
    ``availableReplicas`` (1.22) does not exist in 1.20."""
    status = sts.get("status") or {}
    meta = sts.get("metadata") or {}
    return bool(
        status.get("observedGeneration", 0) == meta.get("generation")
        and all(
            status.get(f, 0) == replicas
            for f in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas")
        )
        and status.get("currentRevision")
        and status.get("currentRevision") == status.get("updateRevision")
    )


def ready_pods(sets: Iterable[Mapping[str, Any]]) -> int:
    """The sum of the sets' ``status.readyReplicas`` (omitted when 0)."""
    return sum(int((s.get("status") or {}).get("readyReplicas", 0)) for s in sets)


def chart_path(policy: str, sets: int, replicas: int) -> Path:
    """``bench/real-parallel-200x5.png``: where a workload's ready-pod chart goes."""
    return Path(__file__).parent / f"real-{policy.lower()}-{sets}x{replicas}.png"


def draw_chart(results: Sequence[Result], path: Path, *, dpi: int = 110) -> Path | None:
    """Every contender's ready-pod curve of one workload on one chart at ``path`` (None,
    and nothing written, without results)."""
    from bench.chart import draw_ready_pods

    if not results:
        return None
    first = results[0]
    return draw_ready_pods(
        {r.contender.label: r.ready_curve for r in results},
        path,
        title=f"{first.workload} StatefulSets on kube-apiserver 1.20: pods Ready over time",
        total=first.sets * first.replicas,
        dpi=dpi,
    )


def proc_cpu_seconds(stat: str, ticks: int) -> float:
    """user + system CPU seconds from the text of ``/proc/PID/stat``."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


# --------------------------------------------------------------------------- processes


def cpu_of(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    try:
        with open(f"/proc/{pid}/stat") as f:
            return proc_cpu_seconds(f.read(), os.sysconf("SC_CLK_TCK"))
    except OSError:
        return float("nan")


def find_pid(executable: str, needle: str) -> int | None:
    """The process whose argv[0] ends with ``executable`` and whose command line contains
    ``needle`` (RealCluster's processes are found by their unique arguments)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            argv
            and argv[0].decode(errors="replace").endswith(executable)
            and any(needle in a.decode(errors="replace") for a in argv)
        ):
            return int(entry.name)
    return None


def kube_runtime_argv(*args: str) -> list[str]:
    """``kube-runtime ARGS``: the console script of this interpreter's environment."""
    script = Path(sys.executable).parent / "kube-runtime"
    if os.access(script, os.X_OK):
        return [str(script), *args]
    return [
        sys.executable,
        "-c",
        "import sys; from kube_runtime.cli import main; sys.exit(main(sys.argv[1:]))",
        *args,
    ]


class Child(ChildProcess):
    """A process of ours (kubelet, controller) with its log; SIGTERM, then SIGKILL."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path) -> None:
        super().__init__(name, argv, log_path, stop_timeout=15.0)

    def wait_log(self, pattern: str, timeout: float = 60.0) -> None:
        """Until the log matches ``pattern`` (RuntimeError if the process exits or time
        runs out)."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while time.monotonic() < deadline:
            if regex.search(self.log_path.read_text(errors="replace")):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        raise RuntimeError(f"{self.name}: no {pattern!r} in its log ({self.log_path}):\n{tail}")


def wait_log_file(path: Path, pattern: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        try:
            if regex.search(path.read_text(errors="replace")):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"no {pattern!r} in {path} after {timeout:.0f}s")


class ApiMetrics:
    """kube-apiserver's ``/metrics``, read with the cluster's token."""

    def __init__(self, url: str, token: str, ca_file: Path) -> None:
        self._request = urllib.request.Request(
            f"{url}/metrics", headers={"Authorization": f"Bearer {token}"}
        )
        self._ctx = ssl.create_default_context(cafile=str(ca_file))

        self.last_text = ""
        """The text of the last ``/metrics`` read (for :func:`parse_counters`)."""

    def requests(self) -> Counter[Key]:
        with urllib.request.urlopen(self._request, context=self._ctx, timeout=30) as resp:
            self.last_text = resp.read().decode()
        return parse_request_counts(self.last_text)

    def wait_quiet(
        self, seconds: float = QUIET_SECONDS, timeout: float = QUIET_TIMEOUT
    ) -> tuple[Counter[Key], float]:
        """Poll until no write was served for ``seconds``; the last snapshot and the time of
        the last change seen (perf_counter)."""
        snapshot = self.requests()
        last = sum(n for k, n in snapshot.items() if is_write(k))
        since = time.perf_counter()
        deadline = since + timeout
        while time.perf_counter() - since < seconds:
            if time.perf_counter() > deadline:
                log(f"  still writing after {timeout:.0f}s; counting what there is")
                break
            time.sleep(0.5)
            snapshot = self.requests()
            now = sum(n for k, n in snapshot.items() if is_write(k))
            if now != last:
                last, since = now, time.perf_counter()
        return snapshot, since


# --------------------------------------------------------------------------- contenders


@dataclass(frozen=True)
class Contender:
    key: str
    label: str
    workers: int | None
    """``--workers`` of ``kube-runtime run statefulset``; None: kube-controller-manager's."""
    kcm_qps: float | None = None
    kcm_burst: int | None = None

    @property
    def ours(self) -> bool:
        return self.workers is not None

    def controllers(self) -> tuple[str, ...]:
        base = ("garbagecollector", "namespace", "pvc-protection")
        return base if self.ours else ("statefulset", *base)


CONTENDERS = (
    Contender("ours", f"kube-runtime ({OUR_DEFAULT_WORKERS} workers)", OUR_DEFAULT_WORKERS),
    Contender("kcm", f"KCM 1.20 (qps 20, burst 30, {KCM_STS_SYNCS} syncs)", None),
    Contender(
        "kcm-fast", f"KCM 1.20 (qps 1000, burst 2000, {KCM_STS_SYNCS} syncs)", None, 1000, 2000
    ),
    Contender("ours-5", f"kube-runtime ({KCM_STS_SYNCS} workers)", KCM_STS_SYNCS),
)


def chosen_contenders() -> list[Contender]:
    wanted = os.environ.get("KUBE_RUNTIME_BENCH_CONTENDERS")
    if not wanted:
        return list(CONTENDERS)
    keys = [k.strip() for k in wanted.split(",") if k.strip()]
    unknown = set(keys) - {c.key for c in CONTENDERS}
    if unknown:
        raise ValueError(
            f"unknown contender(s) {sorted(unknown)}; known: {[c.key for c in CONTENDERS]}"
        )
    return [c for c in CONTENDERS if c.key in keys]


class SetTimes:
    """When the benchmark's informers saw each set converge and each pod turn Ready
    (perf_counter seconds); handlers for a StatefulSet and (optional) a Pod informer.

    :meth:`status_lags` is, per set, the seconds from its last pod seen Ready to the set
    seen converged: how long a set's status trails its pods (the controller's queue wait,
    sync and status write, plus the two watch paths, which both contenders share)."""

    def __init__(self, replicas: int) -> None:
        self.replicas = replicas
        self.converged: dict[str, float] = {}
        self.pod_ready: dict[str, float] = {}

    def on_set(self, sts: Obj, _new: Obj | None = None) -> None:
        obj = _new if _new is not None else sts
        name = (obj.get("metadata") or {}).get("name", "")
        if name not in self.converged and sts_converged(obj, self.replicas):
            self.converged[name] = time.perf_counter()

    def on_pod(self, pod: Obj, _new: Obj | None = None) -> None:
        obj = _new if _new is not None else pod
        name = (obj.get("metadata") or {}).get("name", "")
        if name in self.pod_ready:
            return
        for c in (obj.get("status") or {}).get("conditions") or ():
            if c.get("type") == "Ready" and c.get("status") == "True":
                self.pod_ready[name] = time.perf_counter()
                return

    def status_lags(self) -> list[float]:
        """Per converged set whose every pod was seen Ready: converged - last pod Ready."""
        return sorted(self.lags_by_set().values())

    def lags_by_set(self) -> dict[str, float]:
        """:meth:`status_lags` by set name."""
        last: dict[str, float] = {}
        count: Counter[str] = Counter()
        for pod, t in self.pod_ready.items():
            owner = pod.rsplit("-", 1)[0]
            last[owner] = max(last.get(owner, 0.0), t)
            count[owner] += 1
        return {
            name: t - last[name]
            for name, t in self.converged.items()
            if count[name] == self.replicas
        }


def quantiles(values: Sequence[float]) -> str:
    """``median / p90 / max`` of ``values`` (seconds, 2 decimals) or ``-``."""
    if not values:
        return "-"
    v = sorted(values)
    return f"{v[len(v) // 2]:.2f} / {v[min(len(v) - 1, (9 * len(v)) // 10)]:.2f} / {v[-1]:.2f}"


@dataclass
class Result:
    contender: Contender
    workload: str
    sets: int
    replicas: int
    load: float
    milestones: dict[str, float]
    writes: dict[str, Counter[Key]]
    cpu: dict[str, float]
    objects: dict[str, int] = field(default_factory=dict)
    quiet_after: float = 0.0
    ready_curve: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since the first create, sum of the sets' ``status.readyReplicas``)."""
    reads: Counter[Key] = field(default_factory=Counter)
    """Every request that is not a write (GET, LIST, WATCH, ...), all clients together."""
    extra: Mapping[ExtraKey, float] = field(default_factory=dict)
    """Deltas of :data:`EXTRA_COUNTERS` over the measured interval."""
    set_converged: dict[str, float] = field(default_factory=dict)
    """Seconds from the first create until the benchmark saw each set converged."""
    status_lags: dict[str, float] = field(default_factory=dict)
    """Per set: seconds from its last pod seen Ready to the set seen converged (only with
    the pod watch, :data:`POD_WATCH_ENV`)."""

    @property
    def seconds(self) -> float:
        return self.milestones["converged"]


# --------------------------------------------------------------------------- one run


@contextmanager
def contender_cluster(
    contender: Contender, profile_to: Path | None = None
) -> Iterator[tuple[Any, Path, dict[str, Child]]]:
    """A fresh RealCluster, the kubelet process and (ours) the controller process; with
    ``profile_to``, the controller runs under :mod:`bench.profiled`, writing there."""
    from kube_runtime.envtest.real import RealCluster

    cluster = RealCluster(
        controllers=contender.controllers(),
        kubelet=False,
        kube_api_qps=contender.kcm_qps,
        kube_api_burst=contender.kcm_burst,
    )
    children: dict[str, Child] = {}
    with cluster:
        try:
            kubeconfig = cluster.write_kubeconfig(cluster.workdir / "bench-kubeconfig")
            kubelet = Child(
                "kubelet",
                kube_runtime_argv(
                    "kubelet",
                    "--kubeconfig",
                    str(kubeconfig),
                    "--pod-ready-after",
                    f"{POD_READY_AFTER:g}",
                ),
                cluster.workdir / "bench-kubelet.log",
            )
            children["kubelet"] = kubelet
            kubelet.wait_log("simulated kubelet running as node")
            if contender.ours:
                args = (
                    "run",
                    "statefulset",
                    "--kubeconfig",
                    str(kubeconfig),
                    "--metrics-port",
                    "0",
                    "--health-port",
                    "0",
                    "--workers",
                    str(contender.workers),
                )
                argv = (
                    [sys.executable, "-m", "bench.profiled", str(profile_to), *args]
                    if profile_to is not None
                    else kube_runtime_argv(*args)
                )
                ours = Child(
                    "kube-runtime",
                    argv,
                    cluster.workdir / "bench-controller.log",
                )
                children["controller"] = ours
                ours.wait_log(r"controller statefulset: starting \d+ worker")
            else:
                wait_log_file(
                    cluster.logs()["kube-controller-manager"], r"Caches are synced for stateful set"
                )
            yield cluster, kubeconfig, children
        finally:
            for child in reversed(list(children.values())):
                child.stop()


def run_contender(
    contender: Contender,
    workload: str,
    policy: str,
    sets: int,
    replicas: int,
    profile_to: Path | None = None,
) -> Result:
    from kube_runtime import kinds
    from kube_runtime.cache.informer import ResourceEventHandlerFuncs, SharedInformer
    from kube_runtime.client import Client

    log(f"-- {workload}: {contender.label}: starting a fresh cluster")
    profile_to = profile_to if contender.ours else None
    with contender_cluster(contender, profile_to) as (cluster, kubeconfig, children):
        client = Client.from_kubeconfig(str(kubeconfig))
        metrics = ApiMetrics(cluster.url, cluster.token, cluster.certs.ca_file)
        pids = {
            "kube-apiserver": find_pid("kube-apiserver", f"--cert-dir={cluster.workdir}"),
            "kube-controller-manager": find_pid(
                "kube-controller-manager", f"--kubeconfig={cluster.workdir}"
            ),
            "kubelet": children["kubelet"].pid,
        }
        etcd_url = _etcd_url(pids["kube-apiserver"])
        pids["etcd"] = find_pid("etcd", f"--listen-client-urls={etcd_url}") if etcd_url else None
        pids["controller"] = (
            children["controller"].pid if contender.ours else pids["kube-controller-manager"]
        )
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        informer = SharedInformer(client, kinds.StatefulSet, namespace=NAMESPACE)
        times = SetTimes(replicas)
        informer.add_event_handler(
            ResourceEventHandlerFuncs(on_add=times.on_set, on_update=times.on_set)
        )
        pod_informer = None
        if os.environ.get(POD_WATCH_ENV) == "1":
            pod_informer = SharedInformer(client, kinds.Pod, namespace=NAMESPACE)
            pod_informer.add_event_handler(
                ResourceEventHandlerFuncs(on_add=times.on_pod, on_update=times.on_pod)
            )
            pod_informer.start()
        informer.start()
        try:
            if not informer.wait_for_sync(60) or not (
                pod_informer is None or pod_informer.wait_for_sync(60)
            ):
                raise RuntimeError("the benchmark's informers did not sync")
            before, _ = metrics.wait_quiet()
            extra_before = parse_counters(metrics.last_text)
            cpu_before = {k: cpu_of(p) for k, p in pids.items()}
            if profile_to is not None:
                os.kill(children["controller"].pid, signal.SIGUSR1)  # start-up left out
            load = os.getloadavg()[0]
            manifests = [statefulset(f"web-{i:03d}", replicas, policy) for i in range(sets)]
            log(f"   creating {sets} sets x {replicas} ({policy}); load {load:.2f}")
            started = time.perf_counter()
            with ThreadPoolExecutor(CREATE_THREADS) as pool:
                list(pool.map(lambda m: client.create(m, namespace=NAMESPACE), manifests))
            created = time.perf_counter()
            curve: list[tuple[float, int]] = []
            milestones = track(
                informer.indexer.list, sets, replicas, started, workload, ready_curve=curve
            )
            milestones["all sets created"] = created - started
            after, last_write = metrics.wait_quiet()
            extra = delta(parse_counters(metrics.last_text), extra_before)
            cpu_after = {k: cpu_of(p) for k, p in pids.items()}
            if profile_to is not None:
                os.kill(children["controller"].pid, signal.SIGUSR2)  # CPU per thread, now
        finally:
            informer.stop()
            if pod_informer is not None:
                pod_informer.stop()
        objects = {
            "pods": len(client.list(kinds.Pod, NAMESPACE)["items"]),
            "claims": len(client.list(kinds.PersistentVolumeClaim, NAMESPACE)["items"]),
            "revisions": len(client.list(kinds.ControllerRevision, NAMESPACE)["items"]),
        }
        client.close()
    requests = delta(after, before)
    writes = split_writes(requests)
    result = Result(
        contender,
        workload,
        sets,
        replicas,
        load,
        milestones,
        writes,
        {k: cpu_after[k] - cpu_before[k] for k in cpu_before},
        objects,
        max(0.0, last_write - started - milestones["converged"]),
        curve,
        Counter({k: n for k, n in requests.items() if not is_write(k)}),
        extra,
        {name: t - started for name, t in times.converged.items()},
        times.lags_by_set(),
    )
    c = writes["controller"]
    log(
        f"   {contender.label}: converged in {result.seconds:.1f} s; controller writes "
        f"{total(c):,} ({failures(c)}), status writes/set {status_writes(c) / sets:.2f}, "
        f"controller CPU {result.cpu['controller']:.1f} s; reads {read_summary(result.reads)}"
        + (
            f"; status lag s (median / p90 / max) {quantiles(list(result.status_lags.values()))}"
            if result.status_lags
            else ""
        )
    )
    return result


def _etcd_url(apiserver_pid: int | None) -> str | None:
    if apiserver_pid is None:
        return None
    try:
        argv = Path(f"/proc/{apiserver_pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return None
    for a in argv:
        if a.startswith("--etcd-servers="):
            return a.split("=", 1)[1]
    return None


def track(
    list_sets: Callable[[], Iterable[Obj]],
    sets: int,
    replicas: int,
    started: float,
    what: str,
    ready_curve: list[tuple[float, int]] | None = None,
) -> dict[str, float]:
    """Poll the informer's sets every 50 ms; seconds from ``started`` to each milestone:
    every set reporting all its pods (``status.replicas``), half and all converged. Each
    poll appends (seconds, sum of ``status.readyReplicas``) to ``ready_curve`` if given."""
    times: dict[str, float] = {}
    next_log = time.perf_counter() + 10
    while True:
        now = time.perf_counter()
        items = list(list_sets())
        with_pods = sum(1 for s in items if (s.get("status") or {}).get("replicas", 0) == replicas)
        done = sum(1 for s in items if sts_converged(s, replicas))
        if ready_curve is not None:
            ready_curve.append((now - started, ready_pods(items)))
        if with_pods >= sets:
            times.setdefault("pods reported", now - started)
        if 2 * done >= sets:
            times.setdefault("half converged", now - started)
        if done >= sets:
            times["converged"] = now - started
            times.setdefault("pods reported", now - started)
            return times
        if now > next_log:
            log(
                f"   {what}: {now - started:.0f} s, {done}/{sets} converged, {with_pods} with all pods"
            )
            next_log = now + 10
        if now - started > CONVERGE_TIMEOUT:
            raise RuntimeError(f"{what}: {done}/{sets} converged after {CONVERGE_TIMEOUT:.0f}s")
        time.sleep(0.05)


# --------------------------------------------------------------------------- report


MAIN_TITLE = (
    "Real kube-apiserver 1.20: StatefulSet controllers side by side (each alone, fresh "
    "cluster per row, simulated kubelet in its own process, pods Ready at once)"
)
WRITES_TITLE = "Real kube-apiserver 1.20: API writes by component, verb and resource"
REQUESTS_TITLE = "Real kube-apiserver 1.20: requests by verb (reads included), watch events, etcd"


def report(ctx: ControllersContext, results: list[Result]) -> None:
    main = shared_table(
        ctx,
        MAIN_TITLE,
        [
            "workload",
            "contender",
            "converged s",
            "vs ours",
            "pods / PVCs / revisions created",
            "status writes/set",
            "controller writes",
            "writes/set",
            "failed writes",
            "event writes",
            "controller CPU s",
            "KCM CPU s",
            "load 1m",
        ],
    )
    by_resource = shared_table(
        ctx,
        WRITES_TITLE,
        [
            "workload",
            "contender",
            "controller (successful)",
            "events",
            "kubelet",
            "benchmark",
            "CPU s: kubelet / apiserver / etcd",
        ],
    )
    requests = shared_table(
        ctx,
        REQUESTS_TITLE,
        [
            "workload",
            "contender",
            "requests by verb (all clients)",
            "reads",
            "watch events sent",
            "etcd operations",
            "status lag s (median / p90 / max)",
        ],
    )
    base = next((r for r in results if r.contender.key == "ours"), None)
    for r in results:
        c = r.writes["controller"]
        created = (
            f"{count(c, 'POST', 'pods'):,} / {count(c, 'POST', 'persistentvolumeclaims'):,} / "
            f"{count(c, 'POST', 'controllerrevisions'):,}"
        )
        if (
            r.objects.get("pods") != count(c, "POST", "pods")
            or r.objects.get("claims") != count(c, "POST", "persistentvolumeclaims")
            or r.objects.get("revisions") != count(c, "POST", "controllerrevisions")
        ):
            created += (
                f" (listed: {r.objects.get('pods')} / {r.objects.get('claims')} / "
                f"{r.objects.get('revisions')})"
            )
        failed = failures(c)
        event_failures = failures(r.writes["events"])
        main.add(
            r.workload,
            r.contender.label,
            r.seconds,
            f"{r.seconds / base.seconds:.2f}x" if base is not None else "-",
            created,
            status_writes(c) / r.sets,
            total(c),
            total(c) / r.sets,
            failed if failed != "none" else "0",
            total(r.writes["events"]) + total(r.writes["events"], ok=False),
            r.cpu["controller"],
            "(same)" if not r.contender.ours else r.cpu["kube-controller-manager"],
            r.load,
        )
        kubelet = r.writes["kubelet"]
        by_resource.add(
            r.workload,
            r.contender.label,
            breakdown(c),
            breakdown(r.writes["events"])
            + ("" if event_failures == "none" else f"; failed {event_failures}"),
            f"{total(kubelet):,}: {breakdown(kubelet)}"
            + ("" if failures(kubelet) == "none" else f"; failed {failures(kubelet)}"),
            f"{total(r.writes['harness']):,}",
            f"{r.cpu['kubelet']:.1f} / {r.cpu['kube-apiserver']:.1f} / {r.cpu['etcd']:.1f}",
        )
        requests.add(
            r.workload,
            r.contender.label,
            verb_summary(*r.writes.values(), r.reads),
            read_summary(r.reads),
            family_summary(r.extra, "apiserver_watch_events_total"),
            family_summary(r.extra, "etcd_request_duration_seconds_count", by=0),
            quantiles(list(r.status_lags.values())),
        )
    main.notes[:] = [
        "converged s: from the first StatefulSet create until the benchmark's informer saw "
        "every set converged (1.20 fields: observedGeneration current, replicas = readyReplicas "
        "= currentReplicas = updatedReplicas = spec.replicas, currentRevision = updateRevision). "
        "vs ours: converged s / that of kube-runtime with its default 2 workers, same workload. "
        "Writes come from kube-apiserver's `apiserver_request_total` (delta from before the first "
        f"create to when the API had served no write for {QUIET_SECONDS:g} s after convergence). "
        "Controller writes = every write that is not the kubelet's (pods/binding, pods/status, "
        "nodes, PUT persistentvolumeclaims and persistentvolumeclaims/status), the benchmark's "
        "(POST statefulsets, POST namespaces) or an event; successful only, failed ones (code) "
        "apart. status writes/set = successful PUT + PATCH statefulsets/status / sets. "
        "controller CPU s: user + system of the controller's process over the same interval "
        "(ours: `kube-runtime run`; KCM: the whole kube-controller-manager, which also runs the "
        "garbage collector, namespace and pvc-protection controllers); KCM CPU s for our rows is "
        "that kube-controller-manager without its StatefulSet controller.",
    ]
    requests.notes[:] = [
        "Every request kube-apiserver served over the measured interval, all clients together "
        "(controller, kubelet, benchmark, kube-controller-manager), by verb and (reads) by "
        "resource; watch events sent (apiserver_watch_events_total, by kind: one per event and "
        "watcher); etcd operations (etcd_request_duration_seconds_count, by operation). status "
        "lag: per set, from its last pod seen Ready to the set seen converged by the "
        f"benchmark's informers (only with {POD_WATCH_ENV}=1, else -).",
    ]
    by_resource.notes[:] = [
        "Successful writes by verb and resource per component (see the main table for how "
        "writes are attributed); CPU seconds of the simulated kubelet, kube-apiserver and etcd "
        "processes over the measured interval.",
    ]


def _missing() -> list[str]:
    from kube_runtime.envtest.real import default_bin_dir, missing_binaries

    missing = missing_binaries()
    return [f"{b} in {default_bin_dir()}" for b in missing]


def run_workload(ctx: Any, policy: str) -> None:
    """StatefulSets of ``policy`` (``Parallel`` or ``OrderedReady``), as many as the sizes say."""
    sizes = _sizes(ctx)
    sets = sizes.parallel_sets if policy == "Parallel" else sizes.ordered_sets
    workload = f"{policy} {sets} x {sizes.set_replicas}"
    missing = _missing()
    if missing:
        log(f"skipped: missing {', '.join(missing)} (build them: bash scripts/real-apiserver.sh)")
        table: Table = shared_table(ctx, MAIN_TITLE, ["workload", "skipped"])
        table.add(workload, f"missing {', '.join(missing)}: run scripts/real-apiserver.sh")
        return
    results = []
    for contender in chosen_contenders():
        profile_to = None
        if ctx.profile and contender.ours:
            profile_to = Path(tempfile.gettempdir()) / (
                f"bench-profile-{policy.lower()}-{contender.key}.md"
            )
        results.append(
            run_contender(contender, workload, policy, sets, sizes.set_replicas, profile_to)
        )
        if profile_to is not None:
            log(f"   {contender.label}: CPU profile in {profile_to}")
    report(ctx, results)
    chart = draw_chart(results, chart_path(policy, sets, sizes.set_replicas))
    if chart is not None:
        log(f"   wrote {chart}")


def _sizes(ctx: Any) -> ControllerSizes:
    if not isinstance(ctx, ControllersContext):
        raise TypeError("the real suite needs a ControllersContext")
    return ctx.controllers


def scenario_parallel(ctx: Any) -> None:
    run_workload(ctx, "Parallel")


def scenario_ordered(ctx: Any) -> None:
    run_workload(ctx, "OrderedReady")


SCENARIOS: dict[str, Callable[[Any], None]] = {
    "real-parallel": scenario_parallel,
    "real-ordered": scenario_ordered,
}
