"""Walk a CRD version's ``openAPIV3Schema`` into classes and fields (:mod:`codegen.ir`).

One class per object schema with ``properties``, named from its path; children are emitted
before their parents so the module needs no forward references. Kubernetes extensions:

- ``x-kubernetes-int-or-string`` -> ``int | str``;
- ``x-kubernetes-preserve-unknown-fields`` without properties -> ``dict[str, Any]`` (or
  ``Any`` when the node has no type); with properties, a class (every generated class keeps
  unknown keys: ``extra="allow"``, see :class:`kube_runtime.models.KubeModel`);
- ``x-kubernetes-embedded-resource`` -> ``apiVersion``/``kind``/``metadata`` (an
  :class:`~kube_runtime.models.ObjectMeta`) are declared even if the schema leaves them
  out; without properties, :class:`~kube_runtime.models.EmbeddedResource`;
- ``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``,
  ``x-kubernetes-validations`` are carried as the field's ``json_schema_extra``;
- ``nullable: true`` adds ``| None`` even to a required field.

An object schema of a core type (a label selector, a condition, an owner reference: see
:mod:`codegen.shared`) is not generated: the module imports the shared
class and keeps the path name as an alias of it.

Optional fields default to ``None`` (or the schema ``default``); a field with a non-null
default is typed without ``None``. ``exclude_unset`` dumps leave unset fields out, so a
default never appears on the wire unless it was read from it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codegen.ir import FieldDef, ModelDef, ResourceInfo
from codegen.naming import NameRegistry, class_part, field_name
from codegen.pyexpr import Atom, Expr, Pair, Union, call, literal, py_str, subscript
from codegen.shared import shared_type
from codegen.typemap import constraint_kwargs, scalar_type

__all__ = ["SchemaWalker", "TypeInfo"]

Schema = Mapping[str, Any]

CARRIED_EXTENSIONS = (
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
)
_CONSTRAINT_KIND = {"integer": "number", "number": "number", "string": "string", "boolean": "other"}
_NONE = Atom("None")
_ANY = Atom("Any")


@dataclass(frozen=True)
class TypeInfo:
    """An annotation plus the constraints that apply to it (kind: see ``constraint_kwargs``)."""

    expr: Expr
    constraint_kind: str
    model: str | None = None  # the class name when the annotation is a generated class


class SchemaWalker:
    """Builds :class:`ModelDef` s for one module; ``models`` is in emission order."""

    def __init__(self, registry: NameRegistry) -> None:
        self.registry = registry
        self.models: list[ModelDef] = []
        self.imports: set[str] = set()
        self.generated: set[str] = set()  # the classes made here (not the shared ones)

    # ------------------------------------------------------------------ resources

    def resource(self, class_name: str, root: Schema, info: ResourceInfo) -> ModelDef:
        """The top-level class of a kind: apiVersion/kind as literals, metadata required."""
        name = self.registry.claim(class_name)
        self.imports.update({"ClassVar", "Literal", "ObjectMeta", "Resource", "Field"})
        fields = [
            self._literal_field("api_version", "apiVersion", info.api_version),
            self._literal_field("kind", "kind", info.kind),
            FieldDef("metadata", "metadata", Atom("ObjectMeta"), None),
        ]
        props = root.get("properties") or {}
        required = set(root.get("required") or ())
        taken = {f.name for f in fields}
        for key in sorted(props):
            if key in ("apiVersion", "kind", "metadata"):
                continue
            fields.append(self._field(name, key, props[key], key in required, taken))
        description = root.get("description") or f"{info.kind} ({info.api_version})."
        model = ModelDef(name, "", description, fields, info)
        self.models.append(model)
        return model

    def _literal_field(self, name: str, wire: str, value: str) -> FieldDef:
        kwargs = [] if name == wire else _alias_kwargs(wire)
        return FieldDef(
            name, wire, subscript("Literal", [Atom(py_str(value))]), Atom(py_str(value)), kwargs
        )

    # ------------------------------------------------------------------ objects

    def _object(self, node: Schema, wanted: str, path: str) -> str:
        name = self.registry.claim(wanted)
        props = dict(node.get("properties") or {})
        required = set(node.get("required") or ())
        fields: list[FieldDef] = []
        taken: set[str] = set()
        embedded = bool(node.get("x-kubernetes-embedded-resource"))
        if embedded:
            self.imports.add("ObjectMeta")
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props.setdefault("metadata", {})
        for key in sorted(props):
            if embedded and key == "metadata":
                fields.append(self._metadata_field(props[key], key in required, taken))
            else:
                fields.append(self._field(name, key, props[key], key in required, taken, path))
        self.models.append(ModelDef(name, path, node.get("description"), fields))
        self.generated.add(name)
        return name

    def _metadata_field(self, node: Schema, required: bool, taken: set[str]) -> FieldDef:
        taken.add("metadata")
        self.imports.add("ObjectMeta")
        kwargs = _description(node)
        annotation: Expr = Atom("ObjectMeta")
        if required:
            return FieldDef("metadata", "metadata", annotation, None, kwargs)
        return FieldDef("metadata", "metadata", Union((annotation, _NONE)), _NONE, kwargs)

    def _field(
        self,
        owner: str,
        key: str,
        node: Schema,
        required: bool,
        taken: set[str],
        path: str = "",
    ) -> FieldDef:
        name = field_name(key)
        base, n = name, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        info = self.type_of(node, owner + class_part(key), f"{path}.{key}")
        annotation = info.expr
        kwargs: list[Pair] = []
        default: Expr | None = None
        has_default = "default" in node and node["default"] is not None
        nullable = bool(node.get("nullable"))
        if has_default:
            value = node["default"]
            if info.model is not None and isinstance(value, dict):
                self.imports.add("model_default")
                factory = call("model_default", [Atom(info.model), literal(value)])
                kwargs.append(Pair("default_factory=", factory))
            elif isinstance(value, (list, dict)) and _holds_object(value):
                # a list (or map) of objects: built into models, not kept as dicts
                self.imports.add("typed_default")
                factory = call("typed_default", [annotation, literal(value)])
                kwargs.append(Pair("default_factory=", factory))
            elif isinstance(value, (list, dict)):
                kwargs.append(Pair("default=", literal(value)))
            else:
                default = literal(value)
        elif not required:
            default = _NONE
        optional_or_null = nullable or (not required and not has_default)
        if optional_or_null and annotation != _ANY:
            parts = annotation.parts if isinstance(annotation, Union) else (annotation,)
            annotation = Union((*parts, _NONE))
        if name != key:
            kwargs += _alias_kwargs(key)
        kwargs += constraint_kwargs(node, info.constraint_kind)
        kwargs += _description(node)
        extra = {k: node[k] for k in CARRIED_EXTENSIONS if k in node}
        extra |= _enum_constraints(node, info)
        if extra:
            kwargs.append(Pair("json_schema_extra=", literal(extra)))
        if kwargs:
            self.imports.add("Field")
        return FieldDef(name, key, annotation, default, kwargs)

    # ------------------------------------------------------------------ types

    def type_of(self, node: Schema, wanted: str, path: str) -> TypeInfo:
        """The annotation of a value validated by ``node`` (classes created as needed)."""
        if node.get("x-kubernetes-int-or-string"):
            return TypeInfo(
                Union(
                    (
                        self._constrained(Atom("int"), node, "number"),
                        self._constrained(Atom("str"), node, "string"),
                    )
                ),
                "other",
            )
        kind = node.get("type")
        scalar = scalar_type(node, self.imports)
        if scalar is not None:
            literal_type = not isinstance(scalar, Atom)
            return TypeInfo(scalar, "other" if literal_type else _CONSTRAINT_KIND[str(kind)])
        if kind == "array":
            items = node.get("items")
            if isinstance(items, Mapping):
                inner = self._inner(items, wanted + "Item", path + "[]")
            else:
                self.imports.add("Any")
                inner = _ANY
            return TypeInfo(subscript("list", [inner]), "list")
        if kind == "object" or (kind is None and node.get("properties")):
            props = node.get("properties")
            shared = None if node.get("x-kubernetes-embedded-resource") else shared_type(node)
            if props and shared is not None:
                # a core type (codegen.shared): imported, with the path name as an alias
                self.imports.add(shared)
                alias = self.registry.claim(wanted)
                self.models.append(ModelDef(alias, path, None, [], alias_of=shared))
                return TypeInfo(Atom(shared), "other", model=shared)
            if props:
                name = self._object(node, wanted, path)
                return TypeInfo(Atom(name), "other", model=name)
            if node.get("x-kubernetes-embedded-resource"):
                self.imports.add("EmbeddedResource")
                return TypeInfo(Atom("EmbeddedResource"), "other", model="EmbeddedResource")
            values = node.get("additionalProperties")
            if isinstance(values, Mapping):
                value = self._inner(values, wanted + "Value", path + "{}")
                return TypeInfo(subscript("dict", [Atom("str"), value]), "dict")
            self.imports.add("Any")
            return TypeInfo(subscript("dict", [Atom("str"), _ANY]), "dict")
        self.imports.add("Any")
        return TypeInfo(_ANY, "other")

    def _inner(self, node: Schema, wanted: str, path: str) -> Expr:
        """An item or map value type: constraints, the description and the carried
        extensions move into ``Annotated[T, Field(...)]`` (a generated class keeps its own
        description as its docstring)."""
        info = self.type_of(node, wanted, path)
        expr = info.expr
        if node.get("nullable") and expr != _ANY:
            parts = expr.parts if isinstance(expr, Union) else (expr,)
            expr = Union((*parts, _NONE))
        more: list[Pair] = []
        text = node.get("description")
        if text and not (info.model in self.generated and inspect.cleandoc(text) == text):
            more += _description(node)
        extra = {k: node[k] for k in CARRIED_EXTENSIONS if k in node}
        extra |= _enum_constraints(node, info)
        if extra:
            more.append(Pair("json_schema_extra=", literal(extra)))
        return self._constrained(expr, node, info.constraint_kind, more)

    def _constrained(
        self, expr: Expr, node: Schema, constraint_kind: str, more: Sequence[Pair] = ()
    ) -> Expr:
        """``expr`` or ``Annotated[expr, Field(<constraints of node>, *more)]``."""
        constraints = [*constraint_kwargs(node, constraint_kind), *more]
        if not constraints:
            return expr
        self.imports.update({"Annotated", "Field"})
        return subscript("Annotated", [expr, call("Field", constraints)])


# Constraints a Literal (an enum) cannot take as Field arguments: carried as schema keys.
_ENUM_CARRIED = (
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)


def _enum_constraints(node: Schema, info: TypeInfo) -> dict[str, Any]:
    """An enum's other constraints (kept in the schema; the values already satisfy them)."""
    if "enum" not in node or info.constraint_kind != "other":
        return {}
    return {k: node[k] for k in _ENUM_CARRIED if k in node}


def _holds_object(value: list[Any] | dict[str, Any]) -> bool:
    """Whether a list's items or a map's values include an object (a JSON mapping)."""
    items = value if isinstance(value, list) else list(value.values())
    return any(isinstance(item, dict) for item in items)


def _alias_kwargs(wire: str) -> list[Pair]:
    alias = Atom(py_str(wire))
    return [Pair("validation_alias=", alias), Pair("serialization_alias=", alias)]


def _description(node: Schema) -> list[Pair]:
    text = node.get("description")
    return [Pair("description=", Atom(py_str(text)))] if text else []
