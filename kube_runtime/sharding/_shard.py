"""The shard side: what a replica does to own only its part of the ring.

* :class:`Sharding` is the option (``Manager(..., sharding=Sharding("my-ring"))``): a
  :class:`~kube_runtime.manager.ManagerExtension`, which the manager attaches
  (:meth:`Sharding.attach`) without importing this package.
* :class:`ShardRuntime` is what it attaches to the manager (its ``sharding``, and the
  :class:`~kube_runtime.manager.LeaseHook` the manager campaigns with): it points the cache's informers
  of every sharded kind at ``shard.kube-runtime.io/<ring>=<shard id>`` (so each replica lists,
  watches and holds its own objects only), labels what the replica creates for a primary
  object (owned objects follow their owner's shard), and wraps each sharded controller's
  reconciler in a :class:`ShardGate`.
* :func:`ensure_shard_lease` creates the replica's Lease with the ring's label; the manager
  then holds it with its leader elector (renewed, fenced and released exactly like a
  leader-election Lease).
"""

from __future__ import annotations

import functools
import logging
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from kube_runtime import meta
from kube_runtime.client.errors import AlreadyExists, NotFound
from kube_runtime.kinds import Kind, Lease
from kube_runtime.reconcile import Reconciler, Request, Result
from kube_runtime.sharding import _metrics as shard_metrics
from kube_runtime.sharding._ring import (
    RING_LABEL,
    check_ring_name,
    drain_label,
    moved_annotation,
    parse_moved,
    shard_id,
    shard_label,
)
from kube_runtime.sharding._sharder import RingKinds, Sharder

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client, Reader, Writer
    from kube_runtime.manager import Manager

