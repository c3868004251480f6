"""The generator's intermediate form: classes and fields, ready to render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codegen.pyexpr import Expr, Pair

__all__ = ["CrdSettings", "FieldDef", "ModelDef", "ResourceInfo"]


@dataclass(frozen=True)
class CrdSettings:
    """What a CRD says about one version beyond its schema and API coordinates (rendered as
    ``__crd__: ClassVar[crd.Config]``, the form ``kube-runtime crd generate`` reads back).

    ``printer_columns`` are the version's ``additionalPrinterColumns`` entries, ``scale`` its
    scale subresource, ``extra`` the version keys codegen has no field for (verbatim)."""

    storage: bool
    served: bool = True
    deprecated: bool = False
    deprecation_warning: str | None = None
    printer_columns: tuple[dict[str, Any], ...] = ()
    categories: tuple[str, ...] = ()
    singular: str | None = None
    list_kind: str | None = None
    scale: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceInfo:
    """API coordinates of a top-level resource class (rendered as ``__kube_resource__``)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: tuple[str, ...]
    short_names: tuple[str, ...]
    crd: CrdSettings | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass
class FieldDef:
    """One declared field. ``default`` is the right-hand side when the field is optional
    (``None`` or the schema default); ``kwargs`` are the other ``Field(...)`` arguments."""

    name: str
    wire: str
    annotation: Expr
    default: Expr | None
    kwargs: list[Pair] = field(default_factory=list)


@dataclass
class ModelDef:
    """One class. ``path`` is the JSON path of its schema (for the docstring fallback).

    With ``alias_of``, not a class but ``name = alias_of`` (a shared type under its path name).
    """

    name: str
    path: str
    description: str | None
    fields: list[FieldDef]
    resource: ResourceInfo | None = None
    alias_of: str | None = None
