"""OpenAPI definitions of custom resources, from their CRDs' ``openAPIV3Schema``.

Named and shaped as kube-apiserver publishes them (apiextensions-apiserver's OpenAPI
builder): the kind of group ``cache.example.com`` version ``v1`` is
``com.example.cache.v1.Cache`` (the group's labels reversed) and its list
``com.example.cache.v1.CacheList``; both carry ``x-kubernetes-group-version-kind``. The
published schema is the CRD's with ``apiVersion``, ``kind`` and ``metadata`` (a reference
to ``ObjectMeta``) set at the root and inside every ``x-kubernetes-embedded-resource``.

OpenAPI v2 cannot say everything a structural schema says, and kubectl's v2 reader rejects
some of it, so the v2 form (:func:`crd_definitions` with ``v2=True``) drops the junctors
(``allOf``, ``anyOf``, ``oneOf``, ``not``), leaves nullable and unknown-preserving nodes
untyped and without children, and publishes a root that preserves unknown fields as a bare
``object`` (kubectl would otherwise refuse the fields it does not know). The v3 form keeps
the schema as written.
"""

from __future__ import annotations

import copy
from typing import Any

from kube_runtime.envtest.server.openapi_builtin import definitions

__all__ = ["crd_definitions", "definition_name"]

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")


def definition_name(group: str, version: str, kind: str) -> str:
    """kube-apiserver's name for a custom kind's definition (``com.example.cache.v1.Cache``)."""
    reversed_group = ".".join(reversed(group.split("."))) if group else ""
    return ".".join(p for p in (reversed_group, version, kind) if p)


def _type_meta() -> dict[str, dict[str, Any]]:
    """``apiVersion`` and ``kind`` as the built-in kinds publish them (Pod's, from the spec)."""
    pod = definitions()["io.k8s.api.core.v1.Pod"]["properties"]
    return {
        k: {"description": pod[k]["description"], "type": "string"} for k in ("apiVersion", "kind")
    }


def _meta_ref(prefix: str, name: str, owner: str) -> dict[str, Any]:
    description = definitions()[owner]["properties"]["metadata"]["description"]
    return {"$ref": prefix + name, "description": description}


def _to_v2(node: dict[str, Any]) -> dict[str, Any]:
    """One schema node as OpenAPI v2 can carry it, in the way kube-apiserver degrades it."""
    out = {k: v for k, v in node.items() if k not in _JUNCTORS}
    if out.pop("nullable", False):
        out.pop("type", None)
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("items", None)
        out.pop("properties", None)
        if out.get("type") == "object":
            del out["type"]
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {k: _to_v2(v) for k, v in props.items() if isinstance(v, dict)}
        nullable = {k for k, v in props.items() if isinstance(v, dict) and v.get("nullable")}
        if nullable and "required" in out:
            kept = [r for r in out["required"] if r not in nullable]
            if kept:
                out["required"] = kept
            else:
                del out["required"]
    extra = out.get("additionalProperties")
    if isinstance(extra, dict):
        if extra.get("nullable"):
            out.pop("required", None)
        out["additionalProperties"] = _to_v2(extra)
    if isinstance(out.get("items"), dict):
        out["items"] = _to_v2(out["items"])
    return out


def _embed(node: dict[str, Any], prefix: str, v2: bool) -> None:
    """Type and object metadata inside every ``x-kubernetes-embedded-resource``, in place."""
    for key in ("properties",):
        for child in (node.get(key) or {}).values():
            if isinstance(child, dict):
                _embed(child, prefix, v2)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            _embed(node[key], prefix, v2)
    if v2 and node.get("x-kubernetes-preserve-unknown-fields"):
        return
    if node.get("x-kubernetes-embedded-resource"):
        props = node.setdefault("properties", {})
        props.update(_type_meta())
        props["metadata"] = _meta_ref(prefix, _OBJECT_META, "io.k8s.api.core.v1.Pod")
        required = node.setdefault("required", [])
        for name in ("kind", "apiVersion"):
            if name not in required:
                required.append(name)


def crd_definitions(
    crd: dict[str, Any], version: str, *, v2: bool, prefix: str
) -> dict[str, dict[str, Any]]:
    """The definitions of one served version of ``crd``: its kind and its list kind.

    ``prefix`` is where references point (``#/definitions/`` or ``#/components/schemas/``).
    """
    spec = crd.get("spec") or {}
    group = str(spec.get("group", ""))
    names = spec.get("names") or {}
    kind = str(names.get("kind", ""))
    list_kind = str(names.get("listKind") or kind + "List")
    plural = str(names.get("plural", ""))
    entry: dict[str, Any] = next(
        (v for v in spec.get("versions") or [] if v.get("name") == version), {}
    )
    raw = (entry.get("schema") or spec.get("validation") or {}).get("openAPIV3Schema")
    preserve = bool(spec.get("preserveUnknownFields"))
    gvk = {"group": group, "version": version, "kind": kind}
    schema: dict[str, Any]
    if not isinstance(raw, dict) or (
        v2 and (raw.get("x-kubernetes-preserve-unknown-fields") or preserve)
    ):
        schema = {"type": "object"}
    else:
        schema = _to_v2(raw) if v2 else copy.deepcopy(raw)
        props = schema.setdefault("properties", {})
        props["metadata"] = _meta_ref(prefix, _OBJECT_META, "io.k8s.api.core.v1.Pod")
        props.update(_type_meta())
        _embed(schema, prefix, v2)
    schema["x-kubernetes-group-version-kind"] = [gvk]
    name = definition_name(group, version, kind)
    list_schema: dict[str, Any] = {
        "description": f"{list_kind} is a list of {kind}",
        "required": ["items"],
        "properties": {
            "items": {
                "description": f"List of {plural}. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                "type": "array",
                "items": {"$ref": prefix + name},
            },
            "metadata": _meta_ref(prefix, _LIST_META, "io.k8s.api.core.v1.PodList"),
            **_type_meta(),
        },
        "x-kubernetes-group-version-kind": [{**gvk, "kind": list_kind}],
    }
    return {name: schema, definition_name(group, version, list_kind): list_schema}
