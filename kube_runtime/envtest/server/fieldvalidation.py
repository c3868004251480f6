"""Server-side field validation: the ``fieldValidation`` query parameter of create, update
and patch (kube-apiserver 1.25+; the default is ``Warn``).

A field is *unknown* when the kind's schema has no such field: for a built-in kind, its
OpenAPI definition (:mod:`.openapi_builtin`, Kubernetes' published spec); for a custom
resource, what pruning would drop under the CRD's structural schema, plus unknown fields of
``metadata`` (checked against ``ObjectMeta``). A field is *duplicate* when a JSON object of
the body names it twice. Each is reported by its path, e.g. ``spec.containers[0].foo``.

* ``Strict``: 400 BadRequest, ``<Kind> in version "v1" cannot be handled as a <Kind>:
  strict decoding error: unknown field "spec.foo", duplicate field "spec.bar"``.
* ``Warn``: the unknown fields are dropped and each finding comes back as a ``Warning:
  299 - "unknown field \\"spec.foo\\""`` response header.
* ``Ignore``: dropped silently.

:func:`mode` reads the parameter (422 for any other value), :func:`check` does the work on a
decoded body, and :func:`warning_header` words the findings for the response.
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

import orjson

from kube_runtime.envtest.server import crdschema, errors, openapi_builtin
from kube_runtime.envtest.server.http import Request, Response
from kube_runtime.envtest.server.memo import Memo, json_key
from kube_runtime.envtest.server.resources import ResourceInfo

__all__ = [
    "add_warnings",
    "check",
    "duplicate_fields",
    "json_body",
    "mode",
    "unknown_fields",
    "warning_header",
]

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
_MODES = (IGNORE, STRICT, WARN)
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_OPTIONS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}


def mode(request: Request) -> str:
    """The request's ``fieldValidation`` (``Warn`` when absent); 422 for an unknown value."""
    value = request.param("fieldValidation")
    if value is None or value == "":
        return WARN
    if value not in _MODES:
        options = _OPTIONS.get(request.method, "CreateOptions")
        supported = ", ".join(f'"{m}"' for m in ("", *_MODES))
        cause = errors.Cause(
            "fieldValidation",
            "FieldValueNotSupported",
            f'Unsupported value: "{value}": supported values: {supported}',
        )
        raise errors.invalid(options, "meta.k8s.io", "", [cause])
    return value


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


#: A schema's resolved shape by ``id`` (the schema kept beside it, so that an ``id`` reused by
#: another object is never mistaken for it): what its ``$ref`` chain ends at, as
#: ``(schema, properties, additionalProperties, items)``. The built-in definitions are never
#: mutated (:func:`openapi_builtin.definitions`), so a shape never goes stale.
_SHAPES: dict[int, tuple[Any, Any, Any, Any]] = {}


