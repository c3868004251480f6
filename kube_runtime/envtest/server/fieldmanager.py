"""Field management (``metadata.managedFields``) and server-side apply, as kube-apiserver does it.

A re-implementation, in plain Python over JSON values, of the semantics of
``k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`` and ``sigs.k8s.io/structured-merge-diff``:

* **Field sets.** A set of field paths is kept in the wire form of ``fieldsV1``: a dict from
  path elements (``f:<field>``, ``k:<json keys>`` for an item of an associative list,
  ``v:<json>`` for an item of a set, ``i:<n>`` otherwise) to the set below that element.
  A node ``{}`` is a member (a leaf); ``"."`` in a node with children marks the node itself
  as a member. Sets are immutable values here: every operation builds new dicts and may
  share unchanged sub-dicts between sets (so they are never mutated in place).
* **Schema.** :class:`FNode` says how each part of an object is managed: a struct (declared
  fields), a map (every key is an item, e.g. labels), an associative list (items keyed by
  their merge keys, e.g. containers by ``name``), a set (list of primitives, e.g.
  finalizers), or atomic (owned and replaced whole). Built-in kinds take it from the
  strategic-merge schemas of :mod:`.patch` (merge keys; label selectors are atomic, as
  upstream's ``structType=atomic``); custom resources from their CRD schema
  (``x-kubernetes-list-type``/``x-kubernetes-list-map-keys``; lists are atomic otherwise).
  Fields the schema does not know are structs (objects), atomic (lists) or leaves.
* **Updates** (create/update/non-apply patch, :func:`update_managed_fields`): the fields a
  write added or changed move to the writer's ``Update`` entry (one per manager, apiVersion
  and subresource) and leave every other entry; removed fields leave every entry. Entries
  with no fields left are dropped. A write that changes nothing changes no entry.
* **Managed fields a client writes** are read as upstream's ``DecodeManagedFields`` reads
  them (:func:`_read_set`): canonical form, ``null`` an empty node, unknown path-element
  types dropped; when any entry is not a field set (a list, a string or a number where a
  node belongs, a key that is no path element, a ``fieldsType`` other than ``FieldsV1``) the
  whole list is ignored and the live object's entries are kept. An entry left holding fields
  whose operation is neither ``Apply`` nor ``Update`` is ``422 Invalid``. What is stored is
  therefore always a field set, and applies and updates trust the live entries.
* **Apply** (:func:`apply`): the applied configuration is merged into the live object
  (associative lists merged by key, atomic values replaced), fields the manager applied last
  time and no longer applies are removed unless another manager owns them, and fields it
  changes that another manager owns are conflicts: ``409 Conflict`` with one
  ``FieldManagerConflict`` cause per field, unless ``force`` takes them over.

Not modelled: the ``kubectl-client-side-apply`` upgrade path (upstream's last-applied
manager), the cap of 10 ``Update`` entries (``ancient-changes``), unions, and multi-field
list keys that upstream defaults (container/service ports are keyed by the port alone, as
the strategic merge key). Managers apply to one version per kind; no conversion.

Cost contract: a create walks the new object once (one field set, no copies); an update
compares old and new once, skipping equal subtrees at C speed (``==`` on dicts), and touches
the existing entries only when something changed.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import orjson

from kube_runtime import patch as _patch
from kube_runtime._bounded import remember
from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server.errors import ApiError, api_error
from kube_runtime.envtest.server.memo import json_key
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.meta import Obj

__all__ = [
    "FNode",
    "FieldSet",
    "apply",
    "diff",
    "field_set",
    "intersect",
    "manager_from_user_agent",
    "merge",
    "paths",
    "schema_for",
    "union",
    "update_managed_fields",
    "validate_field_manager",
]

FieldSet = dict[str, Any]
"""A field set in ``fieldsV1`` form (see the module docstring)."""

STRUCT: Final = "struct"
MAP: Final = "map"
ASSOC: Final = "assoc"
SET: Final = "set"
ATOMIC: Final = "atomic"
IGNORE: Final = "ignore"

_DOT: Final = "."
_MISSING: Final = object()


class FNode:
    """How one part of an object is managed (immutable once built).

    ``kind``: ``struct`` (``fields`` declared, any other key managed per ``default``),
    ``map`` (every key is an item of type ``default``), ``assoc`` (list of objects keyed by
    ``keys``; items of type ``elem``), ``set`` (list of primitives), ``atomic`` (a leaf
    whatever its value) or ``ignore`` (not managed: apiVersion, kind, server-set metadata,
    status on the main resource). ``present``: struct fields that Go always encodes
    (non-pointer structs), which a create does not mark as added containers.
    """

    __slots__ = ("default", "elem", "fields", "keys", "kind", "present")

    def __init__(
        self,
        kind: str,
        fields: Mapping[str, FNode] | None = None,
        default: FNode | None = None,
        keys: tuple[str, ...] = (),
        elem: FNode | None = None,
        present: frozenset[str] = frozenset(),
    ) -> None:
        self.kind = kind
        self.fields: Mapping[str, FNode] = fields or {}
        self.default: FNode = default if default is not None else self
        self.keys = keys
        self.elem: FNode = elem if elem is not None else self
        self.present = present

    def child(self, key: str) -> FNode:
        """The node of member ``key`` of an object managed by this node."""
        return self.fields.get(key, self.default)


#: Unknown shape: objects are structs of unknown fields, lists are atomic.
ANY: Final = FNode(STRUCT)
#: Unknown shape where object keys are items (upstream's "deduced" type, for
#: ``x-kubernetes-preserve-unknown-fields``).
ANY_MAP: Final = FNode(MAP)
LEAF: Final = FNode(ATOMIC)
SKIP: Final = FNode(IGNORE)

# --------------------------------------------------------------------------------------
# Field-set algebra
# --------------------------------------------------------------------------------------


def _split(node: FieldSet) -> tuple[bool, FieldSet]:
    """(is the node itself a member, its children)."""
    if not node:
        return True, node
    if _DOT in node:
        children = dict(node)
        del children[_DOT]
        return True, children
    return False, node


def _join(member: bool, children: FieldSet) -> FieldSet | None:
    """The node for ``member`` + ``children``; None for an empty node."""
    if not children:
        return {} if member else None
    if member:
        return {_DOT: {}, **children}
    return children


def union(a: FieldSet, b: FieldSet) -> FieldSet:
    """Paths in ``a`` or ``b`` (both top-level sets, i.e. children of the root)."""
    if not a:
        return b
    if not b or a is b:
        return a
    out = dict(a)
    for pe, bn in b.items():
        an = out.get(pe)
        if an is None:
            out[pe] = bn
        elif an is not bn:
            ma, ca = _split(an)
            mb, cb = _split(bn)
            out[pe] = _join(ma or mb, union(ca, cb)) or {}
    return out


def diff(a: FieldSet, b: FieldSet) -> FieldSet:
    """Paths in ``a`` and not in ``b`` (top-level sets)."""
    if not a or not b:
        return a
    out: FieldSet = {}
    for pe, an in a.items():
        bn = b.get(pe)
        if bn is None:
            out[pe] = an
            continue
        if an is bn:
            continue
        ma, ca = _split(an)
        mb, cb = _split(bn)
        node = _join(ma and not mb, diff(ca, cb))
        if node is not None:
            out[pe] = node
    return out


def intersect(a: FieldSet, b: FieldSet) -> FieldSet:
    """Paths in both ``a`` and ``b`` (top-level sets)."""
    if not a or not b:
        return {}
    if len(b) < len(a):
        a, b = b, a
    out: FieldSet = {}
    for pe, an in a.items():
        bn = b.get(pe)
        if bn is None:
            continue
        if an is bn:
            out[pe] = an
            continue
        ma, ca = _split(an)
        mb, cb = _split(bn)
        node = _join(ma and mb, intersect(ca, cb))
        if node is not None:
            out[pe] = node
    return out


def _pe_text(pe: str) -> str:
    """A path element as upstream prints paths (``.spec``, ``[name="a"]``, ``[="x"]``, ``[0]``)."""
    head, body = pe[:2], pe[2:]
    if head == "f:":
        return "." + body
    if head == "k:":
        try:
            keys = orjson.loads(body)
        except orjson.JSONDecodeError:
            return f"[{body}]"
        return "[" + ",".join(f"{k}={orjson.dumps(v).decode()}" for k, v in keys.items()) + "]"
    if head == "v:":
        return f"[={body}]"
    if head == "i:":
        return f"[{body}]"
    return pe


def paths(s: FieldSet, prefix: str = "") -> Iterator[str]:
    """The member paths of ``s`` in upstream's text form (``.spec.replicas``), sorted."""
    for pe in sorted(s):
        if pe == _DOT:
            continue
        node = s[pe]
        here = prefix + _pe_text(pe)
        member, children = _split(node)
        if member:
            yield here
        if children:
            yield from paths(children, here)


