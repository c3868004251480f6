"""This repository's own test settings (not shipped: users get only the envtest plugin).

* The cache's mutation detector is on: a test that mutates a cached object fails.
* On ``--backend real``, the tests listed in :mod:`tests.real_skips` (features newer than the
  real backend's Kubernetes 1.20) are skipped with their reason.
* Tests marked ``slow`` (they wait tens of seconds) are collected first, in their collection
  order, so that on pytest-xdist workers (``--dist worksteal``, pyproject's addopts) they start
  at once and the workers share the rest and finish together, instead of one worker starting a
  long wait at the end. The other modules follow by their last measured time, longest first
  (:mod:`tests.support.run_order`, pytest's cache): a worker that runs out of work steals the
  second half of the other's queue, so the last tests of the run are the list's last, and
  short ones end together. Before any measurement the unit tests (``tests/unit``: thousands,
  mostly milliseconds) come last, after the e2e tests and the examples'.
* On pytest-xdist workers, each writes its share of the bytecode caches that are missing
  before collecting (:mod:`tests.support.warm_pycache`): a fresh checkout's ~500 modules are
  compiled once between the workers instead of once by each.
* The root logger's handlers and level are put back after each test: a test that runs
  ``kube_runtime.cli.main`` in-process gets its ``logging.basicConfig`` handler, which writes
  to that test's captured stderr; left in place, every later record of a thread that outlives
  its test (a controller stopping, a lease renewal) failed with "I/O operation on closed file".
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

from kube_runtime.envtest.plugin import backend_of
from tests.real_skips import reason_for
from tests.support.run_order import RunOrder
from tests.support.warm_pycache import warm

os.environ.setdefault("KUBE_CACHE_MUTATION_DETECTOR", "true")


@pytest.fixture(autouse=True)
def _root_logger_restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def _unit(item: pytest.Item) -> bool:
    return item.nodeid.startswith("tests/unit/")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(
        RunOrder(config, backend_of(config), static=_unit), "kube_runtime_run_order"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    warm(session.config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # stable: slow first, then the longest modules (unit tests last before measurements)
    order = config.pluginmanager.get_plugin("kube_runtime_run_order")
    if isinstance(order, RunOrder):
        order.sort(items)
    if backend_of(config) != "real":
        return
    for item in items:
        reason = reason_for(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"real backend: {reason}"))
