"""The built-in API groups kube-apiserver 1.20 serves, on the embedded server (issue 21 part 2).

For each kind: discovery lists it (scope, verbs, short names), create / get / list / update /
delete through the REST paths, a server-side default read back, one validation error with
kube-apiserver's message, and the ``kubectl get`` table columns. Runs on both backends: the
real kube-apiserver 1.20 is the referee for messages, defaults and columns. Cluster-scoped
objects get a unique suffix (the cluster is shared by the session).
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import wait_for

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _discovered(client: Client, group_version: str, plural: str) -> dict[str, Any]:
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    doc = client.request("GET", root)
    (entry,) = [r for r in doc["resources"] if r["name"] == plural]
    return dict(entry)


def _collection(group_version: str, plural: str, namespace: str | None = None) -> str:
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    return f"{root}/namespaces/{namespace}/{plural}" if namespace else f"{root}/{plural}"


def _columns(client: Client, path: str) -> tuple[list[str], list[Any]]:
    table = client.request("GET", path, accept=TABLE)
    names = [c["name"] for c in table["columnDefinitions"]]
    return names, table["rows"][0]["cells"]


def _invalid(client: Client, path: str, body: dict[str, Any], method: str = "POST") -> str:
    with pytest.raises(ApiError) as caught:
        client.request(method, path, body=body)
    assert caught.value.code == 422, caught.value
    return caught.value.message


def _crud(client: Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """Create, get, list and return the stored object (the caller updates and deletes)."""
    name = body["metadata"]["name"]
    created = client.request("POST", path, body=body)
    assert client.request("GET", f"{path}/{name}")["metadata"]["uid"] == created["metadata"]["uid"]
    listed = client.request("GET", path)
    assert name in [item["metadata"]["name"] for item in listed["items"]]
    return dict(created)


def _delete(client: Client, path: str, name: str) -> None:
    """Delete and wait until the object is gone (the garbage collector's ``orphan``
    finalizer holds batch kinds a moment in 1.20; a volume's ``kubernetes.io/pv-protection``
    is taken off here: the real backend runs no pv-protection controller)."""
    answer = client.request("DELETE", f"{path}/{name}")
    if "kubernetes.io/pv-protection" in (answer.get("metadata") or {}).get("finalizers", []):
        with contextlib.suppress(ApiError):  # the embedded cluster's controller may be first
            client.request(
                "PATCH",
                f"{path}/{name}",
                body={"metadata": {"finalizers": None}},
                content_type="application/merge-patch+json",
            )

    def gone() -> bool:
        try:
            client.request("GET", f"{path}/{name}")
        except ApiError as e:
            return e.code == 404
        return False

    wait_for(gone, message=f"{path}/{name} deleted")


# ------------------------------------------------------------------------------ storage.k8s.io


def test_storage_class(client: Client) -> None:
    entry = _discovered(client, "storage.k8s.io/v1", "storageclasses")
    assert entry["namespaced"] is False and entry["kind"] == "StorageClass"
    assert entry["shortNames"] == ["sc"]
    assert sorted(entry["verbs"]) == sorted(
        ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    )
    path = _collection("storage.k8s.io/v1", "storageclasses")
    name = _unique("sc")
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "example.com/disk",
        "parameters": {"type": "ssd"},
    }
    created = _crud(client, path, body)
    assert created["reclaimPolicy"] == "Delete"
    assert created["volumeBindingMode"] == "Immediate"

    names, cells = _columns(client, f"{path}/{name}")
    assert names == [
        "Name",
        "Provisioner",
        "ReclaimPolicy",
        "VolumeBindingMode",
        "AllowVolumeExpansion",
        "Age",
    ]
    assert cells[:5] == [name, "example.com/disk", "Delete", "Immediate", False]

    # allowVolumeExpansion may change; parameters, provisioner, reclaimPolicy may not
    created["allowVolumeExpansion"] = True
    updated = client.request("PUT", f"{path}/{name}", body=created)
    assert updated["allowVolumeExpansion"] is True
    changed = {
        **updated,
        "parameters": {"type": "hdd"},
        "provisioner": "example.com/other",
        "reclaimPolicy": "Retain",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    message = _invalid(client, f"{path}/{name}", changed, method="PUT")
    assert message == (
        f'StorageClass.storage.k8s.io "{name}" is invalid: ['
        "parameters: Forbidden: updates to parameters are forbidden., "
        "provisioner: Forbidden: updates to provisioner are forbidden., "
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., "
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable]'
    )

    bad = {**body, "metadata": {"name": _unique("bad")}, "provisioner": ""}
    bad["reclaimPolicy"] = "Recycle"
    message = _invalid(client, path, bad)
    assert message == (
        f'StorageClass.storage.k8s.io "{bad["metadata"]["name"]}" is invalid: ['
        "provisioner: Required value, "
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"]'
    )
    _delete(client, path, name)


# ------------------------------------------------------------------------------ the other groups

_POD_TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
}
_ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass
class Case:
    """One kind: how discovery lists it, an object, what it reads back with, one invalid
    object and kube-apiserver 1.20's message (after ``is invalid: ``), the table."""

    group_version: str
    plural: str
    namespaced: bool
    body: dict[str, Any]
    defaulted: tuple[tuple[str, ...], Any]
    bad: dict[str, Any]
    message: str | None
    columns: list[str]
    cells: list[Any]
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    subresources: list[str] = field(default_factory=list)
    #: top-level fields an update changes, and the message it answers (None: accepted)
    update: dict[str, Any] | None = None
    update_message: str | None = None

    @property
    def kind(self) -> str:
        return str(self.body["kind"])


