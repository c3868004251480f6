"""``make chaos``: a seeded fault campaign over the bundled controllers (issue 18, part 6).

Each run starts a fresh embedded cluster in this process (its store's commit stream is watched
here) and ``kube-runtime run statefulset cloneset`` as a separate process, creates one workload
with a volumeClaimTemplate, waits until it has converged without faults, then changes its image
and measures the rollout until it has converged again. A run is *fault-free* (the reference)
or *faulted*: during the rollout

* the controller process is killed with SIGKILL every 3-5 s (the first time 0.3-1.5 s into
  the rollout) and started again at once;
* 20 % of API writes are answered 409, 429 (with Retry-After) or 500, in equal parts;
* every watch stream is cut after 50 events, and every 2 s the pod and workload watch
  windows are evicted (the next watch from an older resourceVersion gets 410 Gone: a relist
  storm);
* every request is slowed by 5 ms (a slow API server).

Invariants, checked on the server's own commit stream (every committed version, in order),
from the rollout's start:

* **duplicate pods**: a CloneSet never has two pods with the same instance id; a StatefulSet
  never has a pod outside ordinals ``[0, replicas)`` (a second pod of one ordinal cannot
  exist: it would have the same name);
* **PVC deleted**: no PersistentVolumeClaim is deleted (no scenario scales down or asks for
  a ``Delete`` retention policy), except by the CloneSet's recreate update, which deletes a
  pod's claims with it as Kruise does, and then only once that pod is terminating or gone;
* **unavailable > bound**: the pods that are not Ready (or are terminating) never exceed the
  rollout's bound (``maxUnavailable``: 1 here);
* **not converged**: the rollout converges within the deadline.

It prints one table (scenario, runs, convergence times with and without faults and their
ratio, invariant violations, kills and injected errors); ``docs/RELIABILITY.md`` records the
latest figures. Not part of ``make test``: it takes minutes.

Usage: ``python -m bench.chaos [--seeds N] [--first-seed S] [--scenario NAME] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controllers.cloneset import CLONESET, install_crd
from kube_runtime import kinds, meta
from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import EmbeddedCluster
from kube_runtime.envtest.server.storage import DELETED, Event
from kube_runtime.kinds import Kind
from kube_runtime.meta import Obj
from kube_runtime.workloads.pods import is_ready

INSTANCE_LABEL = "apps.kruise.io/cloneset-instance-id"
WRITE_VERBS = ("create", "update", "patch", "delete")
FAULT_CODES = (409, 429, 500)
WRITE_FAILURE_SHARE = 0.20
WATCH_DROP_EVERY = 50
EVICT_EVERY = 2.0
API_LATENCY = 0.005
KILL_EVERY = (3.0, 5.0)
#: The first kill comes early, so that short rollouts (in place) see one too.
FIRST_KILL = (0.3, 1.5)
DEADLINE = 120.0


def log(message: str) -> None:
    """One progress line on stderr."""
    print(f"[chaos] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- scenarios


def _template(image: str) -> Obj:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


_CLAIMS = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


def statefulset(policy: str) -> Callable[[str, int, str], Obj]:
    """A maker of apps/v1 StatefulSets with pod management ``policy``."""

    def make(namespace: str, replicas: int, image: str) -> Obj:
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "serviceName": "web",
                "podManagementPolicy": policy,
                "selector": {"matchLabels": {"app": "web"}},
                "template": _template(image),
                "volumeClaimTemplates": _CLAIMS,
            },
        }

    return make


def cloneset(update_type: str) -> Callable[[str, int, str], Obj]:
    """A maker of CloneSets updated by ``update_type`` (``ReCreate``, ``InPlaceIfPossible``)."""

    def make(namespace: str, replicas: int, image: str) -> Obj:
        return {
            "apiVersion": CLONESET.api_version,
            "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": _template(image),
                "volumeClaimTemplates": _CLAIMS,
                "updateStrategy": {"type": update_type, "maxUnavailable": 1},
            },
        }

    return make


def sts_converged(obj: Obj, replicas: int) -> bool:
    """Upstream's rollout-complete test plus every replica ready at the update revision."""
    status = obj.get("status") or {}
    return (
        status.get("observedGeneration") == meta.generation(obj)
        and status.get("replicas") == replicas
        and status.get("readyReplicas") == replicas
        and status.get("updatedReplicas") == replicas
        and bool(status.get("updateRevision"))
        and status.get("currentRevision") == status.get("updateRevision")
    )


