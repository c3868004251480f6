"""Codegen reads manifests as YAML 1.2, as Kubernetes does (sigs.k8s.io/yaml), not 1.1.

Under PyYAML's YAML 1.1 an enum of ``=`` failed (the ``value`` tag has no constructor),
``yes``/``no``/``on``/``off`` became booleans and ``0755`` an octal number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml
from pydantic import ValidationError

from codegen import CrdError, from_text, generate, yaml12
from codegen.cli import main
from codegen.yaml12 import YamlError, load_all
from tests.support.codegen import load_module

PITFALLS = b"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.yaml12.example.com
spec:
  group: yaml12.example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              operator:
                type: string
                enum: [=, '!=', <, yes, no, on, off, y, n, ~]
              answer:
                type: string
                default: no
              mode:
                type: integer
                default: 0755
              octal:
                type: integer
                default: 0o17
              since:
                type: string
                default: 2001-12-14
              flag:
                type: boolean
                default: True
"""


def test_yaml_1_1_pitfalls_read_as_yaml_1_2() -> None:
    (doc,) = load_all(PITFALLS)
    spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props = spec["properties"]
    assert props["operator"]["enum"] == ["=", "!=", "<", "yes", "no", "on", "off", "y", "n", None]
    assert props["answer"]["default"] == "no"
    assert props["mode"]["default"] == 755  # no leading-zero octal in YAML 1.2
    assert props["octal"]["default"] == 15  # 0o17 is the 1.2 spelling
    assert props["since"]["default"] == "2001-12-14"  # JSON has no dates
    assert props["flag"]["default"] is True


def test_codegen_of_the_pitfalls(tmp_path: Path) -> None:
    module = load_module(generate([from_text("widgets.yaml", PITFALLS)]), tmp_path, "yaml12")
    Spec: Any = module.WidgetSpec
    operator = Spec.model_fields["operator"].annotation
    assert get_args(get_args(operator)[0]) == ("=", "!=", "<", "yes", "no", "on", "off", "y", "n")
    spec = Spec.model_validate({"operator": "="})
    assert (spec.answer, spec.mode, spec.octal, spec.since, spec.flag) == (
        "no",
        755,
        15,
        "2001-12-14",
        True,
    )
    with pytest.raises(ValidationError):
        Spec.model_validate({"operator": True})


def test_json_manifests_still_read() -> None:
    (doc,) = load_all(PITFALLS)
    source = from_text("crd.json", json.dumps({"kind": "List", "items": [doc]}).encode())
    assert source.crds == (doc,)
    assert load_all(b'{"a": [1, 2.5, true, null, "yes"]}') == [{"a": [1, 2.5, True, None, "yes"]}]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a: [1, 2", "expected ',' or ']' (line 2, column 1)"),
        (b"a: 1\na: 2\n", 'found duplicate key "a"'),
        (b"a:\n\t- b\n", "(line 2, column 1)"),
        (b"\xff\xfe\x00", "not UTF-8 text"),
    ],
)
def test_yaml_errors_are_one_line(data: bytes, message: str) -> None:
    with pytest.raises(YamlError) as info:
        load_all(data)
    assert "\n" not in str(info.value) and message in str(info.value)
    with pytest.raises(CrdError, match=r"^bad\.yaml: not YAML/JSON: "):
        from_text("bad.yaml", data)


def test_command_reports_bad_yaml_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"spec:\n  - [unclosed\n")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.yaml: not YAML/JSON: " in err and "line 3" in err


def test_core_schema_details_and_both_parsers() -> None:
    """The YAML 1.2 core schema's resolution, the same with libyaml's parser and PyYAML's
    pure-Python one; merge keys work."""
    text = """\
ints: [0, -0, +3, 0755, 0o17, 0x1F, 1_000, 0b11, 1:20]
floats: [1.5, .5, 1e3, -.Inf, .INF]
bools: [true, True, TRUE, tRue, yes, On]
nulls: [~, null, NULL, nUll, '']
base: &base {x: 1, y: 2}
merged:
  <<: *base
  y: 3
"""
    (doc,) = load_all(text)
    assert doc["ints"] == [0, 0, 3, 755, 15, 31, "1_000", "0b11", "1:20"]
    assert doc["floats"] == [1.5, 0.5, 1000.0, float("-inf"), float("inf")]
    assert doc["bools"] == [True, True, True, "tRue", "yes", "On"]
    assert doc["nulls"] == [None, None, None, "nUll", ""]
    assert doc["merged"] == {"x": 1, "y": 3}
    if yaml.__with_libyaml__:
        assert yaml12._Loader.__name__ == "_CLoader"  # fast: libyaml parses
    assert list(yaml.load_all(text, Loader=yaml12._PyLoader)) == [doc]
    assert list(yaml.load_all(PITFALLS.decode(), Loader=yaml12._PyLoader)) == load_all(PITFALLS)
