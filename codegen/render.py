"""Render classes (:mod:`codegen.ir`) as a formatted Python module.

The text is final: ``ruff format`` and ``ruff check`` (project configuration) leave it as is,
and it is a pure function of its input (same classes -> same bytes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from codegen.ir import CrdSettings, FieldDef, ModelDef, ResourceInfo
from codegen.naming import IMPORT_SOURCES
from codegen.pyexpr import (
    INDENT,
    LINE_LENGTH,
    Atom,
    Expr,
    Pair,
    Seq,
    call,
    docstring_lines,
    literal,
    py_str,
    statement,
    subscript,
)

__all__ = ["render_module"]

_SECTIONS = (
    ("typing",),
    ("pydantic",),
    ("kube_runtime.client", "kube_runtime.models"),
)


def render_module(
    header: Sequence[str], docstring: str, models: Sequence[ModelDef], imports: Iterable[str]
) -> str:
    """The module text: ``header`` comment lines, docstring, imports, classes."""
    used = set(imports) | {"KubeModel"}
    if any(m.resource is not None and m.resource.crd is not None for m in models):
        used.add("crd")
    out = [f"# {line}".rstrip() for line in header]
    out += docstring_lines(docstring, "")
    out.append("")
    out += _imports(used)
    for i, model in enumerate(models):
        # isort wants one blank line between the imports and a first statement that is
        # not a class
        gap = [""] if i == 0 and model.alias_of is not None else ["", ""]
        out += [*gap, *_class(model)]
    return "\n".join(out) + "\n"


def _imports(used: set[str]) -> list[str]:
    lines: list[str] = []
    by_module = {module: [n for n in names if n in used] for module, names in IMPORT_SOURCES}
    for section in _SECTIONS:
        block = []
        for module in section:
            names = sorted(by_module[module], key=lambda n: (not n[:1].isupper(), n))
            if not names:
                continue
            one = f"from {module} import {', '.join(names)}"
            if len(one) <= LINE_LENGTH:
                block.append(one)
            else:
                block += [f"from {module} import (", *[f"{INDENT}{n}," for n in names], ")"]
        if block:
            lines += [*block, ""]
    return lines[:-1]


def _class(model: ModelDef) -> list[str]:
    if model.alias_of is not None:
        text = f"``{model.path}``: the shared :class:`kube_runtime.models.{model.alias_of}`."
        alias = statement("", model.name, None, Atom(model.alias_of))
        return [*alias, *docstring_lines(text, "")]
    opening = f"class {model.name}(KubeModel):"
    if len(opening) <= LINE_LENGTH:
        lines = [opening]
    else:
        lines = [f"class {model.name}(", f"{INDENT}KubeModel", "):"]
    doc = docstring_lines(model.description or f"``{model.path}``.", INDENT)
    lines += [*doc, ""]
    if model.resource is not None:
        lines += _resource(model.resource)
    for f in model.fields:
        lines += _field(f)
    return lines


def _resource(info: ResourceInfo) -> list[str]:
    if info.subresources:
        items = tuple(Atom(py_str(v)) for v in sorted(info.subresources))
        subresources: Expr = call("frozenset", [Seq("{", items, "}")])
    else:
        subresources = Atom("frozenset()")
    value = call(
        "Resource",
        [
            Pair("group=", Atom(py_str(info.group))),
            Pair("version=", Atom(py_str(info.version))),
            Pair("kind=", Atom(py_str(info.kind))),
            Pair("plural=", Atom(py_str(info.plural))),
            Pair("namespaced=", Atom(repr(info.namespaced))),
            Pair("subresources=", subresources),
            Pair("short_names=", _tuple(info.short_names)),
        ],
    )
    lines = statement(INDENT, "__kube_resource__", subscript("ClassVar", [Atom("Resource")]), value)
    if info.crd is not None:
        annotation = subscript("ClassVar", [Atom("crd.Config")])
        lines += statement(INDENT, "__crd__", annotation, _crd_config(info.crd))
    return lines


def _crd_config(settings: CrdSettings) -> Expr:
    """``crd.Config(...)`` with the settings that differ from its defaults."""
    args: list[Expr] = []
    if settings.storage:
        args.append(Pair("storage=", Atom("True")))
    if not settings.served:
        args.append(Pair("served=", Atom("False")))
    if settings.deprecated:
        args.append(Pair("deprecated=", Atom("True")))
    if settings.deprecation_warning is not None:
        args.append(Pair("deprecation_warning=", Atom(py_str(settings.deprecation_warning))))
    if settings.printer_columns:
        columns = tuple(_printer_column(c) for c in settings.printer_columns)
        args.append(Pair("printer_columns=", Seq("[", columns, "]")))
    if settings.categories:
        args.append(Pair("categories=", _tuple(settings.categories)))
    if settings.singular is not None:
        args.append(Pair("singular=", Atom(py_str(settings.singular))))
    if settings.list_kind is not None:
        args.append(Pair("list_kind=", Atom(py_str(settings.list_kind))))
    if settings.scale is not None:
        args.append(Pair("scale=", _scale(settings.scale)))
    if settings.extra:
        args.append(Pair("extra=", literal(settings.extra)))
    return call("crd.Config", args)


# additionalPrinterColumns keys -> crd.PrinterColumn arguments, in its field order
_COLUMN_KEYS = (
    ("name", "name="),
    ("jsonPath", "json_path="),
    ("type", "type="),
    ("description", "description="),
    ("format", "format="),
    ("priority", "priority="),
)


def _printer_column(column: dict[str, object]) -> Expr:
    args = [Pair(kw, literal(column[key])) for key, kw in _COLUMN_KEYS if key in column]
    return call("crd.PrinterColumn", args)


def _scale(scale: dict[str, object]) -> Expr:
    keys = (
        ("specReplicasPath", "spec_replicas_path="),
        ("statusReplicasPath", "status_replicas_path="),
        ("labelSelectorPath", "label_selector_path="),
    )
    return call("crd.Scale", [Pair(kw, literal(scale[key])) for key, kw in keys if key in scale])


def _tuple(values: Sequence[str]) -> Expr:
    if len(values) == 1:
        return Atom(f"({py_str(values[0])},)")
    return Seq("(", tuple(Atom(py_str(v)) for v in values), ")")


def _field(f: FieldDef) -> list[str]:
    value: Expr | None
    if f.kwargs:
        args = ([Pair("default=", f.default)] if f.default is not None else []) + f.kwargs
        value = call("Field", args)
    else:
        value = f.default
    return statement(INDENT, f.name, f.annotation, value)
