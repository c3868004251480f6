"""CEL validation rules of CRD schemas (``x-kubernetes-validations``), as kube-apiserver
evaluates them since 1.25 (``apiextensions-apiserver/pkg/apiserver/schema/cel``).

The expressions run on the ``common-expression-language`` package (a Python binding of a
Rust CEL interpreter) with its extension library, which covers the string, list, math and set
functions Kubernetes adds, plus Kubernetes' ``isSorted``, ``find`` and ``findAll``. Why that
package rather than ``cel-python``: it evaluates a typical rule in about 3 us against about
100 us, compiles in microseconds, and reports which variables and functions an expression
references, which gives compile-time checks close to cel-go's.

Contracts:

* :func:`compile_validator` turns a structural schema into a :class:`CelNode` tree holding the
  compiled rules of every node that has some (None when the schema has none). Rules that do
  not compile are kept as errors and reported on every write, as upstream does for a rule that
  slipped through; CRD validation rejects them first (:func:`rule_compile_errors`).
* :func:`validate` returns ``(field, reason, message)`` triples in upstream's wording: a
  failed rule is ``Invalid value: "<schema type>": <message>`` (``failed rule: <rule>`` without
  a message; ``messageExpression`` when it evaluates to a non-empty one-line string), at the
  node's path, or at ``fieldPath`` below it; ``reason`` picks Forbidden, Required or
  Duplicate instead. A rule that fails to evaluate (no such key, division by zero, ...) is
  ``<error> evaluating rule: <rule>``.
* ``self`` is the node's value; at the root of the resource (and of an embedded resource)
  it has ``apiVersion``, ``kind`` and ``metadata`` with only ``name`` and ``generateName``.
  Null values are not validated.
* Transition rules (those that reference ``oldSelf``) run only on updates, and only where the
  old value can be correlated: object properties (unless ``x-kubernetes-map-type: atomic``),
  map values, and items of ``x-kubernetes-list-type: map`` lists matched by their keys.

Not implemented: cel-go's static type checking against the schema (a rule comparing a
string to an int compiles here and fails when evaluated), the cost budget, validation
ratcheting and ``optionalOldSelf``.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import itertools
import json
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import cel

from kube_runtime.client._apifacts import DUPLICATE, FORBIDDEN, INVALID, REQUIRED

__all__ = [
    "CelNode",
    "compile_validator",
    "rule_compile_errors",
    "validate",
]

#: The reasons a rule may give its error (any other is ``FieldValueInvalid``).
_REASONS: Final = frozenset({INVALID, FORBIDDEN, REQUIRED, DUPLICATE})
_MAX_MESSAGE_BYTES: Final = 5 * 1024


def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(items))


def _find(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, text)]
    return found if limit < 0 else found[:limit]


_KUBERNETES_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "isSorted": _is_sorted,
    "find": _find,
    "findAll": _find_all,
}
#: CEL's standard functions and macros, by name (operators are ``_x_``/``@x`` and not listed).
_STANDARD: Final = frozenset(
    {
        "size", "int", "uint", "double", "string", "bytes", "bool", "type", "dyn", "duration",
        "timestamp", "matches", "startsWith", "endsWith", "contains", "has", "all", "exists",
        "exists_one", "map", "filter", "getDate", "getDayOfMonth", "getDayOfWeek",
        "getDayOfYear", "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth",
        "getSeconds", "max", "min",
    }
)  # fmt: skip
#: A named function (operators are reported as ``_+_``, ``!_``, ``@in``, ...).
_FUNCTION_NAME: Final = re.compile(r"[A-Za-z][\w.]*")


class _DeferredModule(types.ModuleType):
    """A module whose code runs on the first access to a name it does not have yet."""

    _lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        with _DeferredModule._lock:
            if type(self) is _DeferredModule:
                spec = self.__spec__
                assert spec is not None and spec.loader is not None
                self.__class__ = types.ModuleType  # type: ignore[assignment]  # a plain module now
                spec.loader.exec_module(self)
        return getattr(self, name)


@functools.cache
def _cel() -> types.ModuleType:
    """The ``cel`` package, imported on the first rule compiled.

    Its ``__init__`` also imports its command-line module (typer, rich, prompt_toolkit:
    about 0.35 s, ten times the interpreter itself): unless ``cel`` is already imported,
    ``cel.cli`` is registered first as a module whose code runs when one of its names is
    first used, so ``cel.cli`` and the ``cel`` command behave as before."""
    if "cel" not in sys.modules and "cel.cli" not in sys.modules:
        package = importlib.util.find_spec("cel")
        locations = package.submodule_search_locations if package is not None else None
        spec = importlib.machinery.PathFinder.find_spec("cel.cli", locations)
        if spec is not None and spec.loader is not None:
            cli = importlib.util.module_from_spec(spec)
            cli.__class__ = _DeferredModule
            sys.modules["cel.cli"] = cli
    import cel
    import cel.stdlib

    return cel


@functools.cache
def _known_functions() -> frozenset[str]:
    """CEL's standard functions, the ``cel`` package's extensions and Kubernetes' own."""
    stdlib = _cel().stdlib
    return _STANDARD | set(stdlib.STDLIB_FUNCTIONS) | set(_KUBERNETES_FUNCTIONS)


