"""The ring: label names, rendezvous hashing of object keys onto shards, shard Lease states.

Everything here is pure (no API calls), so the assignment rules are unit-testable on their own.

* An object's key is ``namespace/name`` (``name`` for cluster-scoped objects).
* :func:`shard_for` picks, among the live shards, the one with the highest
  ``blake2b(shard, key)`` score (rendezvous or highest-random-weight hashing): every process
  computes the same answer from the same shard set, and when a shard joins or leaves only the
  keys whose top choice changes move, about ``objects / N`` of them.
* A shard's Lease is in one of three states (:class:`LeaseTracker`), as observed by the
  sharder's own clock (never by comparing another process's timestamps with it):
  ``ready`` (held by the shard and renewed within its ``leaseDurationSeconds``), ``expired``
  (held by the shard but not renewed in time: the sharder must take the Lease over before it
  moves the shard's objects, so that the shard, if it was only paused, can never renew it and
  its writes are refused), and ``dead`` (released on a clean stop, or taken over by the
  sharder).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEAD",
    "DRAIN_LABEL_PREFIX",
    "EXPIRED",
    "MOVED_ANNOTATION_PREFIX",
    "READY",
    "RING_LABEL",
    "SHARDER_HOLDER",
    "SHARD_LABEL_PREFIX",
    "LeaseTracker",
    "ShardState",
    "Targets",
    "check_ring_name",
    "drain_label",
    "format_moved",
    "moved_annotation",
    "object_key",
    "parse_moved",
    "score",
    "shard_for",
    "shard_id",
    "shard_label",
]

SHARD_LABEL_PREFIX = "shard.kube-runtime.io/"
"""``shard.kube-runtime.io/<ring>: <shard id>`` on every object of the ring (primary and owned)."""
DRAIN_LABEL_PREFIX = "drain.kube-runtime.io/"
"""``drain.kube-runtime.io/<ring>: "true"``: the sharder asks the object's shard to let it go."""
MOVED_ANNOTATION_PREFIX = "moved.kube-runtime.io/"
"""``moved.kube-runtime.io/<ring>: Pod=123,ControllerRevision=120`` on a primary object just
assigned: the resourceVersion of the last relabel of its owned objects, per kind. Its new shard
reconciles it only once its cache has seen that far (so it never acts on a partial view)."""
RING_LABEL = "sharding.kube-runtime.io/ring"
"""The label of every shard Lease of a ring (value: the ring's name)."""
SHARDER_HOLDER = "kube-runtime-sharder"
"""The holder the sharder writes into an expired shard Lease (it fences the shard off)."""

READY = "ready"
EXPIRED = "expired"
DEAD = "dead"

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def check_ring_name(ring: str) -> str:
    """``ring`` if it is a valid ring name (a DNS label of at most 50 characters: it becomes
    part of label keys and Lease names); ``ValueError`` otherwise."""
    if not ring or len(ring) > 50 or not _NAME.match(ring):
        raise ValueError(
            f"invalid ring name {ring!r}: lower-case letters, digits and '-', at most 50"
        )
    return ring


def shard_label(ring: str) -> str:
    """The label key naming an object's shard in ``ring``."""
    return SHARD_LABEL_PREFIX + ring


def drain_label(ring: str) -> str:
    """The label key the sharder sets to ask a shard to drain an object."""
    return DRAIN_LABEL_PREFIX + ring


def moved_annotation(ring: str) -> str:
    """The annotation key recording how far a newly assigned object's owned objects moved."""
    return MOVED_ANNOTATION_PREFIX + ring


def shard_id(identity: str) -> str:
    """``identity`` made a valid Lease name and label value (at most 63 characters of
    lower-case letters, digits, '-' and '.', starting and ending alphanumeric)."""
    cleaned = re.sub(r"[^a-z0-9.-]+", "-", identity.lower()).strip("-.")
    if len(cleaned) > 63:
        digest = hashlib.blake2b(identity.encode(), digest_size=4).hexdigest()
        cleaned = cleaned[:54].rstrip("-.") + "-" + digest
    if not cleaned:
        raise ValueError(f"identity {identity!r} has no usable characters for a shard id")
    return cleaned


def object_key(namespace: str | None, name: str) -> str:
    """The key hashed onto the ring: ``namespace/name``, or ``name`` when cluster-scoped."""
    return f"{namespace}/{name}" if namespace else name


