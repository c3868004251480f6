"""The options objects a client implementation's ``_do_*`` hooks receive.

The protocols of :mod:`kube_runtime.client.interfaces` gather the keyword arguments of
``list``, ``patch``, ``delete`` and ``delete_all_of`` into these frozen records before calling
the hooks of an implementation that subclasses them (see that module): one record instead of
six or seven positional arguments, and the field names are the keyword names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kube_runtime.meta import Obj

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import IndexKey, PatchType, Selector

__all__ = ["DeleteOptions", "ListQuery", "PatchOptions"]


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
