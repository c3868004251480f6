"""Implementation modules are private, and only the framework reaches into them.

A module of ``kube_runtime`` with a leading underscore in its path (``kube_runtime._moved``,
``kube_runtime.webhook._server``, ...) is an implementation module: its names reach a
controller author through a public module or package (``kube_runtime.webhook``), if at all.
So the code written on the framework the way its users write theirs (the bundled controllers,
the examples, the code generator, the demo) imports no private module, and the documentation
(``README.md``, ``docs/``, the examples' notes) names none as something to import: it may cite
an implementation file by its path (``kube_runtime/client/_registry.py``) where it explains
the design, never by its dotted name. The framework itself, its benchmarks and its tests may
import them (docs/architecture.md, "The public surface").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: The code that uses the framework as its users do: only public modules for it.
USER_CODE = ("controllers", "examples", "codegen", "kube_runtime_demo")

#: A dotted name with a private part under ``kube_runtime`` (``kube_runtime.webhook._server``).
PRIVATE_DOTTED = re.compile(r"(?<![\w./])kube_runtime(?:\.[A-Za-z]\w*)*\._[A-Za-z]\w*")

#: ``from kube_runtime.<pkg> import ...`` in a documentation code block (group 1: the names).
FROM_IMPORT = re.compile(r"from\s+kube_runtime(?:\.\w+)*\s+import\s+\(?([^)\n]*)")


def _private_modules() -> set[str]:
    found = set()
    for path in (ROOT / "kube_runtime").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] != "__init__" and any(p.startswith("_") for p in parts):
            found.add(".".join(parts))
    return found


def _imported_modules(path: Path) -> set[str]:
    """The modules ``path`` imports, ``from pkg import name`` counted as ``pkg.name`` too."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
    return modules


def _docs() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "examples").rglob("*.md")),
    ]


def test_the_private_modules_are_found() -> None:
    private = _private_modules()
    assert {"kube_runtime._moved", "kube_runtime.webhook._server"} <= private
    assert "kube_runtime.webhook.install" not in private


def test_code_written_as_a_user_imports_no_private_module() -> None:
    private = _private_modules()
    offenders = []
    for top in USER_CODE:
        for path in sorted((ROOT / top).rglob("*.py")):
            for module in sorted(_imported_modules(path) & private):
                offenders.append(f"{path.relative_to(ROOT)}: {module}")
    assert offenders == []


def test_the_docs_name_no_private_module() -> None:
    offenders = []
    for path in _docs():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            offenders.extend(f"{where}: {m.group(0)}" for m in PRIVATE_DOTTED.finditer(line))
            for match in FROM_IMPORT.finditer(line):
                names = [n.split()[0] for n in match.group(1).split(",") if n.strip()]
                offenders.extend(f"{where}: import {n}" for n in names if n.startswith("_"))
    assert offenders == []


def test_no_public_package_lists_a_private_module() -> None:
    """A package's ``__all__`` (what ``from pkg import *`` gives) names no private module."""
    offenders = []
    for module in sorted(_private_modules()):
        package, _, name = module.rpartition(".")
        init = ROOT / package.replace(".", "/") / "__init__.py"
        for node in ast.parse(init.read_text()).body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                and name in ast.literal_eval(node.value)
            ):
                offenders.append(module)
    assert offenders == []
