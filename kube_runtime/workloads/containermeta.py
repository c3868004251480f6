"""Environment variables taken from pod metadata, and the runtime container meta that reports
what each running container got (openkruise ``pkg/util/containermeta`` and the kruise-daemon's
``apps.kruise.io/runtime-containers-meta`` annotation).

A container *refers to* a label or annotation when one of its env vars has no literal value
and a ``valueFrom.fieldRef`` of ``metadata.labels['key']`` / ``metadata.annotations['key']``
(:func:`refers_to_meta`). :func:`expected_env_hash` hashes the values such env vars would get
from a pod's metadata now; the node agent records, per running container, the hash of the
values the container was started with (:func:`runtime_meta_set`, stored in
:data:`RUNTIME_META_ANNOTATION`); an in-place update of such env vars has completed when every
container's recorded hash equals the expected one (:func:`env_hashes_consistent`).

The hash is FNV-1a (32 bit) of the JSON list of ``{"name", "value"}`` sorted by name, as
Kruise's ``hashEnvs`` hashes the same list (Kruise feeds the JSON through ``DeepHashObject``
first, so the numbers differ from Kruise's; only equality matters).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from kube_runtime.meta import ObjView as Obj
from kube_runtime.meta import annotation_json

__all__ = [
    "EXCLUDED_ENVS",
    "RUNTIME_META_ANNOTATION",
    "env_hashes_consistent",
    "expected_env_hash",
    "meta_refs",
    "refers_to_meta",
    "runtime_meta_set",
]

RUNTIME_META_ANNOTATION: Final = "apps.kruise.io/runtime-containers-meta"
#: Env vars Kruise's hasher skips (SidecarSet bookkeeping).
EXCLUDED_ENVS: Final = frozenset({"SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT"})

_SUBSCRIPTED = re.compile(r"^(metadata\.(?:labels|annotations))\['(.*)'\]$")


def meta_refs(container: Obj) -> list[tuple[str, str, str]]:
    """``(env name, "metadata.labels" | "metadata.annotations", key)`` of each env var of
    ``container`` taken from a pod label or annotation (upstream ``IsContainerReferenceToMeta``:
    no literal value, a ``fieldRef`` with a subscripted path, not a SidecarSet env)."""
    refs: list[tuple[str, str, str]] = []
    for env in container.get("env") or ():
        if env.get("value") or str(env.get("name")) in EXCLUDED_ENVS:
            continue
        field_ref = (env.get("valueFrom") or {}).get("fieldRef") or {}
        match = _SUBSCRIPTED.match(str(field_ref.get("fieldPath") or ""))
        if match:
            refs.append((str(env.get("name")), match.group(1), match.group(2)))
    return refs


def refers_to_meta(container: Obj, path: str, key: str) -> bool:
    """``container`` has an env var taken from ``path`` (``metadata.labels`` or
    ``metadata.annotations``) at ``key``."""
    return any(p == path and k == key for _, p, k in meta_refs(container))


def _fnv1a32(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def expected_env_hash(container: Obj, pod_meta: Obj) -> int:
    """The hash of the values ``container``'s metadata env vars get from ``pod_meta`` (a pod's
    ``metadata``); a missing key gives the empty string, as the kubelet does."""
    labels = pod_meta.get("labels") or {}
    annotations = pod_meta.get("annotations") or {}
    envs = []
    for name, path, key in meta_refs(container):
        source = labels if path == "metadata.labels" else annotations
        envs.append({"name": name, "value": str(source.get(key) or "")})
    envs.sort(key=lambda e: e["name"])
    return _fnv1a32(json.dumps(envs, separators=(",", ":")).encode())


def runtime_meta_set(pod: Obj) -> dict[str, Any] | None:
    """The pod's runtime container meta (``{"containers": [{"name", "containerID",
    "restartCount", "hashes": {"extractedEnvFromMetadataHash"}}]}``), or None when absent or
    not JSON."""
    return annotation_json(pod, RUNTIME_META_ANNOTATION)


def env_hashes_consistent(pod: Obj) -> str | None:
    """None when every container of ``pod`` runs with the metadata env values the pod's
    metadata gives now (upstream ``checkAllContainersHashConsistent`` with the
    extracted-env hash), else why not: no runtime meta, a container without status or meta,
    a meta entry of another container instance, or a different hash."""
    meta_set = runtime_meta_set(pod)
    if meta_set is None:
        return "waiting for the runtime container meta"
    pod_meta = pod.get("metadata") or {}
    statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or ()}
    metas = {c.get("name"): c for c in meta_set.get("containers") or () if isinstance(c, dict)}
    for container in (pod.get("spec") or {}).get("containers") or ():
        name = container.get("name")
        status, entry = statuses.get(name), metas.get(name)
        if status is None:
            return f"container {name} has no status"
        if entry is None:
            return f"container {name} has no runtime meta"
        if entry.get("containerID") != status.get("containerID"):
            return f"container {name} runtime meta is of another container"
        got = (entry.get("hashes") or {}).get("extractedEnvFromMetadataHash")
        if got != expected_env_hash(container, pod_meta):
            return f"container {name} still runs with its old env from metadata"
    return None
