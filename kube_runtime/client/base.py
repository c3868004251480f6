"""The base class of the bundled client implementations.

The protocols of :mod:`kube_runtime.client.interfaces` carry default implementations of
their public methods (as :mod:`collections.abc` mixin methods do): they gather the keyword
arguments and call ``_do_*`` hooks. A class that subclasses a protocol explicitly inherits
those typed public methods (overloads included) and implements only the hooks, which is how
the REST :class:`~kube_runtime.client.Client`, :class:`~kube_runtime.client.cached.
CachedClient` and :class:`~kube_runtime.client.fake.FakeClient` are written:

==================  ====================================================================
public method       hook the subclass implements
==================  ====================================================================
``get``             ``_do_get(kind, name, namespace)``
``list``            ``_do_list(kind, namespace, query: ListQuery)``
``create``          ``_do_create(obj, namespace, field_manager, dry_run)``
``update``          ``_do_update(obj, field_manager, dry_run)``
``patch``           ``_do_patch(kind, name, patch, options: PatchOptions)``
``apply``           ``_do_apply(obj, field_manager, force, dry_run)``
``delete``          ``_do_delete(kind, name, namespace, options: DeleteOptions)``
``delete_all_of``   ``_do_delete_all_of(kind, namespace, query: ListQuery,
                    options: DeleteOptions)``
==================  ====================================================================

A ``StatusWriter`` subclass implements ``_do_update(obj, field_manager, dry_run)`` and
``_do_patch(kind, name, patch, options)`` (``options.subresource == "status"``); a
``SubResourceClient`` subclass has a ``name`` attribute and implements ``_do_get(kind, name,
namespace)``, ``_do_update(obj, body, field_manager, dry_run)`` and ``_do_patch(kind, name,
patch, options)`` (``options.subresource == name``). The options records are in
:mod:`kube_runtime.client.options`. A client may instead implement the public methods
directly: the protocols are structural, so any class with those methods is a client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from kube_runtime.client import interfaces
from kube_runtime.client.interfaces import ObjectLike

__all__ = ["ClientBase"]

M = TypeVar("M", bound=BaseModel)


class ClientBase(interfaces.Client):
    """:class:`~kube_runtime.client.interfaces.Client` with its default methods, plus
    ``update_status`` (kept for callers of the older name). Subclasses implement the
    ``_do_*`` hooks (see the module docstring), ``status()`` and ``subresource()``."""

    @overload
    def update_status(
        self, obj: M, *, field_manager: str | None = None, dry_run: bool = False
    ) -> M: ...
    @overload
    def update_status(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...

    def update_status(
        self, obj: ObjectLike, *, field_manager: str | None = None, dry_run: bool = False
    ) -> Any:
        """``status().update(obj)``: replace the status subresource of ``obj``."""
        return self.status().update(obj, field_manager=field_manager, dry_run=dry_run)
