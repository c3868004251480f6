"""The base class of every typed model: explicit aliases, unknown fields kept.

Generated models (``codegen``) and the hand-written metadata models derive from
:class:`KubeModel`. Its configuration is the contract that makes a model a faithful view of
a wire object:

- ``extra="allow"``: a key the model does not declare is kept and dumped back. kube-apiserver
  prunes unknown fields of structural schemas, so normally none arrive; but a model generated
  from an older CRD version, a field added by a webhook, or content under
  ``x-kubernetes-preserve-unknown-fields`` must survive a read-modify-write. Dropping it
  silently (``extra="ignore"``) would erase data on the next update.
- ``populate_by_name=True`` with explicit per-field aliases (no alias generator): Python code
  uses snake_case names, the wire form uses the original camelCase keys.
- ``protected_namespaces=()``: CRD fields may be called ``model_*``.

``model_dump(mode="json", by_alias=True, exclude_unset=True)`` gives back the wire form
(the framework's client dumps models exactly so).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter

__all__ = ["KubeModel", "model_default", "typed_default"]

M = TypeVar("M", bound=BaseModel)


class KubeModel(BaseModel):
    """Base class of typed Kubernetes models (see the module docstring for the contract)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, protected_namespaces=())

    def to_wire(self) -> dict[str, Any]:
        """The JSON wire form: aliases, only the fields that were set (defaults stay implicit)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def model_default(cls: type[M], value: Mapping[str, Any]) -> Callable[[], M]:
    """A ``default_factory`` building a fresh ``cls`` from a schema's object ``default``."""
    frozen = dict(value)

    def build() -> M:
        return cls.model_validate(frozen)

    return build


def typed_default(annotation: Any, value: Any) -> Callable[[], Any]:
    """A ``default_factory`` building a fresh value of type ``annotation`` (e.g.
    ``list[Match]``) from a schema's ``default`` (e.g. ``[{"path": {"value": "/"}}]``), so a
    defaulted list of objects holds models, not dicts. ``value`` is copied; each call
    validates a fresh copy of it (the adapter is built on the first call)."""
    frozen = copy.deepcopy(value)
    adapters: list[TypeAdapter[Any]] = []

    def build() -> Any:
        if not adapters:
            adapters.append(TypeAdapter(annotation))
        return adapters[0].validate_python(copy.deepcopy(frozen))

    return build
