"""Python expressions as small trees, laid out the way ``ruff format`` lays them out.

The generator emits already-formatted code (byte-identical to what ``ruff format`` with a
100-column limit would produce), so a generated module passes ``ruff format --check`` without
running a formatter. Only the shapes the generator needs exist:

- :class:`Atom`: text that is never split (names, literals, ``None``);
- :class:`Seq`: a bracketed, comma-separated list after a head (``list[...]``,
  ``Field(...)``, ``{...}``);
- :class:`Pair`: ``key=value`` or ``"key": value`` inside a :class:`Seq`;
- :class:`Union`: ``a | b | c``.

The layout rules mirror ruff's (black's) for these shapes: an expression that fits stays on
one line; a bracketed one that does not puts its content on the next line, indented, and if
that content does not fit either, one item per line with a trailing comma; a union is split
before each ``|``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LINE_LENGTH",
    "Atom",
    "Expr",
    "Pair",
    "Seq",
    "Union",
    "call",
    "docstring_lines",
    "layout",
    "literal",
    "py_str",
    "split",
    "statement",
    "subscript",
]

LINE_LENGTH = 100
INDENT = "    "


class Expr:
    """A node; ``flat`` is its one-line form."""

    @property
    def flat(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Atom(Expr):
    text: str

    @property
    def flat(self) -> str:
        return self.text


@dataclass(frozen=True)
class Seq(Expr):
    head: str  # the text up to and including the opening bracket: "list[", "Field(", "{"
    items: tuple[Expr, ...]
    close: str

    @property
    def flat(self) -> str:
        return self.head + ", ".join(item.flat for item in self.items) + self.close


@dataclass(frozen=True)
class Pair(Expr):
    key: str  # "name=" or '"key": '
    value: Expr

    @property
    def flat(self) -> str:
        return self.key + self.value.flat


@dataclass(frozen=True)
class Union(Expr):
    parts: tuple[Expr, ...]

    @property
    def flat(self) -> str:
        return " | ".join(part.flat for part in self.parts)


def _fits(text: str) -> bool:
    return len(text) <= LINE_LENGTH


def layout(expr: Expr, indent: str, lead: str = "", tail: str = "") -> list[str]:
    """Lines of ``lead + expr + tail`` at ``indent`` (``lead`` and ``tail`` stay unsplit)."""
    one = indent + lead + expr.flat + tail
    if _fits(one):
        return [one]
    return split(expr, indent, lead, tail)


def split(expr: Expr, indent: str, lead: str = "", tail: str = "") -> list[str]:
    """Like :func:`layout` but never on one line when the expression has brackets or ``|``."""
    if isinstance(expr, Pair):
        return layout(expr.value, indent, lead + expr.key, tail)
    if isinstance(expr, Seq) and expr.items:
        inner = indent + INDENT
        joined = ", ".join(item.flat for item in expr.items)
        if len(expr.items) == 1:
            body = layout(expr.items[0], inner)
        elif _fits(inner + joined):
            body = [inner + joined]
        else:
            body = [line for item in expr.items for line in layout(item, inner, tail=",")]
        return [indent + lead + expr.head, *body, indent + expr.close + tail]
    if isinstance(expr, Union):
        lines: list[str] = []
        last = len(expr.parts) - 1
        for i, part in enumerate(expr.parts):
            lines += layout(part, indent, lead if i == 0 else "| ", tail if i == last else "")
        return lines
    return [indent + lead + expr.flat + tail]


def statement(indent: str, target: str, annotation: Expr | None, value: Expr | None) -> list[str]:
    """``target: annotation = value`` (either part optional) laid out as ruff does: keep the
    annotation whole and split the value's brackets; else parenthesize the value when that
    makes the first line fit (after a one-name annotation only when every line then fits,
    else the value's brackets split after the overlong head); else split the annotation (its
    own brackets, or parentheses around a union) and then the value."""
    head = target + (": " + annotation.flat if annotation is not None else "")
    if value is None:
        if annotation is None or _fits(indent + head):
            return [indent + head]
        return _split_annotation(annotation, indent, target + ": ")
    if _fits(indent + head + " = " + value.flat):
        return [indent + head + " = " + value.flat]
    if isinstance(value, Seq) and (annotation is None or _fits(indent + head + " = " + value.head)):
        return split(value, indent, head + " = ")
    if _fits(indent + head + " = ("):
        inner = layout(value, indent + INDENT)
        # With an annotation that cannot split (one name), ruff parenthesizes a bracketed
        # value only when every line then fits; else it splits the value's own brackets.
        if not (isinstance(annotation, Atom) and isinstance(value, Seq)) or all(
            _fits(line) for line in inner
        ):
            return [indent + head + " = (", *inner, indent + ")"]
        return split(value, indent, head + " = ")
    if annotation is None:
        return split(value, indent, head + " = ")
    lines = _split_annotation(annotation, indent, target + ": ")
    last = lines.pop()[len(indent) :]
    return lines + layout(value, indent, last + " = ")


def _split_annotation(annotation: Expr, indent: str, lead: str) -> list[str]:
    if isinstance(annotation, Union):
        return [indent + lead + "(", *layout(annotation, indent + INDENT), indent + ")"]
    return split(annotation, indent, lead)


def py_str(text: str) -> str:
    """A string literal as ruff writes it: double quotes unless the text holds more double
    than single quotes; escapes for backslashes, the quote, control and non-ASCII characters
    (the generated file is pure ASCII, so no linter flags ambiguous characters)."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    return quote + _escape(text, quote) + quote


_SIMPLE_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(text: str, quote: str) -> str:
    if text.isascii() and text.isprintable() and "\\" not in text and quote not in text:
        return text
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def docstring_lines(text: str, indent: str) -> list[str]:
    """A docstring as ruff formats it: first line stripped, common indentation of the other
    lines removed, trailing blanks dropped, closing quotes on their own line when multi-line."""
    body = _escape(text.replace('"""', '\\"\\"\\"'), "")
    raw = [line.rstrip() for line in body.strip().splitlines()]
    if not raw:
        return []
    rest = raw[1:]
    margin = min((len(line) - len(line.lstrip(" ")) for line in rest if line), default=0)
    rest = [line[margin:] for line in rest]
    first = raw[0].lstrip()
    if first.startswith('"'):
        first = " " + first
    if not rest:
        end = " " if first.endswith('"') else ""
        return [f'{indent}"""{first}{end}"""']
    return [
        f'{indent}"""{first}',
        *[indent + line if line else "" for line in rest],
        f'{indent}"""',
    ]


def literal(value: Any) -> Expr:
    """A JSON value as a Python expression."""
    if value is None or isinstance(value, bool):
        return Atom(repr(value))
    if isinstance(value, int):
        return Atom(str(value))
    if isinstance(value, float):
        return Atom(repr(value))
    if isinstance(value, str):
        return Atom(py_str(value))
    if isinstance(value, list):
        return Seq("[", tuple(literal(v) for v in value), "]")
    if isinstance(value, dict):
        return Seq(
            "{", tuple(Pair(py_str(str(k)) + ": ", literal(v)) for k, v in value.items()), "}"
        )
    raise TypeError(f"not a JSON value: {value!r}")


def call(name: str, args: Sequence[Expr]) -> Seq:
    return Seq(name + "(", tuple(args), ")")


def subscript(name: str, args: Sequence[Expr]) -> Seq:
    return Seq(name + "[", tuple(args), "]")
