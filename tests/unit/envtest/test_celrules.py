"""CEL validation rules of CRD schemas (kube_runtime.envtest.server.celrules), without HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kube_runtime.envtest.server import celrules
from tests.support.fresh_python import FreshPython

ROOT = Path(__file__).resolve().parents[3]


def _schema(rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-validations": rules, **extra}


def test_no_rules_no_validator() -> None:
    assert (
        celrules.compile_validator({"type": "object", "properties": {"a": {"type": "string"}}})
        is None
    )


def test_the_root_sees_only_name_and_generate_name_of_metadata() -> None:
    node = celrules.compile_validator(
        _schema([{"rule": "!has(self.metadata.labels) && self.metadata.name == 'x'"}])
    )
    obj = {"apiVersion": "v1", "metadata": {"name": "x", "labels": {"a": "b"}}}
    assert celrules.validate(node, obj) == []
    assert celrules.validate(node, {"metadata": {"name": "y"}})[0][0] == ""


def test_kubernetes_library_functions() -> None:
    node = celrules.compile_validator(
        _schema(
            [
                {"rule": "self.l.isSorted()"},
                {"rule": "self.s.find('[0-9]+') == '42'"},
                {"rule": "self.s.findAll('[a-z]').size() == 2"},
                {"rule": "self.s.lowerAscii().split('-').size() == 2"},
            ]
        )
    )
    assert celrules.validate(node, {"l": [1, 2, 2], "s": "ab-42"}) == []
    failures = celrules.validate(node, {"l": [2, 1], "s": "ab-42"})
    assert [f[2] for f in failures] == ['Invalid value: "object": failed rule: self.l.isSorted()']


def test_transition_rules_skip_creates_and_uncorrelated_items() -> None:
    item = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "down"}],
    }
    listed = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k"],
        "items": item,
    }
    atomic = {"type": "array", "items": item}
    node = celrules.compile_validator({"type": "object", "properties": {"m": listed, "a": atomic}})
    new = {"m": [{"k": "x", "v": 1}], "a": [{"v": 1}]}
    old = {"m": [{"k": "x", "v": 2}], "a": [{"v": 2}]}
    assert celrules.validate(node, new) == []  # a create: no old value
    assert celrules.validate(node, new, old) == [
        ("m[0]", "FieldValueInvalid", 'Invalid value: "object": down')
    ]  # the atomic list's items have no old value to compare with
    renamed = {"m": [{"k": "y", "v": 1}], "a": []}
    assert celrules.validate(node, renamed, old) == []


def test_compile_errors_name_the_rule() -> None:
    errors = celrules.rule_compile_errors(
        "spec.validation.openAPIV3Schema",
        _schema(
            [{"rule": "self.a >"}, {"rule": "self.a.nope()"}, {"rule": ""}, {"rule": "self.a > 1"}]
        ),
    )
    assert [field for field, _ in errors] == [
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule",
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[1].rule",
        "spec.validation.openAPIV3Schema.x-kubernetes-validations[2].rule",
    ]
    assert "Syntax error" in errors[0][1]
    assert "undeclared reference to 'nope'" in errors[1][1]
    assert errors[2][1] == "Required value"


def test_a_message_expression_that_is_not_a_one_line_string_falls_back() -> None:
    node = celrules.compile_validator(
        _schema([{"rule": "false", "message": "plain", "messageExpression": "'two\\nlines'"}])
    )
    assert celrules.validate(node, {})[0][2] == 'Invalid value: "object": plain'


def test_the_cel_package_loads_with_the_first_rule_and_its_command_line_when_used(
    fresh_python: FreshPython,
) -> None:
    """Importing the module loads no ``cel``; compiling a rule loads it without running its
    command-line module (typer, rich, prompt_toolkit), which still works when first used."""
    done = fresh_python.run(
        "import sys\n"
        "from kube_runtime.envtest.server import celrules\n"
        "print('cel' in sys.modules)\n"
        "node = celrules.compile_validator({'type': 'object', 'x-kubernetes-validations': "
        "[{'rule': 'self.a.lowerAscii() == \"x\"'}]})\n"
        "print(celrules.validate(node, {'a': 'X'}), celrules.validate(node, {'a': 'y'}) != [])\n"
        "print('app' in vars(sys.modules['cel.cli']))\n"
        "import cel\n"
        "from cel.cli import main\n"
        "print(callable(main), cel.cli.app is not None, 'app' in vars(sys.modules['cel.cli']))\n",
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["False", "[] True", "False", "True True True", ""]
