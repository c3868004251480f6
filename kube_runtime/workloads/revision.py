"""Revision history with ControllerRevisions (kubernetes ``pkg/controller/history``).

A workload records each version of the part of its spec that it rolls out (the pod template,
and whatever else it declares as versioned) in a ``apps/v1 ControllerRevision`` owned by it.
Objects are JSON dicts; inputs are never mutated.

Building and comparing revisions (pure):

* :func:`revision_patch` captures ``obj`` at ``paths`` as a patch in the form upstream's
  ``getPatch`` writes: ``{"spec": {"template": {..., "$patch": "replace"}}}``;
  :func:`apply_revision` restores it onto a deep copy of an object (``ApplyRevision``).
* :func:`hash_revision` is ``HashControllerRevision``: 32-bit FNV-1 over the revision data
  encoded as Go's ``json.Marshal`` does (keys sorted, compact, ``<``/``>``/``&`` escaped), then
  the collision count in decimal when given, and the decimal sum mapped onto upstream's safe
  alphabet (``rand.SafeEncodeString``). For data shaped as upstream writes it (strings,
  integers, maps, lists) the bytes, and so the hash, are the same; small or huge floats are
  the known difference (Go prints ``0.000001`` where Python prints ``1e-06``).
* :func:`new_revision` names a revision ``<parent>-<hash>`` (parent name cut to 223 chars),
  labels it with the template labels plus ``controller.kubernetes.io/hash``, and makes the
  parent its controller; :func:`revision_from_object` does it for a workload's own spec.
* :func:`equal_revision` compares data semantically (upstream compares raw bytes after a
  hash-label pre-check that only applies to decimal labels; since labels are safe-encoded,
  data decides); :func:`find_equal_revisions`, :func:`sort_revisions` (revision number, then
  creation time, then name), :func:`next_revision_number`.

Against the API (``client`` is a :class:`~kube_runtime.client.Client` or anything with its
methods; ``reader`` may be the client, a ``CachedClient`` or an ``InformerCache``):

* :func:`list_revisions` — revisions matching the selector that the parent controls or that
  have no controller (adoption of the orphans is the generic claimer's job);
* :func:`create_revision` — create, bumping the collision count on a name collision with
  different data; an existing revision with equal data is returned as is;
* :func:`update_revision_number` — rollback: give an old revision a new number (retried on
  conflict); :func:`resolve_revisions` — upstream ``getStatefulSetRevisions``;
* :func:`truncate_history` — delete the oldest revisions beyond the history limit, never one
  a live pod uses (``controller-revision-hash`` label) nor the current or update revision.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from datetime import datetime, timezone
from typing import Any, Protocol

import orjson

from kube_runtime import meta
from kube_runtime.client.errors import AlreadyExists, Conflict, NotFound
from kube_runtime.client.interfaces import Reader, Writer
from kube_runtime.kinds import ControllerRevision, Kind
from kube_runtime.meta import Obj
from kube_runtime.retry import retry_on_conflict
from kube_runtime.selectors import label_selector_from_dict
from kube_runtime.workloads.pods import parse_time

__all__ = [
    "HASH_LABEL",
    "POD_REVISION_LABEL",
    "REVISION_NAME_PREFIX_MAX",
    "SAFE_ALPHABET",
    "CacheLister",
    "ReadWriter",
    "TooManyCollisionsError",
    "apply_revision",
    "create_revision",
    "delete_revision",
    "equal_revision",
    "find_equal_revisions",
    "go_json",
    "hash_revision",
    "list_revisions",
    "live_revision_names",
    "new_revision",
    "next_revision_number",
    "pod_revision",
    "resolve_revisions",
    "revision_from_object",
    "revision_name",
    "revision_patch",
    "revision_view",
    "revisions_to_truncate",
    "safe_encode",
    "sort_revisions",
    "truncate_history",
    "update_revision_number",
]

log = logging.getLogger(__name__)


HASH_LABEL = "controller.kubernetes.io/hash"
"""Label on a ControllerRevision holding the hash its name ends with."""
POD_REVISION_LABEL = "controller-revision-hash"
"""Label on a pod naming the ControllerRevision it was created from."""
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""apimachinery ``rand`` alphabet: no vowels, no confusable characters."""
REVISION_NAME_PREFIX_MAX = 223
MAX_COLLISIONS = 100
""":func:`create_revision` gives up after this many name collisions in one call (upstream
loops forever; a server that always answers AlreadyExists would hang a worker)."""

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193
_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


