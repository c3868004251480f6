"""Label and field selectors with Kubernetes semantics (pure Python, no I/O).

Contracts
---------
Label selectors (``k8s.io/apimachinery/pkg/labels`` semantics):

* :func:`parse_label_selector` accepts the query-string syntax
  ``"a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3"``. Whitespace (space, tab, CR, LF) is
  allowed between tokens. Keys must be qualified names and values label values; any
  violation raises :class:`SelectorError` whose message names the offending token or
  field (``"unable to parse requirement: found ')', expected: identifier"``,
  ``"values[0][env]: Invalid value: ..."``). The result is sorted by key (stable), so
  ``str(selector)`` is canonical and ``parse_label_selector(str(s)) == s`` for any
  parsed ``s``.
* Set-based values are normalised like upstream: duplicates dropped, sorted; ``()`` is
  the set holding the empty string.
* :class:`LabelSelector` with no requirements matches everything; :data:`NOTHING`
  matches nothing (upstream ``labels.Nothing()``, what a nil ``*metav1.LabelSelector``
  converts to). ``matches(None)`` treats the object as having no labels.
* :func:`label_selector_from_dict` converts a ``metav1.LabelSelector`` mapping
  (``matchLabels``/``matchExpressions``): ``None`` -> :data:`NOTHING`, ``{}`` -> match
  everything, invalid content -> :class:`SelectorError`.
* :func:`format_label_selector` is ``metav1.FormatLabelSelector``: ``"<none>"`` for a
  nil or empty selector, ``"<error>"`` for an invalid one.

Field selectors (``k8s.io/apimachinery/pkg/fields`` semantics):

* :func:`parse_field_selector` accepts ``field=value``, ``field==value`` and
  ``field!=value`` terms separated by commas. In values, ``\\,``, ``\\=`` and ``\\\\``
  are escapes; any other backslash sequence, or an unescaped ``,``/``=`` inside a value,
  raises :class:`SelectorError`. A missing field compares as ``""``.
* :func:`object_fields` returns the selectable fields of an object (upstream
  ``*ToSelectableFields``).

Label keys and values are checked with :mod:`kube_runtime.validation`. Moved out of this
module (the old names keep working for one release, with a ``DeprecationWarning``): the
string validators (``qualified_name_errors``, ``label_value_errors``, ``dns1123_*``, ...) to
:mod:`kube_runtime.validation`. :func:`supported_fields` and :func:`check_field_selector` say
which field labels a kind accepts, as kube-apiserver decides it; the cache and the embedded
server both refuse the others with the server's message.

Matching is the hot path (every object of a list, every watch event): a selector is
compiled once into a flat plan, and :meth:`LabelSelector.matches` only does dictionary
look-ups and set membership tests, without allocating in the common case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from kube_runtime._moved import moved_attribute
from kube_runtime.validation import label_value_errors as _label_value_errors
from kube_runtime.validation import qualified_name_errors as _qualified_name_errors

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "check_field_selector",
    "convert_field_labels",
    "format_label_selector",
    "label_selector_from_dict",
    "object_fields",
    "objects_selecting",
    "parse_field_selector",
    "parse_label_selector",
    "supported_fields",
    "unsupported_field_label",
]


class SelectorError(ValueError):
    """An invalid label or field selector; the message says what is wrong and where."""


#: Where names that moved out of this module went (resolved by ``__getattr__`` for one
#: release): the name validators, and the server's field label table (imported on use only).
MOVED_TO = ("kube_runtime.validation",)


def __getattr__(name: str) -> Any:
    """A name that moved out of this module, with a ``DeprecationWarning`` naming its new path."""
    return moved_attribute(__name__, name, MOVED_TO)


# --------------------------------------------------------------------------------------
# Requirements and label selectors
# --------------------------------------------------------------------------------------

EQUALS: Final = "="
DOUBLE_EQUALS: Final = "=="
NOT_EQUALS: Final = "!="
IN: Final = "in"
NOT_IN: Final = "notin"
EXISTS: Final = "exists"
DOES_NOT_EXIST: Final = "!"
GREATER_THAN: Final = "gt"
LESS_THAN: Final = "lt"

# Upstream's order, used in "expected: ..." and "supported values: ..." messages.
_BINARY_OPERATORS: Final = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_ALL_OPERATORS: Final = (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)

# Plan op-codes for the matcher.
_OP_EQ: Final = 0
_OP_NE: Final = 1
_OP_IN: Final = 2
_OP_NOTIN: Final = 3
_OP_EXISTS: Final = 4
_OP_NOT_EXISTS: Final = 5
_OP_GT: Final = 6
_OP_LT: Final = 7

_MISSING: Final[Any] = object()
_EMPTY_LABELS: Final[Mapping[str, str]] = {}
_INT_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """Go ``strconv.ParseInt(text, 10, 64)``: ``None`` when not a base-10 int64."""
    if not _INT_RE.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _go_strings(values: Iterable[str]) -> str:
    """Render a string slice the way Go's ``%#v`` does (``[]string{"a", "b"}``)."""
    return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in values) + "}"


