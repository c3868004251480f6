"""CRUD, selectors, pagination, subresources and errors through the official client."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def pod(
    name: str, labels: dict[str, str] | None = None, image: str = "nginx:1.25"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


def sts(name: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
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


@pytest.fixture
def core(api_client: Any) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: Any) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


def test_version_and_discovery(api_client: Any) -> None:
    version = client.VersionApi(api_client).get_code()
    assert version.major == "1"
    groups = {g.name for g in client.ApisApi(api_client).get_api_versions().groups}
    assert {"apps", "coordination.k8s.io", "apiextensions.k8s.io"} <= groups
    core_resources = {r.name for r in client.CoreV1Api(api_client).get_api_resources().resources}
    assert {
        "pods",
        "pods/status",
        "namespaces",
        "persistentvolumeclaims",
        "events",
        "nodes",
    } <= core_resources
    apps_resources = {r.name: r for r in client.AppsV1Api(api_client).get_api_resources().resources}
    assert apps_resources["statefulsets/scale"].kind == "Scale"
    assert apps_resources["statefulsets"].short_names == ["sts"]


def test_create_get_update_and_resource_versions(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "a"}, "data": {"k": "v"}}
    )
    assert created.metadata.uid and created.metadata.creation_timestamp
    got = core.read_namespaced_config_map("a", namespace)
    assert got.metadata.resource_version == created.metadata.resource_version
    got.metadata.labels = {"x": "1"}
    updated = core.replace_namespaced_config_map("a", namespace, got)
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)
    assert updated.metadata.uid == created.metadata.uid
    # A write that changes nothing commits nothing.
    again = core.replace_namespaced_config_map("a", namespace, updated)
    assert again.metadata.resource_version == updated.metadata.resource_version
    pod_obj = core.create_namespaced_pod(namespace, pod("p"))
    assert pod_obj.status.phase == "Pending"


def test_stale_update_is_conflict(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, pod("a"))
    first = core.read_namespaced_pod("a", namespace)
    core.patch_namespaced_pod("a", namespace, {"metadata": {"labels": {"v": "2"}}})
    first.metadata.labels = {"v": "3"}
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_pod("a", namespace, first)
    assert err.value.status == 409
    assert '"reason":"Conflict"' in err.value.body.replace(" ", "")
    assert "the object has been modified" in err.value.body


def test_already_exists_not_found_and_invalid(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, pod("a"))
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(namespace, pod("a"))
    assert err.value.status == 409 and "AlreadyExists" in err.value.body
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("missing", namespace)
    assert err.value.status == 404 and 'pods \\"missing\\" not found' in err.value.body
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(namespace, pod("Bad_Name"))
    assert err.value.status == 422
    assert "metadata.name" in err.value.body and "Invalid" in err.value.body
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(
            namespace,
            {
                "metadata": {"name": "x", "labels": {"bad key!": "v"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        )
    assert err.value.status == 422 and "metadata.labels" in err.value.body
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod(
            namespace, {"metadata": {"name": "x"}, "spec": {"containers": []}}
        )
    assert err.value.status == 422 and "spec.containers" in err.value.body
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("no-such-namespace", pod("a"))
    assert err.value.status == 404 and "namespaces" in err.value.body


def test_generate_name(core: client.CoreV1Api, namespace: str) -> None:
    a = core.create_namespaced_pod(
        namespace, {"metadata": {"generateName": "gen-"}, "spec": pod("x")["spec"]}
    )
    b = core.create_namespaced_pod(
        namespace, {"metadata": {"generateName": "gen-"}, "spec": pod("x")["spec"]}
    )
    assert a.metadata.name.startswith("gen-") and len(a.metadata.name) == len("gen-") + 5
    assert a.metadata.name != b.metadata.name


def test_generation_bumps_on_spec_changes_only(apps: client.AppsV1Api, namespace: str) -> None:
    created = apps.create_namespaced_stateful_set(namespace, sts("web"))
    assert created.metadata.generation == 1
    apps.patch_namespaced_stateful_set("web", namespace, {"metadata": {"labels": {"a": "b"}}})
    assert apps.read_namespaced_stateful_set("web", namespace).metadata.generation == 1
    apps.patch_namespaced_stateful_set("web", namespace, {"spec": {"replicas": 3}})
    assert apps.read_namespaced_stateful_set("web", namespace).metadata.generation == 2


def test_status_subresource(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, sts("web"))
    # The main resource ignores status changes...
    apps.patch_namespaced_stateful_set("web", namespace, {"status": {"replicas": 7}})
    assert (apps.read_namespaced_stateful_set("web", namespace).status.replicas or 0) == 0
    # ...and the status subresource changes only status.
    apps.patch_namespaced_stateful_set_status(
        "web", namespace, {"spec": {"replicas": 9}, "status": {"replicas": 7, "readyReplicas": 1}}
    )
    got = apps.read_namespaced_stateful_set("web", namespace)
    assert got.status.replicas == 7 and got.status.ready_replicas == 1
    assert got.spec.replicas == 1
    assert got.metadata.generation == 1


def test_scale_subresource(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_stateful_set(namespace, sts("web", replicas=2))
    scale = apps.read_namespaced_stateful_set_scale("web", namespace)
    assert scale.spec.replicas == 2 and scale.status.selector == "app=web"
    apps.patch_namespaced_stateful_set_scale("web", namespace, {"spec": {"replicas": 5}})
    assert apps.read_namespaced_stateful_set("web", namespace).spec.replicas == 5
    scale = apps.read_namespaced_stateful_set_scale("web", namespace)
    scale.spec.replicas = 1
    apps.replace_namespaced_stateful_set_scale("web", namespace, scale)
    assert apps.read_namespaced_stateful_set("web", namespace).spec.replicas == 1
    scale.spec.replicas = 4  # stale resourceVersion now
    with pytest.raises(ApiException) as err:
        apps.replace_namespaced_stateful_set_scale("web", namespace, scale)
    assert err.value.status == 409


def test_label_and_field_selectors(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, pod("a", {"app": "web", "tier": "front"}))
    core.create_namespaced_pod(namespace, pod("b", {"app": "web", "tier": "back"}))
    core.create_namespaced_pod(namespace, pod("c", {"app": "db"}))

    def names(**kw: Any) -> list[str]:
        return sorted(p.metadata.name for p in core.list_namespaced_pod(namespace, **kw).items)

    assert names(label_selector="app=web") == ["a", "b"]
    assert names(label_selector="app!=web") == ["c"]
    assert names(label_selector="tier in (front,middle)") == ["a"]
    assert names(label_selector="tier notin (front)") == ["b", "c"]
    assert names(label_selector="tier") == ["a", "b"]
    assert names(label_selector="!tier") == ["c"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.name!=b,status.phase!=Failed") == ["a", "c"]
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod(namespace, field_selector="spec.unknownField=x")
    assert err.value.status == 400
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod(namespace, label_selector="app in (")
    assert err.value.status == 400


def test_pagination_with_limit_and_continue(core: client.CoreV1Api, namespace: str) -> None:
    for i in range(7):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": f"cm-{i}"}})
    first = core.list_namespaced_config_map(namespace, limit=3)
    assert len(first.items) == 3 and first.metadata._continue
    assert first.metadata.remaining_item_count == 4
    seen = [c.metadata.name for c in first.items]
    token = first.metadata._continue
    while token:
        page = core.list_namespaced_config_map(namespace, limit=3, _continue=token)
        seen += [c.metadata.name for c in page.items]
        assert page.metadata.resource_version == first.metadata.resource_version
        token = page.metadata._continue
    assert seen == [f"cm-{i}" for i in range(7)]
    # with a selector the server cannot count what remains exactly, so it gives no count
    selected = core.list_namespaced_config_map(
        namespace, limit=3, field_selector="metadata.name!=cm-0"
    )
    assert selected.metadata._continue and selected.metadata.remaining_item_count is None


def test_list_across_namespaces(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "x", "labels": {"mark": namespace}}}
    )
    found = core.list_config_map_for_all_namespaces(label_selector=f"mark={namespace}").items
    assert [(c.metadata.namespace, c.metadata.name) for c in found] == [(namespace, "x")]


def test_dry_run_stores_nothing(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "dry"}}, dry_run="All")
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("dry", namespace)
    assert err.value.status == 404


def test_builtin_resources_are_served(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_service(
        namespace, {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    )
    assert core.read_namespaced_service("s", namespace).spec.cluster_ip
    core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}, "stringData": {"a": "b"}})
    core.create_namespaced_persistent_volume_claim(
        namespace,
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    client.CoordinationV1Api(api_client).create_namespaced_lease(
        namespace,
        {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}},
    )
    assert (
        client.CoordinationV1Api(api_client)
        .read_namespaced_lease("l", namespace)
        .spec.holder_identity
        == "me"
    )
    client.AppsV1Api(api_client).create_namespaced_controller_revision(
        namespace, {"metadata": {"name": "r1"}, "revision": 1, "data": {"spec": {}}}
    )
    client.AppsV1Api(api_client).create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
    )
    core.create_namespaced_event(
        namespace,
        {
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
            "reason": "R",
            "message": "m",
            "type": "Normal",
        },
    )
    # The Deployment's controller records events of its own (ScalingReplicaSet, ...).
    events = core.list_namespaced_event(namespace).items
    assert [e.reason for e in events if e.involved_object.name == "p"] == ["R"]
    assert any(n.metadata.name for n in core.list_node().items)
