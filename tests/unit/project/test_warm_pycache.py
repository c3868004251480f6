"""tests/support/warm_pycache.py: xdist workers share the cold bytecode work (issue 28)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir

from tests.support import warm_pycache


def test_the_shares_are_disjoint_and_cover_every_file() -> None:
    files = [Path(f"f{i}.py") for i in range(7)]
    shares = [warm_pycache.share(files, f"gw{i}", 2) for i in range(2)]
    assert sorted(shares[0] + shares[1]) == sorted(files)
    assert not set(shares[0]) & set(shares[1])
    assert warm_pycache.share(files, None, 2) == []  # not a worker
    assert warm_pycache.share(files, "gw0", 1) == []  # a single worker: nothing to share


def test_each_worker_writes_its_share_of_caches_that_pytest_and_python_read(
    tmp_path: Path, pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_file = tmp_path / "test_sample.py"
    test_file.write_text("def test_sum() -> None:\n    assert 1 + 1 == 2\n")
    module = tmp_path / "helper.py"
    module.write_text("VALUE = 1\n")
    monkeypatch.setattr(warm_pycache, "_test_files", lambda config: {test_file})
    monkeypatch.setattr(warm_pycache, "_project_files", lambda root: {module})
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    compiled = []
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        compiled.append(warm_pycache.warm(pytestconfig))
    assert sorted(compiled) == [1, 1]  # one file each
    rewritten = get_cache_dir(test_file) / f"test_sample{PYC_TAIL}"
    assert _read_pyc(test_file, rewritten) is not None  # what pytest's import loads
    assert Path(importlib.util.cache_from_source(str(module))).is_file()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert warm_pycache.warm(pytestconfig) == 0  # cached: nothing to do again