# --------------------------------------------------------------------------------------
# Path elements of list items
# --------------------------------------------------------------------------------------


def _key_pe(item: Any, keys: tuple[str, ...]) -> str | None:
    """``k:{...}`` of an associative-list item; None when it lacks a key field."""
    if not isinstance(item, dict):
        return None
    if len(keys) == 1:
        k = keys[0]
        if k not in item:
            return None
        return "k:" + orjson.dumps({k: item[k]}).decode()
    values = {}
    for k in sorted(keys):
        if k not in item:
            return None
        values[k] = item[k]
    return "k:" + orjson.dumps(values).decode()


def _value_pe(item: Any) -> str:
    return "v:" + orjson.dumps(item).decode()


def _item_pes(items: list[Any], node: FNode) -> list[str]:
    """Path elements of a managed list's items (``i:<n>`` for items without their keys)."""
    if node.kind == ASSOC:
        keys = node.keys
        return [_key_pe(v, keys) or f"i:{i}" for i, v in enumerate(items)]
    return [_value_pe(v) for v in items]


def _is_container(value: Any, node: FNode) -> bool:
    kind = node.kind
    if isinstance(value, dict):
        return kind in (STRUCT, MAP)
    if isinstance(value, list):
        return kind in (ASSOC, SET)
    return False


# --------------------------------------------------------------------------------------
# Field sets of values
# --------------------------------------------------------------------------------------


def field_set(value: Obj, node: FNode) -> FieldSet:
    """Upstream ``ToFieldSet``: every leaf and every list/map item in ``value`` (an object
    managed by ``node``), as a top-level set. Struct fields are members only when they hold
    ``null`` or ``{}``; empty non-atomic lists contribute nothing."""
    return _ts_children(value, node)


def _ts_children(value: Any, node: FNode) -> FieldSet:
    out: FieldSet = {}
    if isinstance(value, dict):
        fields = node.fields
        is_map = node.kind == MAP
        default = node.default
        for k, v in value.items():
            child = fields.get(k, default)
            if child.kind == IGNORE:
                continue
            entry = is_map and k not in fields
            if _is_container(v, child):
                c = _ts_children(v, child)
                member = entry or v == {}
                if c:
                    out["f:" + k] = {_DOT: {}, **c} if member else c
                elif member:
                    out["f:" + k] = {}
            else:
                out["f:" + k] = {}
        return out
    elem = node.elem
    for pe, item in zip(_item_pes(value, node), value, strict=True):
        if _is_container(item, elem):
            c = _ts_children(item, elem)
            out[pe] = {_DOT: {}, **c} if c else {}
        else:
            out[pe] = {}
    return out


def _all(value: Any, node: FNode) -> FieldSet:
    """The node-level set of a value absent on the other side of a comparison: every
    container is a member, and so is every leaf."""
    if not value:
        return {}
    t = type(value)
    kind = node.kind
    if (t is dict and (kind is STRUCT or kind is MAP)) or (
        t is list and (kind is ASSOC or kind is SET)
    ):
        out: FieldSet = {_DOT: {}}
        _fill_all(value, node, out, False)
        return out if len(out) > 1 else {}
    return {}


