"""Lenient typed reads: a model instance for a stored object that no longer satisfies its model.

A model's constraints (``ge=1``, a ``pattern``, a required field, an enum) can be stricter than
what an API server holds: an object stored before its CRD gained a rule (kube-apiserver keeps
serving it), a model newer than the installed CRD, a hand-written model stricter than the
schema. Go's typed clients decode such an object anyway (they check types, not the schema's
rules); :func:`validate_lenient` gives Python code the same footing:

* an object the model accepts comes back as ``model_validate`` gives it, with no errors;
* otherwise every part that validates is typed as usual (nested models, lists and maps of
  them, one by one), and a part that does not keeps its stored wire value (``replicas`` stays
  ``0`` under ``ge=1``, an unknown enum value stays the string); a required field the object
  lacks reads ``None`` (Go's zero value, falsy) and is not set, so :meth:`KubeModel.to_wire`
  leaves it out; keys the model does not declare are kept, as always. The pydantic
  ``ValidationError`` is returned beside it, so the caller can report the fields.

The instance is built with ``model_construct``: nothing is re-checked on assignment, and
:meth:`~kube_runtime.models.KubeModel.to_wire` gives back the object as stored plus what the
caller changed (fields set on it are dumped). It costs one validation per field on the invalid
path only: valid objects pay nothing more than ``model_validate``.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

__all__ = ["construct_lenient", "validate_lenient"]

M = TypeVar("M", bound=BaseModel)


def validate_lenient(model: type[M], data: Mapping[str, Any]) -> tuple[M, ValidationError | None]:
    """``(instance, None)`` when ``model`` accepts ``data``; else ``(lenient instance, the
    ValidationError)`` (see the module docstring). ``data`` is not modified; the instance may
    share nested values of fields the model does not type (``Any``) with it, as
    ``model_validate`` does."""
    try:
        return model.model_validate(data), None
    except ValidationError as error:
        return construct_lenient(model, data), error


def construct_lenient(model: type[M], data: Mapping[str, Any]) -> M:
    """``data`` as an instance of ``model``, typed where it validates and kept as stored where
    it does not (see the module docstring)."""
    values: dict[str, Any] = {}
    fields_set: set[str] = set()
    declared: set[str] = set()
    for name, field in model.model_fields.items():
        key = _wire_key(name, field)
        declared.add(key)
        if key in data:
            values[name] = _lenient_value(model, name, field, data[key])
            fields_set.add(name)
        elif name in data:
            declared.add(name)
            values[name] = _lenient_value(model, name, field, data[name])
            fields_set.add(name)
        elif field.is_required():
            values[name] = None  # Go's zero value to read; unset, so never dumped
    extra = {k: v for k, v in data.items() if k not in declared and k not in values}
    return model.model_construct(_fields_set=fields_set, **values, **extra)


def _wire_key(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    if isinstance(alias, str):
        return alias
    return field.alias or name


@functools.cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """Validates one field's value with its constraints (the field's own ``FieldInfo``)."""
    field = model.model_fields[name]
    annotation: Any = field.annotation
    if field.metadata:
        annotation = typing.Annotated.__class_getitem__((annotation, *field.metadata))  # type: ignore[attr-defined]
    return TypeAdapter(annotation)


def _lenient_value(model: type[BaseModel], name: str, field: FieldInfo, value: Any) -> Any:
    try:
        return _adapter(model, name).validate_python(value)
    except ValidationError:
        return _salvage(field.annotation, value)


def _salvage(annotation: Any, value: Any) -> Any:
    """``value`` typed as far as ``annotation``'s models accept it, else as it is."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _salvage(typing.get_args(annotation)[0], value)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if value is None:
            return value
        if len(members) == 1:
            return _salvage(members[0], value)
        models = [m for m in members if _model_of(m) is not None]
        if len(models) == 1 and isinstance(value, Mapping):
            return _salvage(models[0], value)
        return value  # several shapes: nothing to choose by
    model = _model_of(annotation)
    if model is not None:
        return construct_lenient(model, value) if isinstance(value, Mapping) else value
    args = typing.get_args(annotation)
    if origin is list and args and isinstance(value, list):
        return [_item(args[0], v) for v in value]
    if origin is dict and len(args) == 2 and isinstance(value, Mapping):
        return {k: _item(args[1], v) for k, v in value.items()}
    return value


@functools.cache
def _item_adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def _item(annotation: Any, value: Any) -> Any:
    try:
        adapter = _item_adapter(annotation)
    except TypeError:  # an unhashable annotation (a marker): not memoized
        adapter = TypeAdapter(annotation)
    try:
        return adapter.validate_python(value)
    except ValidationError:
        return _salvage(annotation, value)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None
