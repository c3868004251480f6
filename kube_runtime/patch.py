"""PATCH semantics of kube-apiserver, as pure functions over JSON values (no I/O).

The embedded API server maps the three PATCH content types onto these functions:

* ``application/merge-patch+json``       -> :func:`apply_merge_patch` (RFC 7386)
* ``application/json-patch+json``        -> :func:`apply_json_patch` (RFC 6902)
* ``application/strategic-merge-patch+json`` -> :func:`apply_strategic_merge_patch`, with the
  schema returned by :func:`strategic_schema_for`. That function returns ``None`` for kinds
  without a strategic schema (custom resources, unlisted kinds); the server then answers
  415 Unsupported Media Type, like kube-apiserver does for custom resources.

Contracts shared by every function here:

* Values are plain JSON values as produced by ``json.loads`` / ``orjson.loads``: ``dict``,
  ``list``, ``str``, ``int``, finite ``float``, ``bool`` and ``None``.
* Inputs are never mutated, and the returned value shares no ``dict``/``list`` with any
  input: the caller may mutate the result freely (e.g. to set ``resourceVersion``). Each
  function walks the original once (copying it) and the patch once; there is no
  ``copy.deepcopy``.
* Failures raise :class:`PatchError`; its ``code`` is the HTTP status to answer with:
  400 when the patch document itself is malformed, 422 when a well-formed patch cannot be
  applied to this object (failed JSON-patch ``test``, missing path, original incompatible
  with the patch).

Strategic merge patch follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` (server-side
``StrategicMergeMapPatch``), re-implemented here:

* ``null`` deletes a key. Keys missing from the original take the patch value with nulls and
  directive-carrying maps removed (upstream ``discardNullValuesFromPatch``/``removeDirectives``).
* Maps merge recursively. Lists of objects with strategy ``merge`` merge element-wise on the
  merge key; lists of primitives with strategy ``merge`` (finalizers) are unions. Every other
  list is atomic: the patch replaces it. Fields missing from the schema are treated like
  JSON merge patch fields: maps merge, lists are replaced.
* Merged list order follows upstream: ``$setElementOrder/<field>`` decides when present;
  otherwise patch items keep the patch order, server-only items keep the server order, and
  the two are interleaved by upstream's ``mergeSortedSlice``. As a result, a new item that
  comes first in the patch goes to the front (``[a, b]`` patched with ``[c]`` gives
  ``[c, a, b]``). Where server-only items land next to ``$setElementOrder`` items depends
  on how Go mutates the original slice in place; :class:`_GoBackingArray` replays that.
* Directives: ``$patch: replace|delete`` on a map, ``$patch: delete|replace`` as a list
  element, ``$deleteFromPrimitiveList/<field>``, ``$retainKeys``, ``$setElementOrder/<field>``.
  Directive keys never end up in the result. ``$patch: merge`` is rejected like upstream does.
  ``$patch: delete`` on a map leaves an empty map (``{}``), as upstream's merge does.

Where upstream hands back raw patch content (a ``$patch: replace`` map, an atomic list, a new
element added to a merge list), kube-apiserver then decodes into the Go struct. That decode
drops the ``$``-directive keys and turns ``null`` values into omitted zero values. This module
does the same by dropping directive keys and null-valued map entries in such content.
Where upstream is non-deterministic (Go map order), this module picks one order:
``$deleteFromPrimitiveList`` lists run before the other keys of the same map, but after
``$setElementOrder`` lists. Where upstream fails on edge cases nobody sends, this module
proceeds: ``$setElementOrder`` for a field that is not a merging list is ignored, and
``$setElementOrder`` with empty lists on both sides is a no-op.

Status codes. kube-apiserver answers 400 for upstream's typed format errors (bad
``$retainKeys``, ``$setElementOrder``, ``$deleteFromPrimitiveList`` formats) and 422 for lists of
lists. Its other strategic-patch errors reach the client as 500s. Here those other errors are
400 when the patch document is at fault (unknown ``$patch`` value, element without its merge
key, ``$setElementOrder`` mismatch) and 422 when the original object and the patch do not
fit together (different element types, stored element missing its merge key).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal

import orjson

from kube_runtime import meta

__all__ = [
    "FieldSchema",
    "PatchError",
    "StructSchema",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "json_kind",
    "strategic_schema_for",
]


class PatchError(ValueError):
    """A patch that cannot be applied.

    ``code`` is the HTTP status the server should answer with: 400 (malformed patch
    document), 422 (patch applies but produces an invalid/impossible result, e.g. JSON-patch
    ``test`` failed or a path does not exist).
    """

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# --------------------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------------------


def _copy(value: Any) -> Any:
    """Copy a JSON value: fresh dicts and lists, scalars shared (they are immutable).

    :func:`kube_runtime.meta.deep_copy` (an orjson round trip, several times faster than a
    Python walk); values it would not reproduce exactly (big integers, non-string keys,
    datetimes, subclasses...) are copied by the Python walk below.
    """
    if isinstance(value, (dict, list)):
        return meta.deep_copy(value, fallback=_copy_slow)
    return value


def _copy_slow(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_slow(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_slow(v) for v in value]
    return value


def json_kind(value: Any) -> str:
    """The JSON kind of a decoded value: ``object``, ``array``, ``string``, ``boolean``,
    ``number``, ``null``, or the Python type's name for anything else; bool is kept apart
    from numbers (Python has True == 1)."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