def _all_children(value: Any, node: FNode, skeleton: bool) -> FieldSet:
    """Children of :func:`_all`. ``skeleton``: ``value`` is a struct Go always encodes on
    the other side (a create compares against the zero object), so its ``present`` fields
    are not added containers themselves."""
    out: FieldSet = {}
    _fill_all(value, node, out, skeleton)
    return out


def _fill_all(value: Any, node: FNode, out: FieldSet, skeleton: bool) -> None:
    """Add the :func:`_all` sets of ``value``'s members to ``out`` (the hot path of a create:
    one pass, no intermediate dicts)."""
    if type(value) is dict:
        fields = node.fields
        default = node.default
        present = node.present if skeleton else ()
        for k, v in value.items():
            child = fields.get(k, default)
            kind = child.kind
            if kind is IGNORE:
                continue
            t = type(v)
            if t is dict and v and (kind is STRUCT or kind is MAP):
                if k in present:
                    c: FieldSet = {}
                    _fill_all(v, child, c, True)
                    if c:
                        out["f:" + k] = c
                    continue
                c = {_DOT: {}}
                _fill_all(v, child, c, False)
                out["f:" + k] = c if len(c) > 1 else {}
            elif t is list and v and (kind is ASSOC or kind is SET):
                c = {_DOT: {}}
                _fill_all(v, child, c, False)
                out["f:" + k] = c if len(c) > 1 else {}
            elif k in present and (v is None or v == ""):
                continue  # a zero value Go always writes: the zero object has it too
            elif k not in present or t is not dict:
                out["f:" + k] = {}
        return
    elem = node.elem
    ekind = elem.kind
    for pe, item in zip(_item_pes(value, node), value, strict=True):
        t = type(item)
        if item and (
            (t is dict and (ekind is STRUCT or ekind is MAP))
            or (t is list and (ekind is ASSOC or ekind is SET))
        ):
            c = {_DOT: {}}
            _fill_all(item, elem, c, False)
            out[pe] = c if len(c) > 1 else {}
        else:
            out[pe] = {}


_MEMO_SIZE: Final = 512
_memo: dict[tuple[FNode, bytes], FieldSet] = {}


def _created(obj: Obj, node: FNode) -> FieldSet:
    """:func:`_all_children` of a whole new object (the Added set of a create).

    The sets of the always-present top-level structs (``spec``, ``status``) are memoized on
    their JSON encoding (:func:`.memo.json_key`, which a write path that knows the encoding
    of a spec tells without encoding it again): objects made from one template (a
    controller's pods) share them.
    Sets are immutable, so sharing is safe. Other parts are walked each time.
    """
    out: FieldSet = {}
    present = node.present
    rest: Obj = {}
    for k, v in obj.items():
        if k in present and k != "metadata" and type(v) is dict and v:
            child = node.child(k)
            if child.kind is IGNORE:
                continue
            encoded = json_key(v)  # known without encoding when the write path knows it
            if encoded is None:
                rest[k] = v
                continue
            key = (child, encoded)
            c = _memo.get(key)
            if c is None:
                c = {}
                _fill_all(v, child, c, True)
                remember(_memo, key, c, _MEMO_SIZE)
            if c:
                out["f:" + k] = c
        else:
            rest[k] = v
    _fill_all(rest, node, out, True)
    return out


def compare(old: Obj | None, new: Obj, node: FNode) -> tuple[FieldSet, FieldSet, FieldSet]:
    """Upstream ``Compare``: (added, modified, removed) top-level sets from ``old`` to ``new``.

    Leaves (scalars, atomic values, empty containers) are added, removed or modified;
    containers present on one side only are added or removed members too.
    """
    if old is None:
        return _created(new, node), {}, {}
    added: FieldSet = {}
    modified: FieldSet = {}
    removed: FieldSet = {}
    _cmp_children(old, new, node, added, modified, removed)
    return added, modified, removed


def _cmp_children(
    old: Any, new: Any, node: FNode, added: FieldSet, modified: FieldSet, removed: FieldSet
) -> None:
    if isinstance(old, dict):
        fields = node.fields
        default = node.default
        missing = False  # a key of old that new lacks
        for k, ov in old.items():
            nv = new.get(k, _MISSING)
            # an equal member changes nothing whatever its node: told before looking it up
            if ov is nv or (type(ov) is type(nv) and ov == nv):
                continue
            child = fields.get(k, default)
            if nv is _MISSING:
                missing = True
                if child.kind != IGNORE:
                    removed["f:" + k] = _all(ov, child)
            elif child.kind == IGNORE:
                continue
            elif isinstance(ov, (dict, list)):
                _cmp_value(ov, nv, child, "f:" + k, added, modified, removed)
            else:  # a changed scalar: what _cmp_value finds, without the call
                modified["f:" + k] = {}
        # new has a key old lacks only if old has one new lacks or their sizes differ
        if missing or len(new) != len(old):
            for k, nv in new.items():
                if k not in old:
                    child = fields.get(k, default)
                    if child.kind != IGNORE:
                        added["f:" + k] = _all(nv, child)
        return
    elem = node.elem
    old_items = dict(zip(_item_pes(old, node), old, strict=True))
    new_items = dict(zip(_item_pes(new, node), new, strict=True))
    for pe, ov in old_items.items():
        nv = new_items.get(pe, _MISSING)
        if nv is _MISSING:
            removed[pe] = _all(ov, elem)
        elif ov != nv or type(ov) is not type(nv):
            _cmp_value(ov, nv, elem, pe, added, modified, removed)
    for pe, nv in new_items.items():
        if pe not in old_items:
            added[pe] = _all(nv, elem)


def _cmp_value(
    ov: Any,
    nv: Any,
    node: FNode,
    pe: str,
    added: FieldSet,
    modified: FieldSet,
    removed: FieldSet,
) -> None:
    """Record the differences of a path present on both sides with different values."""
    kind = node.kind
    if (
        type(ov) is type(nv)
        and (ov or nv)
        and (
            (isinstance(ov, dict) and kind in (STRUCT, MAP))
            or (isinstance(ov, list) and kind in (ASSOC, SET))
        )
    ):  # _is_container(ov, node), inline
        a: FieldSet = {}
        m: FieldSet = {}
        r: FieldSet = {}
        _cmp_children(ov, nv, node, a, m, r)
        if a:
            added[pe] = a
        if m:
            modified[pe] = m
        if r:
            removed[pe] = r
        return
    modified[pe] = {}


