"""Unit tests of the scale-path checks of custom resources (:mod:`.crdscale`); the messages
were taken from kube-apiserver 1.20 (tests/e2e/test_crd_scale_validation_e2e.py replays
them on both backends)."""

from __future__ import annotations

from typing import Any

import pytest

from kube_runtime.envtest.server import crdscale
from kube_runtime.envtest.server.resources import ScaleSpec

SCALE = ScaleSpec("spec.size", "status.count", "status.selector")


def _messages(obj: dict[str, Any], spec: bool = True) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in crdscale.validate_scale(obj, SCALE, spec=spec)]


def test_valid_and_absent_values_pass() -> None:
    assert _messages({}) == []
    assert _messages({"spec": None, "status": None}) == []  # a null step: absent
    assert _messages({"spec": {"size": 2**31 - 1}, "status": {"count": 0, "selector": "a=b"}}) == []
    assert crdscale.validate_scale({"spec": {"size": -1}}, None, spec=True) == []


def test_counts_out_of_range() -> None:
    assert _messages({"spec": {"size": -1}, "status": {"count": 2**31}}) == [
        (".spec.size", "Invalid value: -1: should be a non-negative integer"),
        (".status.count", "Invalid value: 2147483648: should be less than or equal to 2147483647"),
    ]
    # a status write checks the status only
    assert _messages({"spec": {"size": -1}}, spec=False) == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("x", "x is of the type string"),
        (True, "true is of the type bool"),
        (2.0, "2 is of the type float64"),
        (1e6, "1e+06 is of the type float64"),
        (123456.5, "123456.5 is of the type float64"),
        (0.0001, "0.0001 is of the type float64"),
        (0.00001, "1e-05 is of the type float64"),
        (None, "<nil> is of the type <nil>"),  # null at the end of the path is found
        (2**63, "9.223372036854776e+18 is of the type float64"),
        ([1, "a", None], "[1 a <nil>] is of the type []interface {}"),
        ({"b": 1, "a": {"c": []}}, "map[a:map[c:[]] b:1] is of the type map[string]interface {}"),
    ],
)
def test_other_types_word_the_accessor_error_as_go_prints_them(value: Any, shown: str) -> None:
    assert _messages({"spec": {"size": value}}) == [
        (".spec.size", f"Invalid value: 0: .spec.size accessor error: {shown}, expected int64")
    ]


def test_selector_and_paths_through_non_objects() -> None:
    assert _messages({"status": {"selector": 5}}) == [
        (
            ".status.selector",
            'Invalid value: "": .status.selector accessor error: 5 is of the type int64, '
            "expected string",
        )
    ]
    assert _messages({"spec": "x"}) == [
        (
            ".spec.size",
            "Invalid value: 0: .spec.size accessor error: x is of the type string, "
            "expected map[string]interface{}",
        )
    ]
