"""Which schemas are core types: an object schema matches a class of :mod:`codegen.core` when
its shape is the one that class generates (``codegen.crdgen.object_schema``).

Shapes are compared without descriptions and without what changes neither validation nor
storage: ``int32``/``int64`` formats, ``x-kubernetes-list-type: atomic`` (a CRD list's default)
and the object's own ``x-kubernetes-map-type`` (codegen carries it on the field that holds it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["shape", "shared_type"]


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
    from codegen.core import SHARED_TYPES

    return frozenset(
        frozenset(f.serialization_alias or name for name, f in cls.model_fields.items())
        for cls in SHARED_TYPES
    )


@functools.cache
def _index() -> dict[str, str]:
    from codegen.core import SHARED_TYPES
    from codegen.crdgen import object_schema

    return {shape(object_schema(cls)): cls.__name__ for cls in reversed(SHARED_TYPES)}


def shared_type(node: Mapping[str, Any]) -> str | None:
    """The name of the :mod:`codegen.core` class whose schema ``node`` is, or None."""
    props = node.get("properties")
    if node.get("type") not in ("object", None) or not isinstance(props, Mapping) or not props:
        return None
    if frozenset(props) not in _keys():
        return None
    return _index().get(shape(node))
