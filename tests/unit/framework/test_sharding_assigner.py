"""The assignment and drain state machine (Assigner + ShardGate) on the fake client."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_mock import MockerFixture

from kube_runtime import meta
from kube_runtime.cache import InformerCache
from kube_runtime.client.errors import Conflict
from kube_runtime.client.fake import FakeClient
from kube_runtime.clock import FakeClock
from kube_runtime.kinds import ControllerRevision, Lease, Pod, StatefulSet
from kube_runtime.reconcile import Request, Result
from kube_runtime.sharding import RING_LABEL, Sharding, ShardRuntime, shard_for
from kube_runtime.sharding._ring import SHARDER_HOLDER, LeaseTracker, drain_label, shard_label
from kube_runtime.sharding._shard import ShardGate
from kube_runtime.sharding._sharder import (
    ASSIGNED,
    DRAIN_REQUESTED,
    DRAINING,
    FENCED,
    IN_PLACE,
    NO_SHARDS,
    Assigner,
    ClientView,
    RingKinds,
)

RING = "ring"
NS = "ns"
KEY = shard_label(RING)
DRAIN = drain_label(RING)


def lease(name: str, holder: str | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS, "labels": {RING_LABEL: RING}},
        "spec": {"holderIdentity": name if holder is None else holder, "leaseDurationSeconds": 10},
    }


def renew(client: FakeClient, name: str) -> None:
    """What a shard's renewal does to its Lease: a new renewTime, so a new resourceVersion."""
    current = client.get(Lease, name, NS)
    stamp = str(int(current["spec"].get("renewTime") or 0) + 1)
    client.update({**current, "spec": {**current["spec"], "renewTime": stamp}})


def sts(name: str, shard: str | None = None, **labels: str) -> dict[str, Any]:
    if shard:
        labels[KEY] = shard
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": labels},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def owned(kind: str, name: str, owner: str, shard: str | None = None) -> dict[str, Any]:
    labels = {"app": owner, **({KEY: shard} if shard else {})}
    return {
        "apiVersion": "v1" if kind == "Pod" else "apps/v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": owner,
                    "uid": f"uid-{owner}",
                    "controller": True,
                }
            ],
        },
    }


def name_on(target: str, shards: list[str]) -> str:
    """A set name whose target among ``shards`` is ``target``."""
    for i in range(1000):
        if shard_for(f"{NS}/set-{i}", shards) == target:
            return f"set-{i}"
    raise AssertionError("no such name")


def assigner(client: FakeClient, clock: FakeClock, **kw: Any) -> Assigner:
    return Assigner(
        client,
        ClientView(client, RING, NS),
        RING,
        [RingKinds(StatefulSet, (Pod, ControllerRevision))],
        tracker=LeaseTracker(clock=clock),
        clock=clock,
        **kw,
    )


def labels(client: FakeClient, kind: Any, name: str) -> dict[str, str]:
    return dict(meta.labels(client.get(kind, name, NS)))


def test_unassigned_object_gets_its_shard_owned_objects_first() -> None:
    name = name_on("b", ["a", "b"])
    client = FakeClient(
        [
            lease("a"),
            lease("b"),
            sts(name),
            owned("Pod", f"{name}-0", name),
            owned("ControllerRevision", f"{name}-r1", name),
            owned("Pod", "other-0", "other"),
        ]
    )
    a = assigner(client, FakeClock())
    assert a.sync(StatefulSet, NS, name) == ASSIGNED
    assert labels(client, StatefulSet, name)[KEY] == "b"
    assert labels(client, Pod, f"{name}-0")[KEY] == "b"
    assert labels(client, ControllerRevision, f"{name}-r1")[KEY] == "b"
    assert KEY not in labels(client, Pod, "other-0")  # not its pod
    moved = meta.annotations(client.get(StatefulSet, name, NS))[f"moved.kube-runtime.io/{RING}"]
    pod_rv = meta.resource_version(client.get(Pod, f"{name}-0", NS))
    assert f"Pod={pod_rv}" in moved
    # In place: nothing more to write.
    rv = meta.resource_version(client.get(StatefulSet, name, NS))
    assert a.sync(StatefulSet, NS, name) == IN_PLACE
    assert meta.resource_version(client.get(StatefulSet, name, NS)) == rv


def test_no_ready_shard_no_assignment_and_min_shards_holds_back() -> None:
    client = FakeClient([sts("x")])
    clock = FakeClock()
    assert assigner(client, clock).sync(StatefulSet, NS, "x") == NO_SHARDS
    client.create(lease("a"))
    held = assigner(client, clock, min_shards=2, startup_grace=15.0)
    assert held.sync(StatefulSet, NS, "x") == NO_SHARDS
    clock.step(16)  # the grace is over: one shard is enough
    renew(client, "a")
    assert held.sync(StatefulSet, NS, "x") == ASSIGNED


