"""The go-spew ``%#v`` text of a ``v1.PodTemplateSpec``, as kube-controller-manager hashes it.

Upstream's ``hashutil.DeepHashObject`` prints the decoded Go struct with go-spew
(``SortKeys``, ``DisableMethods``, the ``#`` flag): every field in declaration order as
``Name:(type)value``, zero or not; a pointer as ``(*T)`` and its target (``<nil>`` when
nil); slices ``[a b]`` and maps ``map[k:v]`` (keys sorted) with their elements untyped; nil
slices and maps as ``<nil>``; strings raw. :data:`._gotypes.TYPES` (generated from the Go
types by ``scripts/gotypes``) gives the fields, their order, JSON names and Go type names.

The value printed is the one the controller holds: the template as the API server stores
it and the informer reads it, both in protobuf. So an empty list or map reads as nil (a
repeated field or map without entries decodes to nil), and a quantity is the one
``resource.ParseQuantity`` makes of its canonical text (:func:`quantity_fields`),
internals included: the ``int64Amount`` or ``inf.Dec`` form, the cached string ``s`` that
ParseQuantity keeps only for some inputs, and ``Format``.

Not reproduced: a non-zero ``metav1.Time`` in the template (the controller holds it in its
host's local time zone, whose whole ``time.Location`` go-spew prints); it is printed here as
a UTC time without a location, so such a template's hash differs from upstream's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from fractions import Fraction
from typing import Any

from controllers.deployment._gotypes import TYPES

__all__ = ["QuantityError", "canonical_quantity", "dump_template", "quantity_fields"]

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_NANO = -9

_DECIMAL_SUFFIXES = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NAMES = {exp: name for name, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_NAMES = {exp: name for name, exp in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")


class QuantityError(ValueError):
    """The text is not a quantity ``resource.ParseQuantity`` accepts."""


class _Go(dict[str, Any]):
    """A struct value keyed by Go field names (not JSON names)."""


def _int32(v: int) -> int:
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """ParseQuantity's scan: (positive, value text, integer digits, fraction digits, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos >= end:
        return positive, text, text[start:], "", ""
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos < end:
        raise QuantityError(text)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and body.isdigit() and body.isascii():
            parsed = int(digits)
            if _INT64_MIN <= parsed <= _INT64_MAX:
                return 10, _int32(parsed), "DecimalExponent"
    raise QuantityError(suffix)


class _Parsed:
    """A Go ``resource.Quantity`` as ParseQuantity leaves it."""

    __slots__ = ("dec", "fmt", "s", "scale", "value")

    def __init__(
        self,
        fmt: str,
        *,
        value: int = 0,
        scale: int = 0,
        dec: tuple[int, int] | None = None,
        s: str = "",
    ) -> None:
        self.value = value
        self.scale = scale
        self.dec = dec  # (unscaled, inf scale): the number is unscaled * 10**-scale
        self.s = s
        self.fmt = fmt

    def exact(self) -> Fraction:
        if self.dec is not None:
            return Fraction(self.dec[0]) / Fraction(10) ** self.dec[1]
        return Fraction(self.value) * Fraction(10) ** self.scale


def _round_up(unscaled: int, scale: int, to: int) -> int:
    """inf.Dec rounding of unscaled*10**-scale to scale ``to``, away from zero."""
    if scale <= to:
        return unscaled * 10 ** (to - scale)
    q, r = divmod(abs(unscaled), 10 ** (scale - to))
    if r:
        q += 1
    return q if unscaled >= 0 else -q


def _parse(text: str) -> _Parsed:
    """``resource.ParseQuantity``."""
    if not text:
        raise QuantityError(text)
    if text == "0":
        return _Parsed("DecimalSI", s=text)
    positive, value, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    precision = 0
    scale = 0
    mantissa = 1
    if fmt == "BinarySI":
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= _INT64_MAX:
                if not positive:
                    result = -result
                cached = False
                if fmt == "BinarySI":
                    cached = exponent % 10 == 0 and int(shifted) & 7 != 0
                else:
                    cached = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return _Parsed(fmt, value=result, scale=scale, s=text if cached else "")
    # The inf.Dec path.
    digits = value.lstrip("+-")
    whole, _, frac = digits.partition(".")
    unscaled = int((whole + frac) or "0")
    dec_scale = len(frac)
    if value.startswith("-"):
        unscaled = -unscaled
    if base == 10:
        dec_scale -= exponent
    else:
        unscaled <<= exponent
    negative = unscaled < 0
    unscaled = abs(unscaled)
    if unscaled != 0:
        unscaled = _round_up(unscaled, dec_scale, -_NANO)
        dec_scale = -_NANO
    if fmt == "BinarySI" and Fraction(unscaled, 10**dec_scale) > _INT64_MAX:
        unscaled, dec_scale = _INT64_MAX, 0
    if fmt == "BinarySI" and 0 < Fraction(unscaled, 10**dec_scale) < 1:
        fmt = "DecimalSI"
    if negative:
        unscaled = -unscaled
    return _Parsed(fmt, dec=(unscaled, dec_scale))


def _strip(n: int, factor: int) -> tuple[int, int]:
    times = 0
    while n % factor == 0:
        n //= factor
        times += 1
    return n, times