# --------------------------------------------------------------------------------------
# Merge (apply) and prune
# --------------------------------------------------------------------------------------


def merge(live: Any, config: Any, node: FNode) -> Any:
    """Upstream ``Merge``: ``config`` (an applied configuration) over ``live``.

    Leaves and atomic values take the configuration's value; structs and maps merge key by
    key; associative lists and sets merge item by item (live order, with the applied items'
    relative order, as upstream). ``null`` members of the configuration are dropped. Raises
    ``ValueError`` for an associative-list item without its keys or duplicate items.
    """
    if config is None:
        return None
    if live is _MISSING or live is None or not _is_container(config, node):
        return _clean(config, node)
    if isinstance(config, dict):
        if not isinstance(live, dict):
            return _clean(config, node)
        out = dict(live)
        for k, cv in config.items():
            merged = merge(out.get(k, _MISSING), cv, node.child(k))
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        return out
    if not isinstance(live, list):
        return _clean(config, node)
    return _merge_list(live, config, node)


def _clean(config: Any, node: FNode) -> Any:
    """A configuration value taken as is: null members dropped, list keys checked."""
    if isinstance(config, dict):
        out = {}
        for k, v in config.items():
            if v is not None:
                out[k] = _clean(v, node.child(k)) if node.kind != ATOMIC else v
        return out
    if isinstance(config, list) and node.kind in (ASSOC, SET):
        _config_pes(config, node)
        return [_clean(v, node.elem) for v in config]
    return config


def _config_pes(items: list[Any], node: FNode) -> list[str]:
    pes: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        if node.kind == ASSOC:
            pe = _key_pe(item, node.keys)
            if pe is None:
                raise ValueError(
                    f"element {i}: associative list with keys has an element that omits "
                    f"key field {node.keys[0]!r}"
                )
        else:
            pe = _value_pe(item)
        if pe in seen:
            raise ValueError(f"duplicate entries for key {_pe_text(pe)}")
        seen.add(pe)
        pes.append(pe)
    return pes


def _merge_list(live: list[Any], config: list[Any], node: FNode) -> list[Any]:
    elem = node.elem
    rpes = _config_pes(config, node)
    lpes = _item_pes(live, node)
    lhs: dict[str, Any] = {}
    lorder: list[str] = []
    for pe, item in zip(lpes, live, strict=True):
        if pe not in lhs:
            lhs[pe] = item
            lorder.append(pe)
    rhs = dict(zip(rpes, config, strict=True))
    shared = [pe for pe in rpes if pe in lhs]
    si = 0
    out: list[Any] = []
    li = ri = 0
    while li < len(lorder) or ri < len(rpes):
        next_shared = shared[si] if si < len(shared) else None
        if li < len(lorder) and ri < len(rpes):
            pe = lorder[li]
            if pe == rpes[ri]:
                out.append(merge(lhs[pe], rhs[pe], elem))
                li += 1
                ri += 1
                si += 1
                continue
            if pe in rhs and next_shared is not None and next_shared != pe:
                li += 1  # a shared item that the configuration places later
                continue
        if li < len(lorder):
            pe = lorder[li]
            if pe not in rhs:
                out.append(lhs[pe])
                li += 1
                continue
        if ri < len(rpes):
            pe = rpes[ri]
            out.append(merge(lhs.get(pe, _MISSING), rhs[pe], elem))
            ri += 1
            if next_shared == pe:
                si += 1
        elif li < len(lorder):
            li += 1  # shared item already emitted in configuration order
    return [v for v in out if v is not None]


def _prune(value: Any, remove: FieldSet, keep: FieldSet | None, node: FNode) -> None:
    """Remove from ``value`` (in place) the members of ``remove`` that nobody keeps.

    A member is removed whole when ``keep`` has nothing at or under it; containers emptied
    by removals (and kept by nobody) go too, as Go's ``omitempty`` drops them upstream.
    """
    if isinstance(value, dict):
        for pe, rn in remove.items():
            if pe[:2] != "f:":
                continue
            k = pe[2:]
            if k not in value:
                continue
            kn = keep.get(pe) if keep else None
            if _prune_one(value[k], rn, kn, node.child(k)):
                del value[k]
        return
    if not isinstance(value, list) or node.kind not in (ASSOC, SET):
        return
    pes = _item_pes(value, node)
    drop: set[int] = set()
    for i, pe in enumerate(pes):
        rn = remove.get(pe)
        if rn is not None:
            kn = keep.get(pe) if keep else None
            if _prune_one(value[i], rn, kn, node.elem):
                drop.add(i)
    if drop:
        value[:] = [v for i, v in enumerate(value) if i not in drop]


def _prune_one(value: Any, rn: FieldSet, kn: FieldSet | None, node: FNode) -> bool:
    """Whether ``value`` (at a path of ``remove``) goes; prunes below it otherwise."""
    member, children = _split(rn)
    if kn is None and member:
        return True
    if children and isinstance(value, (dict, list)):
        was = bool(value)
        _prune(value, children, _split(kn)[1] if kn else None, node)
        return was and not value and kn is None
    return False


# --------------------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------------------

