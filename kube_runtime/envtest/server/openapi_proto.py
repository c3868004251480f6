"""The OpenAPI v2 document as protobuf: gnostic's ``openapi.v2.Document`` message.

kubectl (1.20 and current) downloads ``/openapi/v2`` with ``Accept:
application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` and decodes it with gnostic's
generated Go types (``github.com/google/gnostic-models/openapiv2``). This module declares the
part of that schema the server writes (the same package, message names and field numbers, so
the bytes are what gnostic reads) as a descriptor built at import time, lets the ``protobuf``
runtime make the message classes, and builds the message from the JSON document translated
field by field (:func:`encode`): the message class takes the nested dicts in C, with the bytes
:func:`google.protobuf.json_format.ParseDict` gives, which still handles what the constructor
refuses (an integral float for an integer field; its errors). YAML texts are cached by value. Messages and fields the
server never writes (security schemes, headers, form parameters, XML) are left out of the
descriptor; a subset of a message's fields encodes exactly as the full message would.

Vendor extensions (``x-kubernetes-*``) and literal values (``default``, ``enum``) are gnostic
``Any`` messages holding their YAML text, which is how kube-openapi reads them back.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

from kube_runtime._bounded import remember

__all__ = ["decode_names", "encode"]

_PACKAGE = "openapi.v2"

# message -> [(field, number, type)]: a type ending in "*" is repeated; a capitalised type
# is a message of this package; the rest are scalar types.
_SCHEMA: dict[str, list[tuple[str, int, str]]] = {
    "Any": [("yaml", 2, "string")],
    "NamedAny": [("name", 1, "string"), ("value", 2, "Any")],
    "Info": [("title", 1, "string"), ("version", 2, "string"), ("description", 3, "string")],
    "Document": [
        ("swagger", 1, "string"),
        ("info", 2, "Info"),
        ("consumes", 6, "string*"),
        ("produces", 7, "string*"),
        ("paths", 8, "Paths"),
        ("definitions", 9, "Definitions"),
        ("vendor_extension", 16, "NamedAny*"),
    ],
    "Paths": [("vendor_extension", 1, "NamedAny*"), ("path", 2, "NamedPathItem*")],
    "NamedPathItem": [("name", 1, "string"), ("value", 2, "PathItem")],
    "PathItem": [
        ("get", 2, "Operation"),
        ("put", 3, "Operation"),
        ("post", 4, "Operation"),
        ("delete", 5, "Operation"),
        ("patch", 8, "Operation"),
        ("parameters", 9, "ParametersItem*"),
        ("vendor_extension", 10, "NamedAny*"),
    ],
    "Operation": [
        ("tags", 1, "string*"),
        ("description", 3, "string"),
        ("operation_id", 5, "string"),
        ("produces", 6, "string*"),
        ("consumes", 7, "string*"),
        ("parameters", 8, "ParametersItem*"),
        ("responses", 9, "Responses"),
        ("schemes", 10, "string*"),
        ("vendor_extension", 13, "NamedAny*"),
    ],
    "ParametersItem": [("parameter", 1, "Parameter")],
    "Parameter": [
        ("body_parameter", 1, "BodyParameter"),
        ("non_body_parameter", 2, "NonBodyParameter"),
    ],
    "BodyParameter": [
        ("description", 1, "string"),
        ("name", 2, "string"),
        ("in", 3, "string"),
        ("required", 4, "bool"),
        ("schema", 5, "Schema"),
    ],
    "NonBodyParameter": [
        ("query_parameter_sub_schema", 3, "QueryParameterSubSchema"),
        ("path_parameter_sub_schema", 4, "PathParameterSubSchema"),
    ],
    "QueryParameterSubSchema": [
        ("required", 1, "bool"),
        ("in", 2, "string"),
        ("description", 3, "string"),
        ("name", 4, "string"),
        ("type", 6, "string"),
        ("unique_items", 20, "bool"),
    ],
    "PathParameterSubSchema": [
        ("required", 1, "bool"),
        ("in", 2, "string"),
        ("description", 3, "string"),
        ("name", 4, "string"),
        ("type", 5, "string"),
        ("unique_items", 19, "bool"),
    ],
    "Responses": [("response_code", 1, "NamedResponseValue*")],
    "NamedResponseValue": [("name", 1, "string"), ("value", 2, "ResponseValue")],
    "ResponseValue": [("response", 1, "Response")],
    "Response": [("description", 1, "string"), ("schema", 2, "SchemaItem")],
    "SchemaItem": [("schema", 1, "Schema")],
    "Definitions": [("additional_properties", 1, "NamedSchema*")],
    "NamedSchema": [("name", 1, "string"), ("value", 2, "Schema")],
    "Properties": [("additional_properties", 1, "NamedSchema*")],
    "AdditionalPropertiesItem": [("schema", 1, "Schema"), ("boolean", 2, "bool")],
    "ItemsItem": [("schema", 1, "Schema*")],
    "TypeItem": [("value", 1, "string*")],
    "Schema": [
        ("_ref", 1, "string"),
        ("format", 2, "string"),
        ("title", 3, "string"),
        ("description", 4, "string"),
        ("default", 5, "Any"),
        ("multiple_of", 6, "double"),
        ("maximum", 7, "double"),
        ("exclusive_maximum", 8, "bool"),
        ("minimum", 9, "double"),
        ("exclusive_minimum", 10, "bool"),
        ("max_length", 11, "int64"),
        ("min_length", 12, "int64"),
        ("pattern", 13, "string"),
        ("max_items", 14, "int64"),
        ("min_items", 15, "int64"),
        ("unique_items", 16, "bool"),
        ("max_properties", 17, "int64"),
        ("min_properties", 18, "int64"),
        ("required", 19, "string*"),
        ("enum", 20, "Any*"),
        ("additional_properties", 21, "AdditionalPropertiesItem"),
        ("type", 22, "TypeItem"),
        ("items", 23, "ItemsItem"),
        ("all_of", 24, "Schema*"),
        ("properties", 25, "Properties"),
        ("read_only", 27, "bool"),
        ("example", 30, "Any"),
        ("vendor_extension", 31, "NamedAny*"),
    ],
}

_SCALARS = {
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "double": descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
}


def _document_class() -> Any:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kube_runtime/openapiv2.proto", package=_PACKAGE, syntax="proto3"
    )
    for message, fields in _SCHEMA.items():
        mp = fdp.message_type.add(name=message)
        for name, number, type_ in fields:
            repeated = type_.endswith("*")
            type_ = type_.rstrip("*")
            field = mp.field.add(name=name, number=number)
            field.label = (
                descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
                if repeated
                else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
            )
            if type_ in _SCALARS:
                field.type = _SCALARS[type_]
            else:
                field.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{type_}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Document"))


_DOCUMENT = _document_class()


#: YAML text of the literal values met so far, by their JSON (a document repeats the same
#: few extensions thousands of times; the built-in definitions repeat across clusters).
_YAML_BY_JSON: dict[bytes, str] = {}
_YAML_CACHE_SIZE = 16384
_YAML_LOCK = threading.Lock()
#: JSON that tells apart every value whose YAML differs (datetimes, dataclasses and subclasses
#: of str/int/dict/list are not turned into JSON: such values are not cached).
_JSON_KEY_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _yaml(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=False, sort_keys=False)


def _any(value: Any) -> dict[str, Any]:
    try:
        key = orjson.dumps(value, option=_JSON_KEY_OPTIONS)
    except TypeError:
        return {"yaml": _yaml(value)}
    text = _YAML_BY_JSON.get(key)
    if text is None:
        text = _yaml(value)
        with _YAML_LOCK:
            remember(_YAML_BY_JSON, key, text, _YAML_CACHE_SIZE)
    return {"yaml": text}


def _extensions(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": k, "value": _any(v)} for k, v in node.items() if k.startswith("x-")]


def _json_key(field: str) -> str:
    """The OpenAPI (JSON) key of a gnostic field: ``max_length`` -> ``maxLength``,
    ``_ref`` -> ``$ref``."""
    if field == "_ref":
        return "$ref"
    head, *rest = field.split("_")
    return head + "".join(word.title() for word in rest)


#: message -> [(JSON key, field)] of its scalar fields (repeated or not): the JSON values as
#: they are, read off :data:`_SCHEMA`.
_SCALAR_KEYS: dict[str, list[tuple[str, str]]] = {
    message: [(_json_key(name), name) for name, _, type_ in fields if type_.rstrip("*") in _SCALARS]
    for message, fields in _SCHEMA.items()
}


def _scalars(message: str, node: dict[str, Any]) -> dict[str, Any]:
    """The scalar fields of ``message`` that ``node`` (its JSON form) has."""
    return {field: node[key] for key, field in _SCALAR_KEYS[message] if key in node}


def _schema(node: dict[str, Any]) -> dict[str, Any]:
    out = _scalars("Schema", node)
    if "default" in node:
        out["default"] = _any(node["default"])
    if "example" in node:
        out["example"] = _any(node["example"])
    if "enum" in node:
        out["enum"] = [_any(v) for v in node["enum"]]
    extra = node.get("additionalProperties")
    if isinstance(extra, bool):
        out["additional_properties"] = {"boolean": extra}
    elif isinstance(extra, dict):
        out["additional_properties"] = {"schema": _schema(extra)}
    if "type" in node:
        t = node["type"]
        out["type"] = {"value": list(t) if isinstance(t, list) else [t]}
    items = node.get("items")
    if isinstance(items, dict):
        out["items"] = {"schema": [_schema(items)]}
    elif isinstance(items, list):
        out["items"] = {"schema": [_schema(i) for i in items]}
    if "allOf" in node:
        out["all_of"] = [_schema(s) for s in node["allOf"]]
    if "properties" in node:
        out["properties"] = {
            "additional_properties": [
                {"name": k, "value": _schema(v)} for k, v in node["properties"].items()
            ]
        }
    ext = _extensions(node)
    if ext:
        out["vendor_extension"] = ext
    return out


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    if param.get("in") == "body":
        body = _scalars("BodyParameter", param)
        body["schema"] = _schema(param.get("schema") or {})
        return {"parameter": {"body_parameter": body}}
    if param.get("in") == "path":
        which, message = "path_parameter_sub_schema", "PathParameterSubSchema"
    else:
        which, message = "query_parameter_sub_schema", "QueryParameterSubSchema"
    return {"parameter": {"non_body_parameter": {which: _scalars(message, param)}}}


def _operation(op: dict[str, Any]) -> dict[str, Any]:
    out = _scalars("Operation", op)
    if "parameters" in op:
        out["parameters"] = [_parameter(p) for p in op["parameters"]]
    codes = []
    for code, response in (op.get("responses") or {}).items():
        value: dict[str, Any] = {"description": response.get("description", "")}
        if "schema" in response:
            value["schema"] = {"schema": _schema(response["schema"])}
        codes.append({"name": str(code), "value": {"response": value}})
    if codes:
        out["responses"] = {"response_code": codes}
    ext = _extensions(op)
    if ext:
        out["vendor_extension"] = ext
    return out


def _path_item(item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for method in ("get", "put", "post", "delete", "patch"):
        if method in item:
            out[method] = _operation(item[method])
    if "parameters" in item:
        out["parameters"] = [_parameter(p) for p in item["parameters"]]
    return out


def _fields(document: dict[str, Any]) -> dict[str, Any]:
    """The ``openapi.v2.Document`` message's fields (ParseDict's input form) for ``document``."""
    doc: dict[str, Any] = {"swagger": document.get("swagger", "2.0")}
    if "info" in document:
        doc["info"] = {k: v for k, v in document["info"].items() if k in ("title", "version")}
    for key in ("consumes", "produces"):
        if key in document:
            doc[key] = document[key]
    doc["paths"] = {
        "path": [
            {"name": name, "value": _path_item(item)}
            for name, item in (document.get("paths") or {}).items()
        ]
    }
    doc["definitions"] = {
        "additional_properties": [
            {"name": name, "value": _schema(schema)}
            for name, schema in (document.get("definitions") or {}).items()
        ]
    }
    return doc


def encode(document: dict[str, Any]) -> bytes:
    """The OpenAPI v2 ``document`` (JSON form) as a serialized gnostic ``openapi.v2.Document``."""
    doc = _fields(document)
    try:
        # The message classes take nested dicts and lists as ParseDict does, in C (upb).
        message = _DOCUMENT(**doc)
    except (TypeError, ValueError):
        # ParseDict's conversions (an integral float for an integer, ...) and its errors.
        message = json_format.ParseDict(doc, _DOCUMENT())
    return bytes(message.SerializeToString())


def decode_names(data: bytes) -> dict[str, Any]:
    """The definitions of a serialized ``openapi.v2.Document``: each name with its
    ``x-kubernetes-group-version-kind`` (None when it has none). For tests and tools."""
    message = _DOCUMENT.FromString(data)
    out: dict[str, Any] = {}
    for named in message.definitions.additional_properties:
        gvk = None
        for ext in named.value.vendor_extension:
            if ext.name == "x-kubernetes-group-version-kind":
                gvk = yaml.safe_load(ext.value.yaml)
        out[named.name] = gvk
    return out
