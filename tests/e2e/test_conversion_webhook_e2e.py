"""CRD conversion through a webhook (``spec.conversion.strategy: Webhook``): a CRD served in
v1 (storage) and v2, converted by a kube_runtime.webhook server in this process; reads,
lists, watches and writes in either version, and a converter that fails. The same tests run
on the embedded server and on kube-apiserver 1.20."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from kube_runtime import webhook
from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.server import tls
from kube_runtime.webhook._endpoint import ConversionEndpoint
from tests.e2e._fixtures import webhook_server

KIND = "Gadget"


class Converters:
    """A webhook server converting Gadgets between v1 (``spec.size``) and v2
    (``spec.replicas``); ``broken`` makes every conversion fail."""

    def __init__(self, server: webhook.Server, certs: tls.ServingCerts) -> None:
        self.server = server
        self.certs = certs
        self.broken = False
        self.calls = 0

    def register(self, group: str) -> str:
        conversions = webhook.Conversions()

        def v1_to_v2(obj: dict[str, Any]) -> dict[str, Any]:
            self.calls += 1
            if self.broken:
                raise webhook.ConversionError("the converter is broken")
            spec = dict(obj.get("spec") or {})
            if "size" in spec:
                spec["replicas"] = spec.pop("size")
            return {**obj, "spec": spec}

        def v2_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
            self.calls += 1
            if self.broken:
                raise webhook.ConversionError("the converter is broken")
            spec = dict(obj.get("spec") or {})
            if "replicas" in spec:
                spec["size"] = spec.pop("replicas")
            return {**obj, "spec": spec}

        conversions.register(group, KIND, "v1", "v2", v1_to_v2)
        conversions.register(group, KIND, "v2", "v1", v2_to_v1)
        path = f"/convert-{group.split('.')[0]}"
        self.server.register(path, ConversionEndpoint(conversions))
        return path


@pytest.fixture(scope="module")
def converters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Converters]:
    with webhook_server(tmp_path_factory.mktemp("conversion-certs")) as (server, certs):
        yield Converters(server, certs)


def _schema(field: str) -> dict[str, Any]:
    return {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "integer"}}},
            },
        }
    }


def _scale(field: str) -> dict[str, str]:
    """Each version's scale reads its own replicas field."""
    return {"specReplicasPath": f".spec.{field}", "statusReplicasPath": f".status.{field}"}


@pytest.fixture
def gadgets(client: Client, converters: Converters) -> Iterator[str]:
    """A Gadget CRD (v1 stored, v2 served) converting through the webhook, with a scale
    subresource in each version (at ``spec.size`` and ``spec.replicas``); its group."""
    group = f"g{uuid.uuid4().hex[:8]}.conversion.test"
    path = converters.register(group)
    _, port = converters.server.address
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": "gadgets", "singular": "gadget", "kind": KIND},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": _schema("size"),
                    "subresources": {"scale": _scale("size")},
                },
                {
                    "name": "v2",
                    "served": True,
                    "storage": False,
                    "schema": _schema("replicas"),
                    "subresources": {"scale": _scale("replicas")},
                },
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{port}{path}",
                        "caBundle": base64.b64encode(converters.certs.ca_pem).decode(),
                    },
                },
            },
        },
    }
    client.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=crd)
    for version in ("v1", "v2"):
        wait_for(
            lambda v=version: client.request("GET", f"/apis/{group}/{v}/gadgets"),  # type: ignore[misc]
            timeout=30,
            message=f"{version} served",
        )
    yield group
    client.request(
        "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}"
    )


def _path(group: str, version: str, namespace: str, name: str = "") -> str:
    base = f"/apis/{group}/{version}/namespaces/{namespace}/gadgets"
    return f"{base}/{name}" if name else base


def test_objects_are_converted_on_reads_and_writes(
    client: Client, gadgets: str, namespace: str
) -> None:
    group = gadgets
    body = {
        "apiVersion": f"{group}/v2",
        "kind": KIND,
        "metadata": {"name": "g1", "labels": {"app": "x"}},
        "spec": {"replicas": 3},
    }
    created = client.request("POST", _path(group, "v2", namespace), body=body)
    assert created["apiVersion"] == f"{group}/v2" and created["spec"] == {"replicas": 3}
    as_v1 = client.request("GET", _path(group, "v1", namespace, "g1"))
    assert as_v1["apiVersion"] == f"{group}/v1" and as_v1["spec"] == {"size": 3}
    assert as_v1["metadata"]["uid"] == created["metadata"]["uid"]
    as_v2 = client.request("GET", _path(group, "v2", namespace, "g1"))
    assert as_v2["spec"] == {"replicas": 3}
    assert as_v2["metadata"]["labels"] == {"app": "x"}
    listed = client.request("GET", _path(group, "v2", namespace))
    assert [item["spec"] for item in listed["items"]] == [{"replicas": 3}]
    assert {item["apiVersion"] for item in listed["items"]} == {f"{group}/v2"}
    patched = client.request(
        "PATCH",
        _path(group, "v2", namespace, "g1"),
        body={"spec": {"replicas": 5}},
        content_type="application/merge-patch+json",
    )
    assert patched["spec"] == {"replicas": 5}
    assert client.request("GET", _path(group, "v1", namespace, "g1"))["spec"] == {"size": 5}
    replaced = client.request(
        "PUT",
        _path(group, "v2", namespace, "g1"),
        body={**patched, "spec": {"replicas": 7}},
    )
    assert replaced["spec"] == {"replicas": 7}
    assert client.request("GET", _path(group, "v1", namespace, "g1"))["spec"] == {"size": 7}