def cloneset_converged(obj: Obj, replicas: int) -> bool:
    """Every replica updated, ready and available, for the newest generation."""
    status = obj.get("status") or {}
    return status.get("observedGeneration") == meta.generation(obj) and all(
        status.get(key) == replicas
        for key in ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas")
    )


@dataclass(frozen=True)
class Scenario:
    """One workload and how to tell it has converged."""

    name: str
    kind: Kind
    make: Callable[[str, int, str], Obj]
    converged: Callable[[Obj, int], bool]
    max_unavailable: int = 1
    #: Kruise's recreate update deletes a pod's claims with the pod (new instance, new claims).
    claims_follow_pods: bool = False


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "StatefulSet OrderedReady", kinds.StatefulSet, statefulset("OrderedReady"), sts_converged
    ),
    Scenario("StatefulSet Parallel", kinds.StatefulSet, statefulset("Parallel"), sts_converged),
    Scenario(
        "CloneSet ReCreate",
        CLONESET,
        cloneset("ReCreate"),
        cloneset_converged,
        claims_follow_pods=True,
    ),
    Scenario(
        "CloneSet InPlaceIfPossible", CLONESET, cloneset("InPlaceIfPossible"), cloneset_converged
    ),
)


# --------------------------------------------------------------------------- invariants


@dataclass
class CommitWatcher:
    """Follows the store's commit stream of one namespace and counts invariant violations.

    Runs under the store lock on every commit (a store listener): dict updates only.
    """

    namespace: str
    replicas: int
    max_unavailable: int
    claims_follow_pods: bool = False
    armed: bool = False
    pods: dict[str, Obj] = field(default_factory=dict)
    violations: dict[str, int] = field(default_factory=dict)
    max_seen_unavailable: int = 0
    samples: list[str] = field(default_factory=list)

    def _violate(self, what: str, detail: str) -> None:
        self.violations[what] = self.violations.get(what, 0) + 1
        if len(self.samples) < 10:
            self.samples.append(f"{what}: {detail}")

    def __call__(self, event: Event) -> None:
        obj = event.new.obj
        if meta.namespace(obj) != self.namespace:
            return
        plural = event.info.plural
        if plural == "persistentvolumeclaims":
            if event.type == DELETED and self.armed and not self._claim_may_go(obj):
                self._violate("PVC deleted", meta.name(obj))
            return
        if plural != "pods":
            return
        name = meta.name(obj)
        if event.type == DELETED:
            self.pods.pop(name, None)
        else:
            self.pods[name] = obj
        if self.armed:
            self._check_pods(name)

    def _claim_may_go(self, claim: Obj) -> bool:
        """A claim may be deleted only where the scenario's policy deletes claims with their
        pod, and only once no live pod of its instance is left."""
        if not self.claims_follow_pods:
            return False
        instance = meta.labels(claim).get(INSTANCE_LABEL)
        return not any(
            meta.labels(p).get(INSTANCE_LABEL) == instance and not meta.is_deleting(p)
            for p in self.pods.values()
        )

    def _check_pods(self, changed: str) -> None:
        live = [p for p in self.pods.values() if not meta.is_deleting(p)]
        unavailable = self.replicas - sum(1 for p in live if is_ready(p))
        self.max_seen_unavailable = max(self.max_seen_unavailable, unavailable)
        if unavailable > self.max_unavailable:
            self._violate("unavailable > bound", f"{unavailable} after a commit of {changed}")
        instances: dict[str, int] = {}
        for pod in self.pods.values():
            labels = meta.labels(pod)
            instance = labels.get(INSTANCE_LABEL)
            if instance is not None:
                instances[instance] = instances.get(instance, 0) + 1
                if instances[instance] > 1:
                    self._violate("duplicate pods", f"instance id {instance}")
            index = labels.get("apps.kubernetes.io/pod-index")
            if index is not None and not 0 <= int(index) < self.replicas:
                self._violate("duplicate pods", f"pod {meta.name(pod)} outside the ordinals")


# --------------------------------------------------------------------------- one run


@dataclass
class RunResult:
    """What one rollout measured."""

    scenario: str
    faulted: bool
    seed: int
    converged: bool
    seconds: float
    violations: dict[str, int]
    max_unavailable: int
    kills: int
    injected: int
    samples: list[str]


