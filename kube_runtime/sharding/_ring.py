"""The ring: label names, rendezvous hashing of object keys onto shards, shard Lease states.

Everything here is pure (no API calls), so the assignment rules are unit-testable on their own.

* An object's key is ``namespace/name`` (``name`` for cluster-scoped objects).
* :func:`shard_for` picks, among the live shards, the one with the highest
  ``blake2b(shard, key)`` score (rendezvous or highest-random-weight hashing): every process
  computes the same answer from the same shard set, and when a shard joins or leaves only the
  keys whose top choice changes move, about ``objects / N`` of them.
* :class:`BoundedTargets` is what the sharder assigns by: consistent hashing with bounded
  loads over those rendezvous orders, no shard above ``ceil(load_factor * objects / N)``
  keys, kept up to date per event.
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kube_runtime.clock import Clock, resolve

__all__ = [
    "DEAD",
    "DRAIN_LABEL_PREFIX",
    "EXPIRED",
    "MOVED_ANNOTATION_PREFIX",
    "READY",
    "RING_LABEL",
    "SHARDER_HOLDER",
    "SHARD_LABEL_PREFIX",
    "BoundedTargets",
    "LeaseTracker",
    "ShardState",
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


class BoundedTargets:
    """Consistent hashing with bounded loads over rendezvous orders (after Mirrokni, Thorup
    and Zadimoghaddam, "Consistent Hashing with Bounded Loads"): the target shard of every
    key of one kind, kept up to date incrementally. Thread-safe.

    The bound: with ``n`` keys and ``N`` shards no shard is the target of more than
    ``capacity() = ceil(load_factor * n / N)`` keys (``load_factor`` > 1; at 1.1 a shard
    holds at most 10% over the mean, plus one key of rounding). A key's *order* is the shards
    by :func:`score`, highest first; its *top* is the first of them (:func:`shard_for`).

    The rules (stability first: a key's target changes only for one of these reasons):

    * a new key goes to the first shard in its order that has room (below the bound);
    * a shard joins: the keys whose top it becomes move to it (what plain rendezvous hashing
      would move, about ``n / N``); no other key moves to fill it;
    * a shard leaves: its keys go, one by one in key order, to the first shard in their
      order with room;
    * a shard over the bound (the bound fell: keys were deleted, or a shard joined) lets go
      of its keys of lowest score on it until it is at the bound; they too go to the first
      shard in their order with room. Nothing else moves: a key that went down its order
      because its top was full stays there when room opens up above it.
    * keys that come with a hint (the shard their object is labelled with: what a new
      sharder finds, or every key after a time without shards) stay on it when it is ready,
      as long as it is within the bound, unless their top is a shard that holds no key and
      is nobody's hint: one that joined meanwhile, which takes them as a join would. So a
      new sharder moves nothing that was placed within the bound.

    Determinism: the targets are a function of the sequence of calls (keys, hints, shard
    sets); batches are processed in key order, never in arrival or hash-table order.

    Cost (``N`` shards, ``n`` keys): a new key ``N`` hashes (a key with a hint too); a deleted key ``O(1)`` unless the
    bound falls (once per about ``N / load_factor`` deletions), then ``O(keys on shards over
    it)`` comparisons, no hashing; a join 2 hashes per key (its score on the top shard and on
    the newcomer); a leave ``N`` hashes per key of the leaver (plus a pass over the memo for
    the keys whose top it was); an unchanged shard set nothing. Memory per key: its target,
    its score there and its top (shared strings), and a set entry per shard.
    """

    def __init__(self, load_factor: float = 1.1) -> None:
        if not load_factor > 1.0:
            raise ValueError("load_factor must be greater than 1")
        self.load_factor = load_factor
        self._permille = round(load_factor * 1000)  # exact integer arithmetic for the bound
        self._lock = threading.Lock()
        self._shards: tuple[str, ...] = ()
        self._place: dict[str, tuple[str, int]] = {}  # key -> (target, its score there)
        self._top: dict[str, str] = {}  # key -> its top shard (placed keys only)
        self._members: dict[str, set[str]] = {}  # shard -> keys targeted at it
        self._waiting: dict[str, str | None] = {}  # keys without a target -> hint

    # --- reading ---
    def target(self, key: str) -> str | None:
        """The shard ``key`` belongs to (None: unknown key, or no shard)."""
        with self._lock:
            placed = self._place.get(key)
        return None if placed is None else placed[0]

    def knows(self, key: str) -> bool:
        """Whether ``key`` was added (and not removed)."""
        with self._lock:
            return key in self._place or key in self._waiting

    def capacity(self) -> int:
        """The bound: the most keys a shard may be the target of now (0 without shards)."""
        with self._lock:
            return self._capacity()

    def loads(self) -> dict[str, int]:
        """Keys per shard (every current shard, also those with none)."""
        with self._lock:
            return {s: len(self._members.get(s, ())) for s in self._shards}

    def shards(self) -> tuple[str, ...]:
        """The current shards (sorted)."""
        return self._shards

    # --- changes; each returns the keys whose target changed ---
    def add(self, items: Iterable[tuple[str, str | None]]) -> set[str]:
        """Add keys with their hint (the shard their object is labelled with, or None); keys
        already known are left alone."""
        with self._lock:
            was: dict[str, str | None] = {}
            for key, hint in items:
                if key not in self._place and key not in self._waiting:
                    self._waiting[key] = hint
                    was[key] = None
            if was and self._shards:
                self._settle(was)
            return self._changed(was)

    def remove(self, key: str) -> set[str]:
        """Forget ``key`` (its object is gone); the bound may fall and move others."""
        with self._lock:
            self._waiting.pop(key, None)
            placed = self._place.pop(key, None)
            if placed is None:
                return set()
            self._top.pop(key, None)
            self._members[placed[0]].discard(key)
            was: dict[str, str | None] = {}
            self._settle(was)
            return self._changed(was)

    def set_shards(self, shards: Iterable[str]) -> set[str]:
        """Make ``shards`` the current shard set (joins and leaves as in the class doc)."""
        ready = shards if type(shards) is tuple else tuple(sorted(set(shards)))
        with self._lock:
            if ready == self._shards:
                return set()
            before, after = set(self._shards), set(ready)
            self._shards = ready
            if before == after:
                return set()
            was: dict[str, str | None] = {}
            for shard in before - after:  # its keys wait, hinted at the shard they left
                for key in self._members.pop(shard, set()):
                    del self._place[key]
                    self._top.pop(key, None)
                    self._waiting[key] = shard
                    was[key] = shard
            if not ready:
                return self._changed(was)
            left = before - after
            if left:  # keys placed below a leaver: their top is among the rest
                for key, top in self._top.items():
                    if top in left:
                        self._top[key] = _order(key, ready)[0][1]
            joined = sorted(after - before)
            if joined and before - set(left):
                for key, top in self._top.items():
                    best = (score(top, key), top)
                    for shard in joined:
                        best = max(best, (score(shard, key), shard))
                    if best[1] != top:
                        self._top[key] = best[1]
                        was.setdefault(key, self._place[key][0])
                        self._move(key, best[1], best[0])
            for shard in after:
                self._members.setdefault(shard, set())
            self._settle(was)
            return self._changed(was)

    # --- internals (lock held) ---
    def _capacity(self) -> int:
        n, shards = len(self._place) + len(self._waiting), len(self._shards)
        if not shards:
            return 0
        return -(-(self._permille * n) // (1000 * shards))

    def _move(self, key: str, shard: str, weight: int) -> None:
        placed = self._place.get(key)
        if placed is not None:
            self._members[placed[0]].discard(key)
        self._place[key] = (shard, weight)
        self._members.setdefault(shard, set()).add(key)

    def _changed(self, was: Mapping[str, str | None]) -> set[str]:
        """The keys of ``was`` (key -> target before the change) whose target differs now."""
        out = set()
        for key, before in was.items():
            placed = self._place.get(key)
            if (None if placed is None else placed[0]) != before:
                out.add(key)
        return out

    def _settle(self, was: dict[str, str | None]) -> None:
        """Place the waiting keys and bring every shard within the bound; ``was`` gets the
        target before of every key that moves."""
        if not self._shards:
            return
        cap = self._capacity()
        ready = set(self._shards)
        waiting = sorted(self._waiting.items())
        self._waiting.clear()
        for key, _ in waiting:
            was.setdefault(key, None)
        # Keys that come with a ready shard (their label) stay on it, unless their top is a
        # shard that neither holds keys nor is anyone's hint: one that joined meanwhile.
        base = {s for s in self._shards if self._members.get(s)}
        base.update(hint for _, hint in waiting if hint in ready)
        rest: list[str] = []
        for key, hint in waiting:
            if hint not in ready:
                rest.append(key)
                continue
            weight, top = max((score(s, key), s) for s in self._shards)
            self._top[key] = top
            if top in base:
                self._move(key, hint, weight if hint == top else score(hint, key))
            else:
                self._move(key, top, weight)
        for shard in self._shards:  # over the bound: let go of the keys of lowest score
            members = self._members.setdefault(shard, set())
            over = len(members) - cap
            if over > 0:
                for _, key in sorted((self._place[k][1], k) for k in members)[:over]:
                    members.discard(key)
                    del self._place[key]
                    self._top.pop(key, None)
                    was.setdefault(key, shard)
                    rest.append(key)
        for key in sorted(rest):  # in key order, to the first shard in its order with room
            order = _order(key, self._shards)
            self._top[key] = order[0][1]
            for weight, shard in order:
                if len(self._members[shard]) < cap:
                    self._move(key, shard, weight)
                    break


def _order(key: str, shards: Iterable[str]) -> list[tuple[int, str]]:
    """``key``'s rendezvous order over ``shards``: (score, shard), highest first."""
    return sorted(((score(s, key), s) for s in shards), reverse=True)


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
    ``leaseDurationSeconds`` by this process's clock (as leader-election candidates judge):
    ``clock``, a :class:`~kube_runtime.clock.Clock` (None: the clock current when the tracker
    is made), whose monotonic time :attr:`ShardState.since` is."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = resolve(clock, "LeaseTracker")
        self._monotonic = self._clock.monotonic
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[str, float]] = {}  # name -> (resourceVersion, first seen)

    def states(self, leases: Iterable[Mapping[str, Any]]) -> dict[str, ShardState]:
        """The state of every Lease in ``leases`` (the ring's current Leases) now."""
        now = self._monotonic()
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
        now = self._monotonic()
        soonest: float | None = None
        for st in self.states(leases).values():
            if st.state != READY:
                continue
            duration = float((st.lease.get("spec") or {}).get("leaseDurationSeconds") or 0)
            left = st.since + duration - now
            soonest = left if soonest is None else min(soonest, left)
        return soonest
