"""String formats of OpenAPI schemas, validated but kept as the exact wire string.

A ``date-time`` typed as :class:`datetime.datetime` would not round-trip (``.000000Z`` and
``+00:00`` come back as ``Z``); a ``byte`` decoded to :class:`bytes` would change its wire form.
These annotated ``str`` types validate the format and keep the original text, so
``validate -> dump`` is exact. :func:`parse_datetime` converts when a program needs the value.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import datetime, timedelta, timezone
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["Base64", "DateTime", "parse_datetime"]

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def _check_datetime(value: str) -> str:
    if not _RFC3339.match(value):
        raise ValueError(f"{value!r} is not an RFC 3339 date-time (e.g. 2024-01-31T12:00:00Z)")
    return value


def _check_base64(value: str) -> str:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"not standard base64 ({err})") from None
    return value


DateTime = Annotated[str, AfterValidator(_check_datetime)]
"""A ``format: date-time`` string (RFC 3339), kept verbatim."""

Base64 = Annotated[str, AfterValidator(_check_base64)]
"""A ``format: byte`` string (standard base64), kept verbatim; decode with ``base64.b64decode``."""


def parse_datetime(value: str) -> datetime:
    """An RFC 3339 date-time string -> an aware :class:`datetime` (UTC for ``Z``)."""
    match = _RFC3339.match(value)
    if not match:
        raise ValueError(f"{value!r} is not an RFC 3339 date-time")
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    if offset in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = -1 if offset[0] == "-" else 1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    return datetime(
        int(year), int(month), int(day), int(hour), int(minute), int(second), micro, tzinfo=tz
    )
