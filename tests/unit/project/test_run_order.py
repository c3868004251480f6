"""The suite's run order (:mod:`tests.support.run_order`): slow-marked tests first, then test
modules by their last measured seconds, longest first, a module's tests together; the static
order before any measurement; the measurements handed to xdist workers and kept per backend."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import pytest

from tests.support.run_order import KEY, WORKER_INPUT, RunOrder, module_of, module_seconds


class _Cache:
    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self.values = dict(values or {})

    def get(self, key: str, default: Any) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value


class _Item:
    def __init__(self, nodeid: str, slow: bool = False) -> None:
        self.nodeid = nodeid
        self._slow = slow

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self._slow else None


def _config(
    tmp_path: Path, cache: _Cache | None, worker_input: dict[str, Any] | None = None
) -> Any:
    config = SimpleNamespace(cache=cache, rootpath=tmp_path)
    if worker_input is not None:
        config.workerinput = worker_input
    return config


def _order(plugin: RunOrder, items: list[_Item]) -> list[str]:
    items = list(items)
    plugin.sort(items)
    return [i.nodeid for i in items]


ITEMS = [
    _Item("tests/e2e/test_a.py::one"),
    _Item("tests/e2e/test_a.py::two"),
    _Item("tests/unit/test_b.py::one"),
    _Item("tests/e2e/test_c.py::one"),
    _Item("tests/e2e/test_c.py::slow", slow=True),
    _Item("tests/unit/test_d.py::one"),
]


def test_module_totals() -> None:
    assert module_of("tests/a.py::T::t[x::y]") == "tests/a.py"
    assert module_seconds({"a.py::x": 1, "a.py::y": 2.5, "b.py::z": 0.5}) == {
        "a.py": 3.5,
        "b.py": 0.5,
    }


def test_without_measurements_the_static_order_after_the_slow_tests(tmp_path: Path) -> None:
    unit = lambda item: item.nodeid.startswith("tests/unit/")  # noqa: E731
    for cache in (None, _Cache()):
        plugin = RunOrder(_config(tmp_path, cache), "embedded", static=unit)
        assert _order(plugin, ITEMS) == [
            "tests/e2e/test_c.py::slow",
            "tests/e2e/test_a.py::one",
            "tests/e2e/test_a.py::two",
            "tests/e2e/test_c.py::one",
            "tests/unit/test_b.py::one",
            "tests/unit/test_d.py::one",
        ]


def test_measured_modules_longest_first_and_unmeasured_ones_before_them(tmp_path: Path) -> None:
    seconds = {
        "tests/e2e/test_a.py::one": 0.5,
        "tests/e2e/test_a.py::two": 0.5,  # test_a: 1 s in all
        "tests/unit/test_b.py::one": 3.0,
        "tests/unit/test_d.py::one": 0.005,
    }
    cache = _Cache({f"{KEY}/embedded": seconds})
    plugin = RunOrder(_config(tmp_path, cache), "embedded", static=lambda item: 0)
    new = _Item("tests/e2e/test_new.py::one")
    items = [*ITEMS[:3], new, *ITEMS[5:]]  # 3 of 4 modules measured: too few
    assert _order(plugin, items) == [i.nodeid for i in items]
    items = [*ITEMS[:3], new, *ITEMS[3:], *(_Item(f"m{i}.py::t") for i in range(30))]
    seconds.update({f"m{i}.py::t": 0.01 * i for i in range(30)})  # 34 of 35 measured
    plugin = RunOrder(_config(tmp_path, cache), "embedded", static=lambda item: 0)
    assert _order(plugin, items)[:7] == [
        "tests/e2e/test_c.py::slow",
        "tests/e2e/test_new.py::one",  # never measured
        "tests/e2e/test_c.py::one",  # measured without its slow test: 0 s
        "tests/unit/test_b.py::one",
        "tests/e2e/test_a.py::one",
        "tests/e2e/test_a.py::two",
        "m29.py::t",
    ]
    assert _order(plugin, items)[-2:] == ["tests/unit/test_d.py::one", "m0.py::t"]
    # another backend's measurements are its own
    other = RunOrder(_config(tmp_path, cache), "real", static=lambda item: 0)
    assert other.modules == {}


def test_workers_sort_by_what_the_controller_handed_them(tmp_path: Path) -> None:
    cache = _Cache({f"{KEY}/embedded": {"tests/unit/test_d.py::one": 9.0}})
    controller = RunOrder(_config(tmp_path, cache), "embedded", static=lambda item: 0)
    node = SimpleNamespace(workerinput={})
    controller.pytest_configure_node(node)
    cache.values.clear()  # another session wrote meanwhile: the workers do not read it
    worker = RunOrder(_config(tmp_path, cache, node.workerinput), "embedded", static=lambda item: 0)
    assert node.workerinput[WORKER_INPUT] == {"tests/unit/test_d.py": 9.0}
    assert _order(worker, ITEMS) == _order(controller, ITEMS)
    assert _order(worker, ITEMS)[-1] == "tests/unit/test_d.py::one"  # the only measured


def test_a_session_keeps_its_durations_and_those_of_tests_it_did_not_run(tmp_path: Path) -> None:
    (tmp_path / "kept.py").write_text("")
    cache = _Cache(
        {f"{KEY}/embedded": {"kept.py::old": 2.0, "gone.py::old": 1.0, "ran.py::t": 5.0}}
    )
    plugin = RunOrder(_config(tmp_path, cache), "embedded", static=lambda item: 0)
    phases: tuple[tuple[Literal["setup", "call", "teardown"], float], ...] = (
        ("setup", 0.25),
        ("call", 1.0),
        ("teardown", 0.25),
    )
    for when, duration in phases:
        plugin.pytest_runtest_logreport(
            pytest.TestReport(
                "ran.py::t", ("ran.py", 1, "t"), {}, "passed", None, when, [], duration
            )
        )
    plugin.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert cache.values[f"{KEY}/embedded"] == {"kept.py::old": 2.0, "ran.py::t": 1.5}
    # a worker records nothing: the controller has every report
    worker = RunOrder(_config(tmp_path, cache, {}), "embedded", static=lambda item: 0)
    worker.pytest_runtest_logreport(
        pytest.TestReport("w.py::t", ("w.py", 1, "t"), {}, "passed", None, "call", [], 3.0)
    )
    worker.pytest_sessionfinish(None)  # type: ignore[arg-type]
    assert "w.py::t" not in cache.values[f"{KEY}/embedded"]
