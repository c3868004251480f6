"""The built-in API groups kube-apiserver 1.20 serves, on the embedded server (issue 21 part 2).

For each kind: discovery lists it (scope, verbs, short names), create / get / list / update /
delete through the REST paths, a server-side default read back, one validation error with
kube-apiserver's message, and the ``kubectl get`` table columns. Runs on both backends: the
real kube-apiserver 1.20 is the referee for messages, defaults and columns. Cluster-scoped
objects get a unique suffix (the cluster is shared by the session).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client

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
    client.request("DELETE", f"{path}/{name}")
    with pytest.raises(ApiError) as caught:
        client.request("GET", f"{path}/{name}")
    assert caught.value.code == 404


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
