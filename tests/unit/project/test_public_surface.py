"""The framework's public surface is delimited: every public module (no underscore in its
path) of ``kube_runtime`` declares ``__all__``, not empty, and every name it lists exists and,
when it is a class or a function, states its contract in a docstring.

The test cluster (``kube_runtime.envtest``) is its own product with its own entry points
(``kube_runtime.envtest.__all__``, the pytest fixtures) and is left out; so are modules whose
path has a leading underscore (implementation details).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _public_modules() -> list[str]:
    modules = []
    for path in sorted((ROOT / "kube_runtime").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if "envtest" in parts or any(p.startswith("_") for p in parts):
            continue
        modules.append(".".join(parts))
    return modules


PUBLIC_MODULES = _public_modules()


def _declares_all(module: str) -> bool:
    """Whether the module's source assigns ``__all__`` at top level (read, not imported)."""
    path = ROOT / module.replace(".", "/")
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    for node in ast.parse(source.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return True
    return False


def test_the_public_modules_are_found() -> None:
    assert {"kube_runtime", "kube_runtime.manager", "kube_runtime.client.client"} <= set(
        PUBLIC_MODULES
    )
    assert not any(m.startswith("kube_runtime.envtest") for m in PUBLIC_MODULES)


def test_every_public_module_declares_all() -> None:
    assert [m for m in PUBLIC_MODULES if not _declares_all(m)] == []


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_listed_name_exists_and_states_its_contract(module: str) -> None:
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    if names is None:
        pytest.skip("no __all__ (test_every_public_module_declares_all reports it)")
    assert list(names), f"{module}.__all__ is empty"
    assert len(set(names)) == len(names), f"{module}.__all__ lists a name twice"
    undocumented = []
    for name in names:
        if hasattr(mod, name):
            value = getattr(mod, name)
        else:  # a package may list its submodules
            value = importlib.import_module(f"{module}.{name}")
        needs_doc = inspect.isclass(value) or inspect.isfunction(value) or inspect.ismodule(value)
        if needs_doc and not inspect.getdoc(value):
            undocumented.append(name)
    assert undocumented == []
