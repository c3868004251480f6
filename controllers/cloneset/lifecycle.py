"""Pod lifecycle hooks of a CloneSet: moved to :mod:`kube_runtime.workloads.lifecycle`, which
the Advanced StatefulSet shares. This path still imports its names for one release, each with
a ``DeprecationWarning`` naming the new path."""

from __future__ import annotations

import warnings
from typing import Any

from kube_runtime.workloads import lifecycle as _lifecycle

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    """A name of :mod:`kube_runtime.workloads.lifecycle`, with a ``DeprecationWarning``."""
    if name in _lifecycle.__all__:
        warnings.warn(
            f"{__name__}.{name} moved to {_lifecycle.__name__}.{name}; the old import path "
            "will be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_lifecycle, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