def gate_for(client: FakeClient, shard: str, inner: Any, seen: Any = None) -> ShardGate:
    return ShardGate(
        inner,
        kind=StatefulSet,
        owned=(Pod, ControllerRevision),
        reader=client,
        writer=client,
        ring=RING,
        shard=shard,
        seen=seen or (lambda kind, rv: True),
    )


class Inner:
    def __init__(self) -> None:
        self.calls: list[Request] = []

    def reconcile(self, request: Request) -> Result | None:
        self.calls.append(request)
        return None


def test_move_between_ready_shards_drains_first() -> None:
    name = name_on("b", ["a", "b"])
    client = FakeClient(
        [lease("a"), lease("b"), sts(name, "a"), owned("Pod", f"{name}-0", name, "a")]
    )
    a = assigner(client, FakeClock())
    assert a.sync(StatefulSet, NS, name) == DRAIN_REQUESTED
    assert labels(client, StatefulSet, name)[KEY] == "a"  # still a's: a is told, not bypassed
    assert labels(client, StatefulSet, name)[DRAIN] == "true"
    assert labels(client, Pod, f"{name}-0")[KEY] == "a"
    assert a.sync(StatefulSet, NS, name) == DRAINING  # waits for a's answer

    # b does not touch it (not its label); a answers instead of reconciling.
    inner_a, inner_b = Inner(), Inner()
    request = Request(name, NS)
    assert gate_for(client, "b", inner_b).reconcile(request) is None
    gate_a = gate_for(client, "a", inner_a)
    assert gate_a.reconcile(request) is None
    assert inner_a.calls == [] and inner_b.calls == [] and gate_a.drained == 1
    assert KEY not in labels(client, StatefulSet, name)
    assert DRAIN not in labels(client, StatefulSet, name)

    assert a.sync(StatefulSet, NS, name) == ASSIGNED
    assert labels(client, StatefulSet, name)[KEY] == "b"
    assert labels(client, Pod, f"{name}-0")[KEY] == "b"
    assert gate_for(client, "a", inner_a).reconcile(request) is None  # no longer a's
    assert gate_for(client, "b", inner_b).reconcile(request) is None
    assert inner_a.calls == [] and inner_b.calls == [request]


def test_drain_cancelled_when_the_ring_changes_back() -> None:
    name = name_on("a", ["a"])
    client = FakeClient([lease("a"), sts(name, "a", **{DRAIN: "true"})])
    assert assigner(client, FakeClock()).sync(StatefulSet, NS, name) == IN_PLACE
    assert labels(client, StatefulSet, name) == {KEY: "a"}


def test_expired_shard_is_fenced_then_its_objects_move_without_drain() -> None:
    name = name_on("b", ["a", "b"])
    client = FakeClient(
        [lease("a"), lease("b"), sts(name, "a"), owned("Pod", f"{name}-0", name, "a")]
    )
    clock = FakeClock()
    a = assigner(client, clock)
    assert a.sync(StatefulSet, NS, name) == DRAIN_REQUESTED
    clock.step(11)  # a stopped renewing; b renewed
    renew(client, "b")
    assert a.sync(StatefulSet, NS, name) == FENCED
    assert client.get(Lease, "a", NS)["spec"]["holderIdentity"] == SHARDER_HOLDER
    assert a.sync(StatefulSet, NS, name) == ASSIGNED
    assert labels(client, StatefulSet, name)[KEY] == "b"
    assert DRAIN not in labels(client, StatefulSet, name)
    assert labels(client, Pod, f"{name}-0")[KEY] == "b"


def test_fencing_loses_to_a_renewal() -> None:
    client = FakeClient([lease("a"), sts("x", "a")])
    clock = FakeClock()
    a = assigner(client, clock)
    states = a.shard_states()
    clock.step(11)
    states = a.shard_states()
    renew(client, "a")  # a renews after the sharder read it
    with pytest.raises(Conflict):
        a._fence(states["a"])
    assert client.get(Lease, "a", NS)["spec"]["holderIdentity"] == "a"


def test_released_shard_objects_move_at_once() -> None:
    client = FakeClient([lease("a", holder=""), lease("b"), sts("x", "a")])
    assert assigner(client, FakeClock()).sync(StatefulSet, NS, "x") == ASSIGNED
    assert labels(client, StatefulSet, "x")[KEY] == "b"


def test_stale_view_of_owned_objects_read_fresh_from_the_old_shard(
    mocker: MockerFixture,
) -> None:
    """The view knows no pod of the set (its last create not seen yet): the sharder reads
    what the old shard labelled and moves it before the set."""
    name = name_on("b", ["b"])
    client = FakeClient([lease("b"), sts(name, "a"), owned("Pod", f"{name}-0", name, "a")])
    view = ClientView(client, RING, NS)
    stale = mocker.patch.object(view, "owned", return_value=[])
    a = Assigner(
        client, view, RING, [RingKinds(StatefulSet, (Pod,))], tracker=LeaseTracker(FakeClock())
    )
    assert a.sync(StatefulSet, NS, name) == ASSIGNED
    assert stale.called  # the view was asked, and its empty answer not trusted
    assert labels(client, Pod, f"{name}-0")[KEY] == "b"