def _aggregate(errors: list[str]) -> str:
    """Upstream aggregate error text: the error itself, or ``[e1, e2]`` for several."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _requirement_errors(key: str, operator: str, values: tuple[str, ...]) -> list[str]:
    """Upstream ``NewRequirement`` checks; messages carry the relative field path."""
    errs: list[str] = []
    if not isinstance(key, str):
        return [f"key: Invalid value: {key!r}: must be a string"]
    key_errs = _qualified_name_errors(key)
    if key_errs:
        errs.append(
            f"key: Invalid value: {json.dumps(key, ensure_ascii=False)}: {'; '.join(key_errs)}"
        )
    if operator in (IN, NOT_IN):
        if not values:
            errs.append(
                f"values: Invalid value: {_go_strings(values)}: "
                "for 'in', 'notin' operators, values set can't be empty"
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(values) != 1:
            errs.append(
                f"values: Invalid value: {_go_strings(values)}: "
                "exact-match compatibility requires one single value"
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if values:
            errs.append(
                f"values: Invalid value: {_go_strings(values)}: "
                "values set must be empty for exists and does not exist"
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(values) != 1:
            errs.append(
                f"values: Invalid value: {_go_strings(values)}: "
                "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, v in enumerate(values):
            if not isinstance(v, str) or _parse_int64(v) is None:
                errs.append(
                    f"values[{i}]: Invalid value: {json.dumps(v, ensure_ascii=False)}: "
                    "for 'Gt', 'Lt' operators, the value must be an integer"
                )
    else:
        supported = ", ".join(json.dumps(o) for o in _ALL_OPERATORS)
        errs.append(
            f"operator: Unsupported value: {json.dumps(operator, ensure_ascii=False)}: "
            f"supported values: {supported}"
        )
    for i, v in enumerate(values):
        if not isinstance(v, str):
            errs.append(f"values[{i}][{key}]: Invalid value: {v!r}: must be a string")
            continue
        value_errs = _label_value_errors(v)
        if value_errs:
            errs.append(
                f"values[{i}][{key}]: Invalid value: {json.dumps(v, ensure_ascii=False)}: "
                + "; ".join(value_errs)
            )
    return errs


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a label selector: ``key``, ``operator`` and ``values``.

    ``operator`` is one of ``"="``, ``"=="``, ``"!="``, ``"in"``, ``"notin"``,
    ``"exists"``, ``"!"`` (does not exist), ``"gt"``, ``"lt"``. Construction validates
    like upstream ``NewRequirement`` and raises :class:`SelectorError`; a list given as
    ``values`` is stored as a tuple.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    _set: frozenset[str] = field(init=False, repr=False, compare=False, hash=False)
    _num: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.values, tuple):
            object.__setattr__(self, "values", tuple(self.values))
        errs = _requirement_errors(self.key, self.operator, self.values)
        if errs:
            raise SelectorError(_aggregate(errs))
        object.__setattr__(self, "_set", frozenset(self.values))
        num = 0
        if self.operator in (GREATER_THAN, LESS_THAN):
            parsed = _parse_int64(self.values[0])
            num = parsed if parsed is not None else 0
        object.__setattr__(self, "_num", num)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Upstream ``Requirement.Matches`` semantics.

        ``in``/``=``/``==`` need the key with a listed value; ``notin``/``!=`` match a
        missing key; ``gt``/``lt`` need the key with an integer value beyond the bound.
        """
        op = self.operator
        if op in (EQUALS, DOUBLE_EQUALS, IN):
            value = labels.get(self.key, _MISSING)
            return value is not _MISSING and value in self._set
        if op in (NOT_EQUALS, NOT_IN):
            value = labels.get(self.key, _MISSING)
            return value is _MISSING or value not in self._set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key, _MISSING)
        if value is _MISSING or not isinstance(value, str):
            return False
        number = _parse_int64(value)
        if number is None:
            return False
        return number > self._num if op == GREATER_THAN else number < self._num

    def __str__(self) -> str:
        op = self.operator
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        if op == EXISTS:
            return self.key
        if len(self.values) == 1:
            joined = self.values[0]
        else:
            joined = ",".join(sorted(self.values))
        if op == IN:
            return f"{self.key} in ({joined})"
        if op == NOT_IN:
            return f"{self.key} notin ({joined})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{joined}"


