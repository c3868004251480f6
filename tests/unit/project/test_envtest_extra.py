"""The embedded cluster's dependencies are an extra (``pip install 'kube-runtime[envtest]'``):
a controller's image installs only what the framework imports.

Two checks: pyproject's metadata (the extra lists what only ``kube_runtime.envtest`` imports,
the base list none of it, the ``test`` extra pulls the extra in), and a fresh interpreter in
which the extra's distributions cannot be imported: the framework, the bundled controllers and
the pytest plugin (loaded by every pytest of anyone who installed kube-runtime) import, and a
fixture that starts the cluster fails with a message naming the extra.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
INSTALL_HINT = "pip install 'kube-runtime[envtest]'"


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement string (PEP 503)."""
    head = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", head).lower()


def _project() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


def _envtest_extra() -> set[str]:
    return {_name(r) for r in _project()["optional-dependencies"]["envtest"]}


@functools.cache
def _owners() -> Mapping[str, list[str]]:
    """Top-level module -> its distributions (a scan of every installed distribution)."""
    return importlib.metadata.packages_distributions()


#: The fields of a statement that hold statements (an expression never holds one).
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of ``tree``, at any depth (function bodies, branches, handlers):
    what :func:`ast.walk` finds among statements, without visiting every expression."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in _BODIES:
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(c for c in children if isinstance(c, ast.AST))


def _imported_distributions(paths: list[Path], among: set[str]) -> set[str]:
    """Which of the installed distributions ``among`` (normalized names) the modules at
    ``paths`` import (absolute imports, wherever they sit in the module).

    Only a source that names a top-level module of one of them (as a word) is parsed: an
    import of a module names it (parsing all ~240 sources took ~2 s of CPU)."""
    owners = _owners()
    tops = sorted(top for top, dists in owners.items() if {_name(d) for d in dists} & among)
    if not tops:
        return set()
    names_one = re.compile(r"\b(?:" + "|".join(map(re.escape, tops)) + r")\b")
    found: set[str] = set()
    for path in paths:
        text = path.read_text()
        if names_one.search(text) is None:
            continue
        for node in _statements(ast.parse(text, str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.update(_name(d) for d in owners.get(name.split(".")[0], ()))
    return found & among


def _installed() -> set[str]:
    """Every installed distribution, normalized."""
    return {_name(d) for dists in _owners().values() for d in dists}


def _sources(*roots: str) -> list[Path]:
    return [p for root in roots for p in sorted((ROOT / root).rglob("*.py"))]


def test_the_envtest_extra_holds_what_only_the_embedded_cluster_imports() -> None:
    project = _project()
    base = {_name(r) for r in project["dependencies"]}
    extra = _envtest_extra()
    assert {"msgspec", "common-expression-language", "jsonpath-ng", "protobuf"} <= extra
    assert "kubernetes-validate" in extra  # read as package data (importlib.resources)
    assert base & extra == set()
    assert "kube-runtime[envtest]" in project["optional-dependencies"]["test"]

    envtest = _sources("kube_runtime/envtest")
    # controllers.demo is the `kube-runtime demo` command: it starts an embedded cluster.
    rest = [
        p
        for p in _sources("kube_runtime", "controllers", "codegen")
        if "envtest" not in p.parts and p.name != "demo.py"
    ]
    assert envtest and rest
    assert _imported_distributions(rest, extra) == set()
    others = _installed() - base - extra - {"pytest", "kube-runtime"}
    assert "msgspec" not in others and "pyyaml" in _installed()  # the names are normalized
    assert _imported_distributions(envtest, others) == set()

    from kube_runtime.envtest.server import EXTRA_MODULES

    assert {_name(d) for d in EXTRA_MODULES.values()} == extra  # the import guard's list


def _framework_modules() -> list[str]:
    """Every module of the framework outside the embedded cluster, plus the envtest package
    and its pytest plugin (which never import the cluster at import time)."""
    modules = ["kube_runtime.envtest", "kube_runtime.envtest.plugin"]
    for path in sorted((ROOT / "kube_runtime").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if "envtest" in parts or parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        modules.append(".".join(parts))
    return modules


#: A fresh interpreter in which every file of the extra's distributions is unimportable (the
#: finder asks the path finder where a module would come from and refuses those files).
#: ``ATTEMPTS``: the blocked imports the project's own code tried (a third-party package's
#: optional import, e.g. the kubernetes client's of kubernetes_validate, is its business).
_BLOCKED_PRELUDE = """
import importlib.abc, importlib.machinery, importlib.metadata, os, sys
OWN = tuple(os.path.join({root!r}, p, "") for p in ("kube_runtime", "controllers", "codegen"))
BLOCKED = set()
for dist in {extra!r}:
    d = importlib.metadata.distribution(dist)
    base = os.path.realpath(d.locate_file(""))  # resolved once: a file of a wheel is no link
    BLOCKED.update(os.path.normpath(os.path.join(base, f)) for f in d.files or ())
ATTEMPTS = []
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and os.path.realpath(spec.origin) in BLOCKED:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            if frame is not None and frame.f_code.co_filename.startswith(OWN):
                ATTEMPTS.append(name)
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""


def _run_blocked(code: str, tmp: Path) -> dict[str, Any]:
    prelude = _BLOCKED_PRELUDE.format(extra=sorted(_envtest_extra()), root=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=tmp,
        env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_framework_and_the_pytest_plugin_work_without_the_envtest_extra(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_uses_cluster.py").write_text(
        "def test_needs_the_cluster(embedded_cluster):\n    pass\n\ndef test_plain():\n    pass\n"
    )
    modules = [
        *_framework_modules(),
        "controllers.statefulset",
        "controllers.cloneset",
        "controllers.deployment",
    ]
    result = _run_blocked(
        f"""
        import contextlib, importlib, io, json, warnings
        import pytest
        warnings.simplefilter("ignore", DeprecationWarning)
        failed = {{}}
        for name in {modules!r}:
            try:
                importlib.import_module(name)
            except Exception as e:
                failed[name] = repr(e)
        from kube_runtime import cli
        run_setup = callable(cli.load_controller("statefulset").setup)
        framework_attempts = list(ATTEMPTS)
        try:
            importlib.import_module("kube_runtime.envtest.cluster")
            cluster_error = ""
        except ModuleNotFoundError as e:
            cluster_error = str(e)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "."])
        print(json.dumps({{
            "failed": failed, "framework_attempts": framework_attempts, "run_setup": run_setup,
            "cluster_error": cluster_error, "pytest_code": int(code), "pytest": out.getvalue(),
        }}))
        """,
        tmp_path,
    )
    assert result["failed"] == {}
    assert result["framework_attempts"] == []  # not even tried (and caught) by the framework
    assert result["run_setup"] is True
    assert INSTALL_HINT in result["cluster_error"]
    assert "msgspec" in result["cluster_error"]  # what is missing, by distribution
    report = result["pytest"]
    assert result["pytest_code"] == 1, report
    assert "1 passed" in report and "1 error" in report, report
    assert INSTALL_HINT in report
