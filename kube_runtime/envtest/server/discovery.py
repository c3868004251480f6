"""Discovery documents (``/api``, ``/apis``, ``/apis/{group}/{version}``...) built from the registry.

The shapes follow kube-apiserver's unaggregated discovery (``APIVersions``, ``APIGroupList``,
``APIGroup``, ``APIResourceList``); kubectl and client-go fall back to these when the server
does not offer aggregated discovery.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kube_runtime.envtest.server.resources import STATUS_VERBS, Registry, ResourceInfo

SERVER_VERSION = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-kube-runtime",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.22.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group_doc(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group_doc(g, vs) for g, vs in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


#: Paths served besides the API groups (health checks, version, OpenAPI).
_OTHER_PATHS = ("/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version")


def root_paths(registry: Registry) -> dict[str, Any]:
    """``{"paths": [...]}``: what ``GET /`` lists (and a 404 outside the API answers), as
    kube-apiserver's index: every API root, group and group-version, and the other paths."""
    paths = {"/api", "/apis", "/apis/", *_OTHER_PATHS}
    for group, versions in registry.groups():
        if group:
            paths.add(f"/apis/{group}")
        for version in versions:
            paths.add(f"/apis/{group}/{version}" if group else f"/api/{version}")
    return {"paths": sorted(paths)}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    for g, vs in registry.groups():
        if g == group and g:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(g, vs)}
    return None


def _storage_hash(info: ResourceInfo) -> str:
    digest = hashlib.sha256(f"{info.group}/{info.version}/{info.kind}".encode()).digest()
    import base64

    return base64.b64encode(digest[:8]).decode()


def _resource_entries(info: ResourceInfo) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": list(info.verbs),
        "storageVersionHash": _storage_hash(info),
    }
    if info.short_names:
        main["shortNames"] = list(info.short_names)
    if info.categories:
        main["categories"] = list(info.categories)
    out = [main]
    if info.has_status:
        out.append(
            {
                "name": f"{info.plural}/status",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": list(STATUS_VERBS),
            }
        )
    if info.scale is not None:
        out.append(
            {
                "name": f"{info.plural}/scale",
                "singularName": "",
                "namespaced": info.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": list(STATUS_VERBS),
            }
        )
    if info.group == "" and info.plural == "pods":
        out.append(
            {
                "name": "pods/binding",
                "singularName": "",
                "namespaced": True,
                "kind": "Binding",
                "verbs": ["create"],
            }
        )
    if info.group == "" and info.plural == "namespaces":
        out.append(
            {
                "name": "namespaces/finalize",
                "singularName": "",
                "namespaced": False,
                "kind": "Namespace",
                "verbs": ["update"],
            }
        )
    return out


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    infos = registry.resources_in(group, version)
    if not infos:
        return None
    resources: list[dict[str, Any]] = []
    for info in infos:
        resources.extend(_resource_entries(info))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