CASES = [
    Case(
        "v1",
        "replicationcontrollers",
        True,
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc"},
            "spec": {"replicas": 0, "template": _POD_TEMPLATE},
        },
        (("spec", "selector"), {"app": "x"}),
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc-bad"},
            "spec": {"replicas": -1, "selector": {"app": "y"}, "template": _POD_TEMPLATE},
        },
        "[spec.replicas: Invalid value: -1: must be greater than or equal to 0, "
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: '
        "`selector` does not match template `labels`]",
        ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
        ["rc", 0, 0, 0, None, "c", "nginx:1", "app=x"],
        short_names=["rc"],
        categories=["all"],
        subresources=["scale", "status"],
    ),
    Case(
        "v1",
        "podtemplates",
        True,
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "pt"},
            "template": _POD_TEMPLATE,
        },
        (("template", "spec", "restartPolicy"), "Always"),
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "pt-bad"},
            "template": {"spec": {"containers": [{"name": "c"}]}},
        },
        "template.spec.containers[0].image: Required value",
        ["Name", "Containers", "Images", "Pod Labels"],
        ["pt", "c", "nginx:1", "app=x"],
    ),
    Case(
        "v1",
        "resourcequotas",
        True,
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "rq"},
            "spec": {"hard": {"pods": "10", "limits.memory": "1Gi"}},
        },
        (("status",), {}),
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "rq-bad"},
            "spec": {"hard": {"pods": "-1"}},
        },
        'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0',
        ["Name", "Age", "Request", "Limit"],
        ["rq", None, "", ""],
        short_names=["quota"],
        subresources=["status"],
    ),
    Case(
        "v1",
        "limitranges",
        True,
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "lr"},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]},
        },
        (
            ("spec", "limits"),
            [{"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "500m"}}],
        ),
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "lr-bad"},
            "spec": {"limits": [{"max": {"cpu": "1"}}]},
        },
        '[spec.limits[0].type: Invalid value: "": name part must be non-empty, '
        'spec.limits[0].type: Invalid value: "": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]",
        ["Name", "Created At"],
        ["lr", None],
        short_names=["limits"],
    ),
    Case(
        "v1",
        "persistentvolumes",
        False,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/pv"},
            },
        },
        (("metadata", "finalizers"), ["kubernetes.io/pv-protection"]),
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-bad"},
            "spec": {"accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/pv"}},
        },
        "[spec.capacity: Required value, spec.capacity: Unsupported value: "
        'core.ResourceList(nil): supported values: "storage"]',
        [
            "Name",
            "Capacity",
            "Access Modes",
            "Reclaim Policy",
            "Status",
            "Claim",
            "StorageClass",
            "Reason",
            "Age",
            "VolumeMode",
        ],
        ["pv", "1Gi", "RWO", "Retain", "Pending", "", "", "", None, "Filesystem"],
        short_names=["pv"],
        subresources=["status"],
    ),
    Case(
        "apps/v1",
        "daemonsets",
        True,
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "ds"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _POD_TEMPLATE},
        },
        (("metadata", "annotations"), {"deprecated.daemonset.template.generation": "1"}),
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "ds-bad"},
            "spec": {"selector": {"matchLabels": {"app": "y"}}, "template": _POD_TEMPLATE},
        },
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: '
        "`selector` does not match template `labels`",
        [
            "Name",
            "Desired",
            "Current",
            "Ready",
            "Up-to-date",
            "Available",
            "Node Selector",
            "Age",
            "Containers",
            "Images",
            "Selector",
        ],
        ["ds", 0, 0, 0, 0, 0, "<none>", None, "c", "nginx:1", "app=x"],
        short_names=["ds"],
        categories=["all"],
        subresources=["status"],
    ),
    Case(
        "batch/v1",
        "jobs",
        True,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "job"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}],
                    }
                }
            },
        },
        (("spec", "backoffLimit"), 6),
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "job-bad"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
        },
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        ["Name", "Completions", "Duration", "Age", "Containers", "Images", "Selector"],
        ["job", "0/1", "", None, "c", "busybox", None],
        categories=["all"],
        subresources=["status"],
    ),
    Case(
        "batch/v1beta1",
        "cronjobs",
        True,
        {
            "apiVersion": "batch/v1beta1",
            "kind": "CronJob",
            "metadata": {"name": "cj"},
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "OnFailure",
                                "containers": [{"name": "c", "image": "busybox"}],
                            }
                        }
                    }
                },
            },
        },
        (("spec", "successfulJobsHistoryLimit"), 3),
        {
            "apiVersion": "batch/v1beta1",
            "kind": "CronJob",
            "metadata": {"name": "cj-bad"},
            "spec": {
                "schedule": "not a schedule",
                "jobTemplate": {
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "OnFailure",
                                "containers": [{"name": "c", "image": "busybox"}],
                            }
                        }
                    }
                },
            },
        },
        'spec.schedule: Invalid value: "not a schedule": Expected exactly 5 fields, found 3: '
        "not a schedule",
        [
            "Name",
            "Schedule",
            "Suspend",
            "Active",
            "Last Schedule",
            "Age",
            "Containers",
            "Images",
            "Selector",
        ],
        ["cj", "*/5 * * * *", "False", 0, "<none>", None, "c", "busybox", "<none>"],
        short_names=["cj"],
        categories=["all"],
        subresources=["status"],
    ),
    Case(
        "policy/v1beta1",
        "poddisruptionbudgets",
        True,
        {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
        },
        (
            ("status",),
            {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0},
        ),
        {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb-bad"},
            "spec": {"minAvailable": "150%", "selector": {"matchLabels": {"a b": "x"}}},
        },
        None,
        ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
        ["pdb", "1", "N/A", 0, None],
        short_names=["pdb"],
        subresources=["status"],
    ),
    Case(
        "autoscaling/v1",
        "horizontalpodautoscalers",
        True,
        {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "hpa"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "maxReplicas": 5,
                "targetCPUUtilizationPercentage": 80,
            },
        },
        (("spec", "minReplicas"), 1),
        {
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "hpa-bad"},
            "spec": {
                "scaleTargetRef": {"kind": "", "name": "a/b"},
                "minReplicas": 3,
                "maxReplicas": 2,
            },
        },
        "[spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`, "
        "spec.scaleTargetRef.kind: Required value, "
        "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/']",
        ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        ["hpa", "Deployment/web", "<unknown>/80%", "1", 5, 0, None],
        short_names=["hpa"],
        categories=["all"],
        subresources=["status"],
        update={
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 7}
        },
    ),
    Case(
        "networking.k8s.io/v1",
        "ingresses",
        True,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "ing"},
            "spec": {
                "ingressClassName": "nginx",
                "rules": [
                    {
                        "host": "a.example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "web", "port": {"number": 80}}},
                                }
                            ]
                        },
                    }
                ],
                "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}],
            },
        },
        (("status",), {"loadBalancer": {}}),
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "ing-bad"},
            "spec": {
                "rules": [
                    {
                        "http": {
                            "paths": [
                                {
                                    "path": "a",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": "web", "port": {}}},
                                },
                                {
                                    "path": "/",
                                    "backend": {"service": {"name": "web", "port": {"number": 80}}},
                                },
                            ]
                        }
                    }
                ]
            },
        },
        '[spec.rules[0].http.paths[0].path: Invalid value: "a": must be an absolute path, '
        "spec.rules[0].http.paths[0].backend: Required value: port name or number is required, "
        "spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified]",
        ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
        ["ing", "nginx", "a.example.com", "", "80, 443", None],
        short_names=["ing"],
        subresources=["status"],
    ),
    Case(
        "networking.k8s.io/v1",
        "ingressclasses",
        False,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": {"name": "ic"},
            "spec": {
                "controller": "example.com/ingress",
                "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "lb"},
            },
        },
        (("spec", "controller"), "example.com/ingress"),
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": {"name": "ic-bad"},
            "spec": {"controller": "nodomain", "parameters": {"kind": "", "name": "x"}},
        },
        '[spec.controller: Invalid value: "nodomain": must be a domain-prefixed path '
        '(such as "acme.io/foo"), spec.parameters.kind: Required value: kind is required]',
        ["Name", "Controller", "Parameters", "Age"],
        ["ic", "example.com/ingress", "Params.k8s.example.com/lb", None],
        update={"spec": {"controller": "example.com/other"}},
        update_message='spec.controller: Invalid value: "example.com/other": field is immutable',
    ),
    Case(
        "networking.k8s.io/v1",
        "networkpolicies",
        True,
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "np"},
            "spec": {
                "podSelector": {"matchLabels": {"app": "x"}},
                "ingress": [{"ports": [{"port": 80}]}],
            },
        },
        (("spec", "policyTypes"), ["Ingress"]),
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "np-bad"},
            "spec": {"podSelector": {}, "policyTypes": ["Sideways"]},
        },
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
        ["Name", "Pod-Selector", "Age"],
        ["np", "app=x", None],
        short_names=["netpol"],
    ),
    Case(
        "discovery.k8s.io/v1beta1",
        "endpointslices",
        True,
        {
            "apiVersion": "discovery.k8s.io/v1beta1",
            "kind": "EndpointSlice",
            "metadata": {"name": "es"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}],
            "ports": [{"port": 80}],
        },
        (("ports",), [{"name": "", "port": 80, "protocol": "TCP"}]),
        {
            "apiVersion": "discovery.k8s.io/v1beta1",
            "kind": "EndpointSlice",
            "metadata": {"name": "es-bad"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": []}, {"addresses": ["nope"]}],
        },
        "[endpoints[0].addresses: Required value: must contain at least 1 address, "
        'endpoints[1].addresses[0]: Invalid value: "nope": must be a valid IPv4 address]',
        ["Name", "AddressType", "Ports", "Endpoints", "Age"],
        ["es", "IPv4", "80", "10.0.0.1", None],
        update={"addressType": "IPv6"},
        update_message='[endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 '
        'address, addressType: Invalid value: "IPv6": field is immutable]',
    ),
    Case(
        "rbac.authorization.k8s.io/v1",
        "roles",
        True,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
        (("rules",), [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "r-bad"},
            "rules": [{"resources": ["pods"]}, {"nonResourceURLs": ["/x"], "verbs": ["get"]}],
        },
        "[rules[0].verbs: Required value: verbs must contain at least one value, "
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group, "
        'rules[1].nonResourceURLs: Invalid value: []string{"/x"}: '
        "namespaced rules cannot apply to non-resource URLs]",
        ["Name", "Created At"],
        ["r", None],
    ),
    Case(
        "rbac.authorization.k8s.io/v1",
        "clusterroles",
        False,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "cr"},
            "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
        },
        (("rules",), [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "cr-bad"},
            "rules": [{"verbs": ["get"]}],
        },
        "[rules[0].apiGroups: Required value: resource rules must supply at least one api group, "
        "rules[0].resources: Required value: resource rules must supply at least one resource]",
        ["Name", "Created At"],
        ["cr", None],
    ),
    Case(
        "rbac.authorization.k8s.io/v1",
        "rolebindings",
        True,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "rb"},
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [
                {"kind": "User", "name": "alice"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "NS"},
            ],
        },
        (("roleRef",), {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "rb-bad"},
            "roleRef": {"kind": "Pod", "name": ""},
            "subjects": [{"kind": "Robot", "name": "a"}],
        },
        '[roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole", '
        "roleRef.name: Required value, "
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
        '"User", "Group"]',
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
        ["rb", "Role/r", None, "alice", "", "NS/default"],
        update={
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "edit",
            }
        },
        update_message='roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
        'Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    ),
    Case(
        "rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        False,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "crb"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "name": "devs"}],
        },
        (
            ("subjects",),
            [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}],
        ),
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "crb-bad"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "x"}],
        },
        '[roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", '
        "subjects[0].namespace: Required value]",
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
        ["crb", "ClusterRole/view", None, "", "devs", ""],
    ),
    Case(
        "scheduling.k8s.io/v1",
        "priorityclasses",
        False,
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "pc"},
            "value": 1000,
        },
        (("preemptionPolicy",), "PreemptLowerPriority"),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "pc-bad"},
            "value": 2000000000,
            "preemptionPolicy": "Sometimes",
        },
        "[value: Forbidden: maximum allowed value of a user defined priority is 1000000000, "
        'preemptionPolicy: Unsupported value: "Sometimes": supported values: '
        '"PreemptLowerPriority", "Never"]',
        ["Name", "Value", "Global-Default", "Age"],
        ["pc", 1000, False, None],
        short_names=["pc"],
        update={"value": 5, "preemptionPolicy": "Never"},
        update_message="[Value: Forbidden: may not be changed in an update., "
        'preemptionPolicy: Invalid value: "Never": field is immutable]',
    ),
    Case(
        "node.k8s.io/v1",
        "runtimeclasses",
        False,
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "rtc"},
            "handler": "runc",
        },
        (("handler",), "runc"),
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "rtc-bad"},
            "handler": "Bad_Handler",
        },
        'handler: Invalid value: "Bad_Handler": a lowercase RFC 1123 label must consist of lower '
        "case alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ["Name", "Handler", "Age"],
        ["rtc", "runc", None],
        update={"handler": "kata"},
        update_message='handler: Invalid value: "kata": field is immutable',
    ),
    Case(
        "storage.k8s.io/v1",
        "csidrivers",
        False,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "csi.example.com"},
            "spec": {},
        },
        (
            ("spec",),
            {
                "attachRequired": True,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "podInfoOnMount": False,
                "volumeLifecycleModes": ["Persistent"],
            },
        ),
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "bad.example.com"},
            "spec": {"volumeLifecycleModes": ["Sometimes"]},
        },
        'spec.volumeLifecycleModes: Unsupported value: "Sometimes": supported values: '
        '"Persistent", "Ephemeral"',
        ["Name", "AttachRequired", "PodInfoOnMount", "Modes", "Age"],
        ["csi.example.com", True, False, "Persistent", None],
    ),
    Case(
        "storage.k8s.io/v1",
        "csinodes",
        False,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "node"},
            "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1"}]},
        },
        (("spec", "drivers", "0", "nodeID"), "n1"),
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": "node-bad"},
            "spec": {"drivers": [{"name": "csi.example.com", "nodeID": ""}]},
        },
        "spec.drivers[0].nodeID: Required value",
        ["Name", "Drivers", "Age"],
        ["node", 1, None],
    ),
    Case(
        "storage.k8s.io/v1",
        "volumeattachments",
        False,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": "va"},
            "spec": {
                "attacher": "csi.example.com",
                "nodeName": "node-1",
                "source": {"persistentVolumeName": "pv-1"},
            },
        },
        (("status",), {"attached": False}),
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": "va-bad"},
            "spec": {"attacher": "csi.example.com", "nodeName": "node-1", "source": {}},
        },
        "spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
        "persistentVolumeName",
        ["Name", "Attacher", "PV", "Node", "Attached", "Age"],
        ["va", "csi.example.com", "pv-1", "node-1", False, None],
        subresources=["status"],
    ),
]


