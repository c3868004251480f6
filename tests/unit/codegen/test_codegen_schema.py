"""codegen on handwritten schemas: Kubernetes extensions, names, nullability, defaults,
constraints, the CLI, and a large CRD (a full PodTemplateSpec embedded)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from codegen import CrdError, from_text, generate
from codegen.cli import main
from codegen.naming import class_part, field_name
from codegen.pyexpr import py_str
from tests.support.codegen import load_module, ruff_clean, wire


def crd(
    schema: dict[str, Any], *, kind: str = "Widget", versions: tuple[str, ...] = ("v1",)
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": kind, "plural": f"{kind.lower()}s", "listKind": f"{kind}List"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": i == 0,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": schema},
                }
                for i, v in enumerate(versions)
            ],
        },
    }


SPEC = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$"},
        "continue": {"type": "boolean"},
        "from": {"type": "string"},
        "class": {"type": "string"},
        "$ref": {"type": "string"},
        "dashed-key": {"type": "integer"},
        "dashedKey": {"type": "integer"},
        "0start": {"type": "string"},
        "json": {"type": "string"},
        "int": {"type": "integer"},
        "count": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 10},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMaximum": True, "maximum": 1},
        "mode": {"type": "string", "enum": ["Fast", "Slow"], "default": "Fast"},
        "port": {"x-kubernetes-int-or-string": True},
        "when": {"type": "string", "format": "date-time"},
        "blob": {"type": "string", "format": "byte"},
        "maybe": {"type": "string", "nullable": True},
        "tags": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "maxLength": 3},
            "x-kubernetes-list-type": "set",
        },
        "ports": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
            },
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
        },
        "limits": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": True}},
        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "anything": {"x-kubernetes-preserve-unknown-fields": True},
        "open": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"known": {"type": "string"}},
        },
        "embedded": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        },
        "child": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
        },
        "settings": {
            "type": "object",
            "default": {"level": 2},
            "properties": {"level": {"type": "integer"}},
        },
        "nullableRequired": {
            "type": "object",
            "nullable": True,
            "properties": {"a": {"type": "string"}},
        },
    },
}
SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": SPEC,
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}
SAMPLE = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w"},
    "spec": {
        "name": "abc",
        "continue": True,
        "from": "x",
        "class": "y",
        "$ref": "#/r",
        "dashed-key": 1,
        "dashedKey": 2,
        "0start": "z",
        "json": "{}",
        "int": 7,
        "count": 10,
        "ratio": 0.5,
        "port": "http",
        "when": "2024-01-01T00:00:00.000000Z",
        "blob": "aGVsbG8=",
        "maybe": None,
        "tags": ["a", "b"],
        "ports": [{"name": "http", "port": 80}],
        "limits": {"cpu": "500m", "pods": 10},
        "raw": {"anything": {"goes": [1, 2.5, None]}},
        "anything": [1, "two"],
        "open": {"known": "k", "unknown": {"deep": True}},
        "embedded": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "labels": {}},
            "data": {"k": "v"},
        },
        "child": {
            "apiVersion": "v1",
            "kind": "Thing",
            "metadata": {"name": "c"},
            "spec": {"size": 1},
        },
        "settings": {},
        "nullableRequired": None,
    },
    "status": {"phase": "Ready"},
}


@pytest.fixture(scope="module")
def widget(tmp_path_factory: pytest.TempPathFactory) -> Any:
    text = generate([from_text("widget.yaml", yaml.safe_dump(crd(SCHEMA)).encode())])
    return text, load_module(text, tmp_path_factory.mktemp("widget"), "widget")


def test_extension_heavy_schema_renders_clean_and_round_trips(widget: Any) -> None:
    text, mod = widget
    ruff_clean(text)
    obj = mod.Widget.model_validate(SAMPLE)
    assert wire(obj) == SAMPLE
    spec = obj.spec
    assert (spec.continue_, spec.from_, spec.class_, spec.ref, spec.json_, spec.int_) == (
        True,
        "x",
        "y",
        "#/r",
        "{}",
        7,
    )
    assert {spec.dashed_key, spec.dashed_key_2} == {1, 2}
    assert spec.f_0start == "z"
    assert spec.when == "2024-01-01T00:00:00.000000Z"  # verbatim, not re-rendered
    assert spec.limits == {"cpu": "500m", "pods": 10}
    assert spec.open.known == "k" and spec.open.model_extra == {"unknown": {"deep": True}}
    assert spec.embedded.kind == "ConfigMap" and spec.embedded.metadata.name == "cm"
    assert spec.child.metadata.name == "c" and spec.child.spec.size == 1
    assert spec.mode == "Fast" and "mode" not in wire(obj)["spec"]  # default, not dumped
    assert spec.settings.level is None  # the sample's {} is kept as given
    assert mod.WidgetSpec.model_validate({"name": "a"}).settings.level == 2  # object default


def test_nullable_fields_accept_null_and_required_stays_required(widget: Any) -> None:
    _, mod = widget
    with pytest.raises(ValidationError) as caught:
        mod.WidgetSpec.model_validate({"maybe": None})
    assert "name" in str(caught.value) and "Field required" in str(caught.value)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("name", "ABC", "should match pattern"),
        ("name", "abcdefghij", "at most 8 characters"),
        ("count", 11, "less than or equal to 10"),
        ("ratio", 1, "less than 1"),
        ("mode", "Medium", "'Fast' or 'Slow'"),
        ("tags", [], "at least 1 item"),
        ("tags", ["long"], "at most 3 characters"),
        ("when", "yesterday", "RFC 3339"),
        ("blob", "%%%", "base64"),
        ("ports", [{"port": 1}], "name"),
    ],
)
def test_constraints_reject_with_clear_messages(
    widget: Any, field: str, value: Any, message: str
) -> None:
    _, mod = widget
    with pytest.raises(ValidationError) as caught:
        mod.WidgetSpec.model_validate({"name": "ok", field: value})
    assert message in str(caught.value)


def test_list_and_map_extensions_are_carried_as_metadata(widget: Any) -> None:
    _, mod = widget
    extra = mod.WidgetSpec.model_fields["ports"].json_schema_extra
    assert extra == {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    assert mod.WidgetSpec.model_fields["continue_"].serialization_alias == "continue"


def test_names() -> None:
    assert class_part("updateStrategy") == "UpdateStrategy"
    assert class_part("x-kubernetes-foo") == "XKubernetesFoo"
    assert field_name("minReadySeconds") == "min_ready_seconds"
    assert field_name("hostIPC") == "host_ipc"
    assert field_name("from") == "from_"
    assert field_name("model_config") == "model_config_"
    assert field_name("x-forwarded-for") == "x_forwarded_for"


def test_class_names_from_path_are_deduplicated_deterministically(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "a-b": {"type": "object", "properties": {"x": {"type": "string"}}},
                    "aB": {"type": "object", "properties": {"y": {"type": "string"}}},
                    "field": {"type": "object", "properties": {"z": {"type": "string"}}},
                },
            },
        },
    }
    text = generate([from_text("c.json", json.dumps(crd(schema, kind="Resource")).encode())])
    mod = load_module(text, tmp_path)
    # The kind collides with the imported Resource class: the model is renamed, not the import.
    assert mod.Resource2.__kube_resource__.kind == "Resource"
    assert {"Resource2SpecAB", "Resource2SpecAB2"} <= set(vars(mod))
    assert mod.Resource2SpecAB.model_fields.keys() == {"x"}  # "a-b" sorts before "aB"


def test_string_literals_escape_like_ruff() -> None:
    assert py_str('say "hi"') == "'say \"hi\"'"
    assert py_str("it's") == '"it\'s"'
    assert py_str("\\d+\n") == '"\\\\d+\\n"'
    assert py_str("caf\u00e9 \u2019") == '"caf\\xe9 \\u2019"'


def test_rejects_inputs_without_v1_crds() -> None:
    with pytest.raises(CrdError, match="no apiextensions"):
        from_text("x.yaml", b"apiVersion: v1\nkind: ConfigMap\n")
    legacy = {"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition"}
    with pytest.raises(CrdError, match="not supported"):
        from_text("x.yaml", yaml.safe_dump(legacy).encode())


def test_cli_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "widget.yaml"
    source.write_text(yaml.safe_dump(crd(SCHEMA, versions=("v1", "v1alpha1"))))
    out = tmp_path / "models.py"
    assert main([str(source), "-o", str(out)]) == 0
    first = out.read_bytes()
    assert b"class Widget(KubeModel)" in first and b"class V1alpha1Widget(KubeModel)" in first
    assert main([str(source), "-o", str(out), "--check"]) == 0
    assert main([str(source), "-o", str(out)]) == 0 and out.read_bytes() == first

    out.write_text(first.decode().replace("Ready", "Done", 1) + "# edited\n")
    assert main([str(source), "-o", str(out), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"{out} is stale" in err and "regenerate it with:" in err
    assert f"kube-runtime codegen {source} -o {out}" in err

    assert main([str(source), "-o", str(out), "--version", "v9"]) == 2
    assert main([str(source), "--version", "v1alpha1"]) == 0
    assert "class Widget(KubeModel)" in capsys.readouterr().out


# ---------------------------------------------------------------------- a large CRD


def _pod_template_schema() -> dict[str, Any]:
    """PodTemplateSpec as an OpenAPI schema, derived from the kubernetes client's models
    (about 1,400 nodes with descriptions, like a CRD embedding a full pod template)."""
    models = pytest.importorskip("kubernetes.client.models")

    def schema(t: str) -> dict[str, Any]:
        simple = {
            "str": {"type": "string"},
            "int": {"type": "integer", "format": "int32"},
            "bool": {"type": "boolean"},
            "float": {"type": "number"},
            "datetime": {"type": "string", "format": "date-time"},
            "object": {"x-kubernetes-int-or-string": True},
        }
        if t in simple:
            return dict(simple[t])
        if m := re.fullmatch(r"[Ll]ist\[(.+)\]", t):
            return {"type": "array", "items": schema(m.group(1))}
        if m := re.fullmatch(r"(?:dict\(str, (.+)\)|Dict\[str, (.+)\])", t):
            return {"type": "object", "additionalProperties": schema(m.group(1) or m.group(2))}
        cls = getattr(models, t)
        props = {}
        for attr, typ in cls.openapi_types.items():
            node = schema(typ)
            field = getattr(cls, "model_fields", {}).get(attr)
            if field is not None and field.description:
                node["description"] = field.description
            props[cls.attribute_map[attr]] = node
        return {"type": "object", "properties": props}

    return schema("V1PodTemplateSpec")


def large_crd() -> dict[str, Any]:
    template = _pod_template_schema()
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["template"],
                "properties": {
                    "replicas": {"type": "integer"},
                    "template": {**template, "x-kubernetes-embedded-resource": False},
                },
            },
            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        },
    }
    return crd(schema, kind="PodSet", versions=("v1", "v1beta1"))


def test_large_crd_with_pod_template(tmp_path: Path) -> None:
    text = generate([from_text("podset.json", json.dumps(large_crd()).encode())])
    ruff_clean(text)
    mod = load_module(text, tmp_path, "podset")
    sample = {
        "apiVersion": "example.com/v1",
        "kind": "PodSet",
        "metadata": {"name": "p"},
        "spec": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "resources": {"limits": {"cpu": "1"}, "requests": {}},
                            "readinessProbe": {"httpGet": {"port": "http", "path": "/"}},
                        }
                    ],
                    "affinity": {
                        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}
                    },
                },
            },
        },
    }
    obj = mod.PodSet.model_validate(sample)
    assert wire(obj) == sample
    probe = obj.spec.template.spec.containers[0].readiness_probe
    assert probe.http_get.port == "http"
    assert type(probe).__name__ == "PodSetSpecTemplateSpecContainersItemReadinessProbe"


def test_a_one_name_annotation_splits_the_value_when_parentheses_do_not_help() -> None:
    """ruff parenthesizes a bracketed value after an overlong one-name annotation only when
    every line then fits; otherwise the value's own brackets split after ``= Field(``."""
    from codegen.pyexpr import Atom, Pair, call, statement

    name = "A" * 85  # "    field: " + name + " = (" is exactly 100 columns
    long_text = Atom(py_str("x" * 90))  # does not fit inside the parentheses
    head = f"from pydantic import Field\n\n{name} = int\n\n\nclass C:\n"
    lines = statement("    ", "field", Atom(name), call("Field", [Pair("description=", long_text)]))
    ruff_clean(head + "\n".join(lines) + "\n")
    assert lines[0].endswith(" = Field(")
    short = call("Field", [Pair("description=", Atom(py_str("x" * 40)))])
    lines = statement("    ", "field", Atom(name), short)
    ruff_clean(head + "\n".join(lines) + "\n")
    assert lines[0].endswith(" = (")
