"""The ``/openapi/v2`` and ``/openapi/v3`` endpoints.

What is published: every served built-in kind (definitions from Kubernetes' published spec,
:mod:`.openapi_builtin`) and every served version of every CRD (from its schema,
:mod:`.openapi_crd`), each kind with the definitions it references, and the REST paths of
each resource (:mod:`.openapi_paths`). kubectl reads them for ``explain`` (v3 when served,
else v2), for its client-side validation and the strategic-merge metadata of ``apply`` (v2),
and to learn that the server validates fields itself (``fieldValidation`` among a PATCH
operation's parameters).

* ``/openapi/v2``: one Swagger 2.0 document, as JSON or, when ``Accept`` asks for it, as
  gnostic's ``openapi.v2.Document`` protobuf message (:mod:`.openapi_proto`).
* ``/openapi/v3``: the discovery document, ``{"paths": {"apis/apps/v1": {"serverRelativeURL":
  "/openapi/v3/apis/apps/v1?hash=..."}}}``, and one OpenAPI 3.0 document per group-version
  at that URL. A request with a stale ``hash`` is redirected to the current one; a current
  one may be cached forever, as kube-apiserver answers.

Documents are built on first use and kept until the set of served resources changes (the
registry's generation moves when a CRD is served, changed or removed); every answer carries
an ``ETag`` and a matching ``If-None-Match`` gets a 304, so kubectl's HTTP cache revalidates
cheaply. The protobuf form of ``/openapi/v2`` is shared by the registries of a process that
serve the same document (the last few kept, by the digest of its JSON form).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from kube_runtime.envtest.server import openapi_builtin, openapi_crd, openapi_paths, openapi_proto
from kube_runtime.envtest.server.discovery import SERVER_VERSION
from kube_runtime.envtest.server.errors import api_error
from kube_runtime.envtest.server.http import Request, Response
from kube_runtime.envtest.server.resources import Registry, ResourceInfo

__all__ = ["PROTOBUF_V2", "CrdSource", "serve", "v2_document", "v3_document", "v3_paths"]

#: The media type kubectl asks ``/openapi/v2`` for (and older clients' spelling of it).
PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_PROTOBUF_V2_OLD = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_PROTOBUF_V3 = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
_V2 = openapi_builtin.V2_PREFIX
_V3 = "#/components/schemas/"
_INFO = {"title": "Kubernetes", "version": str(SERVER_VERSION["gitVersion"])}
_SECURITY_V2 = {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}}
_SECURITY_V3 = {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}}
# Referenced by every group-version's paths whatever the kinds reference.
_PATH_DEFINITIONS = (
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
)

#: Returns the stored CustomResourceDefinition objects.
CrdSource = Callable[[], Iterable[dict[str, Any]]]


def _strip_enums(node: Any) -> Any:
    """A schema without its ``enum`` keywords (a property may still be named ``enum``)."""
    if isinstance(node, list):
        return [_strip_enums(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strip_enums(v) for k, v in node.items() if k not in ("enum", "properties")}
    if "properties" in node:
        out["properties"] = {k: _strip_enums(v) for k, v in node["properties"].items()}
    return out


@functools.cache
def _builtin_v2(name: str) -> dict[str, Any]:
    # kube-apiserver publishes enums only in v3.
    result: dict[str, Any] = _strip_enums(openapi_builtin.definitions()[name])
    return result


def _to_v3(node: Any) -> Any:
    """A v2 schema as v3 writes it: references moved, a reference with siblings in allOf."""
    if isinstance(node, list):
        return [_to_v3(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_v3(v) for k, v in node.items() if k != "$ref"}
    if "$ref" in node:
        ref = {"$ref": _V3 + str(node["$ref"]).removeprefix(_V2)}
        if not out:
            return ref
        out["allOf"] = [ref]
    return out


@functools.cache
def _builtin_v3(name: str) -> dict[str, Any]:
    result: dict[str, Any] = _to_v3(openapi_builtin.definitions()[name])
    return result


def _gv_key(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


class _Kind:
    """One served kind in one version: its paths and the definitions it brings."""

    def __init__(self, info: ResourceInfo, version: str) -> None:
        self.info = info
        self.version = version
        self.paths: dict[str, dict[str, Any]] = {}
        self.builtin_roots: list[str] = []
        self.custom_v2: dict[str, dict[str, Any]] = {}
        self.custom_v3: dict[str, dict[str, Any]] = {}


def _kinds(registry: Registry, crds: dict[str, dict[str, Any]]) -> list[_Kind]:
    out: list[_Kind] = []
    for info in registry:
        for version in info.versions:
            kind = _Kind(info, version)
            if info.custom:
                crd = crds.get(f"{info.plural}.{info.group}")
                if crd is None:
                    continue
                kind.custom_v2 = openapi_crd.crd_definitions(crd, version, v2=True, prefix=_V2)
                kind.custom_v3 = openapi_crd.crd_definitions(crd, version, v2=False, prefix=_V3)
                kind_ref, list_ref = list(kind.custom_v2)
            else:
                found = openapi_builtin.kind_definitions(info.group, version, info.kind)
                if found is None:
                    continue
                kind_ref = found
                list_found = openapi_builtin.kind_definitions(info.group, version, info.list_kind)
                list_ref = list_found or ""
                kind.builtin_roots = [r for r in (kind_ref, list_found) if r]
            kind.paths = openapi_paths.resource_paths(
                info, version, kind_ref, list_ref or None, _V2
            )
            out.append(kind)
    return out


def _gathered(kinds: list[_Kind], *, v2: bool) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The kinds' (OpenAPI v2) paths, their custom definitions (v2 or v3, by ``v2``) and the
    built-in definitions the paths start from, later kinds winning on a shared key."""
    paths: dict[str, Any] = {}
    custom: dict[str, Any] = {}
    roots: list[str] = list(_PATH_DEFINITIONS)
    for kind in kinds:
        paths.update(kind.paths)
        custom.update(kind.custom_v2 if v2 else kind.custom_v3)
        roots += kind.builtin_roots
    return paths, custom, roots


