"""What a client is: the protocols every client of the framework implements.

Code that reads or writes objects depends on these protocols, never on a concrete class, so
the same reconciler runs on the REST client, on the cache-backed client of a manager and on
the in-memory fake of a unit test (controller-runtime's ``client.Reader`` / ``Writer`` /
``StatusClient`` / ``SubResourceClientConstructor``, in Python):

=====================  ==================================================================
:class:`Reader`        ``get``, ``list`` (with label/field selectors and cache indexes)
:class:`Writer`        ``create``, ``update``, ``patch``, ``apply``, ``delete``,
                       ``delete_all_of``
:class:`StatusWriter`  ``update`` / ``patch`` of the ``status`` subresource
:class:`SubResourceClient`  ``get`` / ``update`` / ``patch`` of any subresource (``scale``)
:class:`Client`        all of the above: ``Reader`` + ``Writer`` + ``status()`` +
                       ``subresource(name)``
=====================  ==================================================================

Implementations (each checked against these protocols by mypy, see
``tests/unit/framework/test_client_protocols.py``):

* :class:`kube_runtime.client.Client` - the REST client (reads and writes the API server);
* :class:`kube_runtime.client.cached.CachedClient` - reads from the informer cache, writes
  through the REST client (what :attr:`Manager.client <kube_runtime.manager.Manager>` is);
* :class:`kube_runtime.client.fake.FakeClient` - in memory, with API semantics, for unit
  tests.

The protocols are pure: they declare the methods and their contracts, nothing else. The
bundled implementations get the public methods from the mixins of
:mod:`kube_runtime.client.base` (:class:`~kube_runtime.client.base.ReaderMixin`,
:class:`~kube_runtime.client.base.WriterMixin`, ...), which gather the keyword arguments into
the records of :mod:`kube_runtime.client.options` and call ``_do_*`` hooks that each mixin
declares abstract. Implementing the methods directly works as well: the protocols are
structural.

:class:`WithWatch` adds what a :class:`~kube_runtime.manager.Manager` runs on: ``watch`` (its
informers list and watch through it) and the REST ``mapper``. The REST client and the fake
are both one.

The REST class keeps its name ``Client``; the protocol is ``interfaces.Client`` here and
:data:`kube_runtime.client.ClientInterface` from the package. Annotate collaborators with
the protocol::

    from kube_runtime.client import ClientInterface

    class Reconciler:
        def __init__(self, client: ClientInterface) -> None: ...

Shared conventions (every method of every implementation):

* **Objects** are plain JSON dicts, or typed resource models (pydantic classes carrying
  ``__kube_resource__``). A method that takes a kind returns a model when the kind is a
  model class; a write of a model returns the written object as that model. Lists are
  always dicts (their ``items`` are models when the kind is a model class). Subresource
  bodies (a ``Scale``) are dicts: they are not the parent kind's model.
* **Options** are keyword arguments, typed per method by one ``TypedDict`` of
  :mod:`kube_runtime.client.options` (``**options: Unpack[ListKeywords]``; its docstring
  gives the defaults): mypy rejects a keyword the method does not take, and so does a call
  at run time (``TypeError``).
* **Kinds** are :data:`~kube_runtime.kinds.KindLike`: a :class:`~kube_runtime.kinds.Kind`,
  ``"group/version/Kind"`` (``"v1/Pod"``), or a resource model class.
* **Namespaces**: a namespaced kind needs one for get/create/update/patch/delete
  (``ValueError`` before any request otherwise); cluster-scoped kinds ignore it.
* **Errors** are the API server's, typed (:mod:`kube_runtime.client.errors`):
  ``NotFound``, ``AlreadyExists``, ``Conflict`` (stale ``resourceVersion``, failed
  precondition), ``Invalid``, ``BadRequest`` (a bad selector), ... with upstream's messages
  (``configmaps "x" not found``). Mistakes the client sees without asking the server
  (no namespace, an unknown ``patch_type``) raise ``ValueError`` / ``TypeError``.
* **Ownership of results**: a returned object belongs to the caller, except objects read
  from a cache (:class:`~kube_runtime.client.cached.CachedClient`), which are shared and
  must be deep-copied before being changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, Unpack, overload, runtime_checkable

from pydantic import BaseModel

from kube_runtime.client.mapping import RestMapper
from kube_runtime.client.options import (
    ApplyKeywords,
    CreateKeywords,
    DeleteAllOfKeywords,
    DeleteKeywords,
    ListKeywords,
    PatchKeywords,
    SubresourcePatchKeywords,
    SubresourceUpdateKeywords,
    WatchKeywords,
    WriteKeywords,
)
from kube_runtime.client.options import IndexKey as IndexKey
from kube_runtime.client.options import PatchType as PatchType
from kube_runtime.client.options import Selector as Selector
from kube_runtime.client.watch import Watch
from kube_runtime.kinds import Kind, KindLike
from kube_runtime.meta import Obj as Obj

__all__ = [
    "Client",
    "IndexKey",
    "Obj",
    "ObjectLike",
    "PatchBody",
    "PatchType",
    "Reader",
    "Selector",
    "StatusWriter",
    "SubResourceClient",
    "Updater",
    "Watcher",
    "WithWatch",
    "Writer",
]

M = TypeVar("M", bound=BaseModel)
W_co = TypeVar("W_co", covariant=True)

#: What a write accepts: a JSON object, or a typed resource model.
ObjectLike = Mapping[str, Any] | BaseModel
#: A patch document: an object (merge, strategic, apply; a model is dumped), or the list of
#: operations of a JSON patch.
PatchBody = Mapping[str, Any] | Sequence[Mapping[str, Any]] | BaseModel


@runtime_checkable
class Reader(Protocol):
    """Reads objects of any kind."""

    @overload
    def get(self, kind: type[M], name: str, namespace: str | None = None) -> M: ...
    @overload
    def get(self, kind: Kind | str, name: str, namespace: str | None = None) -> Obj: ...

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Any:
        """The object ``kind``/``namespace``/``name``; ``NotFound`` when there is none.

        ``namespace`` is required for namespaced kinds and ignored for cluster-scoped ones.
        Returns a model when ``kind`` is a model class, else a dict with ``apiVersion`` and
        ``kind`` set.
        """
        ...

    def list(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[ListKeywords]
    ) -> Obj:
        """The objects of ``kind`` in ``namespace`` (None: every namespace) as a List dict.

        The shape is the same from every implementation: ``{"apiVersion", "kind":
        "<Kind>List", "metadata": {"resourceVersion": str}, "items": [...]}``, each item with
        ``apiVersion``/``kind`` set (a model when ``kind`` is a model class).

        Filters combine (AND). ``label_selector`` and ``field_selector`` follow the API
        server's rules (a malformed selector or a field the kind does not support is a
        ``BadRequest``). ``index=(index_name, value)`` keeps the objects whose index function
        produced ``value``: indexes are client-side, so only cache-backed readers (and the
        fake) serve them; the REST client raises ``ValueError``; an unknown index name is a
        ``KeyError``. ``limit`` bounds the size of one request: the REST client and the fake
        return every match (fetched page by page), the cache-backed reader at most
        ``limit`` items.
        """
        ...


class Updater(Protocol):
    """``update``: replace an object (:class:`Writer`) or its status (:class:`StatusWriter`),
    found by the kind, namespace and name ``obj`` carries; the two share this signature."""

    @overload
    def update(self, obj: M, **options: Unpack[WriteKeywords]) -> M: ...
    @overload
    def update(self, obj: Mapping[str, Any], **options: Unpack[WriteKeywords]) -> Obj: ...

    def update(self, obj: ObjectLike, **options: Unpack[WriteKeywords]) -> Any:
        """Replace what the writer writes (see :class:`Writer` and :class:`StatusWriter`) with
        ``obj``'s; returns the stored object (a model for a model). A
        ``metadata.resourceVersion`` makes the write conditional (``Conflict`` when stale);
        ``NotFound`` when the object does not exist."""
        ...


@runtime_checkable
class Writer(Updater, Protocol):
    """Creates, changes and deletes objects of any kind.

    ``update`` replaces the whole object. Without ``metadata.resourceVersion`` the write is
    unconditional for built-in kinds; custom kinds require it (``Invalid``). For kinds with
    a status subresource the ``status`` in ``obj`` is ignored (write it with
    :meth:`Client.status`). A write that changes nothing stores nothing (same
    ``resourceVersion``).
    """

    @overload
    def create(self, obj: M, **options: Unpack[CreateKeywords]) -> M: ...
    @overload
    def create(self, obj: Mapping[str, Any], **options: Unpack[CreateKeywords]) -> Obj: ...

    def create(self, obj: ObjectLike, **options: Unpack[CreateKeywords]) -> Any:
        """Create ``obj``; returns the stored object (``uid``, ``resourceVersion``,
        ``creationTimestamp``, a name from ``metadata.generateName`` when given).

        ``namespace`` defaults to ``metadata.namespace``. ``AlreadyExists`` when the name is
        taken; ``Invalid`` when the object is (e.g. no name and no generateName).
        ``dry_run`` validates and returns the result without storing it.
        """
        ...

    @overload
    def patch(
        self, kind: type[M], name: str, patch: PatchBody, **options: Unpack[PatchKeywords]
    ) -> M: ...
    @overload
    def patch(
        self, kind: Kind | str, name: str, patch: PatchBody, **options: Unpack[PatchKeywords]
    ) -> Obj: ...

    def patch(
        self, kind: KindLike, name: str, patch: PatchBody, **options: Unpack[PatchKeywords]
    ) -> Any:
        """Patch one object (or its ``subresource``); returns the result.

        ``patch_type``: ``merge`` (RFC 7386), ``strategic`` (built-in kinds; a custom kind
        answers 415 UnsupportedMediaType), ``json`` (RFC 6902: ``patch`` is a list of
        operations, ``TypeError`` otherwise) or ``apply`` (server-side apply: needs
        ``field_manager``; ``force`` is valid for apply only, ``ValueError`` otherwise).
        A ``metadata.resourceVersion`` in the patch is a precondition (``Conflict`` when
        stale). ``NotFound`` when the object does not exist (apply creates it).
        """
        ...

    @overload
    def apply(self, obj: M, **options: Unpack[ApplyKeywords]) -> M: ...
    @overload
    def apply(self, obj: Mapping[str, Any], **options: Unpack[ApplyKeywords]) -> Obj: ...

    def apply(self, obj: ObjectLike, **options: Unpack[ApplyKeywords]) -> Any:
        """Server-side apply ``obj`` as ``field_manager`` (creating it if absent): the
        object's fields end up as ``obj`` states; ``force`` takes over fields other
        managers own."""
        ...

    def delete(
        self,
        kind: KindLike,
        name: str,
        namespace: str | None = None,
        **options: Unpack[DeleteKeywords],
    ) -> Obj:
        """Delete one object; returns the API server's answer (a dict, also for models).

        An object with finalizers is not removed: it gets ``metadata.deletionTimestamp`` and
        stays until its finalizers are all removed (by an update or a patch), then goes;
        the answer is that object. An object removed at once answers a ``Status`` (kind
        ``Status``, ``status: Success``), or the object for kinds whose storage returns it
        (pods, services, namespaces, ...). ``uid`` / ``resource_version`` are preconditions
        (``Conflict`` when they do not hold). ``propagation_policy``: ``Background``,
        ``Foreground`` or ``Orphan``. ``NotFound`` when there is no such object.
        """
        ...

    def delete_all_of(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[DeleteAllOfKeywords]
    ) -> Obj:
        """Delete every object of ``kind`` in ``namespace`` matching the selectors (each as
        :meth:`delete` would); returns a List dict of the deleted objects' last states."""
        ...