def test_gate_waits_for_the_cache_to_hold_moved_owned_objects() -> None:
    client = FakeClient([sts("x", "b")])
    client.patch(
        StatefulSet,
        "x",
        {"metadata": {"annotations": {f"moved.kube-runtime.io/{RING}": "Pod=500"}}},
        namespace=NS,
    )
    seen_up_to = {"rv": 400}
    inner = Inner()
    gate = gate_for(client, "b", inner, seen=lambda kind, rv: seen_up_to["rv"] >= rv)
    result = gate.reconcile(Request("x", NS))
    assert isinstance(result, Result) and result.requeue_after and inner.calls == []
    seen_up_to["rv"] = 500
    assert gate.reconcile(Request("x", NS)) is None and len(inner.calls) == 1
    gone = Request("gone", NS)  # deletions still reach the reconciler
    gate.reconcile(gone)
    assert inner.calls[-1] == gone


def test_creations_for_primary_objects_carry_the_shard() -> None:
    client = FakeClient()
    runtime = ShardRuntime(Sharding(RING), "shard-1", InformerCache(client))
    runtime.register(StatefulSet, (Pod,))
    runtime.label_creations(client)
    assert InformerCache.label_selector(runtime.cache, Pod) == f"{KEY}=shard-1"
    client.create(owned("Pod", "p-0", "web"))
    bare = owned("Pod", "q-0", "web")
    bare["metadata"]["ownerReferences"][0]["kind"] = "ReplicaSet"
    client.create(bare)
    assert labels(client, Pod, "p-0")[KEY] == "shard-1"
    assert KEY not in labels(client, Pod, "q-0")


def names_on(target: str, shards: list[str], count: int) -> list[str]:
    """``count`` set names whose top shard among ``shards`` is ``target``."""
    out = [f"set-{i}" for i in range(5000) if shard_for(f"{NS}/set-{i}", shards) == target]
    return out[:count]


def test_the_bound_holds_through_the_assigner() -> None:
    """Six sets whose top is ``a`` on two shards: at most ceil(1.1 * 6 / 2) = 4 go to ``a``;
    deleting one of ``b``'s lowers the bound to 3 and one set moves off ``a``, reported to
    ``on_moved`` (the sharder queues it) and moved with the drain handshake."""
    names = names_on("a", ["a", "b"], 6)
    client = FakeClient([lease("a"), lease("b"), *(sts(n) for n in names)])
    reported: list[tuple[str | None, str]] = []
    a = assigner(client, FakeClock(), on_moved=lambda kind, ns, name: reported.append((ns, name)))
    a.seed()
    assert [a.sync(StatefulSet, NS, n) for n in names] == [ASSIGNED] * 6
    placed = {n: labels(client, StatefulSet, n)[KEY] for n in names}
    assert sorted(placed.values()) == ["a"] * 4 + ["b"] * 2
    assert a.targets[StatefulSet].capacity() == 4
    # A new set whose top is full goes to the next shard with room, moving nobody.
    late = names_on("a", ["a", "b"], 7)[6]
    client.create(sts(late))
    reported.clear()
    a.observe(StatefulSet, client.get(StatefulSet, late, NS), deleted=False)
    assert reported == []
    assert (
        a.sync(StatefulSet, NS, late) == ASSIGNED and labels(client, StatefulSet, late)[KEY] == "b"
    )
    # Deleting two sets of b lowers the bound from 4 to 3: one set leaves a.
    on_b = [n for n in [*names, late] if labels(client, StatefulSet, n)[KEY] == "b"]
    for gone in on_b[:2]:
        obj = client.get(StatefulSet, gone, NS)
        client.delete(StatefulSet, gone, NS)
        a.observe(StatefulSet, obj, deleted=True)
    assert a.targets[StatefulSet].capacity() == 3
    assert len(reported) == 1 and reported[0][0] == NS
    moving = reported[0][1]
    assert labels(client, StatefulSet, moving)[KEY] == "a"
    assert a.sync(StatefulSet, NS, moving) == DRAIN_REQUESTED
    assert a.targets[StatefulSet].loads() == {"a": 3, "b": 2}


def test_a_new_sharder_keeps_the_labels_it_finds() -> None:
    """Sets already labelled within the bound stay where they are: a sharder that takes over
    (seeded from the labels) writes nothing."""
    names = names_on("a", ["a", "b"], 3) + names_on("b", ["a", "b"], 3)
    client = FakeClient([lease("a"), lease("b"), *(sts(n) for n in names)])
    first = assigner(client, FakeClock())
    first.seed()
    for n in names:
        first.sync(StatefulSet, NS, n)
    rvs = {n: meta.resource_version(client.get(StatefulSet, n, NS)) for n in names}
    second = assigner(client, FakeClock())
    second.seed()
    assert [second.sync(StatefulSet, NS, n) for n in names] == [IN_PLACE] * 6
    assert {n: meta.resource_version(client.get(StatefulSet, n, NS)) for n in names} == rvs
