"""What kube-apiserver's apiextensions does to a custom resource on every write: prune, default, validate.

The embedded API server compiles each served CRD version's ``openAPIV3Schema`` (a structural
schema) once with :func:`compile_schema`, then, for every create/update/patch of a custom
resource, calls :func:`prune`, :func:`apply_defaults` and :func:`validate` on the plain JSON dict
(in that order, like kube-apiserver's decode -> default -> validate pipeline).

Contracts
---------
* ``compile_schema(None)`` yields a schema that preserves everything and validates nothing (a
  CRD version without a schema, like ``x-kubernetes-preserve-unknown-fields`` at the root). Any
  mapping, even ``{}``, is taken literally as a structural schema. The input mapping is not
  retained: defaults are copied at compile time, regexes and property maps are precomputed.
* :func:`prune` and :func:`apply_defaults` **mutate ``obj`` in place and return the same dict**.
* :func:`validate` never mutates; it returns ``[]`` for a valid object, else
  :class:`~kube_runtime.envtest.server.validation.Cause` items with upstream ``StatusCause``
  field/reason/message, in a deterministic order (data key order), exact duplicates removed.

Pruning (``pruning.Prune`` with ``root=true``, then ``PruneNonNullableNullsWithoutDefaults``,
then ``objectmeta.Coerce``)
* Unknown fields are dropped recursively. ``apiVersion``, ``kind`` and ``metadata`` at the root,
  and in objects marked ``x-kubernetes-embedded-resource``, are kept as they are (root
  ``metadata`` is the server's business; an embedded ``metadata`` loses keys that are not
  ObjectMeta fields, and a null ``creationTimestamp``).
* ``x-kubernetes-preserve-unknown-fields: true`` keeps unknown keys at that level and in the
  objects of its array items; specified properties below are still pruned by their own schema.
* ``additionalProperties`` (a schema) applies to every key not in ``properties``.
  ``additionalProperties: true`` keeps the keys but prunes their values as schema-less.
* A ``null`` whose schema is not ``nullable`` and has no ``default`` is removed.

Defaulting (``defaulting.Default``)
* A property's ``default`` is set (deep-copied) when the key is absent, or when it is ``null``
  and the property is not ``nullable``; likewise for non-nullable ``null`` map values
  (``additionalProperties``) and array items. Defaults are applied before recursing, so defaults
  nested inside a defaulted value apply too.

Validation (kube-openapi's ``validate.SchemaValidator`` as apiextensions configures it,
``objectmeta.Validate`` for embedded resources, ``listtype.ValidateListSetsAndMaps``)
* type (object/array/string/integer/number/boolean; an integer must have no fraction;
  ``x-kubernetes-int-or-string`` accepts integer or string), ``nullable``, ``required``, ``enum``,
  ``minimum``/``maximum`` (+ ``exclusive*``), ``multipleOf``, ``minLength``/``maxLength``,
  ``pattern`` (Go RE2 semantics approximated with Python ``re``: ASCII classes, ``$`` = end of
  text), string ``format`` for every format CRDs may use (``date-time``, ``date``, ``duration``,
  ``byte``, ``uuid*``, ``ipv4``, ``ipv6``, ``cidr``, ``mac``, ``hostname``, ``email``, ``uri``,
  ``quantity``, ``k8s-short-name``, ...; unsupported formats are ignored as upstream strips them;
  ``int32``/``int64`` are not range-checked, as upstream), ``minItems``/``maxItems``,
  ``uniqueItems``, ``minProperties``/``maxProperties``, ``additionalProperties: false``,
  ``x-kubernetes-list-type`` ``set``/``map`` uniqueness (``x-kubernetes-list-map-keys``),
  ``allOf``/``anyOf``/``oneOf``/``not``, ``apiVersion``/``kind`` of embedded resources.
* Root ``metadata`` is only checked to be an object and against the schema's ``name`` /
  ``generateName`` constraints; ObjectMeta itself is validated by the server.
* Field paths are upstream's: ``spec.replicas``, ``spec.containers[0].name``, map values as
  ``spec.labels.key``. Messages are upstream's ``ErrorBody()``, e.g.
  ``Invalid value: "string": spec.replicas in body must be of type integer: "string"``,
  ``Required value``, ``Unsupported value: "x": supported values: "a", "b"``.

Upstream quirks kept on purpose: a JSON array passes the type check of a string that has a
format; ``null`` never satisfies an ``enum``; a ``min``/``maxProperties`` failure stops checking
that object's fields; integers are compared with ``int(minimum)``/``int(maximum)``.

CEL ``x-kubernetes-validations`` rules are evaluated after the schema (:mod:`.celrules`).

Not implemented: validation ratcheting on update, full
ObjectMeta validation of embedded resources. Deliberate deviations from upstream quirks:
``anyOf``/``oneOf``/``allOf``/``not`` failures carry the node's path as field (upstream reports
``<nil>``); compound values in messages are rendered as JSON (upstream prints Go syntax); enum
members match by JSON equality (Go converts a float to the enum's integer type first).
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from kube_runtime.client._apifacts import (
    DUPLICATE,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    TYPE_INVALID,
    go_float,
    go_json,
    go_quote,
    go_value,
)
from kube_runtime.envtest.server import celrules
from kube_runtime.envtest.server.validation import Cause

__all__ = ["CompiledSchema", "apply_defaults", "compile_schema", "go_float", "prune", "validate"]

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})
# JSON field names of metav1.ObjectMeta; an embedded resource's metadata keeps only these.
_OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_MISSING: Final = object()
_PY_TYPES: Final[dict[str, frozenset[type]]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "object": frozenset({dict}),
    "array": frozenset({list}),
}
_NON_NULL_JSON_TYPES: Final[frozenset[type]] = frozenset({str, int, float, bool, dict, list})
_ALL_JSON_TYPES: Final[frozenset[type]] = _NON_NULL_JSON_TYPES | {type(None)}

# Value kinds, as kube-openapi sees decoded JSON.
_NULL, _BOOL, _INT, _FLOAT, _STR, _LIST, _MAP, _OTHER = range(8)
_JSON_TYPE: Final = ("null", "boolean", "integer", "number", "string", "array", "object", "unknown")
_DATA_FORMAT: Final = ("", "", "int64", "float64", "", "", "", "")


# --------------------------------------------------------------------------------------------
# Go-compatible rendering of values in messages
# --------------------------------------------------------------------------------------------


# Go's renderings (%q, %v of a float, encoding/json, field.Error's value: go_quote, go_float,
# go_json, go_value) are kube-apiserver facts shared with validation and the fake client, in
# kube_runtime.client._apifacts; go_float stays importable from here.


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause(path, INVALID, f"Invalid value: {go_value(value)}: {detail}")


def _type_invalid(path: str, expected: str, got: str) -> Cause:
    q = go_quote(got)
    return Cause(
        path, TYPE_INVALID, f"Invalid value: {q}: {path} in body must be of type {expected}: {q}"
    )


def _composite(path: str, detail: str) -> Cause:
    return Cause(path, INVALID, f'Invalid value: "": {detail}')


def _duplicate(path: str, value: Any) -> Cause:
    return Cause(path, DUPLICATE, f"Duplicate value: {go_value(value)}")


# --------------------------------------------------------------------------------------------
# String formats (kube-openapi strfmt.Default, as far as apiextensions keeps them)
# --------------------------------------------------------------------------------------------

# Formats apiextensions keeps for string schemas ('-' removed); every other format is ignored.
_SUPPORTED_STRING_FORMATS: Final = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "quantity",
        "k8sshortname",
        "k8slongname",
    }
)


class _LazyPattern:
    """A regular expression compiled on its first use: the format checkers' ~25 patterns cost
    ~4 ms of CPU to compile, which importing the module (every embedded cluster does) no longer
    pays; a schema with a ``format`` compiles the ones it checks. The methods are
    :class:`re.Pattern`'s."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def _get(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return compiled

    def fullmatch(self, string: str) -> re.Match[str] | None:
        return self._get().fullmatch(string)

    def match(self, string: str) -> re.Match[str] | None:
        return self._get().match(string)

    def sub(self, repl: str, string: str) -> str:
        return self._get().sub(repl, string)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self._get().finditer(string)