#: ObjectMeta fields no manager owns (upstream's stripMeta manager).
_STRIPPED_META: Final = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "selfLink",
    "generation",
    "managedFields",
    "resourceVersion",
    "clusterName",
)
_ATOMIC_STRUCTS: Final = (_patch.LABEL_SELECTOR,)
_PRESENT_BUILTIN: Final = frozenset({"metadata", "spec", "status"})
#: Top-level fields of a kind that Go writes even when zero (structs as ``{}``, timestamps as
#: ``null``, untagged strings as ``""``): the zero object a create is compared with has them,
#: so they are managed only once set (the Event's encoding, :mod:`.builtin_events`).
_PRESENT_BY_KIND: Final[dict[tuple[str, str], frozenset[str]]] = {
    ("", "Event"): frozenset(
        {
            "involvedObject",
            "source",
            "eventTime",
            "firstTimestamp",
            "lastTimestamp",
            "reportingComponent",
            "reportingInstance",
        }
    ),
    ("events.k8s.io", "Event"): frozenset(
        {
            "regarding",
            "deprecatedSource",
            "eventTime",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
        }
    ),
}
_PRESENT_NESTED: Final = frozenset({"template", "strategy", "updateStrategy", "resources"})

_builtin_cache: dict[tuple[str, str, str], FNode] = {}
_crd_cache: dict[int, tuple[Any, FNode, FNode]] = {}


def _from_struct(schema: _patch.StructSchema | None, present: frozenset[str]) -> FNode:
    if schema is None:
        return FNode(STRUCT, present=present)
    fields: dict[str, FNode] = {}
    for name, f in schema.fields.items():
        fields[name] = _from_field(f)
    if schema is _patch.POD_TEMPLATE_SPEC:
        present = present | {"metadata", "spec"}
    return FNode(STRUCT, fields, default=ANY, present=present)


def _from_field(f: _patch.FieldSchema) -> FNode:
    if f.kind == "struct":
        if f.schema is not None and f.schema in _ATOMIC_STRUCTS:
            return LEAF
        return _from_struct(f.schema, _PRESENT_NESTED)
    if f.kind == "list":
        if f.strategy == "merge" and f.merge_key:
            return FNode(ASSOC, keys=(f.merge_key,), elem=_from_struct(f.schema, _PRESENT_NESTED))
        if f.strategy == "merge":
            return FNode(SET, elem=LEAF)
        return LEAF
    if f.kind == "map":
        return FNode(MAP, default=ANY)
    return LEAF


def _meta_node(meta: FNode | None) -> FNode:
    fields = dict(meta.fields) if meta is not None else {}
    fields.setdefault("labels", FNode(MAP, default=LEAF))
    fields.setdefault("annotations", FNode(MAP, default=LEAF))
    fields.setdefault("finalizers", FNode(SET, elem=LEAF))
    fields.setdefault("ownerReferences", FNode(ASSOC, keys=("uid",), elem=ANY))
    for name in _STRIPPED_META:
        fields[name] = SKIP
    return FNode(STRUCT, fields, default=ANY)


def _root(base: FNode, subresource: str, has_status: bool, present: frozenset[str]) -> FNode:
    """The root node of a kind for writes through ``subresource`` ("" / "status" / "scale")."""
    fields = dict(base.fields)
    fields["apiVersion"] = SKIP
    fields["kind"] = SKIP
    fields["metadata"] = _meta_node(base.fields.get("metadata"))
    if subresource == "status":
        status = fields.get("status", ANY)
        return FNode(STRUCT, {"status": status}, default=SKIP, present=present)
    if has_status:
        fields["status"] = SKIP
    return FNode(STRUCT, fields, default=base.default, present=present)


def _from_crd(n: Any) -> FNode:
    if n is None:
        return ANY_MAP
    items = getattr(n, "items", None)
    if items is not None or "array" in n.types:
        if n.list_type == "map" and n.list_map_keys:
            return FNode(ASSOC, keys=tuple(n.list_map_keys), elem=_from_crd(items))
        if n.list_type == "set":
            return FNode(SET, elem=LEAF)
        return LEAF
    props = n.props
    additional = n.additional
    if props:
        default = (
            _from_crd(additional)
            if additional is not None
            else (ANY_MAP if n.preserve_unknown else ANY)
        )
        return FNode(STRUCT, {k: _from_crd(v) for k, v in props.items()}, default=default)
    if additional is not None:
        return FNode(MAP, default=_from_crd(additional))
    if n.preserve_unknown or n.has_additional:
        return ANY_MAP
    if "object" in n.types:
        return FNode(STRUCT, default=ANY)
    return LEAF


def schema_for(info: ResourceInfo, subresource: str = "") -> FNode:
    """The root :class:`FNode` of ``info``'s objects written through ``subresource``.

    Built once per kind and subresource (per CRD schema version for custom resources).
    """
    sub = "status" if subresource == "status" else ""
    if info.custom:
        compiled = info.schemas.get(info.version)
        key = id(compiled)
        hit = _crd_cache.get(key)
        if hit is None or hit[0] is not compiled:
            root = getattr(compiled, "_root", None)
            base = _from_crd(root) if root is not None else FNode(STRUCT, default=ANY_MAP)
            if base.kind != STRUCT:
                base = FNode(STRUCT, default=ANY_MAP)
            present = frozenset({"metadata"})
            hit = (
                compiled,
                _root(base, "", info.has_status, present),
                _root(base, "status", info.has_status, present),
            )
            _crd_cache[key] = hit
        return hit[2] if sub else hit[1]
    cache_key = (info.group, info.kind, sub)
    node = _builtin_cache.get(cache_key)
    if node is None:
        struct = _patch.strategic_schema_for(info.group, info.kind)
        present = _PRESENT_BUILTIN | _PRESENT_BY_KIND.get((info.group, info.kind), frozenset())
        base = _from_struct(struct, present)
        node = _root(base, sub, info.has_status, present)
        _builtin_cache[cache_key] = node
    return node


# --------------------------------------------------------------------------------------
# managedFields entries
# --------------------------------------------------------------------------------------

_Key = tuple[str, str, str, str]  # manager, operation, apiVersion ("" for Apply), subresource