class ReadWriter(Reader, Writer, Protocol):
    """A client that reads and writes (every :class:`~kube_runtime.client.ClientInterface`)."""


class CacheLister(Protocol):
    """An informer cache's ``list``: the objects themselves, not a List object."""

    def list(
        self, kind: Kind, namespace: str | None = None, *, label_selector: str | None = None
    ) -> list[Obj]: ...


class TooManyCollisionsError(RuntimeError):
    """:func:`create_revision` met :data:`MAX_COLLISIONS` name collisions in a row."""


# --- encoding and hashing ------------------------------------------------------------------


def _go_value(value: Any) -> Any:
    """Floats holding integers print as integers in Go (``json.Unmarshal`` makes every number
    a float64 and ``Marshal`` prints ``1``, not ``1.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _go_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_go_value(v) for v in value]
    return value


def go_json(value: Any) -> bytes:
    """``value`` encoded as Go's ``json.Marshal`` encodes the same generic value: map keys
    sorted, no whitespace, HTML characters and U+2028/U+2029 escaped, UTF-8 kept as is."""
    text = json.dumps(_go_value(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES.items():
        if char in text:
            text = text.replace(char, escaped)
    return text.encode()


# Every sync of every workload encodes its template (the new revision's hash, the comparison
# with its history); templates repeat, so the Go encoding and its FNV-1 hash are kept per
# canonical form (orjson's bytes with keys sorted: the same bytes are the same JSON value).
_ENCODED_MAX = 1024
_encoded: dict[bytes, tuple[bytes, int]] = {}
_encoded_lock = threading.Lock()


def _encoded_data(value: Any) -> tuple[bytes, bytes, int] | None:
    """``(canonical bytes, go_json bytes, FNV-1 32 of them)`` of a JSON value, memoized;
    None for what orjson cannot encode (non-string keys, integers beyond 64 bits), which the
    callers then encode directly.

    Data comes from JSON (the API server's), so no NaN or infinity occurs: orjson writes
    those as ``null``, which would make them share a cache entry with ``None``.
    """
    try:
        key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
    entry = _encoded.get(key)
    if entry is None:
        encoded = go_json(value)
        entry = (encoded, _fnv1_32(encoded))
        with _encoded_lock:
            if len(_encoded) >= _ENCODED_MAX:
                _encoded.pop(next(iter(_encoded)))  # the oldest entry
            _encoded[key] = entry
    return key, entry[0], entry[1]


def _go_json_memo(value: Any) -> bytes:
    """:func:`go_json`, memoized by canonical form."""
    encoded = _encoded_data(value)
    return go_json(value) if encoded is None else encoded[1]


def _fnv1_32(data: bytes, h: int = _FNV32_OFFSET) -> int:
    for byte in data:
        h = (h * _FNV32_PRIME) & 0xFFFFFFFF
        h ^= byte
    return h


def safe_encode(text: str) -> str:
    """apimachinery ``rand.SafeEncodeString``: every byte mapped onto :data:`SAFE_ALPHABET`."""
    return "".join(SAFE_ALPHABET[b % len(SAFE_ALPHABET)] for b in text.encode())


def hash_revision(revision: Mapping[str, Any], collision_count: int | None = None) -> str:
    """Upstream ``HashControllerRevision`` of ``revision["data"]`` (see the module docstring);
    ``collision_count`` (None: not part of the hash) makes a different name after a collision."""
    data = revision.get("data")
    encoded = _encoded_data(data)
    h = _fnv1_32(go_json(data)) if encoded is None else encoded[2]
    if collision_count is not None:
        h = _fnv1_32(str(int(collision_count)).encode(), h)
    return safe_encode(str(h))


def revision_name(prefix: str, hash_: str) -> str:
    """``<prefix>-<hash>``, the prefix cut to 223 characters so the name fits 253."""
    return f"{prefix[:REVISION_NAME_PREFIX_MAX]}-{hash_}"


# --- patch and apply -----------------------------------------------------------------------


def revision_patch(obj: Mapping[str, Any], paths: Sequence[str] = ("spec.template",)) -> Obj:
    """The revision data recording ``obj`` at each dotted path (a deep copy).

    A map is stored with ``"$patch": "replace"`` so that applying it replaces the whole value
    (upstream ``getPatch``); other values are stored as they are; a missing path is stored as
    ``null`` so that applying the revision removes it.
    """
    patch: Obj = {}
    for path in paths:
        keys = path.split(".")
        value: Any = obj
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        node = patch
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        if isinstance(value, Mapping):
            stored = meta.deep_copy(dict(value))
            stored["$patch"] = "replace"
        else:
            stored = meta.deep_copy(value)
        node[keys[-1]] = stored
    return patch


def apply_revision(obj: Mapping[str, Any], revision: Mapping[str, Any]) -> Obj:
    """A deep copy of ``obj`` with ``revision``'s data applied (upstream ``ApplyRevision``).

    The data is applied as a strategic merge patch restricted to what revisions hold: maps
    merge key by key, ``"$patch": "replace"`` replaces a map whole, ``"$patch": "delete"`` and
    ``null`` remove a key, any other value (lists included) replaces. Other strategic
    directives (``$setElementOrder``, ``$retainKeys``, ...) raise ``ValueError``.
    """
    data = revision.get("data")
    if not isinstance(data, Mapping):
        name = meta.name(revision)
        raise ValueError(f"revision {name!r} has no data object to apply (data={data!r})")
    result = _merge(meta.deep_copy(dict(obj)), data, meta.deep_copy)
    return result if result is not None else {}


def revision_view(obj: Mapping[str, Any], revision: Mapping[str, Any]) -> Mapping[str, Any]:
    """What :func:`apply_revision` gives (equal, same errors), without copying: the maps on
    the paths the revision's data patches are new, every other part is ``obj``'s or the
    data's own object. Read-only (as ``obj`` and the revision are): for a controller pass
    that only reads the object at a revision (a StatefulSet pass applies one or two
    revisions on every sync, and copying the whole object, ``managedFields`` included, cost
    more than the rest of applying them)."""
    data = revision.get("data")
    if not isinstance(data, Mapping):
        name = meta.name(revision)
        raise ValueError(f"revision {name!r} has no data object to apply (data={data!r})")
    result = _merge(obj, data, _shared)
    return result if result is not None else {}


def _shared(value: Any) -> Any:
    return value


def _merge(
    target: Mapping[str, Any] | None, patch: Mapping[str, Any], copy_value: Callable[[Any], Any]
) -> Obj | None:
    """``patch`` merged into a shallow copy of ``target`` (see :func:`apply_revision`); the
    patch's other values go in through ``copy_value``."""
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        target = {}
    elif directive is not None:
        raise ValueError(f"unsupported $patch directive {directive!r} in revision data")
    target = dict(target) if target is not None else {}
    for key, value in patch.items():
        if key == "$patch":
            continue
        if key.startswith("$"):
            raise ValueError(f"unsupported strategic-merge directive {key!r} in revision data")
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping):
            current = target.get(key)
            merged = _merge(current if isinstance(current, Mapping) else None, value, copy_value)
            if merged is None:
                target.pop(key, None)
            else:
                target[key] = merged
        else:
            target[key] = copy_value(value)
    return target