def _shape(schema: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    got = _SHAPES.get(id(schema))
    if got is not None and got[0] is schema:
        return got
    resolved = schema
    ref = resolved.get("$ref")
    if ref is not None:
        defs = openapi_builtin.definitions()
        while ref is not None:
            resolved = defs.get(ref.removeprefix(openapi_builtin.V2_PREFIX), {})
            ref = resolved.get("$ref")
    extra = resolved.get("additionalProperties")
    items = resolved.get("items")
    got = (
        schema,
        resolved.get("properties"),
        extra if isinstance(extra, dict) else None,
        items if isinstance(items, dict) else None,
    )
    _SHAPES[id(schema)] = got
    return got


def _walk_builtin(
    value: Any, schema: dict[str, Any], path: str, found: list[str], drop: bool
) -> None:
    """Unknown fields of ``value`` under ``schema`` (a node of the built-in definitions, which
    live as long as the process: its resolved shape is cached)."""
    _, props, extra, items = _shape(schema)
    if type(value) is dict:
        if props is not None:
            for key in list(value):
                sub = props.get(key)
                if sub is None:
                    found.append(_child(path, key))
                    if drop:
                        del value[key]
                else:
                    item = value[key]
                    if type(item) is dict or type(item) is list:
                        _walk_builtin(item, sub, _child(path, key), found, drop)
            return
        if extra is not None:
            for key, item in value.items():
                if type(item) is dict or type(item) is list:
                    _walk_builtin(item, extra, _child(path, key), found, drop)
    elif type(value) is list and items is not None:
        for i, item in enumerate(value):
            if type(item) is dict or type(item) is list:
                _walk_builtin(item, items, f"{path}[{i}]", found, drop)


class _Node:
    """A built-in schema node compiled for :func:`_known`: ``keys`` the declared properties
    (None: the schema declares none), ``deep`` the nodes of those of them whose schemas
    declare something that can hold an unknown field (properties, or additionalProperties
    or items that are not leaves: a value under any other, a leaf or a map or list of
    leaves, has none; see :func:`_open`), ``extra`` and ``items`` the nodes of the
    additionalProperties and items that do (None otherwise). Children are compiled with
    their parent, through :data:`_NODES` (schemas are recursive)."""

    __slots__ = ("deep", "extra", "flat", "items", "keys", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.keys: frozenset[str] | None = None
        self.deep: dict[str, _Node] = {}
        self.extra: _Node | None = None
        self.items: _Node | None = None
        #: ``keys`` when nothing under them can hold an unknown field (a struct of leaves,
        #: maps or lists of leaves: an object is known when its keys are), else None.
        self.flat: frozenset[str] | None = None


#: Compiled nodes by the ``id`` of their schema (the schema kept on the node, so that an
#: ``id`` reused by another object is never mistaken for it); built-in definitions are never
#: mutated (:func:`openapi_builtin.definitions`), so a node never goes stale.
_NODES: dict[int, _Node] = {}


def _leaf(schema: dict[str, Any]) -> bool:
    _, props, extra, items = _shape(schema)
    return props is None and extra is None and items is None


def _open(schema: dict[str, Any]) -> bool:
    """Whether no value under ``schema`` has an unknown field: it declares no properties, and
    its additionalProperties and items (if any) are leaves (a map of strings such as
    ``labels``, a list of strings such as ``finalizers``). Its compiled node would pass any
    value; decided on the schema, not on a node that may still be compiling."""
    _, props, extra, items = _shape(schema)
    return props is None and (extra is None or _leaf(extra)) and (items is None or _leaf(items))


def _node(schema: dict[str, Any]) -> _Node:
    got = _NODES.get(id(schema))
    if got is not None and got.schema is schema:
        return got
    with _NODES_LOCK:
        pending: dict[int, _Node] = {}
        node = _compile(schema, pending)
        _NODES.update(pending)  # published when whole: no request sees a node half built
        return node


def _compile(schema: dict[str, Any], pending: dict[int, _Node]) -> _Node:
    """``schema``'s node, new ones kept in ``pending`` (registered before their children
    are compiled: schemas are recursive)."""
    for known in (_NODES, pending):
        got = known.get(id(schema))
        if got is not None and got.schema is schema:
            return got
    node = pending[id(schema)] = _Node(schema)
    _, props, extra, items = _shape(schema)
    if props is not None:
        node.keys = frozenset(props)
        # members that cannot hold an unknown field (leaves, maps and lists of leaves) are
        # not looked into: a struct of them is told by its keys alone
        node.deep = {key: _compile(sub, pending) for key, sub in props.items() if not _open(sub)}
    node.extra = None if extra is None or _open(extra) else _compile(extra, pending)
    node.items = None if items is None or _open(items) else _compile(items, pending)
    if node.keys is not None and not node.deep:
        node.flat = node.keys
    return node


_NODES_LOCK = threading.Lock()


def _known(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` has no unknown field under ``schema`` (the common case, told without
    building paths or looking into what cannot hold one); :func:`_walk_builtin` finds them,
    and says the same (``tests/unit/envtest/test_openapi_field_validation.py`` compares)."""
    return _known_in(value, _node(schema))


def _known_in(value: Any, node: _Node) -> bool:
    if type(value) is dict:
        keys = node.keys
        if keys is not None:
            if not keys.issuperset(value):  # one set operation for every key of the object
                return False
            deep = node.deep
            if len(value) <= len(deep):
                for key, item in value.items():
                    sub = deep.get(key)
                    if sub is not None and not _known_item(item, sub):
                        return False
            else:
                for key, sub in deep.items():
                    item = value.get(key)
                    if item is not None and not _known_item(item, sub):
                        return False
            return True
        extra = node.extra
        if extra is not None:
            for item in value.values():
                if not _known_item(item, extra):
                    return False
        return True
    items = node.items
    if type(value) is list and items is not None:
        flat = items.flat
        for item in value:
            if type(item) is dict:
                if not (flat.issuperset(item) if flat is not None else _known_in(item, items)):
                    return False
            elif type(item) is list and not _known_in(item, items):
                return False
    return True


def _known_item(item: Any, node: _Node) -> bool:
    """:func:`_known_in` of a member, a struct of leaves told by its keys alone."""
    if type(item) is dict:
        flat = node.flat
        return flat.issuperset(item) if flat is not None else _known_in(item, node)
    return type(item) is not list or _known_in(item, node)


#: Whether a ``spec`` has no unknown field, by its compiled node and :func:`json_key`: pods
#: written from one template repeat their spec byte for byte (a pure function of the two).
_SPEC_KNOWN: Memo[bool] = Memo()


def _known_object(obj: Any, node: _Node) -> bool:
    """:func:`_known_in` for a whole object, its ``spec`` through :data:`_SPEC_KNOWN` when
    that can hold an unknown field below its own keys."""
    keys = node.keys
    spec_node = node.deep.get("spec")
    spec = obj.get("spec") if type(obj) is dict else None
    if keys is None or spec_node is None or not spec_node.deep or type(spec) is not dict:
        return _known_in(obj, node)
    if not keys.issuperset(obj):
        return False
    for key, sub in node.deep.items():
        item = obj.get(key)
        if type(item) is not dict and type(item) is not list:
            continue
        encoded = json_key(item) if key == "spec" else None
        if encoded is None:
            if not _known_in(item, sub):
                return False
            continue
        memo_key = (sub, encoded)
        known = _SPEC_KNOWN.get(memo_key)
        if known is None:
            known = _known_in(item, sub)
            _SPEC_KNOWN.put(memo_key, known)
        if not known:
            return False
    return True


def _find_unknown(
    value: Any, schema: dict[str, Any], path: str, found: list[str], drop: bool
) -> None:
    """:func:`_walk_builtin` for what :func:`_known` does not pass."""
    if not _known(value, schema):
        _walk_builtin(value, schema, path, found, drop)


def _definition(name: str) -> dict[str, Any]:
    """The built-in definition ``name`` (its lasting object: walks cache its shape)."""
    return openapi_builtin.definitions().get(name, _NO_SCHEMA)


_NO_SCHEMA: dict[str, Any] = {}


def _removed(before: Any, after: Any, path: str, found: list[str]) -> None:
    """Paths present in ``before`` and gone from ``after`` (what pruning dropped)."""
    if type(before) is dict and type(after) is dict:
        for key, value in before.items():
            if key not in after:
                found.append(_child(path, key))
            else:
                _removed(value, after[key], _child(path, key), found)
    elif type(before) is list and type(after) is list and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            _removed(b, a, f"{path}[{i}]", found)


def unknown_fields(
    info: ResourceInfo, version: str, kind: str, obj: Any, *, drop: bool
) -> list[str]:
    """The unknown fields of ``obj`` (of ``kind``, a built-in or ``info``'s custom kind), in
    document order; with ``drop`` they are removed from ``obj`` (built-in kinds; a custom
    resource's are pruned by the store)."""
    found: list[str] = []
    if type(obj) is not dict:
        return found
    if info.custom and kind == info.kind:
        schema = info.schemas.get(version)
        if schema is not None and not schema.preserves_everything:
            pruned = crdschema.prune(copy.deepcopy(obj), schema)
            _removed({k: v for k, v in obj.items() if k != "metadata"}, pruned, "", found)
        meta = obj.get("metadata")
        if type(meta) is dict:
            _find_unknown(meta, _definition(_OBJECT_META), "metadata", found, drop)
        order = {key: i for i, key in enumerate(obj)}  # document order, as the decoder reports
        found.sort(key=lambda p: order.get(p.split(".", 1)[0].split("[", 1)[0], len(order)))
        return found
    group = "autoscaling" if kind == "Scale" else info.group
    scale_version = "v1" if kind == "Scale" else version
    root = _ROOTS.get((group, scale_version, kind), _ABSENT)
    if root is _ABSENT:
        name = openapi_builtin.kind_definitions(group, scale_version, kind)
        root = _ROOTS[(group, scale_version, kind)] = (
            None if name is None else _node(_definition(name))
        )
    if root is not None and not _known_object(obj, root):
        _walk_builtin(obj, root.schema, "", found, drop)
    return found


#: The compiled root node of a built-in kind by (group, version, kind); None: not built in.
_ROOTS: dict[tuple[str, str, str], _Node | None] = {}
_ABSENT: Any = object()


def duplicate_fields(body: bytes) -> list[str]:
    """Fields a JSON ``body`` names twice in one object, by path; [] for anything else."""
    if b'"' not in body:
        return []
    # Fast path: a body that orjson writes back byte for byte names no field twice (a
    # repeated field would be written once). Compact bodies from orjson and Go clients of
    # plain ASCII data pass; anything else (whitespace, escapes, big numbers) takes the walk.
    try:
        if orjson.dumps(orjson.loads(body)) == body:
            return []
    except orjson.JSONDecodeError:
        pass
    repeated: dict[int, list[str]] = {}

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            dups: list[str] = []
            for key, _ in pairs:
                if key in seen and key not in dups:
                    dups.append(key)
                seen.add(key)
            repeated[id(obj)] = dups
        return obj

    try:
        data = json.loads(body, object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return []
    if not repeated:
        return []
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if type(value) is dict:
            found.extend(_child(path, key) for key in repeated.get(id(value), ()))
            for key, item in value.items():
                walk(item, _child(path, key))
        elif type(value) is list:
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")

    walk(data, "")
    return found


def check(
    request: Request, info: ResourceInfo, version: str, kind: str, obj: Any, body: bytes | None
) -> list[str]:
    """Field validation of a write whose decoded object is ``obj`` (``body``: the raw JSON
    to look for duplicate fields in, None when it is not JSON). Unknown fields of a built-in
    kind are dropped from ``obj``. Returns the warnings; raises 400 under ``Strict``."""
    wanted = mode(request)
    strict = wanted == STRICT
    # A body that is ``obj`` as orjson writes it names no field twice (before the unknown
    # fields are dropped from ``obj``): the common case, without parsing the body again.
    look_for_duplicates = body is not None and wanted != IGNORE and not _written_as(obj, body)
    unknown = unknown_fields(info, version, kind, obj, drop=not strict)
    if wanted == IGNORE:
        return []
    findings = [f'unknown field "{p}"' for p in unknown]
    if look_for_duplicates:
        assert body is not None
        findings += [f'duplicate field "{p}"' for p in duplicate_fields(body)]
    if strict and findings:
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: '
            f"strict decoding error: {', '.join(findings)}"
        )
    return findings


def _written_as(obj: Any, body: bytes) -> bool:
    """Whether ``body`` is ``obj`` as orjson writes it (then no object in it repeats a key:
    a dict cannot)."""
    try:
        return orjson.dumps(obj) == body
    except (TypeError, orjson.JSONEncodeError):
        return False


def json_body(request: Request) -> bytes | None:
    """The request body when it is JSON (where duplicate fields are looked for), else None."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip()
    return request.body if ctype.endswith("json") else None


def add_warnings(response: Response, findings: list[str]) -> Response:
    """``response`` with a ``Warning`` header for ``findings`` (none: unchanged)."""
    if findings:
        response.headers["Warning"] = warning_header(findings)
    return response


def warning_header(findings: list[str]) -> str:
    """The ``Warning`` header value carrying ``findings`` (code 299, agent ``-``)."""
    quoted = (f.replace("\\", "\\\\").replace('"', '\\"') for f in findings)
    return ", ".join(f'299 - "{q}"' for q in quoted)
