"""Owner references: who owns an object, and who controls it (controller-runtime ``controllerutil``).

An owner reference ``{apiVersion, kind, name, uid}`` ties an object to its owner for garbage
collection; at most one of them is marked ``controller: true``, and that owner's controller
is the one that manages the object. Objects are JSON dicts. The setters mutate ``obj`` in
place and return it: never pass an object handed out by the cache, copy it first.

Two references point at the same owner when group, kind and name agree (the version may
differ), as controller-runtime decides. :func:`set_controller_reference` additionally treats a
different ``uid`` as a different owner, so a controller never silently takes over objects of
a deleted owner that had the same name.

Claiming (adopting matching orphans, releasing objects that stopped matching) lives in
:mod:`kube_runtime.claiming` and is re-exported here: :class:`ControllerRefManager`,
:class:`ClaimError`, :class:`CannotAdoptError`, :func:`recheck_deletion_timestamp`,
:func:`recheck_controller`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from typing import Any, TypeVar

from kube_runtime import meta
from kube_runtime.claiming import (
    CannotAdoptError,
    ClaimError,
    ControllerRefManager,
    recheck_controller,
    recheck_deletion_timestamp,
)

__all__ = [
    "AlreadyOwnedError",
    "CannotAdoptError",
    "ClaimError",
    "ControllerRefManager",
    "get_controller_of",
    "has_owner_reference",
    "is_controlled_by",
    "owner_reference",
    "recheck_controller",
    "recheck_deletion_timestamp",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]

log = logging.getLogger(__name__)

Obj = TypeVar("Obj", bound=MutableMapping[str, Any])


class AlreadyOwnedError(Exception):
    """The object already has a controller, and it is not the owner being set."""

    def __init__(self, obj: Mapping[str, Any], existing: Mapping[str, Any]) -> None:
        self.object_key = _key(obj)
        self.existing = dict(existing)
        super().__init__(
            f"object {self.object_key} is already owned by another {existing.get('kind')} "
            f"controller {existing.get('name')} (uid {existing.get('uid')})"
        )


def owner_reference(
    owner: Mapping[str, Any],
    *,
    controller: bool | None = None,
    block_owner_deletion: bool | None = None,
) -> dict[str, Any]:
    """The ownerReference entry pointing at ``owner`` (which must have been created: a uid).

    ``controller`` / ``block_owner_deletion`` are left out when None.
    """
    api_version, kind = owner.get("apiVersion"), owner.get("kind")
    name, uid = meta.name(owner), meta.uid(owner)
    if not api_version or not kind:
        raise ValueError("owner has no apiVersion/kind; set both before referencing it")
    if not name or not uid:
        raise ValueError(
            f"owner {kind} {name!r} has no metadata.name/uid; reference it only once it exists"
        )
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller is not None:
        ref["controller"] = controller
    if block_owner_deletion is not None:
        ref["blockOwnerDeletion"] = block_owner_deletion
    return ref


def set_controller_reference(
    owner: Mapping[str, Any],
    obj: Obj,
    *,
    block_owner_deletion: bool = True,
) -> Obj:
    """Make ``owner`` the controller of ``obj`` (adding or updating its reference); return ``obj``.

    Raises :class:`AlreadyOwnedError` when another owner (other group/kind/name, or other uid)
    is already the controller, and ``ValueError`` for a reference the API would reject: a
    namespaced owner of a cluster-scoped object or of an object in another namespace.
    """
    _validate_scope(owner, obj)
    ref = owner_reference(owner, controller=True, block_owner_deletion=block_owner_deletion)
    existing = get_controller_of(obj)
    if existing is not None and not (
        _same_owner(existing, ref) and existing.get("uid") in (None, "", ref["uid"])
    ):
        raise AlreadyOwnedError(obj, existing)
    _upsert(obj, ref)
    return obj


def set_owner_reference(
    owner: Mapping[str, Any],
    obj: Obj,
    *,
    block_owner_deletion: bool | None = None,
) -> Obj:
    """Add (or replace) a non-controller reference to ``owner`` on ``obj``; return ``obj``.

    As in controller-runtime, an existing reference to the same owner is replaced whole, so a
    controller reference to ``owner`` becomes a plain one. Scope rules as
    :func:`set_controller_reference`.
    """
    _validate_scope(owner, obj)
    _upsert(obj, owner_reference(owner, block_owner_deletion=block_owner_deletion))
    return obj


def remove_owner_reference(owner: Mapping[str, Any], obj: MutableMapping[str, Any]) -> bool:
    """Drop ``obj``'s references to ``owner``; True if there was one.

    (controller-runtime returns an error when there is none; here that is just False.)
    """
    refs = _refs(obj)
    key = _owner_key(owner)
    kept = [ref for ref in refs if not _same_owner(ref, key)]
    if len(kept) == len(refs):
        return False
    metadata = obj["metadata"]
    if kept:
        metadata["ownerReferences"] = kept
    else:
        metadata.pop("ownerReferences", None)
    return True


def has_owner_reference(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``obj`` references ``owner`` (controller or not), by group, kind and name."""
    key = _owner_key(owner)
    return any(_same_owner(ref, key) for ref in _refs(obj))


