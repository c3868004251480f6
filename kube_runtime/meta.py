"""Read the common fields of an object (``metadata``, ``spec``, ``status``) without ``.get`` chains.

Objects are JSON dicts (from the cache, the client, a watch) or resource models; fields the
API omits (empty labels, no owner references, no deletion timestamp) read as empty values of
the right type, never ``None`` and never a ``KeyError``::

    from kube_runtime import meta

    if meta.is_deleting(pod) or meta.controller_uid(pod) != meta.uid(owner):
        ...
    app = meta.labels(pod).get("app")

Every function only reads: what it returns may be the object's own value (a shared cached
dict): do not mutate it. A model is read through its JSON form (``by_alias``), so the same
call works on both.
"""

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

import orjson

__all__ = [
    "Obj",
    "ObjView",
    "annotation_json",
    "annotations",
    "controller_ref",
    "controller_uid",
    "creation_timestamp",
    "deep_copy",
    "deletion_timestamp",
    "finalizers",
    "generation",
    "has_controller",
    "is_deleting",
    "key",
    "labels",
    "metadata",
    "name",
    "namespace",
    "owner_references",
    "resource_version",
    "section",
    "spec",
    "status",
    "uid",
]

Obj: TypeAlias = dict[str, Any]
"""A Kubernetes object (or list, or ``Status``) as JSON: what the API, the cache and a watch
hand out."""
ObjView: TypeAlias = Mapping[str, Any]
"""An object that is only read: any mapping with the object's JSON shape."""

_EMPTY: Mapping[str, Any] = {}

_ORJSON_STRICT: Final = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def deep_copy(value: Any, fallback: Callable[[Any], Any] = copy.deepcopy) -> Any:
    """A copy of ``value`` to mutate, for JSON data (objects read from the API, a watch or a
    cache): a dict or list is copied by an orjson round trip, 8x faster than
    ``copy.deepcopy`` on a pod (about 10 us against 80). Values a round trip cannot write
    (integers beyond 64 bits, non-string keys, subclasses of str or int, datetimes, other
    objects) fall back to ``fallback`` (``copy.deepcopy``); anything else that is not a dict
    or list too.
    Not for Python-built values that hold tuples or enums: a round trip gives those back as
    lists and plain values."""
    kind = type(value)
    if kind is dict or kind is list:
        try:
            return orjson.loads(orjson.dumps(value, option=_ORJSON_STRICT))
        except TypeError:  # orjson.JSONEncodeError
            pass
    elif kind in _IMMUTABLE_SCALARS:
        return value  # what copy.deepcopy returns for them too, without its dispatch
    return fallback(value)


_IMMUTABLE_SCALARS = frozenset({str, int, float, bool, type(None)})


def _as_mapping(obj: Any) -> Mapping[str, Any]:
    if type(obj) is dict:  # the common case, without an abstract-class check (hot paths)
        return obj
    if isinstance(obj, Mapping):
        return obj
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        dumped: Mapping[str, Any] = dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    raise TypeError(f"not an object: {type(obj).__name__} (expected a dict or a resource model)")


def section(obj: Any, field: str) -> Mapping[str, Any]:
    """``obj[field]`` when it is a mapping, else an empty mapping."""
    value = (obj if type(obj) is dict else _as_mapping(obj)).get(field)
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else _EMPTY


def metadata(obj: Any) -> Mapping[str, Any]:
    """The object's ``metadata`` (empty when missing)."""
    if type(obj) is dict:
        value = obj.get("metadata")
        if type(value) is dict:
            return value
        return value if isinstance(value, Mapping) else _EMPTY
    return section(obj, "metadata")


def spec(obj: Any) -> Mapping[str, Any]:
    """The object's ``spec`` (empty when missing)."""
    return section(obj, "spec")


def status(obj: Any) -> Mapping[str, Any]:
    """The object's ``status`` (empty when missing)."""
    return section(obj, "status")


def _field(obj: Any, field: str) -> Any:
    """``metadata[field]`` (None when missing); a dict takes the fast path: accessors run
    for every pod of every sync."""
    if type(obj) is dict:
        meta = obj.get("metadata")
        if type(meta) is dict:
            return meta.get(field)
    return metadata(obj).get(field)


def _str(obj: Any, field: str) -> str:
    value = _field(obj, field)
    return value if type(value) is str else ""


def name(obj: Any) -> str:
    """``metadata.name`` (``""`` when missing)."""
    return _str(obj, "name")


def namespace(obj: Any) -> str:
    """``metadata.namespace`` (``""`` for cluster-scoped objects)."""
    return _str(obj, "namespace")


def key(obj: Any) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object (the cache's key)."""
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


def uid(obj: Any) -> str:
    """``metadata.uid`` (``""`` before the server assigned one)."""
    return _str(obj, "uid")


def resource_version(obj: Any) -> str:
    """``metadata.resourceVersion`` (``""`` when missing)."""
    return _str(obj, "resourceVersion")


def creation_timestamp(obj: Any) -> str:
    """``metadata.creationTimestamp`` as the RFC 3339 string the server wrote (or ``""``)."""
    return _str(obj, "creationTimestamp")


def deletion_timestamp(obj: Any) -> str | None:
    """``metadata.deletionTimestamp``, or None when the object is not being deleted."""
    value = _field(obj, "deletionTimestamp")
    return value if isinstance(value, str) and value else None


def is_deleting(obj: Any) -> bool:
    """Whether the object carries a deletion timestamp (graceful deletion or finalizers)."""
    return deletion_timestamp(obj) is not None


def generation(obj: Any) -> int:
    """``metadata.generation`` (0 when missing)."""
    value = _field(obj, "generation")
    return value if isinstance(value, int) else 0


def labels(obj: Any) -> Mapping[str, str]:
    """``metadata.labels`` (empty when missing)."""
    value = _field(obj, "labels")
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else _EMPTY


def annotations(obj: Any) -> Mapping[str, str]:
    """``metadata.annotations`` (empty when missing)."""
    value = _field(obj, "annotations")
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else _EMPTY


def annotation_json(obj: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The JSON object stored in annotation ``key`` of ``obj`` (a plain mapping), or None when
    the annotation is absent, empty, not JSON, or not an object. Plain dict reads: the
    workload controllers call it for every pod of a sync."""
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def finalizers(obj: Any) -> Sequence[str]:
    """``metadata.finalizers`` (empty when missing)."""
    value = _field(obj, "finalizers")
    return value if isinstance(value, list) else ()


def owner_references(obj: Any) -> Sequence[Mapping[str, Any]]:
    """``metadata.ownerReferences`` (empty when missing)."""
    value = _field(obj, "ownerReferences")
    return value if isinstance(value, list) else ()


def controller_ref(obj: Any) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true``, if any (there is at most one)."""
    for ref in owner_references(obj):
        if ref.get("controller") is True:
            return ref
    return None


def has_controller(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` (a plain mapping) has an owner reference with ``controller: true``.
    Plain dict reads: event handlers call it for every event of a watched kind."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") is True:
            return True
    return False


def controller_uid(obj: Any) -> str:
    """The uid of the object's controller (``""`` when it has none)."""
    ref = controller_ref(obj)
    value = ref.get("uid") if ref is not None else None
    return value if isinstance(value, str) else ""
