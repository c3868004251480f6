"""The unit tests, one folder per product; each test gets its folder's marker, so that
``pytest -m controllers`` (or framework, envtest, codegen, bench, project) runs one product's
unit tests. Shared helpers live in ``tests/support``; fixtures shared inside one folder live in
that folder's ``conftest.py``.

``fresh_python`` (session): fresh interpreters for the import-shape checks, forked from one
with only third-party packages loaded (:mod:`tests.support.fresh_python`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fresh_python import FreshPython

HERE = Path(__file__).parent

#: folder -> what its tests cover (the marker's description)
PRODUCTS = {
    "framework": "the kube_runtime framework (client, cache, controller, manager, webhooks, ...)",
    "envtest": "the embedded cluster: API server, kubelet, field manager, persistence",
    "controllers": "the bundled StatefulSet, CloneSet and Deployment controllers",
    "codegen": "the CRD -> model code generator and model -> CRD generation",
    "bench": "the benchmark harness and chaos checks",
    "project": "repository-wide rules (layering, error handling style)",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, description in PRODUCTS.items():
        config.addinivalue_line("markers", f"{name}: unit tests of {description}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = item.path.relative_to(HERE).parts[0]
        except ValueError:
            continue  # not a unit test
        if folder in PRODUCTS:
            item.add_marker(folder)


@pytest.fixture(scope="session")
def fresh_python() -> Iterator[FreshPython]:
    """Runs code as ``python -c`` would in a new interpreter started in the repository."""
    with FreshPython(HERE.parents[1]) as python:
        yield python
