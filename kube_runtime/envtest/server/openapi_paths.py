"""The ``paths`` of the OpenAPI documents: one entry per REST path of each served resource.

Clients read more than schemas from the paths: kubectl's ``explain`` (OpenAPI v3) finds a
resource's kind through the ``x-kubernetes-group-version-kind`` of its operations, and
kubectl decides whether the server validates fields itself by finding ``fieldValidation``
among the parameters of the kind's PATCH operation. Each operation carries
``x-kubernetes-action`` and the kind, the query parameters the embedded server accepts, and
the body and response schemas, as kube-apiserver lays them out. :func:`resource_paths`
gives them in v2 form; :func:`to_v3` turns v2 operations into v3 ones.
"""

from __future__ import annotations

from typing import Any

from kube_runtime.envtest.server.resources import ResourceInfo

__all__ = ["resource_paths", "to_v3"]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_MEDIA = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
_PATCH_MEDIA = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
]


def _query(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "type": type_,
        "uniqueItems": True,
    }


_PRETTY = _query("pretty", "If 'true', then the output is pretty printed.")
_DRY_RUN = _query("dryRun", "When present (All), the write is checked but not persisted.")
_FIELD_MANAGER = _query("fieldManager", "The name of the actor making these changes.")
_FIELD_VALIDATION = _query(
    "fieldValidation",
    "What to do with unknown or duplicate fields in the body: Ignore (drop them), Warn (drop "
    "them and answer a Warning header for each) or Strict (fail the request).",
)
_FORCE = _query("force", "Apply only: take over fields other managers own.", "boolean")
#: The query parameters of every write.
_WRITE = (_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION)
_LIST = [
    _query("allowWatchBookmarks", "Ask for BOOKMARK events on a watch.", "boolean"),
    _query("continue", "The continue token of the previous page."),
    _query("fieldSelector", "Only the objects whose fields match."),
    _query("labelSelector", "Only the objects whose labels match."),
    _query("limit", "At most this many objects; the rest is behind a continue token.", "integer"),
    _query("resourceVersion", "The resource version to list or watch from."),
    _query("resourceVersionMatch", "How resourceVersion applies to a list."),
    _query("sendInitialEvents", "Start a watch with the current objects.", "boolean"),
    _query("timeoutSeconds", "End the list or watch after this many seconds.", "integer"),
    _query("watch", "Watch for changes instead of listing.", "boolean"),
]
_DELETE = [
    _DRY_RUN,
    _query("gracePeriodSeconds", "Seconds before the object is deleted.", "integer"),
    _query("propagationPolicy", "Orphan, Background or Foreground garbage collection."),
]


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "description": description,
        "required": True,
        "type": "string",
        "uniqueItems": True,
    }


def _body(ref: str) -> dict[str, Any]:
    return {"name": "body", "in": "body", "required": True, "schema": {"$ref": ref}}


def _operation(
    action: str,
    op_id: str,
    description: str,
    gvk: dict[str, str],
    params: list[dict[str, Any]],
    responses: dict[str, str],
    *,
    consumes: list[str] | None = None,
) -> dict[str, Any]:
    op: dict[str, Any] = {
        "description": description,
        "consumes": consumes or ["*/*"],
        "produces": _MEDIA,
        "schemes": ["https"],
        "tags": [op_id],
        "operationId": op_id,
        "parameters": params,
        "responses": _responses(responses),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }
    return op


_TEXTS = {"200": "OK", "201": "Created", "202": "Accepted"}


def _responses(refs: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        code: {"description": _TEXTS[code], "schema": {"$ref": ref}} for code, ref in refs.items()
    }
    out["401"] = {"description": "Unauthorized"}
    return out


def _camel(group: str, version: str) -> str:
    if not group:
        return "CoreV" + version[1:]
    words = group.removesuffix(".k8s.io").replace("-", ".").split(".")
    return "".join(w[:1].upper() + w[1:] for w in words) + version[:1].upper() + version[1:]


