"""Helpers that remove a reconciler's write boilerplate (controller-runtime's ``controllerutil``).

* :func:`create_or_update` / :func:`create_or_patch`: make an object look the way a
  ``mutate`` function says, creating it when absent, writing only when something changed, and
  saying what happened (:class:`OperationResult`).
* :func:`patch_status`: write only the status fields that changed, as a JSON merge patch to
  the ``status`` subresource, with no resourceVersion precondition unless asked: a status
  computed from a slightly stale cached object no longer fails with 409 Conflict.
* :func:`merge_patch_for`: the JSON merge patch (RFC 7386) that turns one object into another.
* Owner references (thin wrappers over :mod:`kube_runtime.ownership`) and finalizers, changed
  in memory: they mutate the given object and say whether it changed, so they compose with the
  writers above (``mutate`` calls them). To write a finalizer change alone, with an optimistic
  lock, see :mod:`kube_runtime.finalizers`.
* :func:`ignore_not_found` and :func:`ignoring_not_found` for deletes and reads that may miss.

Objects are JSON dicts or typed resource models (pydantic classes with ``__kube_resource__``,
as ``kube-runtime codegen`` emits); a model in means the client reads and answers with that
model class. Comparisons use the wire form (a model's set fields, by alias), with ``null``
members counting as absent, as the API server treats them.

The writers never modify the object passed in: it only names the object (kind, name,
namespace) and, when the object does not exist yet, is the starting point that ``mutate``
fills in (on a copy). ``mutate`` receives a private copy and changes it in place (its return
value is ignored); it may run more than once (see the retries) and must not change the name
or namespace.

Retries. Both ``create_or_*`` functions read the live object from ``client`` and retry the
whole read-mutate-write with :func:`kube_runtime.retry.retry_on` when the write fails with
``Conflict`` (another writer changed the object between our read and our write) or
``AlreadyExists`` (another writer created it between our read and our create); every retry
re-reads the object and calls ``mutate`` again, so no one's change is lost. Pass the
manager's client, as controller-runtime's ``CreateOrUpdate`` is given its manager's: it reads
from the cache (a converged reconcile sends no request); a cache read that lags a write just
made ends in one of those errors and is retried, and a cache still behind after the last try
raises, requeueing the request (docs/framework.md). controller-runtime does not retry here;
we do because DESIGN.md makes every read-modify-write retry on conflict.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from enum import Enum
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from kube_runtime import ownership
from kube_runtime.client.errors import NotFound, is_not_found
from kube_runtime.client.interfaces import Client
from kube_runtime.kinds import as_kind, kind_for
from kube_runtime.meta import metadata
from kube_runtime.models import ObjectMeta, validate_lenient
from kube_runtime.ownership import AlreadyOwnedError
from kube_runtime.retry import (
    DEFAULT_RETRY,
    Backoff,
    create_or_update_with,
    is_write_race,
    retry_on,
)

__all__ = [
    "AlreadyOwnedError",
    "OperationResult",
    "add_finalizer",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "get_controller_of",
    "has_controller_reference",
    "has_owner_reference",
    "ignore_not_found",
    "ignoring_not_found",
    "is_controlled_by",
    "merge_patch_for",
    "patch_status",
    "remove_finalizer",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]

T = TypeVar("T")
Obj = TypeVar("Obj", bound=MutableMapping[str, Any] | BaseModel)
E = TypeVar("E", bound=BaseException)

Mutate = Callable[[T], object]
"""Changes the object it is given, in place; the return value is ignored."""


ObjectClient = Client
"""What the writers need: any :class:`kube_runtime.client.interfaces.Client` (the REST
client, the manager's cache-backed client, :class:`~kube_runtime.client.fake.FakeClient`)."""


class OperationResult(str, Enum):
    """What :func:`create_or_update` / :func:`create_or_patch` did (controller-runtime's)."""

    UNCHANGED = "unchanged"
    """The object existed and already looked as ``mutate`` wants: nothing was written."""
    CREATED = "created"
    """The object did not exist and was created."""
    UPDATED = "updated"
    """The object (not its status subresource) was written."""
    UPDATED_STATUS = "updated_status"
    """``create_or_patch`` only: the object and its status subresource were both patched."""
    UPDATED_STATUS_ONLY = "updated_status_only"
    """``create_or_patch`` only: only the status subresource was patched."""

    def __str__(self) -> str:
        return self.value


# --- merge patches ----------------------------------------------------------------------------


def merge_patch_for(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``before`` into ``after``; ``{}`` if equal.

    Keys missing from ``after`` get ``None`` (null: remove); maps are diffed recursively;
    lists and scalars that differ are replaced whole (merge patches cannot address list
    items). Equality is JSON equality: ``True`` is not ``1``, numbers compare by value
    (``1 == 1.0``). Pure: the inputs are not modified and the result shares no dict or list
    with them. For any ``after`` without null map members,
    ``apply_merge_patch(before, merge_patch_for(before, after)) == after``.
    """
    patch: dict[str, Any] = {}
    for key in before:
        if key not in after:
            patch[key] = None
    for key, new in after.items():
        if key not in before:
            patch[key] = copy.deepcopy(new)
            continue
        old = before[key]
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            nested = merge_patch_for(old, new)
            if nested:
                patch[key] = nested
        elif not _json_equal(old, new):
            patch[key] = copy.deepcopy(new)
    return patch


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return bool(a == b)


# --- objects: dicts and models ------------------------------------------------------------------


def _wire(obj: Any) -> dict[str, Any]:
    """A fresh JSON form of ``obj`` without null map members (the API reads null as absent)."""
    if isinstance(obj, BaseModel):
        data = obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
        resource = getattr(type(obj), "__kube_resource__", None)
        if resource is not None:  # a model built in code may leave its defaults unset
            data.setdefault("apiVersion", resource.api_version)
            data.setdefault("kind", resource.kind)
    elif isinstance(obj, Mapping):
        data = dict(obj)
    else:
        raise TypeError(f"expected a dict or a resource model, got {type(obj).__name__}")
    pruned: dict[str, Any] = _prune(data)
    return pruned


def _prune(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _prune(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_prune(v) for v in value]
    return value


def _copy(obj: T) -> T:
    if isinstance(obj, BaseModel):
        return obj.model_copy(deep=True)
    if isinstance(obj, Mapping) and not isinstance(obj, dict):
        return copy.deepcopy(dict(obj))  # type: ignore[return-value]
    return copy.deepcopy(obj)


def _key(obj: Any) -> tuple[str, str | None]:
    meta = metadata(obj)
    name = meta.get("name")
    if not name:
        raise ValueError("the object needs metadata.name (generateName cannot be looked up)")
    return str(name), meta.get("namespace") or None


def _mutated(mutate: Mutate[T], obj: T, key: tuple[str, str | None]) -> T:
    mutate(obj)
    if _key(obj) != key:
        raise ValueError(
            f"mutate cannot change the object's name and/or namespace: {key} became {_key(obj)}"
        )
    return obj


def _answered(kind: Any, call: Callable[[Any], Any]) -> Any:
    """``call(kind)``; for a resource model class, ``call`` gets the model's Kind and the
    answer is read leniently (:func:`kube_runtime.models.validate_lenient`): an object its
    model no longer accepts (stored before a stricter rule) can still be changed, and the
    write that changed it does not end in a ``ValidationError``."""
    if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
        return call(kind)
    answer = call(as_kind(kind))
    return validate_lenient(kind, answer)[0] if isinstance(answer, Mapping) else answer


def _has_status_subresource(client: Any, kind: Any) -> bool:
    resource = getattr(kind, "__kube_resource__", None)
    if resource is None:
        mapper = getattr(client, "mapper", None)
        if mapper is None:
            return True  # a client without a REST mapper: assume the usual status subresource
        resource = mapper.resource_for(kind)
    return "status" in resource.subresources


def _resource_version(obj: Any) -> str:
    version = metadata(obj).get("resourceVersion")
    if not version:
        raise ValueError("optimistic_lock needs the object's metadata.resourceVersion")
    return str(version)


def _merge_patch(
    client: ObjectClient,
    kind: Any,
    key: tuple[str, str | None],
    patch: dict[str, Any],
    *,
    subresource: str | None,
    lock_on: Any = None,
) -> Any:
    """Send ``patch``; with ``lock_on``, carrying that object's resourceVersion."""
    if lock_on is not None:
        patch = {**patch, "metadata": {**patch.get("metadata", {})}}
        patch["metadata"]["resourceVersion"] = _resource_version(lock_on)
    name, namespace = key
    return _answered(
        kind,
        lambda k: client.patch(
            k, name, patch, namespace=namespace, patch_type="merge", subresource=subresource
        ),
    )


# --- create or update / patch ------------------------------------------------------------------


def _live_or_created(
    client: ObjectClient, kind: Any, key: tuple[str, str | None], obj: T, mutate: Mutate[T]
) -> tuple[T, bool]:
    """``(live object, False)``; or, when there is none, ``(object created from
    mutate(copy of obj), True)``. Errors other than ``NotFound`` propagate."""
    try:
        live: T = _answered(kind, lambda k: client.get(k, *key))
    except NotFound:
        created: T = client.create(cast(Any, _mutated(mutate, _copy(obj), key)))
        return created, True
    return live, False


def create_or_update(
    client: ObjectClient,
    obj: T,
    mutate: Mutate[T],
    *,
    backoff: Backoff = DEFAULT_RETRY,
) -> tuple[T, OperationResult]:
    """Create ``obj``'s object or update it so that ``mutate`` is satisfied; returns the
    server's object (or the live one when unchanged) and what was done.

    Reads the object by ``obj``'s kind, name and namespace. Absent (``NotFound``): calls
    ``mutate`` on a copy of ``obj`` and creates that (``CREATED``). Present: calls ``mutate``
    on a copy of the live object; equal JSON afterwards means no request (``UNCHANGED``),
    otherwise one ``update`` (PUT, with the read resourceVersion) (``UPDATED``). As with
    controller-runtime, for kinds with a status subresource the server ignores status changes
    made this way: use :func:`create_or_patch` or :func:`patch_status` for those.

    Raises ``ValueError`` when ``mutate`` changes the name or namespace, or ``obj`` has no
    name. ``Conflict`` / ``AlreadyExists`` are retried with ``backoff`` (see the module
    docstring); other errors propagate.
    """
    kind = kind_for(obj)
    key = _key(obj)

    def read() -> T:
        live: T = _answered(kind, lambda k: client.get(k, *key))
        return live

    def create() -> T:
        created: T = client.create(cast(Any, _mutated(mutate, _copy(obj), key)))
        return created

    def change(live: T) -> T | None:
        desired = _mutated(mutate, _copy(live), key)
        return None if _json_equal(_wire(live), _wire(desired)) else desired

    def update(desired: T) -> T:
        updated: T = client.update(cast(Any, desired))
        return updated

    written, outcome = create_or_update_with(read, create, change, update, backoff)
    return written, OperationResult(outcome)


def create_or_patch(
    client: ObjectClient,
    obj: T,
    mutate: Mutate[T],
    *,
    optimistic_lock: bool = False,
    backoff: Backoff = DEFAULT_RETRY,
) -> tuple[T, OperationResult]:
    """As :func:`create_or_update`, but writes JSON merge patches of what ``mutate`` changed.

    For an existing object: the changes outside ``status`` go in one merge patch to the
    object; when ``status`` changed too and the kind has a status subresource, those changes
    go in a second merge patch to ``/status``. The result says which were sent: ``UPDATED``
    (object only), ``UPDATED_STATUS`` (both), ``UPDATED_STATUS_ONLY``, or ``UNCHANGED``
    (neither: no request). For a kind without a status subresource, ``status`` is an ordinary
    field and travels in the object patch. A created object is ``CREATED`` whatever its
    status: the server drops ``status`` on create for kinds with a status subresource (as in
    controller-runtime); the next call patches it.

    Lists are replaced whole by a merge patch, so a concurrent writer's change to the same
    list (finalizers, conditions) can be lost; ``optimistic_lock=True`` makes each patch carry
    the resourceVersion it was computed from, and then a ``Conflict`` re-reads and retries
    (as controller-runtime's ``MergeFromWithOptimisticLock``). Returns the server's object
    after the last patch (the live object when unchanged).
    """
    kind = kind_for(obj)
    key = _key(obj)
    status_apart = _has_status_subresource(client, kind)
    object_patched = False  # kept across retries: a later try may only need the status

    def attempt() -> tuple[T, OperationResult]:
        nonlocal object_patched
        live, created = _live_or_created(client, kind, key, obj, mutate)
        if created:
            return live, OperationResult.CREATED
        desired = _mutated(mutate, _copy(live), key)
        before, after = _wire(live), _wire(desired)
        before_status = {"status": before.pop("status")} if "status" in before else {}
        after_status = {"status": after.pop("status")} if "status" in after else {}
        if not status_apart:
            before.update(before_status)
            after.update(after_status)
            before_status = after_status = {}
        current: T = live
        object_patch = merge_patch_for(before, after)
        if object_patch:
            current = _merge_patch(
                client,
                kind,
                key,
                object_patch,
                subresource=None,
                lock_on=current if optimistic_lock else None,
            )
            object_patched = True
        status_patch = merge_patch_for(before_status, after_status)
        if status_patch:
            current = _merge_patch(
                client,
                kind,
                key,
                status_patch,
                subresource="status",
                lock_on=current if optimistic_lock else None,
            )
            if object_patched:
                return current, OperationResult.UPDATED_STATUS
            return current, OperationResult.UPDATED_STATUS_ONLY
        if object_patched:
            return current, OperationResult.UPDATED
        return current, OperationResult.UNCHANGED

    return retry_on(is_write_race, attempt, backoff)


def patch_status(
    client: ObjectClient,
    obj: T,
    mutate_or_new_status: Mutate[T] | Mapping[str, Any] | BaseModel,
    *,
    optimistic_lock: bool = False,
) -> T:
    """Write ``obj``'s new status as a merge patch of only the changed status fields.

    ``mutate_or_new_status`` is either a function that changes (a copy of) ``obj``'s status
    in place, or the complete new status (a dict or a status model; keys it lacks are
    removed). ``obj`` is the object as last read, from the cache or not; it is not modified.

    When the status is unchanged, no request is made and ``obj`` itself is returned.
    Otherwise one merge patch ``{"status": <changed fields>}`` goes to the ``status``
    subresource (to the object itself for kinds without one) and the server's object is
    returned. Without ``optimistic_lock`` the patch has no resourceVersion precondition, so
    it applies whatever changed meanwhile: fields we did not change are left alone, but a
    list we changed (``conditions``) replaces the server's. With ``optimistic_lock=True`` the
    patch carries ``obj``'s resourceVersion and a stale ``obj`` gets ``Conflict`` (not
    retried here: the caller requeues and recomputes from a fresh read). Changes ``mutate``
    makes outside ``status`` are ignored.
    """
    before = _wire(obj)
    if callable(mutate_or_new_status):
        changed = _copy(obj)
        mutate_or_new_status(changed)
        after_status = _wire(changed).get("status")
    else:
        after_status = _wire(mutate_or_new_status)
    old = {"status": before["status"]} if "status" in before else {}
    new = {"status": after_status} if after_status is not None else {}
    patch = merge_patch_for(old, new)
    if not patch:
        return obj
    kind = kind_for(obj)
    subresource = "status" if _has_status_subresource(client, kind) else None
    patched: T = _merge_patch(
        client,
        kind,
        _key(obj),
        patch,
        subresource=subresource,
        lock_on=obj if optimistic_lock else None,
    )
    return patched


# --- owner references ----------------------------------------------------------------------


def _as_mapping(obj: Mapping[str, Any] | BaseModel) -> Mapping[str, Any]:
    return _wire(obj) if isinstance(obj, BaseModel) else obj


def _on_metadata(
    obj: Obj, key: str, change: Callable[[MutableMapping[str, Any]], T]
) -> tuple[Obj, T]:
    """Run a dict-based ``change`` on ``obj``: a dict directly; for a model, on a shadow dict
    of its wire form whose ``metadata[key]`` is then written back to the model."""
    if not isinstance(obj, BaseModel):
        return obj, change(obj)
    shadow = _wire(obj)
    result = change(shadow)
    _set_metadata_field(obj, key, (shadow.get("metadata") or {}).get(key))
    return obj, result


def _set_metadata_field(obj: BaseModel, key: str, value: Any) -> None:
    meta = getattr(obj, "metadata", None)
    if meta is None:
        meta = ObjectMeta()
        obj.metadata = meta  # type: ignore[attr-defined]
    meta_class = type(meta)
    for attr, field in meta_class.model_fields.items():
        if key in (attr, field.alias, field.validation_alias, field.serialization_alias):
            # Validate through the metadata model so nested items become models, not dicts.
            value = (
                None if value is None else getattr(meta_class.model_validate({key: value}), attr)
            )
            setattr(meta, attr, value)
            return
    setattr(meta, key, value)  # metadata models keep unknown keys


def set_controller_reference(
    owner: Mapping[str, Any] | BaseModel, obj: Obj, *, block_owner_deletion: bool = True
) -> Obj:
    """Make ``owner`` the controller of ``obj`` (in place); returns ``obj``.

    :func:`kube_runtime.ownership.set_controller_reference` for dicts and models: raises
    :class:`AlreadyOwnedError` when another owner controls ``obj``, ``ValueError`` for a
    reference the API would refuse (cross-namespace, namespaced owner of a cluster-scoped
    object, an owner without uid).
    """
    return _reference(ownership.set_controller_reference, owner, obj, block_owner_deletion)


def set_owner_reference(
    owner: Mapping[str, Any] | BaseModel, obj: Obj, *, block_owner_deletion: bool | None = None
) -> Obj:
    """Add or replace a non-controller reference to ``owner`` on ``obj`` (in place); returns
    ``obj``. :func:`kube_runtime.ownership.set_owner_reference` for dicts and models."""
    return _reference(ownership.set_owner_reference, owner, obj, block_owner_deletion)


def _reference(
    setter: Callable[..., Any],
    owner: Mapping[str, Any] | BaseModel,
    obj: Obj,
    block_owner_deletion: bool | None,
) -> Obj:
    """Apply an :mod:`kube_runtime.ownership` reference ``setter`` to ``obj``'s metadata."""

    def edit(refs_holder: Any) -> Any:
        return setter(_as_mapping(owner), refs_holder, block_owner_deletion=block_owner_deletion)

    return _on_metadata(obj, "ownerReferences", edit)[0]


def remove_owner_reference(owner: Mapping[str, Any] | BaseModel, obj: Obj) -> bool:
    """Remove ``obj``'s references to ``owner`` (in place); True if there was one.

    (controller-runtime returns an error when there is none.)"""
    return _on_metadata(
        obj, "ownerReferences", lambda o: ownership.remove_owner_reference(_as_mapping(owner), o)
    )[1]


def has_owner_reference(
    obj: Mapping[str, Any] | BaseModel, owner: Mapping[str, Any] | BaseModel
) -> bool:
    """Whether ``obj`` references ``owner`` (controller or not), by group, kind and name."""
    return ownership.has_owner_reference(_as_mapping(obj), _as_mapping(owner))


def has_controller_reference(obj: Mapping[str, Any] | BaseModel) -> bool:
    """Whether ``obj`` has a controller reference (any owner with ``controller: true``)."""
    return ownership.get_controller_of(_as_mapping(obj)) is not None


def get_controller_of(obj: Mapping[str, Any] | BaseModel) -> dict[str, Any] | None:
    """A copy of ``obj``'s controller reference (a dict), or None."""
    return ownership.get_controller_of(_as_mapping(obj))


def is_controlled_by(
    obj: Mapping[str, Any] | BaseModel, owner: Mapping[str, Any] | BaseModel
) -> bool:
    """Whether ``owner`` (by uid) is ``obj``'s controller."""
    return ownership.is_controlled_by(_as_mapping(obj), _as_mapping(owner))


# --- finalizers -----------------------------------------------------------------------------


def _finalizers(obj: Mapping[str, Any] | BaseModel) -> list[str]:
    if isinstance(obj, BaseModel):
        meta = getattr(obj, "metadata", None)
        return list(getattr(meta, "finalizers", None) or [])
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def _set_finalizers(obj: MutableMapping[str, Any] | BaseModel, finalizers: list[str]) -> None:
    # A new list each time (never changed in place); none left means the key goes away.
    if isinstance(obj, BaseModel):
        _set_metadata_field(obj, "finalizers", finalizers or None)
        return
    metadata = obj.setdefault("metadata", {})
    if finalizers:
        metadata["finalizers"] = finalizers
    else:
        metadata.pop("finalizers", None)


def contains_finalizer(obj: Mapping[str, Any] | BaseModel, name: str) -> bool:
    """Whether ``name`` is in ``obj``'s ``metadata.finalizers``."""
    return name in _finalizers(obj)


def add_finalizer(obj: MutableMapping[str, Any] | BaseModel, name: str) -> bool:
    """Append ``name`` to ``obj``'s finalizers (in memory) unless present; True if added."""
    finalizers = _finalizers(obj)
    if name in finalizers:
        return False
    _set_finalizers(obj, [*finalizers, name])
    return True


def remove_finalizer(obj: MutableMapping[str, Any] | BaseModel, name: str) -> bool:
    """Remove every ``name`` from ``obj``'s finalizers (in memory); True if one was there."""
    finalizers = _finalizers(obj)
    kept = [f for f in finalizers if f != name]
    if len(kept) == len(finalizers):
        return False
    _set_finalizers(obj, kept)
    return True


# --- not found ----------------------------------------------------------------------------


def ignore_not_found(err: E | None) -> E | None:
    """None for a ``NotFound`` error (or None), else ``err`` itself (controller-runtime's
    ``client.IgnoreNotFound``)::

        error = ignore_not_found(err)
        if error is not None:
            raise error
    """
    return None if err is None or is_not_found(err) else err


@contextmanager
def ignoring_not_found() -> Iterator[None]:
    """A ``with`` block in which a ``NotFound`` error ends the block quietly; any other
    exception propagates::

        with ignoring_not_found():
            client.delete(kinds.ConfigMap, "old", namespace)
    """
    try:
        yield
    except NotFound:
        pass
