"""Where the embedded server used to differ visibly from kube-apiserver 1.20 (issue 30): the
empty metadata of custom resources, and ``""`` in a typed string field of a custom resource.
Every test runs on both backends; the referee's answers were checked on kube-apiserver 1.20
(built with the kube-openapi fix, see docs/conformance.md)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime.client import Client
from kube_runtime.crds import install_crd

EMPTY_METADATA: dict[str, Any] = {
    "labels": {},
    "annotations": {},
    "finalizers": [],
    "ownerReferences": [],
}
#: What a read shows of the metadata when only the server's own fields remain.
SERVER_METADATA = {"creationTimestamp", "generation", "name", "namespace"}


def _gadget_crd(group: str) -> dict[str, Any]:
    spec = {
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "reason": {"type": "string", "default": ""},
            "count": {"type": "integer"},
            "enabled": {"type": "boolean"},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": spec,
                                "status": {
                                    "type": "object",
                                    "properties": {"message": {"type": "string"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def group(client: Client) -> Iterator[str]:
    """The API group of a Gadget CRD installed for the module."""
    group = f"parity-{uuid.uuid4().hex[:8]}.example.com"
    install_crd(client, _gadget_crd(group))
    yield group
    client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"gadgets.{group}")


def _gadget(group: str, name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Gadget",
        "metadata": {"name": name, **meta},
        "spec": {"message": "hi"},
    }


def _keys(obj: dict[str, Any]) -> set[str]:
    """The metadata keys but for the ones every stored object has (uid, resourceVersion) and
    managedFields (not recorded for a write that sets no field)."""
    return set(obj["metadata"]) - {"uid", "resourceVersion", "managedFields"}


def test_empty_metadata_of_a_custom_resource_is_dropped(
    client: Client, namespace: str, group: str
) -> None:
    """kube-apiserver decodes a custom resource's metadata into ObjectMeta and encodes it
    back: empty labels, annotations, finalizers and owner references, and an empty
    generateName, are not stored, whichever write sent them."""
    path = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"
    created = client.request(
        "POST", path, body=_gadget(group, "g", generateName="", **EMPTY_METADATA)
    )
    assert _keys(created) == SERVER_METADATA
    assert _keys(client.request("GET", f"{path}/g")) == SERVER_METADATA
    nulls = dict.fromkeys(EMPTY_METADATA)
    with_nulls = client.request("POST", path, body=_gadget(group, "n", **nulls))
    assert _keys(with_nulls) == SERVER_METADATA
    client.request("DELETE", f"{path}/n")
    listed = client.request("GET", path)["items"]
    assert [_keys(item) for item in listed] == [SERVER_METADATA]

    # an update sending them empty
    updated = client.request(
        "PUT", f"{path}/g", body={**created, "metadata": {**created["metadata"], **EMPTY_METADATA}}
    )
    assert _keys(updated) == SERVER_METADATA
    # a merge patch removing the last label and annotation
    client.request(
        "PATCH",
        f"{path}/g",
        body={"metadata": {"labels": {"a": "1"}, "annotations": {"b": "2"}}},
        content_type="application/merge-patch+json",
    )
    patched = client.request(
        "PATCH",
        f"{path}/g",
        body={"metadata": {"labels": {"a": None}, "annotations": {"b": None}}},
        content_type="application/merge-patch+json",
    )
    assert _keys(patched) == SERVER_METADATA
    # a JSON patch adding empty ones, through the status subresource too
    operations = [{"op": "add", "path": f"/metadata/{name}", "value": {}} for name in ("labels",)]
    operations += [{"op": "add", "path": "/metadata/finalizers", "value": []}]
    for sub in ("", "/status"):
        patched = client.request(
            "PATCH", f"{path}/g{sub}", body=operations, content_type="application/json-patch+json"
        )
        assert _keys(patched) == SERVER_METADATA
    # a server-side apply
    applied = client.request(
        "PATCH",
        f"{path}/applied",
        body=_gadget(group, "applied", **EMPTY_METADATA),
        content_type="application/apply-patch+yaml",
        query={"fieldManager": "parity-test"},
    )
    assert _keys(applied) == SERVER_METADATA


def test_empty_generate_name_of_a_built_in_kind_is_dropped(client: Client, namespace: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "generateName": "", **EMPTY_METADATA},
        "data": {},
    }
    created = client.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body)
    assert _keys(created) == {"creationTimestamp", "name", "namespace"}
    assert "data" not in created


def test_empty_strings_in_typed_string_fields_are_accepted(
    client: Client, namespace: str, group: str
) -> None:
    """``""`` is a string (kubernetes#99804: a kube-apiserver built with Go >= 1.16 and the
    kube-openapi of 1.20.2 refused it as null; the referee carries kube-openapi#230), as
    are ``0`` and ``false`` values of their types; a schema default of ``""`` is stored."""
    path = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"
    body = _gadget(group, "empty")
    body["spec"] = {"message": "", "count": 0, "enabled": False}
    created = client.request("POST", path, body=body)
    assert created["spec"] == {"message": "", "reason": "", "count": 0, "enabled": False}
    status = client.request(
        "PATCH",
        f"{path}/empty/status",
        body={"status": {"message": ""}},
        content_type="application/merge-patch+json",
    )
    assert status["status"] == {"message": ""}
    updated = client.request(
        "PATCH",
        f"{path}/empty",
        body={"spec": {"message": "set", "reason": ""}},
        content_type="application/merge-patch+json",
    )
    assert updated["spec"]["message"] == "set" and updated["spec"]["reason"] == ""
