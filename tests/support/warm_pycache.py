"""Share the cold bytecode work between pytest-xdist workers (``make test``'s ``-n 2``).

Each worker imports every test module, and pytest compiles each one with its assertions
rewritten (a ``*-pytest-X.Y.pyc`` next to the normal ``.pyc``): on a fresh checkout every
worker used to rewrite all ~500 modules the session imports, the same work once per worker
(~10 s of CPU each on 2 cores). :func:`warm` runs before a worker collects: worker ``i`` of
``n`` writes the missing caches of every ``n``-th file (its share), so that the modules
the others write are found cached when collection imports them. A file the other worker has
not reached yet is compiled again by the importer, as before: the result is the same, only
the time differs. The project's packages get their normal ``.pyc`` the same way (the
``kube-runtime`` processes the e2e tests start import those).

Nothing here changes what runs: the caches are the very files pytest and the interpreter
write and validate themselves; anything unexpected (another pytest's internals, a read-only
tree) leaves the work to the imports, as without this module.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

__all__ = ["share", "warm"]

#: The project's packages: imported by the workers and by every ``kube-runtime`` process.
PACKAGES = ("kube_runtime", "controllers", "codegen", "bench")


def share(files: Iterable[Path], worker: str | None, count: int) -> list[Path]:
    """Worker ``worker`` (``gw0``, ``gw1``, ...)'s share of ``files``: every ``count``-th file
    in sorted order, starting at its index; nothing outside an xdist worker or with one."""
    if worker is None or count < 2 or not worker.startswith("gw"):
        return []
    try:
        index = int(worker[2:])
    except ValueError:
        return []
    return sorted(files)[index % count :: count]


def _test_files(config: pytest.Config) -> set[Path]:
    """The modules pytest rewrites under the session's directories: test files and
    conftests (the ``python_files`` patterns)."""
    patterns = [str(p) for p in config.getini("python_files")]
    found: set[Path] = set()
    base = config.invocation_params.dir
    for arg in config.args:
        path = (base / arg.split("::", 1)[0]).resolve()
        candidates = path.rglob("*.py") if path.is_dir() else [path]
        for file in candidates:
            if "__pycache__" in file.parts or file.suffix != ".py":
                continue
            if file.name == "conftest.py" or any(file.match(p) for p in patterns):
                found.add(file)
    return found


def _project_files(root: Path) -> set[Path]:
    return {f for package in PACKAGES for f in (root / package).rglob("*.py")}


def _module_name(file: Path, root: Path) -> str:
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def warm(config: pytest.Config) -> int:
    """Write this worker's share of the missing caches; the number of files compiled."""
    if sys.dont_write_bytecode:
        return 0
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if worker is None or count < 2:
        return 0
    root = config.rootpath
    project = _project_files(root)
    try:  # pytest's own cache format and writer (private: any change turns this off)
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )

        state = config.stash[assertstate_key]
        hook = state.hook if config.getoption("assertmode") == "rewrite" else None
        tests = _test_files(config)
    except (ImportError, AttributeError, KeyError, ValueError):
        hook, tests = None, set()
    compiled = 0
    for file in share(tests | project, worker, count):
        name = _module_name(file, root) if file.is_relative_to(root) else file.stem
        if hook is not None and hook._should_rewrite(name, str(file), state):
            pyc = get_cache_dir(file) / (file.name[:-3] + PYC_TAIL)
            if not pyc.exists():
                try:
                    pyc.parent.mkdir(exist_ok=True)
                    source_hash, code = _rewrite_test(file, config)
                except (OSError, SyntaxError):
                    continue  # the import reports it, as without this module
                _write_pyc(state, code, source_hash, pyc)
                compiled += 1
        if file in project and not Path(importlib.util.cache_from_source(str(file))).exists():
            try:
                py_compile.compile(str(file), doraise=True)
            except (OSError, py_compile.PyCompileError):
                continue
            compiled += 1
    return compiled
