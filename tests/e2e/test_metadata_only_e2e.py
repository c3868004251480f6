"""Metadata-only reads (``as=PartialObjectMetadata``) and per-kind cache options, on both
backends: the server's answers as kube-apiserver 1.20 gives them, client-go's metadata client
(:class:`~kube_runtime.client.metadata.MetadataClient`), and a manager whose cache keeps only
metadata, only selected objects, or does not cache a kind at all."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.builder import Builder
from kube_runtime.cache import ByObject
from kube_runtime.client import Client, NotFound
from kube_runtime.client.errors import ApiError
from kube_runtime.client.metadata import ACCEPT_ITEM, ACCEPT_LIST, MetadataClient
from kube_runtime.manager import Manager
from kube_runtime.reconcile import Request, Result

_V1BETA1 = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"


def _cm(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "data": {"big": "x" * 2000},
    }


def test_get_answers_partial_object_metadata(client: Client, namespace: str) -> None:
    created = client.create(_cm("one", namespace, app="demo"))
    path = f"/api/v1/namespaces/{namespace}/configmaps/one"
    got = client.request("GET", path, accept=ACCEPT_ITEM)
    assert set(got) == {"kind", "apiVersion", "metadata"}
    assert (got["kind"], got["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    assert got["metadata"]["labels"] == {"app": "demo"}
    beta = client.request("GET", path, accept=_V1BETA1)
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"


def test_list_answers_a_partial_list_in_pages(client: Client, namespace: str) -> None:
    for i in range(3):
        client.create(_cm(f"cm-{i}", namespace))
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    page = client.request("GET", path, query={"limit": 2}, accept=ACCEPT_LIST)
    assert (page["kind"], page["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert page["metadata"]["resourceVersion"]
    assert page["metadata"]["continue"]
    assert [i["kind"] for i in page["items"]] == ["PartialObjectMetadata"] * 2
    assert all(set(i) == {"kind", "apiVersion", "metadata"} for i in page["items"])
    listed = MetadataClient(client, page_size=2).list(kinds.ConfigMap, namespace)
    assert listed["kind"] == "ConfigMapList"
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["cm-0", "cm-1", "cm-2"]
    assert all(i == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": i["metadata"]}
               for i in listed["items"])  # fmt: skip


@pytest.mark.parametrize(
    ("suffix", "accept", "message"),
    [
        (
            "/one",
            ACCEPT_LIST.split(",")[0],
            "you requested PartialObjectMetadataList, but the requested object is not a list "
            "(*core.ConfigMap)",
        ),
        (
            "",
            ACCEPT_ITEM.split(",")[0],
            "you requested PartialObjectMetadata, but the requested object is a list "
            "(*core.ConfigMapList)",
        ),
    ],
)
def test_a_partial_target_that_does_not_fit_is_406(
    client: Client, namespace: str, suffix: str, accept: str, message: str
) -> None:
    client.create(_cm("one", namespace))
    with pytest.raises(ApiError) as raised:
        client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps{suffix}", accept=accept)
    assert raised.value.status["code"] == 406
    assert raised.value.status["reason"] == "NotAcceptable"
    assert raised.value.status["message"] == message


def test_watch_sends_metadata_only_events(client: Client, namespace: str) -> None:
    first = client.create(_cm("w", namespace))
    watcher = MetadataClient(client)
    with watcher.watch(
        kinds.ConfigMap, namespace, resource_version=first["metadata"]["resourceVersion"]
    ) as stream:
        client.patch(
            kinds.ConfigMap, "w", {"metadata": {"labels": {"v": "2"}}}, namespace=namespace
        )
        event = next(stream)
    assert event.type == "MODIFIED"
    assert event.object == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": event.object["metadata"],
    }
    assert event.object["metadata"]["labels"] == {"v": "2"}
    raw = client.watch(
        kinds.ConfigMap,
        namespace,
        resource_version=first["metadata"]["resourceVersion"],
        accept=ACCEPT_ITEM,
    )
    with raw:
        event = next(raw)
    assert (event.object["kind"], set(event.object)) == (
        "PartialObjectMetadata",
        {"kind", "apiVersion", "metadata"},
    )


def test_manager_caches_by_object_options(client: Client, namespace: str, wait_for: Any) -> None:
    """Metadata-only ConfigMaps, Pods cached by label, Secrets never cached."""
    client.create(_cm("meta", namespace, app="demo"))
    client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": namespace},
            "data": {"k": "dg=="},
        }
    )
    manager = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="0",
        cache_by_object={
            kinds.ConfigMap: ByObject(metadata_only=True),
            kinds.Service: ByObject(label_selector={"managed": "yes"}),
        },
        uncached=[kinds.Secret],
    )
    seen: list[Any] = []
    seen_lock = threading.Lock()

    def reconcile(request: Request) -> Result:
        obj = manager.client.get(kinds.ConfigMap, request.name, request.namespace)
        with seen_lock:
            seen.append(obj)
        return Result()

    Builder(manager).named("metadata-only").for_(kinds.ConfigMap).complete(reconcile)
    runner = threading.Thread(target=manager.start, daemon=True)
    runner.start()
    try:
        wait_for(lambda: bool(seen), 30, message="a reconcile of the metadata-only ConfigMap")
        with seen_lock:
            obj = seen[0]
        assert obj == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj["metadata"]}
        assert obj["metadata"]["labels"] == {"app": "demo"}
        assert "managedFields" not in obj["metadata"]  # the default transform still applies

        for name, labels in (("kept", {"managed": "yes"}), ("ignored", {})):
            client.create(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": name, "namespace": namespace, "labels": labels},
                    "spec": {"ports": [{"port": 80}]},
                }
            )
        wait_for(
            lambda: (
                [s["metadata"]["name"] for s in manager.cache.list(kinds.Service, namespace)]
                == ["kept"]
            ),
            30,
            message="only the selected Service cached",
        )
        with pytest.raises(NotFound):
            manager.client.get(kinds.Service, "ignored", namespace)

        secret = manager.client.get(kinds.Secret, "s", namespace)
        assert secret["data"] == {"k": "dg=="}
        assert kinds.Secret not in {i.kind for i in manager.cache.informers()}
    finally:
        manager.stop()
        runner.join(30)
