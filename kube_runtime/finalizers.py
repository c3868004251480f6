"""Writing a finalizer change to the API with an optimistic lock, for objects of any kind.

The documented home of finalizer helpers is :mod:`kube_runtime.controllerutil`: its
``add_finalizer(obj, name) -> bool`` / ``remove_finalizer(obj, name) -> bool`` /
``contains_finalizer`` change an object in memory (controller-runtime's
``controllerutil.AddFinalizer``) and compose with ``create_or_update`` / ``create_or_patch``.
This module keeps the variants that also write the change, alone, to the API (the in-memory
decision is controllerutil's), under their own names:

* :func:`has_finalizer` looks at the given object only (``controllerutil.contains_finalizer``).
* :func:`ensure_finalizer` / :func:`ensure_finalizer_removed` compute the new
  ``metadata.finalizers`` from
  the given object and send a JSON merge patch carrying that list and the object's
  ``metadata.resourceVersion``, so the write fails with 409 Conflict if the object changed
  since it was read (a merge patch replaces the whole list: without the precondition it could
  drop a finalizer someone else just added). On Conflict the object is re-read from the API
  and the change recomputed, with :func:`kube_runtime.retry.retry_on_conflict`'s backoff.
* When nothing would change, no request is made and the given object is returned.
  Otherwise the server's patched object is returned (for an object being deleted, removing the
  last finalizer lets the server delete it: the returned object is its final state).
* An object without ``resourceVersion`` is patched without the precondition.
* Other errors (``NotFound`` when the object is gone, ``Invalid``, ...) propagate.
* A resource model is answered with a model, read leniently
  (:func:`kube_runtime.models.validate_lenient`): a stored object its model no longer accepts
  can still have its finalizer added and removed.

``finalizers.add_finalizer(client, obj, name)`` and ``finalizers.remove_finalizer(client, obj,
name)``, the old names of the two writers, shared controllerutil's names with another
signature: they still work, with a ``DeprecationWarning`` naming the new one.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from kube_runtime import _moved, controllerutil, meta
from kube_runtime.kinds import Kind, as_kind
from kube_runtime.models import validate_lenient
from kube_runtime.retry import retry_on_conflict

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client

__all__ = ["ensure_finalizer", "ensure_finalizer_removed", "has_finalizer"]

has_finalizer = controllerutil.contains_finalizer

#: The writers' old names (they clashed with controllerutil's in-memory helpers).
RENAMED = {"add_finalizer": "ensure_finalizer", "remove_finalizer": "ensure_finalizer_removed"}


def _finalizers(obj: Any) -> list[str]:
    return list(meta.finalizers(obj))


def ensure_finalizer(client: Client, obj: Any, name: str) -> Any:
    """Ensure ``name`` is among the object's finalizers in the API (appended last) and return
    the object as written (``obj`` itself when nothing changed); see the module doc."""
    return _change_finalizers(
        client, obj, lambda shadow: controllerutil.add_finalizer(shadow, name)
    )


def ensure_finalizer_removed(client: Client, obj: Any, name: str) -> Any:
    """Ensure ``name`` is not among the object's finalizers in the API and return the object as
    written (``obj`` itself when nothing changed); see the module doc."""
    return _change_finalizers(
        client, obj, lambda shadow: controllerutil.remove_finalizer(shadow, name)
    )


def __getattr__(name: str) -> Any:
    """The writers' old names (:data:`RENAMED`), with a ``DeprecationWarning``."""
    new = RENAMED.get(name)
    if new is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _moved.warn_moved(f"{__name__}.{name}", f"{__name__}.{new}")
    return globals()[new]


def _typed(model: type[BaseModel] | None, answer: Any) -> Any:
    return answer if model is None else validate_lenient(model, answer)[0]


def _change_finalizers(
    client: Client, obj: Any, change: Callable[[MutableMapping[str, Any]], bool]
) -> Any:
    # A resource model answers with models too, read leniently: an object its model no
    # longer accepts (stored before a stricter rule) must still be finalized.
    model = type(obj) if hasattr(type(obj), "__kube_resource__") else None
    kind: Any = as_kind(model) if model is not None else Kind.of(obj)
    name, namespace = meta.name(obj), meta.namespace(obj) or None
    if not name:
        raise ValueError("object has no metadata.name")
    first = True

    def attempt() -> Any:
        # Only a Conflict brings a second try: from then on start from the server's object.
        nonlocal first
        current = obj if first else _typed(model, client.get(kind, name, namespace))
        first = False
        # The change runs on a shadow holding only the finalizers: `current` stays untouched.
        shadow: dict[str, Any] = {"metadata": {"finalizers": _finalizers(current)}}
        if not change(shadow):
            return current
        patch_meta: dict[str, Any] = {"finalizers": shadow["metadata"].get("finalizers", [])}
        version = meta.resource_version(current)
        if version:
            patch_meta["resourceVersion"] = version
        answer = client.patch(
            kind, name, {"metadata": patch_meta}, namespace=namespace, patch_type="merge"
        )
        return _typed(model, answer)

    return retry_on_conflict(attempt)