def _named(case: Case, body: dict[str, Any], suffix: str, namespace: str) -> dict[str, Any]:
    """``body`` with a unique name when cluster-scoped and the namespace filled in."""
    text = json.dumps(body).replace('"NS"', json.dumps(namespace))
    out: dict[str, Any] = json.loads(text)
    if not case.namespaced:
        out["metadata"]["name"] += f"-{suffix}"
    return out


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = obj[int(step)] if isinstance(obj, list) else obj.get(step)
    return obj


def _contains(obj: Any, part: Any) -> bool:
    """Every leaf of ``part`` is in ``obj`` at the same place."""
    if isinstance(part, dict):
        return isinstance(obj, dict) and all(_contains(obj.get(k), v) for k, v in part.items())
    return bool(obj == part)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.group_version}/{c.plural}")
def test_builtin_kind(client: Client, namespace: str, case: Case) -> None:
    entries = {
        e["name"]: e
        for e in client.request(
            "GET", "/api/v1" if case.group_version == "v1" else f"/apis/{case.group_version}"
        )["resources"]
        if e["name"].split("/")[0] == case.plural
    }
    main = entries.pop(case.plural)
    assert (main["kind"], main["namespaced"]) == (case.kind, case.namespaced)
    assert main.get("shortNames", []) == case.short_names
    assert main.get("categories", []) == case.categories
    assert sorted(main["verbs"]) == _ALL_VERBS
    assert sorted(name.split("/")[1] for name in entries) == case.subresources

    suffix = uuid.uuid4().hex[:8]
    path = _collection(case.group_version, case.plural, namespace if case.namespaced else None)
    body = _named(case, case.body, suffix, namespace)
    name = body["metadata"]["name"]
    created = _crud(client, path, body)
    assert _at(created, case.defaulted[0]) == case.defaulted[1]

    names, cells = _columns(client, f"{path}/{name}")
    assert names == case.columns
    expected = [name if i == 0 else c for i, c in enumerate(case.cells)]
    expected = [json.loads(json.dumps(c).replace('"NS', f'"{namespace}')) for c in expected]
    assert [c for c, e in zip(cells, expected, strict=True) if e is not None] == [
        e for e in expected if e is not None
    ]

    if case.update is not None:
        changed = {**created, **case.update}
        if case.update_message is None:
            updated = client.request("PUT", f"{path}/{name}", body=changed)
            assert _contains(updated, case.update)
        else:
            message = _invalid(client, f"{path}/{name}", changed, method="PUT")
            assert message.split(" is invalid: ", 1)[1] == case.update_message

    bad = _named(case, case.bad, suffix, namespace)
    message = _invalid(client, path, bad)
    # kube-apiserver 1.20 names Ingress and NetworkPolicy errors after the old extensions group
    assert (
        message.startswith(f"{case.kind}")
        and f'"{bad["metadata"]["name"]}" is invalid: ' in message
    )
    if case.message is not None:
        assert message.split(" is invalid: ", 1)[1] == case.message
    _delete(client, path, name)