def _v2(kinds: list[_Kind]) -> dict[str, Any]:
    paths, custom, roots = _gathered(kinds, v2=True)
    names = openapi_builtin.referenced(roots, [paths, custom])
    definitions = {name: _builtin_v2(name) for name in names}
    definitions.update(custom)
    return {
        "swagger": "2.0",
        "info": _INFO,
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": _SECURITY_V2,
        "security": [{"BearerToken": []}],
    }


def _v3(kinds: list[_Kind]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    v2_paths, custom, roots = _gathered(kinds, v2=False)
    for path, item in sorted(v2_paths.items()):
        paths[path] = openapi_paths.to_v3(item, _V2, _V3)
    names = openapi_builtin.referenced(roots, [v2_paths, *(kind.custom_v2 for kind in kinds)])
    schemas = {name: _builtin_v3(name) for name in names}
    schemas.update(custom)
    return {
        "openapi": "3.0.0",
        "info": _INFO,
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.items())), "securitySchemes": _SECURITY_V3},
    }


def _etag(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


class _Documents:
    """The documents of one registry generation, each built on first use."""

    def __init__(self, generation: int, kinds: list[_Kind]) -> None:
        self.generation = generation
        self.kinds = kinds
        self._lock = threading.Lock()
        self._v2_json: bytes | None = None
        self._v2_proto: bytes | None = None
        self._v2: dict[str, Any] | None = None
        self._by_gv: dict[str, list[_Kind]] = {}
        for kind in kinds:
            self._by_gv.setdefault(_gv_key(kind.info.group, kind.version), []).append(kind)
        self._v3: dict[str, tuple[bytes, str]] = {}

    def v2(self) -> dict[str, Any]:
        with self._lock:
            if self._v2 is None:
                self._v2 = _v2(self.kinds)
            return self._v2

    def v2_json(self) -> bytes:
        if self._v2_json is None:
            self._v2_json = orjson.dumps(self.v2())
        return self._v2_json

    def v2_proto(self) -> bytes:
        if self._v2_proto is None:
            self._v2_proto = _proto_of(self.v2_json(), self.v2)
        return self._v2_proto

    def gv_keys(self) -> list[str]:
        return list(self._by_gv)

    def v3(self, key: str) -> tuple[bytes, str] | None:
        kinds = self._by_gv.get(key)
        if kinds is None:
            return None
        with self._lock:
            if key not in self._v3:
                body = orjson.dumps(_v3(kinds))
                self._v3[key] = (body, _etag(body))
            return self._v3[key]


#: The protobuf form of the last few JSON documents, by the JSON's digest: every cluster of
#: a process that serves the same kinds shares one (encoding takes ~0.2 s, the digest ~1 ms).
_PROTO_BY_JSON: dict[bytes, bytes] = {}
_PROTO_CACHE_SIZE = 4
_PROTO_LOCK = threading.Lock()


def _proto_of(json_body: bytes, document: Callable[[], dict[str, Any]]) -> bytes:
    key = hashlib.sha256(json_body).digest()
    with _PROTO_LOCK:
        found = _PROTO_BY_JSON.get(key)
    if found is None:
        found = openapi_proto.encode(document())
        with _PROTO_LOCK:
            if len(_PROTO_BY_JSON) >= _PROTO_CACHE_SIZE:
                del _PROTO_BY_JSON[next(iter(_PROTO_BY_JSON))]
            _PROTO_BY_JSON[key] = found
    return found


_CACHE: weakref.WeakKeyDictionary[Registry, _Documents] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _documents(registry: Registry, crds: CrdSource | None) -> _Documents:
    generation = registry.generation
    docs = _CACHE.get(registry)
    if docs is not None and docs.generation == generation:
        return docs
    with _CACHE_LOCK:
        docs = _CACHE.get(registry)
        if docs is None or docs.generation != generation:
            by_name = {
                str((crd.get("metadata") or {}).get("name")): crd
                for crd in (crds() if crds else ())
            }
            docs = _Documents(generation, _kinds(registry, by_name))
            _CACHE[registry] = docs
        return docs


def v2_document(registry: Registry, crds: CrdSource | None = None) -> dict[str, Any]:
    """The OpenAPI v2 document of what ``registry`` serves (shared: do not mutate)."""
    return _documents(registry, crds).v2()


def v3_paths(registry: Registry, crds: CrdSource | None = None) -> dict[str, Any]:
    """The ``/openapi/v3`` discovery document."""
    docs = _documents(registry, crds)
    paths = {}
    for key in docs.gv_keys():
        found = docs.v3(key)
        assert found is not None
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={found[1]}"}
    return {"paths": paths}


def v3_document(
    registry: Registry, key: str, crds: CrdSource | None = None
) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version (``apis/apps/v1``), None if not served."""
    found = _documents(registry, crds).v3(key)
    return copy.deepcopy(orjson.loads(found[0])) if found else None


def _not_found() -> Response:
    missing = api_error(404, "the server could not find the requested resource", "NotFound")
    return Response(404, orjson.dumps(missing.status), "application/json")


def _cached(request: Request, body: bytes, content_type: str, etag: str) -> Response:
    quoted = f'"{etag}"'
    headers = {"ETag": quoted, "Vary": "Accept"}
    if request.headers.get("if-none-match") == quoted:
        return Response(304, b"", content_type, headers)
    return Response(200, body, content_type, headers)


def serve(
    registry: Registry, request: Request, path: str, crds: CrdSource | None = None
) -> Response:
    """The answer to a request for an ``/openapi/...`` ``path`` (without a trailing ``/``)."""
    accept = request.headers.get("accept", "")
    docs = _documents(registry, crds)
    if path == "/openapi/v2":
        if PROTOBUF_V2 in accept or _PROTOBUF_V2_OLD in accept:
            body = docs.v2_proto()
            return _cached(request, body, _PROTOBUF_V2_OLD, _etag(body))
        body = docs.v2_json()
        return _cached(request, body, "application/json", _etag(body))
    if path == "/openapi/v3":
        return Response(200, orjson.dumps(v3_paths(registry, crds)), "application/json")
    if path.startswith("/openapi/v3/"):
        key = path[len("/openapi/v3/") :]
        found = docs.v3(key)
        if found is None:
            return _not_found()
        body, digest = found
        if _PROTOBUF_V3 in accept and "json" not in accept and "*/*" not in accept:
            return Response(406, b"", "text/plain")
        wanted = request.param("hash")
        if wanted is not None and wanted != digest:
            location = f"/openapi/v3/{key}?hash={digest}"
            return Response(301, b"", "text/plain", {"Location": location})
        response = _cached(request, body, "application/json", digest)
        if wanted is not None:
            response.headers["Cache-Control"] = "public, immutable"
            response.headers["Expires"] = "Fri, 31 Dec 9999 23:59:59 GMT"
        return response
    return _not_found()
