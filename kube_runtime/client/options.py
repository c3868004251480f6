"""The options of the client methods: the keywords they take, and the records their hooks get.

Each method's keywords are one ``TypedDict`` (:class:`ListKeywords`, :class:`CreateKeywords`,
:class:`PatchKeywords`, ...; controller-runtime's ``ListOptions``, ``CreateOptions``, ...),
which the protocols of :mod:`kube_runtime.client.interfaces` and the mixins of
:mod:`kube_runtime.client.base` take as ``**options: Unpack[...]``: callers pass keyword
arguments (``client.list(kind, "ns", label_selector="app=web")``), mypy rejects a keyword the
method does not take or a value of the wrong type, and the mixins do the same at run time
(:func:`check_keywords`).

The mixins gather the keywords of ``list``, ``patch``, ``delete`` and ``delete_all_of`` into
the frozen records :class:`ListQuery`, :class:`PatchOptions` and :class:`DeleteOptions` before
calling the hooks of an implementation (see that module): one record instead of six or seven
positional arguments; the field names are the keyword names, and the records' defaults are the
keywords' defaults.

The types of the options (:data:`Selector`, :data:`IndexKey`, :data:`PatchType`) are defined
here, below the protocols of :mod:`kube_runtime.client.interfaces` (which re-exports them), so
that ``typing.get_type_hints`` resolves every record and protocol at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from pydantic import BaseModel

from kube_runtime.meta import Obj
from kube_runtime.selectors import FieldSelector, LabelSelector

__all__ = [
    "ApplyKeywords",
    "CacheListKeywords",
    "CreateKeywords",
    "DeleteAllOfKeywords",
    "DeleteKeywords",
    "DeleteOptions",
    "IndexKey",
    "ListKeywords",
    "ListPageKeywords",
    "ListQuery",
    "PatchKeywords",
    "PatchOptions",
    "PatchType",
    "RestWatchKeywords",
    "Selector",
    "SubresourcePatchKeywords",
    "SubresourceUpdateKeywords",
    "WatchKeywords",
    "WriteKeywords",
    "check_keywords",
]

#: A label or field selector: query text (``"app=web,tier!=db"``) or ``{key: value}``
#: equalities.
Selector = str | Mapping[str, str]
#: ``(index_name, value)``: objects whose index function produced ``value``.
IndexKey = tuple[str, str]
#: The four PATCH content types of the API server.
PatchType = Literal["merge", "strategic", "json", "apply"]


# --- the keyword arguments of the client methods ---------------------------------------------
# One TypedDict per method: the protocols, the mixins and the overloads all take the options as
# ``**options: Unpack[...Keywords]``, so each keyword set is written once, here; mypy checks
# the keywords of every call against it, and the mixins check them at run time
# (:func:`check_keywords`). A key left out means its default, stated in the class's docstring.


class _Selectors(TypedDict, total=False):
    label_selector: Selector | None
    field_selector: Selector | None


class ListPageKeywords(_Selectors, total=False):
    """The keywords of a lister's ``list`` (what a reflector passes; all default to None):
    ``label_selector``, ``field_selector``, ``limit``."""

    limit: int | None


class ListKeywords(ListPageKeywords, total=False):
    """The keywords of ``list`` (the fields of :class:`ListQuery`; all default to None):
    ``label_selector``, ``field_selector``, ``index``, ``limit``, ``resource_version``,
    ``resource_version_match``."""

    index: IndexKey | None
    resource_version: str | None
    resource_version_match: str | None


class CacheListKeywords(TypedDict, total=False):
    """The keywords of a cache's ``list`` (:meth:`kube_runtime.cache.InformerCache.list`, the
    :class:`~kube_runtime.client.cached.CacheReader` of a cached client; all None by
    default): ``label_selector`` (query text, ``{key: value}`` equalities or a parsed
    :class:`~kube_runtime.selectors.LabelSelector`), ``field_selector`` (query text or a
    parsed :class:`~kube_runtime.selectors.FieldSelector`) and ``index``."""

    label_selector: str | Mapping[str, str] | LabelSelector | None
    field_selector: str | FieldSelector | None
    index: IndexKey | None


class _Deletion(TypedDict, total=False):
    propagation_policy: str | None
    grace_period_seconds: int | None
    dry_run: bool


class DeleteKeywords(_Deletion, total=False):
    """The keywords of ``delete`` (the fields of :class:`DeleteOptions`):
    ``propagation_policy``, ``grace_period_seconds``, ``uid`` and ``resource_version``
    (preconditions), all None by default, and ``dry_run`` (False)."""

    uid: str | None
    resource_version: str | None


class DeleteAllOfKeywords(_Selectors, _Deletion, total=False):
    """The keywords of ``delete_all_of``: the selectors of ``list`` and the options of
    ``delete`` but its preconditions (defaults as theirs)."""


class WatchKeywords(_Selectors, total=False):
    """The keywords of ``watch``: ``resource_version``, ``label_selector``,
    ``field_selector``, ``timeout_seconds`` (None by default) and ``allow_bookmarks``
    (True)."""

    resource_version: str | None
    allow_bookmarks: bool
    timeout_seconds: int | None


class RestWatchKeywords(WatchKeywords, total=False):
    """The keywords of the REST client's ``watch``: the protocol's, ``send_initial_events``
    and ``accept`` (None by default; see :meth:`kube_runtime.client.Client.watch`)."""

    send_initial_events: bool | None
    accept: str | None


class WriteKeywords(TypedDict, total=False):
    """The keywords of ``update`` (objects and status): ``field_manager`` (None),
    ``dry_run`` (False)."""

    field_manager: str | None
    dry_run: bool


class CreateKeywords(WriteKeywords, total=False):
    """The keywords of ``create``: the write's, and ``namespace`` (None:
    ``metadata.namespace``)."""

    namespace: str | None


class SubresourceUpdateKeywords(WriteKeywords, total=False):
    """The keywords of a subresource client's ``update``: the write's, and ``body`` (None:
    send the object itself)."""

    body: Mapping[str, Any] | BaseModel | None


class SubresourcePatchKeywords(WriteKeywords, total=False):
    """The keywords of a status writer's and a subresource client's ``patch`` (the fields of
    :class:`PatchOptions` but ``subresource``): ``namespace``, ``field_manager``, ``force``
    (None by default), ``patch_type`` (``"merge"``), ``dry_run`` (False)."""

    namespace: str | None
    patch_type: PatchType
    force: bool | None


class PatchKeywords(SubresourcePatchKeywords, total=False):
    """The keywords of ``Writer.patch``: a subresource's, and ``subresource`` (None)."""

    subresource: str | None


