"""Deprecation warnings for names that moved or were renamed.

:func:`warn_moved` words the warning; :func:`moved_attribute` serves a module's
``__getattr__`` for the names that left it.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["moved_attribute", "warn_moved"]


def warn_moved(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new`` (removed in the next release)."""
    warnings.warn(
        f"{old} moved to {new}; the old import path will be removed in the next release",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def moved_attribute(module: str, name: str, homes: Sequence[str]) -> Any:
    """For a module's ``__getattr__``: ``name`` that moved from ``module`` to the first of
    ``homes`` whose ``__all__`` lists it (imported only now), with :func:`warn_moved`.
    ``AttributeError`` for any other name (private and dunder names never import a home)."""
    if not name.startswith("_"):
        for home in homes:
            target = importlib.import_module(home)
            if name in getattr(target, "__all__", ()):
                warn_moved(f"{module}.{name}", f"{home}.{name}", stacklevel=4)
                return getattr(target, name)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
