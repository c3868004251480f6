"""The suite's run order: test modules by their last measured time, longest first.

With ``-n 2`` (``--dist worksteal``) a worker that runs out of tests steals the second half
of the other's queue, so the run ends with the list's last tests: a module of seconds-long
tests there (a mypy run, a corpus) keeps one worker busy while the other idles. The order is
longest processing time first, per module (a module's tests stay together, with its
module-scoped fixtures): each test's setup, call and teardown seconds are kept in pytest's
cache (``.pytest_cache``, one entry per backend) at the end of a session, and the next
session sorts the modules by their totals. A module never measured counts as the longest
(it may be); without measurements of nearly all the collected modules (a fresh checkout,
``-p no:cacheprovider``, only a few files run before) the order is the static one.

The controller reads the measurements once and hands them to the xdist workers (their
collections must come out in the same order, whatever another session writes meanwhile).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest

__all__ = ["RunOrder", "module_of", "module_seconds"]

#: pytest cache key (a backend's name is appended): test node id -> seconds
KEY = "kube_runtime/test_seconds"
#: key of the module totals in an xdist worker's ``workerinput``
WORKER_INPUT = "kube_runtime_module_seconds"
#: the share of the collected modules that must have been measured to sort by time
COVERAGE = 0.9


def module_of(nodeid: str) -> str:
    """The test file of a node id."""
    return nodeid.split("::", 1)[0]


def module_seconds(per_test: Mapping[str, float]) -> dict[str, float]:
    """Per module, the sum of its tests' seconds."""
    totals: dict[str, float] = {}
    for nodeid, seconds in per_test.items():
        module = module_of(nodeid)
        totals[module] = totals.get(module, 0.0) + float(seconds)
    return totals


class RunOrder:
    """The plugin: records durations (controller or single process) and sorts the items.

    ``static``: the order's key (after the slow-marked tests) without measurements."""

    def __init__(self, config: pytest.Config, backend: str, static: Callable[[Any], Any]) -> None:
        self._config = config
        self._key = f"{KEY}/{backend}"
        self._static = static
        self._seconds: dict[str, float] = {}
        worker_input: Any = getattr(config, "workerinput", None)
        self._worker = worker_input is not None
        if self._worker:
            self.modules: dict[str, float] = dict(worker_input.get(WORKER_INPUT) or {})
        else:
            self.modules = module_seconds(self._previous())

    def _previous(self) -> dict[str, float]:
        cache = getattr(self._config, "cache", None)
        if cache is None:
            return {}
        value = cache.get(self._key, {})
        if not isinstance(value, dict):
            return {}
        return {k: float(v) for k, v in value.items() if isinstance(v, (int, float))}

    def sort(self, items: list[Any]) -> None:
        """Sort ``items`` in place (stable): slow-marked tests first; then the modules by
        measured seconds, longest first, when at least :data:`COVERAGE` of the collected
        modules were measured (one never measured counts as the longest); else the static
        order (a cache filled by runs of a few files only says nothing of the others)."""
        collected = {module_of(item.nodeid) for item in items}
        measured = len(collected & self.modules.keys())
        by_time = bool(collected) and measured >= COVERAGE * len(collected)

        def key(item: Any) -> tuple[Any, ...]:
            slow = item.get_closest_marker("slow") is not None
            if by_time:
                return (not slow, -self.modules.get(module_of(item.nodeid), math.inf))
            return (not slow, self._static(item))

        items.sort(key=key)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_INPUT] = self.modules

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self._worker:
            self._seconds[report.nodeid] = self._seconds.get(report.nodeid, 0.0) + float(
                report.duration
            )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self._config, "cache", None)
        if self._worker or cache is None or not self._seconds:
            return
        root = self._config.rootpath
        kept = {
            nodeid: seconds
            for nodeid, seconds in self._previous().items()
            if nodeid not in self._seconds and (root / module_of(nodeid)).exists()
        }
        kept.update({nodeid: round(s, 3) for nodeid, s in self._seconds.items()})
        cache.set(self._key, kept)