@runtime_checkable
class StatusWriter(Updater, Protocol):
    """Writes the ``status`` subresource: only ``status`` changes, whatever else is sent.

    ``update`` replaces the status of ``obj`` with ``obj["status"]``; the spec is left as
    stored (``generation`` does not move). A kind without a status subresource answers
    ``NotFound`` (``the server could not find the requested resource``).
    """

    @overload
    def patch(
        self,
        kind: type[M],
        name: str,
        patch: PatchBody,
        **options: Unpack[SubresourcePatchKeywords],
    ) -> M: ...
    @overload
    def patch(
        self,
        kind: Kind | str,
        name: str,
        patch: PatchBody,
        **options: Unpack[SubresourcePatchKeywords],
    ) -> Obj: ...

    def patch(
        self,
        kind: KindLike,
        name: str,
        patch: PatchBody,
        **options: Unpack[SubresourcePatchKeywords],
    ) -> Any:
        """Patch the status subresource (as :meth:`Writer.patch`); changes outside
        ``status`` are dropped. Returns the whole object."""
        ...


@runtime_checkable
class SubResourceClient(Protocol):
    """Reads and writes one subresource (``scale``, ``status``, ...) of objects of any kind.

    Subresource bodies are dicts (a ``Scale`` is ``autoscaling/v1``, whatever the parent
    kind); a subresource the kind does not have answers ``NotFound``.
    """

    def get(self, kind: KindLike, name: str, namespace: str | None = None) -> Obj:
        """The subresource of object ``kind``/``namespace``/``name`` (e.g. its ``Scale``)."""
        ...

    def update(self, obj: ObjectLike, **options: Unpack[SubresourceUpdateKeywords]) -> Obj:
        """PUT the subresource of ``obj`` (which names kind, namespace and name).

        ``body`` is the subresource object to send (a ``Scale``); None sends ``obj`` itself
        (the ``status`` subresource takes the whole object). A ``metadata.resourceVersion``
        in what is sent is a precondition. Returns the server's answer.
        """
        ...

    def patch(
        self,
        kind: KindLike,
        name: str,
        patch: PatchBody,
        **options: Unpack[SubresourcePatchKeywords],
    ) -> Obj:
        """Patch the subresource (``{"spec": {"replicas": 3}}`` on ``scale``); returns it."""
        ...


