"""The sharder: assigns a ring's objects to live shards and moves them with a drain handshake.

One replica of the ring runs it at a time (the holder of the Lease ``<ring>-sharder``, a small
leader election among the replicas; its writes are fenced by that Lease as a leader's are).

:class:`Assigner` is the state machine, one primary object at a time (:meth:`Assigner.sync`):

* no live shard: nothing (the object waits);
* unassigned (no shard label): its owned objects get the target shard's label first, then
  the object gets the label and the ``moved`` annotation (how far the owned objects' relabels
  went, so the new shard reconciles only once its cache holds them);
* assigned to the target: owned objects that do not carry the label get it (objects created
  before sharding was turned on), a stale drain label is removed;
* assigned to another *ready* shard: the drain label is set; the shard, at its next reconcile
  of the object (so never during one), removes both labels instead of reconciling
  (:class:`~kube_runtime.sharding._shard.ShardGate`): the object is unassigned and handled
  as above. It is never reconciled by two shards at once: the old one stopped before the
  labels went, the new one starts after the label came;
* assigned to an *expired* shard: its Lease is taken over first (holder
  :data:`~kube_runtime.sharding._ring.SHARDER_HOLDER`), so the shard, if only paused, can
  never renew it and its writes are refused; then the object moves without a drain (nobody
  can answer one). A released Lease (clean stop) or one already taken over is dead: move.

:class:`Sharder` runs it: metadata-only reflectors of the primary and owned kinds (a uid index
for owned objects) and of the ring's Leases, a work queue of primary keys, and a ticker that
notices Leases expiring (no event says so) and re-queues every object when the set of ready
shards changes. Every timer and wait of it (Lease expiry, the start-up grace, its queue and
leader election) runs on the sharder's :class:`~kube_runtime.clock.Clock` (``clock=``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass, field, replace
from typing import Any, Protocol

from kube_runtime import meta
from kube_runtime.cache.reflector import Reflector
from kube_runtime.client.errors import Conflict, Forbidden, NotFound, WriteRefused
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import Kind, Lease
from kube_runtime.leaderelection import LeaderElector, format_micro_time
from kube_runtime.meta import ObjView as Obj
from kube_runtime.sharding import _metrics as shard_metrics
from kube_runtime.sharding._ring import (
    DEAD,
    EXPIRED,
    READY,
    RING_LABEL,
    SHARDER_HOLDER,
    BoundedTargets,
    LeaseTracker,
    ShardState,
    drain_label,
    format_moved,
    moved_annotation,
    object_key,
    shard_label,
)
from kube_runtime.workqueue import ItemExponentialFailureRateLimiter, WorkQueue

__all__ = ["Assigner", "ClientView", "MetadataView", "RingKinds", "Sharder", "View"]

log = logging.getLogger(__name__)

#: What a 403 of kube-apiserver names: verb, resource and API group.
_REFUSAL = re.compile(r'cannot (\S+) resource "([^"]*)"(?: in API group "([^"]*)")?')

#: The longest the sharder's loop sleeps between looks at the shard Leases (it wakes sooner
#: for a Lease event, a Lease expiring, or the end of the start-up grace).
_TICK = 1.0

# Outcomes of Assigner.sync (for logs, metrics and tests).
ASSIGNED = "assigned"
DRAIN_REQUESTED = "drain-requested"
DRAINING = "draining"
FENCED = "fenced"
GONE = "gone"
IN_PLACE = "in-place"
NO_SHARDS = "no-shards"
RETRY = "retry"


@dataclass(frozen=True)
class RingKinds:
    """A primary kind of the ring and the kinds its objects own (they follow its shard)."""

    primary: Kind
    owned: tuple[Kind, ...] = ()


class View(Protocol):
    """What the assigner reads: the objects of the ring's kinds (metadata is enough)."""

    def get(self, kind: Kind, namespace: str | None, name: str) -> Obj | None:
        """The object, or None."""

    def keys(self, kind: Kind) -> list[tuple[str | None, str]]:
        """Every (namespace, name) of ``kind``."""

    def owned(self, kind: Kind, namespace: str | None, owner_uid: str) -> list[Obj]:
        """The ``kind`` objects whose controller is ``owner_uid``."""

    def wait_seen(self, kind: Kind, resource_version: int, timeout: float) -> bool:
        """True once the view holds every ``kind`` write up to ``resource_version``."""

    def leases(self) -> list[Obj]:
        """The ring's shard Leases."""


