"""The field labels a field selector may use, per kind (kube-apiserver's label conversions).

A kind accepts exactly the fields :func:`kube_runtime.selectors.object_fields` extracts for
it: ``metadata.name`` and ``metadata.namespace`` for every kind, plus the selectable fields
upstream defines for pods, events, secrets, namespaces and nodes. Any other label is refused.
"""

from __future__ import annotations

from functools import lru_cache

from kube_runtime.selectors import (
    FieldSelector,
    SelectorError,
    object_fields,
    unsupported_field_label,
)

__all__ = ["check_field_selector", "supported_fields"]


@lru_cache(maxsize=1024)
def supported_fields(kind: str) -> frozenset[str]:
    """Field labels a field selector may use for ``kind``."""
    return frozenset(object_fields({"kind": kind}))


def check_field_selector(
    selector: FieldSelector, kind: str, group: str = "", *, custom: bool = False
) -> None:
    """Raise :class:`SelectorError` with kube-apiserver's message for an unknown label
    (:func:`kube_runtime.selectors.unsupported_field_label`)."""
    allowed = supported_fields(kind)
    for name, _, _ in selector.terms:
        if name not in allowed:
            raise SelectorError(unsupported_field_label(group, kind, name, custom=custom))
