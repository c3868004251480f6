"""Scalar types, enums, formats and validation keywords of one schema node.

OpenAPI v3 (structural schema) -> Python annotation:

=====================  ========================================================
``integer``            ``int`` (``int32``/``int64`` alike: Python ints are unbounded)
``number``             ``float``
``boolean``            ``bool``
``string``             ``str``; ``date-time`` -> ``DateTime``, ``byte`` -> ``Base64``
                       (validated, kept verbatim so the wire form round-trips)
``enum``               ``Literal[...]`` of the values (``null`` left to nullability)
=====================  ========================================================

Validation keywords become pydantic constraints: ``minimum``/``maximum`` (with OpenAPI 3.0's
boolean ``exclusiveMinimum``/``exclusiveMaximum``) -> ``ge``/``gt``/``le``/``lt``,
``multipleOf`` -> ``multiple_of``, ``minLength``/``maxLength``/``minItems``/``maxItems``/
``minProperties``/``maxProperties`` -> ``min_length``/``max_length``, ``pattern`` -> ``pattern``.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from codegen.pyexpr import Atom, Expr, Pair, literal, subscript

__all__ = ["constraint_kwargs", "scalar_type"]

Schema = Mapping[str, Any]

_FORMAT_TYPES = {"date-time": "DateTime", "byte": "Base64"}
_BASIC = {"integer": "int", "number": "float", "boolean": "bool", "string": "str"}


def scalar_type(node: Schema, imports: set[str]) -> Expr | None:
    """The annotation of a scalar node (None when the node is not a scalar)."""
    kind = node.get("type")
    if kind not in _BASIC:
        return None
    values = [v for v in node.get("enum") or () if v is not None]
    if values and all(isinstance(v, (str, int, bool)) for v in values):
        imports.add("Literal")
        return subscript("Literal", [literal(v) for v in dict.fromkeys(values)])
    if kind == "string" and node.get("format") in _FORMAT_TYPES:
        name = _FORMAT_TYPES[node["format"]]
        imports.add(name)
        return Atom(name)
    return Atom(_BASIC[kind])


#: The length and pattern keywords each annotation type carries, as ``Field`` arguments.
_LENGTH_KEYWORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "string": (("minLength", "min_length"), ("maxLength", "max_length"), ("pattern", "pattern")),
    "list": (("minItems", "min_length"), ("maxItems", "max_length")),
    "dict": (("minProperties", "min_length"), ("maxProperties", "max_length")),
}


def constraint_kwargs(node: Schema, python_type: str, skip: Set[str] = frozenset()) -> list[Pair]:
    """``Field`` keyword arguments for the validation keywords of ``node``.

    ``python_type`` is what the annotation validates: ``"number"``, ``"string"``, ``"list"``,
    ``"dict"`` or anything else (no constraints apply; pydantic rejects a constraint its type
    cannot carry, e.g. ``ge`` on ``int | str``).
    """
    out: list[Pair] = []

    def add(key: str, value: Any) -> None:
        if key not in skip:
            out.append(Pair(key + "=", literal(value)))

    if python_type == "number":
        if "minimum" in node:
            add("gt" if node.get("exclusiveMinimum") is True else "ge", node["minimum"])
        if "maximum" in node:
            add("lt" if node.get("exclusiveMaximum") is True else "le", node["maximum"])
        if "multipleOf" in node:
            add("multiple_of", node["multipleOf"])
    else:
        for keyword, key in _LENGTH_KEYWORDS.get(python_type, ()):
            if keyword in node:
                add(key, node[keyword])
    return out