class ClientView:
    """A :class:`View` reading straight from a client (each call a list): for tests on the
    fake client and for small rings; :class:`MetadataView` is what the sharder runs on."""

    def __init__(self, client: Any, ring: str, lease_namespace: str) -> None:
        self.client = client
        self.ring = ring
        self.lease_namespace = lease_namespace

    def _items(self, kind: Kind, namespace: str | None = None, **kw: Any) -> list[Obj]:
        result = self.client.list(kind, namespace, **kw)
        items = result.get("items") if isinstance(result, Mapping) else result
        return [meta.metadata(o) and o for o in (items or [])]

    def get(self, kind: Kind, namespace: str | None, name: str) -> Obj | None:
        try:
            obj: Obj = self.client.get(kind, name, namespace)
            return obj
        except NotFound:
            return None

    def keys(self, kind: Kind) -> list[tuple[str | None, str]]:
        return [(meta.namespace(o) or None, meta.name(o)) for o in self._items(kind)]

    def owned(self, kind: Kind, namespace: str | None, owner_uid: str) -> list[Obj]:
        return [o for o in self._items(kind, namespace) if meta.controller_uid(o) == owner_uid]

    def wait_seen(self, kind: Kind, resource_version: int, timeout: float) -> bool:
        return True

    def leases(self) -> list[Obj]:
        return self._items(Lease, self.lease_namespace, label_selector=f"{RING_LABEL}={self.ring}")


_KEPT = ("name", "namespace", "uid", "resourceVersion")


def slim(obj: Obj, label_keys: Sequence[str]) -> dict[str, Any]:
    """What the sharder keeps of a ring object: name, namespace, uid, resourceVersion, the
    ring's labels (``label_keys``) and the controller reference; about a third of the
    memory of the whole metadata."""
    md = obj.get("metadata") or {}
    out: dict[str, Any] = {k: md[k] for k in _KEPT if k in md}
    labels = md.get("labels") or {}
    kept = {k: labels[k] for k in label_keys if k in labels}
    if kept:
        out["labels"] = kept
    ref = meta.controller_ref(obj)
    if ref is not None:
        out["ownerReferences"] = [
            {k: ref[k] for k in ("apiVersion", "kind", "name", "uid", "controller") if k in ref}
        ]
    return {"metadata": out}


def _lease(obj: Obj) -> dict[str, Any]:
    """What the sharder keeps of a shard Lease: metadata and spec."""
    md = dict(obj.get("metadata") or {})
    md.pop("managedFields", None)
    return {"metadata": md, "spec": dict(obj.get("spec") or {})}


class _Store:
    """One kind's metadata, indexed by controller uid; a reflector's sink."""

    def __init__(
        self,
        kind: Kind,
        on_change: Callable[[Obj | None, Obj], None],
        label_keys: Sequence[str] = (),
        clock: Clock | None = None,
    ) -> None:
        self._clock = resolve(clock, "MetadataView")
        self.kind = kind
        self._keep: Callable[[Obj], dict[str, Any]] = (
            _lease if kind == Lease else functools.partial(slim, label_keys=tuple(label_keys))
        )
        self._lock = threading.Lock()
        self._seen = self._clock.condition(self._lock)
        self.objects: dict[tuple[str | None, str], dict[str, Any]] = {}
        self.by_owner: dict[str, set[tuple[str | None, str]]] = defaultdict(set)
        self.rv = 0
        self._on_change = on_change

    @staticmethod
    def _key(obj: Obj) -> tuple[str | None, str]:
        md = obj.get("metadata") or {}
        return (md.get("namespace") or None, str(md.get("name") or ""))

    def _index(self, key: tuple[str | None, str], old: Obj | None, new: Obj | None) -> None:
        if old is not None:
            uid = meta.controller_uid(old)
            if uid:
                self.by_owner[uid].discard(key)
                if not self.by_owner[uid]:
                    del self.by_owner[uid]
        if new is not None:
            uid = meta.controller_uid(new)
            if uid:
                self.by_owner[uid].add(key)

    def _advance(self, rv: str | None) -> None:
        if rv and rv.isdigit():
            self.rv = max(self.rv, int(rv))
        self._seen.notify_all()

    def replace(self, objs: list[dict[str, Any]], resource_version: str) -> Any:
        changed: list[tuple[Obj | None, Obj]] = []
        with self._lock:
            old_objects = self.objects
            self.objects = {}
            self.by_owner = defaultdict(set)
            for raw in objs:
                obj = self._keep(raw)
                key = self._key(obj)
                self.objects[key] = obj
                self._index(key, None, obj)
                before = old_objects.get(key)
                if before is None or meta.resource_version(before) != meta.resource_version(obj):
                    changed.append((before, obj))
            for key, gone in old_objects.items():
                if key not in self.objects:
                    changed.append((gone, gone))
            self._advance(resource_version)
        for was, now in changed:
            self._on_change(was, now)

    def add(self, obj: dict[str, Any]) -> Any:
        self._upsert(obj)

    def update(self, obj: dict[str, Any]) -> Any:
        self._upsert(obj)

    def _upsert(self, raw: Obj) -> None:
        obj = self._keep(raw)
        key = self._key(obj)
        with self._lock:
            old = self.objects.get(key)
            self.objects[key] = obj
            self._index(key, old, obj)
            self._advance(meta.resource_version(obj))
        self._on_change(old, obj)

    def delete(self, raw: dict[str, Any]) -> Any:
        obj = self._keep(raw)
        key = self._key(obj)
        with self._lock:
            gone = self.objects.pop(key, None)
            self._index(key, gone, None)
            self._advance(meta.resource_version(obj))
        self._on_change(gone, obj)

    def wait_seen(self, rv: int, timeout: float) -> bool:
        monotonic = self._clock.monotonic
        deadline = monotonic() + timeout
        with self._lock:
            while self.rv < rv:
                left = deadline - monotonic()
                if left <= 0:
                    return False
                self._seen.wait(left)
            return True


