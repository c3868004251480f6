"""The informer store: a thread-safe ``key -> object`` map with secondary indexes.

Contract (client-go ``tools/cache`` ``threadSafeMap`` + ``Indexer``):

* The key of an object is ``"namespace/name"``, or ``"name"`` for cluster-scoped objects
  (:func:`object_key`).
* One lock guards the map and every index; writes hold it for the index update only, reads
  hold it for a dictionary look-up. Objects are stored as given (no copy): the parsed dict
  from the API is kept once and handed out to every reader. **Never mutate an object you got
  from the store**; deep-copy it before changing it.
* An index is ``name -> fn(obj) -> list[str]``. ``by_index(name, value)`` returns the objects
  whose ``fn`` produced ``value``. Index values are recomputed from the stored (old) object
  on update/delete, so no per-object reverse map is kept (memory). Built in:
  :data:`INDEX_NAMESPACE`, :data:`INDEX_CONTROLLER_UID`, :data:`INDEX_LABEL`; more can be
  added at any time with :meth:`Indexer.add_indexers` (existing objects are indexed at once).
* Memory: equal sub-objects (containers, volumes, labels, ownerReferences, conditions ... of
  objects made from one template) and equal strings are stored once and shared between
  stored objects (:func:`share_values`); label index keys are interned; there is no
  per-object copy or reverse index. ``share_subtrees=False`` (or the environment variable
  ``KUBE_CACHE_SHARE_SUBTREES=false``) shares strings only (:func:`share_strings`): the
  walk costs up to ~1.5x the string-only walk on objects with no repeated parts, and is
  faster than it when parts repeat (a shared sub-object is not walked).
* Mutation detector (client-go ``KUBE_CACHE_MUTATION_DETECTOR``): when the environment
  variable is ``true`` at construction (or ``mutation_detector=True``), a fingerprint of
  every stored object is taken when it is stored; ``get``/``list``/``by_index`` and
  :meth:`Indexer.check_mutations` re-hash the objects they touch and raise
  :class:`CacheMutationError` naming the key of an object that changed in place. Off by
  default: it costs a serialisation per stored and per read object.
"""

from __future__ import annotations

import builtins
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kube_runtime.client._indexes import (
    BUILTIN_INDEXES,
    INDEX_CONTROLLER_UID,
    INDEX_LABEL,
    INDEX_NAMESPACE,
    IndexFunc,
    controller_uid_index,
    label_index,
    namespace_index,
)
from kube_runtime.meta import Obj

__all__ = [
    "INDEX_CONTROLLER_UID",
    "INDEX_LABEL",
    "INDEX_NAMESPACE",
    "CacheMutationError",
    "CompactIndexer",
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "Indexer",
    "compact_json",
    "controller_uid_index",
    "decode_watch_event",
    "label_index",
    "mutation_detector_enabled",
    "namespace_index",
    "object_key",
    "reset_shared_values",
    "share_strings",
    "share_subtrees_enabled",
    "share_values",
]

MUTATION_DETECTOR_ENV = "KUBE_CACHE_MUTATION_DETECTOR"


def mutation_detector_enabled() -> bool:
    """True when ``KUBE_CACHE_MUTATION_DETECTOR`` is set to ``true`` (as client-go)."""
    return os.environ.get(MUTATION_DETECTOR_ENV, "").lower() == "true"


def object_key(obj: Mapping[str, Any]) -> str:
    """``"namespace/name"`` for namespaced objects, ``"name"`` for cluster-scoped ones.

    A :class:`DeletedFinalStateUnknown` tombstone yields its own key.
    """
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not name:
        raise ValueError("object has no metadata.name: cannot compute its cache key")
    namespace = meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """A delete the informer did not see as an event (it happened while disconnected).

    Delivered to ``on_delete`` handlers when a relist no longer holds ``key``; ``obj`` is the
    last state the cache knew, which may be stale.
    """

    key: str
    obj: Obj


