"""Int-or-percent values (apimachinery ``intstr.IntOrString``) scaled against a total.

Upstream ``GetScaledValueFromIntOrPercent`` semantics:

* an ``int`` is returned unchanged (``total`` and ``round_up`` are ignored);
* a string must be a percentage ``"<int>%"`` (``"25%"``, ``"-10%"``); it scales ``total`` and
  rounds up (``ceil``) or down (``floor``). A string without ``%`` is an error even when it
  holds digits (``"5"``), as upstream decides; so are ``"%"``, ``"1.5%"`` and ``" 5%"``.

The arithmetic is exact (integers, no float rounding). Anything else (``None``, a bool, a
float, a malformed string) raises :class:`ValueError` saying what is accepted.
"""

from __future__ import annotations

import re

__all__ = ["IntOrPercent", "int_or_percent_error", "is_percent", "scaled_value"]

IntOrPercent = int | str

# strconv.Atoi: an optional sign and decimal digits, nothing else.
_PERCENT = re.compile(r"([+-]?[0-9]+)%")


def is_percent(value: IntOrPercent) -> bool:
    """Whether ``value`` is a well-formed percentage string (``"50%"``)."""
    return isinstance(value, str) and _PERCENT.fullmatch(value) is not None


def scaled_value(value: IntOrPercent, total: int, round_up: bool) -> int:
    """``value`` as an absolute number: ints unchanged, ``"p%"`` scaled to ``p * total / 100``.

    ``round_up`` picks ``ceil`` (e.g. maxSurge) over ``floor`` (e.g. maxUnavailable).
    Raises ``ValueError`` for anything that is not an int or a percentage string.
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(
            f"invalid int-or-percent value {value!r}: must be an integer or a percentage like '25%'"
        )
    if isinstance(value, int):
        return value
    match = _PERCENT.fullmatch(value)
    if match is None:
        raise ValueError(
            f"invalid int-or-percent value {value!r}: must be an integer or a percentage like '25%'"
        )
    product = int(match.group(1)) * total
    return -(-product // 100) if round_up else product // 100


def int_or_percent_error(value: object) -> str | None:
    """Why ``value`` is not a non-negative int or percentage (upstream
    ``ValidatePositiveIntOrPercent``), or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return f"must be an integer or a percentage like '25%', not {value!r}"
    if isinstance(value, str):
        match = _PERCENT.fullmatch(value)
        if match is None:
            return f"Invalid value: {value!r}: must be an integer or percentage (e.g '5%')"
        number = int(match.group(1))
    else:
        number = value
    if number < 0:
        return f"Invalid value: {value!r}: must be greater than or equal to 0"
    return None
