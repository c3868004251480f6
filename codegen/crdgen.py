"""pydantic models -> a CustomResourceDefinition (``kube-runtime crd generate``).

The reverse of ``kube-runtime codegen``: a user writes the model once and generates the CRD::

    kube-runtime crd generate mypkg.api:Cache [mypkg.api:CacheV1alpha1 ...] [-o crd.yaml]
    kube-runtime crd generate mypkg.api -o crd.yaml --check   # every resource class in a module

What comes from where:

===========================  ===============================================================
names, scope                 ``__kube_resource__`` (:class:`kube_runtime.client.Resource`):
                             group, version, kind, plural, ``namespaced``, ``short_names``
subresources                 ``"status"`` / ``"scale"`` in ``Resource.subresources``; scale
                             paths from ``crd.Config.scale`` (default ``.spec.replicas`` /
                             ``.status.replicas``)
versions                     one model per version; ``crd.Config(storage=True)`` marks the
                             stored one when there are several
columns, categories, ...     ``__crd__: ClassVar[crd.Config]`` (:mod:`kube_runtime.models.crd`)
schema                       the fields: ``int``/``float``/``bool``/``str``, ``list``,
                             ``dict[str, X]``, nested models, ``Literal`` (enum),
                             ``int | str`` (int-or-string), ``dict[str, Any]``/``Any``
                             (preserve-unknown-fields), ``DateTime`` (date-time),
                             ``set[X]`` (list-type set), ``X | None`` (optional)
validation                   pydantic constraints: ``ge``/``gt``/``le``/``lt``,
                             ``multiple_of``, ``min_length``/``max_length`` (strings, lists,
                             maps), ``pattern``; defaults; a required ``X | None`` is nullable
descriptions                 ``Field(description=...)``, else the class docstring
extensions and CEL           markers of :mod:`kube_runtime.models.crd` and ``Field(json_schema_extra=...)``
                             with ``x-kubernetes-*`` keys (what ``codegen`` writes)
===========================  ===============================================================

The schema is built from pydantic's JSON schema of the model and rewritten into a structural
OpenAPI v3 schema (no ``$ref``, every node typed, OpenAPI 3.0 boolean ``exclusiveMinimum``);
what a structural schema cannot express (a union of object types, a tuple, a recursive model)
is an error naming the field. Output is deterministic: properties in key order.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import inspect
import os
import re
import sys
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from codegen.cmdline import ArgumentParser, add_check_argument, file_error, write_or_check
from kube_runtime.entrypoints import Command
from kube_runtime.models import Base64, DateTime, EmbeddedResource, ObjectMeta, crd

if TYPE_CHECKING:  # the client package is imported only to read models (codegen stays quick)
    from kube_runtime.client import Resource

__all__ = [
    "COMMAND",
    "CrdGenError",
    "crd_documents",
    "crd_for",
    "dump_yaml",
    "load_models",
    "main",
    "object_schema",
    "version_schema",
]

_OBJECTMETA = "x-kube-runtime-objectmeta"  # internal marker, never in the output
_FORMAT_CHECKS = {
    id(typing.get_args(DateTime)[1].func): "date-time",
    id(typing.get_args(Base64)[1].func): "byte",
}
_FORMATS = {"binary": "byte"}
# The docstring codegen gives a class whose schema has no description (its JSON path).
_CODEGEN_PATH_DOC = re.compile(r"^``[^`\s]*``\.$")
# Value constraints past the numeric bounds, in the order a CRD's schema lists them.
_CONSTRAINTS = (
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
# JSON schema keywords that mean the same in a CRD's OpenAPI v3 schema.
_KEPT = frozenset(
    {"type", "format", "description", "enum", "minimum", "maximum", "nullable", "example"}
    | set(_CONSTRAINTS)
)
# Keywords pydantic writes that a CRD has no use for.
_DROPPED = frozenset({"title", "examples", "readOnly", "writeOnly", "deprecated", "$defs"})
_KEY_ORDER = (
    "description",
    "type",
    "format",
    "enum",
    "default",
    "nullable",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    *_CONSTRAINTS,
    "anyOf",
    "items",
    "properties",
    "required",
    "additionalProperties",
)
_SCALARS = frozenset({"integer", "number", "string", "boolean"})


class CrdGenError(ValueError):
    """A model that cannot become a CRD, or a target that names no model (message says why)."""


# ---------------------------------------------------------------------------------- schemas


class _JsonSchema(GenerateJsonSchema):
    """pydantic's JSON schema with the framework's types recognized (metadata, formats)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        cls = schema["cls"]
        if cls is ObjectMeta:
            return {"type": "object", _OBJECTMETA: True}
        if cls is EmbeddedResource:
            return {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        out = dict(super().model_schema(schema))
        if _CODEGEN_PATH_DOC.match(out.get("description", "")) or _is_root_placeholder(
            cls, out.get("description")
        ):
            del out["description"]  # not a description, a generated placeholder
        # a subclass keeps its bases' rules (it has their fields), base rules first
        rules = [r for k in reversed(cls.__mro__) for r in k.__dict__.get(crd.RULES_ATTRIBUTE, ())]
        if rules:
            out["x-kubernetes-validations"] = [r.as_dict() for r in rules]
        return out

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        value = _model_default_value(schema.get("default_factory"))
        return super().get_default_value(schema) if value is None else value

    def function_after_schema(
        self, schema: core_schema.AfterValidatorFunctionSchema
    ) -> JsonSchemaValue:
        out = super().function_after_schema(schema)
        fmt = _FORMAT_CHECKS.get(id(schema["function"]["function"]))
        return {**out, "format": fmt} if fmt else out


def _is_root_placeholder(cls: type, description: str | None) -> bool:
    """Whether ``description`` is the docstring codegen gives a resource class whose CRD
    schema has no description (``Kind (group/version).``)."""
    resource = cls.__dict__.get("__kube_resource__")
    kind, api_version = getattr(resource, "kind", None), getattr(resource, "api_version", None)
    return kind is not None and description == f"{kind} ({api_version})."


# The default factories codegen writes (kube_runtime.models.model_default for an object,
# kube_runtime.models.typed_default for a list or map of objects): their closure keeps the value.
_DEFAULT_FACTORIES = frozenset({"model_default.<locals>.build", "typed_default.<locals>.build"})


def _model_default_value(factory: Any) -> Any:
    """The value a ``model_default`` or ``typed_default`` factory builds from (codegen writes
    defaults holding objects so), else None: other factories have no CRD default."""
    if getattr(factory, "__qualname__", "") not in _DEFAULT_FACTORIES:
        return None
    cells = dict(zip(factory.__code__.co_freevars, factory.__closure__ or (), strict=False))
    cell = cells.get("frozen")
    return copy.deepcopy(cell.cell_contents) if cell is not None else None


class _Converter:
    """JSON schema (pydantic's, with ``$defs``) -> structural OpenAPI v3 schema."""

    def __init__(self, model: type[BaseModel], defs: Mapping[str, Any]) -> None:
        self.model = model
        self.defs = defs

    def convert(self, node: Mapping[str, Any], path: str, stack: tuple[str, ...] = ()) -> Any:
        """``(schema, accepts_null)`` for ``node`` at ``path`` (for error messages)."""
        node = dict(node)
        base: dict[str, Any] = {}
        accepts_null = False
        if "$ref" in node:
            name = str(node.pop("$ref")).rsplit("/", 1)[-1]
            if name in stack:
                raise CrdGenError(
                    f"{path}: {name} contains itself; a CRD schema cannot be recursive "
                    "(use dict[str, Any] for the recursive part)"
                )
            base, accepts_null = self.convert(self.defs[name], path, (*stack, name))
        elif "allOf" in node:
            parts = node.pop("allOf")
            if len(parts) != 1:
                raise CrdGenError(f"{path}: allOf of several schemas has no CRD equivalent")
            base, accepts_null = self.convert(parts[0], path, stack)
        for union_key in ("anyOf", "oneOf"):
            if union_key in node:
                base, accepts_null = self._union(node.pop(union_key), path, stack)
        if node.get("type") == "null":
            raise CrdGenError(f"{path}: a field that is always null has no CRD equivalent")
        out = dict(base)
        for key, value in node.items():
            if key in _DROPPED:
                continue
            if key == "properties":
                out["properties"] = dict(value)  # converted by _object, knowing `required`
            elif key == "required":
                out["required"] = list(value)
            elif key == "items":
                if not isinstance(value, Mapping):
                    raise CrdGenError(f"{path}: tuples have no CRD equivalent (use list[X])")
                out["items"] = self._nested(value, path + "[]", stack)
            elif key == "prefixItems":
                raise CrdGenError(f"{path}: tuples have no CRD equivalent (use list[X])")
            elif key == "additionalProperties":
                out["additionalProperties"] = value
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                if isinstance(value, bool):
                    out[key] = value
                else:
                    out["minimum" if key == "exclusiveMinimum" else "maximum"] = value
                    out[key] = True
            elif key == "const":
                out["enum"] = [value]
            elif key == "uniqueItems":
                if value:
                    out.setdefault("x-kubernetes-list-type", "set")
            elif key == "default":
                if value is not None:
                    out["default"] = value
            elif key == "format":
                out["format"] = _FORMATS.get(value, value)
            elif key == "x-kubernetes-validations":
                out[key] = [*out.get(key, ()), *value]
            elif key in _KEPT or key.startswith("x-kubernetes-") or key == _OBJECTMETA:
                out[key] = value
            else:
                raise CrdGenError(f"{path}: JSON schema keyword {key!r} has no CRD equivalent")
        if node.get("type") == "object" or "properties" in node:
            out = self._object(out, path, stack)
        if "type" not in out and not out.get("x-kubernetes-int-or-string"):
            if "enum" in out:
                raise CrdGenError(f"{path}: an enum of values of several types has no CRD type")
            out["x-kubernetes-preserve-unknown-fields"] = True  # Any: kept as it is
        return out, accepts_null

    def _nested(self, node: Mapping[str, Any], path: str, stack: tuple[str, ...]) -> Any:
        schema, accepts_null = self.convert(node, path, stack)
        if accepts_null:
            schema["nullable"] = True
        if schema.pop(_OBJECTMETA, False):
            schema["x-kubernetes-preserve-unknown-fields"] = True
        return schema

    def _object(self, out: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        extra = out.pop("additionalProperties", None)
        props = out.pop("properties", None)
        required = set(out.pop("required", ()))
        out["type"] = "object"
        if props is not None or (extra is True and out.get(_OBJECTMETA)):
            # a model: its undeclared keys are pruned by the server (KubeModel keeps them
            # in Python only)
            converted: dict[str, Any] = {}
            for key, value in (props or {}).items():
                schema, accepts_null = self.convert(value, f"{path}.{key}", stack)
                if accepts_null and key in required:
                    schema["nullable"] = True
                converted[key] = schema
            for schema in converted.values():
                if schema.pop(_OBJECTMETA, False):
                    # metadata of an embedded object; elsewhere an opaque object
                    if path and "apiVersion" in converted and "kind" in converted:
                        out["x-kubernetes-embedded-resource"] = True
                    elif path:
                        schema["x-kubernetes-preserve-unknown-fields"] = True
            if converted:
                out["properties"] = converted
            if required:
                out["required"] = sorted(required)
        elif isinstance(extra, Mapping):
            out["additionalProperties"] = self._nested(extra, path + "{}", stack)
        elif extra is True or not out.get(_OBJECTMETA):
            out["x-kubernetes-preserve-unknown-fields"] = True
        return out

    def _union(self, branches: Sequence[Any], path: str, stack: tuple[str, ...]) -> Any:
        real = [b for b in branches if b != {"type": "null"}]
        accepts_null = len(real) < len(branches)
        converted = []
        for branch in real:
            schema, null = self.convert(branch, path, stack)
            accepts_null = accepts_null or null
            converted.append(schema)
        if not converted:
            raise CrdGenError(f"{path}: a field that is always null has no CRD equivalent")
        if len(converted) == 1:
            return converted[0], accepts_null
        types = {s.get("type") for s in converted}
        if types == {"integer", "string"}:
            # each branch's checks (an int's minimum, a string's pattern) apply to its values
            checks = {k: v for s in converted for k, v in s.items() if k != "type"}
            return {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                **checks,
            }, accepts_null
        if len(types) == 1 and types <= _SCALARS:
            # e.g. Literal["a", "b"] | str: one scalar type; an enum only if every branch is one
            out: dict[str, Any] = {"type": types.pop()}
            if all("enum" in s for s in converted):
                out["enum"] = list(dict.fromkeys(v for s in converted for v in s["enum"]))
            return out, accepts_null
        if "number" in types and types <= {"integer", "number"}:
            return {"type": "number"}, accepts_null
        names = " | ".join(sorted(str(t) for t in types))
        raise CrdGenError(
            f"{path}: the union {names} has no structural schema (a field has one type; "
            "int | str is the exception); use Annotated[dict[str, Any], "
            "crd.PreserveUnknownFields()] or one model with optional fields"
        )


def _ordered(node: Any) -> Any:
    """Keys in a stable, readable order (known keys first, then the rest sorted)."""
    if isinstance(node, list):
        return [_ordered(v) for v in node]
    if not isinstance(node, dict):
        return node
    rank = {k: i for i, k in enumerate(_KEY_ORDER)}
    keys = sorted(node, key=lambda k: (rank.get(k, len(rank)), k))
    out = {}
    for key in keys:
        value = node[key]
        if key in ("default", "enum", "example", "x-kubernetes-validations"):
            out[key] = value
        elif key == "properties":
            out[key] = {k: _ordered(v) for k, v in sorted(value.items())}
        else:
            out[key] = _ordered(value)
    return out


def _check_structural(node: Mapping[str, Any], path: str) -> None:
    """Every node typed (or int-or-string / preserve-unknown-fields), as kube-apiserver wants."""
    where = path or "<root>"
    if "type" not in node and not (
        node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
    ):
        raise CrdGenError(f"{where}: the schema has no type (structural schemas need one)")
    if "properties" in node and "additionalProperties" in node:
        raise CrdGenError(f"{where}: both declared fields and a value type for other keys")
    for key, value in (node.get("properties") or {}).items():
        _check_structural(value, f"{path}.{key}")
    if isinstance(node.get("items"), Mapping):
        _check_structural(node["items"], path + "[]")
    if isinstance(node.get("additionalProperties"), Mapping):
        _check_structural(node["additionalProperties"], path + "{}")


def object_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural schema of any model class (as a field of that type would have it)."""
    return typing.cast(dict[str, Any], _ordered(_converted(model)))


def _converted(model: type[BaseModel]) -> dict[str, Any]:
    try:
        raw = model.model_json_schema(
            by_alias=True, mode="validation", schema_generator=_JsonSchema
        )
    except Exception as err:  # pydantic's PydanticInvalidForJsonSchema, a user type's hook...
        raise CrdGenError(f"{model.__name__}: no JSON schema: {err}") from None
    converter = _Converter(model, raw.get("$defs") or {})
    schema, _ = converter.convert(raw, "")
    return typing.cast(dict[str, Any], schema)


def version_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural ``openAPIV3Schema`` of a top-level model."""
    schema = _converted(model)
    props = dict(schema.get("properties") or {})
    props["apiVersion"] = {
        "type": "string",
        "description": "The versioned schema of this object (group/version).",
    }
    props["kind"] = {"type": "string", "description": "The REST resource kind of this object."}
    props["metadata"] = {"type": "object"}
    schema["properties"] = props
    required = [
        r for r in schema.get("required", ()) if r not in ("apiVersion", "kind", "metadata")
    ]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    schema.pop("x-kubernetes-embedded-resource", None)
    _check_structural(schema, "")
    return typing.cast(dict[str, Any], _ordered(schema))


# ---------------------------------------------------------------------------------- CRDs


@dataclass(frozen=True)
class _Version:
    model: type[BaseModel]
    resource: Resource
    config: crd.Config


def _version_of(model: type[BaseModel]) -> _Version:
    from kube_runtime.client import Resource

    resource = getattr(model, "__kube_resource__", None)
    if not isinstance(resource, Resource):
        raise CrdGenError(
            f"{_qualname(model)} has no __kube_resource__ (a kube_runtime.client.Resource "
            "giving group, version, kind, plural and scope)"
        )
    if not resource.group:
        raise CrdGenError(
            f"{_qualname(model)}: a CRD needs an API group (the core group is built in)"
        )
    config = getattr(model, "__crd__", None) or crd.Config()
    if not isinstance(config, crd.Config):
        raise CrdGenError(f"{_qualname(model)}.__crd__ is not a kube_runtime.models.crd.Config")
    return _Version(model, resource, config)


def crd_for(models: Sequence[type[BaseModel]]) -> dict[str, Any]:
    """One CRD (``apiextensions.k8s.io/v1``) whose versions are ``models`` (one per version)."""
    versions = [_version_of(m) for m in models]
    first = versions[0].resource
    for v in versions[1:]:
        r = v.resource
        if (r.group, r.kind, r.plural, r.namespaced) != (
            first.group,
            first.kind,
            first.plural,
            first.namespaced,
        ):
            raise CrdGenError(
                f"{_qualname(v.model)} and {_qualname(versions[0].model)} are different "
                "resources (group, kind, plural and scope must match to share a CRD)"
            )
    seen: dict[str, type[BaseModel]] = {}
    for v in versions:
        if v.resource.version in seen:
            raise CrdGenError(
                f"{_qualname(v.model)} and {_qualname(seen[v.resource.version])} are both "
                f"version {v.resource.version} of {first.plural}.{first.group}"
            )
        seen[v.resource.version] = v.model
    storage = [v for v in versions if v.config.storage] or (versions if len(versions) == 1 else [])
    if len(storage) != 1:
        marked = ", ".join(_qualname(v.model) for v in storage) or "none"
        raise CrdGenError(
            f"{first.plural}.{first.group}: exactly one version must be the storage version "
            f"(__crd__ = crd.Config(storage=True)); marked: {marked}"
        )
    short_names = _union_of(
        [*v.resource.short_names, *v.config.short_names] for v in [storage[0], *versions]
    )
    categories = _union_of(v.config.categories for v in [storage[0], *versions])
    singular = storage[0].config.singular or first.kind.lower()
    list_kind = storage[0].config.list_kind or first.kind + "List"
    names: dict[str, Any] = {"kind": first.kind, "listKind": list_kind}
    names["plural"] = first.plural
    names["singular"] = singular
    if short_names:
        names["shortNames"] = short_names
    if categories:
        names["categories"] = categories
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{first.plural}.{first.group}"},
        "spec": {
            "group": first.group,
            "names": names,
            "scope": "Namespaced" if first.namespaced else "Cluster",
            "versions": [_version_entry(v, v is storage[0]) for v in versions],
        },
    }


def _version_entry(version: _Version, storage: bool) -> dict[str, Any]:
    config, resource = version.config, version.resource
    schema = version_schema(version.model)
    entry: dict[str, Any] = {"name": resource.version, "served": config.served, "storage": storage}
    if config.deprecated or config.deprecation_warning:
        entry["deprecated"] = True
        if config.deprecation_warning:
            entry["deprecationWarning"] = config.deprecation_warning
    if config.printer_columns:
        entry["additionalPrinterColumns"] = [c.as_dict() for c in config.printer_columns]
    entry["schema"] = {"openAPIV3Schema": schema}
    unknown = sorted(set(resource.subresources) - {"status", "scale"})
    if unknown:
        raise CrdGenError(
            f"{_qualname(version.model)}: a CRD has only status and scale subresources, "
            f"not {', '.join(unknown)}"
        )
    subresources: dict[str, Any] = {}
    if "scale" in resource.subresources:
        scale = config.scale or crd.Scale()
        for what, json_path in (
            ("specReplicasPath", scale.spec_replicas_path),
            ("statusReplicasPath", scale.status_replicas_path),
        ):
            _check_replicas_path(version.model, schema, what, json_path)
        subresources["scale"] = scale.as_dict()
    elif config.scale is not None:
        raise CrdGenError(
            f"{_qualname(version.model)}: __crd__.scale is set but __kube_resource__ "
            "has no 'scale' subresource"
        )
    if "status" in resource.subresources:
        if "status" not in schema["properties"]:
            raise CrdGenError(
                f"{_qualname(version.model)}: the status subresource needs a status field"
            )
        subresources["status"] = {}
    if subresources:
        entry["subresources"] = dict(sorted(subresources.items(), reverse=True))
    entry.update(config.extra)
    return entry


def _check_replicas_path(
    model: type[BaseModel], schema: Mapping[str, Any], what: str, json_path: str
) -> None:
    node: Any = schema
    parts = json_path.split(".")
    if parts[0] != "" or len(parts) < 3 or parts[1] not in ("spec", "status"):
        raise CrdGenError(
            f"{_qualname(model)}: scale {what} {json_path!r} must be .spec.<...> or .status.<...>"
        )
    for part in parts[1:]:
        node = (node.get("properties") or {}).get(part) if isinstance(node, Mapping) else None
    if node is None:
        raise CrdGenError(f"{_qualname(model)}: scale {what} {json_path!r} names no field")
    if node.get("type") != "integer":
        raise CrdGenError(f"{_qualname(model)}: scale {what} {json_path!r} is not an integer field")


def _union_of(groups: Iterable[Iterable[str]]) -> list[str]:
    return list(dict.fromkeys(name for group in groups for name in group))


def crd_documents(models: Sequence[type[BaseModel]]) -> list[dict[str, Any]]:
    """CRDs for ``models``, grouped by resource (``plural.group``), in first-seen order."""
    groups: dict[tuple[str, str], list[type[BaseModel]]] = {}
    for model in models:
        r = _version_of(model).resource
        groups.setdefault((r.plural, r.group), []).append(model)
    return [crd_for(group) for group in groups.values()]


def dump_yaml(documents: Sequence[Mapping[str, Any]]) -> str:
    """Multi-document YAML, stable byte for byte."""
    return "---\n".join(
        yaml.safe_dump(dict(doc), sort_keys=False, allow_unicode=True, width=100)
        for doc in documents
    )


# ---------------------------------------------------------------------------------- loading


def _qualname(model: type) -> str:
    return f"{model.__module__}:{model.__qualname__}"


def load_models(target: str) -> list[type[BaseModel]]:
    """``package.module:Model`` -> [Model]; ``package.module`` -> its resource classes."""
    module_name, _, attr = target.partition(":")
    if not module_name or (":" in target and not attr):
        raise CrdGenError(f"{target!r}: expected package.module:Model or package.module")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise CrdGenError(f"cannot import {module_name}: {err}") from None
    except Exception as err:  # the user's module raised while importing
        raise CrdGenError(f"importing {module_name} failed: {type(err).__name__}: {err}") from None
    if attr:
        obj: Any = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise CrdGenError(f"{module_name} has no {attr}")
            obj = getattr(obj, part)
        if not (inspect.isclass(obj) and issubclass(obj, BaseModel)):
            raise CrdGenError(f"{target} is not a pydantic model class")
        return [obj]
    from kube_runtime.client import Resource

    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseModel)
        and obj.__module__ == module.__name__
        and isinstance(obj.__dict__.get("__kube_resource__"), Resource)
    ]
    if not found:
        raise CrdGenError(f"{module_name} defines no model with a __kube_resource__")
    return found


