"""int-or-percent scaling: upstream GetScaledValueFromIntOrPercent, case by case."""

from __future__ import annotations

import pytest

from kube_runtime.workloads.intstr import is_percent, scaled_value


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        (5, 100, False, 5),  # ints are absolute, total ignored
        (5, 2, True, 5),
        (0, 10, True, 0),
        (-3, 10, False, -3),
        ("50%", 10, False, 5),
        ("50%", 10, True, 5),
        ("25%", 10, False, 2),  # 2.5 down
        ("25%", 10, True, 3),  # 2.5 up
        ("1%", 1, False, 0),
        ("1%", 1, True, 1),
        ("100%", 7, False, 7),
        ("0%", 7, True, 0),
        ("150%", 4, False, 6),
        ("33%", 3, False, 0),  # 0.99 down
        ("33%", 3, True, 1),
        ("+10%", 20, False, 2),  # strconv.Atoi accepts a sign
        ("-10%", 15, False, -2),  # floor(-1.5)
        ("-10%", 15, True, -1),  # ceil(-1.5)
        ("10%", 0, True, 0),
    ],
)
def test_scaled_value(value: int | str, total: int, round_up: bool, expected: int) -> None:
    assert scaled_value(value, total, round_up) == expected


@pytest.mark.parametrize(
    "value", ["5", "", "%", "abc%", "1.5%", " 5%", "5 %", "5%%", "five", None, 1.5, True, [5]]
)
def test_malformed_values_raise_a_clear_error(value: object) -> None:
    with pytest.raises(ValueError, match="must be an integer or a percentage like '25%'"):
        scaled_value(value, 10, True)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"), [("5%", True), ("-5%", True), ("5", False), (5, False), ("%", False)]
)
def test_is_percent(value: int | str, expected: bool) -> None:
    assert is_percent(value) is expected