class _ApplyOptions(TypedDict, total=False):
    force: bool
    dry_run: bool


class ApplyKeywords(_ApplyOptions):
    """The keywords of ``apply``: ``field_manager`` (required), ``force`` (True),
    ``dry_run`` (False)."""

    field_manager: str


#: The keys each TypedDict checked by :func:`check_keywords` declares (filled on first use).
_DECLARED: dict[Any, frozenset[str]] = {}


def check_keywords(method: str, options: Mapping[str, Any], keywords: Any) -> Mapping[str, Any]:
    """``options`` once checked against the TypedDict ``keywords`` as Python checks the
    keywords of a call: ``TypeError("<method>() got an unexpected keyword argument 'x'")``
    for a key it does not declare, ``TypeError`` for a required key missing."""
    if not options and not keywords.__required_keys__:
        return options  # the usual call: no keywords, none required
    declared = _DECLARED.get(keywords)
    if declared is None:
        declared = _DECLARED[keywords] = keywords.__required_keys__ | keywords.__optional_keys__
    if not options.keys() <= declared:
        unknown = next(name for name in options if name not in declared)
        raise TypeError(f"{method}() got an unexpected keyword argument {unknown!r}")
    if keywords.__required_keys__ and not keywords.__required_keys__ <= options.keys():
        missing = min(keywords.__required_keys__ - options.keys())
        raise TypeError(f"{method}() missing 1 required keyword-only argument: {missing!r}")
    return options


@dataclass(frozen=True, slots=True)
class ListQuery:
    """Which objects a ``list`` / ``delete_all_of`` is about (besides kind and namespace).

    ``resource_version`` / ``resource_version_match`` are the REST list's; readers that do
    not ask a server ignore them.
    """

    label_selector: Selector | None = None
    field_selector: Selector | None = None
    index: IndexKey | None = None
    limit: int | None = None
    resource_version: str | None = None
    resource_version_match: str | None = None


@dataclass(frozen=True, slots=True)
class PatchOptions:
    """The options of one PATCH (of an object, or of its ``subresource``)."""

    namespace: str | None = None
    patch_type: PatchType = "merge"
    subresource: str | None = None
    field_manager: str | None = None
    force: bool | None = None
    dry_run: bool = False

    def keywords(self, *, subresource: bool = True) -> dict[str, Any]:
        """The options as the keyword arguments of ``patch`` (without ``subresource`` for
        the status writer's and a subresource client's ``patch``)."""
        kw: dict[str, Any] = {
            "namespace": self.namespace,
            "patch_type": self.patch_type,
            "field_manager": self.field_manager,
            "force": self.force,
            "dry_run": self.dry_run,
        }
        if subresource:
            kw["subresource"] = self.subresource
        return kw


@dataclass(frozen=True, slots=True)
class DeleteOptions:
    """The options of a delete: propagation, grace period, preconditions, dry run."""

    propagation_policy: str | None = None
    grace_period_seconds: int | None = None
    uid: str | None = None
    resource_version: str | None = None
    dry_run: bool = False

    def body(self) -> Obj:
        """The ``v1`` ``DeleteOptions`` JSON body the API server takes."""
        options: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if self.propagation_policy is not None:
            options["propagationPolicy"] = self.propagation_policy
        if self.grace_period_seconds is not None:
            options["gracePeriodSeconds"] = self.grace_period_seconds
        preconditions = {
            k: v
            for k, v in (("uid", self.uid), ("resourceVersion", self.resource_version))
            if v is not None
        }
        if preconditions:
            options["preconditions"] = preconditions
        if self.dry_run:
            options["dryRun"] = ["All"]
        return options