# ---------------------------------------------------------------------------------- command


def build_parser(prog: str = "kube-runtime crd") -> argparse.ArgumentParser:
    """The ``crd`` command's parser (one sub-command: ``generate``)."""
    parser = ArgumentParser(
        prog=prog, description="CustomResourceDefinitions from pydantic models."
    )
    sub = parser.add_subparsers(dest="action", metavar="generate", parser_class=ArgumentParser)
    sub.required = True
    gen = sub.add_parser(
        "generate",
        help="write CRDs for models",
        description="Write CRDs (apiextensions.k8s.io/v1 YAML) for pydantic models: one CRD "
        "per resource, one version per model.",
    )
    gen.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="package.module:Model, or package.module for every class with __kube_resource__",
    )
    gen.add_argument("-o", "--output", help="file to write (default: standard output)")
    add_check_argument(gen)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "kube-runtime crd") -> int:
    """Run the command; returns the exit code (0 ok, 1 stale with --check, 2 bad input)."""
    args = build_parser(prog).parse_args(argv)
    if args.check and not args.output:
        print(f"{prog} generate: error: --check needs -o OUTPUT", file=sys.stderr)
        return 2
    # Like `python -m`: a model in the current directory's packages can be named.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        models = [m for target in args.targets for m in load_models(target)]
        text = dump_yaml(crd_documents(models))
    except CrdGenError as err:
        print(f"{prog} generate: error: {err}", file=sys.stderr)
        return 2
    try:
        return write_or_check(text, args.output, check=args.check, prog=prog, argv=argv)
    except (OSError, UnicodeDecodeError) as err:
        print(f"{prog} generate: error: {file_error(err, args.output)}", file=sys.stderr)
        return 2


def _command_main(argv: Sequence[str]) -> int:
    return main(argv, prog="kube-runtime crd")


COMMAND = Command(
    help="CRDs from pydantic models (kube-runtime crd generate --help)",
    main=_command_main,
)
"""``kube-runtime crd`` (entry point in the ``kube_runtime.commands`` group)."""