# --- building, comparing, ordering ---------------------------------------------------------


def new_revision(
    parent: Mapping[str, Any],
    data: Any,
    number: int,
    collision_count: int | None = None,
    *,
    controller_kind: Kind | None = None,
    template_labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Obj:
    """A ControllerRevision (not yet created) of ``parent`` holding ``data`` as ``number``.

    Named ``<parent>-<hash>`` in the parent's namespace; labels = ``template_labels`` plus
    :data:`HASH_LABEL`; the parent (of ``controller_kind``, default its own apiVersion/kind)
    is its controller with ``blockOwnerDeletion``.
    """
    return _build_revision(
        parent,
        meta.deep_copy(data),
        number,
        collision_count,
        controller_kind=controller_kind,
        template_labels=template_labels,
        annotations=annotations,
    )


def _build_revision(
    parent: Mapping[str, Any],
    data: Any,
    number: int,
    collision_count: int | None,
    *,
    controller_kind: Kind | None,
    template_labels: Mapping[str, str] | None,
    annotations: Mapping[str, str] | None,
) -> Obj:
    """:func:`new_revision` taking ``data`` as it is (the caller's own copy)."""
    parent_meta = meta.metadata(parent)  # one accessor call for the three fields (every sync)
    name, uid = parent_meta.get("name"), parent_meta.get("uid")
    kind = controller_kind or Kind.of(parent)
    if not name or not uid:
        raise ValueError("parent has no metadata.name/uid: create it before recording revisions")
    revision: Obj = {
        "apiVersion": ControllerRevision.api_version,
        "kind": ControllerRevision.kind,
        "metadata": {
            "namespace": parent_meta.get("namespace"),
            "labels": dict(template_labels or {}),
            "ownerReferences": [
                {
                    "apiVersion": kind.api_version,
                    "kind": kind.kind,
                    "name": name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "data": data,
        "revision": int(number),
    }
    if annotations:
        revision["metadata"]["annotations"] = dict(annotations)
    hash_ = hash_revision(revision, collision_count)
    revision["metadata"]["name"] = revision_name(name, hash_)
    revision["metadata"]["labels"][HASH_LABEL] = hash_
    return revision


def revision_from_object(
    parent: Mapping[str, Any],
    number: int,
    collision_count: int | None = None,
    *,
    paths: Sequence[str] = ("spec.template",),
    controller_kind: Kind | None = None,
) -> Obj:
    """The revision a workload records for its own spec (upstream ``newRevision``): data =
    :func:`revision_patch` of ``paths``, labels = the pod template's labels, annotations = the
    parent's annotations."""
    template = meta.spec(parent).get("template") or {}
    return _build_revision(
        parent,
        revision_patch(parent, paths),  # a copy already
        number,
        collision_count,
        controller_kind=controller_kind,
        template_labels=(template.get("metadata") or {}).get("labels"),
        annotations=meta.metadata(parent).get("annotations"),
    )


def equal_revision(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Both None, or both revisions with semantically equal data."""
    if a is None or b is None:
        return a is b
    data_a, data_b = a.get("data"), b.get("data")
    encoded_a, encoded_b = _encoded_data(data_a), _encoded_data(data_b)
    if encoded_a is not None and encoded_b is not None:
        # Equal canonical bytes: equal values; otherwise Go's encoding decides (1.0 == 1).
        return encoded_a[0] == encoded_b[0] or encoded_a[1] == encoded_b[1]
    return _go_json_memo(data_a) == _go_json_memo(data_b)


def find_equal_revisions(
    revisions: Iterable[Mapping[str, Any]], needle: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    """The revisions with data equal to ``needle``'s, in their order."""
    key = _go_json_memo(needle.get("data"))
    return [r for r in revisions if _go_json_memo(r.get("data")) == key]


_EPOCH = datetime.min.replace(tzinfo=timezone.utc)


def _sort_key(revision: Mapping[str, Any]) -> tuple[int, datetime, str]:
    # Each revision, several sorts per sync: a plain dict read (a meta accessor costs ~4x).
    metadata = revision.get("metadata") or {}
    created = parse_time(metadata.get("creationTimestamp")) or _EPOCH
    return int(revision.get("revision") or 0), created, str(metadata.get("name") or "")


def sort_revisions(revisions: Iterable[Mapping[str, Any]]) -> list[Any]:
    """A new list ordered by revision number, then creation time, then name (oldest first)."""
    return sorted(revisions, key=_sort_key)


def next_revision_number(revisions: Sequence[Mapping[str, Any]]) -> int:
    """1 for no history, else one more than the highest revision number."""
    return max((int(r.get("revision") or 0) for r in revisions), default=0) + 1


def pod_revision(pod: Mapping[str, Any]) -> str:
    """The revision a pod was created from (its ``controller-revision-hash`` label) or ""."""
    # Several times per pod and sync: a plain dict read (a meta accessor costs ~4x).
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(POD_REVISION_LABEL) or "")


# --- API -----------------------------------------------------------------------------------


def _selector_text(selector: Any) -> str | None:
    if selector is None:
        return None
    if isinstance(selector, str):
        return selector or None
    if isinstance(selector, Mapping) and (
        "matchLabels" in selector or "matchExpressions" in selector
    ):
        return str(label_selector_from_dict(selector)) or None
    if isinstance(selector, Mapping):
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or None
    return str(selector) or None


def list_revisions(
    reader: Reader | CacheLister, parent: Mapping[str, Any], selector: Any = None
) -> list[Obj]:
    """ControllerRevisions in the parent's namespace matching ``selector`` (a
    ``metav1.LabelSelector`` dict, a ``{key: value}`` dict or query text; default the
    parent's ``spec.selector``) that ``parent`` controls (by UID) or that have no controller.
    Returned sorted (:func:`sort_revisions`); with a cache they are shared: do not mutate."""
    if selector is None:
        selector = meta.spec(parent).get("selector")
        if selector is None:
            raise ValueError("parent has no spec.selector: pass the selector explicitly")
    parent_meta = meta.metadata(parent)
    result = reader.list(
        ControllerRevision, parent_meta.get("namespace"), label_selector=_selector_text(selector)
    )
    items = result.get("items") or [] if isinstance(result, Mapping) else list(result)
    uid = parent_meta.get("uid")
    owned = []
    for item in items:
        # Every revision on every sync: plain dict reads.
        refs = (item.get("metadata") or {}).get("ownerReferences") or ()
        controller = next((r for r in refs if r.get("controller") is True), None)
        if controller is None or controller.get("uid") == uid:
            owned.append(item)
    return sort_revisions(owned)


def create_revision(
    client: ReadWriter,
    parent: Mapping[str, Any],
    revision: Mapping[str, Any],
    collision_count: int,
) -> tuple[Obj, int]:
    """Create ``revision`` for ``parent``; return ``(revision on the server, collision_count)``.

    The name is ``<parent>-<hash(data, collision_count)>``. When that name exists: equal data
    -> the existing revision is returned (a previous attempt created it); different data -> the
    collision count goes up by one and the next name is tried, as upstream. The caller stores
    the returned count in the parent's ``status.collisionCount``. Other errors propagate.
    """
    namespace, parent_name = meta.namespace(parent) or None, meta.name(parent)
    clone = meta.deep_copy(dict(revision))
    clone_meta = clone.setdefault("metadata", {})
    clone_meta["namespace"] = namespace
    for _ in range(MAX_COLLISIONS):
        hash_ = hash_revision(revision, collision_count)
        clone_meta["name"] = revision_name(parent_name, hash_)
        clone_meta.setdefault("labels", {})[HASH_LABEL] = hash_
        try:
            created: Obj = client.create(clone)
        except AlreadyExists:
            existing: Obj = client.get(ControllerRevision, clone_meta["name"], namespace)
            if _go_json_memo(existing.get("data")) == _go_json_memo(clone.get("data")):
                log.debug(
                    "revision %s/%s already exists with equal data", namespace, clone_meta["name"]
                )
                return existing, collision_count
            log.info(
                "revision name %s/%s collides with different data; collision count %d -> %d",
                namespace,
                clone_meta["name"],
                collision_count,
                collision_count + 1,
            )
            collision_count += 1
            continue
        log.debug("created revision %s/%s", namespace, clone_meta["name"])
        return created, collision_count
    raise TooManyCollisionsError(
        f"gave up creating a revision of {namespace}/{parent_name} after "
        f"{MAX_COLLISIONS} name collisions (collision count now {collision_count})"
    )


def update_revision_number(
    client: ReadWriter, revision: Mapping[str, Any], number: int, *, reader: Reader | None = None
) -> Obj:
    """Give ``revision`` the revision number ``number`` (a rollback); return the result.

    Nothing is written when it already has that number. On a conflict the revision is re-read
    (from ``reader``, default ``client``) and the update retried (``retry_on_conflict``).
    """
    state: dict[str, Obj] = {"clone": meta.deep_copy(dict(revision))}
    name, namespace = meta.name(revision), meta.namespace(revision) or None

    def attempt() -> Obj:
        clone = state["clone"]
        if int(clone.get("revision") or 0) == number:
            return clone
        clone["revision"] = int(number)
        try:
            updated: Obj = client.update(clone)
        except Conflict:
            try:
                fresh = (reader or client).get(ControllerRevision, name, namespace)
                state["clone"] = meta.deep_copy(dict(fresh))
            except Exception:
                log.debug("re-reading revision %s failed", name, exc_info=True)
            raise
        state["clone"] = updated
        return updated

    result = retry_on_conflict(attempt)
    log.info("revision %s/%s now has revision number %d", namespace, name, number)
    return result


def resolve_revisions(
    client: ReadWriter,
    parent: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    *,
    paths: Sequence[str] = ("spec.template",),
    controller_kind: Kind | None = None,
    new: Callable[[Mapping[str, Any], int, int], Obj] | None = None,
) -> tuple[Mapping[str, Any], Mapping[str, Any], int]:
    """Upstream ``getStatefulSetRevisions``: ``(current, update, collision_count)``.

    The update revision is the parent's spec as a revision (``new(parent, number, count)``,
    default :func:`revision_from_object` over ``paths``). If the newest existing revision
    already equals it, that one is used; if an older one does, it gets the next number (a
    rollback); otherwise it is created (:func:`create_revision`). The current revision is the
    one named by ``status.currentRevision``, or the update revision when there is none.
    """
    ordered = sort_revisions(revisions)
    status = meta.status(parent)
    collision_count = int(status.get("collisionCount") or 0)

    def default_new(p: Mapping[str, Any], number: int, count: int) -> Obj:
        return revision_from_object(p, number, count, paths=paths, controller_kind=controller_kind)

    update: Mapping[str, Any] = (new or default_new)(
        parent, next_revision_number(ordered), collision_count
    )
    equal = find_equal_revisions(ordered, update)
    if equal and equal_revision(ordered[-1], equal[-1]):
        update = ordered[-1]
    elif equal:
        update = update_revision_number(client, equal[-1], int(update["revision"]))
    else:
        update, collision_count = create_revision(client, parent, update, collision_count)
    current_name = status.get("currentRevision")
    current = next(
        # Every revision on every sync: plain dict reads.
        (r for r in ordered if (r.get("metadata") or {}).get("name") == current_name),
        update,
    )
    return current, update, collision_count


def live_revision_names(
    live_pods: Iterable[Mapping[str, Any]],
    *revisions: Mapping[str, Any] | None,
) -> set[str]:
    """The names of the revisions in use: those of ``live_pods`` (their
    ``controller-revision-hash`` label) and ``revisions`` (the current and update ones)."""
    live = {pod_revision(pod) for pod in live_pods}
    live.update(meta.name(r) for r in revisions if r is not None)
    return live


def revisions_to_truncate(
    revisions: Iterable[Mapping[str, Any]], live: Set[str], limit: int
) -> list[Mapping[str, Any]]:
    """The oldest revisions not named in ``live`` beyond ``limit``, oldest first: what
    :func:`truncate_history` deletes (live revisions never count against the limit, as in
    upstream ``truncateHistory``)."""
    history = [  # every revision on every sync: plain dict reads
        r for r in sort_revisions(revisions) if (r.get("metadata") or {}).get("name") not in live
    ]
    excess = len(history) - max(int(limit), 0)
    return history[: max(excess, 0)]


def delete_revision(client: Writer, revision: Mapping[str, Any]) -> None:
    """Delete ``revision``; one already gone (NotFound) counts as deleted."""
    name, namespace = meta.name(revision), meta.namespace(revision) or None
    try:
        client.delete(ControllerRevision, name, namespace)
    except NotFound:
        pass
    log.info("deleted revision %s/%s", namespace, name)


def truncate_history(
    client: Writer,
    revisions: Iterable[Mapping[str, Any]],
    live_pods: Iterable[Mapping[str, Any]],
    current: Mapping[str, Any] | None,
    update: Mapping[str, Any] | None,
    limit: int,
) -> list[Mapping[str, Any]]:
    """Delete the oldest non-live revisions beyond ``limit`` (:func:`revisions_to_truncate`);
    return the deleted ones. A revision already gone (NotFound) counts as deleted."""
    doomed = revisions_to_truncate(
        revisions, live_revision_names(live_pods, current, update), limit
    )
    for revision in doomed:
        delete_revision(client, revision)
    return doomed
