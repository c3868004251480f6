"""Resource URLs and verbs: ``/api/v1/namespaces/ns/pods/p/status`` -> :class:`Route`, method -> verb.

A path is routed when the registry serves its group, version and resource in the path's scope
and names a subresource the resource has; anything else is not routed (the caller answers
404), except an unknown subresource of a custom resource, which the CRD handler answers with a
NotFound about the object, as apiextensions-apiserver does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server.http import Request
from kube_runtime.envtest.server.resources import Registry, ResourceInfo

#: Query-parameter values that mean true.
TRUE = ("1", "true", "True")

_METHOD_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


@dataclass
class Route:
    """A parsed resource URL."""

    info: ResourceInfo
    version: str
    namespace: str | None
    name: str | None
    subresource: str
    watch_path: bool
    #: Converts the objects of a resource whose CRD converts through a webhook (None: the
    #: ``apiVersion`` is rewritten).
    convert: Callable[[list[dict[str, Any]], str], list[dict[str, Any]]] | None = None


def route(registry: Registry, parts: list[str]) -> Route | None:
    """The route of a path split at ``/`` (``["api", "v1", ...]`` or ``["apis", group, ...]``)."""
    if parts[0] == "api" and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    watch_path = False
    if rest and rest[0] == "watch":
        watch_path, rest = True, rest[1:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        candidate = registry.lookup(group, version, rest[2])
        if candidate is not None and candidate.namespaced:
            namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        return None
    info = registry.lookup(group, version, rest[0])
    if info is None:
        return None
    if info.namespaced is False and namespace is not None:
        return None
    name = rest[1] if len(rest) > 1 else None
    if info.namespaced and namespace is None and name is not None:
        return None  # a namespaced object's path names its namespace
    sub = rest[2] if len(rest) > 2 else ""
    if sub == "approval" and info.key == ("certificates.k8s.io", "certificatesigningrequests"):
        sub = "status"  # a CSR's approval writes its status (conditions), as status does
    if sub and not (
        (sub == "status" and info.has_status)
        or (sub == "scale" and info.scale is not None)
        or (sub == "finalize" and info.key == ("", "namespaces"))
        or (sub == "binding" and info.key == ("", "pods"))
    ):
        if info.custom and name is not None:
            # The CRD handler answers an unknown subresource of its kind itself.
            raise errors.not_found(info.resource_name(), info.group, name)
        return None
    return Route(info, version, namespace, name, sub, watch_path)


def verb(request: Request, route: Route) -> str:
    """The API verb of a routed request; 405 for a method the route does not take."""
    method = request.method
    if method in ("GET", "HEAD"):
        watch = route.watch_path or request.param("watch", "") in TRUE
        found = "watch" if watch else ("get" if route.name else "list")
    elif method == "DELETE":
        found = "delete" if route.name else "deletecollection"
    else:
        found = _METHOD_VERBS.get(method, "")
    binding = route.subresource == "binding"
    if (
        not found
        or (found == "create" and route.name and not binding)
        or (found in ("update", "patch") and not route.name)
        or (binding and found != "create")
    ):
        raise errors.method_not_allowed()
    return found