def test_replication_controller_scale(client: Client, namespace: str) -> None:
    """The scale subresource of a ReplicationController: replicas and its selector."""
    path = _collection("v1", "replicationcontrollers", namespace)
    client.request("POST", path, body={**CASES[0].body, "metadata": {"name": "scaled"}})
    scale = client.request("GET", f"{path}/scaled/scale")
    assert scale["status"] == {"replicas": 0, "selector": "app=x"}
    scale["spec"] = {"replicas": 2}
    assert client.request("PUT", f"{path}/scaled/scale", body=scale)["spec"] == {"replicas": 2}
    assert client.request("GET", f"{path}/scaled")["spec"]["replicas"] == 2


@pytest.mark.kubectl
def test_kubectl_get_prints_the_columns(client: Client, kubeconfig: Path, namespace: str) -> None:
    """``kubectl get`` (current release, and Debian's 1.20 client when unpacked) of the
    namespaced kinds: each table's header."""
    old = Path.home() / ".cache/kube-runtime/kubectl-debian/usr/bin/kubectl"
    binaries = [b for b in (shutil.which("kubectl"), str(old) if old.exists() else None) if b]
    if not binaries:
        pytest.skip("kubectl not installed: run `make kubectl` (scripts/ensure-kubectl.sh)")
    namespaced = [c for c in CASES if c.namespaced and c.plural != "endpointslices"]
    for case in namespaced:
        client.request(
            "POST", _collection(case.group_version, case.plural, namespace), body=case.body
        )
    kinds = ",".join(
        f"{c.plural}.{c.group_version.rpartition('/')[0]}".rstrip(".") for c in namespaced
    )
    expected = [
        [word for column in c.columns for word in column.upper().split()] for c in namespaced
    ]
    for kubectl in binaries:
        args = ["--kubeconfig", str(kubeconfig), "-n", namespace, "get", kinds, "-o", "wide"]
        proc = subprocess.run(
            [kubectl, *args], capture_output=True, text=True, timeout=60, check=True
        )
        headers = [line.split() for line in proc.stdout.splitlines() if line.startswith("NAME")]
        assert headers == expected, (kubectl, proc.stdout)


