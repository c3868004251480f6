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

from prometheus_client import Counter, Gauge

from kube_runtime.metrics import REGISTRY

__all__ = ["DRAINS", "OBJECTS", "SHARDS", "SYNCS"]

OBJECTS = Gauge(
    "kube_runtime_sharding_objects",
    "Primary objects assigned to each shard of a ring, as the sharder sees them.",
    ["ring", "shard"],
    registry=REGISTRY,
)
SHARDS = Gauge(
    "kube_runtime_sharding_shards",
    "Shard Leases of a ring by state (ready, expired, dead), as the sharder sees them.",
    ["ring", "state"],
    registry=REGISTRY,
)
SYNCS = Counter(
    "kube_runtime_sharding_syncs",
    "Steps of the sharder's state machine, by outcome.",
    ["ring", "outcome"],
    registry=REGISTRY,
)
DRAINS = Counter(
    "kube_runtime_sharding_drains",
    "Drain requests answered by a shard (it let an object go).",
    ["ring", "shard"],
    registry=REGISTRY,
)
