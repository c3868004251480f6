"""In-memory object storage with kube-apiserver semantics.

Contracts:

* One global, monotonically increasing ``resourceVersion`` (like an etcd revision); every
  committed write takes the next value. A write that changes nothing commits nothing (no new
  resourceVersion, no watch event), as kube-apiserver's GuaranteedUpdate does.
* Stored objects are never mutated: every write stores a new dict. :class:`Stored` caches the
  JSON encoding of one object version so lists and watches serialize each version once.
* Watch: each resource keeps a bounded history of events. A watch from resourceVersion ``R``
  replays every event with a newer version and then follows live ones; when an event newer
  than ``R`` has already been evicted from the window, :class:`~.errors.ApiError` 410 Expired
  is raised. Registration and replay happen under the store lock, so no event is lost or
  duplicated between the two.
* Listeners (watchers, the garbage collector, the kubelet) are called under the store lock
  and must only enqueue: never block and never call back into the store.
* Persistence (optional): with a :class:`~.persist.Journal`, every commit is recorded on disk
  before anything changes in memory; a write the journal refuses answers 500 and changes
  nothing. :meth:`Store.load` restores a journal's objects at start.
* Deletion follows kube-apiserver: preconditions, graceful deletion for pods, finalizers
  block removal (``deletionTimestamp`` set instead), and the propagation policy becomes the
  ``orphan`` / ``foregroundDeletion`` finalizer that :mod:`.gc` acts on.

Validation and defaulting are delegated to a :class:`Strategy` so this module stays about
storage and versions.
"""

from __future__ import annotations

import base64
import builtins
import copy
import datetime as _dt
import math
import os
import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, Protocol, TypeVar

import orjson

from kube_runtime import clock as _clock
from kube_runtime._bounded import remember
from kube_runtime.cache.store import compact_json
from kube_runtime.client import _apifacts as facts
from kube_runtime.client._registry import merge_update
from kube_runtime.envtest.server import errors, pvcresize
from kube_runtime.envtest.server.bodylimits import MAX_OBJECT_BYTES, check_object_size
from kube_runtime.envtest.server.errors import ApiError, api_error
from kube_runtime.envtest.server.persist import Journal, JournalError
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.meta import Obj as Obj
from kube_runtime.validation import no_new_finalizers_message

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

#: The storage key (``ResourceInfo.key``) of namespaces.
_NAMESPACES: tuple[str, str] = ("", "namespaces")

FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"
_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# Fields a client cannot set on create: the server assigns them (or they only exist later).
_SERVER_SET_ON_CREATE = frozenset(
    {"uid", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"}
)
# UUID version 4 and RFC 4122 variant bits, and the mask that clears those bits.
_UUID4_BITS = (0x4 << 76) | (0x2 << 62)
_UUID4_MASK = ((1 << 128) - 1) ^ (0xF << 76) ^ (0x3 << 62)


def now_rfc3339(clock: Callable[[], float]) -> str:
    """``clock()`` as Kubernetes writes timestamps: UTC, whole seconds (truncated), ``Z``."""
    return _rfc3339_second(math.floor(clock()))


@lru_cache(maxsize=64)
def _rfc3339_second(second: int) -> str:
    # Timestamps have one-second resolution, so each second is formatted once; a new second
    # (each write under a simulated clock, whose time jumps) formats only its time of day
    # from the two-digit strings, the date kept per day (strftime and gmtime cost ~10k
    # instructions a call, this ~4k).
    rest = second % 86400
    midnight = second - rest
    date = _RFC3339_DAYS.get(midnight)
    if date is None:
        date = time.strftime("%Y-%m-%dT", time.gmtime(midnight))
        date = remember(_RFC3339_DAYS, midnight, date, 16)
    two = _TWO_DIGITS
    return f"{date}{two[rest // 3600]}:{two[rest // 60 % 60]}:{two[rest % 60]}Z"


#: The date part of :func:`_rfc3339_second`'s timestamps, by the day's first second (bounded).
_RFC3339_DAYS: dict[int, str] = {}
_TWO_DIGITS = tuple(f"{i:02d}" for i in range(60))


# uids come from a private generator seeded from os.urandom (and reseeded in forked children):
# os.urandom per write is a system call that releases the GIL, and a writer thread that
# releases and retakes the GIL that often starves the server's loop thread (CPython only
# forces a GIL switch for a waiter when the holder did not switch in the meantime).
_uid_random = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_uid_random.seed)