__all__ = ["ShardGate", "ShardRuntime", "Sharding", "ensure_shard_lease"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sharding:
    """Spread a manager's controllers over several replicas (see ``docs/DEPLOY.md``).

    ``ring``: the name shared by the replicas of one deployment; it names the labels
    (``shard.kube-runtime.io/<ring>``, ``drain.kube-runtime.io/<ring>``) and the Leases
    (each replica's, labelled ``sharding.kube-runtime.io/ring=<ring>``, and the sharder's
    ``<ring>-sharder``). ``lease_namespace``: where the Leases live (default: the manager's
    leader-election namespace). ``min_shards``: the sharder makes no first assignment until
    this many replicas are ready, for at most one lease duration (``--shards N``; 1 for
    ``--shards auto``). ``run_sharder``: whether this replica campaigns to run the sharder
    (every replica by default; one wins). ``run_shard``: whether this replica is a shard
    (default); ``Sharding(run_shard=False)`` makes a sharder-only replica (``kube-runtime run
    --sharder-only``) that holds no shard Lease and reconciles nothing, so that the sharder's
    watch of every object is paid by a process of its own (as kubernetes-controller-sharding
    deploys its sharder) and the shards, started with ``run_sharder=False``
    (``--no-sharder``), each do only their share. ``load_factor``: the bound of consistent hashing
    with bounded loads, no replica is assigned more than ``ceil(load_factor * objects /
    replicas)`` objects of a primary kind (greater than 1; default 1.1).

    Sharded kinds are each controller's ``for_`` kind and its ``owns`` kinds; ``watches``
    kinds are cached whole. Orphans of an owned kind (no shard label) are in no replica's
    cache, so adoption of orphans only sees objects that carry the owner's shard.
    """

    ring: str = "kube-runtime"
    lease_namespace: str | None = None
    min_shards: int = 1
    run_sharder: bool = True
    load_factor: float = 1.1
    run_shard: bool = True

    def __post_init__(self) -> None:
        check_ring_name(self.ring)
        if not (self.run_shard or self.run_sharder):
            raise ValueError("a replica runs a shard, the sharder or both: not neither")
        if self.min_shards < 1:
            raise ValueError("min_shards must be at least 1")
        if not self.load_factor > 1.0:
            raise ValueError("load_factor must be greater than 1")

    def attach(self, manager: Manager, identity: str | None) -> ShardRuntime:
        """Make ``manager`` a replica of the ring (the manager calls this from its
        constructor, ``identity`` being the one it was given): its identity becomes a shard
        id (:func:`~kube_runtime.sharding._ring.shard_id`; a short unique one when none was
        given), ``manager.sharding`` the :class:`ShardRuntime` (labelling what the manager's
        client creates), ``manager.sharder`` the :class:`~kube_runtime.sharding.Sharder`
        when ``run_sharder`` (added as a runnable). Returns the runtime, whose shard Lease
        the manager campaigns for. ``ValueError`` when the manager caches several namespaces
        but not all."""
        if manager.namespaces is not None and manager.namespace is None:
            raise ValueError(
                "sharding takes one namespace (namespace=) or every namespace, not "
                f"namespaces={manager.namespaces}"
            )
        if identity is None:  # a shard id is a label value: short, and unique per process
            identity = f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        manager.identity = shard_id(identity)
        runtime = ShardRuntime(self, manager.identity, manager.cache)
        runtime.label_creations(manager.api_reader)
        manager.sharding = runtime
        if self.run_sharder:
            lease_duration, renew_deadline, retry_period = manager.lease_timing
            manager.sharder = Sharder(
                manager.api_reader,
                ring=self.ring,
                kinds=runtime.ring_kinds,
                lease_namespace=self.lease_namespace or manager.leader_election_namespace,
                namespace=manager.namespace,
                identity=manager.identity,
                lease_duration=lease_duration,
                renew_deadline=renew_deadline,
                retry_period=retry_period,
                min_shards=self.min_shards,
                load_factor=self.load_factor,
                clock=manager.clock,
            )
            manager.add(manager.sharder)
        return runtime


def ensure_shard_lease(client: Any, namespace: str, name: str, ring: str) -> None:
    """Create the shard Lease ``namespace/name`` labelled for ``ring`` (free: no holder), or
    add the label to an existing one."""
    labels = {RING_LABEL: ring}
    try:
        client.create(
            {
                "apiVersion": Lease.api_version,
                "kind": Lease.kind,
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "spec": {"holderIdentity": ""},
            }
        )
        return
    except AlreadyExists:
        pass
    lease = client.get(Lease, name, namespace)
    if meta.labels(lease).get(RING_LABEL) != ring:
        client.patch(Lease, name, {"metadata": {"labels": labels}}, namespace=namespace)


@dataclass(eq=False)
class ShardGate:
    """A sharded controller's reconciler, guarded:

    * an object carrying the drain label is not reconciled: its shard label and the drain
      label are removed (the answer to the sharder), which takes it out of this replica's
      cache. A workqueue hands one key to one worker at a time, so this happens after any
      reconcile of the object in flight, and none follows it here;
    * an object not labelled for this shard is not reconciled (a stale cache entry);
    * an object just moved here waits (requeued every 50 ms) until the cache holds its owned
      objects: every owned kind's informer has seen the resourceVersion of the sharder's last
      relabel (the ``moved`` annotation);
    * a request for an object not in the cache goes through (deletions are the reconciler's).

    ``drained`` counts the objects this gate let go.
    """

    inner: Reconciler
    _: KW_ONLY
    kind: Kind
    owned: tuple[Kind, ...]
    reader: Reader
    writer: Writer
    ring: str
    shard: str
    seen: Callable[[Kind, int], bool]
    drained: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.shard_key = shard_label(self.ring)
        self.drain_key = drain_label(self.ring)
        self.moved_key = moved_annotation(self.ring)

    def reconcile(self, request: Request) -> Result | None:
        """See the class docstring."""
        try:
            obj = self.reader.get(self.kind, request.name, request.namespace)
        except NotFound:
            return self.inner.reconcile(request)
        labels = meta.labels(obj)
        if self.drain_key in labels:
            if labels.get(self.shard_key) == self.shard:
                patch = {
                    "metadata": {
                        "resourceVersion": meta.resource_version(obj),
                        "labels": {self.shard_key: None, self.drain_key: None},
                    }
                }
                self.writer.patch(self.kind, request.name, patch, namespace=request.namespace)
                self.drained += 1
                shard_metrics.DRAINS.labels(self.ring, self.shard).inc()
                log.info("shard %s: drained %s %s", self.shard, self.kind.kind, request.key)
            return None
        if labels.get(self.shard_key) != self.shard:
            return None
        moved = parse_moved(meta.annotations(obj).get(self.moved_key))
        for kind in self.owned:
            rv = moved.get(kind.kind)
            if rv is not None and not self.seen(kind, rv):
                return Result(requeue_after=0.05)
        return self.inner.reconcile(request)


class ShardRuntime:
    """A manager's sharding (attached by :meth:`Sharding.attach`): see the module docstring.
    Also the manager's :class:`~kube_runtime.manager.LeaseHook`: the manager campaigns for
    this replica's shard Lease."""

    #: What the manager's Lease is, for its logs.
    lease_role = "shard Lease"

    def __init__(self, config: Sharding, shard: str, cache: Any) -> None:
        self.config = config
        self.shard = shard
        self.cache = cache
        self.shard_key = shard_label(config.ring)
        self._lock = threading.Lock()
        self._kinds: list[RingKinds] = []
        self.gates: list[ShardGate] = []

    @property
    def lease_namespace(self) -> str | None:
        """Where the shard Lease lives (None: the manager's leader-election namespace)."""
        return self.config.lease_namespace

    @property
    def campaigns(self) -> bool:
        """Whether this replica is a shard (holds a shard Lease): not when sharder-only."""
        return self.config.run_shard

    def prepare_lease(self, client: Client, namespace: str, name: str) -> None:
        """Create the shard Lease labelled for the ring, or label it
        (:func:`ensure_shard_lease`)."""
        ensure_shard_lease(client, namespace, name, self.config.ring)

    @property
    def selector(self) -> str:
        """The label selector of this replica's objects."""
        return f"{self.shard_key}={self.shard}"

    def ring_kinds(self) -> list[RingKinds]:
        """The primary kinds registered so far, with the kinds they own."""
        with self._lock:
            return list(self._kinds)

    def register(self, kind: Kind, owned: tuple[Kind, ...]) -> None:
        """Shard ``kind`` and ``owned``: their informers select this shard's objects."""
        for k in (kind, *owned):
            self.cache.set_label_selector(k, self.selector)
        with self._lock:
            self._kinds.append(RingKinds(kind, owned))

    def gate(
        self,
        inner: Reconciler,
        kind: Kind,
        owned: tuple[Kind, ...],
        reader: Reader,
        writer: Writer,
    ) -> ShardGate:
        """Register ``kind`` (see :meth:`register`) and guard ``inner`` with a :class:`ShardGate`."""
        self.register(kind, owned)
        gate = ShardGate(
            inner,
            kind=kind,
            owned=owned,
            reader=reader,
            writer=writer,
            ring=self.config.ring,
            shard=self.shard,
            seen=self._seen,
        )
        self.gates.append(gate)
        return gate

    def _seen(self, kind: Kind, rv: int) -> bool:
        last = self.cache.informer_for(kind).last_sync_resource_version
        return bool(last) and str(last).isdigit() and int(last) >= rv

    def _is_primary_ref(self, ref: Mapping[str, Any]) -> bool:
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        with self._lock:
            return any(
                rk.primary.kind == ref.get("kind") and rk.primary.group == group
                for rk in self._kinds
            )

    def label_creations(self, client: Any) -> None:
        """Make ``client.create`` label what it creates for a primary object of the ring (an
        object whose controller is one) with this shard: a replica creates only for objects
        of its shard, so owned objects are born on their owner's shard."""
        create = client.create

        @functools.wraps(create)
        def labelled_create(obj: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(obj, Mapping):
                ref = meta.controller_ref(obj)
                if ref is not None and self._is_primary_ref(ref):
                    md = dict(obj.get("metadata") or {})
                    md["labels"] = {**(md.get("labels") or {}), self.shard_key: self.shard}
                    obj = {**obj, "metadata": md}
            return create(obj, *args, **kwargs)

        client.create = labelled_create
