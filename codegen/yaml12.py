"""Manifests read as YAML 1.2 (core schema), into JSON-like values.

kubectl and kube-apiserver turn YAML into JSON (sigs.k8s.io/yaml) before decoding it. PyYAML's
loaders resolve plain scalars by YAML 1.1's rules, where a CRD's ``enum: [=]`` fails (``=`` is
the ``value`` tag), ``yes``/``on`` are booleans and ``0755`` is octal. Here plain scalars are
resolved by the YAML 1.2 core schema (the syntax is parsed by PyYAML, with its C parser when
present: ~15 times faster than a pure-Python YAML 1.2 loader on a 540 KB CRD):

- booleans are ``true``/``false`` (also ``True``, ``TRUE``, ...); ``yes``, ``no``, ``on``,
  ``off``, ``y``, ``n`` and ``=`` are strings (sigs.k8s.io/yaml's go-yaml v2 still takes
  ``yes``/``on`` for booleans where the target type does not say string: quote them in
  manifests meant for both);
- integers are decimal, ``0o`` octal or ``0x`` hex: ``0755`` is 755; ``1_000`` is a string;
- ``null``, ``~`` and empty values are null; ``.inf``, ``.nan`` and decimal floats are floats;
- anything else, timestamps included, is a string (JSON has no dates);
- ``<<`` merge keys work; a duplicate key is an error.

Errors are :class:`YamlError` with a one-line message naming the line and column.
"""

from __future__ import annotations

import re
import typing
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, ScalarNode
from yaml.resolver import BaseResolver

__all__ = ["YamlError", "load_all"]


class YamlError(ValueError):
    """The text is not YAML (or JSON); the message is one line."""


class _Resolver(BaseResolver):
    """Plain scalars resolved by the YAML 1.2 core schema (spec 10.3.2)."""


for _tag, _pattern, _first in (
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    (
        "float",
        r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
        r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)",
        "-+0123456789.",
    ),
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("merge", r"<<", "<"),
):
    _Resolver.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first)
    )


class _Constructor(SafeConstructor):
    """SafeConstructor with YAML 1.2 integers and duplicate keys refused."""

    def construct_yaml_int(self, node: ScalarNode) -> int:
        text = str(self.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:
                continue  # an unhashable key: SafeConstructor reports it
            if first is not key_node:
                name = f'"{key}"' if isinstance(key, str) else repr(key)
                raise ConstructorError(
                    None, None, f"found duplicate key {name}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


_YAML_INT = "tag:yaml.org,2002:int"
typing.cast(Any, _Constructor).add_constructor(_YAML_INT, _Constructor.construct_yaml_int)


class _PyLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    _Constructor,
    _Resolver,
):
    """The loader in pure Python (PyYAML built without libyaml)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Constructor.__init__(self)
        _Resolver.__init__(self)


_CParser: Any = getattr(yaml.cyaml, "CParser", None) if yaml.__with_libyaml__ else None
_Loader: Any = _PyLoader
if _CParser is not None:

    class _CLoader(_CParser, _Constructor, _Resolver):
        """libyaml's parser, this module's resolution."""

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _Constructor.__init__(self)
            _Resolver.__init__(self)

    _Loader = _CLoader


def load_all(data: bytes | str) -> list[Any]:
    """Every document of ``data`` (empty documents as ``None``)."""
    try:
        if isinstance(data, bytes):
            data = data.decode("utf-8-sig")
        return list(yaml.load_all(data, Loader=_Loader))
    except UnicodeDecodeError as err:
        raise YamlError(f"not UTF-8 text (byte {err.start})") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        what = " ".join(str(err.problem or err.context or "invalid YAML").split())
        raise YamlError(f"{what}{where}") from None
    except yaml.YAMLError as err:
        raise YamlError(" ".join(str(err).split())) from None