def _hkey(value: Any) -> Any:
    """Hashable identity of a JSON value, with JSON equality (bool is not a number)."""
    t = type(value)
    if t is str or t is int or t is float or value is None:
        return value
    # Tuples never occur in JSON values, so tagged tuples cannot collide with real values.
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (dict, list)):
        try:
            return ("json", orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
        except TypeError:
            return ("repr", repr(value))
    return value


def _json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal (RFC 6902 ``test`` rules: bool is not a number)."""
    ka, kb = json_kind(a), json_kind(b)
    if ka != kb:
        return False
    if ka == "object":
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if ka == "array":
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _show(value: Any, limit: int = 200) -> str:
    """Short JSON rendering of a value for error messages."""
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------
# RFC 7386 JSON merge patch
# --------------------------------------------------------------------------------------


def apply_merge_patch(original: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch and return the new value.

    A non-object patch replaces the whole document; ``null`` members delete keys; objects
    merge recursively; arrays are replaced.

    Like kube-apiserver (evanphx/json-patch), null members are also pruned from objects
    nested in inserted arrays (``{"a": [{"b": null}]}`` inserts ``[{}]``), except where an
    array replaces an existing object; null array items are kept. The RFC would keep such
    nested nulls. No RFC 7386 appendix example is affected.
    """
    try:
        if isinstance(patch, dict):
            return _merge_objects(original if isinstance(original, dict) else {}, patch)
        return _prune_nulls(patch)
    except RecursionError:
        raise PatchError("merge patch is nested too deeply", 400) from None


def _merge_objects(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in target.items():
        if key not in patch:
            result[key] = _copy(value)
            continue
        pv = patch[key]
        if pv is None:
            continue
        if isinstance(value, dict):
            # An existing object merges with an object; anything else replaces it verbatim.
            result[key] = _merge_objects(value, pv) if isinstance(pv, dict) else _copy(pv)
        else:
            result[key] = _prune_nulls(pv)
    for key, pv in patch.items():
        if pv is not None and key not in target:
            result[key] = _prune_nulls(pv)
    return result


def _prune_nulls(value: Any) -> Any:
    """Copy ``value`` without null object members, at any depth (null array items stay)."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


# --------------------------------------------------------------------------------------
# RFC 6902 JSON patch
# --------------------------------------------------------------------------------------

_MISSING: Final = object()


def apply_json_patch(original: Any, operations: Any) -> Any:
    """Apply an RFC 6902 JSON patch (add, remove, replace, move, copy, test).

    Paths are RFC 6901 JSON pointers (``~1`` is ``/``, ``~0`` is ``~``, ``""`` is the whole
    document, ``-`` appends to an array in ``add``). Operations apply in order to one copy of
    the original; the first failing operation aborts the whole patch.

    Errors: 400 when the document is malformed (not a list, an operation that is not an
    object, a missing or unknown ``op``, a missing ``path``/``from``/``value``, a pointer not
    starting with ``/``). 422 when an operation does not apply (missing path, index out of
    range, failed ``test``, move into own child).

    Note: kube-apiserver uses evanphx/json-patch v4, which is laxer than the RFC. It answers
    422 for per-operation format errors too, accepts negative and zero-padded array indices,
    lets ``replace`` create a missing object member, and lets ``test`` of a missing path
    against ``null`` pass. This function keeps to the RFC on all these points: a patch
    accepted here is accepted by kube-apiserver with the same result.
    """
    if not isinstance(operations, list):
        raise PatchError(
            f"invalid JSON patch: expected a JSON array of operations, got {json_kind(operations)}",
            400,
        )
    ops = [_parse_operation(i, op) for i, op in enumerate(operations)]
    doc = _copy(original)
    try:
        for index, (name, path, src, value) in enumerate(ops):
            doc = _apply_operation(doc, index, name, path, src, value)
    except RecursionError:
        raise PatchError("JSON patch document is nested too deeply", 400) from None
    return doc


_JSON_PATCH_OPS: Final = frozenset({"add", "remove", "replace", "move", "copy", "test"})


def _parse_operation(index: int, op: Any) -> tuple[str, list[str], list[str] | None, Any]:
    """Validate one operation; returns (op, path tokens, from tokens, value)."""
    where = f"JSON patch operation {index}"
    if not isinstance(op, dict):
        raise PatchError(f"{where}: expected an object, got {json_kind(op)}", 400)
    name = op.get("op")
    if not isinstance(name, str):
        raise PatchError(f"{where}: missing or non-string 'op'", 400)
    if name not in _JSON_PATCH_OPS:
        raise PatchError(f"{where}: unknown op {name!r}", 400)
    if "path" not in op:
        raise PatchError(f"{where} ({name}): missing 'path'", 400)
    path = _parse_pointer(op["path"], f"{where} ({name}) path")
    src: list[str] | None = None
    if name in ("move", "copy"):
        if "from" not in op:
            raise PatchError(f"{where} ({name}): missing 'from'", 400)
        src = _parse_pointer(op["from"], f"{where} ({name}) from")
    value: Any = _MISSING
    if name in ("add", "replace", "test"):
        if "value" not in op:
            raise PatchError(f"{where} ({name}): missing 'value'", 400)
        value = op["value"]
    return name, path, src, value


def _parse_pointer(pointer: Any, where: str) -> list[str]:
    if not isinstance(pointer, str):
        raise PatchError(f"{where}: JSON pointer must be a string, got {json_kind(pointer)}", 400)
    if pointer == "":
        return []
    if pointer[0] != "/":
        raise PatchError(f"{where}: JSON pointer {pointer!r} must start with '/'", 400)
    tokens = pointer[1:].split("/")
    for i, token in enumerate(tokens):
        if "~" in token:
            rest = token.replace("~0", "").replace("~1", "")
            if "~" in rest:
                raise PatchError(f"{where}: invalid escape in JSON pointer {pointer!r}", 400)
            tokens[i] = token.replace("~1", "/").replace("~0", "~")
    return tokens


def _pointer(tokens: list[str]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def _array_index(token: str, size: int, *, for_add: bool, tokens: list[str]) -> int:
    """Index for an array token. ``-`` (append) is only valid for add."""
    if for_add and token == "-":
        return size
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"path {_pointer(tokens)!r}: invalid array index {token!r}", 422)
    index = int(token)
    limit = size if for_add else size - 1
    if index > limit:
        raise PatchError(
            f"path {_pointer(tokens)!r}: array index {index} out of range (size {size})", 422
        )
    return index


def _resolve(doc: Any, tokens: list[str]) -> Any:
    """The value at ``tokens``; PatchError(422) when it does not exist."""
    node = doc
    for depth, token in enumerate(tokens):
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"path {_pointer(tokens[: depth + 1])!r} does not exist", 422)
            node = node[token]
        elif isinstance(node, list):
            node = node[_array_index(token, len(node), for_add=False, tokens=tokens[: depth + 1])]
        else:
            raise PatchError(
                f"path {_pointer(tokens[: depth + 1])!r} does not exist "
                f"(parent is a {json_kind(node)})",
                422,
            )
    return node


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_array_index(last, len(parent), for_add=True, tokens=tokens), value)
    else:
        raise PatchError(
            f"path {_pointer(tokens)!r}: cannot add to a {json_kind(parent)} parent", 422
        )
    return doc


def _remove(doc: Any, tokens: list[str]) -> Any:
    """Remove and return the value at ``tokens``."""
    if not tokens:
        raise PatchError("cannot remove the whole document (path '')", 422)
    parent = _resolve(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {_pointer(tokens)!r} does not exist", 422)
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_array_index(last, len(parent), for_add=False, tokens=tokens))
    raise PatchError(f"path {_pointer(tokens)!r} does not exist", 422)


def _apply_operation(
    doc: Any, index: int, name: str, path: list[str], src: list[str] | None, value: Any
) -> Any:
    try:
        if name == "add":
            return _add(doc, path, _copy(value))
        if name == "remove":
            _remove(doc, path)
            return doc
        if name == "replace":
            if not path:
                return _copy(value)
            _resolve(doc, path)  # must exist
            parent = _resolve(doc, path[:-1])
            if isinstance(parent, dict):
                parent[path[-1]] = _copy(value)
            else:
                parent[_array_index(path[-1], len(parent), for_add=False, tokens=path)] = _copy(
                    value
                )
            return doc
        if name == "test":
            actual = _resolve(doc, path)
            if not _json_equal(actual, value):
                raise PatchError(
                    f"test failed: value at {_pointer(path)!r} is {_show(actual)}, "
                    f"not {_show(value)}",
                    422,
                )
            return doc
        assert src is not None
        if name == "copy":
            return _add(doc, path, _copy(_resolve(doc, src)))
        # move
        if path == src:
            _resolve(doc, src)
            return doc
        if len(path) > len(src) and path[: len(src)] == src:
            raise PatchError(
                f"cannot move {_pointer(src)!r} into its own child {_pointer(path)!r}", 422
            )
        moved = _remove(doc, src)
        return _add(doc, path, moved)
    except PatchError as err:
        raise PatchError(
            f"JSON patch operation {index} ({name}): {err.message}", err.code
        ) from None


# --------------------------------------------------------------------------------------
# Strategic merge patch: schema
# --------------------------------------------------------------------------------------

FieldKindName = Literal["struct", "list", "map", "scalar"]
PatchStrategy = Literal["merge", "replace"]


@dataclass(frozen=True, slots=True)
class FieldSchema:
    """Patch metadata of one field of a Go struct (from its ``patchStrategy`` tags).

    * ``kind="struct"``: nested struct; ``schema`` describes it (``None``: no strategic
      fields inside, merges like JSON merge patch). ``strategy="replace"`` replaces it whole.
    * ``kind="list"``: ``strategy="merge"`` merges; with ``merge_key`` for lists of objects
      (``schema`` describes the element struct), without it for lists of primitives
      (set union, e.g. finalizers). ``strategy=None`` is atomic: the patch replaces the list.
    * ``kind="map"``: ``map[string]X``; merges key by key.
    * ``kind="scalar"``: replaced.

    ``retain_keys`` records the ``retainKeys`` strategy (volume sources, deployment strategy).
    The ``$retainKeys`` directive is honoured wherever it appears, as upstream does, so this
    flag is descriptive only.
    """

    kind: FieldKindName
    strategy: PatchStrategy | None = None
    merge_key: str | None = None
    retain_keys: bool = False
    schema: StructSchema | None = None


@dataclass(frozen=True, slots=True)
class StructSchema:
    """Strategic-merge-patch schema of a Go struct: its JSON field names -> metadata.

    Only fields whose patch behaviour matters are listed. Any other field behaves like a
    JSON merge patch field (maps merge recursively, lists are replaced), which matches
    upstream for plain structs and for lists without a patch strategy.
    """

    name: str
    fields: Mapping[str, FieldSchema]

    def field(self, key: str) -> FieldSchema | None:
        return self.fields.get(key)


def _schema(name: str, fields: dict[str, FieldSchema]) -> StructSchema:
    return StructSchema(name, MappingProxyType(dict(fields)))


def _struct(
    schema: StructSchema | None = None,
    *,
    strategy: PatchStrategy | None = None,
    retain_keys: bool = False,
) -> FieldSchema:
    return FieldSchema("struct", strategy=strategy, retain_keys=retain_keys, schema=schema)


def _keyed_list(
    merge_key: str, elem: StructSchema | None = None, *, retain_keys: bool = False
) -> FieldSchema:
    """``patchStrategy:"merge" patchMergeKey:"<merge_key>"``: list of objects merged by key."""
    return FieldSchema(
        "list", strategy="merge", merge_key=merge_key, retain_keys=retain_keys, schema=elem
    )


def _set_list() -> FieldSchema:
    """``patchStrategy:"merge"`` on a list of primitives: set union."""
    return FieldSchema("list", strategy="merge")


def _atomic_list(elem: StructSchema | None = None) -> FieldSchema:
    """No patch strategy: the patch replaces the whole list."""
    return FieldSchema("list", schema=elem)


_MAP: Final = FieldSchema("map")

# Field tags from k8s.io/api (core/v1, apps/v1, batch/v1) and k8s.io/apimachinery (meta/v1).
# Every list field reachable in the kinds below was checked against the tags compiled into
# kubectl 1.33 (merge vs. atomic, merge key). Fields added since then are treated as atomic.

OBJECT_META: Final = _schema(
    "ObjectMeta",
    {
        "labels": _MAP,
        "annotations": _MAP,
        "ownerReferences": _keyed_list("uid"),
        "finalizers": _set_list(),
        "managedFields": _atomic_list(),
    },
)

LABEL_SELECTOR: Final = _schema(
    "LabelSelector", {"matchLabels": _MAP, "matchExpressions": _atomic_list()}
)

RESOURCE_REQUIREMENTS: Final = _schema(
    "ResourceRequirements", {"limits": _MAP, "requests": _MAP, "claims": _atomic_list()}
)


def _container_schema(name: str) -> StructSchema:
    # Container and EphemeralContainer (EphemeralContainerCommon) carry the same tags.
    return _schema(
        name,
        {
            "command": _atomic_list(),
            "args": _atomic_list(),
            "ports": _keyed_list("containerPort"),
            "envFrom": _atomic_list(),
            "env": _keyed_list("name"),
            "resources": _struct(RESOURCE_REQUIREMENTS),
            "resizePolicy": _atomic_list(),
            "volumeMounts": _keyed_list("mountPath"),
            "volumeDevices": _keyed_list("devicePath"),
        },
    )


CONTAINER: Final = _container_schema("Container")
EPHEMERAL_CONTAINER: Final = _container_schema("EphemeralContainer")

HOST_ALIAS: Final = _schema("HostAlias", {"hostnames": _atomic_list()})

PERSISTENT_VOLUME_CLAIM_SPEC: Final = _schema(
    "PersistentVolumeClaimSpec",
    {"accessModes": _atomic_list(), "selector": _struct(LABEL_SELECTOR)},
)

# Volume inlines VolumeSource; only the generic ephemeral volume embeds strategic fields
# (the claim template's ObjectMeta).
VOLUME: Final = _schema(
    "Volume",
    {
        "ephemeral": _struct(
            _schema(
                "EphemeralVolumeSource",
                {
                    "volumeClaimTemplate": _struct(
                        _schema(
                            "PersistentVolumeClaimTemplate",
                            {
                                "metadata": _struct(OBJECT_META),
                                "spec": _struct(PERSISTENT_VOLUME_CLAIM_SPEC),
                            },
                        )
                    )
                },
            )
        )
    },
)

POD_SPEC: Final = _schema(
    "PodSpec",
    {
        # The list tag is `patchStrategy:"merge,retainKeys"`: kubectl sends $retainKeys in each
        # volume so that switching the volume source drops the old one.
        "volumes": _keyed_list("name", VOLUME, retain_keys=True),
        "initContainers": _keyed_list("name", CONTAINER),
        "containers": _keyed_list("name", CONTAINER),
        "ephemeralContainers": _keyed_list("name", EPHEMERAL_CONTAINER),
        "imagePullSecrets": _keyed_list("name"),
        "hostAliases": _keyed_list("ip", HOST_ALIAS),
        # Upstream PodSpec.Tolerations has NO patchStrategy tag: it is atomic, so a strategic
        # patch replaces the whole list (a common surprise; `kubectl patch` users hit it).
        "tolerations": _atomic_list(),
        "readinessGates": _atomic_list(),
        "topologySpreadConstraints": _keyed_list("topologyKey"),
        "schedulingGates": _keyed_list("name"),
        "resourceClaims": _keyed_list("name", retain_keys=True),
        "nodeSelector": _MAP,
        "overhead": _MAP,
        "resources": _struct(RESOURCE_REQUIREMENTS),
    },
)

POD_STATUS: Final = _schema(
    "PodStatus",
    {
        "conditions": _keyed_list("type"),
        "podIPs": _keyed_list("ip"),
        "hostIPs": _keyed_list("ip"),
        "initContainerStatuses": _atomic_list(),
        "containerStatuses": _atomic_list(),
        "ephemeralContainerStatuses": _atomic_list(),
        "resourceClaimStatuses": _keyed_list("name", retain_keys=True),
    },
)

POD_TEMPLATE_SPEC: Final = _schema(
    "PodTemplateSpec", {"metadata": _struct(OBJECT_META), "spec": _struct(POD_SPEC)}
)

_CONDITIONS_STATUS: Final = {"conditions": _keyed_list("type")}


def _object(name: str, **parts: StructSchema) -> StructSchema:
    fields = {"metadata": _struct(OBJECT_META)}
    fields.update({key: _struct(schema) for key, schema in parts.items()})
    return _schema(name, fields)


def _workload_spec(name: str, extra: dict[str, FieldSchema] | None = None) -> StructSchema:
    fields = {"template": _struct(POD_TEMPLATE_SPEC), "selector": _struct(LABEL_SELECTOR)}
    fields.update(extra or {})
    return _schema(name, fields)


POD: Final = _object("Pod", spec=POD_SPEC, status=POD_STATUS)

NODE: Final = _object(
    "Node",
    spec=_schema("NodeSpec", {"podCIDRs": _set_list(), "taints": _atomic_list()}),
    status=_schema(
        "NodeStatus",
        {
            "capacity": _MAP,
            "allocatable": _MAP,
            "conditions": _keyed_list("type"),
            "addresses": _keyed_list("type"),
            "images": _atomic_list(),
            "volumesInUse": _atomic_list(),
            "volumesAttached": _atomic_list(),
        },
    ),
)

NAMESPACE: Final = _object(
    "Namespace",
    spec=_schema("NamespaceSpec", {"finalizers": _atomic_list()}),
    status=_schema("NamespaceStatus", _CONDITIONS_STATUS),
)

PERSISTENT_VOLUME_CLAIM: Final = _object(
    "PersistentVolumeClaim",
    spec=PERSISTENT_VOLUME_CLAIM_SPEC,
    status=_schema(
        "PersistentVolumeClaimStatus",
        {"conditions": _keyed_list("type"), "accessModes": _atomic_list(), "capacity": _MAP},
    ),
)

SERVICE: Final = _object(
    "Service",
    spec=_schema(
        "ServiceSpec",
        {
            "ports": _keyed_list("port"),
            "selector": _MAP,
            "clusterIPs": _atomic_list(),
            "externalIPs": _atomic_list(),
            "ipFamilies": _atomic_list(),
            "loadBalancerSourceRanges": _atomic_list(),
        },
    ),
    status=_schema(
        "ServiceStatus",
        {"conditions": _keyed_list("type"), "loadBalancer": _struct()},
    ),
)

CONFIG_MAP: Final = _schema(
    "ConfigMap", {"metadata": _struct(OBJECT_META), "data": _MAP, "binaryData": _MAP}
)
SECRET: Final = _schema(
    "Secret", {"metadata": _struct(OBJECT_META), "data": _MAP, "stringData": _MAP}
)
EVENT: Final = _object("Event")
EVENTS_V1_EVENT: Final = _object("Event")
ENDPOINTS: Final = _schema(
    "Endpoints", {"metadata": _struct(OBJECT_META), "subsets": _atomic_list()}
)

STATEFUL_SET: Final = _object(
    "StatefulSet",
    spec=_workload_spec(
        "StatefulSetSpec",
        {"volumeClaimTemplates": _atomic_list()},  # no patch strategy upstream
    ),
    status=_schema("StatefulSetStatus", _CONDITIONS_STATUS),
)
DEPLOYMENT: Final = _object(
    "Deployment",
    spec=_workload_spec(
        "DeploymentSpec",
        {"strategy": _struct(_schema("DeploymentStrategy", {}), retain_keys=True)},
    ),
    status=_schema("DeploymentStatus", _CONDITIONS_STATUS),
)
REPLICA_SET: Final = _object(
    "ReplicaSet",
    spec=_workload_spec("ReplicaSetSpec"),
    status=_schema("ReplicaSetStatus", _CONDITIONS_STATUS),
)
DAEMON_SET: Final = _object(
    "DaemonSet",
    spec=_workload_spec("DaemonSetSpec"),
    status=_schema("DaemonSetStatus", _CONDITIONS_STATUS),
)
CONTROLLER_REVISION: Final = _object("ControllerRevision")
JOB: Final = _object(
    "Job",
    spec=_workload_spec("JobSpec"),
    status=_schema("JobStatus", _CONDITIONS_STATUS),
)
LEASE: Final = _object("Lease")
SCALE: Final = _object("Scale")

_KIND_SCHEMAS: Final[Mapping[tuple[str, str], StructSchema]] = MappingProxyType(
    {
        ("", "Pod"): POD,
        ("", "Node"): NODE,
        ("", "Namespace"): NAMESPACE,
        ("", "PersistentVolumeClaim"): PERSISTENT_VOLUME_CLAIM,
        ("", "Service"): SERVICE,
        ("", "ConfigMap"): CONFIG_MAP,
        ("", "Secret"): SECRET,
        ("", "Event"): EVENT,
        ("", "Endpoints"): ENDPOINTS,
        ("apps", "StatefulSet"): STATEFUL_SET,
        ("apps", "Deployment"): DEPLOYMENT,
        ("apps", "ReplicaSet"): REPLICA_SET,
        ("apps", "DaemonSet"): DAEMON_SET,
        ("apps", "ControllerRevision"): CONTROLLER_REVISION,
        ("batch", "Job"): JOB,
        ("coordination.k8s.io", "Lease"): LEASE,
        ("autoscaling", "Scale"): SCALE,
        ("events.k8s.io", "Event"): EVENTS_V1_EVENT,
    }
)


def strategic_schema_for(group: str, kind: str) -> StructSchema | None:
    """The strategic-merge-patch schema of a built-in kind (``""`` group is core).

    ``None`` for kinds without one (custom resources and kinds not modelled here): the
    server then answers 415 like kube-apiserver does for custom resources.
    """
    return _KIND_SCHEMAS.get((group, kind))


# --------------------------------------------------------------------------------------
# Strategic merge patch: application
# --------------------------------------------------------------------------------------

_PATCH: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_SET_ORDER: Final = "$setElementOrder"
_DELETE_PRIMITIVE: Final = "$deleteFromPrimitiveList"
_DROP: Final = object()  # "leave this key/element out" marker for _clean_new

_ERR_PRIMITIVE_LIST: Final = "invalid patch format of primitive list"
_ERR_RETAIN_KEYS: Final = "invalid patch format of retainKeys"
_ERR_SET_ORDER: Final = "invalid patch format of setElementOrder list"


def apply_strategic_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], schema: StructSchema | None
) -> dict[str, Any]:
    """Apply a Kubernetes strategic merge patch to ``original`` and return the result.

    ``schema`` is the kind's schema (:func:`strategic_schema_for`); ``None`` applies the
    directives with JSON-merge-patch behaviour for every field.
    """
    if not isinstance(patch, dict):
        raise PatchError(
            f"invalid JSON document: a strategic merge patch must be a JSON object, "
            f"got {json_kind(patch)}",
            400,
        )
    if original is None:
        original = {}
    if not isinstance(original, dict):
        raise PatchError(f"cannot patch a {json_kind(original)}: expected a JSON object", 422)
    try:
        return _merge_map(original, patch, schema, "")
    except RecursionError:
        raise PatchError("strategic merge patch is nested too deeply", 400) from None


def _is_directive_key(key: str) -> bool:
    return key[:1] == "$" and (
        key in (_PATCH, _RETAIN_KEYS)
        or key.startswith(_SET_ORDER)
        or key.startswith(_DELETE_PRIMITIVE)
    )


def _strip(value: Any) -> Any:
    """Copy raw patch content taken as-is (what decoding into the Go struct keeps).

    Drops directive keys and null-valued members; list items are all kept.
    """
    if isinstance(value, dict):
        return {
            k: _strip(v) for k, v in value.items() if v is not None and not _is_directive_key(k)
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _clean_new(value: Any) -> Any:
    """Copy a patch value for a key the original lacks.

    Nulls are discarded and maps carrying ``$patch`` are left out (the result is ``_DROP`` when
    ``value`` itself is such a map), like upstream. Other directive keys are dropped too.
    """
    if isinstance(value, dict):
        if _PATCH in value:
            return _DROP
        out: dict[str, Any] = {}
        for k, v in value.items():
            if v is None or _is_directive_key(k):
                continue
            cleaned = _clean_new(v)
            if cleaned is not _DROP:
                out[k] = cleaned
        return out
    if isinstance(value, list):
        items = [_clean_new(v) for v in value]
        return [v for v in items if v is not _DROP]
    return value


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _at(path: str) -> str:
    return f"{path}: " if path else ""


def _directive_field(key: str, prefix: str, message: str, path: str) -> str:
    head, sep, field = key.partition("/")
    if not sep or head != prefix:
        raise PatchError(f"{_at(path)}{message}: bad directive key {key!r}", 400)
    return field


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], schema: StructSchema | None, path: str
) -> dict[str, Any]:
    """Merge ``patch`` into a copy of ``original`` (both JSON objects)."""
    if _PATCH in patch:
        directive = patch[_PATCH]
        if directive == "replace":
            return {
                k: _strip(v) for k, v in patch.items() if v is not None and not _is_directive_key(k)
            }
        if directive == "delete":
            return {}
        raise PatchError(
            f"{_at(path)}unknown patch type: {_show(directive)} in map: {_show(patch)}", 400
        )

    result = dict(original)  # values shared for now; untouched ones are copied at the end
    handled: set[str] = set()
    deletions: list[tuple[str, Any]] = []
    if _RETAIN_KEYS in patch:
        _apply_retain_keys(result, patch, path)
    for key, value in patch.items():
        if key[:1] != "$":
            continue
        if key.startswith(_SET_ORDER):
            field = _directive_field(key, _SET_ORDER, _ERR_SET_ORDER, path)
            if _apply_set_element_order(result, patch, field, value, schema, path):
                handled.add(field)
        elif key.startswith(_DELETE_PRIMITIVE):
            field = _directive_field(key, _DELETE_PRIMITIVE, _ERR_PRIMITIVE_LIST, path)
            deletions.append((field, value))

    for field, value in deletions:
        _merge_field(result, field, value, schema, path, is_delete=True)
    for key, value in patch.items():
        if key in handled or (key[:1] == "$" and _is_directive_key(key)):
            continue
        _merge_field(result, key, value, schema, path, is_delete=False)

    for key, value in result.items():
        if isinstance(value, (dict, list)) and key in original and value is original[key]:
            result[key] = _copy(value)
    return result


def _apply_retain_keys(result: dict[str, Any], patch: dict[str, Any], path: str) -> None:
    retain = patch[_RETAIN_KEYS]
    if not isinstance(retain, list):
        raise PatchError(f"{_at(path)}{_ERR_RETAIN_KEYS}: $retainKeys must be a list", 400)
    keep = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if (
            value is None
            or key == _RETAIN_KEYS
            or key.startswith(_DELETE_PRIMITIVE)
            or key.startswith(_SET_ORDER)
        ):
            continue
        if key not in keep:
            raise PatchError(
                f"{_at(path)}{_ERR_RETAIN_KEYS}: field {key!r} is in the patch "
                f"but not in $retainKeys {_show(retain)}",
                400,
            )
    for key in [k for k in result if k not in keep]:
        del result[key]


def _merge_field(
    result: dict[str, Any],
    key: str,
    value: Any,
    schema: StructSchema | None,
    path: str,
    *,
    is_delete: bool,
) -> None:
    """Merge one patch member into ``result`` (in place). ``is_delete``: a deletion list."""
    if value is None:
        result.pop(key, None)
        return
    if key not in result:
        if not is_delete:
            cleaned = _clean_new(value)
            if cleaned is not _DROP:
                result[key] = cleaned
        return
    current = result[key]
    field = schema.fields.get(key) if schema is not None else None
    if isinstance(current, dict) and isinstance(value, dict):
        if field is not None and field.strategy == "replace":
            result[key] = _strip(value)
        else:
            sub = field.schema if field is not None else None
            result[key] = _merge_map(current, value, sub, _child(path, key))
    elif isinstance(current, list) and isinstance(value, list):
        if is_delete or (field is not None and field.kind == "list" and field.strategy == "merge"):
            # Deletion lists apply whatever the field's strategy, as upstream does.
            result[key] = _merge_list(current, value, field, is_delete, _child(path, key))
        else:
            result[key] = _strip(value)
    elif json_kind(current) != json_kind(value):
        if not is_delete:
            cleaned = _clean_new(value)
            if cleaned is _DROP:
                del result[key]
            else:
                result[key] = cleaned
    else:
        result[key] = value  # same-kind scalars


def _element_kind(original: list[Any], patch: list[Any], path: str) -> str:
    """The common JSON kind of the items of both lists (upstream ``sliceElementType``)."""
    kind: str | None = None
    for item in (*original, *patch):
        item_kind = json_kind(item)
        if kind is None:
            if item_kind == "array":
                raise PatchError(f"{_at(path)}lists of lists are not supported", 422)
            kind = item_kind
        elif item_kind != kind:
            raise PatchError(
                f"{_at(path)}list element types are not identical: {kind} and {item_kind}", 422
            )
    return kind or "null"


def _merge_list(
    original: list[Any],
    patch: list[Any],
    field: FieldSchema | None,
    is_delete: bool,
    path: str,
    view: _GoBackingArray | None = None,
) -> list[Any]:
    if not original and not patch:
        return []
    kind = _element_kind(original, patch, path)
    merge_key = field.merge_key if field is not None else None
    if kind != "object":
        if is_delete:
            drop = {_hkey(v) for v in patch}
            return [v for v in original if _hkey(v) not in drop]
        if merge_key:
            raise PatchError(
                f"{_at(path)}expected a list of objects with merge key {merge_key!r}, "
                f"got {kind} items",
                422,
            )
        return _merge_primitive_list(original, patch)
    if not merge_key:
        if is_delete:
            raise PatchError(f"{_at(path)}{_ERR_PRIMITIVE_LIST}: items are objects", 400)
        raise PatchError(f"{_at(path)}cannot merge lists of objects without a merge key", 422)
    elem = field.schema if field is not None else None
    return _merge_object_list(original, patch, merge_key, elem, path, view)


def _merge_primitive_list(original: list[Any], patch: list[Any]) -> list[Any]:
    """Set union; patch items in patch order, interleaved with server-only items."""
    patch_index: dict[Any, int] = {}
    for i, v in enumerate(patch):
        patch_index.setdefault(_hkey(v), i)
    server_index: dict[Any, int] = {}
    server_only: list[Any] = []
    patch_items: list[tuple[int, Any]] = []
    seen: set[Any] = set()
    for i, v in enumerate(original):
        h = _hkey(v)
        server_index.setdefault(h, i)
        if h in seen:
            continue
        seen.add(h)
        if h in patch_index:
            patch_items.append((patch_index[h], v))
        else:
            server_only.append(v)
    for v in patch:
        h = _hkey(v)
        if h not in seen:
            seen.add(h)
            patch_items.append((patch_index[h], v))
    patch_items.sort(key=lambda pair: pair[0])
    return _interleave(server_only, [v for _, v in patch_items], server_index, _hkey)


def _interleave(
    server_only: list[Any],
    patch_items: list[Any],
    server_index: dict[Any, int],
    key_of: Callable[[Any], Any],
) -> list[Any]:
    """Upstream ``mergeSortedSlice``: a server-only item goes before the next patch item when
    both are in the server list and it came first there; otherwise the patch item goes first."""
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) and j < len(patch_items):
        left = server_index.get(key_of(server_only[i]), -1)
        right = server_index.get(key_of(patch_items[j]), -1)
        if left >= 0 and right >= 0 and left < right:
            out.append(server_only[i])
            i += 1
        else:
            out.append(patch_items[j])
            j += 1
    out.extend(server_only[i:])
    out.extend(patch_items[j:])
    return out


def _key_path(path: str, merge_key: str, value: Any) -> str:
    return f"{path}[{merge_key}={_show(value, 60)}]"


def _no_merge_key(path: str, item: Any, merge_key: str, code: int) -> PatchError:
    return PatchError(
        f"{_at(path)}map: {_show(item)} does not contain declared merge key: {merge_key}", code
    )


class _GoBackingArray:
    """Merge-key view of the Go backing array behind the original list.

    Upstream's ``mergeSlice`` deletes entries in place (``append(s[:i], s[i+1:]...)``) and
    appends new entries in place while capacity allows. ``$setElementOrder`` then orders
    server-only items against the original slice header, which now sees that mutated array.
    The visible window ``[:len(original)]`` does not depend on the capacity: deletions shift the
    survivors left and leave stale tail entries, then new entries overwrite the freed tail.
    This replays those writes so that ordering matches kube-apiserver.
    """

    __slots__ = ("keys", "length")

    def __init__(self, keys: list[Any]) -> None:
        self.keys = keys
        self.length = len(keys)

    def delete(self, key: Any) -> None:
        keys = self.keys
        while True:
            for i in range(self.length):
                if keys[i] == key:
                    break
            else:
                return
            keys[i : self.length - 1] = keys[i + 1 : self.length]
            self.length -= 1

    def append(self, key: Any) -> None:
        if self.length < len(self.keys):
            self.keys[self.length] = key
        self.length += 1


def _merge_object_list(
    original: list[Any],
    patch: list[Any],
    merge_key: str,
    elem: StructSchema | None,
    path: str,
    view: _GoBackingArray | None = None,
) -> list[Any]:
    server = original
    plain: list[dict[str, Any]] = []
    replace = False
    for item in patch:
        if _PATCH not in item:
            plain.append(item)
            continue
        directive = item[_PATCH]
        if directive == "delete":
            if merge_key not in item:
                raise _no_merge_key(path, item, merge_key, 400)
            gone = _hkey(item[merge_key])
            server = [v for v in server if not (merge_key in v and _hkey(v[merge_key]) == gone)]
            if view is not None:
                view.delete(gone)
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError(f"{_at(path)}merging lists cannot yet be specified in the patch", 400)
        else:
            raise PatchError(
                f"{_at(path)}unknown patch type: {_show(directive)} in map: {_show(item)}", 400
            )

    if replace:
        replaced = []
        for item in plain:
            if merge_key not in item:
                raise _no_merge_key(path, item, merge_key, 400)
            replaced.append(_strip(item))
        return replaced

    merged: list[Any] = list(server)
    fresh: set[int] = set()
    position: dict[Any, int] = {}
    for i, v in enumerate(merged):
        if merge_key in v:
            position.setdefault(_hkey(v[merge_key]), i)
    patch_index: dict[Any, int] = {}
    for n, item in enumerate(plain):
        if merge_key not in item:
            raise _no_merge_key(path, item, merge_key, 400)
        key_value = item[merge_key]
        h = _hkey(key_value)
        patch_index.setdefault(h, n)
        i = position.get(h, -1)
        if i < 0:
            new_item = _strip(item)
            position[h] = len(merged)
            merged.append(new_item)
            if view is not None:
                view.append(h)
        else:
            new_item = _merge_map(merged[i], item, elem, _key_path(path, merge_key, key_value))
            merged[i] = new_item
        fresh.add(id(new_item))

    server_index: dict[Any, int] = {}
    for i, v in enumerate(server):
        if merge_key not in v:
            raise _no_merge_key(path, v, merge_key, 422)
        server_index.setdefault(_hkey(v[merge_key]), i)
    server_only: list[Any] = []
    patch_items: list[tuple[int, Any]] = []
    for v in merged:
        h = _hkey(v[merge_key])
        if id(v) not in fresh:
            v = _copy(v)
        if h in patch_index:
            patch_items.append((patch_index[h], v))
        else:
            server_only.append(v)
    patch_items.sort(key=lambda pair: pair[0])

    def key_of(v: Any) -> Any:
        return _hkey(v[merge_key])

    return _interleave(server_only, [v for _, v in patch_items], server_index, key_of)


def _apply_set_element_order(
    result: dict[str, Any],
    patch: dict[str, Any],
    field_name: str,
    order: Any,
    schema: StructSchema | None,
    path: str,
) -> bool:
    """Handle ``$setElementOrder/<field_name>`` with the field's patch list, if any.

    Returns True when the field is fully handled (the main loop must skip its patch list).
    """
    where = _child(path, field_name)
    if not isinstance(order, list):
        raise PatchError(f"{_at(where)}{_ERR_SET_ORDER}: expected a list", 400)
    field = schema.fields.get(field_name) if schema is not None else None
    if field is None or field.kind != "list" or field.strategy != "merge":
        # Upstream only sends (and only copes with) this for merging lists; elsewhere the
        # directive carries no meaning, so it is ignored and the list patches normally.
        return False
    merge_key = field.merge_key
    in_original = field_name in result
    in_patch = field_name in patch
    if not in_original and not in_patch:
        return False
    server = result.get(field_name)
    patch_list = patch.get(field_name)
    if in_original and not isinstance(server, list):
        raise PatchError(f"{_at(where)}expected a list in the object, got {json_kind(server)}", 422)
    if in_patch and not isinstance(patch_list, list):
        raise PatchError(
            f"{_at(where)}expected a list in the patch, got {json_kind(patch_list)}", 400
        )

    if patch_list:
        _check_against_order(patch_list, order, merge_key, where)

    def key_of(v: Any) -> Any:
        return _hkey(v[merge_key]) if merge_key else _hkey(v)

    view: _GoBackingArray | None = None
    if merge_key and server:
        view = _GoBackingArray(
            [
                _hkey(v[merge_key]) if isinstance(v, dict) and merge_key in v else object()
                for v in server
            ]
        )
    if server is not None and patch_list is not None:
        merged = _merge_list(server, patch_list, field, False, where, view)
    elif server is not None:
        merged = _copy(server)
    else:
        merged = _clean_new(patch_list)

    order_index: dict[Any, int] = {}
    for i, item in enumerate(order):
        if merge_key and (not isinstance(item, dict) or merge_key not in item):
            raise _no_merge_key(where, item, merge_key, 400)
        order_index.setdefault(key_of(item), i)
    if merge_key:
        for item in merged:
            if not isinstance(item, dict) or merge_key not in item:
                raise _no_merge_key(where, item, merge_key, 422)

    server_index: dict[Any, int] = {}
    if view is not None:
        for i, key in enumerate(view.keys):
            server_index.setdefault(key, i)
    else:
        for i, item in enumerate(server or ()):
            server_index.setdefault(key_of(item), i)
    listed = [v for v in merged if key_of(v) in order_index]
    listed.sort(key=lambda v: order_index[key_of(v)])
    unlisted = [v for v in merged if key_of(v) not in order_index]
    unlisted.sort(key=lambda v: server_index.get(key_of(v), len(server_index)))
    result[field_name] = _interleave(unlisted, listed, server_index, key_of)
    return True


def _check_against_order(
    patch_list: list[Any], order: list[Any], merge_key: str | None, path: str
) -> None:
    """Upstream ``validatePatchWithSetOrderList``: patch items (deletions aside) must appear
    in ``order``, in the same relative order."""
    if not order:
        return
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise PatchError(
                    f"{_at(path)}expected list items to be objects, got {json_kind(item)}", 400
                )
        items = [v for v in patch_list if v.get(_PATCH) != "delete"]
    else:
        items = patch_list
    p = o = 0
    while p < len(items) and o < len(order):
        item = items[p]
        if isinstance(item, dict) and _PATCH in item:
            p += 1
            continue
        if _order_key_equal(item, order[o], merge_key, path):
            p += 1
        o += 1
    if p < len(items):
        raise PatchError(
            f"{_at(path)}the order in patch list {_show(patch_list)} doesn't match "
            f"$setElementOrder list {_show(order)}",
            400,
        )


def _order_key_equal(item: Any, ordered: Any, merge_key: str | None, path: str) -> bool:
    if not merge_key:
        return bool(_hkey(item) == _hkey(ordered))
    for v in (item, ordered):
        if not isinstance(v, dict) or merge_key not in v:
            raise _no_merge_key(path, v, merge_key, 400)
    return bool(_hkey(item[merge_key]) == _hkey(ordered[merge_key]))
