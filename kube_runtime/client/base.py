"""The mixins the bundled clients are built from: the protocols' public methods over hooks.

The protocols of :mod:`kube_runtime.client.interfaces` are pure (declarations and
contracts). A class that implements them by subclassing these mixins gets the public methods,
which gather the keyword arguments into the records of :mod:`kube_runtime.client.options`
and call ``_do_*`` hooks; each mixin declares the hooks it needs as abstract methods, so a
subclass that forgets one cannot be instantiated (and mypy says so). The REST
:class:`~kube_runtime.client.Client`, :class:`~kube_runtime.client.cached.CachedClient` and
:class:`~kube_runtime.client.fake.FakeClient` are written so:

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

:class:`ReaderMixin` has ``get`` and ``list``, :class:`WriterMixin` the writes,
:class:`ClientBase` both plus ``update_status`` (``status()`` and ``subresource()`` are
abstract). A :class:`StatusWriterMixin` subclass implements ``_do_update(obj, field_manager,
dry_run)`` and ``_do_patch(kind, name, patch, options)`` (``options.subresource ==
"status"``); a :class:`SubResourceMixin` subclass has a ``name`` attribute and implements
``_do_get(kind, name, namespace)``, ``_do_update(obj, body, field_manager, dry_run)`` and
``_do_patch(kind, name, patch, options)`` (``options.subresource == name``).

Statically, the mixins' methods take any kind and return ``Any`` for a single object: the
overloads that give a model for a model class are the protocols'. Annotate with the protocol
(``ClientInterface``) to get them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, TypeVar, Unpack, overload

from pydantic import BaseModel

from kube_runtime.client import interfaces
from kube_runtime.client.interfaces import ObjectLike, PatchBody
from kube_runtime.client.options import (
    ApplyKeywords,
    CreateKeywords,
    DeleteAllOfKeywords,
    DeleteKeywords,
    DeleteOptions,
    ListKeywords,
    ListQuery,
    PatchKeywords,
    PatchOptions,
    SubresourcePatchKeywords,
    SubresourceUpdateKeywords,
    WriteKeywords,
    check_keywords,
)
from kube_runtime.kinds import KindLike
from kube_runtime.meta import Obj

__all__ = ["ClientBase", "ReaderMixin", "StatusWriterMixin", "SubResourceMixin", "WriterMixin"]

M = TypeVar("M", bound=BaseModel)


class ReaderMixin(ABC):
    """:class:`~kube_runtime.client.interfaces.Reader`'s methods over ``_do_get`` /
    ``_do_list``."""

    @abstractmethod
    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Any:
        """The object (a model when ``kind`` is a model class); ``NotFound`` when absent."""

    @abstractmethod
    def _do_list(self, kind: KindLike, namespace: str | None, query: ListQuery) -> Obj:
        """The List dict of the objects ``query`` selects."""

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Any:
        """See :meth:`Reader.get <kube_runtime.client.interfaces.Reader.get>`."""
        return self._do_get(kind, name, namespace)

    def list(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[ListKeywords]
    ) -> Obj:
        """See :meth:`Reader.list <kube_runtime.client.interfaces.Reader.list>`."""
        query = ListQuery(**check_keywords("list", options, ListKeywords))
        return self._do_list(kind, namespace, query)


class _UpdateMixin(ABC):
    """``update`` over ``_do_update``: the same for objects and their status."""

    @abstractmethod
    def _do_update(self, obj: ObjectLike, field_manager: str | None, dry_run: bool) -> Any:
        """PUT ``obj`` (or its status); returns the stored result."""

    def update(self, obj: ObjectLike, **options: Unpack[WriteKeywords]) -> Any:
        """See :meth:`Writer.update <kube_runtime.client.interfaces.Writer.update>` and
        :meth:`StatusWriter.update <kube_runtime.client.interfaces.StatusWriter.update>`."""
        given = check_keywords("update", options, WriteKeywords)
        return self._do_update(obj, given.get("field_manager"), given.get("dry_run", False))


class _PatchHook(ABC):
    """Declares ``_do_patch``, which every writer mixin calls."""

    @abstractmethod
    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Any:
        """Send one PATCH as ``options`` say; returns the patched object (or subresource)."""


class WriterMixin(_UpdateMixin, _PatchHook):
    """:class:`~kube_runtime.client.interfaces.Writer`'s methods over the write hooks."""

    @abstractmethod
    def _do_create(
        self, obj: ObjectLike, namespace: str | None, field_manager: str | None, dry_run: bool
    ) -> Any:
        """POST ``obj``; returns the stored object."""

    @abstractmethod
    def _do_apply(self, obj: ObjectLike, field_manager: str, force: bool, dry_run: bool) -> Any:
        """Server-side apply ``obj``; returns the result."""

    @abstractmethod
    def _do_delete(
        self, kind: KindLike, name: str, namespace: str | None, options: DeleteOptions
    ) -> Obj:
        """DELETE one object; returns the API server's answer."""

    @abstractmethod
    def _do_delete_all_of(
        self, kind: KindLike, namespace: str | None, query: ListQuery, options: DeleteOptions
    ) -> Obj:
        """DELETE the collection ``query`` selects; returns the List of deleted objects."""

    def create(self, obj: ObjectLike, **options: Unpack[CreateKeywords]) -> Any:
        """See :meth:`Writer.create <kube_runtime.client.interfaces.Writer.create>`."""
        given = check_keywords("create", options, CreateKeywords)
        namespace, field_manager = given.get("namespace"), given.get("field_manager")
        return self._do_create(obj, namespace, field_manager, given.get("dry_run", False))

    def patch(
        self, kind: KindLike, name: str, patch: PatchBody, **options: Unpack[PatchKeywords]
    ) -> Any:
        """See :meth:`Writer.patch <kube_runtime.client.interfaces.Writer.patch>`."""
        record = PatchOptions(**check_keywords("patch", options, PatchKeywords))
        return self._do_patch(kind, name, patch, record)

    def apply(self, obj: ObjectLike, **options: Unpack[ApplyKeywords]) -> Any:
        """See :meth:`Writer.apply <kube_runtime.client.interfaces.Writer.apply>`."""
        given = check_keywords("apply", options, ApplyKeywords)
        force, dry_run = given.get("force", True), given.get("dry_run", False)
        return self._do_apply(obj, given["field_manager"], force, dry_run)

    def delete(
        self,
        kind: KindLike,
        name: str,
        namespace: str | None = None,
        **options: Unpack[DeleteKeywords],
    ) -> Obj:
        """See :meth:`Writer.delete <kube_runtime.client.interfaces.Writer.delete>`."""
        record = DeleteOptions(**check_keywords("delete", options, DeleteKeywords))
        return self._do_delete(kind, name, namespace, record)

    def delete_all_of(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[DeleteAllOfKeywords]
    ) -> Obj:
        """See :meth:`Writer.delete_all_of <kube_runtime.client.interfaces.Writer.delete_all_of>`."""
        deletion = dict(check_keywords("delete_all_of", options, DeleteAllOfKeywords))
        query = ListQuery(
            deletion.pop("label_selector", None), deletion.pop("field_selector", None)
        )
        return self._do_delete_all_of(kind, namespace, query, DeleteOptions(**deletion))


