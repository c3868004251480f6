"""Annotations for ``kube-runtime crd generate``: what a pydantic model cannot say by itself.

A model says most of a CRD on its own (see ``codegen.crdgen``): the API coordinates in
``__kube_resource__``, the schema from the field types, pydantic constraints (``ge``,
``max_length``, ``pattern``, ...), ``Literal`` enums, defaults and descriptions. This module
adds the rest, in plain Python:

- per field, markers in ``typing.Annotated`` (or on a ``Field``'s type)::

      ports: Annotated[list[Port], crd.ListType("map", keys=("name",))] = []
      config: Annotated[dict[str, Any], crd.PreserveUnknownFields()] | None = None
      replicas: Annotated[int, crd.Validation("self <= 100", message="at most 100")] = 1

- per class, CEL rules on the object (``self`` is the object)::

      @crd.rule("self.minReplicas <= self.maxReplicas", message="min above max")
      class Scaling(KubeModel): ...

- per version, on the top-level model, a :class:`Config` (storage version, printer columns,
  categories, scale paths, deprecation)::

      __crd__: ClassVar[crd.Config] = crd.Config(
          storage=True,
          printer_columns=(crd.PrinterColumn("Replicas", ".spec.replicas", type="integer"),),
          categories=("all",),
      )

Every marker implements pydantic's ``__get_pydantic_json_schema__`` hook, so
``Model.model_json_schema()`` shows the extensions too; none changes validation in Python
(CEL rules are checked by the API server).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = [
    "RULES_ATTRIBUTE",
    "Config",
    "EmbeddedResource",
    "Format",
    "ListType",
    "MapType",
    "Nullable",
    "PreserveUnknownFields",
    "PrinterColumn",
    "Scale",
    "Validation",
    "rule",
]

#: The class attribute :func:`rule` stores a class's CEL rules in.
RULES_ATTRIBUTE = "__crd_rules__"

T = TypeVar("T", bound=type)


class _Marker:
    """Base of the field markers: adds :meth:`extensions` to the field's JSON schema."""

    def extensions(self) -> dict[str, Any]:
        """The OpenAPI keys this marker sets on the field's schema."""
        raise NotImplementedError

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = dict(handler(core_schema))
        for key, value in self.extensions().items():
            if key == "x-kubernetes-validations":
                value = [*schema.get(key, ()), *value]
            schema[key] = value
        return schema


@dataclass(frozen=True)
class Validation(_Marker):
    """A CEL rule on the field's value (``x-kubernetes-validations``; ``self`` is the value).

    ``message`` is the fixed error text, ``message_expression`` a CEL expression giving it,
    ``reason`` one of kube-apiserver's reasons (``FieldValueInvalid``, ``FieldValueForbidden``,
    ``FieldValueRequired``, ``FieldValueDuplicate``) and ``field_path`` a JSON path under the
    value that the error names. Enforced by API servers with CEL validation (1.25+ and the
    embedded server); older servers drop the rule.
    """

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None

    def as_dict(self) -> dict[str, str]:
        """The ``x-kubernetes-validations`` entry."""
        out = {"rule": self.rule}
        for key, value in (
            ("message", self.message),
            ("messageExpression", self.message_expression),
            ("reason", self.reason),
            ("fieldPath", self.field_path),
        ):
            if value is not None:
                out[key] = value
        return out

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-validations": [self.as_dict()]}


@dataclass(frozen=True)
class ListType(_Marker):
    """``x-kubernetes-list-type``: ``"atomic"``, ``"set"`` or ``"map"`` (with ``keys``, the
    ``x-kubernetes-list-map-keys``: the item fields that identify an item)."""

    type: Literal["atomic", "set", "map"]
    keys: Sequence[str] = ()

    def extensions(self) -> dict[str, Any]:
        out: dict[str, Any] = {"x-kubernetes-list-type": self.type}
        if self.keys:
            out["x-kubernetes-list-map-keys"] = list(self.keys)
        return out