def new_uid() -> str:
    """A random RFC 4122 version-4 UUID string (the form of ``str(uuid.uuid4())``)."""
    h = (_uid_random.getrandbits(128) & _UUID4_MASK | _UUID4_BITS).to_bytes(16, "big").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def parse_rfc3339(value: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp as Kubernetes writes them."""
    return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


T = TypeVar("T")


class Stored:
    """One immutable object version plus its lazily computed JSON encodings."""

    __slots__ = ("_raw", "_untyped_raw", "obj")

    def __init__(self, obj: Obj) -> None:
        self.obj = obj
        self._raw: bytes | None = None
        self._untyped_raw: bytes | None = None

    @classmethod
    def decode(cls, raw: bytes) -> Stored:
        """The version whose JSON encoding is ``raw`` (as :attr:`raw` wrote it)."""
        stored = cls(orjson.loads(raw))
        stored._raw = raw
        return stored

    @property
    def raw(self) -> bytes:
        if self._raw is None:
            self._raw = compact_json(self.obj)
        return self._raw

    @property
    def untyped_raw(self) -> bytes:
        """The encoding without ``apiVersion`` and ``kind``: how kube-apiserver writes the
        items of a built-in kind's list (typed lists leave their items' TypeMeta empty)."""
        if self._untyped_raw is None:
            obj = self.obj
            self._untyped_raw = compact_json(
                {k: v for k, v in obj.items() if k != "apiVersion" and k != "kind"}
            )
        return self._untyped_raw

    @property
    def meta(self) -> Obj:
        meta: Obj = self.obj["metadata"]
        return meta

    @property
    def rv(self) -> int:
        return int(self.meta["resourceVersion"])


class Event(NamedTuple):
    """A committed change (immutable). ``old`` is the previous version (None for ADDED)."""

    type: str
    info: ResourceInfo
    new: Stored
    old: Stored | None
    rv: int


#: ``Event(...)`` from a tuple of its fields without the Python-level ``__new__`` of a
#: NamedTuple (the commit's hot path).
_new_event: Callable[[type[Event], tuple[Any, ...]], Event] = tuple.__new__


class Strategy(Protocol):
    """Per-kind behaviour the store delegates: defaulting, validation, and status handling."""

    def default(self, info: ResourceInfo, obj: Obj) -> None:
        """Default ``obj`` in place as kube-apiserver's decoding of a request body does (the
        built-in kinds' defaults; a custom resource pruned and defaulted from its schema).
        Called before and after mutating webhooks; idempotent."""

    def prepare_create(self, info: ResourceInfo, obj: Obj) -> None: ...

    def prepare_update(self, info: ResourceInfo, obj: Obj, old: Obj) -> None: ...

    def validate(
        self, info: ResourceInfo, obj: Obj, old: Obj | None, *, subresource: str = ""
    ) -> None:
        """Raise :class:`ApiError` 422 with causes when ``obj`` is invalid.

        ``subresource`` names the write path of an update ("", "status", or "binding" for a
        pod bound through pods/binding, which may set ``spec.nodeName`` once).
        """

    def spec_encoding(self, obj: Obj) -> bytes | None:
        """The JSON encoding (``orjson``'s) of ``obj["spec"]`` when the strategy knows it
        from preparing the create it just validated (the spec unchanged since), else None;
        the store then encodes the object around it. Asked once per create."""

    def validated_spec_encoding(self, obj: Obj) -> bytes | None:
        """What :meth:`spec_encoding` would answer for ``obj`` now, without using it up (for
        the field manager's hook, which runs between the validation and the commit)."""


#: Defaulting in place, as kube-apiserver's decoding does it (:meth:`Strategy.default`).
Defaulter = Callable[[Obj], None]


@dataclass(frozen=True, slots=True)
class AdmissionCall:
    """What one admission call is about: a write of ``operation`` (``CREATE``, ``UPDATE`` or
    ``DELETE``) to ``info``'s resource, with the object written (``obj``, None for a DELETE)
    and the stored one (``old``, None for a CREATE)."""

    info: ResourceInfo
    operation: str
    obj: Obj | None
    old: Obj | None


class AdmissionHook(Protocol):
    """Admission webhooks around an API request's write (:class:`~.webhooks.Webhooks`).

    ``active()`` says whether the calling thread serves a request whose writes are admitted
    (the store releases its lock for the calls, which go over the network)."""

    def active(self) -> bool: ...

    def mutate(self, call: AdmissionCall, *, default: Defaulter | None = None) -> Obj | None:
        """``call.obj`` after the mutating webhooks. ``default`` is called on the object
        before the first webhook and on every webhook's patched object."""

    def validate(self, call: AdmissionCall) -> None: ...


class _Changed(Exception):
    """The object changed while the lock was released for webhooks: the write is redone."""


#: How often a write is redone because its object changed during its webhook calls.
_ADMISSION_RETRIES = 20


class PlainStrategy:
    """No defaulting and no validation beyond what the store itself checks."""

    def default(self, info: ResourceInfo, obj: Obj) -> None:
        return None

    def prepare_create(self, info: ResourceInfo, obj: Obj) -> None:
        return None

    def prepare_update(self, info: ResourceInfo, obj: Obj, old: Obj) -> None:
        return None

    def validate(
        self, info: ResourceInfo, obj: Obj, old: Obj | None, *, subresource: str = ""
    ) -> None:
        return None

    def spec_encoding(self, obj: Obj) -> bytes | None:
        return None

    def validated_spec_encoding(self, obj: Obj) -> bytes | None:
        return None


Matcher = Callable[[Obj], bool]

#: Called with (old object or None, new object) just before a create or update commits, after
#: defaulting and validation; it sets ``new["metadata"]["managedFields"]`` (see
#: :mod:`.fieldmanager`). Writes without one keep the old object's managedFields.
FieldsHook = Callable[[Obj | None, Obj], None]


def _everything(obj: Obj) -> bool:
    """The predicate of a watch without selectors (:meth:`Store.watch` with None)."""
    return True


@dataclass
class _Watch:
    namespace: str | None
    matches: Matcher
    deliver: Callable[[str, Stored, int], None]


@dataclass
class _Bucket:
    """All objects of one resource plus its event history and watchers."""

    objects: dict[tuple[str, str], Stored] = field(default_factory=dict)
    history: deque[Event] = field(default_factory=deque)
    #: When each event of ``history`` was committed (monotonic clock), for the age bound.
    times: deque[float] = field(default_factory=deque)
    evicted_rv: int = 0
    watches: list[_Watch] = field(default_factory=list)
    #: Moves with every change of ``objects`` (commits and restores): :meth:`Store.changes`.
    changes: int = 0


@dataclass
class ListResult:
    items: list[Stored]
    rv: int
    continue_token: str | None
    remaining: int | None


class WatchHandle:
    """Returned by :meth:`Store.watch`; ``stop()`` unregisters the watcher (idempotent)."""

    def __init__(self, store: Store, bucket: _Bucket, watch: _Watch) -> None:
        self._store = store
        self._bucket = bucket
        self._watch = watch

    def stop(self) -> None:
        with self._store.lock:
            if self._watch in self._bucket.watches:
                self._bucket.watches.remove(self._watch)


@dataclass
class DeleteOptions:
    """The parts of ``meta/v1 DeleteOptions`` the store acts on."""

    uid: str | None = None
    resource_version: str | None = None
    propagation: str | None = None  # Orphan | Background | Foreground
    grace_seconds: int | None = None
    dry_run: bool = False


class EventListeners:
    """A store's listeners: :meth:`add_listener` and :meth:`remove_listener` under the lock
    ``_listeners_lock``. The store calls the functions in ``_listeners`` with each event; when,
    and under which lock, is its own to say."""

    _listeners: list[Callable[[Event], None]]
    _listeners_lock: AbstractContextManager[Any]

    def add_listener(self, fn: Callable[[Event], None]) -> None:
        """Call ``fn(event)`` for every event of the store (see the store's docstring)."""
        with self._listeners_lock:
            self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[Event], None]) -> None:
        """Call ``fn`` no more (nothing if it is not a listener)."""
        with self._listeners_lock:
            if fn in self._listeners:
                self._listeners.remove(fn)


