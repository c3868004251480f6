"""The field errors a built-in kind's checks report (upstream apimachinery's ``field`` package:
``field.Required``, ``field.Invalid``, ...), under public names for the ``builtin_*`` modules.

Each constructor returns a :class:`~kube_runtime.envtest.server.errors.Cause` whose message is
worded as kube-apiserver words it (``Required value``, ``Invalid value: <Go value>: detail``,
``Unsupported value: ...: supported values: ...``). The bodies live in
:mod:`kube_runtime.envtest.server.validation`, which the object-meta and pod checks share; a
built-in kind's module imports this one (``from ... import fielderrors as fe``) rather than
``validation``'s private helpers.
"""

from __future__ import annotations

from typing import Final

from kube_runtime.envtest.server.validation import (
    _IMMUTABLE_MSG,
    _duplicate,
    _forbidden,
    _invalid,
    _map,
    _not_supported,
    _required,
    _too_long,
)

__all__ = [
    "IMMUTABLE",
    "as_map",
    "duplicate",
    "forbidden",
    "invalid",
    "not_supported",
    "required",
    "too_long",
]

IMMUTABLE: Final = _IMMUTABLE_MSG
"""The detail of an ``Invalid value`` for a field that may not change (``field is immutable``)."""

required = _required
"""``field.Required(path, detail)``: ``Required value[: detail]``."""
invalid = _invalid
"""``field.Invalid(path, value, detail)``: ``Invalid value: <value>[: detail]``."""
not_supported = _not_supported
"""``field.NotSupported(path, value, valid)``: ``Unsupported value: <value>: supported values: ...``."""
duplicate = _duplicate
"""``field.Duplicate(path, value)``: ``Duplicate value: <value>``."""
forbidden = _forbidden
"""``field.Forbidden(path, detail)``: ``Forbidden: detail``."""
too_long = _too_long
"""``field.TooLong(path, value, max)``: ``Too long: must have at most <max> bytes``."""
as_map = _map
"""A field's value as a mapping (an absent or mistyped one reads as empty: the type checks
report it)."""