@dataclass(frozen=True)
class MapType(_Marker):
    """``x-kubernetes-map-type``: ``"granular"`` or ``"atomic"`` (server-side apply merges)."""

    type: Literal["granular", "atomic"]

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-map-type": self.type}


@dataclass(frozen=True)
class PreserveUnknownFields(_Marker):
    """``x-kubernetes-preserve-unknown-fields: true``: the server keeps keys the schema does
    not declare (``dict[str, Any]`` and ``Any`` fields get it without the marker)."""

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-preserve-unknown-fields": True}


@dataclass(frozen=True)
class EmbeddedResource(_Marker):
    """``x-kubernetes-embedded-resource: true``: the value is a Kubernetes object (apiVersion,
    kind, metadata validated). A ``dict[str, Any]`` field marked so keeps its other fields;
    :class:`kube_runtime.models.EmbeddedResource` and classes with ``api_version``, ``kind``
    and an ``ObjectMeta`` ``metadata`` are embedded resources without the marker."""

    def extensions(self) -> dict[str, Any]:
        return {"x-kubernetes-embedded-resource": True}


@dataclass(frozen=True)
class Nullable(_Marker):
    """``nullable: true``: an explicit ``null`` is kept (not pruned) by the server. A required
    ``X | None`` field is nullable without the marker."""

    def extensions(self) -> dict[str, Any]:
        return {"nullable": True}


@dataclass(frozen=True)
class Format(_Marker):
    """An OpenAPI string ``format`` the server checks (``"uri"``, ``"hostname"``, ``"cidr"``,
    ``"uuid"``, ``"duration"``, ...)."""

    format: str

    def extensions(self) -> dict[str, Any]:
        return {"format": self.format}


def rule(
    expression: str,
    message: str | None = None,
    *,
    message_expression: str | None = None,
    reason: str | None = None,
    field_path: str | None = None,
) -> Callable[[T], T]:
    """Class decorator: a CEL rule on every object of the class (``self`` is the object).

    Stackable; rules keep their order (outermost decorator last)."""
    validation = Validation(expression, message, message_expression, reason, field_path)

    def decorate(cls: T) -> T:
        rules = (*cls.__dict__.get(RULES_ATTRIBUTE, ()), validation)
        type.__setattr__(cls, RULES_ATTRIBUTE, rules)
        return cls

    return decorate


@dataclass(frozen=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry (``kubectl get`` columns).

    ``type`` is one of ``integer``, ``number``, ``string``, ``boolean``, ``date``;
    ``priority`` > 0 shows the column only with ``-o wide``."""

    name: str
    json_path: str
    type: Literal["integer", "number", "string", "boolean", "date"] = "string"
    description: str | None = None
    format: str | None = None
    priority: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The CRD form."""
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.format:
            out["format"] = self.format
        if self.priority:
            out["priority"] = self.priority
        return out


@dataclass(frozen=True)
class Scale:
    """The scale subresource's paths (used when ``__kube_resource__`` lists ``"scale"``)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None

    def as_dict(self) -> dict[str, str]:
        """The CRD form."""
        out = {
            "specReplicasPath": self.spec_replicas_path,
            "statusReplicasPath": self.status_replicas_path,
        }
        if self.label_selector_path:
            out["labelSelectorPath"] = self.label_selector_path
        return out


@dataclass(frozen=True)
class Config:
    """What a top-level model adds to its CRD version (``__crd__: ClassVar[crd.Config]``).

    ``storage`` marks the stored version (needed when several models share a CRD);
    ``categories`` and ``short_names`` join those of the other versions (``short_names`` adds
    to ``__kube_resource__.short_names``); ``singular`` defaults to the lower-case kind and
    ``list_kind`` to ``<Kind>List`` (both taken from the storage version).
    """

    storage: bool = False
    served: bool = True
    deprecated: bool = False
    deprecation_warning: str | None = None
    printer_columns: Sequence[PrinterColumn] = ()
    categories: Sequence[str] = ()
    short_names: Sequence[str] = ()
    singular: str | None = None
    list_kind: str | None = None
    scale: Scale | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Other keys of the version entry, verbatim (e.g. ``selectableFields`` on new servers)."""