def _decode(entries: Any, check: bool = True) -> dict[_Key, Obj] | None:
    """The entries of a ``managedFields`` value by identity; None when they do not decode.

    As upstream ``DecodeManagedFields``: an entry whose ``fieldsType`` is not ``FieldsV1`` or
    whose ``fieldsV1`` is not a field set (:func:`_read_set`) fails the whole list; ``null``
    or no ``fieldsV1`` is the empty set; a later entry of the same identity replaces an
    earlier one; an entry with no ``apiVersion`` is dropped. The operation is not checked
    here (see :func:`_check_operations`).
    ``check``: read the sets as a client sent them; False trusts them as stored (every
    stored set went through this check).
    """
    if not isinstance(entries, list):
        return None
    out: dict[_Key, Obj] = {}
    for e in entries:
        if not isinstance(e, dict) or e.get("fieldsType") != "FieldsV1":
            return None
        op = str(e.get("operation") or "")
        fields = e.get("fieldsV1")
        if fields is None:
            fields = {}
        elif check:
            fields = _read_set(fields, True)
            if fields is None:
                return None
        elif not isinstance(fields, dict):
            return None
        api_version = str(e.get("apiVersion") or "")
        if check and not api_version:
            continue  # upstream's updater drops a manager whose version it cannot convert to
        key = (
            str(e.get("manager") or ""),
            op,
            "" if op == "Apply" else api_version,
            str(e.get("subresource") or ""),
        )
        out.pop(key, None)
        out[key] = _entry(key, api_version, _norm_time(e.get("time")), fields)
    return out


_INDEX_RE: Final = re.compile(r"[+-]?[0-9]+")
_JSON: Final = json.JSONDecoder()


def _json_prefix(text: str) -> Any:
    """The JSON value at the start of ``text`` (what follows it is ignored, as json-iterator
    reads one value); raises ``ValueError`` when there is none."""
    return _JSON.raw_decode(text.lstrip(" \t\r\n"))[0]


def _read_pe(pe: str) -> str | None:
    """A client's path element in canonical form; ``""`` for an element of an unknown type
    (upstream drops those); None when it does not parse."""
    if len(pe) < 2 or pe[1] != ":":
        return None
    head, body = pe[0], pe[2:]
    if head == "f":
        return pe
    try:
        if head == "k":
            keys = _json_prefix(body)
            if not isinstance(keys, dict):
                return None
            return "k:" + orjson.dumps(dict(sorted(keys.items()))).decode()
        if head == "v":
            return "v:" + orjson.dumps(_json_prefix(body)).decode()
    except (ValueError, TypeError, orjson.JSONEncodeError):
        return None
    if head == "i":
        return f"i:{int(body)}" if _INDEX_RE.fullmatch(body) else None
    return ""


def _read_set(node: Any, top: bool = False) -> FieldSet | None:
    """Upstream ``Set.FromJSON`` of a client's ``fieldsV1`` (or a node below it): the set in
    canonical form, or None when it is not one.

    Every node is a JSON object (``null`` reads as ``{}``); its keys are ``"."`` (the node
    itself is a member; the value is not read) or path elements (:func:`_read_pe`) whose
    values are nodes. Elements of unknown types are dropped, and a node left with no
    children is a member. Anything else (a list, a string or a number where a node belongs,
    a key that is no path element) fails the whole set.
    """
    if node is None:
        return {}
    if type(node) is not dict:
        return None
    member = False
    children: FieldSet = {}
    for pe, value in node.items():
        if pe == _DOT:
            member = True
            continue
        canonical = _read_pe(pe)
        if canonical is None:
            return None
        if not canonical:
            continue
        child = _read_set(value)
        if child is None:
            return None
        have = children.get(canonical)
        children[canonical] = (
            child if have is None else union({canonical: have}, {canonical: child})[canonical]
        )
    if top or not children:
        return children
    return {_DOT: {}, **children} if member else children


def _norm_time(value: Any) -> str | None:
    """A client's ``time`` as kube-apiserver re-encodes it (RFC 3339, UTC, seconds, ``Z``)."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) == 20 and value.endswith("Z"):
        return value
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(key: _Key, api_version: str, time: str | None, fields: FieldSet) -> Obj:
    manager, op, _, sub = key
    e: Obj = {}
    if manager:  # every field of a ManagedFieldsEntry is omitted when empty
        e["manager"] = manager
    e["operation"] = op
    if api_version:
        e["apiVersion"] = api_version
    if time is not None:
        e["time"] = time
    e["fieldsType"] = "FieldsV1"
    e["fieldsV1"] = fields
    if sub:
        e["subresource"] = sub
    return e


def _encode(managed: dict[_Key, Obj]) -> list[Obj]:
    """Entries in upstream's order: operation, time, manager, apiVersion, subresource."""
    return sorted(
        managed.values(),
        key=lambda e: (
            e["operation"],
            e.get("time") or "",
            e.get("manager") or "",
            e.get("apiVersion") or "",
            e.get("subresource") or "",
        ),
    )


def _fields(e: Obj) -> FieldSet:
    f = e.get("fieldsV1")
    return f if isinstance(f, dict) else {}


def _is_reset(value: Any) -> bool:
    """Upstream ``isResetManagedFields``: ``[]`` or ``[{}]`` clears every entry."""
    return isinstance(value, list) and (not value or (len(value) == 1 and value[0] == {}))


def _set_managed(meta: Obj, managed: dict[_Key, Obj]) -> None:
    if managed:
        meta["managedFields"] = _encode(managed)
    else:
        meta.pop("managedFields", None)


def _take_over(
    managed: dict[_Key, Obj], skip: _Key | None, taken: FieldSet, removed: FieldSet
) -> None:
    """Remove ``taken`` and ``removed`` from every entry but ``skip`` (in place)."""
    if not taken and not removed:
        return
    for key in list(managed):
        if key == skip:
            continue
        e = managed[key]
        before = _fields(e)
        after = diff(diff(before, taken), removed)
        if not after:
            del managed[key]
        elif after is not before:
            managed[key] = {**e, "fieldsV1": after}