class Store(EventListeners):
    """The object store. All public methods are thread-safe.

    Listeners (:meth:`add_listener`) are called with every committed event under the store
    lock: they enqueue, nothing more."""

    def __init__(
        self,
        registry: Registry,
        strategy: Strategy | None = None,
        *,
        history_size: int = 20_000,
        history_age: float | None = None,
        clock: _clock.Clock | Callable[[], float] | None = None,
        journal: Journal | None = None,
    ) -> None:
        self.registry = registry
        #: Where every commit is recorded before it takes effect (None: memory only).
        self.journal = journal
        self.strategy: Strategy = strategy or PlainStrategy()
        #: The watch window of each resource: at most this many events...
        self.history_size = history_size
        #: ...and none older than this many seconds (None: no age bound). A watch from a
        #: resourceVersion before the window gets 410 Expired, as from kube-apiserver's watch
        #: cache (which keeps a bounded number of events, and 75 s of them at least).
        self.history_age = history_age
        #: The cluster's one time source (:mod:`kube_runtime.clock`; None: the current clock
        #: when the store is built): timestamps (``creationTimestamp``, ``deletionTimestamp``)
        #: are its wall time, and what runs on the store (workers, kubelet, watch timers)
        #: takes its time and waits from it. A bare function of epoch seconds is deprecated.
        self.clock: _clock.Clock = _clock.resolve(clock, "Store", wall=True)
        #: The clock of the age bound (the clock's monotonic time; tests may replace it).
        self.monotonic: Callable[[], float] = self.clock.monotonic
        self.lock = threading.RLock()
        self._rv = 0
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._by_uid: dict[str, tuple[ResourceInfo, str, str]] = {}
        self._dependents: dict[str, set[str]] = {}
        self._listeners = []
        self._listeners_lock = self.lock
        #: The kinds each listener asked for (:meth:`add_listener`; None: every kind)...
        self._listener_kinds: dict[Callable[[Event], None], frozenset[tuple[str, str]] | None] = {}
        #: ...and the listeners of each kind's events, in registration order (built when
        #: first needed after a change of listeners).
        self._listeners_by_kind: dict[tuple[str, str], tuple[Callable[[Event], None], ...]] = {}
        self._oldest_rv = 0  # watches from before it get 410 (a restored store's start)
        #: Admission webhooks of API requests (None: none are called).
        self.admission: AdmissionHook | None = None
        #: Values derived from stored objects, kept by whoever derives them under a name of
        #: their own along with what tells them when to derive again (e.g. :meth:`changes`).
        self.derived: dict[str, Any] = {}

    # ----------------------------------------------------------------- basics

    @property
    def resource_version(self) -> int:
        return self._rv

    def _bucket(self, info: ResourceInfo) -> _Bucket:
        b = self._buckets.get(info.key)
        if b is None:
            b = self._buckets[info.key] = _Bucket(evicted_rv=self._oldest_rv)
        return b

    def changes(self, info: ResourceInfo) -> int:
        """A counter of the changes to ``info``'s objects: equal values mean the same
        objects (for caches of what is derived from them, e.g. the priority classes pod
        admission reads on every pod create)."""
        bucket = self._buckets.get(info.key)
        return bucket.changes if bucket is not None else 0

    def changes_of(self, key: tuple[str, str]) -> int:
        """:meth:`changes` of the resource whose storage key (``ResourceInfo.key``) is ``key``
        (0: none of its objects was ever stored)."""
        bucket = self._buckets.get(key)
        return bucket.changes if bucket is not None else 0

    # -------------------------------------------------------------- listeners

    def add_listener(
        self, fn: Callable[[Event], None], kinds: Iterable[tuple[str, str]] | None = None
    ) -> None:
        """Call ``fn(event)`` for every event of the store, or only for those of the
        resource keys (``(group, plural)``) in ``kinds``: the store skips the call for the
        other kinds (a write path with fewer calls), the listener still decides what it does."""
        with self._listeners_lock:
            self._listeners.append(fn)
            self._listener_kinds[fn] = None if kinds is None else frozenset(kinds)
            self._listeners_by_kind = {}

    def remove_listener(self, fn: Callable[[Event], None]) -> None:
        """Call ``fn`` no more (nothing if it is not a listener)."""
        with self._listeners_lock:
            if fn in self._listeners:
                self._listeners.remove(fn)
                if fn not in self._listeners:
                    self._listener_kinds.pop(fn, None)
            self._listeners_by_kind = {}

    def set_listener_kinds(
        self, fn: Callable[[Event], None], kinds: Iterable[tuple[str, str]] | None
    ) -> None:
        """The kinds listener ``fn`` is called for from now on, as :meth:`add_listener`'s
        ``kinds`` (nothing if ``fn`` is not a listener)."""
        with self._listeners_lock:
            if fn in self._listener_kinds:
                self._listener_kinds[fn] = None if kinds is None else frozenset(kinds)
                self._listeners_by_kind = {}

    def _listeners_of(self, key: tuple[str, str]) -> tuple[Callable[[Event], None], ...]:
        """The listeners of ``key``'s events (lock held)."""
        found = self._listeners_by_kind.get(key)
        if found is None:
            kinds = self._listener_kinds
            found = tuple(
                fn for fn in self._listeners if (wanted := kinds.get(fn)) is None or key in wanted
            )
            self._listeners_by_kind[key] = found
        return found

    # -------------------------------------------------------------- admission

    def _admission(self) -> AdmissionHook | None:
        hook = self.admission
        return hook if hook is not None and hook.active() else None

    def _defaulter(self, info: ResourceInfo) -> Defaulter:
        """The strategy's decode-time defaulting of ``info``'s objects, for the webhooks."""
        strategy = self.strategy
        return lambda obj: strategy.default(info, obj)

    def _unlocked(self, call: Callable[[], T]) -> T:
        """``call()`` with the store lock released (held by this thread, at any depth): a
        webhook may take seconds, and may call the API server itself."""
        release = getattr(self.lock, "_release_save", None)
        restore = getattr(self.lock, "_acquire_restore", None)
        if release is None or restore is None:  # pragma: no cover - not CPython's RLock
            return call()
        state = release()
        try:
            return call()
        finally:
            restore(state)

    def _retrying(self, write: Callable[[], T]) -> T:
        """``write()`` again while it raises :class:`_Changed` (a bounded number of times)."""
        for _ in range(_ADMISSION_RETRIES):
            try:
                return write()
            except _Changed:
                continue
        raise api_error(409, "the object kept changing while admission webhooks were called")

    # ---------------------------------------------------------------- commits

    def _commit(
        self,
        info: ResourceInfo,
        key: tuple[str, str],
        type_: str,
        new: Obj,
        old: Stored | None,
        spec_raw: bytes | None = None,
    ) -> Stored:
        """Assign the next resourceVersion to ``new``, store or remove it, record and fan out.

        A new version is encoded first, and nothing changes when it cannot be (500) or is
        larger than etcd stores (413): every committed object can be read back.
        ``spec_raw``: the encoding of ``new["spec"]`` when known (written as is).
        """
        rv = self._rv + 1
        meta = new["metadata"]
        meta["resourceVersion"] = str(rv)
        stored = Stored(new)
        if type_ != DELETED:
            try:
                if spec_raw is not None:  # the bytes encoding the spec again would give
                    raw = stored._raw = compact_json({**new, "spec": orjson.Fragment(spec_raw)})
                else:  # Stored.raw, without the property's call
                    raw = stored._raw = compact_json(new)
            except (TypeError, orjson.JSONEncodeError) as e:
                raise errors.internal_error(f"cannot encode: {e}") from None
            if len(raw) > MAX_OBJECT_BYTES:
                check_object_size(raw)
        if self.journal is not None:
            self._record(info, key, type_, stored)
        self._rv = rv
        bucket = self._buckets.get(info.key) or self._bucket(info)
        bucket.changes += 1
        uid = meta.get("uid", "")
        refs_before = old.obj["metadata"].get("ownerReferences") if old is not None else None
        if type_ == DELETED:
            bucket.objects.pop(key, None)
            self._by_uid.pop(uid, None)
            refs_after = None
        else:
            bucket.objects[key] = stored
            self._by_uid[uid] = (info, key[0], key[1])
            refs_after = meta.get("ownerReferences")
        if refs_before or refs_after:
            self._index_owners(uid, refs_before, refs_after)
        event = _new_event(Event, (type_, info, stored, old, rv))  # tuple.__new__: no frame
        history = bucket.history
        history.append(event)
        bucket.times.append(self.monotonic())
        if len(history) > self.history_size:
            bucket.evicted_rv = history.popleft().rv
            bucket.times.popleft()
        if self.history_age is not None:
            self._trim(bucket)
        for w in bucket.watches:
            self._fan_out(w, event)
        for listener in self._listeners_by_kind.get(info.key) or self._listeners_of(info.key):
            listener(event)
        return stored

    def _record(self, info: ResourceInfo, key: tuple[str, str], type_: str, new: Stored) -> None:
        """Write ``new`` (a tombstone for DELETED) to the journal; 500 and nothing changed
        when that fails."""
        assert self.journal is not None
        try:
            self.journal.record(info.key, key, new.rv, None if type_ == DELETED else new.raw)
        except JournalError as e:
            raise errors.internal_error(str(e)) from None

    def load(self, objects: Iterable[tuple[ResourceInfo, Stored]], resource_version: int) -> None:
        """Fill an empty store with persisted objects (a restart on a data directory).

        No events are sent and the history starts empty: a watch from a resourceVersion
        older than ``resource_version`` (or the newest object's) gets 410 Expired, as after a
        compaction, and new writes continue from there."""
        with self.lock:
            if self._rv:
                raise RuntimeError("Store.load needs an empty store")
            top = resource_version
            for info, stored in objects:
                meta = stored.meta
                key = (meta.get("namespace") or "", meta["name"])
                bucket = self._bucket(info)
                bucket.objects[key] = stored
                bucket.changes += 1
                uid = meta.get("uid", "")
                self._by_uid[uid] = (info, key[0], key[1])
                refs = meta.get("ownerReferences")
                if refs:
                    self._index_owners(uid, None, refs)
                top = max(top, stored.rv)
            self._rv = self._oldest_rv = top
            for bucket in self._buckets.values():
                bucket.evicted_rv = top

    def _index_owners(self, uid: str, refs_before: Any, refs_after: Any) -> None:
        """Move ``uid`` between owners' dependent sets as its ownerReferences changed."""
        before = {r.get("uid") for r in refs_before or ()}
        after = {r.get("uid") for r in refs_after or ()}
        for owner in before - after:
            deps = self._dependents.get(str(owner))
            if deps is not None:
                deps.discard(uid)
                if not deps:
                    del self._dependents[str(owner)]
        for owner in after - before:
            self._dependents.setdefault(str(owner), set()).add(uid)

    @staticmethod
    def _fan_out(w: _Watch, event: Event) -> None:
        new_obj = event.new.obj
        if w.namespace is not None and new_obj["metadata"].get("namespace") != w.namespace:
            return
        if w.matches is _everything:  # what the selector cases below make of a match-all
            type_ = event.type
            if type_ == MODIFIED and event.old is None:
                type_ = ADDED
            w.deliver(type_, event.new, event.rv)
        elif event.type == ADDED:
            if w.matches(new_obj):
                w.deliver(ADDED, event.new, event.rv)
        elif event.type == DELETED:
            if w.matches(new_obj):
                w.deliver(DELETED, event.new, event.rv)
        else:
            old_ok = event.old is not None and w.matches(event.old.obj)
            new_ok = w.matches(new_obj)
            if new_ok:
                w.deliver(MODIFIED if old_ok else ADDED, event.new, event.rv)
            elif old_ok and event.old is not None:
                # The object left the watcher's selection: it sees a deletion of the last
                # state it matched, stamped with this event's version (as the watch cache does).
                prev = copy.copy(event.old.obj)
                prev["metadata"] = {**prev["metadata"], "resourceVersion": str(event.rv)}
                w.deliver(DELETED, Stored(prev), event.rv)

    # ------------------------------------------------------------------ reads

    def get(self, info: ResourceInfo, namespace: str | None, name: str) -> Stored:
        with self.lock:
            stored = self._bucket(info).objects.get((namespace or "", name))
        if stored is None:
            raise errors.not_found(info.resource_name(), info.group, name)
        return stored

    def try_get(self, info: ResourceInfo, namespace: str | None, name: str) -> Stored | None:
        with self.lock:
            return self._bucket(info).objects.get((namespace or "", name))

    def get_by_uid(self, uid: str) -> tuple[ResourceInfo, Stored] | None:
        with self.lock:
            where = self._by_uid.get(uid)
            if where is None:
                return None
            info, ns, name = where
            stored = self._bucket(info).objects.get((ns, name))
            return (info, stored) if stored is not None else None

    def dependents_of(self, owner_uid: str) -> list[tuple[ResourceInfo, Stored]]:
        """Objects whose ownerReferences name ``owner_uid``."""
        with self.lock:
            out = []
            for uid in self._dependents.get(owner_uid, ()):
                found = self.get_by_uid(uid)
                if found is not None:
                    out.append(found)
            return out

    def list(
        self,
        info: ResourceInfo,
        namespace: str | None,
        matches: Matcher | None = None,
        *,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> ListResult:
        """Objects of ``info`` (in ``namespace`` when given) ordered by (namespace, name).

        With ``limit``, at most that many items are returned with a continue token; the
        token resumes after the last key, and the list keeps the first page's version.
        """
        with self.lock:
            rv = self._rv
            start_after: tuple[str, str] | None = None
            if continue_token:
                rv, start_after = _decode_continue(continue_token)
            objects = self._bucket(info).objects
            if namespace is not None:
                keys = sorted(k for k in objects if k[0] == namespace)
            else:
                keys = sorted(objects)
            if start_after is not None:
                import bisect

                keys = keys[bisect.bisect_right(keys, start_after) :]
            items: list[Stored] = []
            token: str | None = None
            remaining: int | None = None
            for i, key in enumerate(keys):
                stored = objects[key]
                if matches is not None and not matches(stored.obj):
                    continue
                if limit and len(items) >= limit:
                    token = _encode_continue(
                        rv, items[-1].meta.get("namespace", ""), items[-1].meta["name"]
                    )
                    rest = keys[i:]
                    remaining = (
                        len(rest)
                        if matches is None
                        else sum(1 for k in rest if matches(objects[k].obj))
                    )
                    break
                items.append(stored)
            return ListResult(items, rv, token, remaining)

    def watch(
        self,
        info: ResourceInfo,
        namespace: str | None,
        since: str | None,
        matches: Matcher | None,
        deliver: Callable[[str, Stored, int], None],
    ) -> WatchHandle:
        """Register a watcher; replay first, then live events, all through ``deliver``.

        ``matches``: the objects the watcher selects (None: every object).

        ``since`` empty or "0": the current state is delivered as ADDED events first
        (kube-apiserver's "start at most recent" / "any" semantics). Otherwise events newer
        than ``since`` are replayed; 410 Expired when the window no longer holds them.
        """
        if matches is None:
            matches = _everything
        with self.lock:
            bucket = self._bucket(info)
            w = _Watch(namespace, matches, deliver)
            if not since or since == "0":
                for key in sorted(bucket.objects):
                    stored = bucket.objects[key]
                    if namespace is not None and key[0] != namespace:
                        continue
                    if matches(stored.obj):
                        deliver(ADDED, stored, stored.rv)
            else:
                try:
                    start = int(since)
                except ValueError:
                    raise errors.bad_request(f"invalid resource version: {since!r}") from None
                if self.history_age is not None:
                    self._trim(bucket)
                if start < bucket.evicted_rv:
                    raise errors.gone(f"too old resource version: {start} ({bucket.evicted_rv})")
                replay: list[Event] = []
                for event in reversed(bucket.history):
                    if event.rv <= start:
                        break
                    replay.append(event)
                for event in reversed(replay):
                    self._fan_out(w, event)
            bucket.watches.append(w)
            return WatchHandle(self, bucket, w)

    def _trim(self, bucket: _Bucket) -> None:
        """Drop the events older than :attr:`history_age` (under the lock)."""
        assert self.history_age is not None
        oldest = self.monotonic() - self.history_age
        times, history = bucket.times, bucket.history
        while times and times[0] < oldest:
            times.popleft()
            bucket.evicted_rv = history.popleft().rv

    def evict_history(self, info: ResourceInfo) -> None:
        """Forget the whole event window of a resource (tests use it to force 410 Gone)."""
        with self.lock:
            bucket = self._bucket(info)
            if bucket.history:
                bucket.evicted_rv = bucket.history[-1].rv
                bucket.history.clear()
                bucket.times.clear()
            else:
                bucket.evicted_rv = self._rv

    # ----------------------------------------------------------------- writes

    def create(
        self,
        info: ResourceInfo,
        namespace: str | None,
        obj: Obj,
        *,
        dry_run: bool = False,
        fields: FieldsHook | None = None,
    ) -> Stored:
        """Create ``obj`` (the caller's dict is not kept). 409 AlreadyExists, 422 Invalid.

        ``fields`` records managedFields (none: the object keeps what the caller sent)."""
        obj = dict(obj)
        meta_in = obj.get("metadata")
        meta = dict(meta_in) if meta_in else {}
        obj["metadata"] = meta
        obj["apiVersion"] = info.api_version()
        obj["kind"] = info.kind
        self._check_namespace(info, namespace, meta)
        hook = self._admission()
        if hook is not None:
            mutated = hook.mutate(
                AdmissionCall(info, "CREATE", obj, None), default=self._defaulter(info)
            )
            if mutated is not obj and isinstance(mutated, dict):
                obj = {**mutated, "apiVersion": info.api_version(), "kind": info.kind}
                meta = dict(obj.get("metadata") or {})
                obj["metadata"] = meta
                self._check_namespace(info, namespace, meta)
        if not _SERVER_SET_ON_CREATE.isdisjoint(meta):
            for managed in _SERVER_SET_ON_CREATE:
                meta.pop(managed, None)
        with self.lock:
            if info.namespaced:
                self._require_live_namespace(namespace or "")
            bucket = self._bucket(info)
            if not meta.get("name"):
                prefix = meta.get("generateName")
                if prefix:
                    meta["name"] = self._generate_name(bucket, namespace or "", str(prefix))
            name = meta.get("name") or ""
            meta["uid"] = new_uid()
            meta["creationTimestamp"] = now_rfc3339(self.clock.time)
            if info.tracks_generation or info.key in facts.GENERATION_ON_CREATE_ONLY:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            self.strategy.prepare_create(info, obj)
            self.strategy.validate(info, obj, None)
            if hook is not None:
                admitted = obj
                self._unlocked(lambda: hook.validate(AdmissionCall(info, "CREATE", admitted, None)))
                if info.namespaced:
                    self._require_live_namespace(namespace or "")
            key = (namespace or "", name)
            if key in bucket.objects:
                raise errors.already_exists(info.resource_name(), info.group, name)
            if fields is not None:
                fields(None, obj)
            if dry_run:
                meta.pop("resourceVersion", None)  # "" is omitted on the wire
                return Stored(obj)
            spec_raw = self.strategy.spec_encoding(obj)
            return self._commit(info, key, ADDED, obj, None, spec_raw)

    def update(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        obj: Obj,
        *,
        subresource: str = "",
        dry_run: bool = False,
        require_resource_version: bool | None = None,
        fields: FieldsHook | None = None,
    ) -> Stored:
        """Replace an object (PUT). ``subresource`` "status" changes only the status.

        A stale ``metadata.resourceVersion`` -> 409 Conflict; missing object -> 404. On the
        main resource of a kind with a status subresource, status changes are ignored.
        """
        meta_in = obj.get("metadata") or {}
        if meta_in.get("name") and meta_in["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({meta_in['name']}) does not match the name on the URL ({name})"
            )
        self._check_namespace(info, namespace, dict(meta_in))
        if require_resource_version is None:
            require_resource_version = info.custom

        def checked(current: Stored) -> Obj:
            rv_in = str(meta_in.get("resourceVersion") or "")
            if rv_in:
                if rv_in != current.obj["metadata"]["resourceVersion"]:
                    raise errors.conflict(
                        info.resource_name(), info.group, name, errors.STALE_MESSAGE
                    )
            elif require_resource_version:
                raise facts.resource_version_required(info.kind, info.group, name)
            uid = meta_in.get("uid")
            if uid:  # no precondition otherwise
                _check_uid(info, current, uid)
            return obj

        return self._update_current(info, namespace, name, checked, dry_run, subresource, fields)

    def _update_current(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        incoming: Callable[[Stored], Obj],
        dry_run: bool,
        subresource: str,
        fields: FieldsHook | None,
    ) -> Stored:
        """The write of an update and of a patch: under the lock, ``incoming(current)`` (it
        raises what the request's checks refuse) is written over the current object by
        :meth:`_write_update`, the whole read-check-write retried when admission let the
        object change meanwhile."""

        def write() -> Stored:
            current = self.get(info, namespace, name)
            return self._write_update(
                info,
                current,
                incoming(current),
                dry_run=dry_run,
                subresource=subresource,
                fields=fields,
                hook=hook,
            )

        with self.lock:
            hook = self._admission()
            if hook is None:  # nothing unlocks the store: no retry (_Changed)
                return write()
            return self._retrying(write)

    def _write_update(
        self,
        info: ResourceInfo,
        current: Stored,
        incoming: Obj,
        *,
        dry_run: bool = False,
        subresource: str = "",
        fields: FieldsHook | None = None,
        hook: AdmissionHook | None = None,
    ) -> Stored:
        """Validate and commit ``incoming`` (an update's body or a patch's result), merged
        into ``current`` as :func:`~kube_runtime.client._registry.merge_update` says, as the
        next version of ``current`` (lock held); ``hook``: :meth:`_admission`'s answer."""
        old = current.obj
        if hook is not None:
            key = (current.meta.get("namespace") or "", current.meta["name"])
            sent = incoming
            default = self._defaulter(info)
            mutated = self._unlocked(
                lambda: hook.mutate(AdmissionCall(info, "UPDATE", sent, old), default=default)
            )
            incoming = mutated if isinstance(mutated, dict) else incoming
            if self._bucket(info).objects.get(key) is not current:
                raise _Changed
        new = merge_update(  # positional arguments: a write's hot path
            old,
            incoming,
            subresource == "status",
            info.group,
            info.kind,
            info.custom,
            info.has_status,
        )
        meta = new["metadata"]
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        self.strategy.prepare_update(info, new, old)
        if info.tracks_generation and _spec_changed(info, old, new, subresource):
            meta["generation"] = int(old["metadata"].get("generation") or 0) + 1
        self.strategy.validate(info, new, old, subresource=subresource)
        pvcresize.check_resize(self, info, new, old, subresource)
        if old["metadata"].get("deletionTimestamp"):
            added = set(meta.get("finalizers") or ()) - set(old["metadata"].get("finalizers") or ())
            if added:
                raise errors.invalid(
                    info.kind,
                    info.group,
                    meta["name"],
                    [
                        errors.Cause(
                            "metadata.finalizers",
                            facts.FORBIDDEN,
                            no_new_finalizers_message(added),
                        )
                    ],
                )
        if hook is not None:
            self._unlocked(lambda: hook.validate(AdmissionCall(info, "UPDATE", new, old)))
            if self._bucket(info).objects.get(key) is not current:
                raise _Changed
        if fields is not None:
            fields(old, new)
        elif "managedFields" in old["metadata"] and "managedFields" not in meta:
            meta["managedFields"] = old["metadata"]["managedFields"]
        if new == old:
            return current
        if dry_run:
            return Stored(new)
        ns, name = meta.get("namespace", ""), meta["name"]
        if (
            meta.get("deletionTimestamp")
            and not _blockers(info, new)
            and not meta.get("deletionGracePeriodSeconds")
        ):
            return self._commit(info, (ns, name), DELETED, new, current)
        return self._commit(info, (ns, name), MODIFIED, new, current)

    def mutate(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        fn: Callable[[Obj], Obj],
        *,
        subresource: str = "",
        dry_run: bool = False,
        fields: FieldsHook | None = None,
    ) -> Stored:
        """Read-modify-write under the lock (PATCH): ``fn`` gets a deep copy and returns the result.

        A ``metadata.resourceVersion`` in the result that differs from the current object is a
        conflict (409); a different ``metadata.uid`` is invalid (422, uid is immutable), as
        for patches on kube-apiserver, which take no uid precondition from a patch.
        ``subresource`` "status" keeps everything but the status; "binding" (pods only) writes
        like the main resource but may set an unbound pod's ``spec.nodeName``, which pod
        update validation forbids otherwise (the pods/binding path, also the kubelet's).
        """

        def patched(current: Stored) -> Obj:
            result = fn(copy.deepcopy(current.obj))
            if not isinstance(result, dict):
                raise errors.bad_request("the patch must produce a JSON object")
            refused = facts.patched_metadata_error(
                info.kind, info.group, info.plural, name, current.meta, result.get("metadata")
            )
            if refused is not None:
                raise refused
            return result

        return self._update_current(info, namespace, name, patched, dry_run, subresource, fields)

    def delete(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        opts: DeleteOptions | None = None,
        *,
        mark: Callable[[Obj], None] | None = None,
    ) -> tuple[Stored, bool]:
        """Delete an object; returns (final or pending state, removed now?).

        Preconditions (uid, resourceVersion) -> 409. Pods are deleted gracefully: they get a
        deletionTimestamp and stay until deleted again with grace 0 (the kubelet does that).
        Finalizers, and the propagation policy's finalizer, also keep the object until removed.

        ``mark`` is a registry's own first deletion step (kube-apiserver's CRD storage): when
        the object is not being deleted yet, ``mark`` edits a copy (e.g. adds a finalizer and
        a condition) and that copy is committed with only ``deletionTimestamp`` set (no grace
        period, generation kept); the object is not removed. Later deletions ignore ``mark``.
        """
        opts = opts or DeleteOptions()

        def remove() -> tuple[Stored, bool]:
            current = self.get(info, namespace, name)
            meta = current.meta
            _check_delete_preconditions(info, current, opts)
            hook = self._admission()
            if hook is not None:
                call = AdmissionCall(info, "DELETE", None, current.obj)
                self._unlocked(lambda: hook.mutate(call))
                self._unlocked(lambda: hook.validate(call))
                if self._bucket(info).objects.get((namespace or "", name)) is not current:
                    raise _Changed
            if mark is not None and not meta.get("deletionTimestamp"):
                marked = copy.deepcopy(current.obj)
                mark(marked)
                marked["metadata"]["deletionTimestamp"] = now_rfc3339(self.clock.time)
                if opts.dry_run:
                    return Stored(marked), False
                key = (namespace or "", name)
                return self._commit(info, key, MODIFIED, marked, current), False
            new = copy.copy(current.obj)
            new_meta = dict(meta)
            new["metadata"] = new_meta
            finalizers = list(new_meta.get("finalizers") or [])
            policy = opts.propagation
            if policy == "Orphan" and FINALIZER_ORPHAN not in finalizers:
                finalizers.append(FINALIZER_ORPHAN)
            elif policy == "Foreground" and FINALIZER_FOREGROUND not in finalizers:
                finalizers.append(FINALIZER_FOREGROUND)
            if policy in ("Orphan", "Foreground"):
                other = FINALIZER_FOREGROUND if policy == "Orphan" else FINALIZER_ORPHAN
                if not meta.get("deletionTimestamp") and other in finalizers:
                    finalizers.remove(other)
            grace = self._grace_period(info, current.obj, opts.grace_seconds)
            already = meta.get("deletionTimestamp")
            if already and grace is not None:
                prev_grace = int(meta.get("deletionGracePeriodSeconds") or 0)
                if prev_grace <= grace and finalizers == list(meta.get("finalizers") or []):
                    return current, False
            if finalizers:
                new_meta["finalizers"] = finalizers
            blocked = bool(finalizers) or bool(_blockers(info, new))
            if info.key == ("", "namespaces") and blocked:
                new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
            if not blocked and not grace:
                if opts.dry_run:
                    return current, True
                return self._commit(info, (namespace or "", name), DELETED, new, current), True
            deadline = self.clock.time() + (grace or 0)
            if not already or grace is not None:
                new_meta["deletionTimestamp"] = now_rfc3339(lambda: deadline)
            if info.key != ("", "namespaces"):  # the namespace registry sets no grace period
                new_meta["deletionGracePeriodSeconds"] = grace or 0
            if info.tracks_generation and not already:
                new_meta["generation"] = int(meta.get("generation") or 0) + 1
            if new == current.obj:
                return current, False
            if opts.dry_run:
                return Stored(new), False
            return self._commit(info, (namespace or "", name), MODIFIED, new, current), False

        with self.lock:
            return self._retrying(remove)

    def _grace_period(self, info: ResourceInfo, obj: Obj, requested: int | None) -> int | None:
        """Graceful deletion applies to pods only: unscheduled or finished pods go at once."""
        if info.group != "" or info.plural != "pods":
            return None
        spec = obj.get("spec") or {}
        if not spec.get("nodeName"):
            return 0
        if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        if requested is None:
            requested = spec.get("terminationGracePeriodSeconds", 30)
        return max(0, int(requested))

    def delete_collection(
        self,
        info: ResourceInfo,
        namespace: str | None,
        matches: Matcher | None,
        opts: DeleteOptions | None = None,
    ) -> tuple[ListResult, builtins.list[Stored]]:
        """Delete every match; returns the list as taken before deleting (what
        kube-apiserver answers: items without their deletion marks) and the delete results."""
        with self.lock:
            listed = self.list(info, namespace, matches)
            out = []
            for stored in listed.items:
                try:
                    result, _ = self.delete(
                        info, stored.meta.get("namespace"), stored.meta["name"], opts
                    )
                except ApiError as e:
                    if e.code != 404:
                        raise
                    continue
                out.append(result)
            return listed, out

    # --------------------------------------------------------------- helpers

    def _check_namespace(self, info: ResourceInfo, namespace: str | None, meta: Obj) -> None:
        body_ns = meta.get("namespace")
        if info.namespaced:
            if not namespace:
                raise errors.bad_request(
                    "the server could not find the requested resource: a namespace is required"
                )
            if body_ns and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)

    def _require_live_namespace(self, namespace: str) -> None:
        namespaces = self._buckets.get(_NAMESPACES)
        if namespaces is not None:  # the usual case first: it is stored and not being deleted
            stored = namespaces.objects.get(("", namespace))
            if stored is not None and not stored.obj["metadata"].get("deletionTimestamp"):
                return
        ns_info = self.registry.by_key(*_NAMESPACES)
        if ns_info is None:
            return
        stored = self._bucket(ns_info).objects.get(("", namespace))
        if stored is None:
            raise errors.not_found("namespaces", "", namespace)
        if stored.meta.get("deletionTimestamp"):
            raise api_error(
                403,
                f"unable to create new content in namespace {namespace} because it is being terminated",
                "Forbidden",
                {
                    "name": namespace,
                    "kind": "namespaces",
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {namespace} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    def _generate_name(self, bucket: _Bucket, namespace: str, prefix: str) -> str:
        for _ in range(100):
            candidate = prefix + "".join(secrets.choice(_NAME_SUFFIX_ALPHABET) for _ in range(5))
            if (namespace, candidate) not in bucket.objects:
                return candidate
        raise api_error(500, f"could not generate a unique name for prefix {prefix!r}")

    def objects(self, info: ResourceInfo) -> builtins.list[Stored]:
        with self.lock:
            return list(self._bucket(info).objects.values())

    def namespaced_objects(self, namespace: str) -> Iterable[tuple[ResourceInfo, Stored]]:
        with self.lock:
            out = []
            for info in self.registry:
                if not info.namespaced or info.stored_as is not None:  # a view: seen once
                    continue
                for (ns, _), stored in self._bucket(info).objects.items():
                    if ns == namespace:
                        out.append((info, stored))
            return out

    def drop_resource(self, info: ResourceInfo) -> None:
        """Remove every object of a resource (its CRD was deleted), with DELETED events."""
        with self.lock:
            bucket = self._bucket(info)
            for key, stored in list(bucket.objects.items()):
                self._commit(
                    info,
                    key,
                    DELETED,
                    copy.copy(stored.obj) | {"metadata": dict(stored.meta)},
                    stored,
                )


def _check_uid(info: ResourceInfo, current: Stored, uid: str | None) -> None:
    """409 Conflict when a uid precondition (from a body, a patch or DeleteOptions) names another object."""
    meta = current.obj["metadata"]
    actual = meta.get("uid")
    if uid and uid != actual:
        name = meta["name"]
        # the storage key: a view's objects are the viewed resource's (info.key)
        key = facts.storage_key(*info.key, meta.get("namespace", ""), name, custom=info.custom)
        raise facts.uid_precondition_failed(
            info.resource_name(), info.group, name, uid, actual, key=key
        )


def _check_delete_preconditions(info: ResourceInfo, current: Stored, opts: DeleteOptions) -> None:
    """409 Conflict when DeleteOptions' uid or resourceVersion precondition does not hold.

    kube-apiserver checks these before any deletion step, with its own wording, and names the
    kind (``StatefulSet.apps``), not the resource, in the message.
    """
    meta = current.meta
    if opts.uid and opts.uid != meta.get("uid"):
        uid = (opts.uid, meta.get("uid"))
        raise facts.delete_precondition_failed(info.kind, info.group, meta["name"], uid=uid)
    if opts.resource_version and opts.resource_version != meta.get("resourceVersion"):
        rvs = (opts.resource_version, meta.get("resourceVersion"))
        raise facts.delete_precondition_failed(
            info.kind, info.group, meta["name"], resource_version=rvs
        )


def _blockers(info: ResourceInfo, obj: Obj) -> list[str]:
    """What keeps an object with a deletionTimestamp stored: its finalizers (and a namespace's
    ``spec.finalizers``, which the namespace controller clears once the namespace is empty)."""
    out = list(obj["metadata"].get("finalizers") or [])
    if info.key == ("", "namespaces"):
        out.extend((obj.get("spec") or {}).get("finalizers") or [])
    return out


#: Kinds whose generation also moves when their annotations change: a Deployment's are
#: copied to its ReplicaSets (kube-apiserver's deployment strategy).
_ANNOTATIONS_BUMP_GENERATION = frozenset({("apps", "Deployment")})


def _spec_changed(info: ResourceInfo, old: Obj, new: Obj, subresource: str = "") -> bool:
    """Generation moves on any change outside metadata and status (and, for a few kinds,
    on an annotation change through the main resource)."""
    keys = (set(old) | set(new)) - {"metadata", "status", "resourceVersion"}
    if any(old.get(k) != new.get(k) for k in keys):
        return True
    return (
        not subresource
        and (info.group, info.kind) in _ANNOTATIONS_BUMP_GENERATION
        and (old["metadata"].get("annotations") or {}) != (new["metadata"].get("annotations") or {})
    )


def _encode_continue(rv: int, namespace: str, name: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{namespace}/{name}"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded))
        ns, _, name = str(data["start"]).partition("/")
        return int(data["rv"]), (ns, name)
    except Exception:
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion"
        ) from None