def score(shard: str, key: str) -> int:
    """The rendezvous weight of ``key`` on ``shard`` (a stable 64-bit hash of both)."""
    digest = hashlib.blake2b(f"{shard}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def shard_for(key: str, shards: Iterable[str]) -> str | None:
    """The shard ``key`` belongs to among ``shards`` (None when there is none)."""
    best: tuple[int, str] | None = None
    for shard in shards:
        candidate = (score(shard, key), shard)
        if best is None or candidate > best:
            best = candidate
    return None if best is None else best[1]


class Targets:
    """:func:`shard_for` with memory: a key's target is kept and, when the set of shards
    changes, brought up to date incrementally instead of recomputed over every shard.

    Exact, not approximate: if ``t`` was the top shard of ``key`` among ``P`` and the shards
    become ``C`` (``J`` joined, ``L`` left), then either ``t`` left (recompute over ``C``)
    or the top among ``C`` is the top among ``{t}`` and ``J``. So after a join a key costs
    two hashes instead of one per shard, and after a leave only the leaver's keys are
    rehashed. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._shards: tuple[str, ...] = ()
        self._version = 0
        self._history: list[tuple[frozenset[str], frozenset[str]]] = []  # per version: J, L
        self._memo: dict[str, tuple[int, str]] = {}

    def target(self, key: str, shards: Iterable[str]) -> str | None:
        """The top shard of ``key`` among ``shards`` (the same answer as :func:`shard_for`)."""
        # A tuple is taken as given (the sharder passes the same sorted one every time).
        ready = shards if type(shards) is tuple else tuple(sorted(set(shards)))
        with self._lock:
            if ready != self._shards:
                before, after = set(self._shards), set(ready)
                if before != after:
                    self._history.append((frozenset(after - before), frozenset(before - after)))
                    self._version += 1
                    if not ready:  # nothing to keep a target against
                        self._memo.clear()
                self._shards = ready
            version, history = self._version, self._history
            memo = self._memo.get(key)
        if not ready:
            return None
        if memo is None:
            best = shard_for(key, ready)
        else:
            best = memo[1]
            for joined, left in history[memo[0] : version]:
                if best in left:
                    best = shard_for(key, ready)
                    break
                for shard in joined:
                    if (score(shard, key), shard) > (score(best, key), best):
                        best = shard
        assert best is not None
        with self._lock:
            if self._version == version:
                self._memo[key] = (version, best)
        return best

    def forget(self, key: str) -> None:
        """Drop ``key`` (its object is gone)."""
        with self._lock:
            self._memo.pop(key, None)


def format_moved(moved: Mapping[str, int]) -> str:
    """The :data:`MOVED_ANNOTATION_PREFIX` annotation's value: ``Kind=rv`` pairs, sorted."""
    return ",".join(f"{kind}={rv}" for kind, rv in sorted(moved.items()))


def parse_moved(value: str | None) -> dict[str, int]:
    """The inverse of :func:`format_moved`; malformed pairs are skipped."""
    out: dict[str, int] = {}
    for part in (value or "").split(","):
        kind, sep, rv = part.partition("=")
        if sep and rv.strip().isdigit():
            out[kind.strip()] = int(rv)
    return out


@dataclass(frozen=True)
class ShardState:
    """One shard Lease as the sharder sees it."""

    name: str
    state: str
    holder: str
    lease: Mapping[str, Any]
    since: float
    """Local monotonic time since when the Lease has been unchanged."""


class LeaseTracker:
    """Shard Lease states by observed time: a Lease counts as renewed when its
    resourceVersion changes, and as expired once it has not changed for its
    ``leaseDurationSeconds`` by this process's clock (as leader-election candidates judge)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[str, float]] = {}  # name -> (resourceVersion, first seen)

    def states(self, leases: Iterable[Mapping[str, Any]]) -> dict[str, ShardState]:
        """The state of every Lease in ``leases`` (the ring's current Leases) now."""
        now = self._clock()
        out: dict[str, ShardState] = {}
        with self._lock:
            names = set()
            for lease in leases:
                md = lease.get("metadata") or {}
                name = str(md.get("name") or "")
                rv = str(md.get("resourceVersion") or "")
                names.add(name)
                seen = self._seen.get(name)
                if seen is None or seen[0] != rv:
                    seen = (rv, now)
                    self._seen[name] = seen
                spec = lease.get("spec") or {}
                holder = str(spec.get("holderIdentity") or "")
                duration = float(spec.get("leaseDurationSeconds") or 0)
                if holder != name:
                    state = DEAD
                elif now - seen[1] < duration:
                    state = READY
                else:
                    state = EXPIRED
                out[name] = ShardState(name, state, holder, lease, seen[1])
            for gone in set(self._seen) - names:
                del self._seen[gone]
        return out

    def next_expiry(self, leases: Iterable[Mapping[str, Any]]) -> float | None:
        """Seconds until the first ready Lease would expire without a renewal (None: none)."""
        now = self._clock()
        soonest: float | None = None
        for st in self.states(leases).values():
            if st.state != READY:
                continue
            duration = float((st.lease.get("spec") or {}).get("leaseDurationSeconds") or 0)
            left = st.since + duration - now
            soonest = left if soonest is None else min(soonest, left)
        return soonest
