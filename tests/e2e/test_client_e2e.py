"""The framework's Client against the embedded cluster: CRUD, subresources, the four patch
types, deletion, paging, selectors, every typed error from a real answer, watch, CRD
discovery, typed models, kubeconfig loading and metrics."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from kube_runtime import kinds
from kube_runtime.client import (
    AlreadyExists,
    ApiConnectionError,
    Client,
    Conflict,
    Gone,
    Invalid,
    NoKindMatchError,
    NotFound,
    Resource,
    ServerError,
    TooManyRequests,
    Unauthorized,
)
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.metrics import REGISTRY


def cm(
    name: str, namespace: str, labels: dict[str, str] | None = None, **data: str
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "data": data,
    }


def pod(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
    }


def sts(name: str, namespace: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def names(objs: list[Any]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


# ------------------------------------------------------------------------------- CRUD


def test_configmap_crud_and_errors(client: Client, namespace: str) -> None:
    created = client.create(cm("a", namespace, k="v"))
    assert created["metadata"]["uid"] and created["data"] == {"k": "v"}
    got = client.get(kinds.ConfigMap, "a", namespace)
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert got["kind"] == "ConfigMap" and got["apiVersion"] == "v1"

    got["data"]["k"] = "v2"
    updated = client.update(got)
    assert updated["data"] == {"k": "v2"}
    assert updated["metadata"]["resourceVersion"] != got["metadata"]["resourceVersion"]

    # Writing the stale copy again: 409 Conflict.
    with pytest.raises(Conflict) as conflict:
        client.update(got)
    assert conflict.value.code == 409 and "modified" in conflict.value.message

    with pytest.raises(AlreadyExists) as exists:
        client.create(cm("a", namespace))
    assert exists.value.details["name"] == "a"

    deleted = client.delete(kinds.ConfigMap, "a", namespace)
    assert deleted.get("kind") == "Status" or deleted["metadata"]["name"] == "a"
    with pytest.raises(NotFound) as missing:
        client.get("v1/ConfigMap", "a", namespace)
    assert missing.value.code == 404 and '"a" not found' in missing.value.message
    with pytest.raises(NotFound):
        client.delete(kinds.ConfigMap, "a", namespace)


def test_create_with_namespace_argument_and_generate_name(client: Client, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}
    created = client.create(body, namespace=namespace)
    assert created["metadata"]["name"].startswith("gen-")
    assert created["metadata"]["namespace"] == namespace
    dry = client.create(cm("dry", namespace), dry_run=True)
    assert dry["metadata"]["name"] == "dry"
    with pytest.raises(NotFound):
        client.get(kinds.ConfigMap, "dry", namespace)
    with pytest.raises(ValueError, match="namespace"):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_pod_and_statefulset_crud_with_update_status(client: Client, namespace: str) -> None:
    p = client.create(pod("p", namespace))
    assert p["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert client.list(kinds.Pod, namespace)["items"][0]["metadata"]["uid"] == p["metadata"]["uid"]

    s = client.create(sts("web", namespace))
    assert s["metadata"]["generation"] == 1
    s["status"] = {"replicas": 5, "observedGeneration": 1}
    # update() ignores status changes (status subresource)...
    s = client.update(s)
    assert s.get("status", {}).get("replicas") != 5
    # ...update_status() keeps only them.
    s["status"] = {"replicas": 5, "observedGeneration": 1}
    s["spec"]["replicas"] = 9
    after = client.update_status(s)
    assert after["status"]["replicas"] == 5
    assert after["spec"]["replicas"] == 1
    assert client.get(kinds.StatefulSet, "web", namespace)["status"]["replicas"] == 5


def test_namespace_is_required_for_namespaced_reads(client: Client) -> None:
    with pytest.raises(ValueError, match="namespace"):
        client.get(kinds.ConfigMap, "x")
    # Cluster-scoped kinds take none.
    assert client.get(kinds.Namespace, "default")["metadata"]["name"] == "default"


# ------------------------------------------------------------------------------ patch


def test_merge_strategic_and_json_patch(client: Client, namespace: str) -> None:
    client.create(cm("m", namespace, a="1", b="2"))
    merged = client.patch(
        kinds.ConfigMap, "m", {"data": {"a": None, "c": "3"}}, namespace=namespace
    )
    assert merged["data"] == {"b": "2", "c": "3"}

    patched = client.patch(
        kinds.ConfigMap,
        "m",
        [
            {"op": "test", "path": "/data/b", "value": "2"},
            {"op": "replace", "path": "/data/b", "value": "20"},
            {"op": "add", "path": "/metadata/labels", "value": {"x": "y"}},
        ],
        namespace=namespace,
        patch_type="json",
    )
    assert patched["data"]["b"] == "20" and patched["metadata"]["labels"] == {"x": "y"}
    with pytest.raises(TypeError):
        client.patch(kinds.ConfigMap, "m", {"op": "add"}, namespace=namespace, patch_type="json")

    p = pod("p", namespace)
    p["spec"]["containers"].append({"name": "side", "image": "busybox"})
    client.create(p)
    # Strategic merge: containers merge by name (a merge patch would replace the list).
    strategic = client.patch(
        kinds.Pod,
        "p",
        {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}},
        namespace=namespace,
        patch_type="strategic",
    )
    assert [(c["name"], c["image"]) for c in strategic["spec"]["containers"]] == [
        ("c", "nginx:1.25"),
        ("side", "busybox:2"),
    ]
    with pytest.raises(ValueError):
        client.patch(kinds.Pod, "p", {}, namespace=namespace, patch_type="bogus")


def test_server_side_apply(client: Client, namespace: str) -> None:
    applied = client.apply(cm("ssa", namespace, k="v"), field_manager="test")
    assert applied["data"] == {"k": "v"}
    again = client.apply(cm("ssa", namespace, k="v2"), field_manager="test")
    assert again["data"] == {"k": "v2"}
    assert again["metadata"]["uid"] == applied["metadata"]["uid"]
    via_patch = client.patch(
        kinds.ConfigMap,
        "ssa",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"z": "1"}},
        namespace=namespace,
        patch_type="apply",
        field_manager="other",
        force=True,
    )
    assert via_patch["data"]["z"] == "1"
    with pytest.raises(ValueError, match="field_manager"):
        client.patch(kinds.ConfigMap, "ssa", {}, namespace=namespace, patch_type="apply")


def test_status_and_scale_subresource_patches(client: Client, namespace: str) -> None:
    client.create(sts("web", namespace, replicas=1))
    status = client.patch(
        kinds.StatefulSet,
        "web",
        {"status": {"replicas": 3, "readyReplicas": 2}, "spec": {"replicas": 7}},
        namespace=namespace,
        subresource="status",
    )
    assert status["status"]["replicas"] == 3 and status["spec"]["replicas"] == 1
    scale = client.patch(
        kinds.StatefulSet,
        "web",
        {"spec": {"replicas": 4}},
        namespace=namespace,
        subresource="scale",
    )
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 4
    assert client.get(kinds.StatefulSet, "web", namespace)["spec"]["replicas"] == 4


# ----------------------------------------------------------------------------- delete


def test_delete_preconditions(client: Client, namespace: str) -> None:
    obj = client.create(cm("d", namespace))
    with pytest.raises(Conflict) as err:
        client.delete(kinds.ConfigMap, "d", namespace, uid="not-the-uid")
    assert "Precondition failed" in err.value.message or "uid" in err.value.message
    with pytest.raises(Conflict):
        client.delete(kinds.ConfigMap, "d", namespace, resource_version="1")
    client.get(kinds.ConfigMap, "d", namespace)  # still there
    client.delete(
        kinds.ConfigMap,
        "d",
        namespace,
        uid=obj["metadata"]["uid"],
        resource_version=obj["metadata"]["resourceVersion"],
    )
    with pytest.raises(NotFound):
        client.get(kinds.ConfigMap, "d", namespace)


def _owned(name: str, namespace: str, owner: dict[str, Any]) -> dict[str, Any]:
    obj = cm(name, namespace)
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
        }
    ]
    return obj


def test_delete_propagation(client: Client, namespace: str, wait_for: Any) -> None:
    owner = client.create(cm("owner", namespace))
    client.create(_owned("dep", namespace, owner))
    client.delete(kinds.ConfigMap, "owner", namespace, propagation_policy="Orphan")
    wait_for(
        lambda: (
            not client.list(kinds.ConfigMap, namespace, field_selector="metadata.name=owner")[
                "items"
            ]
        ),
        message="owner deleted",
    )
    # Orphaned, never deleted: the dependent stays and loses the reference (a NotFound fails
    # the wait). Waited for, not read once: on kube-apiserver 1.20 a CI run on a loaded machine
    # once read the reference still there just after the owner was gone (cause not found;
    # kube-controller-manager's garbage collector does the orphaning there).
    wait_for(
        lambda: (
            not client.get(kinds.ConfigMap, "dep", namespace)["metadata"].get("ownerReferences")
        ),
        message="dependent orphaned",
    )

    owner = client.create(cm("owner2", namespace))
    client.create(_owned("dep2", namespace, owner))
    client.delete(
        kinds.ConfigMap,
        "owner2",
        namespace,
        propagation_policy="Background",
        grace_period_seconds=0,
    )

    def dep2_gone() -> bool:
        try:
            client.get(kinds.ConfigMap, "dep2", namespace)
        except NotFound:
            return True
        return False

    wait_for(dep2_gone, message="dependent collected")


def test_delete_all_of(client: Client, namespace: str) -> None:
    for i in range(3):
        client.create(cm(f"x{i}", namespace, {"grp": "x"}))
    client.create(cm("keep", namespace, {"grp": "y"}))
    client.delete_all_of(kinds.ConfigMap, namespace, label_selector={"grp": "x"})
    assert names(client.list(kinds.ConfigMap, namespace)["items"]) == ["keep"]


# ------------------------------------------------------------------------ list / page


def test_list_pages_through_continue(
    client: Client, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(25):
        client.create(cm(f"c{i:02d}", namespace))
    pages: list[dict[str, Any]] = []
    real = client.request

    def spy(method: str, path: str, **kw: Any) -> Any:
        out = real(method, path, **kw)
        if method == "GET" and path.endswith("/configmaps"):
            pages.append(
                {"query": dict(kw.get("query") or {}), "rv": out["metadata"]["resourceVersion"]}
            )
            # Something changes between pages; the list stays as of the first page.
            if len(pages) == 1:
                real("POST", path, body=cm("late", namespace))
        return out

    monkeypatch.setattr(client, "request", spy)
    result = client.list(kinds.ConfigMap, namespace, limit=10)
    assert len(pages) == 3
    assert [p["query"]["limit"] for p in pages] == [10, 10, 10]
    assert "continue" not in pages[0]["query"] and pages[1]["query"]["continue"]
    items = result["items"]
    got = [i["metadata"]["name"] for i in items]
    assert len(got) == len(set(got))
    assert {f"c{i:02d}" for i in range(25)} <= set(got)
    assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1" for i in items)
    assert result["kind"] == "ConfigMapList"
    assert result["metadata"]["resourceVersion"] == pages[0]["rv"]
    assert "continue" not in result["metadata"]


def test_list_falls_back_to_a_full_list_when_continue_expires(
    client: Client, namespace: str, faults: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(12):
        client.create(cm(f"c{i:02d}", namespace))
    calls: list[Any] = []
    real = client.request

    def spy(method: str, path: str, **kw: Any) -> Any:
        calls.append(dict(kw.get("query") or {}))
        out = real(method, path, **kw)
        if len(calls) == 1:
            faults.fail("configmaps", "list", 410, times=1)
        return out

    monkeypatch.setattr(client, "request", spy)
    result = client.list(kinds.ConfigMap, namespace, limit=5)
    assert names(result["items"]) == [f"c{i:02d}" for i in range(12)]
    assert len(calls) == 3 and calls[2].get("limit") is None and "continue" not in calls[2]


def test_selectors_as_strings_and_dicts(client: Client, namespace: str) -> None:
    client.create(cm("a", namespace, {"app": "web", "tier": "front"}))
    client.create(cm("b", namespace, {"app": "web", "tier": "back"}))
    client.create(cm("c", namespace, {"app": "db"}))
    assert names(client.list(kinds.ConfigMap, namespace, label_selector="app=web")["items"]) == [
        "a",
        "b",
    ]
    assert names(
        client.list(kinds.ConfigMap, namespace, label_selector={"app": "web", "tier": "back"})[
            "items"
        ]
    ) == ["b"]
    assert names(
        client.list(kinds.ConfigMap, namespace, label_selector="app in (db,web),tier!=back")[
            "items"
        ]
    ) == ["a", "c"]
    assert names(
        client.list(kinds.ConfigMap, namespace, field_selector="metadata.name=c")["items"]
    ) == ["c"]
    assert names(
        client.list(
            kinds.ConfigMap,
            namespace,
            field_selector={"metadata.name": "a"},
            label_selector={"app": "web"},
        )["items"]
    ) == ["a"]
    # All namespaces: this namespace's objects are among them, with their namespace.
    everywhere = client.list(kinds.ConfigMap, label_selector={"tier": "front"})["items"]
    assert ("a", namespace) in [
        (o["metadata"]["name"], o["metadata"]["namespace"]) for o in everywhere
    ]


# ----------------------------------------------------------------------------- errors


def test_invalid_has_causes(client: Client, namespace: str) -> None:
    with pytest.raises(Invalid) as err:
        client.create(cm("Bad_Name", namespace))
    assert err.value.code == 422 and err.value.reason == "Invalid"
    assert any(c.get("field") == "metadata.name" for c in err.value.causes)


def test_injected_429_and_500(client: Client, namespace: str, faults: Any) -> None:
    faults.fail("configmaps", "get", 429, times=1, retry_after=5)
    with pytest.raises(TooManyRequests) as err:
        client.get(kinds.ConfigMap, "x", namespace)
    assert err.value.retry_after == 5.0
    faults.fail("configmaps", "create", 500, times=1)
    with pytest.raises(ServerError) as server:
        client.create(cm("x", namespace))
    assert server.value.code == 500 and "injected" in server.value.message
    client.create(cm("x", namespace))  # the rule is used up


def test_unauthorized_with_a_wrong_token(client: Client) -> None:
    import copy

    cfg = copy.copy(client.configuration)
    cfg.api_key = {"authorization": "Bearer wrong"}
    cfg.api_key_prefix = {}
    cfg.refresh_api_key_hook = None
    with Client(cfg) as bad, pytest.raises(Unauthorized):
        bad.get(kinds.Namespace, "default")


def test_unknown_kind(client: Client) -> None:
    with pytest.raises(NoKindMatchError):
        client.get("nothere.example.com/v1/Thing", "x")
    with pytest.raises(NoKindMatchError):
        client.get("v1/NoSuchKind", "x")


def test_connection_error_is_wrapped() -> None:
    # The discard port: nothing listens.
    with (
        Client(_configuration("http://127.0.0.1:9"), connect_timeout=2) as dead,
        pytest.raises(ApiConnectionError) as err,
    ):
        dead.get(kinds.Namespace, "default")
    assert isinstance(err.value, ConnectionError) and err.value.__cause__ is not None


# ------------------------------------------------------------------------------ watch


def test_watch_added_modified_deleted(client: Client, namespace: str) -> None:
    rv = client.list(kinds.ConfigMap, namespace)["metadata"]["resourceVersion"]
    client.create(cm("w", namespace))
    client.patch(kinds.ConfigMap, "w", {"data": {"k": "v"}}, namespace=namespace)
    client.delete(kinds.ConfigMap, "w", namespace)
    seen = []
    with client.watch(kinds.ConfigMap, namespace, resource_version=rv, allow_bookmarks=False) as w:
        for ev in w:
            seen.append((ev.type, ev.object["metadata"]["name"]))
            if len(seen) == 3:
                break
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_watch_sees_live_events_as_they_happen(client: Client, namespace: str) -> None:
    rv = client.list(kinds.ConfigMap, namespace)["metadata"]["resourceVersion"]
    with client.watch(
        kinds.ConfigMap, namespace, resource_version=rv, label_selector={"live": "y"}
    ) as w:
        client.create(cm("skip", namespace))
        client.create(cm("live", namespace, {"live": "y"}))
        ev = next(e for e in w if e.type != "BOOKMARK")
    assert (ev.type, ev.object["metadata"]["name"]) == ("ADDED", "live")


def test_watch_initial_events_and_bookmarks(client: Client, namespace: str) -> None:
    client.create(cm("a", namespace))
    with client.watch(kinds.ConfigMap, namespace, send_initial_events=True) as w:
        first = next(w)
        end = next(w)
        periodic = next(w)
    assert (first.type, first.object["metadata"]["name"]) == ("ADDED", "a")
    assert end.type == "BOOKMARK"
    assert end.object["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
    assert periodic.type == "BOOKMARK" and periodic.object["metadata"]["resourceVersion"]


@pytest.mark.simtime  # the server's watch timeout is virtual, on a cluster of the test's own
def test_watch_ends_at_timeout(sim_client: Client, sim_namespace: str) -> None:
    client, namespace = sim_client, sim_namespace
    rv = client.list(kinds.ConfigMap, namespace)["metadata"]["resourceVersion"]
    with client.watch(kinds.ConfigMap, namespace, resource_version=rv, timeout_seconds=1) as w:
        events = list(w)
    assert all(e.type == "BOOKMARK" for e in events)
    assert w.closed


def test_watch_close_from_another_thread(client: Client, namespace: str) -> None:
    rv = client.list(kinds.ConfigMap, namespace)["metadata"]["resourceVersion"]
    w = client.watch(kinds.ConfigMap, namespace, resource_version=rv, allow_bookmarks=False)
    ended = threading.Event()
    started = threading.Event()

    def consume() -> None:
        started.set()
        for _ in w:
            pass
        ended.set()

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    assert started.wait(5)
    assert not ended.wait(0.2)  # blocked: nothing happens in this namespace
    w.close()
    assert ended.wait(5), "close() did not unblock the iteration"
    # The client is still usable afterwards.
    assert client.list(kinds.ConfigMap, namespace)["items"] == []


def test_watch_from_expired_version_raises_gone() -> None:
    # A private cluster with a short event window (evicting the session cluster's history
    # would break other tests' watches from old versions).
    with (
        EmbeddedCluster(kubelet=False, history_size=5) as cluster,
        Client(_configuration(cluster.url)) as private,
    ):
        old = private.list(kinds.ConfigMap, "default")["metadata"]["resourceVersion"]
        for i in range(10):
            private.create(cm(f"c{i}", "default"))
        with (
            pytest.raises(Gone) as err,
            private.watch(kinds.ConfigMap, "default", resource_version=old) as w,
        ):
            list(w)
        assert err.value.code == 410 and err.value.reason == "Expired"
        # A recent version still watches fine.
        recent = private.list(kinds.ConfigMap, "default")["metadata"]["resourceVersion"]
        private.create(cm("fresh", "default"))
        with private.watch(kinds.ConfigMap, "default", resource_version=recent) as w:
            assert next(w).object["metadata"]["name"] == "fresh"


def _configuration(host: str) -> Any:
    from kubernetes.client import Configuration

    cfg = Configuration()
    cfg.host = host
    return cfg


def test_watch_http_errors_raise_on_open(client: Client, namespace: str, faults: Any) -> None:
    faults.fail("configmaps", "watch", 429, times=1, retry_after=2)
    with pytest.raises(TooManyRequests) as err:
        client.watch(kinds.ConfigMap, namespace)
    assert err.value.retry_after == 2.0


# ------------------------------------------------------------------ CRDs and models


def _crd(group: str, kind: str, plural: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


def test_crd_kinds_become_usable_without_a_restart(
    client: Client, namespace: str, wait_for: Any
) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    widget, gadget = f"{group}/v1/Widget", f"{group}/v1/Gadget"
    created: list[str] = []
    try:
        with pytest.raises(NoKindMatchError):
            client.list(widget, namespace)
        created.append(client.create(_crd(group, "Widget", "widgets"))["metadata"]["name"])

        def widgets_served() -> bool:
            try:
                client.list(widget, namespace)
            except NoKindMatchError:
                return False
            return True

        wait_for(widgets_served, message="widgets served")
        w = client.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Widget",
                "metadata": {"name": "w1", "namespace": namespace},
                "spec": {"size": 1},
            }
        )
        assert client.get(widget, "w1", namespace)["metadata"]["uid"] == w["metadata"]["uid"]
        assert "status" in client.mapper.resource_for(widget).subresources

        # Same group/version, a kind added later: the cached discovery answer is refreshed.
        created.append(client.create(_crd(group, "Gadget", "gadgets"))["metadata"]["name"])

        def gadgets_served() -> bool:
            try:
                client.mapper.resource_for(gadget)
            except NoKindMatchError:
                return False
            return True

        wait_for(gadgets_served, message="gadgets discovered")
        client.create(
            {
                "apiVersion": f"{group}/v1",
                "kind": "Gadget",
                "metadata": {"name": "g1", "namespace": namespace},
            }
        )
        listed = client.list(gadget, namespace)
        assert names(listed["items"]) == ["g1"] and listed["items"][0]["kind"] == "Gadget"
    finally:
        for name in created:
            try:
                client.delete(kinds.CustomResourceDefinition, name)
            except NotFound:
                pass


class ConfigMapModel(BaseModel):
    """A hand-written stand-in for a generated model (unknown fields kept)."""

    __kube_resource__: ClassVar[Resource] = Resource("", "v1", "ConfigMap", "configmaps", True)
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    api_version: str = Field("v1", alias="apiVersion")
    kind: str = "ConfigMap"
    metadata: dict[str, Any]
    data: dict[str, str] | None = None


def test_typed_model_round_trip(client: Client, namespace: str) -> None:
    model = ConfigMapModel(metadata={"name": "typed", "namespace": namespace}, data={"k": "v"})
    created = client.create(model)
    assert isinstance(created, ConfigMapModel)
    assert created.metadata["uid"] and created.data == {"k": "v"}
    assert created.api_version == "v1"

    got = client.get(ConfigMapModel, "typed", namespace)
    assert isinstance(got, ConfigMapModel) and got.metadata["uid"] == created.metadata["uid"]
    got.data = {"k": "v2"}
    updated = client.update(got)
    assert isinstance(updated, ConfigMapModel) and updated.data == {"k": "v2"}

    patched = client.patch(ConfigMapModel, "typed", {"data": {"p": "1"}}, namespace=namespace)
    assert isinstance(patched, ConfigMapModel) and patched.data == {"k": "v2", "p": "1"}

    listed = client.list(ConfigMapModel, namespace)
    assert [type(i) for i in listed["items"]] == [ConfigMapModel]
    assert listed["items"][0].kind == "ConfigMap"
    # Unknown fields survive (extra="allow"): immutable is not declared on the model.
    client.patch(kinds.ConfigMap, "typed", {"immutable": False}, namespace=namespace)
    again = client.get(ConfigMapModel, "typed", namespace)
    assert again.model_dump(by_alias=True)["immutable"] is False
    applied = client.apply(
        ConfigMapModel(metadata={"name": "typed-ssa", "namespace": namespace}, data={"a": "b"}),
        field_manager="test",
    )
    assert isinstance(applied, ConfigMapModel) and applied.data == {"a": "b"}


# ----------------------------------------------------------------- configuration


def _two_context_kubeconfig(cluster: EmbeddedCluster, path: Path) -> Path:
    doc = cluster.kubeconfig_dict()
    good = doc["clusters"][0]["cluster"]
    doc["clusters"].append({"name": "dead", "cluster": {**good, "server": "https://127.0.0.1:9"}})
    doc["users"].append({"name": "dead", "user": {"token": "x"}})
    doc["contexts"].append({"name": "dead", "context": {"cluster": "dead", "user": "dead"}})
    doc["current-context"] = "dead"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_kubeconfig_context_selection(embedded_cluster: EmbeddedCluster, tmp_path: Path) -> None:
    path = _two_context_kubeconfig(embedded_cluster, tmp_path / "config")
    with Client.from_kubeconfig(path, context="kube-runtime") as good:
        assert good.get(kinds.Namespace, "default")["metadata"]["name"] == "default"
    with Client.from_kubeconfig(str(path), connect_timeout=2) as dead:  # current-context
        assert dead.host == "127.0.0.1:9"
        with pytest.raises(ApiConnectionError):
            dead.get(kinds.Namespace, "default")


def test_kubeconfig_from_environment(
    embedded_cluster: EmbeddedCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = embedded_cluster.write_kubeconfig(tmp_path / "real")
    # $KUBECONFIG is a list; files that do not exist are skipped, the rest merged.
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{path}")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with Client.from_kubeconfig() as c:
        assert c.get(kinds.Namespace, "default")["metadata"]["name"] == "default"
    with Client.from_env() as c:
        assert c.host == f"127.0.0.1:{embedded_cluster.http.port}"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG")
    (tmp_path / ".kube").mkdir()
    path.rename(tmp_path / ".kube" / "config")
    with Client.from_kubeconfig() as c:
        assert c.get(kinds.Namespace, "default")["metadata"]["name"] == "default"


# ------------------------------------------------------------- metrics, threads, UA


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_metrics_count_requests(client: Client, namespace: str) -> None:
    host = client.host
    ok = _sample("rest_client_requests_total", code="200", method="GET", host=host)
    missing = _sample("rest_client_requests_total", code="404", method="GET", host=host)
    created = _sample("rest_client_requests_total", code="201", method="POST", host=host)
    latency = _sample("rest_client_request_duration_seconds_count", verb="GET", host=host)
    client.create(cm("m", namespace))
    client.get(kinds.ConfigMap, "m", namespace)
    with pytest.raises(NotFound):
        client.get(kinds.ConfigMap, "nope", namespace)
    with client.watch(kinds.ConfigMap, namespace, timeout_seconds=1):
        pass
    assert (
        _sample("rest_client_requests_total", code="201", method="POST", host=host) == created + 1
    )
    assert _sample("rest_client_requests_total", code="404", method="GET", host=host) == missing + 1
    # The get and the watch (counted once, when opened).
    assert _sample("rest_client_requests_total", code="200", method="GET", host=host) == ok + 2
    assert (
        _sample("rest_client_request_duration_seconds_count", verb="GET", host=host) == latency + 3
    )


def test_connection_errors_are_counted() -> None:
    cfg = _configuration("http://127.0.0.1:9")
    before = _sample("rest_client_requests_total", code="<error>", method="GET", host="127.0.0.1:9")
    with Client(cfg, connect_timeout=2) as dead, pytest.raises(ApiConnectionError):
        dead.get(kinds.Namespace, "default")
    assert (
        _sample("rest_client_requests_total", code="<error>", method="GET", host="127.0.0.1:9")
        == before + 1
    )


def test_many_threads_share_one_client(client: Client, namespace: str) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(10):
                name = f"t{i}-{j}"
                client.create(cm(name, namespace))
                obj = client.get(kinds.ConfigMap, name, namespace)
                obj["data"] = {"n": str(j)}
                client.update(obj)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(client.list(kinds.ConfigMap, namespace, limit=7)["items"]) == 80


def test_user_agent_headers_and_non_json_errors() -> None:
    """Against a tiny HTTP server: what the client sends, and a non-Status error body."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from kubernetes.client import Configuration

    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
            if self.path == "/api/v1":  # discovery: the client maps kinds through it
                body = (
                    b'{"kind":"APIResourceList","groupVersion":"v1","resources":'
                    b'[{"name":"configmaps","namespaced":true,"kind":"ConfigMap"}]}'
                )
                self.send_response(200)
            elif self.path.startswith("/api/v1/namespaces/ns/configmaps/broken"):
                body = b"<html>bad gateway</html>"
                self.send_response(502)
            else:
                body = b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"ok"}}'
                self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cfg = Configuration()
        cfg.host = f"http://127.0.0.1:{server.server_address[1]}"
        cfg.username, cfg.password = "user", "pw"
        with Client(cfg) as c:
            assert c.get(kinds.ConfigMap, "ok", "ns")["metadata"]["name"] == "ok"
            with pytest.raises(ServerError) as err:
                c.get(kinds.ConfigMap, "broken", "ns")
        assert err.value.code == 502 and "bad gateway" in err.value.message
        from kube_runtime import __version__

        assert [s["path"] for s in seen[:2]] == ["/api/v1", "/api/v1/namespaces/ns/configmaps/ok"]
        assert seen[1]["user-agent"] == f"kube-runtime/{__version__}"
        assert seen[1]["accept"] == "application/json"
        assert seen[1]["authorization"].startswith("Basic ")
    finally:
        server.shutdown()
        server.server_close()


def test_watch_reads_events_before_the_stream_ends(client: Client, namespace: str) -> None:
    """The first event arrives while the server keeps the stream open (no buffering)."""
    rv = client.list(kinds.ConfigMap, namespace)["metadata"]["resourceVersion"]
    client.create(cm("early", namespace))
    with client.watch(kinds.ConfigMap, namespace, resource_version=rv, timeout_seconds=30) as w:
        ev = next(w)
        assert ev.type == "ADDED"
        # The stream is still open: the server would keep it for 30 s.
        assert not w.closed