_Plan = tuple[tuple[int, str, Any], ...]


def _compile(requirements: tuple[Requirement, ...]) -> _Plan:
    plan: list[tuple[int, str, Any]] = []
    for r in requirements:
        op = r.operator
        if op in (EQUALS, DOUBLE_EQUALS) or (op == IN and len(r.values) == 1):
            plan.append((_OP_EQ, r.key, r.values[0]))
        elif op == NOT_EQUALS or (op == NOT_IN and len(r.values) == 1):
            plan.append((_OP_NE, r.key, r.values[0]))
        elif op == IN:
            plan.append((_OP_IN, r.key, r._set))
        elif op == NOT_IN:
            plan.append((_OP_NOTIN, r.key, r._set))
        elif op == EXISTS:
            plan.append((_OP_EXISTS, r.key, None))
        elif op == DOES_NOT_EXIST:
            plan.append((_OP_NOT_EXISTS, r.key, None))
        elif op == GREATER_THAN:
            plan.append((_OP_GT, r.key, r._num))
        else:
            plan.append((_OP_LT, r.key, r._num))
    # Cheapest and most selective checks first; the result does not depend on order.
    plan.sort(key=lambda step: step[0])
    return tuple(plan)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A conjunction of :class:`Requirement`; no requirements means "everything"."""

    requirements: tuple[Requirement, ...] = ()
    _plan: _Plan = field(init=False, repr=False, compare=False, hash=False)
    _eq: dict[str, str] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.requirements, tuple):
            object.__setattr__(self, "requirements", tuple(self.requirements))
        object.__setattr__(self, "_plan", _compile(self.requirements))
        eq: dict[str, str] = {}
        for r in self.requirements:
            if r.operator in (EQUALS, DOUBLE_EQUALS) or (r.operator == IN and len(r.values) == 1):
                eq[r.key] = r.values[0]
        object.__setattr__(self, "_eq", eq)

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """True when every requirement matches; ``None`` labels are an empty set."""
        if labels is None:
            labels = _EMPTY_LABELS
        for op, key, arg in self._plan:
            if op == _OP_EQ:
                if labels.get(key, _MISSING) != arg:
                    return False
            elif op == _OP_NE:
                if labels.get(key, _MISSING) == arg:
                    return False
            elif op == _OP_IN:
                value = labels.get(key, _MISSING)
                if value is _MISSING or value not in arg:
                    return False
            elif op == _OP_NOTIN:
                value = labels.get(key, _MISSING)
                if value is not _MISSING and value in arg:
                    return False
            elif op == _OP_EXISTS:
                if key not in labels:
                    return False
            elif op == _OP_NOT_EXISTS:
                if key in labels:
                    return False
            else:
                value = labels.get(key, _MISSING)
                if value is _MISSING or not isinstance(value, str):
                    return False
                number = _parse_int64(value)
                if number is None:
                    return False
                if op == _OP_GT:
                    if number <= arg:
                        return False
                elif number >= arg:
                    return False
        return True

    def is_empty(self) -> bool:
        """True when the selector does not restrict anything (matches everything)."""
        return not self.requirements

    def matches_nothing(self) -> bool:
        """True only for :data:`NOTHING` (upstream ``labels.MatchesNothing``)."""
        return False

    @property
    def equality_terms(self) -> dict[str, str]:
        """``key -> value`` for the terms requiring an exact value (``=``, ``==``, and
        ``in`` with a single value), e.g. to pick an index; a fresh dict per call."""
        return dict(self._eq)

    def requires_exact_match(self, key: str) -> str | None:
        """The value ``key`` must have for a match, or ``None`` when not pinned."""
        return self._eq.get(key)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


@dataclass(frozen=True, slots=True)
class _NothingSelector(LabelSelector):
    """Upstream ``labels.Nothing()``: matches no object, is not empty, prints as ``""``."""

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return False

    def is_empty(self) -> bool:
        return False

    def matches_nothing(self) -> bool:
        return True

    def __str__(self) -> str:
        return ""


NOTHING: Final[LabelSelector] = _NothingSelector()
"""A selector that matches nothing (a nil ``*metav1.LabelSelector``)."""

EVERYTHING: Final[LabelSelector] = LabelSelector()
"""A selector that matches every object."""


# ---- the query-string parser ---------------------------------------------------------

_T_ERROR: Final = 0
_T_EOS: Final = 1
_T_CLOSE: Final = 2
_T_COMMA: Final = 3
_T_NOT: Final = 4
_T_DOUBLE_EQ: Final = 5
_T_EQ: Final = 6
_T_GT: Final = 7
_T_IDENT: Final = 8
_T_IN: Final = 9
_T_LT: Final = 10
_T_NE: Final = 11
_T_NOTIN: Final = 12
_T_OPEN: Final = 13

_TOKENS: Final = {
    ")": _T_CLOSE,
    ",": _T_COMMA,
    "!": _T_NOT,
    "==": _T_DOUBLE_EQ,
    "=": _T_EQ,
    ">": _T_GT,
    "in": _T_IN,
    "<": _T_LT,
    "!=": _T_NE,
    "notin": _T_NOTIN,
    "(": _T_OPEN,
}
_SPECIAL: Final = frozenset("=!(),><")
_WHITESPACE: Final = frozenset(" \t\r\n")
_TOKEN_OPERATOR: Final = {
    _T_IN: IN,
    _T_EQ: EQUALS,
    _T_DOUBLE_EQ: DOUBLE_EQUALS,
    _T_GT: GREATER_THAN,
    _T_LT: LESS_THAN,
    _T_NOTIN: NOT_IN,
    _T_NE: NOT_EQUALS,
}


def _lex(text: str) -> list[tuple[int, str]]:
    """Split ``text`` into (token, literal) pairs ending with end-of-string."""
    items: list[tuple[int, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            items.append((_T_EOS, ""))
            return items
        ch = text[pos]
        if ch in _SPECIAL:
            # Longest run of special characters that still forms a known operator.
            end = pos + 1
            while end < n and text[end] in _SPECIAL and text[pos : end + 1] in _TOKENS:
                end += 1
            literal = text[pos:end]
            items.append((_TOKENS[literal], literal))
            pos = end
        else:
            end = pos
            while end < n and text[end] not in _SPECIAL and text[end] not in _WHITESPACE:
                end += 1
            literal = text[pos:end]
            tok = _TOKENS.get(literal, _T_IDENT)
            items.append((tok, literal))
            pos = end


class _Parser:
    """Recursive-descent parser over the lexed items (upstream grammar and messages)."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def _peek(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_T_IN, _T_NOTIN):
            tok = _T_IDENT
        return tok, lit

    def _next(self, values: bool) -> tuple[int, str]:
        item = self._peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self._peek(True)
            if tok in (_T_IDENT, _T_NOT):
                try:
                    requirements.append(self._requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                tok, lit = self._next(True)
                if tok == _T_EOS:
                    return requirements
                if tok == _T_COMMA:
                    tok2, lit2 = self._peek(True)
                    if tok2 not in (_T_IDENT, _T_NOT):
                        raise SelectorError(f"found '{lit2}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == _T_EOS:
                return requirements
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        operator = ""
        tok, lit = self._next(True)
        if tok == _T_NOT:
            operator = DOES_NOT_EXIST
            tok, lit = self._next(True)
        if tok != _T_IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        key_errs = _qualified_name_errors(key)
        if key_errs:
            raise SelectorError(
                f"key: Invalid value: {json.dumps(key, ensure_ascii=False)}: {'; '.join(key_errs)}"
            )
        nxt, _ = self._peek(True)
        if nxt in (_T_EOS, _T_COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        if operator in (EXISTS, DOES_NOT_EXIST):
            return Requirement(key, operator, ())
        tok, lit = self._next(False)
        op = _TOKEN_OPERATOR.get(tok)
        if op is None:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        if op in (IN, NOT_IN):
            values = self._set_values()
        else:
            values = self._exact_value()
        return Requirement(key, op, tuple(sorted(values)))

    def _set_values(self) -> set[str]:
        tok, lit = self._next(True)
        if tok != _T_OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self._peek(True)
        if tok in (_T_IDENT, _T_COMMA):
            values = self._identifier_list()
            tok, _ = self._next(True)
            if tok != _T_CLOSE:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _T_CLOSE:
            self._next(True)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifier_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self._next(True)
            if tok == _T_IDENT:
                values.add(lit)
                tok2, lit2 = self._peek(True)
                if tok2 == _T_COMMA:
                    continue
                if tok2 == _T_CLOSE:
                    return values
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _T_COMMA:
                if not values:
                    values.add("")  # "(,"
                tok2, _ = self._peek(True)
                if tok2 in (_T_CLOSE, _T_COMMA):
                    values.add("")  # ",)" and ",,"
                    if tok2 == _T_CLOSE:
                        return values
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        tok, _ = self._peek(True)
        if tok in (_T_EOS, _T_COMMA):
            return {""}
        tok, lit = self._next(True)
        if tok == _T_IDENT:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """Parse the label-selector query syntax; ``""`` selects everything.

    Raises :class:`SelectorError` with upstream's message on a syntax error, an invalid
    key or value, or a non-integer ``>``/``<`` bound.
    """
    if not text or text.isspace():
        return EVERYTHING
    requirements = _Parser(text).parse()
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


_SELECTOR_OPERATORS: Final = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def label_selector_from_dict(sel: Mapping[str, Any] | None) -> LabelSelector:
    """Upstream ``metav1.LabelSelectorAsSelector`` for a ``metav1.LabelSelector`` mapping.

    ``None`` -> :data:`NOTHING`; no ``matchLabels`` and no ``matchExpressions`` ->
    everything. An unknown operator, values given to ``Exists``/``DoesNotExist``, no
    values for ``In``/``NotIn``, or an invalid key/value raises :class:`SelectorError`.
    """
    if sel is None:
        return NOTHING
    if not isinstance(sel, Mapping):
        raise SelectorError(f"label selector must be an object, not {type(sel).__name__}")
    match_labels = sel.get("matchLabels") or {}
    expressions = sel.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping):
        raise SelectorError("matchLabels: must be a map of strings")
    if not isinstance(expressions, (list, tuple)):
        raise SelectorError("matchExpressions: must be a list")
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        errs = _requirement_errors(key, EQUALS, (value,))
        if errs:
            raise SelectorError(_aggregate([f"matchLabels.{e}" for e in errs]))
        requirements.append(Requirement(key, EQUALS, (value,)))
    for i, expr in enumerate(expressions):
        if not isinstance(expr, Mapping):
            raise SelectorError(f"matchExpressions[{i}]: must be an object")
        raw_op = expr.get("operator")
        op = _SELECTOR_OPERATORS.get(raw_op) if isinstance(raw_op, str) else None
        if op is None:
            raise SelectorError(
                f"{json.dumps(raw_op, ensure_ascii=False)} is not a valid pod selector operator"
            )
        raw_values = expr.get("values") or ()
        if not isinstance(raw_values, (list, tuple)):
            raise SelectorError(f"matchExpressions[{i}].values: must be a list of strings")
        values = tuple(raw_values)
        key = expr.get("key", "")
        errs = _requirement_errors(key, op, values)
        if errs:
            raise SelectorError(_aggregate([f"matchExpressions[{i}].{e}" for e in errs]))
        requirements.append(Requirement(key, op, values))
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


def objects_selecting(
    candidates: Iterable[Mapping[str, Any]],
    labels: Mapping[str, str],
    *,
    selector_of: Callable[[Mapping[str, Any]], LabelSelector | None] | None = None,
) -> list[Mapping[str, Any]]:
    """The candidates (workloads: a ``spec.selector`` each) whose selector matches ``labels``,
    in order: how a controller finds the sets that could adopt an orphan pod. No labels match
    nothing; a missing, empty or invalid selector matches nothing (skipped), as upstream's
    listers (``GetPodStatefulSets``, ``GetPodReplicaSets``, ...): "a nil or empty selector
    should match nothing, not everything". ``selector_of(candidate)`` gives a candidate's
    parsed selector (None: invalid) where the caller keeps them parsed; by default
    ``spec.selector`` is parsed here."""
    if not labels:
        return []
    found = []
    for obj in candidates:
        if selector_of is not None:
            selector = selector_of(obj)
            if selector is None:
                continue
        else:
            try:
                selector = label_selector_from_dict((obj.get("spec") or {}).get("selector"))
            except ValueError:
                continue
        if not selector.is_empty() and not selector.matches_nothing() and selector.matches(labels):
            found.append(obj)
    return found


def format_label_selector(sel: Mapping[str, Any] | None) -> str:
    """Upstream ``metav1.FormatLabelSelector``: canonical text, ``"<none>"`` when the
    selector is nil or empty, ``"<error>"`` when it cannot be converted."""
    try:
        text = str(label_selector_from_dict(sel))
    except SelectorError:
        return "<error>"
    return text or "<none>"


# --------------------------------------------------------------------------------------
# Field selectors
# --------------------------------------------------------------------------------------

_FIELD_OPERATORS: Final = ("!=", "==", "=")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not backslash-escaped (escapes are kept)."""
    terms: list[str] = []
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """Split at the first operator occurrence (``!=`` before ``==`` before ``=``)."""
    for i in range(len(term)):
        for op in _FIELD_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def _unescape(value: str) -> str:
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    escaped = False
    for ch in value:
        if escaped:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {ch!r}")
        else:
            out.append(ch)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A conjunction of ``(field, op, value)`` terms with ``op`` ``"="`` or ``"!="``."""

    terms: tuple[tuple[str, str, str], ...] = ()

    def matches(self, fields: Mapping[str, str]) -> bool:
        """True when every term holds; a field missing from ``fields`` is ``""``."""
        for name, op, value in self.terms:
            actual = fields.get(name, "")
            if (actual == value) != (op == "="):
                return False
        return True

    def is_empty(self) -> bool:
        """True when the selector does not restrict anything."""
        return not self.terms

    def requires_exact_match(self, name: str) -> str | None:
        """The value field ``name`` must equal, or ``None`` when not pinned."""
        for fname, op, value in self.terms:
            if fname == name and op == "=":
                return value
        return None

    def __str__(self) -> str:
        return ",".join(f"{name}{op}{_escape(value)}" for name, op, value in self.terms)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse ``"metadata.name=x,status.phase!=Running"``; ``""`` selects everything.

    ``==`` is accepted as ``=``. Terms are sorted (upstream sorts the raw terms).
    """
    terms: list[tuple[str, str, str]] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        terms.append((lhs, "!=" if op == "!=" else "=", _unescape(rhs)))
    return FieldSelector(tuple(terms))


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY_LABELS


def _go_bool(value: Any) -> str:
    return "true" if value is True else "false"


# Kinds whose API registers its own field-label conversion (upstream ``conversion.go`` files);
# custom resources have apiextensions' own, with the same wording.
_OWN_FIELD_LABEL_CONVERSION: Final = frozenset(
    {
        ("", "Pod"),
        ("", "Node"),
        ("", "ReplicationController"),
        ("", "Event"),
        ("", "Namespace"),
        ("", "Secret"),
        ("events.k8s.io", "Event"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
    }
)


def unsupported_field_label(group: str, kind: str, label: str, *, custom: bool = False) -> str:
    """kube-apiserver's message for a field selector on ``label``, which ``kind`` lacks.

    Kinds with their own field-label conversion (and custom resources) say
    ``field label not supported: <label>``; batch/v1 Jobs name themselves; every other kind
    falls back to apimachinery's default conversion, which knows only the two metadata fields.
    """
    if custom or (group, kind) in _OWN_FIELD_LABEL_CONVERSION:
        return f"field label not supported: {label}"
    if (group, kind) == ("batch", "Job"):
        return f"field label {json.dumps(label)} not supported for batchv1.Job"
    return (
        f'{json.dumps(label)} is not a known field selector: only "metadata.name", '
        '"metadata.namespace"'
    )


_POD_SPEC_STRING_FIELDS: Final = (
    "nodeName",
    "restartPolicy",
    "schedulerName",
    "serviceAccountName",
)
_INVOLVED_OBJECT_FIELDS: Final = (
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
)
# Kinds whose field labels are renamed to another kind's selectable fields (upstream's
# label conversion of ``events.k8s.io`` Events, to the core Event's fields): label -> field.
_RENAMED_FIELD_LABELS: Final[dict[tuple[str, str], dict[str, str]]] = {
    ("events.k8s.io", "Event"): {
        "metadata.name": "metadata.name",
        "metadata.namespace": "metadata.namespace",
        "reason": "reason",
        "type": "type",
        "reportingController": "reportingComponent",
        **{f"regarding.{key}": f"involvedObject.{key}" for key in _INVOLVED_OBJECT_FIELDS},
    }
}


def object_fields(obj: Mapping[str, Any]) -> dict[str, str]:
    """The selectable fields of ``obj`` (upstream ``*ToSelectableFields``).

    Missing string fields are ``""``; boolean fields are ``"true"``/``"false"``.
    """
    meta = _m(obj.get("metadata"))
    fields = {
        "metadata.name": _s(meta.get("name")),
        "metadata.namespace": _s(meta.get("namespace")),
    }
    kind = obj.get("kind")
    if kind == "Pod":
        spec = _m(obj.get("spec"))
        status = _m(obj.get("status"))
        pod_ips = status.get("podIPs")
        pod_ip = ""
        if isinstance(pod_ips, list) and pod_ips:
            pod_ip = _s(_m(pod_ips[0]).get("ip"))
        else:
            pod_ip = _s(status.get("podIP"))
        for key in _POD_SPEC_STRING_FIELDS:
            fields["spec." + key] = _s(spec.get(key))
        fields["spec.hostNetwork"] = _go_bool(spec.get("hostNetwork"))
        fields["status.phase"] = _s(status.get("phase"))
        fields["status.podIP"] = pod_ip
        fields["status.nominatedNodeName"] = _s(status.get("nominatedNodeName"))
    elif kind == "Event":
        # core/v1 names; an events.k8s.io object carries "regarding"/"reportingController".
        involved = _m(obj.get("involvedObject") or obj.get("regarding"))
        reporting = _s(obj.get("reportingComponent") or obj.get("reportingController"))
        source = _s(_m(obj.get("source")).get("component")) or reporting
        for key in _INVOLVED_OBJECT_FIELDS:
            fields["involvedObject." + key] = _s(involved.get(key))
        fields["reason"] = _s(obj.get("reason"))
        fields["reportingComponent"] = reporting
        fields["source"] = source
        fields["type"] = _s(obj.get("type"))
    elif kind == "Secret":
        fields["type"] = _s(obj.get("type"))
    elif kind == "Namespace":
        fields["status.phase"] = _s(_m(obj.get("status")).get("phase"))
    elif kind == "Node":
        fields["spec.unschedulable"] = _go_bool(_m(obj.get("spec")).get("unschedulable"))
    return fields


@lru_cache(maxsize=1024)
def supported_fields(kind: str) -> frozenset[str]:
    """Field labels a field selector may use for ``kind`` (kube-apiserver's label
    conversions): exactly the fields :func:`object_fields` extracts for it."""
    return frozenset(object_fields({"kind": kind}))


def check_field_selector(
    selector: FieldSelector, kind: str, group: str = "", *, custom: bool = False
) -> None:
    """Raise :class:`SelectorError` with kube-apiserver's message
    (:func:`unsupported_field_label`) when ``selector`` uses a label ``kind`` lacks."""
    renamed = _RENAMED_FIELD_LABELS.get((group, kind))
    allowed = frozenset(renamed) if renamed is not None else supported_fields(kind)
    for name, _, _ in selector.terms:
        if name not in allowed:
            raise SelectorError(unsupported_field_label(group, kind, name, custom=custom))


def convert_field_labels(selector: FieldSelector, kind: str, group: str = "") -> FieldSelector:
    """``selector`` with its labels named as :func:`object_fields` names them (upstream's field
    label conversion: ``regarding.name`` of an ``events.k8s.io`` Event is the core Event's
    ``involvedObject.name``); unchanged for kinds whose labels are their fields."""
    renamed = _RENAMED_FIELD_LABELS.get((group, kind))
    if renamed is None:
        return selector
    return FieldSelector(tuple((renamed.get(n, n), op, v) for n, op, v in selector.terms))