@pytest.mark.embedded_only("the real backend runs no pv-protection controller")
def test_a_deleted_volume_goes_once_unbound(client: Client) -> None:
    """kube-controller-manager's pv-protection: the finalizer goes once the volume is not
    Bound, and stays while it is."""
    path = _collection("v1", "persistentvolumes")
    name = _unique("pv")
    volume = next(c for c in CASES if c.plural == "persistentvolumes")
    body = {**volume.body, "metadata": {"name": name}}
    created = client.request("POST", path, body=body)
    created["status"] = {"phase": "Bound"}
    client.request("PUT", f"{path}/{name}/status", body=created)
    client.request("DELETE", f"{path}/{name}")
    held = client.request("GET", f"{path}/{name}")
    assert held["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    held["status"] = {"phase": "Released"}
    client.request("PUT", f"{path}/{name}/status", body=held)

    def gone() -> bool:
        try:
            client.request("GET", f"{path}/{name}")
        except ApiError as e:
            return e.code == 404
        return False

    wait_for(gone, message="the released volume deleted")


# ------------------------------------------------------------------------------ unserved kinds


def _unserved_builtin(client: Client) -> str:
    """A kind of the framework's built-in table this server does not serve (``batch/v1``
    CronJob on kube-apiserver 1.20); on a server serving them all, ``FlowSchema`` in
    ``flowcontrol.apiserver.k8s.io/v1`` (1.29 on, not 1.20 nor the embedded server)."""
    from kube_runtime.client.mapping import BUILTIN_RESOURCES

    for resource in BUILTIN_RESOURCES:
        root = "/api/v1" if not resource.group else f"/apis/{resource.api_version}"
        try:
            served = {e["kind"] for e in client.request("GET", root)["resources"]}
        except ApiError as e:
            if e.code != 404:
                raise
            served = set()
        if resource.kind not in served:
            return f"{resource.api_version}/{resource.kind}"
    return "flowcontrol.apiserver.k8s.io/v1/FlowSchema"


def test_an_unserved_builtin_kind_fails_at_builder_complete(client: Client, namespace: str) -> None:
    """Issue 21: the REST mapping asks discovery for built-in kinds too, so a controller of a
    kind the server does not serve fails when it is built (not with a reflector logging 404s
    and a cache that never syncs), and a read says the API is missing, not the object."""
    from kube_runtime.builder import Builder
    from kube_runtime.client import NoKindMatchError
    from kube_runtime.manager import Manager

    kind = _unserved_builtin(client)
    with pytest.raises(NoKindMatchError, match=kind.rpartition("/")[2]):
        client.list(kind, namespace)
    manager = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
    )
    with pytest.raises(NoKindMatchError):
        Builder(manager).named(f"unserved-{namespace}").for_(kind).complete(lambda request: None)
    with pytest.raises(NoKindMatchError):
        Builder(manager).named(f"owns-unserved-{namespace}").for_("v1/ConfigMap").owns(
            kind
        ).complete(lambda request: None)