def resource_paths(
    info: ResourceInfo, version: str, kind_ref: str, list_ref: str | None, prefix: str
) -> dict[str, dict[str, Any]]:
    """The v2 path items of one resource in one version.

    ``kind_ref`` and ``list_ref`` are the definition names of the kind and its list;
    ``prefix`` is where references point (``#/definitions/``).
    """
    root = f"/apis/{info.group}/{version}" if info.group else f"/api/{version}"
    scope = "Namespaced" if info.namespaced else ""
    base = (
        f"{root}/namespaces/{{namespace}}/{info.plural}"
        if info.namespaced
        else f"{root}/{info.plural}"
    )
    gvk = {"group": info.group, "version": version, "kind": info.kind}
    obj, status = prefix + kind_ref, prefix + _META + "Status"
    ids = _camel(info.group, version) + scope + info.kind
    common = (
        [_path_param("namespace", "object name and auth scope, such as for teams and projects")]
        if info.namespaced
        else []
    )
    name = _path_param("name", f"name of the {info.kind}")
    verbs = set(info.verbs)
    paths: dict[str, dict[str, Any]] = {}

    collection: dict[str, Any] = {"parameters": [*common, _PRETTY]}
    if "list" in verbs and list_ref:
        collection["get"] = _operation(
            "list",
            "list" + ids,
            f"list or watch objects of kind {info.kind}",
            gvk,
            _LIST,
            {"200": prefix + list_ref},
        )
    if "create" in verbs:
        collection["post"] = _operation(
            "post",
            "create" + ids,
            f"create a {info.kind}",
            gvk,
            [_body(obj), *_WRITE],
            {"200": obj, "201": obj, "202": obj},
        )
    if "deletecollection" in verbs:
        collection["delete"] = _operation(
            "deletecollection",
            "deleteCollection" + ids,
            f"delete collection of {info.kind}",
            gvk,
            [*_LIST, *_DELETE],
            {"200": status},
        )
    paths[base] = collection

    item: dict[str, Any] = {"parameters": [name, *common, _PRETTY]}
    patch = prefix + _META + "Patch"
    own = _read_write(ids, f"the specified {info.kind}", gvk, obj, patch)
    for verb, method in (("get", "get"), ("update", "put"), ("patch", "patch")):
        if verb in verbs:
            item[method] = own[method]
    if "delete" in verbs:
        item["delete"] = _operation(
            "delete",
            "delete" + ids,
            f"delete a {info.kind}",
            gvk,
            _DELETE,
            {"200": status, "202": status},
        )
    paths[f"{base}/{{name}}"] = item

    subs: list[tuple[str, str, dict[str, str]]] = []
    if info.has_status:
        subs.append(("status", obj, gvk))
    if info.scale is not None:
        scale_gvk = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        subs.append(("scale", prefix + "io.k8s.api.autoscaling.v1.Scale", scale_gvk))
    for sub, ref, sub_gvk in subs:
        what = f"{sub} of the specified {info.kind}"
        paths[f"{base}/{{name}}/{sub}"] = {
            "parameters": [name, *common, _PRETTY],
            **_read_write(ids + sub.capitalize(), what, sub_gvk, ref, patch),
        }
    return paths


def _read_write(
    ids: str, what: str, gvk: dict[str, str], ref: str, patch_ref: str
) -> dict[str, dict[str, Any]]:
    """The ``get``, ``put`` and ``patch`` operations of an object or of a subresource of it
    (``what``: "the specified Pod", "status of the specified Pod"; ``ids`` ends the
    operation ids; ``ref`` is the read and written definition, ``patch_ref`` a patch's)."""
    return {
        "get": _operation("get", "read" + ids, f"read {what}", gvk, [], {"200": ref}),
        "put": _operation(
            "put",
            "replace" + ids,
            f"replace {what}",
            gvk,
            [_body(ref), *_WRITE],
            {"200": ref, "201": ref},
        ),
        "patch": _operation(
            "patch",
            "patch" + ids,
            f"partially update {what}",
            gvk,
            [_body(patch_ref), *_WRITE, _FORCE],
            {"200": ref, "201": ref},
            consumes=_PATCH_MEDIA,
        ),
    }


def _v3_param(param: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: param[k] for k in ("name", "in", "description", "required") if k in param
    }
    schema: dict[str, Any] = {"type": param.get("type", "string")}
    if param.get("uniqueItems"):
        schema["uniqueItems"] = True
    out["schema"] = schema
    return out


def _v3_ref(ref: str, v2_prefix: str, v3_prefix: str) -> dict[str, Any]:
    return {"$ref": v3_prefix + ref.removeprefix(v2_prefix)}


def to_v3(item: dict[str, Any], v2_prefix: str, v3_prefix: str) -> dict[str, Any]:
    """A v2 path item as OpenAPI v3 lays it out (request bodies, content per media type)."""
    out: dict[str, Any] = {}
    if "parameters" in item:
        out["parameters"] = [_v3_param(p) for p in item["parameters"]]
    for method in ("get", "put", "post", "delete", "patch"):
        op = item.get(method)
        if op is None:
            continue
        new: dict[str, Any] = {k: op[k] for k in ("tags", "description", "operationId") if k in op}
        params = [p for p in op["parameters"] if p["in"] != "body"]
        body = next((p for p in op["parameters"] if p["in"] == "body"), None)
        if params:
            new["parameters"] = [_v3_param(p) for p in params]
        if body is not None:
            schema = _v3_ref(body["schema"]["$ref"], v2_prefix, v3_prefix)
            new["requestBody"] = {
                "content": {media: {"schema": schema} for media in op["consumes"]},
                "required": True,
            }
        responses: dict[str, Any] = {}
        for code, response in op["responses"].items():
            entry: dict[str, Any] = {"description": response["description"]}
            if "schema" in response:
                schema = _v3_ref(response["schema"]["$ref"], v2_prefix, v3_prefix)
                entry["content"] = {media: {"schema": schema} for media in op["produces"]}
            responses[code] = entry
        new["responses"] = responses
        new["x-kubernetes-action"] = op["x-kubernetes-action"]
        new["x-kubernetes-group-version-kind"] = op["x-kubernetes-group-version-kind"]
        out[method] = new
    return out
