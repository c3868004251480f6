"""A manager caching some namespaces (controller-runtime's ``DefaultNamespaces`` and per-kind
``ByObject.Namespaces``), against the session cluster (both backends)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime import Builder, Manager, Request, kinds
from kube_runtime.cache import (
    ALL_NAMESPACES,
    ByObject,
    InformerCache,
    NamespaceConfig,
    NamespaceNotCached,
)
from kube_runtime.client import Client, NotFound
from kube_runtime.envtest.managers import running


@pytest.fixture
def three_namespaces(client: Client) -> Iterator[list[str]]:
    names = [f"ns{i}-{uuid.uuid4().hex[:8]}" for i in range(3)]
    for name in names:
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield names
    for name in names:
        try:
            client.delete(kinds.Namespace, name)
        except NotFound:
            pass


def _cm(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"test": "ns-cache"}},
        "data": {"k": "v"},
    }


def _secret(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": {"test": "ns-cache"}},
        "stringData": {"k": "v"},
    }


def test_a_manager_reconciles_exactly_the_cached_namespaces(
    client: Client, three_namespaces: list[str], wait_for: Any
) -> None:
    a, b, c = three_namespaces
    for ns in three_namespaces:
        client.create(_cm("cm", ns))
        client.create(_secret("sec", ns))
    manager = Manager(
        client,
        namespaces=[a, b],
        cache_by_object={kinds.Secret: ByObject(namespaces=[c])},
        metrics_bind_address="0",
        health_probe_bind_address="0",
        graceful_shutdown_timeout=10,
    )
    seen: set[tuple[str, str | None, str]] = set()
    lock = threading.Lock()

    def reconcile(request: Request) -> None:
        # Reads through the manager's cache, each kind in a namespace it is cached in.
        if request.name.startswith("from-"):
            manager.client.get(kinds.Secret, request.name.removeprefix("from-"), request.namespace)
            what = "secret-map"
        else:
            manager.client.get(kinds.ConfigMap, request.name, request.namespace)
            what = "cm"
        with lock:
            seen.add((what, request.namespace, request.name))

    def secret_to_request(obj: Any) -> list[Request]:
        meta = obj["metadata"]
        return [Request(f"from-{meta['name']}", meta["namespace"])]

    (
        Builder(manager)
        .for_(kinds.ConfigMap)
        .watches(kinds.Secret, secret_to_request)
        .named("ns-cache")
        .complete(reconcile)
    )
    with running(manager):
        expected = {("cm", a, "cm"), ("cm", b, "cm"), ("secret-map", c, "from-sec")}
        wait_for(lambda: expected <= seen, timeout=30, message="reconciles of a, b and c's secret")
        client.create(_cm("late", b))
        client.create(_cm("late", c))  # not cached: never reconciled
        client.create(_secret("late", a))  # Secrets are cached in c only
        wait_for(lambda: ("cm", b, "late") in seen, timeout=30, message="the late ConfigMap in b")

        mine = {(w, ns, n) for w, ns, n in seen if n in ("cm", "late", "from-sec", "from-late")}
        assert mine == expected | {("cm", b, "late")}
        assert {ns for _, ns, _ in seen if ns != c} <= {a, b}  # kube-root-ca.crt: a, b only

        # Merged reads over both namespaces, and per namespace.
        listed = manager.client.list(kinds.ConfigMap, label_selector={"test": "ns-cache"})
        got = sorted((o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed["items"])
        assert got == sorted([(a, "cm"), (b, "cm"), (b, "late")])
        secrets = manager.client.list(kinds.Secret, c, label_selector={"test": "ns-cache"})
        assert [o["metadata"]["name"] for o in secrets["items"]] == ["sec"]
        # A namespace the kind is not cached in: a clear error naming the cached ones.
        with pytest.raises(NamespaceNotCached, match=f"'{c}' is not cached .*'{a}', '{b}'"):
            manager.client.get(kinds.ConfigMap, "cm", c)
        with pytest.raises(NamespaceNotCached, match=f"'{a}' is not cached .*'{c}' only"):
            manager.client.list(kinds.Secret, a)
        # Cluster-scoped kinds are cached cluster-wide.
        names = {o["metadata"]["name"] for o in manager.client.list(kinds.Namespace)["items"]}
        assert {a, b, c} <= names


def test_a_cache_lists_and_watches_each_namespace(
    client: Client, three_namespaces: list[str], wait_for: Any
) -> None:
    a, b, c = three_namespaces
    cache = InformerCache(client, namespaces=[a, b])
    try:
        for ns in three_namespaces:
            client.create(_cm("first", ns))
        assert sorted(
            o["metadata"]["namespace"]
            for o in cache.list(kinds.ConfigMap, label_selector="test=ns-cache")
        ) == sorted([a, b])
        for ns in three_namespaces:
            client.create(_cm("second", ns))
        wait_for(
            lambda: len(cache.list(kinds.ConfigMap, label_selector="test=ns-cache")) == 4,
            timeout=30,
            message="the second ConfigMaps of a and b",
        )
        assert cache.get(kinds.ConfigMap, "second", b)["metadata"]["namespace"] == b
        with pytest.raises(NamespaceNotCached):
            cache.get(kinds.ConfigMap, "second", c)
    finally:
        cache.stop()


def test_all_namespaces_beside_a_named_one_holds_each_object_once(
    client: Client, three_namespaces: list[str], wait_for: Any
) -> None:
    a, b, c = three_namespaces
    # a: its own selector (matching nothing here); every other namespace: everything.
    cache = InformerCache(
        client, namespaces={ALL_NAMESPACES: None, a: NamespaceConfig(label_selector="test=none")}
    )
    try:
        for ns in three_namespaces:
            client.create(_cm("first", ns))

        def mine() -> list[tuple[str, str]]:
            # (Namespaces of earlier tests may still be terminating: only this test's.)
            objs = cache.list(kinds.ConfigMap, label_selector="test=ns-cache")
            keys = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]
            return sorted(k for k in keys if k[0] in three_namespaces)

        assert mine() == sorted([(b, "first"), (c, "first")])  # the field selector serves them
        client.create(_cm("second", c))
        client.create(_cm("second", a))
        wait_for(lambda: (c, "second") in mine(), timeout=30, message="the watch of the others")
        assert mine() == sorted([(b, "first"), (c, "first"), (c, "second")])
        assert cache.list(kinds.ConfigMap, a, label_selector="test=ns-cache") == []
        assert cache.get(kinds.ConfigMap, "first", b)["metadata"]["namespace"] == b
    finally:
        cache.stop()