class ControllerProcess:
    """``kube-runtime run statefulset cloneset`` for one namespace; ``kill()`` restarts it."""

    def __init__(self, kubeconfig: Path, namespace: str, log_path: Path) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "kube_runtime.cli",
            "run",
            "statefulset",
            "cloneset",
            f"--kubeconfig={kubeconfig}",
            f"--namespace={namespace}",
            "--install-crds",
            "--no-install-webhooks",  # several replicas on one machine: no webhooks
            "--metrics-port=0",
            "--health-port=0",
        ]
        self.log_path = log_path
        self.kills = 0
        self.proc = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("KUBERNETES_SERVICE_HOST", None)
        with self.log_path.open("ab") as out:
            return subprocess.Popen(self.argv, stdout=out, stderr=out, env=env)

    def kill_and_restart(self) -> None:
        """SIGKILL, reap, start again at once."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.kills += 1
        self.proc = self._start()

    def stop(self) -> None:
        """SIGTERM (graceful), then SIGKILL after 10 s."""
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def _every(
    seconds: Callable[[], float], action: Callable[[], None], first: float | None = None
) -> Iterator[None]:
    """Run ``action`` on a thread after ``first`` seconds (default: ``seconds()``), then every
    ``seconds()``, while the block runs."""
    stop = threading.Event()

    def loop() -> None:
        delay = seconds() if first is None else first
        while not stop.wait(delay):
            action()
            delay = seconds()

    thread = threading.Thread(target=loop, name="chaos-every", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(15)


def _retrying(fn: Callable[[], Obj]) -> Obj:
    """``fn()`` until it is not answered by an injected error (the campaign's own writes)."""
    while True:
        try:
            return fn()
        except ApiError:
            time.sleep(0.05)


def _wait(check: Callable[[], bool], deadline: float) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return False


def _install_faults(cluster: EmbeddedCluster) -> None:
    share = WRITE_FAILURE_SHARE / len(FAULT_CODES)
    for verb in WRITE_VERBS:
        for i, code in enumerate(FAULT_CODES):
            # rules are tried in order: scale each so that each code takes an equal share
            taken = share * i
            cluster.faults.fail("*", verb, code, probability=share / (1.0 - taken))
    cluster.faults.drop_watches_every(WATCH_DROP_EVERY)
    cluster.faults.add_latency(API_LATENCY)


def run_once(
    scenario: Scenario, replicas: int, seed: int, faulted: bool, work: Path, ready_after: float
) -> RunResult:
    """One rollout of ``scenario`` on a fresh cluster (see the module docstring)."""
    rng = random.Random(seed)
    namespace = f"chaos-{seed}"
    with EmbeddedCluster(pod_ready_after=ready_after) as cluster:
        cluster.faults.reseed(seed)
        kubeconfig = cluster.write_kubeconfig(work / f"kubeconfig-{seed}")
        client = cluster.client()
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        install_crd(client)
        watcher = CommitWatcher(
            namespace, replicas, scenario.max_unavailable, scenario.claims_follow_pods
        )
        cluster.store.add_listener(watcher)
        label = f"{scenario.name.replace(' ', '-')}-{'faulted' if faulted else 'clean'}-{seed}"
        controllers = ControllerProcess(kubeconfig, namespace, work / f"{label}.log")
        try:
            client.create(scenario.make(namespace, replicas, "nginx:1"))
            if not _wait(lambda: _converged(client, scenario, namespace, replicas), DEADLINE):
                raise RuntimeError(f"{scenario.name}: did not converge before the rollout")
            if faulted:
                _install_faults(cluster)
            watcher.armed = True
            started = time.monotonic()
            _retrying(lambda: _set_image(client, scenario, namespace, "nginx:2"))
            evicted = [cluster.resource("", "pods"), _resource_of(cluster, scenario.kind)]
            with (
                _every(
                    lambda: rng.uniform(*KILL_EVERY),
                    controllers.kill_and_restart,
                    first=rng.uniform(*FIRST_KILL),
                )
                if faulted
                else _nothing(),
                _every(lambda: EVICT_EVERY, lambda: _evict(cluster, evicted))
                if faulted
                else _nothing(),
            ):
                converged = _wait(
                    lambda: _converged(client, scenario, namespace, replicas, image="nginx:2"),
                    DEADLINE,
                )
            seconds = time.monotonic() - started
            watcher.armed = False
            injected = cluster.faults.injected
            cluster.faults.clear()
        finally:
            controllers.stop()
            cluster.store.remove_listener(watcher)
    violations = dict(watcher.violations)
    if not converged:
        violations["not converged"] = 1
    return RunResult(
        scenario.name,
        faulted,
        seed,
        converged,
        seconds,
        violations,
        watcher.max_seen_unavailable,
        controllers.kills,
        injected,
        watcher.samples,
    )


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _resource_of(cluster: EmbeddedCluster, kind: Kind) -> Any:
    plural = {"StatefulSet": "statefulsets", "CloneSet": "clonesets"}[kind.kind]
    return cluster.resource(kind.group, plural)


def _evict(cluster: EmbeddedCluster, infos: Sequence[Any]) -> None:
    for info in infos:
        cluster.store.evict_history(info)


def _set_image(client: Client, scenario: Scenario, namespace: str, image: str) -> Obj:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}
    return client.patch(scenario.kind, "web", patch, namespace=namespace)