def _canonical(q: _Parsed) -> str:
    """``Quantity.String``: the cached text, else the canonical form."""
    if q.s:
        return q.s
    v = q.exact()
    if v == 0:
        return "0"
    fmt = q.fmt
    if fmt == "BinarySI":
        if -1024 < v < 1024 or v.denominator != 1:
            fmt = "DecimalSI"
    elif fmt != "DecimalSI":
        fmt = "DecimalExponent"
    if fmt == "BinarySI":
        amount, times = _strip(int(v), 1024)
        return f"{amount}{_BINARY_NAMES.get(times * 10, '')}"
    # v = m * 10**e with m free of factors of ten, e lowered to a multiple of three.
    m, e = v.numerator, 0
    den = v.denominator
    while den != 1:
        m *= 10
        e -= 1
        den_q, den_r = divmod(m, den)
        if den_r == 0:
            m, den = den_q, 1
    m, times = _strip(m, 10)
    e += times
    low = e - e % 3
    m *= 10 ** (e - low)
    if fmt == "DecimalSI":
        suffix = _DECIMAL_NAMES.get(low, "")
    else:
        suffix = f"e{low}" if low else ""
    return f"{m}{suffix}"


def canonical_quantity(text: str) -> str:
    """The canonical text of the quantity ``text`` (``Quantity.String`` of ParseQuantity's
    result, as the API server stores and returns it); :class:`QuantityError` when invalid."""
    return _canonical(_parse(text.strip()))


def _words(n: int) -> list[int] | None:
    words = []
    while n:
        words.append(n & 0xFFFFFFFFFFFFFFFF)
        n >>= 64
    return words or None


def quantity_fields(text: Any) -> _Go:
    """The Go fields of the ``resource.Quantity`` the controller holds for ``text`` (as
    returned by the API; None: the zero quantity, which protobuf carries as ``"0"``)."""
    q = _parse(canonical_quantity(str(text)) if text not in (None, "") else "0")
    dec = None
    if q.dec is not None:
        unscaled, scale = q.dec
        dec = _Go(
            unscaled=_Go(neg=unscaled < 0, abs=_words(abs(unscaled))),
            scale=scale,
        )
    return _Go(
        i=_Go(value=q.value, scale=q.scale),
        d=_Go(Dec=dec),
        s=q.s,
        Format=q.fmt,
    )


_UNIX_TO_INTERNAL = (1969 * 365 + 1969 // 4 - 1969 // 100 + 1969 // 400) * 86400


def _time_fields(value: Any) -> _Go:
    """``metav1.Time``: zero for null; otherwise a UTC time (see the module docstring)."""
    if not value:
        return _Go(Time=_Go(wall=0, ext=0, loc=None))
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    seconds = int(moment.timestamp())
    return _Go(Time=_Go(wall=moment.microsecond * 1000, ext=seconds + _UNIX_TO_INTERNAL, loc=None))


def _int_or_string(value: Any) -> _Go:
    if isinstance(value, str):
        return _Go(Type=1, IntVal=0, StrVal=value)
    return _Go(Type=0, IntVal=int(value or 0), StrVal="")


def _fields_v1(value: Any) -> _Go | None:
    if value is None:
        return None
    raw = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return _Go(Raw=list(raw.encode()))


_SPECIAL: dict[str, Callable[[Any], Any]] = {
    "resource.Quantity": quantity_fields,
    "v1.Time": _time_fields,
    "intstr.IntOrString": _int_or_string,
    "v1.FieldsV1": _fields_v1,
}


def _write(out: list[str], name: str, value: Any, typed: bool) -> None:
    kind, elem, key, fields = TYPES[name]
    special = _SPECIAL.get(name)
    if special is not None and not isinstance(value, _Go):
        value = special(value)
    if kind == "ptr":
        if value is None:
            out.append(f"({name})<nil>" if typed else "<nil>")
            return
        out.append(f"({name})" if typed else "<*>")
        _write(out, elem, value, False)
        return
    if typed:
        out.append(f"({name})")
    if kind == "struct":
        go_names = isinstance(value, _Go)
        src = value if isinstance(value, dict) else {}
        out.append("{")
        for index, (go_name, json_name, inline, type_name) in enumerate(fields):
            if index:
                out.append(" ")
            out.append(go_name)
            out.append(":")
            if go_names:
                item = src.get(go_name)
            elif inline:
                item = src
            else:
                item = src.get(json_name)
            _write(out, type_name, item, True)
        out.append("}")
    elif kind in ("slice", "map"):
        if not value:
            out.append("<nil>")
            return
        out.append("[" if kind == "slice" else "map[")
        entries = (
            [(k, value[k]) for k in sorted(value)] if kind == "map" else [(None, v) for v in value]
        )
        for index, (k, item) in enumerate(entries):
            if index:
                out.append(" ")
            if k is not None:  # a map's key, untyped as its value
                _write(out, key, k, False)
                out.append(":")
            _write(out, elem, item, False)
        out.append("]")
    elif kind == "string":
        if value:
            out.append(str(value))
    elif kind == "bool":
        out.append("true" if value else "false")
    else:
        out.append(str(int(value or 0)))


def dump_template(template: Any) -> str:
    """go-spew's ``%#v`` of the ``v1.PodTemplateSpec`` the controller holds for ``template``
    (a dict as the API returns it); :class:`QuantityError` for an invalid quantity."""
    out: list[str] = []
    _write(out, "v1.PodTemplateSpec", template or {}, True)
    return "".join(out)
