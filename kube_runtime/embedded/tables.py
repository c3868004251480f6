"""Server-side printing: ``meta.k8s.io/v1 Table`` responses for ``kubectl get``.

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints the cells the
server rendered. Columns follow kube-apiserver's printers for the built-in kinds and a CRD's
``additionalPrinterColumns`` for custom resources (default: Name and Age).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kube_runtime.embedded.resources import ResourceInfo
from kube_runtime.embedded.storage import Obj, parse_rfc3339

Column = tuple[str, str, str, Callable[[Obj], Any]]


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def human_age(timestamp: str | None, now: float | None = None) -> str:
    """kubectl's short duration: 45s, 5m10s, 3h, 2d... ("<unknown>" when unset)."""
    if not timestamp:
        return "<unknown>"
    seconds = int((now or time.time()) - parse_rfc3339(timestamp))
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h"
    return f"{hours // 24}d"


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj.get("metadata") or {}
    return meta


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name", ""))


def _age(obj: Obj) -> str:
    return human_age(_meta(obj).get("creationTimestamp"))


NAME: Column = ("Name", "string", "name", _name)
AGE: Column = ("Age", "string", "", _age)


def _pod_ready(pod: Obj) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    ready = sum(1 for s in statuses if s.get("ready"))
    return f"{ready}/{total}"


def _pod_status(pod: Obj) -> str:
    if _meta(pod).get("deletionTimestamp"):
        return "Terminating"
    status = pod.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            return str(waiting["reason"])
        terminated = (cs.get("state") or {}).get("terminated")
        if terminated and terminated.get("reason") and status.get("phase") != "Running":
            return str(terminated["reason"])
    return str(status.get("reason") or status.get("phase") or "Pending")


def _pod_restarts(pod: Obj) -> int:
    return sum(
        int(s.get("restartCount") or 0)
        for s in (pod.get("status") or {}).get("containerStatuses") or []
    )


def _replicas_ready(obj: Obj) -> str:
    status = obj.get("status") or {}
    return f"{status.get('readyReplicas', 0)}/{(obj.get('spec') or {}).get('replicas', 0)}"


def _spec(obj: Obj, *path: str) -> Any:
    cur: Any = obj
    for p in path:
        cur = (cur or {}).get(p) if isinstance(cur, dict) else None
    return cur