def _converged(
    client: Client, scenario: Scenario, namespace: str, replicas: int, image: str = "nginx:1"
) -> bool:
    try:
        obj = client.get(scenario.kind, "web", namespace)
        pods = client.list(kinds.Pod, namespace)["items"]
    except ApiError:
        return False
    live = [p for p in pods if not meta.is_deleting(p)]
    images_ok = all(c.get("image") == image for p in live for c in p["spec"]["containers"])
    return (
        scenario.converged(obj, replicas)
        and len(live) == replicas
        and images_ok
        and all(is_ready(p) for p in live)
    )


# --------------------------------------------------------------------------- campaign


def campaign(
    scenarios: Sequence[Scenario],
    seeds: Sequence[int],
    replicas: int,
    work: Path,
    ready_after: float,
) -> list[RunResult]:
    """Every scenario, fault-free then faulted, for every seed."""
    results = []
    for scenario in scenarios:
        for seed in seeds:
            for faulted in (False, True):
                result = run_once(scenario, replicas, seed, faulted, work, ready_after)
                results.append(result)
                state = "converged" if result.converged else "NOT converged"
                log(
                    f"{scenario.name} seed {seed} {'faulted' if faulted else 'fault-free'}: "
                    f"{state} in {result.seconds:.2f} s, kills {result.kills}, "
                    f"injected {result.injected}, violations {result.violations or 'none'}"
                )
                for sample in result.samples:
                    log(f"  {sample}")
    return results


def table(results: Sequence[RunResult]) -> str:
    """The Markdown table of a campaign."""
    lines = [
        "| scenario | runs | converged | fault-free s (median) | faulted s (median) "
        "| faulted / fault-free | invariant violations | max unavailable (bound 1) "
        "| controller kills | injected errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    names = list(dict.fromkeys(r.scenario for r in results))
    for name in names:
        clean = [r for r in results if r.scenario == name and not r.faulted]
        faulted = [r for r in results if r.scenario == name and r.faulted]
        clean_s = statistics.median(r.seconds for r in clean)
        faulted_s = statistics.median(r.seconds for r in faulted)
        violations = sum(sum(r.violations.values()) for r in results if r.scenario == name)
        lines.append(
            f"| {name} | {len(faulted)} faulted + {len(clean)} fault-free "
            f"| {sum(r.converged for r in faulted + clean)}/{len(faulted + clean)} "
            f"| {clean_s:.2f} | {faulted_s:.2f} | {faulted_s / clean_s:.2f}x | {violations} "
            f"| {max(r.max_unavailable for r in faulted + clean)} "
            f"| {sum(r.kills for r in faulted)} | {sum(r.injected for r in faulted)} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``make chaos`` entry point; exit code 1 when an invariant was violated."""
    parser = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__)
    parser.add_argument("--seeds", type=int, default=3, help="seeds per scenario (default 3)")
    parser.add_argument("--first-seed", type=int, default=18)
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--scenario", action="append", help="a scenario name (repeatable)")
    parser.add_argument(
        "--ready-after", type=float, default=1.0, help="seconds a new pod takes to be Ready"
    )
    parser.add_argument("--quick", action="store_true", help="one seed, 4 replicas")
    parser.add_argument("--keep", action="store_true", help="keep the controller logs")
    args = parser.parse_args(argv)
    scenarios = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    if not scenarios:
        parser.error(f"no such scenario; choose from {[s.name for s in SCENARIOS]}")
    seeds = range(args.first_seed, args.first_seed + (1 if args.quick else args.seeds))
    replicas = 4 if args.quick else args.replicas
    work = Path(tempfile.mkdtemp(prefix="kube-runtime-chaos-"))
    log(f"{len(scenarios)} scenario(s) x {len(seeds)} seed(s), {replicas} replicas; logs in {work}")
    results = campaign(scenarios, list(seeds), replicas, work, args.ready_after)
    print(table(results))
    violated = sum(sum(r.violations.values()) for r in results)
    if not args.keep and not violated:
        for path in work.iterdir():
            path.unlink()
        work.rmdir()
    return 1 if violated else 0


if __name__ == "__main__":
    sys.exit(main())
