"""Sharding on a cluster: three in-process managers share the StatefulSet controller's objects.

Each replica's cache must hold only its shard's sets and pods; a replica that stops hands its
objects over (they converge on the others); a replica that joins takes its share with the drain
handshake; and no set is reconciled by two replicas at once (every reconcile is recorded with
its start and end, and the intervals of one set on different replicas never overlap).
Every wait is on a condition.

On the embedded backend every test runs on simulated time (``docs/simtime.md``) on a cluster
of its own, with client-go's leases (15/10/2 s); on kube-apiserver (``--backend real``), in real
time, short leases (2 s) keep hand-overs quick. The journal's intervals are real time in both:
they check that two reconciles never ran at once, which virtual time (standing still while
they run) cannot show.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from controllers.cloneset import CLONESET
from controllers.cloneset import install_crd as install_cloneset_crd
from controllers.cloneset import setup as setup_cloneset
from controllers.statefulset import setup
from kube_runtime import Manager, clock, kinds, meta
from kube_runtime.envtest.managers import RunningManager, running
from kube_runtime.metrics import REGISTRY
from kube_runtime.reconcile import Reconciler, Request, Result
from kube_runtime.sharding import RING_LABEL, Sharding, shard_for, shard_label
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_namespace,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

FAST = (
    {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}  # client-go's
    if SIMULATED
    else {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.3}
)
TIMEOUT = 300 if SIMULATED else 60  # virtual seconds under simulation


@dataclass
class Journal:
    """Every reconcile of a set that the replica holds: (replica, key, start, end)."""

    entries: list[tuple[str, str, float, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def overlaps(self) -> list[tuple[Any, Any]]:
        """Pairs of reconciles of one set by two replicas whose intervals intersect."""
        with self.lock:
            entries = sorted(self.entries, key=lambda e: (e[1], e[2]))
        out = []
        for _key, group in itertools.groupby(entries, key=lambda e: e[1]):
            spans = list(group)
            for a, b in itertools.combinations(spans, 2):
                if a[0] != b[0] and a[2] < b[3] and b[2] < a[3]:
                    out.append((a, b))
        return out

    def replicas_of(self, key: str) -> set[str]:
        with self.lock:
            return {e[0] for e in self.entries if e[1] == key}


class Recording:
    """Wraps a reconciler: records the reconciles of objects present in the replica's cache."""

    def __init__(
        self, inner: Reconciler, replica: str, manager: Manager, journal: Journal, kind: Any
    ) -> None:
        self.inner, self.replica, self.manager, self.journal = inner, replica, manager, journal
        self.kind = kind

    def reconcile(self, request: Request) -> Result | None:
        start = time.monotonic()
        try:
            return self.inner.reconcile(request)
        finally:
            try:
                self.manager.cache.get(self.kind, request.name, request.namespace)
                held = True
            except Exception:
                held = False
            if held:
                with self.journal.lock:
                    self.journal.entries.append(
                        (self.replica, request.key, start, time.monotonic())
                    )


@pytest.fixture
def ring(namespace: str) -> str:
    return f"r{abs(hash(namespace)) % 10**8}"


@pytest.fixture
def replicas(
    client: Any, namespace: str, ring: str
) -> Iterator[Callable[[str], tuple[Manager, RunningManager]]]:
    journal = Journal()
    stack = contextlib.ExitStack()

    def start(
        identity: str, controller: str = "statefulset", **options: Any
    ) -> tuple[Manager, RunningManager]:
        m = Manager(
            client,
            namespace=namespace,
            identity=identity,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            graceful_shutdown_timeout=10,
            sharding=Sharding(ring, lease_namespace=namespace, **options),
            lease_duration=FAST["lease_duration"],
            renew_deadline=FAST["renew_deadline"],
            retry_period=FAST["retry_period"],
        )
        if controller == "statefulset":
            made = setup(m, name=f"sts-{identity}-{namespace}", enhanced=False)
            kind: Any = kinds.StatefulSet
        else:
            made = setup_cloneset(m, name=f"cs-{identity}-{namespace}")
            kind = CLONESET
        gate: Any = made.reconciler
        gate.inner = Recording(gate.inner, identity, m, journal, kind)
        runner = stack.enter_context(running(m))
        return m, runner

    start.journal = journal  # type: ignore[attr-defined]
    with stack:
        yield start


