"""API errors are caught by type (``except NotFound:``), not the Go way.

A handler ``except Exception as e:`` whose body then asks ``is_not_found(e)`` (or any other
``is_*`` predicate of :mod:`kube_runtime.client.errors`) hides which errors the code expects
and makes every other error take a detour through an ``if``/``raise``. Python says the same
with ``except NotFound:`` (``except (NotFound, Conflict) as e:`` for several), and a second
``except Exception`` clause where other errors are handled too. This test walks the source
of the shipped packages and names each ``file:line`` that still does it. The predicates
themselves stay public API (for code that holds an error it did not catch).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kube_runtime.client import errors

ROOT = Path(__file__).resolve().parents[3]
#: The packages checked (tests may use the predicates freely).
CHECKED = ("kube_runtime", "controllers", "codegen", "examples")
#: The predicates of kube_runtime.client.errors: ``is_not_found``, ``is_conflict``, ...
PREDICATES = frozenset(name for name in errors.__all__ if name.startswith("is_"))
_BROAD = frozenset({"Exception", "BaseException"})
#: A predicate's name as a word: a source without one cannot call one (not worth parsing).
_NAMES_A_PREDICATE = re.compile(r"\b(?:" + "|".join(sorted(PREDICATES)) + r")\b")


def _is_broad(handler: ast.ExceptHandler) -> bool:
    """``except Exception`` / ``except BaseException`` (alone or in a tuple)."""
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in _BROAD for t in types)


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):  # errors.is_not_found(e)
        return call.func.attr
    return None


def go_style_catches(source: str) -> Iterator[tuple[int, str]]:
    """``(line, predicate)`` for each broad handler of ``source`` that tests the caught
    error with an ``is_*`` predicate (the handler's line)."""
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ExceptHandler) and node.name and _is_broad(node)):
            continue
        body = ast.Module(body=node.body, type_ignores=[])
        for sub in ast.walk(body):
            if not isinstance(sub, ast.Call):
                continue
            name = _called_name(sub)
            first = sub.args[0] if sub.args else None
            if name in PREDICATES and isinstance(first, ast.Name) and first.id == node.name:
                yield node.lineno, name
                break


def may_catch_go_style(source: str) -> bool:
    """False when ``source`` names no predicate, so :func:`go_style_catches` finds nothing
    in it (parsing all ~250 files took ~1 s of CPU; ~5 name a predicate)."""
    return _NAMES_A_PREDICATE.search(source) is not None


def _sources() -> Iterator[Path]:
    for package in CHECKED:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_the_predicates_are_known() -> None:
    assert {"is_not_found", "is_conflict", "is_already_exists", "is_forbidden"} <= PREDICATES


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "try:\n    f()\nexcept Exception as e:\n    if not is_not_found(e):\n        raise\n",
            [(3, "is_not_found")],
        ),
        (
            "try:\n    f()\nexcept BaseException as err:\n"
            "    level = 1 if errors.is_conflict(err) else 2\n",
            [(3, "is_conflict")],
        ),
        (
            "try:\n    f()\nexcept (ValueError, Exception) as e:\n"
            "    if is_forbidden(e):\n        pass\n",
            [(3, "is_forbidden")],
        ),
        # Caught by type: fine.
        ("try:\n    f()\nexcept NotFound:\n    pass\n", []),
        # A predicate on something other than the caught error: fine.
        ("try:\n    f()\nexcept Exception as e:\n    if is_not_found(other):\n        raise\n", []),
        # Not one of the API-error predicates: fine.
        ("try:\n    f()\nexcept Exception as e:\n    if is_transient(e):\n        raise\n", []),
    ],
)
def test_the_check_finds_go_style_catches(source: str, expected: list[tuple[int, str]]) -> None:
    assert list(go_style_catches(source)) == expected
    if expected:  # the pre-filter of test_no_go_style_catches keeps every such source
        assert may_catch_go_style(source)


def test_no_go_style_catches() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: except Exception, then {predicate}(); "
        "catch the error type instead (except NotFound: ...)"
        for path in _sources()
        if may_catch_go_style(text := path.read_text(encoding="utf-8"))
        for line, predicate in go_style_catches(text)
    ]
    assert not found, "\n".join(found)
