"""The OpenAPI documents' parts without a server: built-in definitions, CRD definitions,
the gnostic protobuf form, and the cache that rebuilds documents when the served set changes."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format

from kube_runtime.envtest.server import openapi, openapi_builtin, openapi_crd, openapi_proto
from kube_runtime.envtest.server.crds import resource_from_crd
from kube_runtime.envtest.server.resources import Registry


def _crd(schema: dict[str, Any] | None, *, group: str = "cache.example.com") -> dict[str, Any]:
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if schema is not None:
        version["schema"] = {"openAPIV3Schema": schema}
    return {
        "metadata": {"name": f"caches.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "caches", "kind": "Cache", "listKind": "CacheList"},
            "versions": [version],
        },
    }


def test_builtin_definitions_come_with_kind_and_merge_metadata() -> None:
    defs = openapi_builtin.definitions()
    assert openapi_builtin.kind_definitions("apps", "v1", "StatefulSet") == (
        "io.k8s.api.apps.v1.StatefulSet"
    )
    containers = defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Container"}
    # JSON Schema's nullable unions are single OpenAPI types again.
    assert defs["io.k8s.api.core.v1.PodSpec"]["properties"]["hostname"]["type"] == "string"
    assert "enum" not in defs["io.k8s.api.apps.v1.StatefulSet"]["properties"]["kind"]
    closure = openapi_builtin.referenced(["io.k8s.api.core.v1.Pod"])
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in closure
    assert "io.k8s.api.apps.v1.StatefulSet" not in closure


def test_crd_definition_names_and_root_properties() -> None:
    assert openapi_crd.definition_name("cache.example.com", "v1", "Cache") == (
        "com.example.cache.v1.Cache"
    )
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size", "note"],
                "properties": {
                    "size": {"type": "integer", "oneOf": [{"minimum": 1}]},
                    "note": {"type": "string", "nullable": True},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "properties": {"spec": {"type": "object"}},
                    },
                },
            }
        },
    }
    v2 = openapi_crd.crd_definitions(_crd(schema), "v1", v2=True, prefix="#/definitions/")
    kind = v2["com.example.cache.v1.Cache"]
    assert kind["x-kubernetes-group-version-kind"] == [
        {"group": "cache.example.com", "version": "v1", "kind": "Cache"}
    ]
    assert kind["properties"]["metadata"]["$ref"].endswith("meta.v1.ObjectMeta")
    assert set(kind["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    spec = kind["properties"]["spec"]
    assert spec["required"] == ["size"]  # a nullable field is not required in v2
    assert "oneOf" not in spec["properties"]["size"]
    assert "type" not in spec["properties"]["note"]
    assert "type" not in spec["properties"]["extra"]
    template = spec["properties"]["template"]
    assert {"apiVersion", "kind", "metadata"} <= set(template["properties"])
    assert template["required"] == ["kind", "apiVersion"]
    listed = v2["com.example.cache.v1.CacheList"]
    assert listed["properties"]["items"]["items"] == {
        "$ref": "#/definitions/com.example.cache.v1.Cache"
    }

    v3 = openapi_crd.crd_definitions(_crd(schema), "v1", v2=False, prefix="#/components/schemas/")
    spec3 = v3["com.example.cache.v1.Cache"]["properties"]["spec"]
    assert spec3["required"] == ["size", "note"]
    assert spec3["properties"]["size"]["oneOf"] == [{"minimum": 1}]
    assert spec3["properties"]["note"]["nullable"] is True


def test_crd_without_schema_or_preserving_everything_is_a_bare_object_in_v2() -> None:
    bare = openapi_crd.crd_definitions(_crd(None), "v1", v2=True, prefix="#/definitions/")
    assert set(bare["com.example.cache.v1.Cache"]) == {"type", "x-kubernetes-group-version-kind"}
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    loose = openapi_crd.crd_definitions(_crd(schema), "v1", v2=True, prefix="#/definitions/")
    assert loose["com.example.cache.v1.Cache"]["type"] == "object"
    assert "properties" not in loose["com.example.cache.v1.Cache"]


def test_protobuf_round_trip_keeps_names_and_extensions() -> None:
    doc = openapi.v2_document(Registry())
    data = openapi_proto.encode(doc)
    # Field 1 (swagger, length-delimited) comes first: tag 0x0a, then "2.0".
    assert data[:5] == b"\x0a\x032.0"
    names = openapi_proto.decode_names(data)
    assert set(names) == set(doc["definitions"])
    assert names["io.k8s.api.apps.v1.Deployment"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]


def test_documents_are_cached_until_the_served_set_changes() -> None:
    registry = Registry()
    crds: list[dict[str, Any]] = []
    first = openapi.v2_document(registry, lambda: crds)
    assert openapi.v2_document(registry, lambda: crds) is first
    before = openapi.v3_paths(registry, lambda: crds)["paths"]
    assert "apis/cache.example.com/v1" not in before
    assert before["apis/apps/v1"]["serverRelativeURL"].startswith("/openapi/v3/apis/apps/v1?hash=")

    crd = _crd({"type": "object", "properties": {"spec": {"type": "object"}}})
    crds.append(crd)
    info = resource_from_crd(crd)
    assert info is not None
    registry.add(info)
    second = openapi.v2_document(registry, lambda: crds)
    assert second is not first
    assert "com.example.cache.v1.Cache" in second["definitions"]
    assert "/apis/cache.example.com/v1/namespaces/{namespace}/caches/{name}" in second["paths"]
    after = openapi.v3_paths(registry, lambda: crds)["paths"]
    assert after["apis/apps/v1"] == before["apis/apps/v1"]
    v3 = openapi.v3_document(registry, "apis/cache.example.com/v1", lambda: crds)
    assert v3 is not None
    assert "com.example.cache.v1.Cache" in v3["components"]["schemas"]
    assert openapi.v3_document(registry, "apis/nothing/v1", lambda: crds) is None


def _parse_dict_encoding(document: dict[str, Any]) -> bytes:
    """The reference bytes: the message's fields through ``json_format.ParseDict``."""
    fields = openapi_proto._fields(document)
    return bytes(json_format.ParseDict(fields, openapi_proto._DOCUMENT()).SerializeToString())


