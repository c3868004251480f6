"""Deprecated: moved to :mod:`kube_runtime.models.crd` (generated models import the runtime,
never the generator). Every name read from here still works for one release and warns with a
``DeprecationWarning`` naming the new path."""

from __future__ import annotations

from typing import Any

from kube_runtime._moved import moved_attribute

__all__: list[str] = []

#: Where the names of this module live now.
MOVED_TO = ("kube_runtime.models.crd",)


def __getattr__(name: str) -> Any:
    """A name that moved out of this module, with a ``DeprecationWarning`` naming its new path."""
    return moved_attribute(__name__, name, MOVED_TO)
