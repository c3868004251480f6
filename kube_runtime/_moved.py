"""Old import paths of moved packages, kept for one release with a ``DeprecationWarning``.

:func:`install` turns a package that moved into an alias of its new home: ``old.sub`` imports
the module at its new path (the very same module object, so ``isinstance`` and monkeypatching
keep working) and warns with a message naming the new path; names read from the old package
itself come from the new package, with the same warning. The framework never imports the new
homes here at import time: a module is loaded only when its old path is used.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["install", "moved_attribute", "warn_moved"]


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


class _AliasLoader(importlib.abc.Loader):
    """Hands out the already imported module at the new path (its own spec is kept)."""

    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        warn_moved(self.old, self.new)
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # the import system set the alias's spec: undo that


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``old.sub`` modules and maps them to their new paths."""

    def __init__(self, old: str, default: str, renamed: Mapping[str, str]) -> None:
        self.old = old
        self.default = default
        self.renamed = dict(renamed)

    def target(self, fullname: str) -> str | None:
        if not fullname.startswith(self.old + "."):
            return None
        sub = fullname[len(self.old) + 1 :]
        head = sub.split(".", 1)[0]
        if head in self.renamed:
            return self.renamed[head] + sub[len(head) :]
        return f"{self.default}.{sub}"

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = self.target(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname, new))


def install(old: str, default: str, renamed: Mapping[str, str] | None = None) -> Any:
    """Make package ``old`` an alias of ``default``; returns a module ``__getattr__``.

    ``renamed`` maps a submodule of ``old`` to its new full path when it did not move to
    ``default.<same name>``. Use in the old package's ``__init__``::

        __getattr__ = install(__name__, "new.home", {"cluster": "new.cluster"})
    """
    sys.meta_path.insert(0, _AliasFinder(old, default, renamed or {}))
    warn_moved(old, default, stacklevel=4)

    def __getattr__(name: str) -> Any:
        module = importlib.import_module(default)
        try:
            value = getattr(module, name)
        except AttributeError:
            raise AttributeError(f"module {old!r} has no attribute {name!r}") from None
        warn_moved(f"{old}.{name}", f"{default}.{name}")
        return value

    return __getattr__
