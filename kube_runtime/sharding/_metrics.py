"""Sharding's Prometheus metrics (on the manager's registry, served on ``/metrics``).

* ``kube_runtime_sharding_objects{ring, shard}``: primary objects assigned to each shard, as
  the sharder sees them (exported by the replica running the sharder; ``shard=""`` counts
  the unassigned ones).
* ``kube_runtime_sharding_shards{ring, state}``: shard Leases by state (ready, expired,
  dead), from the sharder.
* ``kube_runtime_sharding_syncs_total{ring, outcome}``: the sharder's steps (assigned,
  drain-requested, draining, fenced, in-place, no-shards, gone, retry).
* ``kube_runtime_sharding_drains_total{ring, shard}``: drain requests a shard answered.
"""

from __future__ import annotations

from typing import TypeVar

from prometheus_client import Counter, Gauge

from kube_runtime.metrics import REGISTRY

__all__ = ["DRAINS", "OBJECTS", "SHARDS", "SYNCS"]

_M = TypeVar("_M", Counter, Gauge)


def _per_ring(metric: type[_M], name: str, documentation: str, label: str) -> _M:
    """``kube_runtime_sharding_<name>{ring, <label>}`` on the manager's registry."""
    return metric(
        f"kube_runtime_sharding_{name}", documentation, ["ring", label], registry=REGISTRY
    )


OBJECTS = _per_ring(
    Gauge,
    "objects",
    "Primary objects assigned to each shard of a ring, as the sharder sees them.",
    "shard",
)
SHARDS = _per_ring(
    Gauge,
    "shards",
    "Shard Leases of a ring by state (ready, expired, dead), as the sharder sees them.",
    "state",
)
SYNCS = _per_ring(Counter, "syncs", "Steps of the sharder's state machine, by outcome.", "outcome")
DRAINS = _per_ring(
    Counter, "drains", "Drain requests answered by a shard (it let an object go).", "shard"
)
