"""A custom resource whose CRD declares a scale subresource is validated at the scale's paths
on every write, as apiextensions-apiserver does (``ValidateScaleSpec`` /
``ValidateScaleStatus``): the spec and status replicas must be integers from 0 to 2^31-1,
the label selector a string. Runs on both backends with kube-apiserver 1.20's messages.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

MERGE = "application/merge-patch+json"


@dataclass
class Sizers:
    """Raw requests to the module's ``Sizer`` collection in a fresh namespace."""

    api_client: Any
    group: str
    path: str

    def __call__(self, method: str, suffix: str = "", body: Any = None, ctype: str = "") -> Any:
        config = self.api_client.configuration
        response = self.api_client.rest_client.pool_manager.request(
            method,
            config.host + self.path + suffix,
            body=json.dumps(body) if body is not None else None,
            headers={
                "Authorization": config.api_key["authorization"],
                "Content-Type": ctype or "application/json",
            },
            retries=False,
            timeout=30,
        )
        if not response.headers.get("Content-Type", "").startswith("application/json"):
            # kube-apiserver answers a path it does not serve yet (a CRD not yet
            # established) with a plain-text "404 page not found".
            return response.status, response.data.decode()
        return response.status, json.loads(response.data)

    def new(self, name: str, size: Any) -> dict[str, Any]:
        return {
            "apiVersion": f"{self.group}/v1",
            "kind": "Sizer",
            "metadata": {"name": name},
            "spec": {"size": size},
        }


@pytest.fixture(scope="module")
def sizers(embedded_cluster: Any) -> Iterator[Sizers]:
    api_client = embedded_cluster.api_client()
    suffix = uuid.uuid4().hex[:8]
    group = f"s{suffix}.scale.kube-runtime.test"
    crds = Sizers(api_client, group, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    namespaces = Sizers(api_client, group, "/api/v1/namespaces")
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"sizers.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "sizers", "singular": "sizer", "kind": "Sizer"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.size",
                            "statusReplicasPath": ".status.count",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }
    status, answer = crds("POST", body=crd)
    assert status == 201, answer
    namespace = f"scale-{suffix}"
    status, answer = namespaces("POST", body={"metadata": {"name": namespace}})
    assert status == 201, answer
    collection = Sizers(api_client, group, f"/apis/{group}/v1/namespaces/{namespace}/sizers")
    deadline = time.monotonic() + 30
    while collection("GET")[0] != 200:
        assert time.monotonic() < deadline, "the sizers CRD is not served"
        time.sleep(0.05)
    try:
        yield collection
    finally:
        crds("DELETE", f"/sizers.{group}")
        namespaces("DELETE", f"/{namespace}")
        api_client.close()


def _refused(answer: Any, name: str, field: str, message: str) -> None:
    assert answer["code"] == 422 and answer["reason"] == "Invalid", answer
    gk = answer["details"]["group"]
    assert answer["message"] == f'Sizer.{gk} "{name}" is invalid: {field}: {message}'
    assert answer["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": message, "field": field}
    ]


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (-1, "Invalid value: -1: should be a non-negative integer"),
        (2**31, "Invalid value: 2147483648: should be less than or equal to 2147483647"),
        ("x", "Invalid value: 0: .spec.size accessor error: x is of the type string, expected int64"),
        (1.5, "Invalid value: 0: .spec.size accessor error: 1.5 is of the type float64, expected int64"),
        (2**70, "Invalid value: 0: .spec.size accessor error: 1.1805916207174113e+21 is of the type float64, expected int64"),
        ({"a": [1, "x"]}, "Invalid value: 0: .spec.size accessor error: map[a:[1 x]] is of the type map[string]interface {}, expected int64"),
    ],
    ids=["negative", "over-int32", "string", "float", "huge", "object"],
)  # fmt: skip
def test_create_refuses_bad_spec_replicas(sizers: Sizers, size: Any, message: str) -> None:
    name = f"bad-{uuid.uuid4().hex[:6]}"
    status, answer = sizers("POST", body=sizers.new(name, size))
    assert status == 422, answer
    _refused(answer, name, ".spec.size", message)


def test_bounds_and_absence_are_accepted(sizers: Sizers) -> None:
    for name, size in (("zero", 0), ("max", 2**31 - 1)):
        status, answer = sizers("POST", body=sizers.new(name, size))
        assert status == 201, answer
    status, answer = sizers("POST", body={**sizers.new("absent", 0), "spec": {}})
    assert status == 201, answer


def test_update_patch_and_scale_refuse_a_negative_count(sizers: Sizers) -> None:
    status, live = sizers("POST", body=sizers.new("writes", 1))
    assert status == 201, live
    live["spec"]["size"] = -2
    status, answer = sizers("PUT", "/writes", live)
    assert status == 422, answer
    _refused(answer, "writes", ".spec.size", "Invalid value: -2: should be a non-negative integer")
    status, answer = sizers("PATCH", "/writes", {"spec": {"size": -5}}, MERGE)
    assert status == 422, answer
    _refused(answer, "writes", ".spec.size", "Invalid value: -5: should be a non-negative integer")
    # through the scale subresource: validated as the custom resource, not as a Scale
    status, answer = sizers("PATCH", "/writes/scale", {"spec": {"replicas": -1}}, MERGE)
    assert status == 422, answer
    _refused(answer, "writes", ".spec.size", "Invalid value: -1: should be a non-negative integer")
    status, scale = sizers("PATCH", "/writes/scale", {"spec": {"replicas": 3}}, MERGE)
    assert status == 200 and scale["spec"]["replicas"] == 3, scale


def test_status_writes_check_status_replicas_and_selector(sizers: Sizers) -> None:
    status, live = sizers("POST", body=sizers.new("counted", 1))
    assert status == 201, live
    live["status"] = {"count": -3}
    status, answer = sizers("PUT", "/counted/status", live)
    assert status == 422, answer
    _refused(
        answer, "counted", ".status.count", "Invalid value: -3: should be a non-negative integer"
    )
    live["status"] = {"count": 2, "selector": 5}
    status, answer = sizers("PUT", "/counted/status", live)
    assert status == 422, answer
    _refused(
        answer,
        "counted",
        ".status.selector",
        'Invalid value: "": .status.selector accessor error: 5 is of the type int64, expected string',
    )
    # a status write does not check the spec's count (ValidateStatusUpdate)
    live["status"] = {"count": 2, "selector": "app=x"}
    live["spec"]["size"] = -4
    status, answer = sizers("PUT", "/counted/status", live)
    assert status == 200, answer
    assert answer["status"] == {"count": 2, "selector": "app=x"}
    assert answer["spec"]["size"] == 1