_A = re.ASCII
_RX_UUID = _LazyPattern(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", _A | re.I
)
_RX_UUID3 = _LazyPattern(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}", _A | re.I
)
_RX_UUID4 = _LazyPattern(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}", _A | re.I
)
_RX_UUID5 = _LazyPattern(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}", _A | re.I
)
_RX_DATE = _LazyPattern(r"(\d{4})-(\d{2})-(\d{2})", _A)
_RX_TIME = _LazyPattern(r"(\d{2}):(\d{2}):(\d{2})(.\d+)?(z|[+-]\d{2}:\d{2})", _A)
_RX_BASE64 = _LazyPattern(
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})", _A
)
_RX_GO_DURATION = _LazyPattern(
    r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+|[-+]?0", _A
)
_RX_SCALA_DURATION = _LazyPattern(r"\s*(?:\d+\s*[A-Za-z\u00b5]+\s*)+", _A)
_RX_SCALA_PART = _LazyPattern(r"(\d+)\s*([A-Za-z\u00b5]+)", _A)
_SCALA_UNITS: Final = (
    ("ns", "nano"),
    ("us", "\u00b5s", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_RX_QUANTITY = _LazyPattern(
    r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?", _A
)
_RX_HEXCOLOR = _LazyPattern(r"#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})", _A)
_RGB = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RX_RGBCOLOR = _LazyPattern(rf"rgb\({_RGB},{_RGB},{_RGB}\)", _A)
_RX_SSN = _LazyPattern(r"\d{3}[- ]?\d{2}[- ]?\d{4}", _A)
_RX_CREDITCARD = _LazyPattern(
    r"(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})",
    _A,
)
_RX_MAC_SEP = _LazyPattern(r"[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2})*", _A)
_RX_MAC_DOT = _LazyPattern(r"[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4})*", _A)
_HN = r"[^\W_]"  # Go's [a-zA-Z0-9\p{S}\p{L}] without the symbol classes Python's re lacks
_HNH = r"(?:[^\W_]|-)"
_RX_HOSTNAME = _LazyPattern(
    rf"{_HN}(?:-?{_HN}{{0,62}})?|(?:{_HN}(?:{_HNH}{{0,61}}{_HN})?\.)+{_HN}(?:-?{_HN}){{1,62}}"
)
_RX_EMAIL_LOCAL = r"(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\"(?:[^\"\\]|\\.)*\")"
_RX_EMAIL_DOMAIN = (
    r"(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\[[^\[\]\\]*\])"
)
_RX_EMAIL = _LazyPattern(
    rf"(?:[^<>@]*<{_RX_EMAIL_LOCAL}@{_RX_EMAIL_DOMAIN}>|{_RX_EMAIL_LOCAL}@{_RX_EMAIL_DOMAIN})\s*"
)
_RX_URI_SCHEME = _LazyPattern(r"[a-zA-Z][a-zA-Z0-9+.-]*:", _A)
_RX_DNS1123_LABEL = _LazyPattern(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?", _A)
_RX_DNS1123_SUBDOMAIN = _LazyPattern(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*", _A
)
_RX_DNS1035_LABEL = _LazyPattern(r"[a-z](?:[-a-z0-9]*[a-z0-9])?", _A)
_RX_NOT_DIGIT = _LazyPattern(r"[^0-9]+")
_RX_SPACE_DASH = _LazyPattern(r"[\s-]+")


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _is_date(s: str) -> bool:
    m = _RX_DATE.fullmatch(s)
    if m is None:
        return False
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    return 1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)


def _is_datetime(s: str) -> bool:
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _RX_TIME.fullmatch(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def _is_duration(s: str) -> bool:
    if _RX_GO_DURATION.fullmatch(s):
        return True
    if not _RX_SCALA_DURATION.fullmatch(s):
        return False
    for m in _RX_SCALA_PART.finditer(s):
        unit = m[2].strip().lower()
        for variants in _SCALA_UNITS:
            last = len(variants) - 1
            for i, variant in enumerate(variants):
                if (i == last and unit.startswith(variant)) or variant == unit:
                    return True
    return False


def _is_ip(s: str, marker: str) -> bool:
    if marker not in s:
        return False
    try:
        ipaddress.ip_address(s)
    except ValueError:
        return False
    return True


def _is_cidr(s: str) -> bool:
    _addr, sep, bits = s.partition("/")
    if not sep or not bits.isdigit() or not bits.isascii():
        return False
    try:
        ipaddress.ip_network(s, strict=False)
    except ValueError:
        return False
    return True


def _is_mac(s: str) -> bool:
    if _RX_MAC_SEP.fullmatch(s):
        return (len(s) + 1) // 3 in (6, 8, 20)
    if _RX_MAC_DOT.fullmatch(s):
        return (len(s) + 1) // 5 * 2 in (6, 8, 20)
    return False


def _is_uri(s: str) -> bool:
    if not s or any(ord(c) < 0x20 or ord(c) == 0x7F for c in s):
        return False
    return s == "*" or s.startswith("/") or _RX_URI_SCHEME.match(s) is not None


def _is_hostname(s: str) -> bool:
    if not _RX_HOSTNAME.fullmatch(s) or len(s.encode()) > 255:
        return False
    return all(len(p.encode()) <= 63 for p in s.split("."))


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _is_creditcard(s: str) -> bool:
    digits = _RX_NOT_DIGIT.sub("", s)
    return _RX_CREDITCARD.fullmatch(digits) is not None and _luhn(digits)


def _is_isbn10(s: str) -> bool:
    s = _RX_SPACE_DASH.sub("", s)
    if not re.fullmatch(r"[0-9]{9}X|[0-9]{10}", s, _A):
        return False
    total = sum((i + 1) * int(c) for i, c in enumerate(s[:9]))
    total += 100 if s[9] == "X" else 10 * int(s[9])
    return total % 11 == 0


def _is_isbn13(s: str) -> bool:
    s = _RX_SPACE_DASH.sub("", s)
    if not re.fullmatch(r"[0-9]{13}", s, _A):
        return False
    total = sum(int(c) * (3 if i % 2 else 1) for i, c in enumerate(s[:12]))
    return int(s[12]) == (10 - total % 10) % 10


def _full(rx: _LazyPattern) -> Callable[[str], bool]:
    return lambda s: rx.fullmatch(s) is not None


def _max_len(rx: _LazyPattern, n: int) -> Callable[[str], bool]:
    return lambda s: len(s) <= n and rx.fullmatch(s) is not None


# Checkers by normalized format name; "password" accepts anything and so has none.
_FORMAT_CHECKS: Final[dict[str, Callable[[str], bool]]] = {
    "bsonobjectid": lambda s: len(s) == 24 and all(c in "0123456789abcdefABCDEF" for c in s),
    "uri": _is_uri,
    "email": _full(_RX_EMAIL),
    "hostname": _is_hostname,
    "ipv4": lambda s: _is_ip(s, "."),
    "ipv6": lambda s: _is_ip(s, ":"),
    "cidr": _is_cidr,
    "mac": _is_mac,
    "uuid": _full(_RX_UUID),
    "uuid3": _full(_RX_UUID3),
    "uuid4": _full(_RX_UUID4),
    "uuid5": _full(_RX_UUID5),
    "isbn": lambda s: _is_isbn10(s) or _is_isbn13(s),
    "isbn10": _is_isbn10,
    "isbn13": _is_isbn13,
    "creditcard": _is_creditcard,
    "ssn": lambda s: len(s) == 11 and _RX_SSN.fullmatch(s) is not None,
    "hexcolor": _full(_RX_HEXCOLOR),
    "rgbcolor": _full(_RX_RGBCOLOR),
    "byte": _full(_RX_BASE64),
    "date": _is_date,
    "duration": _is_duration,
    "datetime": _is_datetime,
    "quantity": _full(_RX_QUANTITY),
    "k8sshortname": _max_len(_RX_DNS1123_LABEL, 63),
    "k8slongname": _max_len(_RX_DNS1123_SUBDOMAIN, 253),
}


# --------------------------------------------------------------------------------------------
# Go RE2 patterns -> Python re
# --------------------------------------------------------------------------------------------

_POSIX_CLASSES: Final = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


def _translate_pattern(pattern: str) -> str:
    """Rewrite the RE2 spellings Python's re reads differently: ``$``/``\\z`` end of text, POSIX classes."""
    multiline = pattern.startswith("(?") and "m" in pattern[2 : pattern.find(")")]
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append("\\Z" if pattern[i + 1] == "z" else pattern[i : i + 2])
            i += 2
        elif c == "[":
            j = i + 1
            cls = ["["]
            if j < n and pattern[j] == "^":
                cls.append("^")
                j += 1
            if j < n and pattern[j] == "]":
                cls.append("\\]")
                j += 1
            while j < n and pattern[j] != "]":
                if pattern[j] == "\\" and j + 1 < n:
                    cls.append(pattern[j : j + 2])
                    j += 2
                    continue
                if pattern.startswith("[:", j):
                    end = pattern.find(":]", j + 2)
                    name = pattern[j + 2 : end] if end > 0 else ""
                    if name in _POSIX_CLASSES:
                        cls.append(_POSIX_CLASSES[name])
                        j = end + 2
                        continue
                cls.append("\\[" if pattern[j] == "[" else pattern[j])
                j += 1
            cls.append("]")
            out.append("".join(cls))
            i = j + 1
        elif c == "$" and not multiline:
            out.append("\\Z")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _compile_pattern(pattern: str) -> tuple[re.Pattern[str] | None, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(_translate_pattern(pattern), re.ASCII), ""
    except re.error as exc:
        return None, str(exc)


# --------------------------------------------------------------------------------------------
# Compiled schema nodes
# --------------------------------------------------------------------------------------------


class _Node:
    """One schema node with everything the three walks need precomputed."""

    __slots__ = (
        "additional",
        "additional_forbidden",
        "all_of",
        "any_of",
        "check_array",
        "check_number",
        "check_string",
        "check_type",
        "combinators",
        "default",
        "default_props",
        "defaults_below",
        "drop_null",
        "embedded",
        "enum_detail",
        "enum_keys",
        "exclusive_maximum",
        "exclusive_minimum",
        "fast_types",
        "format",
        "format_fn",
        "has_additional",
        "has_default",
        "items",
        "list_map_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "needs_validate",
        "not_",
        "nullable",
        "numeric_type",
        "one_of",
        "pattern",
        "pattern_error",
        "pattern_re",
        "preserve_unknown",
        "props",
        "required",
        "type_label",
        "types",
        "unique_items",
        "vprops",
    )

    def __init__(self, s: Mapping[str, Any]) -> None:
        t = s.get("type")
        int_or_string = bool(s.get("x-kubernetes-int-or-string"))
        if int_or_string:
            self.types: frozenset[str] = frozenset({"integer", "string"})
            self.type_label = "integer,string"
        elif t:
            self.types = frozenset({str(t)})
            self.type_label = str(t)
        else:
            self.types = frozenset()
            self.type_label = ""
        self.numeric_type = "integer" in self.types or "number" in self.types
        self.nullable = bool(s.get("nullable"))
        self.format, self.format_fn = _effective_format(
            str(s.get("format") or ""), "" if int_or_string else str(t or "")
        )
        self.check_type = bool(self.types) or bool(self.format)

        self.has_default = s.get("default") is not None
        self.default: Any = _copy_json(s["default"]) if self.has_default else None
        self.drop_null = not self.nullable and not self.has_default
        self.preserve_unknown = bool(s.get("x-kubernetes-preserve-unknown-fields"))
        self.embedded = bool(s.get("x-kubernetes-embedded-resource"))

        self.props: dict[str, _Node] = {
            str(k): _Node(v) for k, v in (s.get("properties") or {}).items()
        }
        self.vprops = self.props
        add = s.get("additionalProperties")
        self.has_additional = isinstance(add, Mapping) or add is True
        self.additional: _Node | None = _Node(add) if isinstance(add, Mapping) else None
        self.additional_forbidden = add is False
        items = s.get("items")
        self.items: _Node | None = _Node(items) if isinstance(items, Mapping) else None
        self.required: tuple[str, ...] = tuple(str(r) for r in s.get("required") or ())

        enum = s.get("enum")
        if enum:
            self.enum_keys: frozenset[Any] | None = frozenset(
                _enum_key(v) for v in enum if v is not None
            )
            values = [v if isinstance(v, str) else go_json(v) for v in enum]
            self.enum_detail = "supported values: " + ", ".join(go_quote(v) for v in values)
        else:
            self.enum_keys = None
            self.enum_detail = ""

        self.minimum = _number(s.get("minimum"))
        self.maximum = _number(s.get("maximum"))
        self.exclusive_minimum = bool(s.get("exclusiveMinimum"))
        self.exclusive_maximum = bool(s.get("exclusiveMaximum"))
        self.multiple_of = _number(s.get("multipleOf"))
        self.check_number = (
            self.minimum is not None or self.maximum is not None or self.multiple_of is not None
        )

        self.min_length = _int(s.get("minLength"))
        self.max_length = _int(s.get("maxLength"))
        pattern = s.get("pattern")
        self.pattern: str | None = str(pattern) if pattern else None
        self.pattern_re, self.pattern_error = (
            _compile_pattern(self.pattern) if self.pattern else (None, "")
        )
        self.check_string = (
            self.min_length is not None or self.max_length is not None or self.pattern is not None
        )

        self.min_items = _int(s.get("minItems"))
        self.max_items = _int(s.get("maxItems"))
        self.unique_items = bool(s.get("uniqueItems"))
        list_type = s.get("x-kubernetes-list-type")
        self.list_type = list_type if list_type in ("set", "map") else None
        self.list_map_keys: tuple[str, ...] = tuple(
            str(k) for k in s.get("x-kubernetes-list-map-keys") or ()
        )
        self.check_array = (
            self.min_items is not None
            or self.max_items is not None
            or self.unique_items
            or self.list_type is not None
        )

        self.min_properties = _int(s.get("minProperties"))
        self.max_properties = _int(s.get("maxProperties"))

        self.all_of = tuple(_Node(x) for x in s.get("allOf") or ())
        self.any_of = tuple(_Node(x) for x in s.get("anyOf") or ())
        self.one_of = tuple(_Node(x) for x in s.get("oneOf") or ())
        not_ = s.get("not")
        self.not_: _Node | None = _Node(not_) if isinstance(not_, Mapping) else None
        self.combinators = bool(self.all_of or self.any_of or self.one_of or self.not_ is not None)

        self.default_props: tuple[tuple[str, _Node], ...] = tuple(
            (k, c) for k, c in self.props.items() if c.has_default
        )
        self.defaults_below: bool = (
            bool(self.default_props)
            or any(c.defaults_below for c in self.props.values())
            or (
                self.additional is not None
                and (self.additional.has_default or self.additional.defaults_below)
            )
            or (self.items is not None and (self.items.has_default or self.items.defaults_below))
        )
        # Checks on the value beyond its type, and checks below this node.
        constrained = bool(
            self.check_number
            or self.check_string
            or self.check_array
            or self.min_properties is not None
            or self.max_properties is not None
            or self.additional_forbidden
            or self.required
        )
        children_validate = bool(
            any(c.needs_validate for c in self.props.values())
            or (self.additional is not None and self.additional.needs_validate)
            or (self.items is not None and self.items.needs_validate)
        )
        self.needs_validate: bool = bool(
            self.check_type
            or self.enum_keys is not None
            or constrained
            or self.combinators
            or self.embedded
            or children_validate
        )
        self.fast_types = self._fast_types(constrained or children_validate)

    def _fast_types(self, checks_values: bool) -> frozenset[type]:
        """Python types of values for which validating against this node cannot fail (skip the call).

        ``checks_values``: the node constrains values beyond their type, or a child needs
        validating.
        """
        if not self.needs_validate:
            return _ALL_JSON_TYPES
        if (
            checks_values
            or self.format_fn is not None
            or self.enum_keys is not None
            or self.embedded
            or self.all_of
            or self.one_of
            or self.not_ is not None
        ):
            return frozenset()
        ok = _NON_NULL_JSON_TYPES
        if self.types:
            ok = frozenset().union(*(_PY_TYPES[t] for t in self.types if t in _PY_TYPES))
        if self.any_of:
            ok = ok & frozenset().union(*(b.fast_types - {type(None)} for b in self.any_of))
        return ok


def _effective_format(fmt: str, single_type: str) -> tuple[str, Callable[[str], bool] | None]:
    """The format apiextensions leaves in place (StripUnsupportedFormatsPostProcess) and its checker."""
    if not fmt:
        return "", None
    if single_type in ("", "string"):
        normalized = fmt.replace("-", "")
        if normalized not in _SUPPORTED_STRING_FORMATS:
            return "", None
        return fmt, _FORMAT_CHECKS.get(normalized)
    if single_type == "integer" and fmt in ("int32", "int64"):
        return fmt, None
    if single_type == "number" and fmt in ("float", "double"):
        return fmt, None
    return "", None


def _number(v: Any) -> float | None:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return int(v)


def _copy_json(v: Any) -> Any:
    t = type(v)
    if t is dict or isinstance(v, Mapping):
        return {k: _copy_json(x) for k, x in v.items()}
    if t is list or t is tuple:
        return [_copy_json(x) for x in v]
    return v


def _canonical(v: Any) -> str:
    """JSON text as Go's json.Marshal gives it (integral floats print like integers)."""
    return go_json(v)


def _typed_json(v: Any) -> str:
    """JSON text that keeps integers, floats and booleans apart (reflect.DeepEqual's view)."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def _enum_key(v: Any) -> Any:
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", v)
    if isinstance(v, str):
        return ("s", v)
    return ("j", _canonical(v))


def _set_key(v: Any) -> Any:
    """Key under which listtype's uniqueness check tells values apart (int64 vs float64 as in Go)."""
    t = type(v)
    if t is str:
        return v
    if v is None:
        return ("null",)
    if t is bool:
        return ("b", v)
    if t is int:
        return ("i", v)
    if t is float:
        return ("f", v)
    return ("j", _canonical(v))


class CompiledSchema:
    """A CRD version's structural schema, compiled once; pass it to prune/apply_defaults/validate."""

    __slots__ = ("_cel", "_root")

    def __init__(self, root: _Node | None, cel: celrules.CelNode | None = None) -> None:
        self._root = root
        self._cel = cel

    @property
    def preserves_everything(self) -> bool:
        """True when built from no schema at all: nothing is pruned, defaulted or validated."""
        return self._root is None

    def __repr__(self) -> str:
        if self._root is None:
            return "CompiledSchema(None)"
        return f"CompiledSchema(properties={sorted(self._root.props)})"


def compile_schema(openapi_v3_schema: Mapping[str, Any] | None) -> CompiledSchema:
    """Precompile a CRD version's ``openAPIV3Schema`` (None: preserve everything, validate nothing)."""
    if openapi_v3_schema is None:
        return CompiledSchema(None)
    root = _Node(openapi_v3_schema)
    meta = (openapi_v3_schema.get("properties") or {}).get("metadata")
    if isinstance(meta, Mapping):
        # Validation sees root metadata only as an object with optional name/generateName rules.
        restricted: dict[str, Any] = {k: meta[k] for k in ("type", "nullable") if k in meta}
        meta_props = meta.get("properties") or {}
        restricted["properties"] = {
            k: meta_props[k] for k in ("name", "generateName") if k in meta_props
        }
        root.vprops = {**root.props, "metadata": _Node(restricted)}
    return CompiledSchema(root, celrules.compile_validator(openapi_v3_schema))


# --------------------------------------------------------------------------------------------
# Pruning
# --------------------------------------------------------------------------------------------


def prune(obj: dict[str, Any], schema: CompiledSchema) -> dict[str, Any]:
    """Drop fields the schema does not specify, and non-nullable nulls without default; in place.

    Returns ``obj`` itself (mutated).
    """
    root = schema._root
    if root is None or type(obj) is not dict:
        return obj
    if root.preserve_unknown:
        _prune_map(obj, root, True, True)
    else:
        _prune_map(obj, root, False, True)
    return obj


def _prune(x: Any, s: _Node | None) -> None:
    if s is not None and s.preserve_unknown:
        _skip_prune(x, s)
        return
    t = type(x)
    if t is dict:
        if s is None:
            x.clear()
        else:
            _prune_map(x, s, False, False)
    elif t is list:
        items = s.items if s is not None else None
        for e in x:
            if type(e) is dict or type(e) is list:
                _prune(e, items)


def _skip_prune(x: Any, s: _Node | None) -> None:
    if s is None:
        return
    t = type(x)
    if t is dict:
        _prune_map(x, s, True, False)
    elif t is list:
        items = s.items
        if items is not None:
            for e in x:
                if type(e) is dict or type(e) is list:
                    _skip_prune(e, items)


def _prune_map(x: dict[str, Any], s: _Node, keep_unknown: bool, root: bool) -> None:
    props = s.props
    has_additional = s.has_additional
    additional = s.additional
    skip_meta = root or s.embedded
    doomed: list[str] | None = None
    for k, v in x.items():
        c = props.get(k)
        known = c is not None
        if not known and has_additional:
            c = additional
            known = True
        if v is None:
            if (c is not None and c.drop_null) or not (
                known or keep_unknown or (skip_meta and k in _META_FIELDS)
            ):
                doomed = doomed or []
                doomed.append(k)
            continue
        if skip_meta and k in _META_FIELDS:
            if c is not None and (type(v) is dict or type(v) is list):
                _prune_nulls(v, c)
            if k == "metadata" and s.embedded and not root and type(v) is dict:
                _coerce_object_meta(v)
            continue
        if known:
            t = type(v)
            if t is dict or t is list:
                _prune(v, c)
        elif not keep_unknown:
            doomed = doomed or []
            doomed.append(k)
    if doomed:
        for k in doomed:
            del x[k]


def _prune_nulls(x: Any, s: _Node) -> None:
    if type(x) is dict:
        doomed = [
            k
            for k, v in x.items()
            if v is None and (c := s.props.get(k, s.additional)) is not None and c.drop_null
        ]
        for k in doomed:
            del x[k]
        for k, v in x.items():
            c = s.props.get(k, s.additional)
            if c is not None and (type(v) is dict or type(v) is list):
                _prune_nulls(v, c)
    elif type(x) is list and s.items is not None:
        for e in x:
            if type(e) is dict or type(e) is list:
                _prune_nulls(e, s.items)


def _coerce_object_meta(meta: dict[str, Any]) -> None:
    for k in [k for k in meta if k not in _OBJECT_META_FIELDS]:
        del meta[k]
    if "creationTimestamp" in meta and meta["creationTimestamp"] is None:
        del meta["creationTimestamp"]


# --------------------------------------------------------------------------------------------
# Defaulting
# --------------------------------------------------------------------------------------------


def apply_defaults(obj: dict[str, Any], schema: CompiledSchema) -> dict[str, Any]:
    """Fill in schema ``default`` values (deep copies) where absent or a non-nullable null; in place.

    Returns ``obj`` itself (mutated).
    """
    root = schema._root
    if root is not None and root.defaults_below and type(obj) is dict:
        _default(obj, root)
    return obj


def _default(x: Any, s: _Node) -> None:
    if type(x) is dict:
        for k, d in s.default_props:
            cur = x.get(k, _MISSING)
            if cur is _MISSING or (cur is None and not d.nullable):
                x[k] = _copy_json(d.default)
        props = s.props
        additional = s.additional
        for k, v in x.items():
            c = props.get(k)
            if c is None:
                if additional is None:
                    continue
                c = additional
                if v is None and not c.nullable and c.has_default:
                    v = x[k] = _copy_json(c.default)
            if c.defaults_below and (type(v) is dict or type(v) is list):
                _default(v, c)
    elif type(x) is list:
        items = s.items
        if items is None:
            return
        for i, e in enumerate(x):
            if e is None and not items.nullable and items.has_default:
                e = x[i] = _copy_json(items.default)
            if items.defaults_below and (type(e) is dict or type(e) is list):
                _default(e, items)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def validate(
    obj: Mapping[str, Any], schema: CompiledSchema, old: Mapping[str, Any] | None = None
) -> list[Cause]:
    """Validate ``obj`` against the schema, then its CEL rules (:mod:`.celrules`; ``old``: the
    stored object on an update, for transition rules); ``[]`` when valid. Never mutates
    ``obj``. As upstream, the CEL rules are skipped when a value has the wrong type."""
    root = schema._root
    if root is None:
        return []
    errs: list[Cause] = []
    _check(obj, root, "", errs)
    if schema._cel is not None and not any(c.reason == TYPE_INVALID for c in errs):
        errs += [Cause(*failure) for failure in celrules.validate(schema._cel, obj, old)]
    if len(errs) < 2:
        return errs
    seen: set[tuple[str, str, str]] = set()
    unique: list[Cause] = []
    for c in errs:
        key = (c.field, c.reason, c.message)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def _kind(v: Any) -> int:
    t = type(v)
    if t is str:
        return _STR
    if t is dict:
        return _MAP
    if t is list:
        return _LIST
    if t is int:
        return _INT
    if t is bool:
        return _BOOL
    if t is float:
        return _FLOAT
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return _BOOL
    if isinstance(v, int):
        return _INT
    if isinstance(v, float):
        return _FLOAT
    if isinstance(v, str):
        return _STR
    if isinstance(v, Mapping):
        return _MAP
    if isinstance(v, (list, tuple)):
        return _LIST
    return _OTHER


def _check(v: Any, n: _Node, path: str, errs: list[Cause]) -> None:
    if v is None:
        if n.types and not n.nullable:
            errs.append(_type_invalid(path, n.type_label, "null"))
        if n.enum_keys is not None:
            errs.append(Cause(path, NOT_SUPPORTED, f"Unsupported value: null: {n.enum_detail}"))
        return
    kind = _kind(v)
    if n.check_type:
        _check_type(v, kind, n, path, errs)
    if n.combinators:
        _check_combinators(v, n, path, errs)
    if kind == _STR:
        if n.check_string:
            _check_string(v, n, path, errs)
        if n.format_fn is not None and not n.format_fn(v):
            errs.append(_type_invalid(path, n.format, v))
    elif kind in (_INT, _FLOAT):
        if n.check_number:
            _check_number(v, kind, n, path, errs)
    elif kind == _LIST:
        items = n.items
        if items is not None and items.needs_validate:
            fast = items.fast_types
            for i, e in enumerate(v):
                if type(e) not in fast:
                    _check(e, items, f"{path}[{i}]", errs)
        if n.check_array:
            _check_array(v, n, path, errs)
    if n.enum_keys is not None and _enum_key(v) not in n.enum_keys:
        errs.append(
            Cause(path, NOT_SUPPORTED, f"Unsupported value: {go_value(v)}: {n.enum_detail}")
        )
    if kind == _MAP:
        _check_object(v, n, path, errs)


def _check_type(v: Any, kind: int, n: _Node, path: str, errs: list[Cause]) -> None:
    types = n.types
    json_type = _JSON_TYPE[kind]
    float_int = kind == _FLOAT and "integer" in types and math.isfinite(v) and float(v).is_integer()
    int_float = kind == _INT and "number" in types
    fmt = n.format
    if fmt:
        if kind != _STR and kind != _LIST:
            data_format = _DATA_FORMAT[kind]
            if not (json_type in types or data_format == fmt or float_int or int_float):
                errs.append(_type_invalid(path, fmt, data_format))
                return
        elif not n.numeric_type:
            return
    if not (json_type in types or float_int or int_float):
        errs.append(_type_invalid(path, n.type_label, json_type))


def _check_string(v: str, n: _Node, path: str, errs: list[Cause]) -> None:
    if n.max_length is not None and len(v) > n.max_length:
        errs.append(Cause(path, TOO_LONG, f"Too long: may not be longer than {n.max_length}"))
        return
    if n.min_length is not None and len(v) < n.min_length:
        errs.append(
            _invalid(path, v, f"{path} in body should be at least {n.min_length} chars long")
        )
        return
    if n.pattern is not None:
        if n.pattern_re is None:
            errs.append(
                _invalid(
                    path,
                    v,
                    f"{path} in body should match '{n.pattern}, but pattern is invalid: {n.pattern_error}'",
                )
            )
        elif n.pattern_re.search(v) is None:
            errs.append(_invalid(path, v, f"{path} in body should match '{n.pattern}'"))


def _is_json_integer(f: float) -> bool:
    if not math.isfinite(f) or abs(f) > 2**53:
        return False
    g = float(round(f))
    if f == g:
        return True
    return abs(f - g) / (abs(f) + abs(g)) < 1e-9


def _check_number(v: Any, kind: int, n: _Node, path: str, errs: list[Cause]) -> None:
    is_int = kind == _INT
    factor = n.multiple_of
    if factor is not None:
        if factor < 0:
            bad: float | int = int(factor) if is_int else factor
            errs.append(
                _invalid(
                    path,
                    bad,
                    f"factor MultipleOf declared for {path} must be positive: {go_value(bad)}",
                )
            )
        elif is_int and int(factor) != 0:
            if v % int(factor) != 0:
                errs.append(
                    _invalid(path, v, f"{path} in body should be a multiple of {int(factor)}")
                )
        elif factor != 0:
            mult = (1 / factor * v) if factor < 1 else (v / factor)
            if not _is_json_integer(mult):
                errs.append(
                    _invalid(path, v, f"{path} in body should be a multiple of {go_float(factor)}")
                )
    if n.minimum is not None:
        lo: float | int = int(n.minimum) if is_int else n.minimum
        if v < lo or (n.exclusive_minimum and v <= lo):
            op = "greater than" if n.exclusive_minimum else "greater than or equal to"
            shown = str(lo) if is_int else go_float(float(lo))
            errs.append(_invalid(path, v, f"{path} in body should be {op} {shown}"))
    if n.maximum is not None:
        hi: float | int = int(n.maximum) if is_int else n.maximum
        if v > hi or (n.exclusive_maximum and v >= hi):
            op = "less than" if n.exclusive_maximum else "less than or equal to"
            shown = str(hi) if is_int else go_float(float(hi))
            errs.append(_invalid(path, v, f"{path} in body should be {op} {shown}"))


def _check_array(v: list[Any], n: _Node, path: str, errs: list[Cause]) -> None:
    size = len(v)
    if n.min_items is not None and size < n.min_items:
        errs.append(
            _invalid(path, size, f"{path} in body should have at least {n.min_items} items")
        )
    if n.max_items is not None and size > n.max_items:
        errs.append(
            Cause(path, TOO_MANY, f"Too many: {size}: must have at most {n.max_items} items")
        )
    if n.unique_items and size > 1 and len({_typed_json(e) for e in v}) < size:
        errs.append(_invalid(path, "", f"{path} in body shouldn't contain duplicates"))
    if n.list_type == "set":
        _check_list_set(v, path, errs)
    elif n.list_type == "map":
        _check_list_map(v, n.list_map_keys, path, errs)


def _check_list_set(v: list[Any], path: str, errs: list[Cause]) -> None:
    if len(v) <= 1:
        return
    seen: dict[Any, int] = {}
    for i, x in enumerate(v):
        key = _set_key(x)
        times = seen.get(key, 0)
        if times == 1:
            errs.append(_duplicate(f"{path}[{i}]", x))
        seen[key] = times + 1


_UNSPECIFIED: Final = ("unspecified",)


def _check_list_map(v: list[Any], keys: tuple[str, ...], path: str, errs: list[Cause]) -> None:
    for i, x in enumerate(v):
        if x is not None and not isinstance(x, Mapping):
            errs.append(
                _invalid(f"{path}[{i}]", x, "must be an object for an array of list-type map")
            )
            return
    if len(v) <= 1:
        return
    seen: dict[Any, int] = {}
    single = keys[0] if len(keys) == 1 else None
    for i, x in enumerate(v):
        shown: dict[str, Any]
        if single is not None:
            if x is None or single not in x:
                key: Any = _UNSPECIFIED
                shown = {}
            else:
                key = _set_key(x[single])
                shown = {single: x[single]}
        else:
            shown = {} if x is None else {k: x[k] for k in keys if k in x}
            key = ("j", _canonical(shown))
        times = seen.get(key, 0)
        if times == 1:
            errs.append(_duplicate(f"{path}[{i}]", shown))
        seen[key] = times + 1


def _check_object(v: Mapping[str, Any], n: _Node, path: str, errs: list[Cause]) -> None:
    size = len(v)
    if n.min_properties is not None and size < n.min_properties:
        errs.append(
            _invalid(
                path, size, f"{path} in body should have at least {n.min_properties} properties"
            )
        )
        return
    if n.max_properties is not None and size > n.max_properties:
        errs.append(
            Cause(path, TOO_MANY, f"Too many: {size}: must have at most {n.max_properties} items")
        )
        return
    props = n.vprops
    additional = n.additional
    for k, cv in v.items():
        c = props.get(k)
        if c is not None:
            if type(cv) not in c.fast_types:
                _check(cv, c, f"{path}.{k}" if path else k, errs)
        elif additional is not None:
            if type(cv) not in additional.fast_types:
                _check(cv, additional, f"{path}.{k}" if path else k, errs)
        elif n.additional_forbidden:
            errs.append(_invalid(path, k, f"{_child(path, k)} in body is a forbidden property"))
    for r in n.required:
        if r not in v:
            errs.append(Cause(_child(path, r), REQUIRED, "Required value"))
    if n.embedded:
        _check_embedded(v, path, errs)


_DNS1035_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def _present_string(v: Mapping[str, Any], key: str, path: str, errs: list[Cause]) -> str | None:
    """``v[key]`` when it is a non-empty string; else None, once a value that is not a string or
    is empty is reported (an absent key is the caller's to report)."""
    if key not in v:
        return None
    value = v[key]
    if not isinstance(value, str):
        errs.append(_invalid(path, value, "must be a string"))
    elif not value:
        errs.append(Cause(path, REQUIRED, "Required value"))
    else:
        return value
    return None


def _check_embedded(v: Mapping[str, Any], path: str, errs: list[Cause]) -> None:
    api_path, kind_path = _child(path, "apiVersion"), _child(path, "kind")
    if "apiVersion" not in v:
        errs.append(Cause(api_path, REQUIRED, "Required value"))
    if "kind" not in v:
        errs.append(Cause(kind_path, REQUIRED, "Required value"))
    api = _present_string(v, "apiVersion", api_path, errs)
    if api is not None and api != "/" and api.count("/") > 1:
        errs.append(_invalid(api_path, api, f"unexpected GroupVersion string: {api}"))
    kind = _present_string(v, "kind", kind_path, errs)
    if kind is not None:
        lowered = kind.lower()
        problems = []
        if len(lowered) > 63:
            problems.append("must be no more than 63 characters")
        if _RX_DNS1035_LABEL.fullmatch(lowered) is None:
            problems.append(_DNS1035_MSG)
        if problems:
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errs.append(_invalid(kind_path, kind, detail))
    meta = v.get("metadata")
    if "metadata" in v and not isinstance(meta, Mapping):
        errs.append(_invalid(_child(path, "metadata"), meta, "must be an object"))


def _check_combinators(v: Any, n: _Node, path: str, errs: list[Cause]) -> None:
    if n.any_of:
        best: list[Cause] | None = None
        for branch in n.any_of:
            sub: list[Cause] = []
            _check(v, branch, path, sub)
            if not sub:
                best = None
                break
            if best is None or len(sub) < len(best):
                best = sub
        if best is not None:
            errs.append(
                _composite(path, f"{go_quote(path)} must validate at least one schema (anyOf)")
            )
            errs.extend(best)
    if n.one_of:
        valid = 0
        best = None
        for branch in n.one_of:
            sub = []
            _check(v, branch, path, sub)
            if not sub:
                valid += 1
                best = None
            elif valid == 0 and (best is None or len(sub) < len(best)):
                best = sub
        if valid != 1:
            found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            errs.append(
                _composite(
                    path,
                    f"{go_quote(path)} must validate one and only one schema (oneOf). {found}",
                )
            )
            if best:
                errs.extend(best)
    if n.all_of:
        valid = 0
        for branch in n.all_of:
            sub = []
            _check(v, branch, path, sub)
            if sub:
                errs.extend(sub)
            else:
                valid += 1
        if valid != len(n.all_of):
            suffix = ". None validated" if valid == 0 else ""
            errs.append(
                _composite(path, f"{go_quote(path)} must validate all the schemas (allOf){suffix}")
            )
    if n.not_ is not None:
        sub = []
        _check(v, n.not_, path, sub)
        if not sub:
            errs.append(_composite(path, f"{go_quote(path)} must not validate the schema (not)"))
