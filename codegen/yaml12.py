"""Manifests read as YAML 1.2 (core schema), into JSON-like values.

kubectl and kube-apiserver turn YAML into JSON (sigs.k8s.io/yaml) before decoding it. PyYAML
reads YAML 1.1, where a CRD's ``enum: [=]`` fails (``=`` is the ``value`` tag) and
``0755`` is an octal number. Here (ruamel.yaml, YAML 1.2 core schema):

- only ``true``/``false`` (any case) are booleans; ``yes``, ``no``, ``on``, ``off``, ``y``,
  ``n`` and ``=`` are strings (sigs.k8s.io/yaml's go-yaml v2 still takes ``yes``/``on`` for
  booleans where the target type does not say string: quote them in manifests meant for
  both);
- ``0755`` is decimal 755, octal is spelled ``0o755``;
- an unquoted timestamp stays a string (JSON has no dates), as sigs.k8s.io/yaml keeps it;
- a duplicate key is an error.

Errors are :class:`YamlError` with a one-line message naming the line and column.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import ScalarNode

__all__ = ["YamlError", "load_all"]


class YamlError(ValueError):
    """The text is not YAML (or JSON); the message is one line."""


class _Constructor(SafeConstructor):
    """YAML 1.2 safe constructor with sigs.k8s.io/yaml's JSON-minded exceptions."""

    def construct_as_string(self, node: ScalarNode) -> str:
        return str(self.construct_scalar(node))


# Own copy of the table (add_constructor copies it on first use), so ruamel's own
# SafeConstructor, which other code in the process may use, is left as it is.
for _tag in ("tag:yaml.org,2002:value", "tag:yaml.org,2002:timestamp"):
    _Constructor.add_constructor(_tag, _Constructor.construct_as_string)


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.Constructor = _Constructor
    return yaml


def load_all(data: bytes | str) -> list[Any]:
    """Every document of ``data`` (empty documents as ``None``)."""
    try:
        if isinstance(data, bytes):
            data = data.decode("utf-8-sig")
        return list(_yaml().load_all(data))
    except UnicodeDecodeError as err:
        raise YamlError(f"not UTF-8 text (byte {err.start})") from None
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        what = " ".join(str(err.problem or err.context or "invalid YAML").split())
        raise YamlError(f"{what}{where}") from None
    except YAMLError as err:
        raise YamlError(" ".join(str(err).split())) from None
