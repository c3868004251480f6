"""Resource quantities (``"1Gi"``, ``"500m"``, ``2``) as numbers, to compare storage sizes
(apimachinery ``resource.Quantity.Cmp``)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

__all__ = ["QUANTITY_RE", "parse_quantity", "storage_request"]

#: A quantity's text: the number (group 1) and its suffix, binary, decimal or an exponent
#: (group 2; absent for none). Match it whole (``fullmatch``); it allows no white space.
QUANTITY_RE: Final = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)
#: Multiplier per suffix: binary (``Ki`` = 2**10 ... ``Ei`` = 2**60), decimal (``m`` = 10**-3
#: ... ``n`` = 10**-9, ``k`` = 10**3 ... ``E`` = 10**18); no suffix is 1.
_SUFFIX: Final[dict[str, Decimal]] = {
    "": Decimal(1),
    **{s: Decimal(2) ** (10 * i) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), 1)},
    **{s: Decimal(10) ** (-3 * i) for i, s in enumerate(("m", "u", "n"), 1)},
    **{s: Decimal(10) ** (3 * i) for i, s in enumerate(("k", "M", "G", "T", "P", "E"), 1)},
}


def parse_quantity(value: object) -> Decimal | None:
    """The value of a quantity, or None when ``value`` is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = QUANTITY_RE.fullmatch(value.strip())
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number) * (Decimal(10) ** int(suffix[1:]))
        return Decimal(number) * _SUFFIX[suffix]
    except (InvalidOperation, ValueError):
        return None


def storage_request(claim: object) -> Decimal | None:
    """``spec.resources.requests.storage`` of a claim (or claim template), or None."""
    if not isinstance(claim, dict):
        return None
    spec = claim.get("spec") or {}
    return parse_quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
