"""Which schemas are core types: an object schema matches a class of :data:`SHARED_TYPES` (the
framework's, :mod:`kube_runtime.models`) when its shape is the one that class generates
(``codegen.crdgen.object_schema``); the generated module imports that class instead of
defining a copy, so two generated modules' selectors, conditions and owner references are the
same classes (``isinstance`` works across them, one helper serves all). The path-named class
a module would have had stays as an alias (``CloneSetSpecSelector = LabelSelector``).

:class:`~kube_runtime.models.Condition` is exactly controller-gen's ``metav1.Condition`` (the
five required fields with their patterns and bounds): a CRD's own looser condition type gets a
class of its own.

Shapes are compared without descriptions and without what changes neither validation nor
storage: ``int32``/``int64`` formats, ``x-kubernetes-list-type: atomic`` (a CRD list's default)
and the object's own ``x-kubernetes-map-type`` (codegen carries it on the field that holds it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from kube_runtime.models import (
    Condition,
    KubeModel,
    LabelSelector,
    LabelSelectorRequirement,
    ManagedFieldsEntry,
    OwnerReference,
)

__all__ = ["SHARED_TYPES", "shape", "shared_type"]

#: The classes codegen matches schemas against, in the order it tries them.
SHARED_TYPES: tuple[type[KubeModel], ...] = (
    LabelSelector,
    LabelSelectorRequirement,
    Condition,
    OwnerReference,
    ManagedFieldsEntry,
)


def _normalized(node: Any, top: bool) -> Any:
    if isinstance(node, list):
        return [_normalized(v, False) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key == "format" and value in ("int32", "int64"):
            continue
        if key == "x-kubernetes-list-type" and value == "atomic":
            continue
        if key == "x-kubernetes-map-type" and top:
            continue
        if key == "required":
            out[key] = sorted(value)
        elif key == "properties":
            out[key] = {k: _normalized(v, False) for k, v in value.items()}
        elif key in ("default", "enum", "example", "x-kubernetes-validations"):
            out[key] = value
        else:
            out[key] = _normalized(value, False)
    return out


def shape(node: Mapping[str, Any]) -> str:
    """The comparable form of an object schema."""
    return json.dumps(_normalized(node, True), sort_keys=True)


@functools.cache
def _keys() -> frozenset[frozenset[str]]:
    """The property names of each core type: a cheap test before building their schemas."""
    return frozenset(
        frozenset(f.serialization_alias or name for name, f in cls.model_fields.items())
        for cls in SHARED_TYPES
    )


@functools.cache
def _index() -> dict[str, str]:
    from codegen.crdgen import object_schema

    return {shape(object_schema(cls)): cls.__name__ for cls in reversed(SHARED_TYPES)}


def shared_type(node: Mapping[str, Any]) -> str | None:
    """The name of the :data:`SHARED_TYPES` class whose schema ``node`` is, or None."""
    props = node.get("properties")
    if node.get("type") not in ("object", None) or not isinstance(props, Mapping) or not props:
        return None
    if frozenset(props) not in _keys():
        return None
    return _index().get(shape(node))