def update_managed_fields(
    info: ResourceInfo,
    old: Obj | None,
    new: Obj,
    manager: str,
    api_version: str,
    subresource: str,
    now: Callable[[], str],
) -> None:
    """Set ``new["metadata"]["managedFields"]`` for a create (``old`` None) or an update.

    ``new`` is the object about to be stored (its ``metadata`` dict is mutated). Managed
    fields sent by the client are kept (they may edit entries directly) unless the write
    goes through a subresource or they are empty or malformed, in which case the live
    object's are used; ``[]`` or ``[{}]`` clears them. The fields the write added or changed
    then move to ``manager``'s Update entry, stamped with ``now()``.
    """
    meta = new["metadata"]
    sent = meta.get("managedFields")
    live = old["metadata"].get("managedFields") if old else None
    managed: dict[_Key, Obj] | None = None
    if not subresource and sent is not None:
        if sent is live or sent == live:
            # echoed back unchanged: the live entries (checked when they were stored), and
            # the very list in the new object, which the comparison below then passes over
            # without comparing it again (it is replaced or dropped at the end). A reset
            # (``[]`` or ``[{}]``) equal to the live entries clears what they hold: nothing.
            if sent is not live:
                meta["managedFields"] = live
        elif _is_reset(sent):
            managed = {}
        else:
            managed = _decode(sent) or None
    node = schema_for(info, subresource)
    added, modified, removed = compare(old, new, node)
    changed = union(added, modified) if added else modified
    key: _Key = (manager, "Update", api_version, subresource)
    if managed is None and live is None:
        # No entries before (a create, or an object never written with any): the writer's
        # entry alone, what taking over, checking and encoding below leave of it.
        if changed:
            meta["managedFields"] = _sole_list(key, api_version, now(), changed)
        else:
            meta.pop("managedFields", None)
        return
    if managed is None:
        only = _sole_entry(live, key) if changed and not removed else None
        if only is not None:
            # The writer's own Update entry is the only one: what decoding, taking over
            # and merging below leave, without building the entries.
            fields = _own_update(only, changed)
            meta["managedFields"] = _sole_list(key, api_version, now(), fields)
            return
        managed = (_decode(live, check=False) if live is not None else None) or {}
    _take_over(managed, None, changed, removed)
    if changed:
        prev = managed.get(key)
        fields = union(changed, _fields(prev)) if prev is not None else changed
        managed[key] = _entry(key, api_version, now(), fields)
    _check_operations(info, meta, managed)
    _set_managed(meta, managed)


#: :func:`_own_update` by the JSON encoding of its arguments (sets are immutable: shared).
_own_memo: dict[bytes, FieldSet] = {}
#: :func:`_own_update` of a shared ``only`` (one :func:`_own_update` gave) by (its ``id``, the
#: encoding of ``changed``): (``only``, the result); the ``id`` is told apart by identity.
_own_by_id: dict[tuple[int, bytes], tuple[FieldSet, FieldSet]] = {}


def _own_update(only: FieldSet, changed: FieldSet) -> FieldSet:
    """The fields of a manager's sole Update entry ``only`` after its write changed
    ``changed``: the changed paths first, then the rest of ``only``. A writer that keeps
    writing the same fields (a lease's renewals, a status's heartbeats) repeats both sets
    byte for byte, so the result is memoized on their encoding; the next write's ``only``
    is then that very result (the stored entry's fields), looked up by its identity first
    with only ``changed`` encoded."""
    changed_key: tuple[int, bytes] | None
    try:
        changed_key = (id(only), orjson.dumps(changed))
    except TypeError:  # not plain JSON: computed below (where it fails alike)
        changed_key = None
    if changed_key is not None:
        hit = _own_by_id.get(changed_key)
        if hit is not None and hit[0] is only:
            return hit[1]
    try:
        memo_key = orjson.dumps((only, changed))
    except TypeError:  # not plain JSON (a client's odd fieldsV1): computed each time
        memo_key = None
    fields = _own_memo.get(memo_key) if memo_key is not None else None
    if fields is None:
        rest = diff(only, changed)
        fields = union(changed, rest) if rest else changed
        if memo_key is not None:
            remember(_own_memo, memo_key, fields, _MEMO_SIZE)
    if changed_key is not None:
        remember(_own_by_id, changed_key, (only, fields), _MEMO_SIZE)
    return fields


#: The managedFields lists :func:`_sole_list` made, by ``id``: (the list, its entry's key,
#: its fields). Stored objects are never mutated, so a stored list found here (by identity)
#: still holds that one entry.
_sole_lists: dict[int, tuple[list[Obj], _Key, FieldSet]] = {}


def _sole_list(key: _Key, api_version: str, time: str, fields: FieldSet) -> list[Obj]:
    """``[_entry(key, api_version, time, fields)]``, remembered for :func:`_sole_entry`
    (``api_version`` is ``key``'s)."""
    entries = [_entry(key, api_version, time, fields)]
    remember(_sole_lists, id(entries), (entries, key, fields), _MEMO_SIZE)
    return entries


def _sole_entry(live: Any, key: _Key) -> FieldSet | None:
    """The fields of ``live``'s only entry (stored entries, so well formed) when it is
    ``key``'s (the same manager, operation, apiVersion and subresource), else None: what
    :func:`_decode` and :func:`_take_over` would leave of it, without building them. A
    list :func:`_sole_list` made is told by its identity, without reading its entry."""
    made = _sole_lists.get(id(live))
    if made is not None and made[0] is live:
        return made[2] if made[1] == key else None
    if type(live) is not list or len(live) != 1:
        return None
    e = live[0]
    if type(e) is not dict or e.get("fieldsType") != "FieldsV1":
        return None
    manager, op, api_version, subresource = key
    fields = e.get("fieldsV1")
    if (
        type(fields) is not dict
        or (e.get("manager") or "") != manager
        or (e.get("operation") or "") != op
        or (e.get("apiVersion") or "") != api_version
        or (e.get("subresource") or "") != subresource
    ):
        return None
    return fields


def _check_operations(info: ResourceInfo, meta: Obj, managed: dict[_Key, Obj]) -> None:
    """422 for an entry a client wrote whose operation is neither ``Apply`` nor ``Update``
    and that still holds fields after the write (upstream ``ValidateManagedFields``, which
    runs on the field manager's result: such an entry whose fields the write took is gone)."""
    causes = [
        errors.Cause(
            "metadata.managedFields.operation",
            "FieldValueInvalid",
            f"Invalid value: {orjson.dumps(op).decode()}: must be `Apply` or `Update`",
        )
        for _, op, _, _ in managed
        if op not in ("Apply", "Update")
    ]
    if causes:
        raise errors.invalid(info.kind, info.group, str(meta.get("name") or ""), causes)


