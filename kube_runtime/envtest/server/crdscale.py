"""The checks apiextensions-apiserver makes of a custom resource whose CRD declares a scale
subresource, on every write (its ``customResourceValidator.ValidateScaleSpec`` /
``ValidateScaleStatus``).

* The value at ``specReplicasPath`` (create, update; not a status write) and the one at
  ``statusReplicasPath`` (every write) must be absent, or integers from 0 to 2^31-1:
  ``.spec.size: Invalid value: -1: should be a non-negative integer``,
  ``... Invalid value: 2147483648: should be less than or equal to 2147483647``; a value of
  another JSON type is ``Invalid value: 0: .spec.size accessor error: x is of the type
  string, expected int64`` (the accessor's error, with Go's ``%v`` / ``%T`` of the value).
* The value at ``labelSelectorPath``, when the CRD names one, must be absent or a string
  (``Invalid value: "": .status.selector accessor error: ... expected string``).
* A path that crosses a value that is no object is the accessor's error too
  (``... expected map[string]interface{}``).

The field of each cause is the path with its leading dot, as upstream names it. The paths
are the resource's own (its storage version's) and checked on the stored form, as this
server validates custom resources against the storage version's schema.
"""

from __future__ import annotations

from typing import Any, Final

from kube_runtime.client._apifacts import decodes_as_int64, go_sprint, go_type
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.resources import ScaleSpec

__all__ = ["validate_scale"]

_MAX_INT32: Final = 2**31 - 1
_ABSENT: Final = object()


class _AccessorError(Exception):
    pass


def validate_scale(obj: dict[str, Any], scale: ScaleSpec | None, *, spec: bool) -> list[Cause]:
    """The causes ``obj`` breaks of ``scale``'s paths; ``spec``: check the spec replicas too
    (False for a write of the status subresource)."""
    if scale is None:
        return []
    causes: list[Cause] = []
    if spec:
        causes += _replicas(obj, scale.spec_replicas_path)
    causes += _replicas(obj, scale.status_replicas_path)
    if scale.label_selector_path:
        path = scale.label_selector_path
        try:
            value = _nested(obj, path)
            if value is not _ABSENT and not isinstance(value, str):
                raise _AccessorError(_type_error(path, value, "string"))
        except _AccessorError as err:
            causes.append(_invalid(path, '""', str(err)))
    return causes


def _replicas(obj: dict[str, Any], path: str) -> list[Cause]:
    try:
        value = _nested(obj, path)
        if value is _ABSENT:
            return []
        if not decodes_as_int64(value):
            raise _AccessorError(_type_error(path, value, "int64"))
    except _AccessorError as err:
        return [_invalid(path, "0", str(err))]
    if value < 0:
        return [_invalid(path, str(value), "should be a non-negative integer")]
    if value > _MAX_INT32:
        return [_invalid(path, str(value), f"should be less than or equal to {_MAX_INT32}")]
    return []


def _nested(obj: Any, path: str) -> Any:
    """``unstructured.NestedFieldNoCopy`` of the dotted ``path``: the value, or ``_ABSENT``
    when a step is missing or ``null``; raises for a step through a non-object."""
    fields = path.split(".")
    value = obj
    for i, name in enumerate(fields):
        if value is None:
            return _ABSENT
        if not isinstance(value, dict):
            raise _AccessorError(
                f".{'.'.join(fields[: i + 1])} accessor error: {go_sprint(value)} is of the type "
                f"{go_type(value)}, expected map[string]interface{{}}"
            )
        if name not in value:
            return _ABSENT
        value = value[name]
    return value


def _type_error(path: str, value: Any, expected: str) -> str:
    return f".{path} accessor error: {go_sprint(value)} is of the type {go_type(value)}, expected {expected}"


def _invalid(path: str, shown: str, detail: str) -> Cause:
    return Cause(f".{path}", "FieldValueInvalid", f"Invalid value: {shown}: {detail}")
