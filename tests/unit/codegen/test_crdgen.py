"""``kube-runtime crd generate``: pydantic models -> CRD, and back through codegen.

The sample ``Cache`` resource below uses every mapping the generator knows; the e2e tests
(tests/e2e/test_crdgen_e2e.py) install its CRD on both backends.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from pydantic import BaseModel, Field, ValidationError

from codegen import from_text, generate
from codegen.crdgen import (
    CrdGenError,
    crd_documents,
    crd_for,
    dump_yaml,
    main,
    object_schema,
    version_schema,
)
from kube_runtime.client import Resource
from kube_runtime.models import (
    KubeModel,
    ObjectMeta,
    crd,
    model_default,
)
from tests.support.codegen import CRD_DIR, CRD_FILES, assert_same_schema, load_module
from tests.support.crdgen_models import (
    BAD_SPECS,
    GOOD,
    GROUP,
    Cache,
    CacheSpecV1alpha1,
    CacheV1alpha1,
    Eviction,
    Port,
    bad_object,
)


def spec_schema(model: type[BaseModel] = Cache) -> dict[str, Any]:
    """The schema of ``spec`` in ``model``'s CRD version."""
    return version_schema(model)["properties"]["spec"]


def walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every schema node with its path."""
    out = [(path, node)]
    for key, child in (node.get("properties") or {}).items():
        out += walk(child, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        out += walk(node["items"], path + "[]")
    if isinstance(node.get("additionalProperties"), dict):
        out += walk(node["additionalProperties"], path + "{}")
    return out


# ------------------------------------------------------------------------------- schema


def test_every_node_is_typed_and_no_pydantic_keywords_remain() -> None:
    schema = version_schema(Cache)
    for path, node in walk(schema):
        assert (
            "type" in node
            or node.get("x-kubernetes-int-or-string")
            or node.get("x-kubernetes-preserve-unknown-fields")
        ), path
        assert not {"title", "$ref", "$defs", "allOf", "const", "uniqueItems"} & set(node), path
        assert not isinstance(node.get("exclusiveMinimum"), (int, float)) or isinstance(
            node.get("exclusiveMinimum"), bool
        ), path


def test_top_level_fields() -> None:
    schema = version_schema(Cache)
    assert schema["description"] == "A replicated in-memory cache."
    assert schema["type"] == "object"
    props = schema["properties"]
    assert props["metadata"] == {"type": "object"}
    assert props["apiVersion"]["type"] == props["kind"]["type"] == "string"
    assert schema["required"] == ["spec"]
    assert props["status"]["description"] == "The observed state of a Cache."


def test_constraints_and_enums() -> None:
    props = spec_schema()["properties"]
    assert props["replicas"] == {
        "description": "Number of cache servers.",
        "type": "integer",
        "default": 1,
        "minimum": 0,
        "maximum": 10,
    }
    assert props["engine"] == {"type": "string", "enum": ["redis", "memcached"], "default": "redis"}
    assert props["ratio"] == {
        "type": "number",
        "default": 0.5,
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 1,
        "multipleOf": 0.05,
    }
    port = props["ports"]["items"]["properties"]
    assert port["name"] == {"type": "string", "maxLength": 15, "pattern": "^[a-z][a-z0-9-]*$"}
    assert port["port"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 65536,
        "exclusiveMaximum": True,
    }
    assert props["labels"] == {
        "type": "object",
        "maxProperties": 8,
        "additionalProperties": {"type": "string"},
    }
    assert props["note"] == {"type": "string", "minLength": 1}
    assert props["paused_until" if "paused_until" in props else "pausedUntil"] == {
        "type": "string",
        "format": "date-time",
    }
    assert props["owner"] == {"type": "string", "format": "email"}


def test_required_optional_and_nullable() -> None:
    spec = spec_schema()
    # required: no default; `comment: str | None` without default is required and nullable
    assert spec["required"] == ["comment", "size"]
    assert spec["properties"]["comment"]["nullable"] is True
    assert "nullable" not in spec["properties"]["note"]  # optional, not nullable
    assert "default" not in spec["properties"]["note"]  # a None default is no default


def test_kubernetes_extensions() -> None:
    props = spec_schema()["properties"]
    assert props["size"] == {
        "description": "Memory per server: bytes or a quantity like 1Gi.",
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
    }
    assert props["ports"]["x-kubernetes-list-type"] == "map"
    assert props["ports"]["x-kubernetes-list-map-keys"] == ["name"]
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-list-type": "set",
    }
    assert props["config"] == {
        "description": "Engine settings, kept as given.",
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert props["template"] == {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }


def test_cel_rules_on_fields_and_classes() -> None:
    props = spec_schema()["properties"]
    assert props["shards"]["x-kubernetes-validations"] == [
        {"rule": "self % 2 == 1", "message": "an odd number"}
    ]
    assert props["eviction"]["x-kubernetes-validations"] == [
        {"rule": "self.min <= self.max", "message": "min must not exceed max"}
    ]
    # the field's description wins over the class docstring
    assert props["eviction"]["description"] == "Eviction thresholds."


def test_stacked_rules_and_field_json_schema_extra() -> None:
    @crd.rule("has(self.a)", reason="FieldValueRequired")
    @crd.rule("self.a != 'x'", message_expression="'a is ' + self.a", field_path=".a")
    class Rules(KubeModel):
        a: str | None = None
        b: list[str] | None = Field(
            None,
            json_schema_extra={
                "x-kubernetes-list-type": "atomic",
                "x-kubernetes-validations": [{"rule": "size(self) < 3"}],
            },
        )

    class Root(KubeModel):
        __kube_resource__: ClassVar[Resource] = Resource("g.example.com", "v1", "R", "rs", False)
        metadata: ObjectMeta
        spec: Rules

    spec = spec_schema(Root)
    assert spec["x-kubernetes-validations"] == [
        {"rule": "self.a != 'x'", "messageExpression": "'a is ' + self.a", "fieldPath": ".a"},
        {"rule": "has(self.a)", "reason": "FieldValueRequired"},
    ]
    assert spec["properties"]["b"] == {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-list-type": "atomic",
        "x-kubernetes-validations": [{"rule": "size(self) < 3"}],
    }


def test_rules_are_inherited() -> None:
    @crd.rule("self.max >= 10", message="max at least 10")
    class Wider(Eviction):
        """Eviction with a floor."""

    assert [r["rule"] for r in object_schema(Wider)["x-kubernetes-validations"]] == [
        "self.min <= self.max",
        "self.max >= 10",
    ]
    assert len(object_schema(Eviction)["x-kubernetes-validations"]) == 1


def test_embedded_object_with_declared_fields() -> None:
    class Template(KubeModel):
        api_version: str | None = Field(None, alias="apiVersion")
        kind: str | None = None
        metadata: ObjectMeta | None = None
        data: dict[str, str] | None = None

    class Root(KubeModel):
        __kube_resource__: ClassVar[Resource] = Resource("g.example.com", "v1", "R", "rs", True)
        metadata: ObjectMeta
        spec: Template

    spec = spec_schema(Root)
    assert spec["x-kubernetes-embedded-resource"] is True
    assert spec["properties"]["metadata"] == {"type": "object"}


# ------------------------------------------------------------------------------- the CRD


def test_crd_names_versions_and_subresources() -> None:
    doc = crd_for([CacheV1alpha1, Cache])
    assert doc["apiVersion"] == "apiextensions.k8s.io/v1"
    assert doc["metadata"] == {"name": f"caches.{GROUP}"}
    spec = doc["spec"]
    assert spec["group"] == GROUP and spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "kind": "Cache",
        "listKind": "CacheList",
        "plural": "caches",
        "singular": "cache",
        "shortNames": ["cch"],
        "categories": ["kube-runtime-test", "all"],
    }
    old, new = spec["versions"]
    assert (old["name"], old["served"], old["storage"]) == ("v1alpha1", True, False)
    assert old["deprecated"] is True and old["deprecationWarning"] == "use v1"
    assert old["subresources"] == {"status": {}}
    assert (new["name"], new["storage"]) == ("v1", True)
    assert new["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    assert new["additionalPrinterColumns"] == [
        {"name": "Engine", "type": "string", "jsonPath": ".spec.engine"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"},
        {
            "name": "Size",
            "type": "string",
            "jsonPath": ".spec.size",
            "description": "memory",
            "priority": 1,
        },
    ]
    assert old["schema"]["openAPIV3Schema"]["properties"]["status"] == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }


def test_output_is_deterministic_yaml() -> None:
    first = dump_yaml(crd_documents([CacheV1alpha1, Cache]))
    assert first == dump_yaml(crd_documents([CacheV1alpha1, Cache]))
    (doc,) = list(yaml.safe_load_all(first))
    assert doc == crd_for([CacheV1alpha1, Cache])


def _resource_model(**changes: Any) -> type[KubeModel]:
    fields = {
        "group": "g.example.com",
        "version": "v1",
        "kind": "R",
        "plural": "rs",
        "namespaced": True,
        "subresources": frozenset(),
    } | changes
    config = fields.pop("config", None)

    class R(KubeModel):
        __kube_resource__: ClassVar[Resource] = Resource(**fields)
        __crd__: ClassVar[Any] = config
        metadata: ObjectMeta
        spec: CacheSpecV1alpha1 | None = None

    return R


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (lambda: [_resource_model(), _resource_model(version="v2")], "exactly one version"),
        (
            lambda: [
                _resource_model(config=crd.Config(storage=True)),
                _resource_model(version="v2", config=crd.Config(storage=True)),
            ],
            "exactly one version",
        ),
        (lambda: [_resource_model(), _resource_model()], "are both version v1"),
        (lambda: [_resource_model(), _resource_model(version="v2", namespaced=False)], "scope"),
        (lambda: [_resource_model(group="")], "needs an API group"),
        (lambda: [_resource_model(subresources=frozenset({"scale"}))], "names no field"),
        (lambda: [_resource_model(subresources=frozenset({"exec"}))], "not exec"),
        (
            lambda: [_resource_model(config=crd.Config(scale=crd.Scale()))],
            "no 'scale' subresource",
        ),
        (lambda: [_resource_model(subresources=frozenset({"status"}))], "needs a status field"),
        (lambda: [_resource_model(config="x")], "not a kube_runtime.models.crd.Config"),
        (lambda: [Port], "has no __kube_resource__"),
    ],
)
def test_crd_mistakes(models: Any, message: str) -> None:
    with pytest.raises(CrdGenError, match=message):
        crd_for(models())


def test_scale_path_must_be_an_integer() -> None:
    class Spec(KubeModel):
        replicas: str | None = None

    class R(KubeModel):
        __kube_resource__: ClassVar[Resource] = Resource(
            "g.example.com", "v1", "R", "rs", True, frozenset({"scale", "status"})
        )
        metadata: ObjectMeta
        spec: Spec | None = None
        status: Spec | None = None

    with pytest.raises(CrdGenError, match=r"'\.spec\.replicas' is not an integer field"):
        crd_for([R])


class _Cat(KubeModel):
    meow: str


class _Dog(KubeModel):
    woof: str


class _Node(KubeModel):
    children: list[_Node] | None = None


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (_Cat | _Dog, "the union object has no structural schema"),
        (_Node, "contains itself"),
        (tuple[int, str], "tuples have no CRD equivalent"),
        (int | bool, "the union boolean | integer"),
    ],
)
def test_unstructural_fields_are_errors_naming_the_field(annotation: Any, message: str) -> None:
    class Spec(KubeModel):
        pet: annotation  # type: ignore[valid-type]

    class R(KubeModel):
        __kube_resource__: ClassVar[Resource] = Resource("g.example.com", "v1", "R", "rs", True)
        metadata: ObjectMeta
        spec: Spec

    with pytest.raises(CrdGenError, match=message) as info:
        version_schema(R)
    assert str(info.value).startswith(".spec.pet")


# ------------------------------------------------------------------------------- the command


def test_command_writes_stdout_file_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "tests.support.crdgen_models:CacheV1alpha1"
    assert main(["generate", target, "tests.support.crdgen_models:Cache"]) == 0
    text = capsys.readouterr().out
    assert text == dump_yaml(crd_documents([CacheV1alpha1, Cache]))
    out = tmp_path / "crd.yaml"
    args = ["generate", target, "tests.support.crdgen_models:Cache", "-o", str(out)]
    assert main(args) == 0 and out.read_text() == text
    assert main([*args, "--check"]) == 0
    out.write_text(text.replace("cch", "cc"))
    assert main([*args, "--check"]) == 1
    err = capsys.readouterr().err
    assert "is stale; regenerate it with:" in err and "--check" not in err


def test_command_takes_every_resource_class_of_a_module(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "tests.support.crdgen_models"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    # Cache and CacheV1alpha1 (definition order); classes made inside tests are not module-level
    assert [d["metadata"]["name"] for d in docs] == [f"caches.{GROUP}"]
    assert [v["name"] for v in docs[0]["spec"]["versions"]] == ["v1", "v1alpha1"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["generate", "no_such_module_xyz:Model"], "cannot import no_such_module_xyz"),
        (
            ["generate", "tests.support.crdgen_models:Nope"],
            "tests.support.crdgen_models has no Nope",
        ),
        (["generate", "tests.support.crdgen_models:GROUP"], "is not a pydantic model class"),
        (["generate", "tests.support.crdgen_models:Port"], "has no __kube_resource__"),
        (["generate", "tests.support.crdgen_models:"], "expected package.module:Model"),
        (["generate", "codegen.naming"], "defines no model with a __kube_resource__"),
        (
            ["generate", "tests.support.crdgen_models:Cache", "--check"],
            "--check needs -o OUTPUT",
        ),
        (["generate"], "the following arguments are required: TARGET"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required"),
        (
            ["generate", "tests.support.crdgen_models:Cache", "-o", "/nonexistent-dir/crd.yaml"],
            "/nonexistent-dir/crd.yaml: No such file or directory",
        ),
    ],
)
def test_command_mistakes_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "error: " in err and message in err, err


# ------------------------------------------------------------------------------- round trip


def _regenerated(tmp_path: Path, models: list[type[BaseModel]]) -> Any:
    text = dump_yaml(crd_documents(models))
    module_text = generate([from_text("crd.yaml", text.encode())])
    return load_module(module_text, tmp_path, "crdgen_roundtrip")


def test_round_trip_model_crd_codegen_model(tmp_path: Path) -> None:
    """model -> CRD -> codegen -> model: the same objects accepted and rejected, and the
    regenerated model gives back the same schema."""
    mod = _regenerated(tmp_path, [CacheV1alpha1, Cache])
    again = mod.Cache
    assert again.__kube_resource__ == Cache.__kube_resource__
    assert mod.V1alpha1Cache.__kube_resource__ == CacheV1alpha1.__kube_resource__

    Cache.model_validate(GOOD)
    assert again.model_validate(GOOD).to_wire() == GOOD
    for name, change in BAD_SPECS.items():
        obj = bad_object(change)
        with pytest.raises(ValidationError):
            Cache.model_validate(obj)
            pytest.fail(f"original model accepted: {name}")
        with pytest.raises(ValidationError):
            again.model_validate(obj)
            pytest.fail(f"regenerated model accepted: {name}")

    # codegen types date-time and byte strings; other formats are not carried back
    want = version_schema(Cache)
    del want["properties"]["spec"]["properties"]["owner"]["format"]
    assert version_schema(again) == want
    assert version_schema(mod.V1alpha1Cache) == version_schema(CacheV1alpha1)


def test_round_trip_of_the_real_crds_schemas(tmp_path: Path) -> None:
    """CRD -> codegen -> model -> CRD for the project's CloneSet: the schema comes back (the
    apiVersion/kind/metadata boilerplate aside)."""
    path = Path(__file__).resolve().parents[3] / "controllers" / "cloneset" / "crd.yaml"
    original = next(d for d in yaml.safe_load_all(path.read_text()) if d)
    mod = load_module(generate([from_text("crd.yaml", path.read_bytes())]), tmp_path, "clone")
    version = original["spec"]["versions"][0]
    want = copy.deepcopy(version["schema"]["openAPIV3Schema"])
    got = version_schema(mod.CloneSet)
    for schema in (want, got):
        for key in ("apiVersion", "kind", "metadata"):
            schema["properties"].pop(key, None)
    assert_same_schema(got, want)


@pytest.mark.parametrize("name", ["asts", "cloneset", "scaledobject"])
def test_round_trip_of_public_crds(name: str, tmp_path: Path) -> None:
    """CRD -> codegen -> model -> CRD gives back every version's schema of public CRDs,
    through the Python API (test_codegen_crd_settings.py does it for every CRD through the
    command, with the CRD's other settings)."""
    path = CRD_DIR / CRD_FILES[name]
    source = from_text(path.name, path.read_bytes())
    (original,) = source.crds
    mod = load_module(generate([source]), tmp_path, name)
    kind = original["spec"]["names"]["kind"]
    for version in original["spec"]["versions"]:
        cls_name = kind if version.get("storage") else version["name"].capitalize() + kind
        want = copy.deepcopy(version["schema"]["openAPIV3Schema"])
        got = version_schema(getattr(mod, cls_name))
        for schema in (want, got):
            for key in ("apiVersion", "kind", "metadata"):
                schema["properties"].pop(key, None)
        assert_same_schema(got, want)


def test_object_defaults_from_model_default() -> None:
    """codegen writes an object ``default`` as ``default_factory=model_default(...)``; the
    CRD gets it back. Other factories (``list``) give no default."""

    class Strategy(KubeModel):
        type: str = "ReCreate"

    class Spec(KubeModel):
        strategy: Strategy = Field(default_factory=model_default(Strategy, {}))
        tuned: Strategy = Field(default_factory=model_default(Strategy, {"type": "InPlace"}))
        items: list[int] = Field(default_factory=list)

    class Root(KubeModel):
        __kube_resource__: ClassVar[Resource] = Resource("g.example.com", "v1", "R", "rs", True)
        metadata: ObjectMeta
        spec: Spec

    props = spec_schema(Root)["properties"]
    assert props["strategy"]["default"] == {}
    assert props["tuned"]["default"] == {"type": "InPlace"}
    assert "default" not in props["items"]
