"""The options objects a client implementation's ``_do_*`` hooks receive.

The mixins of :mod:`kube_runtime.client.base` gather the keyword arguments of ``list``,
``patch``, ``delete`` and ``delete_all_of`` into these frozen records before calling the
hooks of an implementation (see that module): one record instead of six or seven positional
arguments, and the field names are the keyword names.

The types of the options (:data:`Selector`, :data:`IndexKey`, :data:`PatchType`) are defined
here, below the protocols of :mod:`kube_runtime.client.interfaces` (which re-exports them), so
that ``typing.get_type_hints`` resolves every record and protocol at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from kube_runtime.meta import Obj

__all__ = [
    "ApplyKeywords",
    "CreateKeywords",
    "DeleteOptions",
    "IndexKey",
    "ListQuery",
    "PatchKeywords",
    "PatchOptions",
    "PatchType",
    "Selector",
    "SubresourcePatchKeywords",
    "WriteKeywords",
]

#: A label or field selector: query text (``"app=web,tier!=db"``) or ``{key: value}``
#: equalities.
Selector = str | Mapping[str, str]
#: ``(index_name, value)``: objects whose index function produced ``value``.
IndexKey = tuple[str, str]
#: The four PATCH content types of the API server.
PatchType = Literal["merge", "strategic", "json", "apply"]


# --- the keyword arguments of the writes, for the protocols' overloads ------------------------
# Each write has two overloads (a model in, that model out; a dict in, a dict out) with the
# same keywords: the overloads take them as ``**options: Unpack[...Keywords]`` so that each
# keyword set is written once (the methods' own signatures spell them out, with defaults).


class WriteKeywords(TypedDict, total=False):
    """The keywords of ``update`` (objects and status): ``field_manager``, ``dry_run``."""

    field_manager: str | None
    dry_run: bool


class CreateKeywords(WriteKeywords, total=False):
    """The keywords of ``create``: the write's, and ``namespace``."""

    namespace: str | None


class SubresourcePatchKeywords(WriteKeywords, total=False):
    """The keywords of a status writer's and a subresource client's ``patch``."""

    namespace: str | None
    patch_type: PatchType
    force: bool | None


class PatchKeywords(SubresourcePatchKeywords, total=False):
    """The keywords of ``Writer.patch``: a subresource's, and ``subresource``."""

    subresource: str | None


class _ApplyOptions(TypedDict, total=False):
    force: bool
    dry_run: bool


class ApplyKeywords(_ApplyOptions):
    """The keywords of ``apply``: ``field_manager`` (required), ``force``, ``dry_run``."""

    field_manager: str


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
