"""Watch semantics: replay from a resourceVersion, live events, selectors, bookmarks, 410 Gone."""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from kube_runtime.envtest.cluster import EmbeddedCluster


def cm(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}}}


def raw_watch(api_client: Any, path: str, **query: Any) -> Any:
    """Open a watch and yield decoded event dicts (raw JSON, no model deserialization)."""
    cfg = api_client.configuration
    headers = {"Authorization": cfg.api_key["authorization"]} if cfg.api_key else {}
    url = f"{cfg.host}{path}?{urlencode({'watch': 'true', **query})}"
    resp = api_client.rest_client.pool_manager.request(
        "GET", url, headers=headers, preload_content=False, timeout=10
    )
    buf = b""
    for chunk in resp.stream(4096):
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip():
                yield orjson.loads(line)


def test_replay_from_resource_version_then_live(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, cm("a"))
    core.patch_namespaced_config_map("a", namespace, {"data": {"k": "v"}})
    events: list[tuple[str, str]] = []
    w = watch.Watch()
    for ev in w.stream(
        core.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=5
    ):
        events.append((ev["type"], ev["object"].metadata.name))
        if len(events) == 2:
            core.delete_namespaced_config_map("a", namespace)
        if len(events) == 3:
            w.stop()
    assert events == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_without_version_starts_with_current_state(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, cm("x"))
    core.create_namespaced_config_map(namespace, cm("y"))
    events = []
    for ev in raw_watch(api_client, f"/api/v1/namespaces/{namespace}/configmaps", timeoutSeconds=1):
        events.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(events) == 2:
            break
    # the current state arrives as ADDED events; the API promises no order among them
    assert sorted(events) == [("ADDED", "x"), ("ADDED", "y")]


def test_selector_watch_sees_objects_enter_and_leave(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, cm("a", {"sel": "yes"}))
    core.patch_namespaced_config_map("a", namespace, {"metadata": {"labels": {"sel": "no"}}})
    core.patch_namespaced_config_map("a", namespace, {"metadata": {"labels": {"sel": "yes"}}})
    core.create_namespaced_config_map(namespace, cm("other", {"sel": "no"}))
    events = []
    for ev in raw_watch(
        api_client,
        f"/api/v1/namespaces/{namespace}/configmaps",
        resourceVersion=rv,
        labelSelector="sel=yes",
    ):
        events.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(events) == 3:
            break
    assert events == [("ADDED", "a"), ("DELETED", "a"), ("ADDED", "a")]


def test_field_selector_watch_on_one_object(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, cm("skip"))
    core.create_namespaced_config_map(namespace, cm("want"))
    ev = next(
        raw_watch(
            api_client,
            f"/api/v1/namespaces/{namespace}/configmaps",
            resourceVersion=rv,
            fieldSelector="metadata.name=want",
        )
    )
    assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "want")


def test_bookmarks_and_initial_events_end(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, cm("a"))
    events = []
    for ev in raw_watch(
        api_client,
        f"/api/v1/namespaces/{namespace}/configmaps",
        allowWatchBookmarks="true",
        sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan",
    ):
        events.append(ev)
        if len(events) == 3:
            break
    assert events[0]["type"] == "ADDED"
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    # A periodic bookmark follows (the session cluster sends them every second).
    assert events[2]["type"] == "BOOKMARK"
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) >= int(
        events[0]["object"]["metadata"]["resourceVersion"]
    )


def test_timeout_seconds_ends_the_stream(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, cm("before"))
    # From a recent version: other tests may expire the shared cluster's old history.
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, cm("after"))
    events = list(
        watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1
        )
    )
    assert [e["object"].metadata.name for e in events] == ["after"]


