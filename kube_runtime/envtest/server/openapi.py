"""The ``/openapi/v2`` and ``/openapi/v3`` endpoints.

kubectl downloads the OpenAPI v2 document (as protobuf) for client-side validation and
strategic-merge computations; a kind missing from it is simply not validated client-side, and
kubectl falls back to its compiled-in types for built-in kinds. The embedded server serves a
minimal, valid document (no definitions), and no v3 document, so kubectl takes those paths.
"""

from __future__ import annotations

import orjson

from kube_runtime.envtest.server.errors import api_error
from kube_runtime.envtest.server.http import Response
from kube_runtime.envtest.server.resources import Registry

PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


_V2_JSON = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes (kube-runtime embedded)", "version": "v1.31.0"},
    "paths": {},
    "definitions": {},
}


def serve(registry: Registry, path: str, accept: str) -> Response:
    if path == "/openapi/v2":
        if "protobuf" in accept:
            # An empty message is a valid (empty) gnostic openapi_v2.Document.
            return Response(200, b"", PROTOBUF_V2)
        return Response(200, orjson.dumps(_V2_JSON), "application/json")
    missing = api_error(404, "the server could not find the requested resource", "NotFound")
    return Response(404, orjson.dumps(missing.status), "application/json")
