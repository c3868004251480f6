"""Resource quantities (``"1Gi"``, ``"500m"``, ``2``) as numbers, to compare storage sizes
(apimachinery ``resource.Quantity.Cmp``)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Final

__all__ = ["parse_quantity", "storage_request"]

_QUANTITY_RE: Final = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)
_SUFFIX: Final[dict[str, Decimal]] = {
    "": Decimal(1),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}


def parse_quantity(value: object) -> Decimal | None:
    """The value of a quantity, or None when ``value`` is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY_RE.fullmatch(value.strip())
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