def make_sts(namespace: str, name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "serviceName": name,
            "replicas": replicas,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


def _bound(objects: int, shards: int) -> int:
    """The sharder's bound on a shard's objects at its default load factor, 1.1."""
    return -(-(11 * objects) // (10 * shards))


def _within_bound(names: list[str], namespace: str, shards: list[str], *, each: bool) -> bool:
    """Whether plain rendezvous hashing of ``names`` over ``shards`` stays within the bound
    of the loads: after each name in order (``each``), or once all are placed."""
    count = dict.fromkeys(shards, 0)
    for seen, name in enumerate(names, 1):
        owner = shard_for(f"{namespace}/{name}", shards)
        assert owner is not None
        count[owner] += 1
        if (each or seen == len(names)) and max(count.values()) > _bound(seen, len(shards)):
            return False
    return True


def names_split(
    namespace: str,
    shards: list[str],
    per_shard: int,
    *,
    created_on: list[str] | None = None,
    later: Sequence[list[str]] = (),
) -> list[str]:
    """Set names such that each of ``shards`` gets ``per_shard`` of them, in round-robin
    order, chosen so that the bound of the loads never binds: neither while they are
    created one by one onto ``created_on`` (default ``shards``) nor on the shard sets
    ``later``. The sharder then places them as plain rendezvous hashing (:func:`shard_for`)
    does, which the tests predict."""
    for salt in itertools.count():
        per: dict[str, list[str]] = {s: [] for s in shards}
        for i in itertools.count():
            name = f"s{salt}x{i}" if salt else f"s{i}"
            owner = shard_for(f"{namespace}/{name}", shards)
            assert owner is not None
            if len(per[owner]) < per_shard:
                per[owner].append(name)
            if all(len(v) >= per_shard for v in per.values()):
                break
        out = [name for group in zip(*per.values(), strict=True) for name in group]
        if _within_bound(out, namespace, created_on or shards, each=True) and all(
            _within_bound(out, namespace, stage, each=False) for stage in later
        ):
            return out
    raise AssertionError("unreachable")


def ready_shards(client: Any, namespace: str, ring: str) -> set[str]:
    leases = client.list(kinds.Lease, namespace, label_selector=f"{RING_LABEL}={ring}")["items"]
    return {
        meta.name(lease)
        for lease in leases
        if (lease.get("spec") or {}).get("holderIdentity") == meta.name(lease)
    }


def converged(client: Any, namespace: str, names: list[str], replicas: int) -> bool:
    for name in names:
        status = client.get(kinds.StatefulSet, name, namespace).get("status") or {}
        if status.get("readyReplicas") != replicas or status.get("replicas") != replicas:
            return False
    pods = client.list(kinds.Pod, namespace)["items"]
    return len(pods) == replicas * len(names)


def placement(client: Any, namespace: str, ring: str) -> dict[str, str | None]:
    key = shard_label(ring)
    return {
        meta.name(s): meta.labels(s).get(key)
        for s in client.list(kinds.StatefulSet, namespace)["items"]
    }


def caches_hold_own(managers: dict[str, Manager], client: Any, namespace: str, ring: str) -> bool:
    """Each replica's cache holds exactly the sets and pods labelled with its shard."""
    key = shard_label(ring)
    for kind in (kinds.StatefulSet, kinds.Pod):
        stored = client.list(kind, namespace)["items"]
        for identity, m in managers.items():
            want = {meta.name(o) for o in stored if meta.labels(o).get(key) == identity}
            have = {meta.name(o) for o in m.cache.list(kind, namespace)}
            if want != have:
                return False
    return True


def test_objects_split_move_on_leave_and_join(
    client: Any, namespace: str, ring: str, replicas: Any, wait_for: Any
) -> None:
    journal: Journal = replicas.journal
    managers: dict[str, Manager] = {}
    runners: dict[str, RunningManager] = {}
    for identity in ("shard-a", "shard-b", "shard-c"):
        managers[identity], runners[identity] = replicas(identity)
    wait_for(lambda: ready_shards(client, namespace, ring) == set(managers), timeout=TIMEOUT)

    names = names_split(
        namespace,
        sorted(managers),
        per_shard=3,
        later=[["shard-a", "shard-b"], ["shard-a", "shard-b", "shard-d"]],
    )
    for name in names:
        client.create(make_sts(namespace, name))
    wait_for(lambda: converged(client, namespace, names, 1), timeout=TIMEOUT)
    want = {n: shard_for(f"{namespace}/{n}", sorted(managers)) for n in names}
    wait_for(lambda: placement(client, namespace, ring) == want, timeout=TIMEOUT)
    wait_for(lambda: caches_hold_own(managers, client, namespace, ring), timeout=TIMEOUT)
    for identity, m in managers.items():  # the work really split: each holds a third
        assert len(m.cache.list(kinds.StatefulSet, namespace)) == 3, identity
        assert len(m.cache.list(kinds.Pod, namespace)) == 3, identity
    # Every pod carries its set's shard.
    for pod in client.list(kinds.Pod, namespace)["items"]:
        owner = meta.controller_ref(pod)
        assert owner is not None
        assert meta.labels(pod).get(shard_label(ring)) == want[owner["name"]]

    # A replica leaves: its sets move to the others and converge after a scale-up.
    runners.pop("shard-c").stop()
    managers.pop("shard-c")
    want = {n: shard_for(f"{namespace}/{n}", sorted(managers)) for n in names}
    wait_for(lambda: placement(client, namespace, ring) == want, timeout=TIMEOUT)
    wait_for(lambda: caches_hold_own(managers, client, namespace, ring), timeout=TIMEOUT)
    for name in names:
        client.patch(kinds.StatefulSet, name, {"spec": {"replicas": 2}}, namespace=namespace)
    wait_for(lambda: converged(client, namespace, names, 2), timeout=TIMEOUT)

    # A replica joins: its share moves to it through the drain handshake.
    managers["shard-d"], runners["shard-d"] = replicas("shard-d")
    want = {n: shard_for(f"{namespace}/{n}", sorted(managers)) for n in names}
    assert "shard-d" in want.values()
    wait_for(lambda: placement(client, namespace, ring) == want, timeout=TIMEOUT)
    wait_for(lambda: caches_hold_own(managers, client, namespace, ring), timeout=TIMEOUT)
    for name in names:
        client.patch(kinds.StatefulSet, name, {"spec": {"replicas": 3}}, namespace=namespace)
    wait_for(lambda: converged(client, namespace, names, 3), timeout=TIMEOUT)
    moved = [n for n in names if want[n] == "shard-d"]
    assert all("shard-d" in journal.replicas_of(f"{namespace}/{n}") for n in moved)
    drained = sum(
        gate.drained for m in managers.values() if m.sharding for gate in m.sharding.gates
    )
    assert drained >= len(moved)

    # The Lease of the replica that left is deleted once no set refers to it.
    wait_for(
        lambda: (
            "shard-c"
            not in {
                meta.name(x)
                for x in client.list(kinds.Lease, namespace, label_selector=f"{RING_LABEL}={ring}")[
                    "items"
                ]
            }
        ),
        timeout=TIMEOUT,
    )

    # Never two replicas on one set at once; no duplicate pods (names are ordinals).
    assert journal.overlaps() == []
    pods = client.list(kinds.Pod, namespace)["items"]
    assert sorted(meta.name(p) for p in pods) == sorted(f"{n}-{i}" for n in names for i in range(3))


def test_a_shard_that_cannot_renew_is_fenced_and_its_objects_move(
    client: Any, namespace: str, ring: str, replicas: Any, wait_for: Any
) -> None:
    """A partitioned replica (its Lease writes fail): it stops itself at its renew deadline
    without releasing; the sharder (on the other replica) sees the Lease expire, takes it
    over, and moves its sets without a drain (nobody can answer one)."""
    journal: Journal = replicas.journal
    started = {name: replicas(name) for name in ("shard-a", "shard-b")}
    wait_for(lambda: ready_shards(client, namespace, ring) == set(started), timeout=TIMEOUT)

    def sharder_of() -> str | None:
        for name, (m, _) in started.items():
            if m.sharder is not None and m.sharder.leading.is_set():
                return name
        return None

    keeper = wait_for(sharder_of, timeout=TIMEOUT)
    victim = next(n for n in started if n != keeper)
    names = names_split(namespace, sorted(started), per_shard=2)
    for name in names:
        client.create(make_sts(namespace, name))
    wait_for(lambda: converged(client, namespace, names, 1), timeout=TIMEOUT)
    wait_for(lambda: None not in placement(client, namespace, ring).values(), timeout=TIMEOUT)
    theirs = [n for n, s in placement(client, namespace, ring).items() if s == victim]
    assert len(theirs) == 2

    manager, runner = started[victim]
    assert manager._elector is not None

    def partitioned(*_args: Any, **_kw: Any) -> Any:
        raise ConnectionError("partitioned")

    manager._elector._lock.update = partitioned
    manager._elector._lock.get = partitioned
    clk = clock.current()  # virtual under simulation
    cut = clk.monotonic()
    wait_for(lambda: not runner.thread.is_alive(), timeout=TIMEOUT)  # it stopped itself
    wait_for(lambda: set(placement(client, namespace, ring).values()) == {keeper}, timeout=TIMEOUT)
    moved_after = clk.monotonic() - cut
    lease = client.get(kinds.Lease, victim, namespace)
    assert lease["spec"]["holderIdentity"] == "kube-runtime-sharder"
    # One lease duration after its last renewal, plus the sharder's reaction (slack for a
    # loaded machine).
    assert moved_after < FAST["lease_duration"] + 5.0
    for name in names:
        client.patch(kinds.StatefulSet, name, {"spec": {"replicas": 2}}, namespace=namespace)
    wait_for(lambda: converged(client, namespace, names, 2), timeout=TIMEOUT)
    assert all(keeper in journal.replicas_of(f"{namespace}/{n}") for n in theirs)
    assert journal.overlaps() == []


def make_cs(namespace: str, name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": CLONESET.api_version,
        "kind": CLONESET.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


def cs_converged(client: Any, namespace: str, names: list[str], replicas: int) -> bool:
    for name in names:
        status = client.get(CLONESET, name, namespace).get("status") or {}
        if status.get("readyReplicas") != replicas or status.get("replicas") != replicas:
            return False
    return len(client.list(kinds.Pod, namespace)["items"]) == replicas * len(names)


def test_clonesets_move_on_join_without_duplicate_pods(
    client: Any, namespace: str, ring: str, replicas: Any, wait_for: Any
) -> None:
    """CloneSet pods have random names: a set reconciled on a partial view of its pods would
    create extra ones. Two replicas, then a third joins and takes its share by drains while
    the sets scale: the pods per set never exceed the spec."""
    install_cloneset_crd(client)
    journal: Journal = replicas.journal
    managers = {n: replicas(n, "cloneset")[0] for n in ("shard-a", "shard-b")}
    wait_for(lambda: ready_shards(client, namespace, ring) == set(managers), timeout=TIMEOUT)
    names = names_split(
        namespace,
        ["shard-a", "shard-b", "shard-c"],
        per_shard=2,
        created_on=sorted(managers),
        later=[["shard-a", "shard-b", "shard-c"]],
    )
    for name in names:
        client.create(make_cs(namespace, name, 2))
    wait_for(lambda: cs_converged(client, namespace, names, 2), timeout=TIMEOUT)

    most: dict[str, int] = {}
    stop = clock.current().event()  # its waits are virtual under simulation

    def count_pods() -> None:  # the most pods each set ever had, sampled while it all moves
        while not stop.is_set():
            per_set: dict[str, int] = {}
            for pod in client.list(kinds.Pod, namespace)["items"]:
                ref = meta.controller_ref(pod)
                if ref is not None and not meta.deletion_timestamp(pod):
                    per_set[str(ref["name"])] = per_set.get(str(ref["name"]), 0) + 1
            for name, n in per_set.items():
                most[name] = max(most.get(name, 0), n)
            stop.wait(0.05)

    sampler = threading.Thread(target=count_pods, daemon=True)
    sampler.start()
    managers["shard-c"] = replicas("shard-c", "cloneset")[0]
    for name in names:
        client.patch(CLONESET, name, {"spec": {"replicas": 3}}, namespace=namespace)
    want = {n: shard_for(f"{namespace}/{n}", sorted(managers)) for n in names}
    key = shard_label(ring)

    def placed() -> bool:
        sets = client.list(CLONESET, namespace)["items"]
        return {meta.name(s): meta.labels(s).get(key) for s in sets} == want

    wait_for(placed, timeout=TIMEOUT)
    wait_for(lambda: cs_converged(client, namespace, names, 3), timeout=TIMEOUT)
    stop.set()
    sampler.join(5)
    assert max(most.values()) <= 3, most
    for pod in client.list(kinds.Pod, namespace)["items"]:
        ref = meta.controller_ref(pod)
        assert ref is not None and meta.labels(pod).get(key) == want[ref["name"]]
    for identity, m in managers.items():
        held = {meta.name(o) for o in m.cache.list(CLONESET, namespace)}
        assert held == {n for n, s in want.items() if s == identity}
    moved = [n for n in names if want[n] == "shard-c"]
    assert moved and all("shard-c" in journal.replicas_of(f"{namespace}/{n}") for n in moved)

    def exported() -> dict[str, float | None]:  # the sharder's objects-per-shard gauge
        return {
            shard: REGISTRY.get_sample_value(
                "kube_runtime_sharding_objects", {"ring": ring, "shard": shard}
            )
            for shard in managers
        }

    expected = {s: float(sum(1 for v in want.values() if v == s)) for s in managers}
    wait_for(lambda: exported() == expected, timeout=TIMEOUT)
    drains = sum(
        REGISTRY.get_sample_value("kube_runtime_sharding_drains_total", {"ring": ring, "shard": s})
        or 0.0
        for s in managers
    )
    assert drains >= len(moved)
    assert journal.overlaps() == []

    def gauges_left() -> list[Any]:  # a stopped sharder leaves no stale gauge behind
        return [
            sample
            for metric in REGISTRY.collect()
            if metric.name in ("kube_runtime_sharding_objects", "kube_runtime_sharding_shards")
            for sample in metric.samples
            if sample.labels.get("ring") == ring
        ]

    assert gauges_left()
    for m in managers.values():
        m.stop()
    wait_for(lambda: gauges_left() == [], timeout=TIMEOUT)


def test_the_load_bound_holds_and_a_deletion_moves_the_excess(
    client: Any, namespace: str, ring: str, replicas: Any, wait_for: Any
) -> None:
    """Six sets whose top shard is ``shard-a`` on two replicas: consistent hashing with
    bounded loads gives ``shard-a`` ceil(1.1 * 6 / 2) = 4 and ``shard-b`` the other 2 (plain
    hashing would give ``shard-a`` all six). Deleting ``shard-b``'s two lowers the bound to
    3: one set moves off ``shard-a``, through a drain, and no set is reconciled by both."""
    journal: Journal = replicas.journal
    managers = {n: replicas(n)[0] for n in ("shard-a", "shard-b")}
    wait_for(lambda: ready_shards(client, namespace, ring) == set(managers), timeout=TIMEOUT)
    shards = sorted(managers)
    names = [f"t{i}" for i in range(200) if shard_for(f"{namespace}/t{i}", shards) == "shard-a"]
    names = names[:6]
    for name in names:
        client.create(make_sts(namespace, name, replicas=0))

    def counts() -> dict[str | None, int]:
        out: dict[str | None, int] = {}
        for shard in placement(client, namespace, ring).values():
            out[shard] = out.get(shard, 0) + 1
        return out

    wait_for(lambda: counts() == {"shard-a": 4, "shard-b": 2}, timeout=TIMEOUT)
    wait_for(lambda: caches_hold_own(managers, client, namespace, ring), timeout=TIMEOUT)
    on_b = [n for n, s in placement(client, namespace, ring).items() if s == "shard-b"]
    for name in on_b:
        client.delete(kinds.StatefulSet, name, namespace)
    wait_for(lambda: counts() == {"shard-a": 3, "shard-b": 1}, timeout=TIMEOUT)
    wait_for(lambda: caches_hold_own(managers, client, namespace, ring), timeout=TIMEOUT)
    moved = [n for n, s in placement(client, namespace, ring).items() if s == "shard-b"]
    assert moved[0] not in on_b
    assert managers["shard-a"].sharding is not None
    assert sum(gate.drained for gate in managers["shard-a"].sharding.gates) >= 1
    assert journal.overlaps() == []


def test_a_sharder_only_replica_assigns_and_reconciles_nothing(
    client: Any, namespace: str, ring: str, replicas: Any, wait_for: Any
) -> None:
    """``Sharding(run_shard=False)`` (``--sharder-only``) runs the sharder alone: it holds no
    shard Lease, caches and reconciles none of the ring's objects; the shards, started with
    ``run_sharder=False`` (``--no-sharder``), never campaign for the sharder and split the
    sets between them."""
    journal: Journal = replicas.journal
    sharder, _ = replicas("sharder", run_shard=False)
    shards = {i: replicas(i, run_sharder=False)[0] for i in ("shard-a", "shard-b")}
    wait_for(lambda: ready_shards(client, namespace, ring) == set(shards), timeout=TIMEOUT)
    holder = f"{ring}-sharder"
    wait_for(
        lambda: (
            (client.get(kinds.Lease, holder, namespace).get("spec") or {}).get("holderIdentity")
            == "sharder"
        ),
        timeout=TIMEOUT,
    )
    names = names_split(namespace, sorted(shards), per_shard=2)
    for name in names:
        client.create(make_sts(namespace, name))
    wait_for(lambda: converged(client, namespace, names, 1), timeout=TIMEOUT)
    want = {n: shard_for(f"{namespace}/{n}", sorted(shards)) for n in names}
    wait_for(lambda: placement(client, namespace, ring) == want, timeout=TIMEOUT)
    wait_for(lambda: caches_hold_own(shards, client, namespace, ring), timeout=TIMEOUT)
    assert sharder.sharder is not None and all(m.sharder is None for m in shards.values())
    assert sharder.cache.list(kinds.StatefulSet, namespace) == []
    assert "sharder" not in {r for n in names for r in journal.replicas_of(f"{namespace}/{n}")}
    leases = client.list(kinds.Lease, namespace, label_selector=f"{RING_LABEL}={ring}")["items"]
    assert "sharder" not in {meta.name(x) for x in leases}
    assert journal.overlaps() == []