def test_protobuf_bytes_are_those_of_parse_dict() -> None:
    """The message built from nested dicts serializes to the very bytes ParseDict's gave,
    for the whole built-in document, a CRD's, and values ParseDict converts or ignores."""
    registry = Registry()
    crd = _crd(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {
                        "n": {"type": "integer", "minimum": -0.0, "maximum": 10, "default": 3},
                        "s": {"type": "string", "enum": ["a", "b"], "maxLength": 5},
                        "d": {"description": None, "type": ["string", "null"]},
                    },
                }
            },
        }
    )
    info = resource_from_crd(crd)
    assert info is not None
    registry.add(info)
    whole = openapi.v2_document(registry, lambda: [crd])
    first = openapi_proto.encode(whole)
    assert first == _parse_dict_encoding(whole)
    assert openapi_proto.encode(whole) == first  # with the YAML texts cached
    for document in (
        {"swagger": "2.0"},
        {"swagger": "2.0", "paths": {}, "definitions": {"A": {}}},
        {"swagger": "2.0", "definitions": {"A": {"maxLength": 5.0, "minimum": True}}},
    ):
        assert openapi_proto.encode(document) == _parse_dict_encoding(document)
    bad = {"swagger": "2.0", "definitions": {"A": {"maxLength": "five"}}}
    with pytest.raises(json_format.ParseError):
        openapi_proto.encode(bad)


def test_registries_serving_the_same_document_share_its_protobuf_form() -> None:
    first, second = Registry(), Registry()
    data = openapi._documents(first, None).v2_proto()
    assert openapi._documents(second, None).v2_proto() is data
    assert data == openapi_proto.encode(openapi.v2_document(second))