def _context(variables: Mapping[str, Any]) -> cel.Context:
    lib = _cel()
    context = lib.Context()
    lib.stdlib.add_stdlib_to_context(context)
    for name, fn in _KUBERNETES_FUNCTIONS.items():
        context.add_function(name, fn)
    for name, value in variables.items():
        context.add_variable(name, value)
    return context


def _compile(expression: str, *, transition_allowed: bool = True) -> tuple[Any, bool]:
    """``(program, uses oldSelf)``; ValueError with cel-go-like wording when it does not
    compile (a syntax error, an undeclared reference)."""
    program = _cel().compile(expression)
    known = _known_functions()
    unknown = sorted(
        name for name in program.functions() if _FUNCTION_NAME.fullmatch(name) and name not in known
    )
    if unknown:
        raise ValueError(f"ERROR: <input>: undeclared reference to '{unknown[0]}'")
    uses_old_self = "oldSelf" in program.variables()
    if uses_old_self and not transition_allowed:
        raise ValueError("ERROR: <input>: undeclared reference to 'oldSelf'")
    return program, uses_old_self


@dataclass(frozen=True)
class _Rule:
    source: str
    program: Any | None
    uses_old_self: bool
    message: str
    message_expression: Any | None
    field_path: tuple[str, ...]
    reason: str
    compile_error: str = ""

    def error_string(self) -> str:
        """Upstream's ``ruleErrorString``: the message, else the rule."""
        return self.message or self.source.strip()


@dataclass
class CelNode:
    """The compiled rules of one schema node, and the nodes below it that have some."""

    type_label: str
    rules: tuple[_Rule, ...] = ()
    properties: dict[str, CelNode] = field(default_factory=dict)
    items: CelNode | None = None
    additional: CelNode | None = None
    resource_root: bool = False
    correlatable_map: bool = True
    list_map_keys: tuple[str, ...] | None = None


def _field_path(raw: str) -> tuple[str, ...]:
    """``.spec.a['b.c']`` as ``("spec", "a", "b.c")`` (upstream ``ValidFieldPath``, without
    the check against the schema)."""
    segments: list[str] = []
    for dotted, quoted in re.findall(r"\.([^.\[\]]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]", raw):
        segments.append(dotted or quoted.replace("\\'", "'"))
    return tuple(segments)


def _rule(raw: Mapping[str, Any]) -> _Rule:
    source = str(raw.get("rule") or "")
    message = str(raw.get("message") or "").strip()
    reason = str(raw.get("reason") or "")
    reason = reason if reason in _REASONS else INVALID
    path = _field_path(str(raw.get("fieldPath") or ""))
    try:
        program, uses_old_self = _compile(source)
        expression = raw.get("messageExpression")
        message_program = (
            _compile(str(expression), transition_allowed=True)[0] if expression else None
        )
    except (ValueError, RuntimeError) as err:
        return _Rule(source, None, False, message, None, path, reason, str(err))
    return _Rule(source, program, uses_old_self, message, message_program, path, reason)


def compile_validator(schema: Mapping[str, Any] | None, *, root: bool = True) -> CelNode | None:
    """The :class:`CelNode` tree of ``schema`` (a structural schema), None without any rule."""
    if not isinstance(schema, Mapping):
        return None
    rules = tuple(
        _rule(r) for r in schema.get("x-kubernetes-validations") or () if isinstance(r, Mapping)
    )
    properties = {
        name: node
        for name, sub in (schema.get("properties") or {}).items()
        if (node := compile_validator(sub, root=False)) is not None
    }
    items = compile_validator(schema.get("items"), root=False)
    additional_schema = schema.get("additionalProperties")
    additional = (
        compile_validator(additional_schema, root=False)
        if isinstance(additional_schema, Mapping)
        else None
    )
    if not rules and not properties and items is None and additional is None:
        return None
    keys = schema.get("x-kubernetes-list-map-keys")
    return CelNode(
        type_label=str(schema.get("type") or ""),
        rules=rules,
        properties=properties,
        items=items,
        additional=additional,
        resource_root=root or bool(schema.get("x-kubernetes-embedded-resource")),
        correlatable_map=schema.get("x-kubernetes-map-type") != "atomic",
        list_map_keys=(
            tuple(str(k) for k in keys)
            if schema.get("x-kubernetes-list-type") == "map" and isinstance(keys, list)
            else None
        ),
    )


