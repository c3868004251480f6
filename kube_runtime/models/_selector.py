"""``metav1.LabelSelector`` as a model: the selector type generated modules share.

``kube-runtime codegen`` recognizes this shape in a CRD's schema and imports these classes
instead of generating a copy, so the selectors of two generated modules are the same class.
"""

from __future__ import annotations

from pydantic import Field

from kube_runtime.models._base import KubeModel

__all__ = ["LabelSelector", "LabelSelectorRequirement"]


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