@runtime_checkable
class Client(Reader, Writer, Protocol):
    """Reads and writes, plus the status and other subresources: what a reconciler needs."""

    def status(self) -> StatusWriter:
        """A writer of the ``status`` subresource (``client.status().update(obj)``)."""
        ...

    def subresource(self, name: str) -> SubResourceClient:
        """A client of subresource ``name`` (``client.subresource("scale").get(...)``)."""
        ...


@runtime_checkable
class Watcher(Protocol[W_co]):
    """Watches objects of any kind; a watch is a ``W_co`` (the REST client's
    :class:`~kube_runtime.client.watch.Watch`; the reflector takes any stream of events,
    :class:`~kube_runtime.cache.reflector.ListerWatcher`)."""

    def watch(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[WatchKeywords]
    ) -> W_co:
        """A watch of ``kind`` in ``namespace`` (None: every namespace) from
        ``resource_version``; errors the server answers before the stream starts raise here."""
        ...


@runtime_checkable
class WithWatch(Client, Watcher[Watch], Protocol):
    """A :class:`Client` that also watches (a :class:`Watcher` of
    :class:`~kube_runtime.client.watch.Watch` streams), and maps kinds to resources: what a
    :class:`~kube_runtime.manager.Manager` runs on (its informer cache lists and watches
    through it; builders map the kinds they watch). The REST client and the fake are one
    (the fake's ``watch`` raises ``NotImplementedError``: a manager on it is never started).
    """

    @property
    def mapper(self) -> RestMapper:
        """The kind -> resource mapping (discovery for the REST client)."""
        ...