def test_expired_resource_version_is_410(
    api_client: Any, namespace: str, embedded_cluster: EmbeddedCluster
) -> None:
    core = client.CoreV1Api(api_client)
    old = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, cm("a"))
    embedded_cluster.store.evict_history(embedded_cluster.resource("", "configmaps"))
    ev = next(
        raw_watch(api_client, f"/api/v1/namespaces/{namespace}/configmaps", resourceVersion=old)
    )
    assert ev["type"] == "ERROR"
    assert ev["object"]["code"] == 410 and ev["object"]["reason"] == "Expired"
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map, namespace, resource_version=old, timeout_seconds=2
        ):
            pass
    assert err.value.status == 410


def test_bounded_history_window() -> None:
    with EmbeddedCluster(kubelet=False, history_size=5) as cluster:
        api_client = cluster.api_client()
        core = client.CoreV1Api(api_client)
        start = core.list_namespaced_config_map("default").metadata.resource_version
        for i in range(10):
            core.create_namespaced_config_map("default", cm(f"c{i}"))
        ev = next(
            raw_watch(api_client, "/api/v1/namespaces/default/configmaps", resourceVersion=start)
        )
        assert ev["type"] == "ERROR" and ev["object"]["code"] == 410
        recent = core.list_namespaced_config_map("default").metadata.resource_version
        core.create_namespaced_config_map("default", cm("fresh"))
        ev = next(
            raw_watch(api_client, "/api/v1/namespaces/default/configmaps", resourceVersion=recent)
        )
        assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "fresh")
        api_client.close()


def test_server_stop_closes_watch_streams_cleanly() -> None:
    cluster = EmbeddedCluster(kubelet=False).start()
    api_client = cluster.api_client()
    core = client.CoreV1Api(api_client)
    done = threading.Event()
    seen: list[str] = []

    def consume() -> None:
        for ev in watch.Watch().stream(
            core.list_namespaced_config_map, "default", timeout_seconds=30
        ):
            seen.append(ev["type"])
        done.set()

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    core.create_namespaced_config_map("default", cm("a"))
    from kube_runtime.envtest import wait_for

    wait_for(lambda: seen, timeout=5, message="the first event")
    cluster.stop()
    assert done.wait(5), "the watch did not end when the server stopped"
    api_client.close()


def test_injected_watch_drops(api_client: Any, namespace: str, faults: Any) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    for i in range(3):
        core.create_namespaced_config_map(namespace, cm(f"d{i}"))
    faults.drop_watches_every(2)
    events = list(
        raw_watch(api_client, f"/api/v1/namespaces/{namespace}/configmaps", resourceVersion=rv)
    )
    assert [e["object"]["metadata"]["name"] for e in events] == ["d0", "d1"]


def test_history_window_bounded_by_age() -> None:
    """``history_age``: events older than the bound leave the window (kube-apiserver's watch
    cache keeps a bounded time of history), so a watch from before them gets 410 Expired."""
    with EmbeddedCluster(kubelet=False, history_age=75) as cluster:
        now = [1_000.0]
        cluster.store.monotonic = lambda: now[0]
        api_client = cluster.api_client()
        core = client.CoreV1Api(api_client)
        start = core.list_namespaced_config_map("default").metadata.resource_version
        core.create_namespaced_config_map("default", cm("old"))
        path = "/api/v1/namespaces/default/configmaps"
        ev = next(raw_watch(api_client, path, resourceVersion=start))
        assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "old")
        now[0] += 76
        ev = next(raw_watch(api_client, path, resourceVersion=start))
        assert ev["type"] == "ERROR" and ev["object"]["code"] == 410
        api_client.close()


def test_the_session_cluster_keeps_a_small_window(embedded_cluster: Any) -> None:
    """The fixtures' window is kube-apiserver-sized, so a client's 410 handling runs in
    tests (ini options kube_runtime_watch_history_size / _age)."""
    from kube_runtime.envtest.plugin import WATCH_HISTORY_AGE, WATCH_HISTORY_SIZE

    store = embedded_cluster.store
    assert (store.history_size, store.history_age) == (WATCH_HISTORY_SIZE, WATCH_HISTORY_AGE)