class MetadataView:
    """The sharder's :class:`View`: metadata-only reflectors (list+watch) of the ring's kinds
    and Leases, each event also reported to ``on_change(kind, old, new)``; its reflectors and
    waits run on ``clock`` (None: the clock current when the view is made)."""

    def __init__(
        self,
        client: Any,
        kinds: Iterable[Kind],
        *,
        ring: str,
        lease_namespace: str,
        namespace: str | None,
        on_change: Callable[[Kind, Obj | None, Obj], None],
        clock: Clock | None = None,
    ) -> None:
        self._clock = resolve(clock, "MetadataView")
        self._stores: dict[Kind, _Store] = {}
        self._reflectors: list[Reflector] = []
        all_kinds = [*dict.fromkeys(kinds), Lease]
        for kind in all_kinds:
            store = _Store(
                kind,
                lambda old, new, k=kind: on_change(k, old, new),  # type: ignore[misc]
                (shard_label(ring), drain_label(ring)),
                self._clock,
            )
            self._stores[kind] = store
            is_lease = kind == Lease
            self._reflectors.append(
                Reflector(
                    client,
                    kind,
                    store,
                    namespace=lease_namespace if is_lease else namespace,
                    label_selector=f"{RING_LABEL}={ring}" if is_lease else None,
                    metrics_label=f"sharder:{kind}",
                    clock=self._clock,
                )
            )
        self._stop = self._clock.event()

    def start(self) -> None:
        """Start listing and watching (each reflector on a thread of its own)."""
        for reflector in self._reflectors:
            threading.Thread(
                target=reflector.run,
                args=(self._stop,),
                name=f"sharder-{reflector.kind}",
                daemon=True,
            ).start()

    def wait_for_sync(self, stop: threading.Event) -> bool:
        """Wait until every reflector listed once; False when ``stop`` came first."""
        while not stop.is_set():
            if all(r.has_synced for r in self._reflectors):
                return True
            stop.wait(0.05)
        return False

    def stop(self) -> None:
        """Stop the reflectors."""
        self._stop.set()
        for reflector in self._reflectors:
            reflector.close_watch()

    def count(self, kind: Kind) -> int:
        """How many ``kind`` objects the view holds."""
        return len(self._stores[kind].objects)

    # --- View ---
    def get(self, kind: Kind, namespace: str | None, name: str) -> Obj | None:
        return self._stores[kind].objects.get((namespace or None, name))

    def keys(self, kind: Kind) -> list[tuple[str | None, str]]:
        store = self._stores[kind]
        with store._lock:
            return list(store.objects)

    def owned(self, kind: Kind, namespace: str | None, owner_uid: str) -> list[Obj]:
        store = self._stores[kind]
        with store._lock:
            keys = list(store.by_owner.get(owner_uid, ()))
            return [store.objects[k] for k in keys if k in store.objects]

    def wait_seen(self, kind: Kind, resource_version: int, timeout: float) -> bool:
        return self._stores[kind].wait_seen(resource_version, timeout)

    def leases(self) -> list[Obj]:
        store = self._stores[Lease]
        with store._lock:
            return list(store.objects.values())


def _rv(obj: Obj) -> int:
    value = meta.resource_version(obj)
    return int(value) if value.isdigit() else 0