BUILTIN_COLUMNS: dict[tuple[str, str], list[Column]] = {
    ("", "pods"): [
        NAME,
        ("Ready", "string", "", _pod_ready),
        ("Status", "string", "", _pod_status),
        ("Restarts", "integer", "", _pod_restarts),
        AGE,
        ("IP", "string", "", lambda o: _spec(o, "status", "podIP") or "<none>"),
        ("Node", "string", "", lambda o: _spec(o, "spec", "nodeName") or "<none>"),
    ],
    ("apps", "statefulsets"): [NAME, ("Ready", "string", "", _replicas_ready), AGE],
    ("apps", "deployments"): [
        NAME,
        ("Ready", "string", "", _replicas_ready),
        ("Up-to-date", "integer", "", lambda o: _spec(o, "status", "updatedReplicas") or 0),
        ("Available", "integer", "", lambda o: _spec(o, "status", "availableReplicas") or 0),
        AGE,
    ],
    ("apps", "replicasets"): [
        NAME,
        ("Desired", "integer", "", lambda o: _spec(o, "spec", "replicas") or 0),
        ("Current", "integer", "", lambda o: _spec(o, "status", "replicas") or 0),
        ("Ready", "integer", "", lambda o: _spec(o, "status", "readyReplicas") or 0),
        AGE,
    ],
    ("apps", "controllerrevisions"): [
        NAME,
        (
            "Controller",
            "string",
            "",
            lambda o: next(
                (
                    f"{r.get('kind', '').lower()}.{r.get('apiVersion', '').split('/')[0]}/{r.get('name')}"
                    for r in _meta(o).get("ownerReferences") or []
                    if r.get("controller")
                ),
                "<none>",
            ),
        ),
        ("Revision", "integer", "", lambda o: o.get("revision", 0)),
        AGE,
    ],
    ("", "namespaces"): [
        NAME,
        ("Status", "string", "", lambda o: _spec(o, "status", "phase") or ""),
        AGE,
    ],
    ("", "nodes"): [
        NAME,
        (
            "Status",
            "string",
            "",
            lambda o: next(
                (
                    "Ready" if c.get("status") == "True" else "NotReady"
                    for c in _spec(o, "status", "conditions") or []
                    if c.get("type") == "Ready"
                ),
                "Unknown",
            ),
        ),
        ("Roles", "string", "", lambda o: "<none>"),
        AGE,
        ("Version", "string", "", lambda o: _spec(o, "status", "nodeInfo", "kubeletVersion") or ""),
    ],
    ("", "persistentvolumeclaims"): [
        NAME,
        ("Status", "string", "", lambda o: _spec(o, "status", "phase") or ""),
        ("Volume", "string", "", lambda o: _spec(o, "spec", "volumeName") or ""),
        (
            "Capacity",
            "string",
            "",
            lambda o: (_spec(o, "status", "capacity") or {}).get("storage", ""),
        ),
        (
            "Access Modes",
            "string",
            "",
            lambda o: ",".join(
                {
                    "ReadWriteOnce": "RWO",
                    "ReadOnlyMany": "ROX",
                    "ReadWriteMany": "RWX",
                    "ReadWriteOncePod": "RWOP",
                }.get(m, m)
                for m in _spec(o, "status", "accessModes") or []
            ),
        ),
        ("StorageClass", "string", "", lambda o: _spec(o, "spec", "storageClassName") or "<unset>"),
        AGE,
    ],
    ("", "events"): [
        (
            "Last Seen",
            "string",
            "",
            lambda o: human_age(
                o.get("lastTimestamp") or o.get("eventTime") or _meta(o).get("creationTimestamp")
            ),
        ),
        ("Type", "string", "", lambda o: o.get("type", "")),
        ("Reason", "string", "", lambda o: o.get("reason", "")),
        (
            "Object",
            "string",
            "",
            lambda o: (
                f"{str(_spec(o, 'involvedObject', 'kind') or '').lower()}/{_spec(o, 'involvedObject', 'name') or ''}"
            ),
        ),
        ("Message", "string", "", lambda o: o.get("message", "")),
    ],
    ("", "services"): [
        NAME,
        ("Type", "string", "", lambda o: _spec(o, "spec", "type") or "ClusterIP"),
        ("Cluster-IP", "string", "", lambda o: _spec(o, "spec", "clusterIP") or "<none>"),
        ("External-IP", "string", "", lambda o: "<none>"),
        (
            "Port(s)",
            "string",
            "",
            lambda o: (
                ",".join(
                    f"{p.get('port')}/{p.get('protocol', 'TCP')}"
                    for p in _spec(o, "spec", "ports") or []
                )
                or "<none>"
            ),
        ),
        AGE,
    ],
    ("", "configmaps"): [
        NAME,
        (
            "Data",
            "integer",
            "",
            lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
        ),
        AGE,
    ],
    ("", "secrets"): [
        NAME,
        ("Type", "string", "", lambda o: o.get("type", "")),
        ("Data", "integer", "", lambda o: len(o.get("data") or {})),
        AGE,
    ],
    ("coordination.k8s.io", "leases"): [
        NAME,
        ("Holder", "string", "", lambda o: _spec(o, "spec", "holderIdentity") or ""),
        AGE,
    ],
    ("apiextensions.k8s.io", "customresourcedefinitions"): [
        NAME,
        ("Created At", "date", "", lambda o: _meta(o).get("creationTimestamp", "")),
    ],
}


def _json_path(obj: Obj, path: str) -> Any:
    """The simple JSONPath subset CRD printer columns use: ``.a.b``, ``.a[0].b``."""
    cur: Any = obj
    for raw in path.strip().lstrip(".").split("."):
        if not raw:
            continue
        name, _, index = raw.partition("[")
        if name:
            cur = cur.get(name) if isinstance(cur, dict) else None
        if index:
            try:
                i = int(index.rstrip("]"))
            except ValueError:
                return None
            cur = cur[i] if isinstance(cur, list) and -len(cur) <= i < len(cur) else None
        if cur is None:
            return None
    return cur


def _custom_columns(info: ResourceInfo) -> list[Column]:
    cols: list[Column] = [NAME]
    for spec in info.printer_columns:
        path = str(spec.get("jsonPath", ""))
        if path == ".metadata.creationTimestamp" and spec.get("type") == "date":
            cols.append((str(spec.get("name", "Age")), "string", "", _age))
            continue
        cols.append(
            (
                str(spec.get("name", "")),
                str(spec.get("type", "string")),
                str(spec.get("format", "")),
                _path_cell(path),
            )
        )
    if not info.printer_columns:
        cols.append(AGE)
    return cols


def _path_cell(path: str) -> Callable[[Obj], Any]:
    def cell(obj: Obj) -> Any:
        return _render(_json_path(obj, path))

    return cell


def _render(value: Any) -> Any:
    if value is None:
        return "<none>"
    return value


def columns_for(info: ResourceInfo) -> list[Column]:
    if info.custom:
        return _custom_columns(info)
    return BUILTIN_COLUMNS.get(info.key, [NAME, AGE])


def table(
    info: ResourceInfo, objects: list[Obj], resource_version: str, include_object: str | None
) -> dict[str, Any]:
    cols = columns_for(info)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": [fn(obj) for _, _, _, fn in cols]}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": _meta(obj),
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {"name": name, "type": type_, "format": fmt, "description": "", "priority": 0}
            for name, type_, fmt, _ in cols
        ],
        "rows": rows,
    }