class _SubresourcePatchMixin(_PatchHook):
    """``patch`` of the subresource :attr:`name` over ``_do_patch``."""

    #: The subresource (``status``, ``scale``, ...).
    name: str

    def patch(
        self,
        kind: KindLike,
        name: str,
        patch: PatchBody,
        **options: Unpack[SubresourcePatchKeywords],
    ) -> Any:
        """See :meth:`StatusWriter.patch <kube_runtime.client.interfaces.StatusWriter.patch>`
        and :meth:`SubResourceClient.patch
        <kube_runtime.client.interfaces.SubResourceClient.patch>`."""
        given = check_keywords("patch", options, SubresourcePatchKeywords)
        return self._do_patch(kind, name, patch, PatchOptions(subresource=self.name, **given))


class StatusWriterMixin(_UpdateMixin, _SubresourcePatchMixin, interfaces.StatusWriter):
    """:class:`~kube_runtime.client.interfaces.StatusWriter` over ``_do_update`` /
    ``_do_patch`` (with ``options.subresource == "status"``)."""

    name = "status"


class SubResourceMixin(_SubresourcePatchMixin, interfaces.SubResourceClient):
    """:class:`~kube_runtime.client.interfaces.SubResourceClient` of subresource
    :attr:`name` over ``_do_get`` / ``_do_update`` / ``_do_patch``."""

    @abstractmethod
    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Obj:
        """GET the subresource of one object."""

    @abstractmethod
    def _do_update(
        self, obj: ObjectLike, body: ObjectLike | None, field_manager: str | None, dry_run: bool
    ) -> Obj:
        """PUT ``body`` (None: ``obj``) to the subresource of ``obj``."""

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Obj:
        """See :meth:`SubResourceClient.get
        <kube_runtime.client.interfaces.SubResourceClient.get>`."""
        return self._do_get(kind, name, namespace)

    def update(self, obj: ObjectLike, **options: Unpack[SubresourceUpdateKeywords]) -> Obj:
        """See :meth:`SubResourceClient.update
        <kube_runtime.client.interfaces.SubResourceClient.update>`."""
        given = check_keywords("update", options, SubresourceUpdateKeywords)
        body, field_manager = given.get("body"), given.get("field_manager")
        return self._do_update(obj, body, field_manager, given.get("dry_run", False))


class ClientBase(ReaderMixin, WriterMixin, interfaces.Client):
    """:class:`~kube_runtime.client.interfaces.Client` over the hooks of
    :class:`ReaderMixin` and :class:`WriterMixin`, plus ``update_status`` (kept for callers
    of the older name). Subclasses implement the ``_do_*`` hooks, ``status()`` and
    ``subresource()``."""

    @abstractmethod
    def status(self) -> interfaces.StatusWriter:
        """The status subresource's writer."""

    @abstractmethod
    def subresource(self, name: str) -> interfaces.SubResourceClient:
        """The client of subresource ``name``."""

    @overload
    def update_status(self, obj: M, **options: Unpack[WriteKeywords]) -> M: ...
    @overload
    def update_status(self, obj: Mapping[str, Any], **options: Unpack[WriteKeywords]) -> Obj: ...

    def update_status(self, obj: ObjectLike, **options: Unpack[WriteKeywords]) -> Any:
        """``status().update(obj)``: replace the status subresource of ``obj``."""
        return self.status().update(obj, **options)
