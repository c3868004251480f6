"""Paths outside the resources: health checks, ``/version``, discovery, OpenAPI, the root index.

:func:`serve` answers them from the registry (documents from :mod:`.discovery` and
:mod:`.openapi`) and returns None for a resource path; :func:`not_found` is the 404 for a path
nothing serves, in the form kube-apiserver's handler chain gives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from kube_runtime.envtest.server import discovery, errors
from kube_runtime.envtest.server.http import Request, Response
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.responses import error_response, json_response

if TYPE_CHECKING:  # imported on the first /openapi request: its protobuf encoding
    # (google.protobuf) costs ~35 ms of CPU at import, which a cluster nobody asks for its
    # OpenAPI documents never uses
    from kube_runtime.envtest.server import openapi

#: Paths answered without authentication.
OPEN_PATHS = ("/healthz", "/livez", "/readyz", "/version")


def serve(
    registry: Registry,
    address: str,
    request: Request,
    path: str,
    crds: openapi.CrdSource | None = None,
) -> Response | None:
    """The answer for a non-resource ``path`` (without its trailing ``/``), None for others.

    ``crds`` gives the stored CustomResourceDefinitions, whose schemas the OpenAPI documents
    publish."""
    if path in ("/healthz", "/livez", "/readyz"):
        return Response(200, b"ok", "text/plain")
    if path == "/version":
        return json_response(200, discovery.SERVER_VERSION)
    if path in ("/api", "/apis"):
        version = discovery.aggregated_media_type(request.headers.get("accept", ""))
        if version is not None:
            listed = discovery.aggregated_discovery(registry, core=path == "/api", version=version)
            content_type = discovery.aggregated_content_type(version)
            return Response(200, orjson.dumps(listed), content_type, {})
        if path == "/api":
            return json_response(200, discovery.api_versions(address))
        return json_response(200, discovery.api_group_list(registry))
    if path.startswith("/openapi"):
        from kube_runtime.envtest.server import openapi

        return openapi.serve(registry, request, path, crds)
    if path == "/":
        return json_response(200, discovery.root_paths(registry))
    parts = path.strip("/").split("/")
    if parts[0] not in ("api", "apis"):  # kube-apiserver's index answers with a 404
        return json_response(404, discovery.root_paths(registry))
    doc = None
    if parts[0] == "api" and len(parts) == 2:
        doc = discovery.api_resource_list(registry, "", parts[1])
    elif parts[0] == "apis" and len(parts) == 2:
        doc = discovery.api_group(registry, parts[1])
    elif parts[0] == "apis" and len(parts) == 3:
        doc = discovery.api_resource_list(registry, parts[1], parts[2])
    else:
        return None
    return json_response(200, doc) if doc else not_found(registry, parts)


def not_found(registry: Registry, parts: list[str]) -> Response:
    """The 404 for a path nothing serves, as kube-apiserver's handler chain answers it.

    Paths of the core API and of groups with built-in resources end in their own
    handlers: a JSON ``Status`` NotFound ("the server could not find the requested
    resource"). Every other ``/apis/<group>`` path (an unknown group, or a CRD group
    whose version, resource or scope is not served, e.g. after its CRD was deleted)
    falls through to the final not-found handler: ``404 page not found`` as text/plain.
    """
    group = parts[1] if parts[0] == "apis" and len(parts) > 1 else None
    if group is not None and not any(info.group == group and not info.custom for info in registry):
        return Response(
            404,
            b"404 page not found\n",
            "text/plain; charset=utf-8",
            {"X-Content-Type-Options": "nosniff"},
        )
    return error_response(
        errors.api_error(404, "the server could not find the requested resource", "NotFound", {})
    )