def test_manager_stops_at_once_when_a_cache_can_never_sync(
    client: Client, namespace: str, faults: Any
) -> None:
    """Every list of the watched kind is refused (403): its cache never syncs, and stopping
    the manager does not wait out the graceful shutdown timeout (30 s here)."""
    from kube_runtime.builder import Builder
    from kube_runtime.envtest.managers import running
    from kube_runtime.manager import Manager

    faults.fail("limitranges", "list", 403)
    manager = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        graceful_shutdown_timeout=30,
    )
    Builder(manager).named(f"never-synced-{namespace}").for_("v1/LimitRange").complete(
        lambda request: None
    )
    with running(manager) as runner:
        wait_for(lambda: faults.injected > 0, message="the refused list")
        runner.stop(timeout=5.0)
    assert runner.error is None


# ------------------------------------------------------------------------------ versions


def test_hpa_versions_convert_as_kube_apiserver(client: Client, namespace: str) -> None:
    """An autoscaler written in v2beta2 reads in v1 with its CPU target and the other metrics
    in the ``autoscaling.alpha.kubernetes.io/metrics`` annotation, and back in v2beta2 with
    the annotated metrics first; one written in v1 without a target reads with 80% CPU."""
    path = "/apis/autoscaling/{}/namespaces/" + namespace + "/horizontalpodautoscalers"
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    memory = {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}},
    }
    cpu = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
    }
    pods = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }
    client.request(
        "POST",
        path.format("v2beta2"),
        body={
            "apiVersion": "autoscaling/v2beta2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "v2"},
            "spec": {"scaleTargetRef": ref, "maxReplicas": 5, "metrics": [memory, cpu, pods]},
        },
    )
    as_v1 = client.request("GET", path.format("v1") + "/v2")
    assert as_v1["spec"]["targetCPUUtilizationPercentage"] == 70
    assert as_v1["metadata"]["annotations"] == {
        "autoscaling.alpha.kubernetes.io/metrics": '[{"type":"Resource","resource":{"name":'
        '"memory","targetAverageValue":"100Mi"}},{"type":"Pods","pods":{"metricName":"qps",'
        '"targetAverageValue":"10"}}]'
    }
    as_v2 = client.request("GET", path.format("v2beta2") + "/v2")
    assert as_v2["spec"]["metrics"] == [memory, pods, cpu]
    assert "annotations" not in as_v2["metadata"]

    client.request(
        "POST",
        path.format("v1"),
        body={
            "apiVersion": "autoscaling/v1",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "v1"},
            "spec": {"scaleTargetRef": ref, "maxReplicas": 5},
        },
    )
    assert (
        client.request("GET", path.format("v1") + "/v1")["spec"]["targetCPUUtilizationPercentage"]
        == 80
    )
    assert client.request("GET", path.format("v2beta2") + "/v1")["spec"]["metrics"] == [
        {
            **cpu,
            "resource": {
                **cpu["resource"],
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]


def test_endpoint_slice_versions_convert(
    client: Client, namespace: str, kube_version: tuple[int, int]
) -> None:
    """v1beta1's ``topology`` reads back as sent; from 1.21 the same slice in v1 has the zone
    in ``zone``, the rest in ``deprecatedTopology`` (kube-apiserver 1.20 serves only v1beta1)."""
    path = f"/apis/discovery.k8s.io/{{}}/namespaces/{namespace}/endpointslices"
    topology = {"kubernetes.io/hostname": "n2", "topology.kubernetes.io/zone": "z1", "rack": "r1"}
    client.request(
        "POST",
        path.format("v1beta1"),
        body={
            "apiVersion": "discovery.k8s.io/v1beta1",
            "kind": "EndpointSlice",
            "metadata": {"name": "zoned"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.2"], "topology": topology}],
        },
    )
    (endpoint,) = client.request("GET", path.format("v1beta1") + "/zoned")["endpoints"]
    assert endpoint["topology"] == topology
    if kube_version < (1, 21):
        return
    (endpoint,) = client.request("GET", path.format("v1") + "/zoned")["endpoints"]
    assert endpoint["zone"] == "z1"
    assert endpoint["deprecatedTopology"] == {"kubernetes.io/hostname": "n2", "rack": "r1"}
    assert "topology" not in endpoint


def test_a_pod_takes_the_priority_of_a_stored_priority_class(
    client: Client, namespace: str
) -> None:
    """Priority admission reads the PriorityClass objects: a pod naming one gets its value
    and preemption policy."""
    path = _collection("scheduling.k8s.io/v1", "priorityclasses")
    name = _unique("high")
    client.request(
        "POST",
        path,
        body={
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": 1000,
            "preemptionPolicy": "Never",
        },
    )
    try:
        pod = client.request(
            "POST",
            _collection("v1", "pods", namespace),
            body={
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "prioritized"},
                "spec": {
                    "priorityClassName": name,
                    "containers": [{"name": "c", "image": "nginx:1"}],
                },
            },
        )
        assert (pod["spec"]["priority"], pod["spec"]["preemptionPolicy"]) == (1000, "Never")
    finally:
        client.request("DELETE", f"{path}/{name}")


# ------------------------------------------------------------------------------ certificates.k8s.io


def _csr_request() -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "e2e")])
    csr = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def test_certificate_signing_request(client: Client) -> None:
    """Create (the requester recorded), approve through ``/approval``, the table's
    Condition, and kube-apiserver's messages for a missing signer and a request that is not
    PEM."""
    entries = {
        e["name"]: e
        for e in client.request("GET", "/apis/certificates.k8s.io/v1")["resources"]
        if e["name"].startswith("certificatesigningrequests")
    }
    assert set(entries) == {
        "certificatesigningrequests",
        "certificatesigningrequests/approval",
        "certificatesigningrequests/status",
    }
    assert entries["certificatesigningrequests"]["shortNames"] == ["csr"]
    assert entries["certificatesigningrequests"]["namespaced"] is False
    path = _collection("certificates.k8s.io/v1", "certificatesigningrequests")
    name = _unique("csr")
    body = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": _csr_request(),
            "signerName": "example.com/signer",
            "usages": ["digital signature"],
        },
    }
    created = _crud(client, path, body)
    assert created["spec"]["username"] and "system:authenticated" in created["spec"]["groups"]
    assert created["status"] == {}
    names, cells = _columns(client, f"{path}/{name}")
    assert names == ["Name", "Age", "SignerName", "Requestor", "Condition"]
    assert [cells[0], *cells[2:]] == [
        name,
        "example.com/signer",
        created["spec"]["username"],
        "Pending",
    ]

    created["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "E2E"}]}
    approved = client.request("PUT", f"{path}/{name}/approval", body=created)
    (condition,) = approved["status"]["conditions"]
    assert condition["type"] == "Approved" and condition["lastUpdateTime"]
    assert _columns(client, f"{path}/{name}")[1][4] == "Approved"

    message = _invalid(
        client,
        path,
        {**body, "metadata": {"name": _unique("bad")}, "spec": {**body["spec"], "signerName": ""}},
    )
    assert message.endswith("spec.signerName: Required value: signerName must be provided")
    junk = {**body["spec"], "request": "anVuaw=="}
    message = _invalid(client, path, {**body, "metadata": {"name": _unique("bad")}, "spec": junk})
    assert message.endswith(
        "spec.request: Invalid value: []byte{0x6a, 0x75, 0x6e, 0x6b}: "
        "PEM block type must be CERTIFICATE REQUEST"
    )
    _delete(client, path, name)