@dataclass
class Assigner:
    """The assignment and drain state machine (see the module docstring).

    ``client`` writes (labels, the ``moved`` annotation, shard Lease take-overs); ``view``
    reads. ``tracker`` judges shard Leases; ``min_shards`` holds the first assignments back
    until that many shards are ready (or ``startup_grace`` seconds passed), so that replicas
    starting together do not move every object twice. ``clock`` (a
    :class:`~kube_runtime.clock.Clock`; None: the clock current when the assigner is made)
    times the grace and the Lease take-overs; the default ``tracker`` judges on it too.
    """

    client: Any
    view: View
    ring: str
    kinds: Sequence[RingKinds]
    tracker: LeaseTracker | None = None
    """Judges the shard Leases (None: a :class:`LeaseTracker` on ``clock``)."""
    min_shards: int = 1
    startup_grace: float = 15.0
    seen_timeout: float = 10.0
    clock: Clock | None = field(default=None, repr=False)
    load_factor: float = 1.1
    """The bound of consistent hashing with bounded loads: no shard is the target of more
    than ``ceil(load_factor * objects / shards)`` primary objects of a kind
    (:class:`~kube_runtime.sharding._ring.BoundedTargets`, one per primary kind)."""
    on_moved: Callable[[Kind, str | None, str], None] | None = None
    """Called for each object whose target changed because of another object or the ring
    (a deletion lowered the bound, a shard joined or left): the caller queues it."""
    state_ttl: float = 0.1
    """How long the shard states are reused (every sync needs them: judging 100 Leases costs
    ~0.1 ms, a pass over a million objects would spend 100 s on it); a Lease event makes the
    next sync judge them again at once."""

    def __post_init__(self) -> None:
        self._clock = resolve(self.clock, "Assigner")
        self._monotonic = self._clock.monotonic
        self._tracker = self.tracker if self.tracker is not None else LeaseTracker(self._clock)
        self.tracker = self._tracker
        self.shard_key = shard_label(self.ring)
        self.drain_key = drain_label(self.ring)
        self.moved_key = moved_annotation(self.ring)
        self._started = self._monotonic()
        self._owned = {rk.primary: rk.owned for rk in self.kinds}
        self.targets = {rk.primary: BoundedTargets(self.load_factor) for rk in self.kinds}
        self._states_lock = threading.Lock()
        self._lease_epoch = 0
        self._fenced: set[str] = set()  # Leases taken over, until the view shows it
        self._states: tuple[float, int, dict[str, ShardState], tuple[str, ...]] | None = None

    # --- the ring ---
    def leases_changed(self) -> None:
        """A shard Lease changed: judge the states again at the next sync."""
        with self._states_lock:
            self._lease_epoch += 1

    def _judged(self) -> tuple[dict[str, ShardState], tuple[str, ...]]:
        now = self._monotonic()
        with self._states_lock:
            cached, epoch = self._states, self._lease_epoch
        if cached is not None and cached[1] == epoch and now - cached[0] < self.state_ttl:
            return cached[2], cached[3]
        states = self._tracker.states(self.view.leases())
        with self._states_lock:
            fenced = set(self._fenced)
        for name in fenced:
            st = states.get(name)
            if st is None or st.state != EXPIRED:
                with self._states_lock:
                    self._fenced.discard(name)  # the view caught up (or it came back)
            else:
                states[name] = replace(st, state=DEAD)
        ready = tuple(sorted(n for n, s in states.items() if s.state == READY))
        with self._states_lock:
            self._states = (now, epoch, states, ready)
        return states, ready

    def shard_states(self) -> dict[str, ShardState]:
        """Every shard Lease of the ring and its state (judged at most ``state_ttl`` ago)."""
        return self._judged()[0]

    def ready_shards(self, states: Mapping[str, ShardState] | None = None) -> tuple[str, ...]:
        """The shards objects may be assigned to (empty while held back, see ``min_shards``)."""
        if states is None:
            ready = self._judged()[1]
        else:
            ready = tuple(sorted(n for n, s in states.items() if s.state == READY))
        if len(ready) < self.min_shards and self._monotonic() - self._started < self.startup_grace:
            return ()
        return ready

    def next_change(self) -> float | None:
        """Seconds until the ready shards may change with no Lease event (a ready Lease
        expires, or the start-up grace ends); None when nothing is due."""
        due = self._tracker.next_expiry(self.view.leases())
        if self.min_shards > 1:
            grace = self._started + self.startup_grace - self._monotonic()
            if grace > 0:
                due = grace if due is None else min(due, grace)
        return due

    # --- the plan ---
    def observe(self, kind: Kind, obj: Obj, deleted: bool) -> None:
        """A primary object event: a new object gets its target at once (in event order, so
        the placement follows the order objects were created in), a deleted one is dropped
        (the bound may fall: the objects that move are reported to ``on_moved``)."""
        targets = self.targets.get(kind)
        if targets is None:
            return
        key = object_key(meta.namespace(obj) or None, meta.name(obj))
        if deleted:
            self._report(kind, targets.remove(key), skip=key)
        elif not targets.knows(key):
            self._report(kind, targets.add([(key, meta.labels(obj).get(self.shard_key))]), key)

    def seed(self) -> None:
        """Add every primary object the view holds (with its label as hint); the sharder
        calls this once its view is synced, before the first assignment."""
        for kind, targets in self.targets.items():
            items = []
            for ns, name in self.view.keys(kind):
                obj = self.view.get(kind, ns, name)
                if obj is not None:
                    items.append((object_key(ns, name), meta.labels(obj).get(self.shard_key)))
            self._report(kind, targets.add(items), skip=None)

    def _report(self, kind: Kind, keys: Iterable[str], skip: str | None) -> None:
        if self.on_moved is None:
            return
        for key in keys:
            if key != skip:
                ns, sep, name = key.partition("/")
                self.on_moved(kind, ns if sep else None, name if sep else ns)

    def refresh(self) -> None:
        """Bring every kind's targets up to the ready shards now (the sharder's loop calls
        this when they change, so objects created next are placed against them at once)."""
        ready = self.ready_shards()
        for kind, targets in self.targets.items():
            self._report(kind, targets.set_shards(ready), skip=None)

    def _target(self, kind: Kind, key: str, obj: Obj) -> str | None:
        targets = self.targets[kind]
        self._report(kind, targets.set_shards(self.ready_shards()), skip=key)
        if not targets.knows(key):
            self._report(kind, targets.add([(key, meta.labels(obj).get(self.shard_key))]), key)
        return targets.target(key)

    # --- one object ---
    def sync(self, kind: Kind, namespace: str | None, name: str) -> str:
        """Move ``kind`` object ``namespace/name`` one step towards its target shard; returns
        what happened (``assigned``, ``drain-requested``, ``draining``, ``in-place``, ...).
        Raises on API errors (the caller retries)."""
        obj = self.view.get(kind, namespace, name)
        if obj is None:
            if kind in self.targets:
                self._report(kind, self.targets[kind].remove(object_key(namespace, name)), None)
            return GONE
        states, _ = self._judged()
        target = self._target(kind, object_key(namespace, name), obj)
        if target is None:
            return NO_SHARDS
        labels = meta.labels(obj)
        current = labels.get(self.shard_key) or None
        draining = self.drain_key in labels
        if current == target:
            if draining:  # the ring changed back before the shard answered: cancel the drain
                self._patch_labels(kind, obj, {self.drain_key: None}, precondition=True)
                return IN_PLACE
            self._move_owned(kind, obj, None, target)
            return IN_PLACE
        if current is not None:
            state = states.get(current)
            if state is not None and state.state == READY:
                if draining:
                    return DRAINING
                self._patch_labels(kind, obj, {self.drain_key: "true"}, precondition=True)
                log.info(
                    "sharding %s: %s %s moves %s -> %s: drain requested",
                    self.ring,
                    kind.kind,
                    object_key(namespace, name),
                    current,
                    target,
                )
                return DRAIN_REQUESTED
            if state is not None and state.state == EXPIRED:
                self._fence(state)
                return FENCED
        moved = self._move_owned(kind, obj, current, target)
        patch: dict[str, Any] = {
            "metadata": {
                "resourceVersion": meta.resource_version(obj),
                "labels": {self.shard_key: target, self.drain_key: None},
                "annotations": {self.moved_key: format_moved(moved) if moved else None},
            }
        }
        self.client.patch(kind, name, patch, namespace=namespace)
        log.info(
            "sharding %s: %s %s assigned to %s (from %s)",
            self.ring,
            kind.kind,
            object_key(namespace, name),
            target,
            current or "none",
        )
        return ASSIGNED

    def _patch_labels(
        self, kind: Kind, obj: Obj, labels: Mapping[str, str | None], *, precondition: bool
    ) -> Obj:
        md: dict[str, Any] = {"labels": dict(labels)}
        if precondition:
            md["resourceVersion"] = meta.resource_version(obj)
        result: Obj = self.client.patch(
            kind, meta.name(obj), {"metadata": md}, namespace=meta.namespace(obj) or None
        )
        return result

    def _fence(self, state: ShardState) -> None:
        """Take an expired shard's Lease over (optimistically: a renewal that got in first
        makes this a conflict, and the shard is ready again)."""
        lease = {k: v for k, v in state.lease.items() if k != "status"}
        spec = dict(lease.get("spec") or {})
        stamp = format_micro_time(self._clock.now())
        spec.update(
            holderIdentity=SHARDER_HOLDER,
            acquireTime=stamp,
            renewTime=stamp,
            leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1,
        )
        lease = {**lease, "apiVersion": Lease.api_version, "kind": Lease.kind, "spec": spec}
        self.client.update(lease)
        with self._states_lock:
            self._fenced.add(state.name)
            self._lease_epoch += 1
        log.warning(
            "sharding %s: shard %s stopped renewing its Lease: taken over, its objects move",
            self.ring,
            state.name,
        )

    def _move_owned(
        self, kind: Kind, owner: Obj, current: str | None, target: str
    ) -> dict[str, int]:
        """Give every object ``owner`` controls the ``target`` label; per kind, the
        resourceVersion of the last relabel (nothing for kinds that needed none)."""
        moved: dict[str, int] = {}
        uid = meta.uid(owner)
        namespace = meta.namespace(owner) or None
        for owned_kind in self._owned.get(kind, ()):
            fresh_read = False
            for _ in range(5):
                objs = self.view.owned(owned_kind, namespace, uid)
                if (
                    not objs
                    and current is not None
                    and not fresh_read
                    and owned_kind.kind not in moved
                ):
                    # None known: the old shard's last creates may not have reached the view
                    # yet. A fresh read of what it labelled settles that (rarely needed:
                    # otherwise the relabels below are what the view catches up to).
                    fresh_read = True
                    listed = self.client.list(
                        owned_kind, namespace, label_selector=f"{self.shard_key}={current}"
                    )
                    items = listed.get("items") if isinstance(listed, Mapping) else listed
                    objs = [o for o in items or () if meta.controller_uid(o) == uid]
                stray = [o for o in objs if meta.labels(o).get(self.shard_key) != target]
                if not stray:
                    break
                last = 0
                for o in stray:
                    try:
                        done = self._patch_labels(
                            owned_kind, o, {self.shard_key: target}, precondition=False
                        )
                    except NotFound:
                        continue
                    last = max(last, _rv(done))
                if last:
                    moved[owned_kind.kind] = max(moved.get(owned_kind.kind, 0), last)
                    # Once the view has seen our last relabel, it holds everything written
                    # before it, including the old shard's last creates: look again.
                    if not self.view.wait_seen(owned_kind, last, self.seen_timeout):
                        raise TimeoutError(f"the sharder's view of {owned_kind} lags behind")
        return moved


