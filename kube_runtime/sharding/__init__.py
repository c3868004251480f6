"""Sharding: N replicas of a manager share its controllers' objects.

After `kubernetes-controller-sharding <https://github.com/timebertt/kubernetes-controller-sharding>`_,
written for this framework::

    manager = Manager(client, sharding=Sharding("my-ring"), identity=POD_NAME)
    Builder(manager).for_(MyKind).owns(Pod).complete(reconciler)   # unchanged

* Each replica (a *shard*) holds a Lease named after it, labelled
  ``sharding.kube-runtime.io/ring=<ring>``, renewed like a leader-election Lease; its
  controllers run while it holds it, and every write is fenced by it.
* One replica, the holder of the Lease ``<ring>-sharder``, runs the sharder
  (:mod:`kube_runtime.sharding._sharder`): it assigns each primary object (a controller's
  ``for_`` kind) to a ready shard by consistent hashing with bounded loads over the
  rendezvous order of ``namespace/name``: the first shard in that order holding fewer than
  ``ceil(load_factor * objects / shards)`` of the kind (``Sharding(load_factor=1.1)``;
  :class:`~kube_runtime.sharding._ring.BoundedTargets`), written as the label
  ``shard.kube-runtime.io/<ring>: <shard>``; the objects it owns (``owns`` kinds) carry the
  same label.
* Each replica's informers of those kinds select its label, so it lists, watches, caches and
  reconciles its own objects only (:mod:`kube_runtime.sharding._shard`).
* When a shard joins or leaves, the objects whose shard changes move with a drain handshake:
  the sharder sets ``drain.kube-runtime.io/<ring>``; the old shard stops reconciling the
  object and removes both labels; only then does the sharder relabel the owned objects and
  set the new shard's label. A shard whose Lease expired is fenced (the sharder takes its
  Lease) and its objects move without a drain.

Off unless a manager is given ``sharding=``; ``kube-runtime run ... --shards N|auto`` turns
it on for the registered controllers.
"""

from kube_runtime.sharding._ring import (
    DRAIN_LABEL_PREFIX,
    RING_LABEL,
    SHARD_LABEL_PREFIX,
    LeaseTracker,
    drain_label,
    object_key,
    shard_for,
    shard_id,
    shard_label,
)
from kube_runtime.sharding._shard import ShardGate, Sharding, ShardRuntime, ensure_shard_lease
from kube_runtime.sharding._sharder import Assigner, ClientView, RingKinds, Sharder

__all__ = [
    "DRAIN_LABEL_PREFIX",
    "RING_LABEL",
    "SHARD_LABEL_PREFIX",
    "Assigner",
    "ClientView",
    "LeaseTracker",
    "RingKinds",
    "ShardGate",
    "ShardRuntime",
    "Sharder",
    "Sharding",
    "drain_label",
    "ensure_shard_lease",
    "object_key",
    "shard_for",
    "shard_id",
    "shard_label",
]