def get_controller_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``obj``'s controller reference (the first with ``controller: true``), or None."""
    for ref in _refs(obj):
        if ref.get("controller") is True:
            return dict(ref)
    return None


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``owner`` is ``obj``'s controller, by uid (apimachinery's ``IsControlledBy``)."""
    ref = get_controller_of(obj)
    uid = meta.uid(owner)
    return ref is not None and bool(uid) and ref.get("uid") == uid


# --- internals -----------------------------------------------------------------------------


def _owner_key(owner: Mapping[str, Any]) -> dict[str, Any]:
    """The fields that identify an owner in a reference: apiVersion, kind, name."""
    return {
        "apiVersion": owner.get("apiVersion") or "",
        "kind": owner.get("kind") or "",
        "name": meta.name(owner),
    }


def _refs(obj: Mapping[str, Any]) -> list[Any]:
    return list(meta.owner_references(obj))


def _group(api_version: object) -> str:
    return str(api_version or "").rpartition("/")[0]


def _same_owner(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """controller-runtime's ``referSameObject``: same group, kind and name; any version."""
    return (
        _group(a.get("apiVersion")) == _group(b.get("apiVersion"))
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def _upsert(obj: MutableMapping[str, Any], ref: dict[str, Any]) -> None:
    metadata = obj.setdefault("metadata", {})
    refs = list(metadata.get("ownerReferences") or [])
    for i, existing in enumerate(refs):
        if _same_owner(existing, ref):
            refs[i] = ref
            break
    else:
        refs.append(ref)
    metadata["ownerReferences"] = refs
    log.debug(
        "owner reference on %s: %s %s (controller=%s)",
        _key(obj),
        ref["kind"],
        ref["name"],
        ref.get("controller", False),
    )


def _validate_scope(owner: Mapping[str, Any], obj: Mapping[str, Any]) -> None:
    owner_ns = meta.namespace(owner)
    if not owner_ns:
        return  # a cluster-scoped owner may own anything
    obj_ns = meta.namespace(obj)
    if not obj_ns:
        raise ValueError(
            f"cluster-scoped object {_key(obj)} cannot have a namespaced owner "
            f"(owner {owner.get('kind')} {owner_ns}/{meta.name(owner)}); "
            "if the object is namespaced, set its metadata.namespace first"
        )
    if obj_ns != owner_ns:
        raise ValueError(
            f"cross-namespace owner references are not allowed: owner in {owner_ns!r}, "
            f"object {_key(obj)} in {obj_ns!r}"
        )


def _key(obj: Mapping[str, Any]) -> str:
    name = meta.name(obj) or meta.metadata(obj).get("generateName") or "<unnamed>"
    namespace = meta.namespace(obj)
    return f"{namespace}/{name}" if namespace else str(name)
