"""Discovery documents (``/api``, ``/apis``, ``/apis/{group}/{version}``...) built from the registry.

The shapes follow kube-apiserver's unaggregated discovery (``APIVersions``, ``APIGroupList``,
``APIGroup``, ``APIResourceList``) and, when a client asks for it in ``Accept`` (current
kubectl and client-go do, first), its aggregated discovery: ``/api`` and ``/apis`` as one
``apidiscovery.k8s.io`` ``APIGroupDiscoveryList`` each (v2, or v2beta1 as 1.26-1.29 serve it),
every group, version and resource with its subresources in one document
(:func:`aggregated_media_type`, :func:`aggregated_discovery`).
"""

from __future__ import annotations

import base64
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
    """kube-apiserver's hash of the storage version's group/version/kind (a view's is the
    viewed resource's: ``events.k8s.io`` Events hash as core ``v1`` Events)."""
    group, _, version = info.api_version().rpartition("/")
    digest = hashlib.sha256(f"{group}/{version}/{info.kind}".encode()).digest()
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
    if info.key == ("certificates.k8s.io", "certificatesigningrequests"):
        out.append(
            {
                "name": f"{info.plural}/approval",
                "singularName": "",
                "namespaced": False,
                "kind": info.kind,
                "verbs": list(STATUS_VERBS),
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
    # kube-apiserver lists a resource's subresources by name (scale before status)
    return [main, *sorted(out[1:], key=lambda entry: entry["name"])]


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


_AGGREGATED_VERSIONS = ("v2", "v2beta1")


def aggregated_media_type(accept: str) -> str | None:
    """The aggregated-discovery version ``accept`` asks for first (``"v2"`` or
    ``"v2beta1"``), None when it asks for the unaggregated documents."""
    for clause in accept.split(","):
        params = dict(part.strip().split("=", 1) for part in clause.split(";")[1:] if "=" in part)
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList":
            version = params.get("v")
            if version in _AGGREGATED_VERSIONS:
                return version
        elif clause.split(";", 1)[0].strip() in ("application/json", "*/*"):
            return None
    return None


def aggregated_content_type(version: str) -> str:
    """The ``Content-Type`` of an aggregated discovery document of ``version``."""
    return f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"


def _kind_ref(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _resource_discovery(info: ResourceInfo, version: str) -> dict[str, Any]:
    """One ``APIResourceDiscovery``: the resource and its subresources."""
    main, *subs = _resource_entries(info)
    entry: dict[str, Any] = {
        "resource": info.plural,
        "responseKind": _kind_ref(info.group, version, info.kind),
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular,
        "verbs": main["verbs"],
    }
    for key in ("shortNames", "categories"):
        if key in main:
            entry[key] = main[key]
    if subs:
        entry["subresources"] = [
            {
                "subresource": sub["name"].split("/", 1)[1],
                "responseKind": _kind_ref(
                    sub.get("group", info.group), sub.get("version", version), sub["kind"]
                ),
                "verbs": sub["verbs"],
            }
            for sub in subs
        ]
    return entry


def aggregated_discovery(registry: Registry, *, core: bool, version: str) -> dict[str, Any]:
    """``/api`` (``core``) or ``/apis`` as an ``APIGroupDiscoveryList`` of ``version``: each
    group with its versions (preferred first), each version with every resource."""
    items = []
    for group, versions in registry.groups():
        if bool(group) == core:
            continue
        entries = [
            {
                "version": v,
                "resources": [
                    _resource_discovery(info, v) for info in registry.resources_in(group, v)
                ],
                "freshness": "Current",
            }
            for v in versions
        ]
        metadata: dict[str, Any] = {"creationTimestamp": None}
        if group:
            metadata["name"] = group
        items.append({"metadata": metadata, "versions": entries})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }
