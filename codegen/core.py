"""The Kubernetes core types every generated module shares (import them from here).

``kube-runtime codegen`` recognizes these shapes in a CRD's schema (the same fields, types,
required fields and validation; descriptions aside) and imports the class from this module
instead of generating a copy, so two generated modules' selectors, conditions and owner
references are the same classes (``isinstance`` works across them, one helper serves all).
The path-named class a module would have had stays as an alias
(``CloneSetSpecSelector = LabelSelector``).

:class:`ObjectMeta`, :class:`OwnerReference`, :class:`ManagedFieldsEntry`, :class:`Condition`
(exactly controller-gen's ``metav1.Condition``: the five required fields with their patterns
and bounds; a CRD's own looser condition type gets a class of its own) and
:class:`EmbeddedResource` are the framework's (:mod:`kube_runtime.models`); the selector
types are defined here, with :func:`typed_default` (the factory generated fields use for a
schema ``default`` that holds objects, e.g. a list of them).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pydantic import Field, TypeAdapter

from kube_runtime.models import (
    Condition,
    EmbeddedResource,
    KubeModel,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
)

__all__ = [
    "SHARED_TYPES",
    "Condition",
    "EmbeddedResource",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "typed_default",
]


class LabelSelectorRequirement(KubeModel):
    """One requirement of a label selector: ``key``, an ``operator`` (In, NotIn, Exists,
    DoesNotExist) and the ``values`` it compares with (empty for Exists and DoesNotExist)."""

    key: str = Field(description="The label key the requirement applies to.")
    operator: str = Field(description="In, NotIn, Exists or DoesNotExist.")
    values: list[str] | None = Field(
        default=None,
        description="The values for In and NotIn (non-empty); empty otherwise.",
    )


class LabelSelector(KubeModel):
    """A ``metav1.LabelSelector``: the requirements are ANDed; an empty selector matches
    every object (``kube_runtime.selectors.label_selector_from_dict(sel.to_wire())``
    evaluates one)."""

    match_expressions: list[LabelSelectorRequirement] | None = Field(
        default=None,
        validation_alias="matchExpressions",
        serialization_alias="matchExpressions",
        description="Requirements on labels.",
    )
    match_labels: dict[str, str] | None = Field(
        default=None,
        validation_alias="matchLabels",
        serialization_alias="matchLabels",
        description="Labels that must have exactly these values.",
    )


#: The classes codegen matches schemas against, in the order it tries them.
SHARED_TYPES: tuple[type[KubeModel], ...] = (
    LabelSelector,
    LabelSelectorRequirement,
    Condition,
    OwnerReference,
    ManagedFieldsEntry,
)


def typed_default(annotation: Any, value: Any) -> Callable[[], Any]:
    """A ``default_factory`` building a fresh value of type ``annotation`` (e.g.
    ``list[Match]``) from a schema's ``default`` (e.g. ``[{"path": {"value": "/"}}]``), so a
    defaulted list of objects holds models, not dicts. ``value`` is copied; each call
    validates a fresh copy of it."""
    frozen = copy.deepcopy(value)
    adapters: list[TypeAdapter[Any]] = []

    def build() -> Any:
        if not adapters:
            adapters.append(TypeAdapter(annotation))
        return adapters[0].validate_python(copy.deepcopy(frozen))

    return build
