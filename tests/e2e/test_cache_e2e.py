"""InformerCache and CachedClient against the embedded cluster."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime import kinds, metrics
from kube_runtime.cache import (
    INDEX_CONTROLLER_UID,
    INDEX_LABEL,
    INDEX_NAMESPACE,
    CacheMutationError,
    InformerCache,
    ResourceEventHandlerFuncs,
)
from kube_runtime.client import Client, NotFound
from kube_runtime.client.cached import CachedClient


def cm(name: str, namespace: str, labels: dict[str, str] | None = None, **extra: Any) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, **extra}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def rest_requests() -> float:
    total = 0.0
    for family in metrics.REGISTRY.collect():
        if family.name == "rest_client_requests":
            total += sum(s.value for s in family.samples if s.name.endswith("_total"))
    return total


@pytest.fixture
def cache(client: Client, namespace: str) -> Iterator[InformerCache]:
    c = InformerCache(client, namespace=namespace)
    try:
        yield c
    finally:
        c.stop()


def names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_informer_sees_create_update_delete(
    client: Client, namespace: str, cache: InformerCache, wait_for: Any
) -> None:
    events: list[tuple[str, str]] = []
    inf = cache.informer_for(kinds.ConfigMap)
    assert cache.informer_for("v1/ConfigMap") is inf  # one informer per kind
    inf.add_event_handler(
        ResourceEventHandlerFuncs(
            on_add=lambda o: events.append(("add", o["metadata"]["name"])),
            on_update=lambda old, new: events.append(("update", new["data"]["k"])),
            on_delete=lambda o: events.append(("delete", o["metadata"]["name"])),
        )
    )
    cache.start()
    assert cache.wait_for_cache_sync(10)
    client.create(cm("a", namespace))
    client.patch(kinds.ConfigMap, "a", {"data": {"k": "v2"}}, namespace=namespace)
    client.delete(kinds.ConfigMap, "a", namespace)
    wait_for(lambda: events == [("add", "a"), ("update", "v2"), ("delete", "a")], timeout=10)
    with pytest.raises(NotFound) as err:
        cache.get(kinds.ConfigMap, "a", namespace)
    assert err.value.code == 404 and "not found" in err.value.message


def test_get_and_list_start_the_informer_and_use_indexes(
    client: Client, namespace: str, cache: InformerCache, wait_for: Any
) -> None:
    owner = client.create(cm("owner", namespace))
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    client.create(cm("web-1", namespace, {"app": "web", "tier": "fe"}, ownerReferences=[ref]))
    client.create(cm("web-2", namespace, {"app": "web"}, ownerReferences=[ref]))
    client.create(cm("db", namespace, {"app": "db"}))

    # Not started: the first read starts the informer and waits for its sync.
    assert cache.get(kinds.ConfigMap, "db", namespace)["metadata"]["labels"] == {"app": "db"}
    assert cache.informer_for(kinds.ConfigMap).started

    assert names(cache.list(kinds.ConfigMap, namespace)) == ["db", "owner", "web-1", "web-2"]
    assert names(cache.list(kinds.ConfigMap, label_selector="app=web")) == ["web-1", "web-2"]
    assert names(cache.list(kinds.ConfigMap, label_selector={"app": "web", "tier": "fe"})) == [
        "web-1"
    ]
    assert names(cache.list(kinds.ConfigMap, label_selector="app in (db,web),!tier")) == [
        "db",
        "web-2",
    ]
    assert names(cache.list(kinds.ConfigMap, field_selector="metadata.name=db")) == ["db"]
    uid = owner["metadata"]["uid"]
    assert names(cache.list(kinds.ConfigMap, index=(INDEX_CONTROLLER_UID, uid))) == [
        "web-1",
        "web-2",
    ]
    assert len(cache.list(kinds.ConfigMap, index=(INDEX_NAMESPACE, namespace))) == 4
    assert names(cache.list(kinds.ConfigMap, index=(INDEX_LABEL, "tier=fe"))) == ["web-1"]

    # A custom index added after start covers existing and later objects.
    cache.add_indexer(
        kinds.ConfigMap, "app", lambda o: [o["metadata"].get("labels", {}).get("app", "")]
    )
    assert names(cache.list(kinds.ConfigMap, index=("app", "web"))) == ["web-1", "web-2"]
    client.create(cm("web-3", namespace, {"app": "web"}))
    wait_for(lambda: len(cache.list(kinds.ConfigMap, index=("app", "web"))) == 3, timeout=10)

    # Relabel: the label index follows.
    client.patch(
        kinds.ConfigMap, "web-1", {"metadata": {"labels": {"app": "db"}}}, namespace=namespace
    )
    wait_for(
        lambda: names(cache.list(kinds.ConfigMap, label_selector="app=db")) == ["db", "web-1"],
        timeout=10,
    )
    with pytest.raises(ValueError):
        cache.list(kinds.ConfigMap, "another-namespace")


def test_cached_objects_are_shared_and_mutations_are_caught(
    client: Client, namespace: str, cache: InformerCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBE_CACHE_MUTATION_DETECTOR", "true")
    client.create(cm("shared", namespace))
    first = cache.get(kinds.ConfigMap, "shared", namespace)
    assert cache.get(kinds.ConfigMap, "shared", namespace) is first  # no copy per read
    mine = copy.deepcopy(first)
    mine["data"]["k"] = "fine"  # a copy may change
    cache.get(kinds.ConfigMap, "shared", namespace)
    first["data"]["k"] = "not fine"  # the shared object may not
    with pytest.raises(CacheMutationError, match=f"{namespace}/shared"):
        cache.get(kinds.ConfigMap, "shared", namespace)


def test_cached_client_reads_without_requests_and_writes_through(
    client: Client, namespace: str, cache: InformerCache, wait_for: Any
) -> None:
    cached = CachedClient(client, cache, uncached=[kinds.Secret])
    assert cached.api_reader is client
    client.create(cm("a", namespace, {"app": "x"}))
    cached.get(kinds.ConfigMap, "a", namespace)  # warm up: starts and syncs the informer
    # ... and wait until its watch delivers: the watch request is counted when it answers.
    client.patch(
        kinds.ConfigMap, "a", {"metadata": {"annotations": {"w": "1"}}}, namespace=namespace
    )
    wait_for(
        lambda: cached.get(kinds.ConfigMap, "a", namespace)["metadata"].get("annotations"),
        timeout=10,
    )

    before = rest_requests()
    for _ in range(20):
        assert cached.get(kinds.ConfigMap, "a", namespace)["data"] == {"k": "v"}
        listed = cached.list(kinds.ConfigMap, namespace, label_selector={"app": "x"})
        assert names(listed["items"]) == ["a"]
    assert rest_requests() == before  # served from the cache
    assert listed["kind"] == "ConfigMapList" and listed["metadata"]["resourceVersion"]
    with pytest.raises(NotFound):
        cached.get(kinds.ConfigMap, "missing", namespace)
    assert rest_requests() == before

    created = cached.create(cm("b", namespace))  # writes go to the API
    assert (
        client.get(kinds.ConfigMap, "b", namespace)["metadata"]["uid"] == created["metadata"]["uid"]
    )
    assert rest_requests() > before
    wait_for(
        lambda: names(cached.list(kinds.ConfigMap, namespace)["items"]) == ["a", "b"], timeout=10
    )
    cached.patch(kinds.ConfigMap, "b", {"data": {"k": "v2"}}, namespace=namespace)
    wait_for(lambda: cached.get(kinds.ConfigMap, "b", namespace)["data"]["k"] == "v2", timeout=10)
    cached.delete(kinds.ConfigMap, "b", namespace)
    wait_for(lambda: names(cached.list(kinds.ConfigMap, namespace)["items"]) == ["a"], timeout=10)

    # Uncached kinds are read from the API every time (no informer is started for them).
    client.create(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": namespace}}
    )
    before = rest_requests()
    assert cached.get(kinds.Secret, "s", namespace)["metadata"]["name"] == "s"
    assert rest_requests() == before + 1
    assert kinds.Secret not in {inf.kind for inf in cache.informers()}


def test_the_informer_stores_objects_without_managed_fields_by_default(
    client: Any, namespace: str
) -> None:
    """Issue 19 part 5: ``strip_managed_fields`` is the informers' default transform (an
    applied object's managedFields and last-applied annotation never enter the cache);
    ``transform=None`` keeps them."""
    from kube_runtime.cache import LAST_APPLIED_ANNOTATION, SharedInformer
    from kube_runtime.kinds import ConfigMap

    applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "applied",
            "namespace": namespace,
            "annotations": {LAST_APPLIED_ANNOTATION: "{}", "keep": "me"},
        },
        "data": {"k": "v"},
    }
    client.apply(applied, field_manager="test")
    informers = [
        SharedInformer(client, ConfigMap, namespace=namespace),
        SharedInformer(client, ConfigMap, namespace=namespace, transform=None),
    ]
    try:
        for informer in informers:
            informer.start()
            assert informer.wait_for_sync(10)
        stripped = informers[0].indexer.get(f"{namespace}/applied")
        raw = informers[1].indexer.get(f"{namespace}/applied")
        assert stripped is not None and raw is not None
        assert "managedFields" not in stripped["metadata"]
        assert stripped["metadata"]["annotations"] == {"keep": "me"}
        assert (
            raw["metadata"]["managedFields"]
            and LAST_APPLIED_ANNOTATION in (raw["metadata"]["annotations"])
        )
    finally:
        for informer in informers:
            informer.stop()
