"""Python names from schema keys: class names from the schema path, snake_case field names.

Class names are the PascalCase path from the kind (``CloneSetSpecUpdateStrategy``); array
items add ``Item`` and map values ``Value``. :class:`NameRegistry` hands out each class
name once, appending 2, 3, ... on a collision, in the (deterministic) order names are asked.
Field names are snake_case; keywords, names that would shadow a builtin type used in the
annotations or a pydantic ``BaseModel`` attribute get a trailing underscore, and a leading
digit gets an ``f_`` prefix.
"""

from __future__ import annotations

import keyword
import re

from pydantic import BaseModel

import kube_runtime.models

__all__ = ["IMPORT_SOURCES", "RESERVED_CLASS_NAMES", "NameRegistry", "class_part", "field_name"]

#: Where each name a generated module may import comes from (module, names), in
#: import-section order: the renderer writes its imports from this table.
IMPORT_SOURCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("typing", ("Annotated", "Any", "ClassVar", "Literal")),
    ("pydantic", ("Field",)),
    ("kube_runtime.client", ("Resource",)),
    ("kube_runtime.models", tuple(kube_runtime.models.__all__)),  # its public names
)

#: Names every generated module may import or use in annotations: a class must not shadow them.
RESERVED_CLASS_NAMES = frozenset(
    {name for _, names in IMPORT_SOURCES for name in names} | {"None", "True", "False"}
)

# A field named like a type used in annotations would shadow it in the class body.
_SHADOWING = frozenset(
    {"int", "str", "float", "bool", "list", "dict", "frozenset", "model_default"}
)
_BASEMODEL_ATTRS = frozenset(name for name in dir(BaseModel) if not name.startswith("__"))
_WORD_SPLIT = re.compile(r"[^0-9A-Za-z]+")
_ACRONYM_END = re.compile(r"([A-Z]+)([A-Z][a-z])")
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")


def class_part(key: str) -> str:
    """``updateStrategy`` -> ``UpdateStrategy``; ``x-kubernetes-foo`` -> ``XKubernetesFoo``."""
    words = [w for w in _WORD_SPLIT.split(key) if w]
    return "".join(w[0].upper() + w[1:] for w in words) or "Field"


def field_name(key: str) -> str:
    """``minReadySeconds`` -> ``min_ready_seconds``; ``continue`` -> ``continue_``;
    ``podIPs`` -> ``pod_i_ps`` (as the official Python client names it)."""
    name = _WORD_SPLIT.sub("_", key)
    name = _ACRONYM_END.sub(r"\1_\2", name)
    name = _LOWER_UPPER.sub(r"\1_\2", name)
    name = re.sub(r"_+", "_", name.lower()).strip("_") or "field"
    if name[0].isdigit():
        name = "f_" + name
    if keyword.iskeyword(name) or name in _SHADOWING or name in _BASEMODEL_ATTRS:
        name += "_"
    return name


class NameRegistry:
    """Unique class names for one module."""

    def __init__(self) -> None:
        self._taken: set[str] = set(RESERVED_CLASS_NAMES)

    def claim(self, wanted: str) -> str:
        """``wanted`` if free, else ``wanted2``, ``wanted3``, ... (first free)."""
        if wanted[0].isdigit():
            wanted = "N" + wanted
        name, n = wanted, 1
        while name in self._taken:
            n += 1
            name = f"{wanted}{n}"
        self._taken.add(name)
        return name
