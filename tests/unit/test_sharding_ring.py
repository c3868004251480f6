"""The ring: rendezvous hashing (stable, balanced, minimal movement), names, Lease states."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from kube_runtime.sharding.ring import (
    DEAD,
    EXPIRED,
    READY,
    SHARDER_HOLDER,
    LeaseTracker,
    Targets,
    check_ring_name,
    format_moved,
    parse_moved,
    shard_for,
    shard_id,
)

KEYS = [f"ns-{i % 7}/obj-{i}" for i in range(10_000)]


def assign(shards: list[str]) -> dict[str, str | None]:
    return {k: shard_for(k, shards) for k in KEYS}


def test_no_shard_no_owner() -> None:
    assert shard_for("ns/a", []) is None


def test_deterministic_and_independent_of_order() -> None:
    shards = ["a", "b", "c", "d"]
    shuffled = shards[:]
    random.Random(1).shuffle(shuffled)
    assert assign(shards) == assign(shuffled)


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_balanced(n: int) -> None:
    shards = [f"shard-{i}" for i in range(n)]
    counts = Counter(assign(shards).values())
    fair = len(KEYS) / n
    assert set(counts) == set(shards)
    assert max(counts.values()) <= 1.1 * fair, counts
    assert min(counts.values()) >= 0.9 * fair, counts


def test_join_moves_only_to_the_new_shard_about_one_nth() -> None:
    before = assign(["a", "b", "c", "d"])
    after = assign(["a", "b", "c", "d", "e"])
    moved = [k for k in KEYS if before[k] != after[k]]
    assert all(after[k] == "e" for k in moved)
    assert 0.17 * len(KEYS) < len(moved) < 0.23 * len(KEYS)


def test_leave_moves_only_the_leavers_keys() -> None:
    before = assign(["a", "b", "c", "d"])
    after = assign(["a", "b", "d"])
    moved = [k for k in KEYS if before[k] != after[k]]
    assert moved and all(before[k] == "c" for k in moved)
    assert len(moved) == sum(1 for k in KEYS if before[k] == "c")


def test_shard_id_is_a_label_value_and_lease_name() -> None:
    assert shard_id("Pod_Name-1") == "pod-name-1"
    long = shard_id("x" * 80 + "_" + "y" * 10)
    assert len(long) <= 63 and long[0].isalnum() and long[-1].isalnum()
    assert shard_id("x" * 80 + "a") != shard_id("x" * 80 + "b")
    with pytest.raises(ValueError):
        shard_id("___")


def test_ring_names() -> None:
    assert check_ring_name("kube-runtime") == "kube-runtime"
    for bad in ("", "Upper", "-x", "a" * 51, "a_b"):
        with pytest.raises(ValueError):
            check_ring_name(bad)


def test_moved_annotation_round_trip() -> None:
    moved = {"Pod": 120, "ControllerRevision": 98}
    assert format_moved(moved) == "ControllerRevision=98,Pod=120"
    assert parse_moved(format_moved(moved)) == moved
    assert parse_moved("Pod=1,junk,X=y") == {"Pod": 1}
    assert parse_moved(None) == {}


def lease(name: str, holder: str, rv: int, duration: int = 10) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "resourceVersion": str(rv)},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration},
    }


def test_lease_states_by_observed_time() -> None:
    now = [100.0]
    tracker = LeaseTracker(clock=lambda: now[0])
    leases = [lease("a", "a", 1), lease("b", "", 2), lease("c", SHARDER_HOLDER, 3)]
    states = tracker.states(leases)
    assert {n: s.state for n, s in states.items()} == {"a": READY, "b": DEAD, "c": DEAD}
    now[0] += 9.9
    assert tracker.states(leases)["a"].state == READY
    assert tracker.next_expiry(leases) == pytest.approx(0.1)
    now[0] += 0.2  # ten seconds without a change: expired, whatever renewTime says
    assert tracker.states(leases)["a"].state == EXPIRED
    leases[0] = lease("a", "a", 4)  # renewed: a new resourceVersion
    assert tracker.states(leases)["a"].state == READY
    assert tracker.states([]) == {}


def test_targets_follow_ring_changes_exactly() -> None:
    """Targets (memoized, updated incrementally) always agree with shard_for, over random
    joins, leaves, an empty ring and keys first seen at any point."""
    rng = random.Random(7)
    targets = Targets()
    pool = [f"shard-{i}" for i in range(12)]
    ring = pool[:4]
    keys = KEYS[:400]
    for step in range(60):
        change = rng.random()
        if change < 0.4 and len(ring) < len(pool):
            ring = [*ring, rng.choice([s for s in pool if s not in ring])]
        elif change < 0.8 and ring:
            ring = [s for s in ring if s != rng.choice(ring)]
        elif change < 0.85:
            ring = []
        sample = rng.sample(keys, 100) if step % 3 else keys
        for key in sample:
            assert targets.target(key, ring) == shard_for(key, ring), (step, key, ring)


def test_targets_join_costs_two_hashes_per_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from kube_runtime.sharding import ring as ring_module

    shards = [f"shard-{i}" for i in range(50)]
    moved = sum(1 for k in KEYS[:1000] if shard_for(k, [*shards, "shard-new"]) == "shard-new")
    targets = Targets()
    for key in KEYS[:1000]:
        targets.target(key, shards)
    calls = 0
    real = ring_module.score

    def counting(shard: str, key: str) -> int:
        nonlocal calls
        calls += 1
        return real(shard, key)

    monkeypatch.setattr(ring_module, "score", counting)
    for key in KEYS[:1000]:
        targets.target(key, [*shards, "shard-new"])
    assert calls == 2 * 1000  # instead of 51 per key
    calls = 0
    for key in KEYS[:1000]:
        targets.target(key, shards)  # the newcomer leaves: only its keys are rehashed
    assert moved and calls == 50 * moved
