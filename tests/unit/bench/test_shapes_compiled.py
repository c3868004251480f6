"""The compiled fast path of kube_runtime.envtest.server.shapes agrees with the table walker."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench.embedded_server import typical_pod
from kube_runtime.envtest.server import shapes
from tests.support.write_path_corpus import json_copy

ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**31,
    2**63,
    1.5,
    2.0,
    "x",
    " 1Gi ",
    "1Gi",
    "12e3",
    "lots",
    [],
    [None],
    ["a", None],
    {},
    {"k": None},
    {"k": 1},
]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*at, i))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        obj = obj[step]
    obj[path[-1]] = value


def _walked(group: str, kind: str, obj: Any, status: bool) -> shapes.ShapeError | None:
    table = shapes._KINDS if status else shapes._WITHOUT_STATUS
    try:
        table[(group, kind)].check(obj)
    except shapes.ShapeError as e:
        return e
    return None


def _answer(found: shapes.ShapeError | None) -> Any:
    return None if found is None else (found.field, found.message())


def _pod() -> dict[str, Any]:
    pod = typical_pod("p", "default")
    pod["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0}],
    }
    return pod


@pytest.mark.parametrize("status", [True, False])
def test_the_fast_path_answers_as_the_walker_on_mutated_pods(status: bool) -> None:
    rng = random.Random(18)
    base = _pod()
    paths = [p for p in _paths(base) if p]
    for _ in range(3_000):
        fast_obj, walked_obj = json_copy(base), json_copy(base)
        for _ in range(rng.choice((1, 1, 2))):
            path, value = rng.choice(paths), rng.choice(ODD_VALUES)
            try:
                _set(fast_obj, path, json_copy(value))
                _set(walked_obj, path, json_copy(value))
            except (KeyError, IndexError, TypeError):
                continue
        fast = shapes.mismatch("", "Pod", fast_obj, status=status)
        walked = _walked("", "Pod", walked_obj, status)
        assert _answer(fast) == _answer(walked)
        assert fast_obj == walked_obj  # the same null items replaced by zero values


def test_valid_bodies_take_the_fast_path_and_null_items_the_walker() -> None:
    pod = _pod()
    assert shapes._fast_type(shapes._KINDS[("", "Pod")]) is not None
    assert shapes.mismatch("", "Pod", pod) is None
    pod["spec"]["containers"][0]["args"] = ["a", None]
    assert shapes.mismatch("", "Pod", pod) is None
    assert pod["spec"]["containers"][0]["args"] == ["a", ""]  # Go's zero value


def test_recursive_tables_are_left_to_the_walker() -> None:
    crd = shapes._KINDS[("apiextensions.k8s.io", "CustomResourceDefinition")]
    assert shapes._fast_type(crd) is None
    bad = {"spec": {"versions": [{"schema": {"openAPIV3Schema": {"type": 1}}}]}}
    found = shapes.mismatch("apiextensions.k8s.io", "CustomResourceDefinition", bad)
    assert found is not None and found.go_type == "string"