class CacheMutationError(RuntimeError):
    """An object handed out by the cache was modified in place (``key`` names it)."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"cache object {key!r} was mutated in place; objects from the cache are shared: "
            "deep-copy them before changing them"
        )
        self.key = key


class _SharedTable:
    """A bounded two-generation table of shared values (lock-free: dict operations only).

    Look-ups try the young generation, then the old one (a hit there moves to the young one).
    When the young generation holds ``limit`` entries or ``budget`` bytes (as the caller
    measures them) it becomes the old one and the previous old one is dropped: values that
    keep repeating survive, one-off values (uids, deleted objects' parts) age out, and the
    table pins at most about ``2 * budget`` bytes of values nothing else holds. Concurrent
    use from several reflector threads can at worst lose an entry (a missed share), never
    hand out a wrong value.
    """

    __slots__ = ("budget", "limit", "old", "size", "young")

    def __init__(self, limit: int, budget: int) -> None:
        self.limit = limit
        self.budget = budget
        self.young: dict[Any, Any] = {}
        self.old: dict[Any, Any] = {}
        self.size = 0

    def get(self, key: Any, size: int) -> Any:
        value = self.young.get(key)
        if value is None:
            value = self.old.get(key)
            if value is not None:
                self.put(key, value, size)
        return value

    def put(self, key: Any, value: Any, size: int) -> None:
        if len(self.young) >= self.limit or self.size + size > self.budget:
            self.old, self.young, self.size = self.young, {}, 0
        self.young[key] = value
        self.size += size


# String values repeat within and across objects (timestamps of every condition, "True",
# image names, node names, namespaces): stored objects point at one copy of each.
_shared_strings = _SharedTable(1 << 15, 4 << 20)
# Sub-objects repeat across objects made from one template (containers, volumes,
# tolerations, labels, ownerReferences, conditions written in the same second): stored
# objects point at one instance, keyed by the hash of its JSON encoding (budget in JSON
# bytes; a sub-object larger than the whole budget is walked, not shared).
_shared_subtrees = _SharedTable(1 << 13, 4 << 20)

SHARE_SUBTREES_ENV = "KUBE_CACHE_SHARE_SUBTREES"
_CONTAINERS = (dict, list)  # a constant: ``dict | list`` builds a union at every check


def reset_shared_values() -> None:
    """Forget every shared string and sub-object (stored objects keep theirs).

    For measurements: after a reset, the next stored objects allocate their own copies
    instead of pointing at ones allocated earlier.
    """
    for table in (_shared_strings, _shared_subtrees, _raw_specs):
        table.young, table.old, table.size = {}, {}, 0
    _raw_shared.clear()
    _plain.clear()
    _raw_recent.clear()
    _label_index_values.clear()


def share_subtrees_enabled() -> bool:
    """False when ``KUBE_CACHE_SHARE_SUBTREES`` is ``false`` (sub-object sharing is on by default)."""
    return os.environ.get(SHARE_SUBTREES_ENV, "").lower() != "false"


def share_strings(value: Any) -> None:
    """Replace the string values inside ``value`` (in place) by shared equal copies.

    Only for an object nobody else holds yet (fresh from the decoder): its content does not
    change, only which string objects it points at.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if isinstance(v, str):
                _share_str(node, k, v)
            elif isinstance(v, _CONTAINERS):
                stack.append(v)


def share_values(obj: Obj, previous: Obj | None = None) -> None:
    """Make ``obj`` (in place) point at shared equal copies of its strings and sub-objects.

    Every dict or list below the top level, except ``metadata`` itself (it holds the
    object's name, uid and resourceVersion: never repeated), is shared:

    * with ``previous`` (the version of the object stored before, if any): a sub-object with
      the same JSON as the one at the same place in ``previous`` becomes that one. An update
      changes a few fields (a status condition, a resourceVersion), so most of the object is
      taken over from its previous version with one ``==``, confirmed by comparing the two
      encodings when the stored one holds a number or a boolean (``==`` takes ``1``,
      ``true`` and ``1.0`` for equal, ``0``, ``false``, ``0.0`` and ``-0.0`` too, also
      nested: a schemaless value changing between them is a change);
    * otherwise by the hash of its JSON encoding (``orjson``, keys in their order: an API
      server writes the fields of one kind in one order, so a sub-object written with its
      keys in another order is only a missed share): an equal sub-object stored earlier, by
      any informer, replaces it. A sub-object seen for the first time has its own children
      shared, then becomes the shared copy. After the hash matches, the shared copy's
      current encoding is compared with the new bytes (``==`` for a copy holding only
      strings and nulls, where it is exact), so a hash collision (or a shared copy mutated
      against the contract, except a plain one mutated to an ``==``-equal number) costs a
      miss, never a wrong value. Values orjson cannot encode (not JSON: e.g. tuples or ints
      above 64 bits) are only walked.

    In ``metadata``, ``uid`` and ``resourceVersion`` are left as they are: they never repeat
    across objects, and entering them in the shared-string table would only push values that
    do repeat out of it.

    Same contract as :func:`share_strings`: only for an object nobody else holds yet. The
    shared sub-objects are read-only like everything in the cache (a mutation through one
    object would show in every object sharing it; the mutation detector catches it);
    ``copy.deepcopy`` of a cached object is fully independent, as before.
    """
    strings = _shared_strings
    for key, value in obj.items():
        if isinstance(value, str):
            # _share_str, its usual case (a hit in the young generation) inline
            shared = strings.young.get(value)
            if shared is None:
                _share_str_missed(obj, key, value)
            elif shared is not value:
                obj[key] = shared
        elif isinstance(value, _CONTAINERS):
            if _raw_shared.get(id(value)) is value:
                continue  # shared by decode_watch_event already
            before = previous.get(key) if previous is not None else None
            if key == "metadata":
                _share_meta(value, before)
            else:
                shared = _share_subtree(value, before)
                if shared is not value:
                    obj[key] = shared


def _share_str(node: Any, key: Any, value: str) -> None:
    table = _shared_strings
    shared = table.young.get(value)  # the common hit, without the table's method call
    if shared is None:
        _share_str_missed(node, key, value)
    elif shared is not value:
        node[key] = shared


def _share_str_missed(node: Any, key: Any, value: str) -> None:
    """:func:`_share_str` after a miss in the young generation (the caller looked there)."""
    table = _shared_strings
    size = len(value)
    shared = table.old.get(value)
    if shared is None:
        table.put(value, value, size)
        return
    table.put(value, shared, size)  # as _SharedTable.get: a hit in the old one moves up
    if shared is not value:
        node[key] = shared


# Metadata fields whose values are unique to one object (version): never entered in the
# shared-string table.
_UNIQUE_META = frozenset({"uid", "resourceVersion"})


def _share_meta(meta: dict[str, Any] | list[Any], before: Any) -> None:
    """:func:`_share_children` for an object's ``metadata``, leaving its unique strings."""
    if not isinstance(meta, dict):
        _share_children(meta, before)
        return
    olds = before if isinstance(before, dict) else None
    unique = _UNIQUE_META
    strings = _shared_strings
    young = strings.young
    for key, value in meta.items():
        if isinstance(value, str):
            if key in unique:
                continue
            if olds is not None:
                old = olds.get(key)
                if old is not None and old is not value and old == value:
                    meta[key] = old  # a string of the stored object: shared already
                    continue
            shared = young.get(value)  # _share_str's usual case inline
            if shared is None:
                _share_str_missed(meta, key, value)
                young = strings.young  # a new generation may have started
            elif shared is not value:
                meta[key] = shared
        elif isinstance(value, _CONTAINERS):
            shared = _share_subtree(value, olds.get(key) if olds is not None else None)
            if shared is not value:
                meta[key] = shared


def _share_children(node: dict[str, Any] | list[Any], before: Any = None) -> bool:
    """Share ``node``'s children; ``before`` is the node at the same place in the previous
    version (None, or anything else, when there is none). True when ``node`` holds only
    strings, nulls and containers noted plain (:data:`_plain`): no number or boolean."""
    plain = True
    if isinstance(node, dict):
        olds = before if isinstance(before, dict) else None
        for key, value in node.items():
            old = olds.get(key) if olds is not None else None
            if isinstance(value, str):
                if old is not None and old is not value and old == value:
                    node[key] = old  # a string of the stored object: shared already
                else:
                    _share_str(node, key, value)
            elif isinstance(value, _CONTAINERS):
                shared = _share_subtree(value, old)
                if shared is not value:
                    node[key] = shared
                if plain and _plain.get(id(shared)) is not shared:
                    plain = False
            elif value is not None:
                plain = False
        return plain
    old_items = before if isinstance(before, list) and len(before) == len(node) else None
    for index, value in enumerate(node):
        old = old_items[index] if old_items is not None else None
        if isinstance(value, str):
            _share_str(node, index, value)
        elif isinstance(value, _CONTAINERS):
            shared = _share_subtree(value, old)
            if shared is not value:
                node[index] = shared
            if plain and _plain.get(id(shared)) is not shared:
                plain = False
        elif value is not None:
            plain = False
    return plain


# Sub-objects known to hold only strings, nulls and such containers (no number, no boolean),
# by id (holds them: an id is not reused while noted; bounded: cleared when full, which only
# costs the exact comparison below). ``==`` is exact for them: JSON ``1``, ``true`` and
# ``1.0`` are equal to Python's ``==`` (``0``, ``false``, ``0.0``, ``-0.0`` too), strings
# and nulls only to themselves.
_plain: dict[int, Any] = {}
_PLAIN_LIMIT = 1 << 14


def _note_plain(node: Any) -> None:
    if len(_plain) >= _PLAIN_LIMIT:
        _plain.clear()
    _plain[id(node)] = node


def _share_subtree(node: dict[str, Any] | list[Any], before: Any = None) -> Any:
    # A stored instance is taken for ``node`` only when its JSON is the same, types included:
    # ``==`` is exact for one noted plain; for others it is confirmed by the encodings (a
    # hash match is no proof either). ``==`` first: a changed sub-object fails it early.
    # ``node`` is encoded at most once, and not at all when a plain ``before`` is taken.
    data: bytes | None = None
    if before is not None and type(before) is type(node) and before == node:
        if _plain.get(id(before)) is before:
            return before  # unchanged since the previous version: its (shared) copy
        data = _encoded(node)
        if data and _encodes_to(before, data):
            return before
    if data is None:
        data = _encoded(node)
    table = _shared_subtrees
    size = len(data)
    if not data or size > table.budget:
        if _share_children(node, before):
            _note_plain(node)
        return node
    key = hash(data)
    shared = table.young.get(key)
    if shared is None:
        shared = table.get(key, size)
    if shared is not None and type(shared) is type(node):
        if _plain.get(id(shared)) is shared:
            if shared == node:
                return shared
        elif _encodes_to(shared, data):
            return shared
    if _share_children(node, before):
        _note_plain(node)
    table.put(key, node, size)
    return node


def _encoded(value: Any) -> bytes:
    """``value``'s JSON (orjson), or b"" when it is not JSON."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return b""


def _encodes_to(value: Any, data: bytes) -> bool:
    """True when ``value`` encodes to ``data`` (False if it is not JSON)."""
    try:
        return orjson.dumps(value) == data
    except orjson.JSONEncodeError:
        return False


# Watch event lines whose object's ``spec`` was seen before, byte for byte: the spec's
# bytes -> (those bytes, its shared instance, that instance's encoding when it was shared).
# Budget in bytes of both encodings.
_raw_specs = _SharedTable(1 << 10, 1 << 20)
# The last entry of _raw_specs found or made, by the length of its spec's bytes.
_raw_recent: dict[int, tuple[bytes, Any, bytes]] = {}
_RAW_RECENT_LIMIT = 64
# The instances in _raw_specs by id (bounded: cleared when full; a miss only costs a walk).
_raw_shared: dict[int, Any] = {}
_RAW_SHARED_LIMIT = 1 << 11
_RAW_START = b',"spec":{'
_RAW_END = b'},"status":'
_RAW_MIN = 512  # smaller specs are cheaper decoded with the rest
_RAW_MARK = "\x00kube-runtime: spec decoded apart"
_RAW_MARK_JSON = orjson.dumps(_RAW_MARK)
_RAW_NUL_ESCAPE = b"\\u0000"  # how JSON writes the marker's NUL (it has no other escape)


def decode_watch_event(line: bytes) -> Any:
    """``orjson.loads(line)`` for a watch event line, with its object's ``spec`` shared.

    Objects from one template repeat their spec byte for byte, so the spec's bytes are cut
    out of the line (between ``,"spec":{`` and the last ``},"status":``) and looked up as
    they are: a spec seen before becomes the shared instance decoded then (after checking
    that instance's encoding is unchanged: a cached object mutated against the contract is
    not handed on), with no decoding, encoding or comparison of its content. The rest of
    the line is decoded with a marker string in the spec's place (a line holding the
    marker, or any string with a NUL character, is decoded whole), and the cut is only
    taken when that decodes, its object's ``spec`` is the marker and the cut decodes as one
    value (or equals one that did): a cut that is not exactly the top-level spec's value (a
    nested ``spec`` or ``status`` key, other fields around them) decodes the whole line as
    ``orjson.loads`` does. A spec seen for the first time is decoded, shared as
    :func:`share_values` shares a sub-object, and kept.

    For a store that shares sub-objects (:attr:`Indexer.shares_subtrees`): the result's
    spec may be shared with other objects, so it must not be mutated (as everything in the
    cache); :func:`share_values` leaves a spec shared here as it is.
    """
    start = line.find(_RAW_START)
    end = line.rfind(_RAW_END)
    if start < 0 or end - start < _RAW_MIN:
        return orjson.loads(line)
    start += len(_RAW_START) - 1
    end += 1
    # A string holding the marker is written with its NUL escaped: a line with no such escape
    # anywhere holds no string equal to the marker (one search for a rare first byte, ``\``).
    if line.find(b"\\") >= 0 and line.find(_RAW_NUL_ESCAPE) >= 0:
        return orjson.loads(line)
    try:
        event = orjson.loads(line[:start] + _RAW_MARK_JSON + line[end:])
    except orjson.JSONDecodeError:
        return orjson.loads(line)
    obj = event.get("object") if type(event) is dict else None
    if type(obj) is not dict or obj.get("spec") != _RAW_MARK:
        return orjson.loads(line)
    size = end - start
    # The last spec of this length, compared in place (no copy, no hash): a run of objects
    # from one template, the usual case, finds its spec here.
    entry = _raw_recent.get(size)
    if entry is None or not line.startswith(entry[0], start):
        raw = line[start:end]
        entry = _raw_specs.get(raw, 2 * size)
        if entry is not None:
            _remember_raw(size, entry)
    if entry is not None:
        try:
            unchanged = orjson.dumps(entry[1]) == entry[2]
        except orjson.JSONEncodeError:
            unchanged = False
        if unchanged:
            shared = entry[1]
            if _raw_shared.get(id(shared)) is not shared:  # noted already, as a rule
                _raw_shared_mark(shared)
            obj["spec"] = shared
            return event
        raw = entry[0]
    try:
        spec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return orjson.loads(line)
    if type(spec) is not dict:
        return orjson.loads(line)
    shared = _share_subtree(spec)
    obj["spec"] = _raw_shared_mark(shared)
    entry = (raw, shared, orjson.dumps(shared))
    _raw_specs.put(raw, entry, 2 * size)
    _remember_raw(size, entry)
    return event


def _remember_raw(size: int, entry: tuple[bytes, Any, bytes]) -> None:
    """Note ``entry`` as the last spec of ``size`` bytes (bounded: cleared when full)."""
    if len(_raw_recent) >= _RAW_RECENT_LIMIT:
        _raw_recent.clear()
    _raw_recent[size] = entry


def _raw_shared_mark(node: Any) -> Any:
    """``node``, noted as shared already (share_values leaves it as it is)."""
    if len(_raw_shared) >= _RAW_SHARED_LIMIT:
        _raw_shared.clear()
    _raw_shared[id(node)] = node
    return node


# label_index's values by the identity of a labels map: objects of one template share one
# labels instance (share_values), so its values are computed once. Holds the maps it keys
# (an id is not reused while its map is held); cleared when full.
_label_index_values: dict[int, tuple[Any, builtins.list[str]]] = {}


def _label_values(obj: Obj) -> builtins.list[str]:
    """``label_index(obj)`` (read-only: the list may be returned again)."""
    meta = obj.get("metadata")
    labels = meta.get("labels") if type(meta) is dict else None
    if type(labels) is not dict:
        return label_index(obj)
    hit = _label_index_values.get(id(labels))
    if hit is not None and hit[0] is labels:
        values: builtins.list[str] = hit[1]
        return values
    values = label_index(obj)
    if len(_label_index_values) >= 256:
        _label_index_values.clear()
    _label_index_values[id(labels)] = (labels, values)
    return values


def _fingerprint(obj: Obj) -> int:
    return hash(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS))


class Indexer:
    """Thread-safe store of shared objects with named indexes (see the module docstring)."""

    def __init__(
        self,
        indexers: Mapping[str, IndexFunc] | None = None,
        *,
        mutation_detector: bool | None = None,
        share_subtrees: bool | None = None,
    ) -> None:
        self._lock = threading.Lock()
        share = share_subtrees_enabled() if share_subtrees is None else share_subtrees
        self._share_subtrees = share
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = dict(BUILTIN_INDEXES)
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        detect = mutation_detector_enabled() if mutation_detector is None else mutation_detector
        self._fingerprints: dict[str, int] | None = {} if detect else None
        if indexers:
            self.add_indexers(indexers)

    # --- writes ------------------------------------------------------------------------------

    def add(self, obj: Obj) -> Obj | None:
        """Store ``obj`` under its key; returns the object it replaced (None if new)."""
        return self._put(object_key(obj), obj)

    def update(self, obj: Obj) -> Obj | None:
        """Same as :meth:`add` (an update of an unknown key adds it)."""
        return self._put(object_key(obj), obj)

    def delete(self, obj: Obj | DeletedFinalStateUnknown) -> Obj | None:
        """Remove the object with ``obj``'s key; returns the removed object (None if absent)."""
        key = object_key(obj)  # type: ignore[arg-type]
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._unindex(key, old)
                if self._fingerprints is not None:
                    self._fingerprints.pop(key, None)
            return old

    def replace(self, objs: Iterable[Obj], resource_version: str | None = None) -> dict[str, Obj]:
        """Make ``objs`` the whole content; returns the previous content (``key -> obj``).

        ``resource_version`` (the list's) is accepted so an Indexer can be a reflector's sink.
        """
        items = {object_key(obj): obj for obj in objs}
        stored = self._items
        for key, obj in items.items():
            self._share(obj, stored.get(key))
        indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        with self._lock:
            for key, obj in items.items():
                for name, fn in self._indexers.items():
                    index = indices[name]
                    for value in fn(obj):
                        index.setdefault(value, set()).add(key)
            old, self._items, self._indices = self._items, items, indices
            if self._fingerprints is not None:
                self._fingerprints = {key: _fingerprint(obj) for key, obj in items.items()}
        return old

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes (ValueError if a name exists); objects already stored are indexed now."""
        with self._lock:
            clash = [name for name in indexers if name in self._indexers]
            if clash:
                raise ValueError(f"indexer {clash[0]!r} already exists")
            stored = self._stored_items()
            for name, fn in indexers.items():
                index: dict[str, set[str]] = {}
                for key, obj in stored:
                    for value in fn(obj):
                        index.setdefault(value, set()).add(key)
                self._indexers[name] = fn
                self._indices[name] = index

    # --- reads -------------------------------------------------------------------------------

    def get(self, key: str) -> Obj | None:
        """The object stored under ``key`` (shared: do not mutate), or None."""
        with self._lock:
            obj = self._items.get(key)
            if obj is not None and self._fingerprints is not None:
                self._verify(key, obj)
            return obj

    def list(self) -> builtins.list[Obj]:
        """Every stored object (shared: do not mutate), in no particular order."""
        with self._lock:
            if self._fingerprints is not None:
                for key, obj in self._items.items():
                    self._verify(key, obj)
            return list(self._items.values())

    def keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._items)

    def index_keys(self, index_name: str, value: str) -> builtins.list[str]:
        """Keys of the objects whose index function produced ``value``."""
        with self._lock:
            return list(self._index(index_name).get(value, ()))

    def by_index(self, index_name: str, value: str) -> builtins.list[Obj]:
        """Objects whose index function produced ``value`` (KeyError for an unknown index)."""
        with self._lock:
            keys = self._index(index_name).get(value, ())
            items = self._items
            if self._fingerprints is not None:
                for key in keys:
                    self._verify(key, items[key])
            return [items[key] for key in keys]

    def index_values(self, index_name: str) -> builtins.list[str]:
        """Every value an index currently holds."""
        with self._lock:
            return list(self._index(index_name))

    def indexer_names(self) -> builtins.list[str]:
        with self._lock:
            return list(self._indexers)

    def check_mutations(self) -> None:
        """Verify every stored object (no-op unless the mutation detector is on)."""
        with self._lock:
            if self._fingerprints is not None:
                for key, obj in self._items.items():
                    self._verify(key, obj)

    @property
    def mutation_detector(self) -> bool:
        return self._fingerprints is not None

    @property
    def shares_subtrees(self) -> bool:
        """True when stored objects share equal sub-objects (:func:`share_values`), so a
        watch feeding this store may decode with :func:`decode_watch_event`."""
        return self._share_subtrees

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    # --- internals (lock held) ---------------------------------------------------------------

    def _stored_items(self) -> builtins.list[tuple[str, Obj]]:
        """Every ``(key, object)`` stored (lock held)."""
        return list(self._items.items())

    def _index(self, index_name: str) -> dict[str, set[str]]:
        try:
            return self._indices[index_name]
        except KeyError:
            raise KeyError(f"index {index_name!r} does not exist") from None

    def _share(self, obj: Obj, previous: Obj | None) -> None:
        if self._share_subtrees:
            share_values(obj, previous)
        else:
            share_strings(obj)

    def _put(self, key: str, obj: Obj) -> Obj | None:
        # The stored version guides the sharing (read without the lock: one reflector
        # writes a store, and a stale guide costs a miss, never a wrong value).
        if self._share_subtrees:
            share_values(obj, self._items.get(key))
        else:
            share_strings(obj)
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            self._reindex(key, old, obj)
            if self._fingerprints is not None:
                self._fingerprints[key] = _fingerprint(obj)
            return old

    def _reindex(self, key: str, old: Obj | None, obj: Obj) -> None:
        shared = self._share_subtrees
        indices = self._indices
        for name, fn in self._indexers.items():
            labels = shared and fn is label_index
            new_values = _label_values(obj) if labels else fn(obj)
            if old is not None:
                old_values = _label_values(old) if labels else fn(old)
                if old_values == new_values:
                    continue
                index = indices[name]
                for value in old_values:
                    if value not in new_values:
                        self._discard(index, value, key)
            elif not new_values:
                continue  # a new key (an ADDED event): nothing to take out
            else:
                index = indices[name]
            for value in new_values:
                keys = index.get(value)
                if keys is None:
                    index[value] = {key}
                else:
                    keys.add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                self._discard(index, value, key)

    @staticmethod
    def _discard(index: dict[str, set[str]], value: str, key: str) -> None:
        keys = index.get(value)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del index[value]

    def _verify(self, key: str, obj: Obj) -> None:
        assert self._fingerprints is not None
        if self._fingerprints.get(key) != _fingerprint(obj):
            raise CacheMutationError(key)


def compact_json(obj: Any) -> bytes:
    """``obj`` as JSON bytes that hold only their length in memory, for bytes kept long: the
    bytes ``orjson.dumps`` returns keep its writer's whole buffer allocated (measured: 8 KiB
    of RSS for a 2 KB document), a copy holds only the text."""
    return memoryview(orjson.dumps(obj)).tobytes()


class CompactIndexer(Indexer):
    """An :class:`Indexer` that keeps each object as its compact JSON (``orjson`` bytes) and
    decodes it on every read: about a third of the memory of the parsed dicts, for a decode
    per object read (a few microseconds for a small object).

    Same contract as :class:`Indexer`, except that every read returns fresh dicts, owned by
    the caller (mutating them changes nothing stored), and that there is neither value
    sharing nor a mutation detector (stored bytes cannot change). Index functions run on the
    parsed object when it is stored, and on the decoded old object when it is replaced or
    deleted. Chosen per kind with ``ByObject(compact=True)`` (:mod:`kube_runtime.cache.options`)
    for kinds read rarely and held in numbers.
    """

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        super().__init__(indexers, mutation_detector=False, share_subtrees=False)
        self._blobs: dict[str, bytes] = {}

    def delete(self, obj: Obj | DeletedFinalStateUnknown) -> Obj | None:
        key = object_key(obj)  # type: ignore[arg-type]
        with self._lock:
            blob = self._blobs.pop(key, None)
            if blob is None:
                return None
            old: Obj = orjson.loads(blob)
            self._unindex(key, old)
            return old

    def replace(self, objs: Iterable[Obj], resource_version: str | None = None) -> dict[str, Obj]:
        items = {object_key(obj): obj for obj in objs}
        indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        for key, obj in items.items():
            for name, fn in self._indexers.items():
                for value in fn(obj):
                    indices[name].setdefault(value, set()).add(key)
        blobs = {key: compact_json(obj) for key, obj in items.items()}
        with self._lock:
            old, self._blobs, self._indices = self._blobs, blobs, indices
        return {key: orjson.loads(blob) for key, blob in old.items()}

    def _stored_items(self) -> builtins.list[tuple[str, Obj]]:
        return [(key, orjson.loads(blob)) for key, blob in self._blobs.items()]

    def get(self, key: str) -> Obj | None:
        with self._lock:
            blob = self._blobs.get(key)
        return None if blob is None else orjson.loads(blob)

    def list(self) -> builtins.list[Obj]:
        with self._lock:
            blobs = list(self._blobs.values())
        return [orjson.loads(blob) for blob in blobs]

    def keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._blobs)

    def by_index(self, index_name: str, value: str) -> builtins.list[Obj]:
        with self._lock:
            keys = self._index(index_name).get(value, ())
            blobs = [self._blobs[key] for key in keys]
        return [orjson.loads(blob) for blob in blobs]

    def check_mutations(self) -> None:
        """Nothing to check: stored bytes cannot be mutated."""

    def __len__(self) -> int:
        return len(self._blobs)

    def __contains__(self, key: object) -> bool:
        return key in self._blobs

    def _put(self, key: str, obj: Obj) -> Obj | None:
        blob = compact_json(obj)
        with self._lock:
            previous = self._blobs.get(key)
            old: Obj | None = None if previous is None else orjson.loads(previous)
            self._blobs[key] = blob
            self._reindex(key, old, obj)
            return old
