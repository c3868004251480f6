"""Adding and removing finalizers with an optimistic lock, for objects of any kind.

Contract:

* :func:`has_finalizer` looks at the given object only.
* :func:`add_finalizer` / :func:`remove_finalizer` compute the new ``metadata.finalizers`` from
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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kube_runtime.kinds import Kind
from kube_runtime.retry import retry_on_conflict


def _as_dict(obj: Any) -> Mapping[str, Any]:
    if isinstance(obj, Mapping):
        return obj
    dumped: dict[str, Any] = obj.model_dump(by_alias=True, exclude_none=True)
    return dumped


def _finalizers(obj: Any) -> list[str]:
    return list((_as_dict(obj).get("metadata") or {}).get("finalizers") or [])


def has_finalizer(obj: Any, name: str) -> bool:
    """Whether ``name`` is in the object's ``metadata.finalizers``."""
    return name in _finalizers(obj)


def add_finalizer(client: Any, obj: Any, name: str) -> Any:
    """Ensure ``name`` is among the object's finalizers (appended last); see the module doc."""
    return _change_finalizers(
        client, obj, lambda current: current if name in current else [*current, name]
    )


def remove_finalizer(client: Any, obj: Any, name: str) -> Any:
    """Ensure ``name`` is not among the object's finalizers; see the module doc."""
    return _change_finalizers(client, obj, lambda current: [f for f in current if f != name])


def _change_finalizers(client: Any, obj: Any, change: Callable[[list[str]], list[str]]) -> Any:
    # A resource model's class makes the client answer with models too.
    kind: Any = type(obj) if hasattr(type(obj), "__kube_resource__") else Kind.of(obj)
    meta = _as_dict(obj).get("metadata") or {}
    name, namespace = meta.get("name"), meta.get("namespace")
    if not name:
        raise ValueError("object has no metadata.name")
    first = True

    def attempt() -> Any:
        # Only a Conflict brings a second try: from then on start from the server's object.
        nonlocal first
        current = obj if first else client.get(kind, name, namespace)
        first = False
        finalizers = _finalizers(current)
        wanted = change(finalizers)
        if wanted == finalizers:
            return current
        patch_meta: dict[str, Any] = {"finalizers": wanted}
        version = (_as_dict(current).get("metadata") or {}).get("resourceVersion")
        if version:
            patch_meta["resourceVersion"] = version
        return client.patch(
            kind, name, {"metadata": patch_meta}, namespace=namespace, patch_type="merge"
        )

    return retry_on_conflict(attempt)