def test_watch_in_the_other_version(client: Client, gadgets: str, namespace: str) -> None:
    group = gadgets
    listed = client.request("GET", _path(group, "v2", namespace))
    rv = listed["metadata"]["resourceVersion"]
    body = {
        "apiVersion": f"{group}/v1",
        "kind": KIND,
        "metadata": {"name": "w"},
        "spec": {"size": 2},
    }
    client.request("POST", _path(group, "v1", namespace), body=body)
    response = client._pool.request(  # a raw stream: the first event is enough
        "GET",
        client._url(_path(group, "v2", namespace), {"watch": "1", "resourceVersion": rv}),
        headers=client._headers(None),
        preload_content=False,
        timeout=30,
    )
    try:
        line = b""
        for chunk in response.stream(1024):
            line += chunk
            if b"\n" in line:
                break
    finally:
        response.release_conn()
    event = orjson.loads(line.split(b"\n")[0])
    assert event["type"] == "ADDED"
    assert event["object"]["apiVersion"] == f"{group}/v2"
    assert event["object"]["spec"] == {"replicas": 2}


def test_a_failing_conversion(
    client: Client, gadgets: str, namespace: str, converters: Converters
) -> None:
    group = gadgets
    body = {
        "apiVersion": f"{group}/v1",
        "kind": KIND,
        "metadata": {"name": "f"},
        "spec": {"size": 1},
    }
    client.request("POST", _path(group, "v1", namespace), body=body)
    converters.broken = True
    try:
        with pytest.raises(ApiError) as failed:
            client.request("GET", _path(group, "v2", namespace, "f"))
        # the storage version needs no conversion
        assert client.request("GET", _path(group, "v1", namespace, "f"))["spec"] == {"size": 1}
    finally:
        converters.broken = False
    assert (failed.value.code, failed.value.reason) == (500, "")
    assert failed.value.message == (
        f"conversion webhook for {group}/v1, Kind={KIND} failed: the converter is broken"
    )


APPLY = "application/apply-patch+yaml"


def test_server_side_apply_in_the_other_version(
    client: Client, gadgets: str, namespace: str
) -> None:
    """An apply in v2 creates the object converted to v1 for storage, and an apply in v2 to
    an object stored in v1 merges with the object converted to v2 (else v2's ``replicas``
    would land next to v1's ``size`` and be pruned)."""
    group = gadgets
    applied = client.request(
        "PATCH",
        _path(group, "v2", namespace, "a"),
        body={
            "apiVersion": f"{group}/v2",
            "kind": KIND,
            "metadata": {"name": "a"},
            "spec": {"replicas": 2},
        },
        content_type=APPLY,
        query={"fieldManager": "tester"},
    )
    assert applied["apiVersion"] == f"{group}/v2" and applied["spec"] == {"replicas": 2}
    assert client.request("GET", _path(group, "v1", namespace, "a"))["spec"] == {"size": 2}
    again = client.request(
        "PATCH",
        _path(group, "v2", namespace, "a"),
        body={
            "apiVersion": f"{group}/v2",
            "kind": KIND,
            "metadata": {"name": "a"},
            "spec": {"replicas": 6},
        },
        content_type=APPLY,
        query={"fieldManager": "tester"},
    )
    assert again["spec"] == {"replicas": 6}
    assert client.request("GET", _path(group, "v1", namespace, "a"))["spec"] == {"size": 6}
    managers = {e["manager"]: e for e in again["metadata"]["managedFields"]}
    assert managers["tester"]["apiVersion"] == f"{group}/v2"
    assert managers["tester"]["operation"] == "Apply"


def test_the_scale_subresource_in_the_other_version(
    client: Client, gadgets: str, namespace: str, converters: Converters
) -> None:
    """The scale of v2 is read from the object converted to v2 (at v2's path) and a write
    to it is converted back to v1 for storage: the webhook is called each time."""
    group = gadgets
    body = {
        "apiVersion": f"{group}/v1",
        "kind": KIND,
        "metadata": {"name": "s"},
        "spec": {"size": 2},
    }
    client.request("POST", _path(group, "v1", namespace), body=body)
    scale_path = _path(group, "v2", namespace, "s") + "/scale"
    calls = converters.calls
    scale = client.request("GET", scale_path)
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 2
    assert converters.calls > calls
    calls = converters.calls
    patched = client.request(
        "PATCH",
        scale_path,
        body={"spec": {"replicas": 4}},
        content_type="application/merge-patch+json",
    )
    assert patched["spec"]["replicas"] == 4
    assert converters.calls > calls
    assert client.request("GET", _path(group, "v1", namespace, "s"))["spec"] == {"size": 4}
    put = client.request("PUT", scale_path, body={**patched, "spec": {"replicas": 5}})
    assert put["spec"]["replicas"] == 5
    assert client.request("GET", _path(group, "v2", namespace, "s"))["spec"] == {"replicas": 5}
    assert client.request("GET", _path(group, "v1", namespace, "s") + "/scale")["spec"] == {
        "replicas": 5
    }