@dataclass(eq=False, repr=False)
class Sharder:
    """The sharder runnable (``need_leader_election = False``: every replica campaigns for
    the ``<ring>-sharder`` Lease; the holder assigns). See the module docstring. ``kinds()``
    gives the ring's kinds at each sync; the three Lease timings (kept as ``timings``) are
    its election's. ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock current
    when the sharder is made) runs its election, view, queue and timers."""

    need_leader_election = False

    client: Any
    _: KW_ONLY
    ring: str
    kinds: Callable[[], Sequence[RingKinds]]
    lease_namespace: str
    namespace: str | None
    identity: str
    lease_duration: InitVar[float] = 15.0
    renew_deadline: InitVar[float] = 10.0
    retry_period: InitVar[float] = 2.0
    min_shards: int = 1
    workers: int = 2
    load_factor: float = 1.1
    clock: InitVar[Clock | None] = None

    def __post_init__(
        self, lease_duration: float, renew_deadline: float, retry_period: float, clock: Clock | None
    ) -> None:
        self._clock = resolve(clock, "Sharder")
        self.timings = (lease_duration, renew_deadline, retry_period)
        self.leading = self._clock.event()
        self.assigner: Assigner | None = None
        self.view: MetadataView | None = None
        self.elector: LeaderElector | None = None
        self.outcomes: dict[str, int] = defaultdict(int)
        self._last_cleanup = float("-inf")
        self._counts: dict[str, int] = {}
        self._refused: set[tuple[str | None, ...]] = set()
        self._refused_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Sharder({self.ring})"

    def start(self, stop: threading.Event) -> None:
        """Campaign for ``<ring>-sharder`` until ``stop``; run the assignment while leading."""
        lease_duration, renew_deadline, retry_period = self.timings
        while not stop.is_set():
            client = self.client.clone() if hasattr(self.client, "clone") else self.client
            election_client = self.client.clone() if hasattr(self.client, "clone") else self.client
            elector = LeaderElector(
                election_client,
                self.lease_namespace,
                f"{self.ring}-sharder",
                self.identity,
                lease_duration=lease_duration,
                renew_deadline=renew_deadline,
                retry_period=retry_period,
                on_started_leading=lambda leading_stop, c=client: self._lead(c, leading_stop),  # type: ignore[misc]
                on_stopped_leading=lambda: None,
                clock=self._clock,
            )
            self.elector = elector

            def guard(method: str, path: str, elector: LeaderElector = elector) -> None:
                if not elector.holds_lease_safely():
                    raise WriteRefused(f"{method} {path}: not sent, this replica no longer shards")

            if hasattr(client, "write_guard"):
                client.write_guard = guard
            elector.run(stop)
            stop.wait(retry_period)

    def _lead(self, client: Any, leading_stop: threading.Event) -> None:
        kinds = list(self.kinds())
        queue: WorkQueue[tuple[Kind, str | None, str]] = WorkQueue(
            name=f"sharder-{self.ring}",
            rate_limiter=ItemExponentialFailureRateLimiter(0.01, 5.0),
            clock=self._clock,
        )
        primaries = {rk.primary for rk in kinds}
        owner_kind: dict[Kind, list[Kind]] = defaultdict(list)
        for rk in kinds:
            for k in rk.owned:
                owner_kind[k].append(rk.primary)
        wake = self._clock.event()

        key = shard_label(self.ring)
        counts: dict[str, int] = defaultdict(int)
        self._counts = counts
        count_lock = threading.Lock()

        def count(kind: Kind, old: Obj | None, new: Obj) -> None:
            """Objects per shard, kept up to date from the events (no scan)."""
            view = self.view
            deleted = (
                view is not None
                and view.get(kind, meta.namespace(new) or None, meta.name(new)) is None
            )
            before = None if old is None else meta.labels(old).get(key, "")
            after = None if deleted else meta.labels(new).get(key, "")
            if before == after:
                return
            with count_lock:
                for shard, delta in ((before, -1), (after, 1)):
                    if shard is not None:
                        counts[shard] += delta
                        shard_metrics.OBJECTS.labels(self.ring, shard).set(counts[shard])

        def on_change(kind: Kind, old: Obj | None, new: Obj) -> None:
            if kind == Lease:
                if self.assigner is not None:
                    self.assigner.leases_changed()
                wake.set()
            elif kind in primaries:
                count(kind, old, new)
                if self.assigner is not None:
                    view = self.view
                    gone = view is not None and (
                        view.get(kind, meta.namespace(new) or None, meta.name(new)) is None
                    )
                    self.assigner.observe(kind, new, gone)
                queue.add((kind, meta.namespace(new) or None, meta.name(new)))
            else:  # an owned object: its owner, which it follows
                ref = meta.controller_ref(new)
                if ref is None:
                    return
                for primary in owner_kind.get(kind, ()):
                    if ref.get("kind") == primary.kind:
                        queue.add((primary, meta.namespace(new) or None, str(ref.get("name"))))

        all_kinds = [rk.primary for rk in kinds] + [k for rk in kinds for k in rk.owned]
        view = MetadataView(
            client,
            all_kinds,
            ring=self.ring,
            lease_namespace=self.lease_namespace,
            namespace=self.namespace,
            on_change=on_change,
            clock=self._clock,
        )
        assigner = Assigner(
            client,
            view,
            self.ring,
            kinds,
            min_shards=self.min_shards,
            startup_grace=self.timings[0],
            load_factor=self.load_factor,
            on_moved=lambda kind, ns, name: queue.add((kind, ns, name)),
            clock=self._clock,
        )
        self.view, self.assigner = view, assigner
        view.start()
        try:
            if not view.wait_for_sync(leading_stop):
                return
            assigner.seed()
            self.leading.set()
            log.info("sharding %s: %s runs the sharder", self.ring, self.identity)
            for i in range(self.workers):
                threading.Thread(
                    target=self._work,
                    args=(queue, assigner, leading_stop),
                    name=f"sharder-{i}",
                    daemon=True,
                ).start()
            last: tuple[str, ...] | None = None
            while not leading_stop.is_set():
                states = assigner.shard_states()
                for state in (READY, EXPIRED, DEAD):
                    shard_metrics.SHARDS.labels(self.ring, state).set(
                        sum(1 for st in states.values() if st.state == state)
                    )
                ready = assigner.ready_shards(states)
                if ready != last:
                    log.info("sharding %s: ready shards %s", self.ring, ", ".join(ready) or "none")
                    last = ready
                    assigner.refresh()
                    for kind in primaries:
                        for ns, name in view.keys(kind):
                            queue.add((kind, ns, name))
                self._forget_dead(assigner)
                # No event says a Lease expired or the grace ended: sleep until the next
                # one may (a Lease event wakes the loop at once); never less than the
                # assigner reuses its judgement for, never more than _TICK.
                due = assigner.next_change()
                wait = _TICK if due is None else min(max(due, assigner.state_ttl), _TICK)
                wake.wait(wait)
                wake.clear()
        finally:
            self.leading.clear()
            queue.shutdown()
            view.stop()
            # Another replica's sharder reports from now on: drop this one's series.
            for shard in list(counts):
                shard_metrics.OBJECTS.remove(self.ring, shard)
            for state in (READY, EXPIRED, DEAD):
                with contextlib.suppress(KeyError):
                    shard_metrics.SHARDS.remove(self.ring, state)

    def _forget_dead(self, assigner: Assigner) -> None:
        """Delete dead shard Leases no primary object is assigned to any more (after a lease
        duration, so a shard that was only paused finds its Lease taken, not gone); the
        counts come from the events, no scan."""
        assert self.view is not None
        now = self._clock.monotonic()
        if now - self._last_cleanup < self.timings[0]:
            return
        self._last_cleanup = now
        for st in assigner.shard_states().values():
            if st.state != DEAD or now - st.since < self.timings[0]:
                continue
            if self._counts.get(st.name, 0) > 0:  # primary objects still labelled for it
                continue
            try:
                assigner.client.delete(Lease, st.name, self.lease_namespace)
                log.info("sharding %s: deleted the Lease of dead shard %s", self.ring, st.name)
            except Forbidden as e:
                self.report_refusal(f"deleting the Lease of dead shard {st.name}", e)
            except Exception as e:
                log.debug("sharding %s: deleting Lease %s: %s", self.ring, st.name, e)

    def report_refusal(self, what: str, err: Exception) -> None:
        """Log a 403 met while sharding ``what``: the first refusal of each verb and resource
        at error level, naming them and the command that prints the rules (the API server's
        message says which verb on which resource); the same refusal again, for any object,
        at debug (the object is retried with backoff)."""
        found = _REFUSAL.search(str(err))
        key = found.groups() if found else (str(err),)
        with self._refused_lock:
            first = key not in self._refused
            self._refused.add(key)
        if not first:
            log.debug("sharding %s: %s: %s (again)", self.ring, what, err)
            return
        log.error(
            "sharding %s: %s: %s; retrying with backoff. Sharded replicas need this grant "
            "(`kube-runtime rbac --shards CONTROLLER...` prints the rules); further refusals "
            "of it are logged at debug level",
            self.ring,
            what,
            err,
        )

    def _work(
        self,
        queue: WorkQueue[tuple[Kind, str | None, str]],
        assigner: Assigner,
        stop: threading.Event,
    ) -> None:
        while True:
            item, shutdown = queue.get()
            if shutdown or item is None:
                return
            if stop.is_set():  # no longer the sharder: what is left is the next one's
                queue.done(item)
                continue
            kind, ns, name = item
            try:
                outcome = assigner.sync(kind, ns, name)
                self.outcomes[outcome] += 1
                shard_metrics.SYNCS.labels(self.ring, outcome).inc()
                if outcome in (NO_SHARDS, FENCED):
                    queue.add_after(item, 0.5 if outcome == NO_SHARDS else 0.05)
                queue.forget(item)
            except Forbidden as e:
                self.report_refusal(f"{kind.kind} {ns}/{name}", e)
                self._retry_later(queue, item)
            except Conflict as e:  # a racing writer: retried, not worth a warning
                log.debug("sharding %s: %s %s/%s: %s", self.ring, kind.kind, ns, name, e)
                self._retry_later(queue, item)
            except Exception as e:
                log.warning("sharding %s: %s %s/%s: %s", self.ring, kind.kind, ns, name, e)
                self._retry_later(queue, item)
            finally:
                queue.done(item)

    def _retry_later(
        self, queue: WorkQueue[tuple[Kind, str | None, str]], item: tuple[Kind, str | None, str]
    ) -> None:
        """Count a failed sync as ``retry`` and requeue ``item`` with backoff."""
        self.outcomes[RETRY] += 1
        shard_metrics.SYNCS.labels(self.ring, RETRY).inc()
        queue.add_rate_limited(item)
