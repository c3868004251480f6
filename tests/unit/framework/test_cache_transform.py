"""The informer's transform (issue 19 part 5): by default managedFields and kubectl's
last-applied annotation never enter the cache; objects are not changed in place."""

from __future__ import annotations

import copy
from typing import Any

from kube_runtime.cache import LAST_APPLIED_ANNOTATION, strip_managed_fields


def _cm(name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", **metadata},
        "data": {"k": "v"},
    }


MANAGED = [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {"f:k": {}}}}]


def test_strip_managed_fields_copies_what_it_changes() -> None:
    obj = _cm("a", managedFields=MANAGED, annotations={LAST_APPLIED_ANNOTATION: "{}", "x": "1"})
    before = copy.deepcopy(obj)
    stripped = strip_managed_fields(obj)
    assert obj == before  # the source object is untouched
    assert "managedFields" not in stripped["metadata"]
    assert stripped["metadata"]["annotations"] == {"x": "1"}
    only = strip_managed_fields(_cm("b", annotations={LAST_APPLIED_ANNOTATION: "{}"}))
    assert "annotations" not in only["metadata"]
    plain = _cm("c")
    assert strip_managed_fields(plain) is plain  # nothing to drop: no copy
