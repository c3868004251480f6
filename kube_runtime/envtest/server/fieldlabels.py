"""The field labels a field selector may use, per kind (kube-apiserver's label conversions).

A kind accepts exactly the fields :func:`kube_runtime.selectors.object_fields` extracts for
it: ``metadata.name`` and ``metadata.namespace`` for every kind, plus the selectable fields
upstream defines for pods, events, secrets, namespaces and nodes. Any other label is refused.
The check lives in :mod:`kube_runtime.selectors` (the cache makes it too); this module is
the server's name for it.
"""

from __future__ import annotations

from kube_runtime.selectors import check_field_selector, supported_fields

__all__ = ["check_field_selector", "supported_fields"]