def rule_compile_errors(path: str, schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(field, message)`` for every rule of this schema node (not below) that does not
    compile, as CRD validation reports them."""
    found: list[tuple[str, str]] = []
    for i, raw in enumerate(schema.get("x-kubernetes-validations") or ()):
        if not isinstance(raw, Mapping):
            continue
        base = f"{path}.x-kubernetes-validations[{i}]"
        source = raw.get("rule")
        if not source:
            found.append((f"{base}.rule", "Required value"))
            continue
        try:
            _compile(str(source))
        except (ValueError, RuntimeError) as err:
            found.append(
                (f"{base}.rule", f"Invalid value: {json.dumps(source)}: compilation failed: {err}")
            )
        expression = raw.get("messageExpression")
        if expression:
            try:
                _compile(str(expression))
            except (ValueError, RuntimeError) as err:
                found.append(
                    (
                        f"{base}.messageExpression",
                        f"Invalid value: {json.dumps(expression)}: "
                        f"messageExpression compilation failed: {err}",
                    )
                )
    return found


Triple = tuple[str, str, str]


def _join(path: str, segment: str, *, key: bool = False) -> str:
    if key:
        return f"{path}[{segment}]"
    return f"{path}.{segment}" if path else segment


def _as_self(value: Any, node: CelNode) -> Any:
    if node.resource_root and isinstance(value, Mapping):
        raw = value.get("metadata")
        metadata: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        visible = {k: metadata[k] for k in ("name", "generateName") if k in metadata}
        return {**value, "metadata": visible}
    return value


def _failure(path: str, node: CelNode, rule: _Rule, detail: str) -> Triple:
    value = json.dumps(node.type_label)
    if rule.reason == FORBIDDEN:
        return (path, FORBIDDEN, f"Forbidden: {detail}")
    if rule.reason == REQUIRED:
        return (path, REQUIRED, f"Required value: {detail}")
    if rule.reason == DUPLICATE:
        return (path, DUPLICATE, f"Duplicate value: {value}")
    return (path, INVALID, f"Invalid value: {value}: {detail}")


def _message(rule: _Rule, variables: Mapping[str, Any]) -> str:
    if rule.message_expression is not None:
        try:
            text = rule.message_expression.execute(_context(variables))
        except Exception:  # upstream logs it and falls back to the message
            text = None
        if isinstance(text, str):
            text = text.strip()
            if text and "\n" not in text and len(text.encode()) <= _MAX_MESSAGE_BYTES:
                return text
    return rule.message or f"failed rule: {rule.source.strip()}"


def _run_rules(node: CelNode, value: Any, old: Any, path: str, out: list[Triple]) -> None:
    variables: dict[str, Any] | None = None
    for rule in node.rules:
        if rule.program is None:
            out.append(
                (path, INVALID, f"Invalid value: {json.dumps(node.type_label)}: "
                 f"rule compile error: {rule.compile_error}")
            )  # fmt: skip
            continue
        if rule.uses_old_self and old is None:
            continue  # a transition rule needs a correlated old value
        if variables is None:
            variables = {"self": _as_self(value, node)}
        scope = {**variables, "oldSelf": _as_self(old, node)} if rule.uses_old_self else variables
        try:
            result = rule.program.execute(_context(scope))
        except Exception as err:  # no such key, index out of bounds, division by zero, ...
            detail = f"no such key: {err.args[0]}" if isinstance(err, KeyError) else str(err)
            out.append(
                (path, INVALID, f"Invalid value: {json.dumps(node.type_label)}: "
                 f"{detail} evaluating rule: {rule.error_string()}")
            )  # fmt: skip
            continue
        if result is True:
            continue
        target = path
        for segment in rule.field_path:
            target = _join(target, segment)
        out.append(_failure(target, node, rule, _message(rule, scope)))


def _old_item(item: Any, old_items: Iterable[Any], keys: tuple[str, ...]) -> Any:
    if not isinstance(item, Mapping):
        return None
    wanted = tuple(item.get(k) for k in keys)
    for candidate in old_items:
        if isinstance(candidate, Mapping) and tuple(candidate.get(k) for k in keys) == wanted:
            return candidate
    return None


def _walk(node: CelNode, value: Any, old: Any, path: str, out: list[Triple]) -> None:
    if value is None:
        return
    _run_rules(node, value, old, path, out)
    if isinstance(value, Mapping):
        old_map = old if isinstance(old, Mapping) and node.correlatable_map else {}
        for key, child in value.items():
            sub = node.properties.get(key)
            if sub is not None:
                _walk(sub, child, old_map.get(key), _join(path, key), out)
            elif node.additional is not None and key not in node.properties:
                _walk(node.additional, child, old_map.get(key), _join(path, key, key=True), out)
    elif isinstance(value, list) and node.items is not None:
        old_list = old if isinstance(old, list) and node.list_map_keys else []
        for i, item in enumerate(value):
            previous = _old_item(item, old_list, node.list_map_keys) if node.list_map_keys else None
            _walk(node.items, item, previous, f"{path}[{i}]", out)


def validate(node: CelNode | None, obj: Any, old: Any = None) -> list[Triple]:
    """The failures of ``obj`` (``old``: the stored object on an update, else None) against
    the rules of ``node``, as ``(field, reason, message)``; empty when every rule holds."""
    if node is None:
        return []
    out: list[Triple] = []
    _walk(node, obj, old, "", out)
    return out