def validate_field_manager(manager: str) -> None:
    """422 for a ``fieldManager`` kube-apiserver refuses (longer than 128, not printable)."""
    if len(manager) > 128:
        raise _invalid_options(
            "fieldManager", manager, "must be no more than 128 characters", "FieldValueTooLong"
        )
    if not (manager.isascii() and manager.isprintable()):  # every character in " ".."~"
        raise _invalid_options(
            "fieldManager", manager, "must only contain printable characters", "FieldValueInvalid"
        )


def _invalid_options(field: str, value: str, detail: str, reason: str) -> ApiError:
    message = f'PatchOptions.meta.k8s.io "" is invalid: {field}: Invalid value: "{value}": {detail}'
    return api_error(
        422,
        message,
        "Invalid",
        {
            "group": "meta.k8s.io",
            "kind": "PatchOptions",
            "causes": [
                {"reason": reason, "message": f"Invalid value: {value!r}: {detail}", "field": field}
            ],
        },
    )


def manager_from_user_agent(user_agent: str) -> str:
    """Upstream ``prefixFromUserAgent``: the part of the User-Agent before the first ``/``."""
    return user_agent.split("/", 1)[0]


def _conflict_error(conflicts: dict[_Key, FieldSet], managed: dict[_Key, Obj]) -> ApiError:
    """Upstream ``NewConflictError``: 409 with one FieldManagerConflict cause per field."""
    items: list[tuple[str, str]] = []
    for key, s in conflicts.items():
        manager, op, _, sub = key
        who = orjson.dumps(manager).decode()
        if sub:
            who += f" with subresource {orjson.dumps(sub).decode()}"
        if op == "Update":
            who += f" using {managed[key].get('apiVersion', '')}"
        items.extend((who, p) for p in paths(s))
    items.sort()
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {who}", "field": p}
        for who, p in items
    ]
    if len(items) == 1:
        message = f"Apply failed with 1 conflict: conflict with {items[0][0]}: {items[0][1]}"
    else:
        lines: list[str] = []
        last = None
        for who, p in items:
            if who != last:
                lines.append(f"conflicts with {who}:")
                last = who
            lines.append(f"- {p}")
        message = f"Apply failed with {len(items)} conflicts: " + "\n".join(lines)
    return api_error(409, message, "Conflict", {"causes": causes})


def apply(
    info: ResourceInfo,
    live: Obj | None,
    config: Obj,
    manager: str,
    api_version: str,
    subresource: str,
    force: bool,
    now: Callable[[], str],
) -> tuple[Obj, list[Obj]]:
    """Server-side apply of ``config`` by ``manager``: (the object to store, its managedFields).

    ``live`` is the current object (None: the apply creates it); it may be mutated (pass a
    copy). Errors: 400 for a configuration that is not of this kind, whose ``metadata`` is
    not an object, or that carries ``managedFields`` or malformed associative lists; 409 Conflict (one
    ``FieldManagerConflict`` cause per field) when the apply changes a field another
    manager owns and ``force`` is false. With ``force`` the applier takes those fields over.
    """
    if config.get("apiVersion") != api_version or config.get("kind") != info.kind:
        group, _, version = str(config.get("apiVersion") or "").rpartition("/")
        raise api_error(
            400,
            f"invalid object type: {group}/{version}, Kind={config.get('kind') or ''}",
            "BadRequest",
        )
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        # the server refuses this shape before (it is ObjectMeta's); kept for direct callers
        raise api_error(
            400,
            f"failed to create typed patch object: .metadata: expected map, got {meta!r}",
            "BadRequest",
        )
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise api_error(400, "metadata.managedFields must be nil", "BadRequest")
    node = schema_for(info, subresource)
    managed: dict[_Key, Obj] = {}
    if live is not None:
        managed = _decode(live["metadata"].get("managedFields")) or {}
        if not managed:
            # Upstream skipNonAppliedManager: an object no manager tracks yet is owned by
            # "before-first-apply", so the first apply conflicts on the values it changes.
            everything = compare(None, live, schema_for(info))[0]
            if everything:
                first: _Key = ("before-first-apply", "Update", api_version, "")
                managed[first] = _entry(first, api_version, now(), everything)
    try:
        applied = field_set(config, node)
        merged = merge(live if live is not None else {}, config, node)
    except ValueError as err:
        raise api_error(400, f"failed to create typed patch object: {err}", "BadRequest") from None
    key: _Key = (manager, "Apply", "", subresource)
    last = managed.get(key)
    managed[key] = _entry(key, api_version, None, applied)
    if last is not None and live is not None:
        stale = diff(_fields(last), applied)
        if stale:
            keep: FieldSet = {}
            for entry in managed.values():
                keep = union(keep, _fields(entry))
            _prune(merged, stale, keep, node)
    added, modified, removed = compare(live, merged, node)
    changed = union(added, modified)
    conflicts: dict[_Key, FieldSet] = {}
    if changed:
        for other, entry in managed.items():
            if other != key:
                c = intersect(_fields(entry), changed)
                if c:
                    conflicts[other] = c
    if conflicts and not force:
        raise _conflict_error(conflicts, managed)
    _take_over(managed, key, changed, removed)
    stamp = now() if (changed or removed or last is None) else last.get("time")
    managed[key] = _entry(key, api_version, stamp, applied)
    merged.setdefault("metadata", {})
    merged["metadata"].pop("managedFields", None)
    return merged, _encode(managed)


def set_managed_fields(obj: Obj, entries: list[Obj]) -> None:
    """Store ``entries`` as ``obj``'s managedFields (none: the field is dropped)."""
    if entries:
        obj["metadata"]["managedFields"] = entries
    else:
        obj["metadata"].pop("managedFields", None)
