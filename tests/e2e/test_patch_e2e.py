"""PATCH end to end: the official client against the embedded API server over HTTP.

Covers the three patch content types (JSON merge patch, JSON patch, strategic merge patch),
the strategic-merge list semantics Kubernetes clients rely on (containers and env by name,
finalizers as a set, ownerReferences by uid, status conditions by type), patch preconditions,
415 for strategic merge patch on a custom resource and 404 for a missing object.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def _status(exc: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.value.body)
    return body


def _pod(name: str, containers: list[dict[str, Any]] | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": containers or [{"name": "app", "image": "nginx:1.25"}]},
    }


def _statefulset(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "serviceName": name,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:1",
                            "env": [{"name": "A", "value": "1"}],
                        },
                        {"name": "sidecar", "image": "sidecar:1"},
                    ]
                },
            },
        },
    }


def _config_map(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": {"a": "1", "b": "2"},
    }


@pytest.fixture
def core(api_client: Any) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: Any) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


# ----------------------------------------------------------------------------- merge patch


def test_json_merge_patch_merges_maps_deletes_nulls_and_replaces_lists(
    core: client.CoreV1Api, apps: client.AppsV1Api, namespace: str
) -> None:
    core.create_namespaced_config_map(
        namespace, _config_map("cm", labels={"keep": "x", "drop": "y"})
    )
    patched = core.patch_namespaced_config_map(
        "cm",
        namespace,
        {
            "metadata": {"labels": {"drop": None, "new": "z"}},
            "data": {"a": "10", "b": None, "c": "3"},
        },
        _content_type=MERGE,
    )
    assert patched.metadata.labels == {"keep": "x", "new": "z"}
    assert patched.data == {"a": "10", "c": "3"}
    assert core.read_namespaced_config_map("cm", namespace).data == {"a": "10", "c": "3"}

    # A list in a merge patch replaces the whole list (no merge by name, unlike SMP).
    apps.create_namespaced_stateful_set(namespace, _statefulset("web"))
    sts = apps.patch_namespaced_stateful_set(
        "web",
        namespace,
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}},
        _content_type=MERGE,
    )
    containers = sts.spec.template.spec.containers
    assert [(c.name, c.image) for c in containers] == [("app", "app:2")]
    assert containers[0].env is None


# ------------------------------------------------------------------------------ JSON patch


def test_json_patch_operations_apply_in_order(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, _config_map("cm"))
    ops = [
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "add", "path": "/data/c", "value": "3"},
        {"op": "replace", "path": "/data/a", "value": "one"},
        {"op": "remove", "path": "/data/b"},
        {"op": "add", "path": "/metadata/labels", "value": {"x": "y"}},
        {"op": "copy", "from": "/data/c", "path": "/data/d"},
        {"op": "move", "from": "/data/d", "path": "/data/e"},
    ]
    # The generated method picks JSON patch for a list body.
    patched = core.patch_namespaced_config_map("cm", namespace, ops)
    assert patched.data == {"a": "one", "c": "3", "e": "3"}
    assert patched.metadata.labels == {"x": "y"}
    assert int(patched.metadata.resource_version) > int(created.metadata.resource_version)


def test_json_patch_failing_test_op_is_422_and_changes_nothing(
    core: client.CoreV1Api, namespace: str
) -> None:
    created = core.create_namespaced_config_map(namespace, _config_map("cm"))
    ops = [
        {"op": "replace", "path": "/data/b", "value": "changed"},
        {"op": "test", "path": "/data/a", "value": "not-the-value"},
    ]
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_config_map("cm", namespace, ops, _content_type=JSON_PATCH)
    assert exc.value.status == 422
    assert _status(exc)["kind"] == "Status"
    current = core.read_namespaced_config_map("cm", namespace)
    assert current.data == {"a": "1", "b": "2"}
    assert current.metadata.resource_version == created.metadata.resource_version

    # A path that does not exist cannot be replaced or removed either.
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_config_map(
            "cm", namespace, [{"op": "remove", "path": "/data/missing"}], _content_type=JSON_PATCH
        )
    assert exc.value.status == 422


# ----------------------------------------------------------------- strategic merge patch


def test_strategic_merge_patch_pod_container_image_by_name(
    core: client.CoreV1Api, namespace: str
) -> None:
    containers = [{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "sidecar:1"}]
    core.create_namespaced_pod(namespace, _pod("p", containers))
    # The generated method sends a dict body as a strategic merge patch.
    patched = core.patch_namespaced_pod(
        "p", namespace, {"spec": {"containers": [{"name": "sidecar", "image": "sidecar:2"}]}}
    )
    assert [(c.name, c.image) for c in patched.spec.containers] == [
        ("app", "app:1"),
        ("sidecar", "sidecar:2"),
    ]
    stored = core.read_namespaced_pod("p", namespace)
    assert [c.image for c in stored.spec.containers] == ["app:1", "sidecar:2"]


def test_strategic_merge_patch_statefulset_containers_and_env(
    apps: client.AppsV1Api, namespace: str
) -> None:
    created = apps.create_namespaced_stateful_set(namespace, _statefulset("web"))
    assert created.metadata.generation == 1

    patched = apps.patch_namespaced_stateful_set(
        "web",
        namespace,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]}
                        ]
                    }
                }
            }
        },
        _content_type=STRATEGIC,
    )
    by_name = {c.name: c for c in patched.spec.template.spec.containers}
    assert set(by_name) == {"app", "sidecar"}
    assert by_name["app"].image == "app:2"
    assert by_name["sidecar"].image == "sidecar:1"
    # env merges by name: the new variable is added, the existing one kept.
    assert sorted((e.name, e.value) for e in by_name["app"].env) == [("A", "1"), ("B", "2")]
    assert patched.metadata.generation == 2

    # Changing an existing env entry by name.
    patched = apps.patch_namespaced_stateful_set(
        "web",
        namespace,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "app", "env": [{"name": "A", "value": "one"}]}]
                    }
                }
            }
        },
        _content_type=STRATEGIC,
    )
    app = next(c for c in patched.spec.template.spec.containers if c.name == "app")
    assert sorted((e.name, e.value) for e in app.env) == [("A", "one"), ("B", "2")]

    # `$patch: delete` removes one container, the other stays untouched.
    patched = apps.patch_namespaced_stateful_set(
        "web",
        namespace,
        {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}},
        _content_type=STRATEGIC,
    )
    assert [c.name for c in patched.spec.template.spec.containers] == ["app"]
    stored = apps.read_namespaced_stateful_set("web", namespace)
    assert [c.name for c in stored.spec.template.spec.containers] == ["app"]
    assert stored.spec.template.spec.containers[0].image == "app:2"


def test_strategic_merge_patch_finalizers_are_a_set(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, _pod("p", finalizers=["example.com/a", "example.com/b"]))
    patched = core.patch_namespaced_pod(
        "p",
        namespace,
        {"metadata": {"finalizers": ["example.com/b", "example.com/c"]}},
        _content_type=STRATEGIC,
    )
    assert sorted(patched.metadata.finalizers) == [
        "example.com/a",
        "example.com/b",
        "example.com/c",
    ]

    patched = core.patch_namespaced_pod(
        "p",
        namespace,
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "example.com/c"]}},
        _content_type=STRATEGIC,
    )
    assert patched.metadata.finalizers == ["example.com/b"]

    # The same lists under a JSON merge patch replace instead.
    patched = core.patch_namespaced_pod(
        "p", namespace, {"metadata": {"finalizers": ["example.com/z"]}}, _content_type=MERGE
    )
    assert patched.metadata.finalizers == ["example.com/z"]
    core.patch_namespaced_pod(
        "p", namespace, {"metadata": {"finalizers": None}}, _content_type=MERGE
    )
    assert core.read_namespaced_pod("p", namespace).metadata.finalizers is None


def test_strategic_merge_patch_owner_references_merge_by_uid(
    core: client.CoreV1Api, namespace: str
) -> None:
    owners = [
        core.create_namespaced_config_map(namespace, _config_map(f"owner-{i}")) for i in range(2)
    ]
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": o.metadata.name, "uid": o.metadata.uid}
        for o in owners
    ]
    core.create_namespaced_pod(namespace, _pod("p", ownerReferences=[refs[0]]))

    patched = core.patch_namespaced_pod(
        "p", namespace, {"metadata": {"ownerReferences": [refs[1]]}}, _content_type=STRATEGIC
    )
    assert sorted(r.uid for r in patched.metadata.owner_references) == sorted(
        r["uid"] for r in refs
    )

    # An entry with a known uid is merged into the existing one, not appended.
    patched = core.patch_namespaced_pod(
        "p",
        namespace,
        {"metadata": {"ownerReferences": [{"uid": refs[0]["uid"], "controller": True}]}},
        _content_type=STRATEGIC,
    )
    by_uid = {r.uid: r for r in patched.metadata.owner_references}
    assert len(by_uid) == 2 and len(patched.metadata.owner_references) == 2
    assert by_uid[refs[0]["uid"]].controller is True
    assert by_uid[refs[0]["uid"]].name == "owner-0"
    assert not by_uid[refs[1]["uid"]].controller

    # `$patch: delete` drops one reference by uid.
    patched = core.patch_namespaced_pod(
        "p",
        namespace,
        {"metadata": {"ownerReferences": [{"uid": refs[1]["uid"], "$patch": "delete"}]}},
        _content_type=STRATEGIC,
    )
    assert [r.uid for r in patched.metadata.owner_references] == [refs[0]["uid"]]


def test_strategic_merge_patch_pod_status_conditions_by_type(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    core.create_namespaced_pod(namespace, _pod("p"))
    running = wait_for(
        lambda: (
            (pod := core.read_namespaced_pod("p", namespace)).status.phase == "Running"
            and any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])
            and pod
        ),
        message="pod p Running and Ready",
    )
    before = {c.type: c.status for c in running.status.conditions}

    gate = "example.com/Gate"
    patched = core.patch_namespaced_pod_status(
        "p",
        namespace,
        {"status": {"conditions": [{"type": gate, "status": "False", "reason": "Waiting"}]}},
    )
    after = {c.type: c.status for c in patched.status.conditions}
    assert after == {**before, gate: "False"}

    patched = core.patch_namespaced_pod_status(
        "p",
        namespace,
        {"status": {"conditions": [{"type": gate, "status": "True", "reason": "Done"}]}},
        _content_type=STRATEGIC,
    )
    gates = [c for c in patched.status.conditions if c.type == gate]
    assert len(gates) == 1 and gates[0].status == "True" and gates[0].reason == "Done"
    assert {c.type for c in patched.status.conditions} == set(before) | {gate}

    # The status endpoint leaves the spec alone, the main endpoint leaves the status alone.
    patched = core.patch_namespaced_pod_status(
        "p",
        namespace,
        {
            "metadata": {"labels": {"via": "status"}},
            "spec": {"containers": [{"name": "app", "image": "other:9"}]},
        },
    )
    assert patched.spec.containers[0].image == "nginx:1.25"
    # pods/status keeps label changes (only spec, ownerReferences and deletionTimestamp stay)
    assert (patched.metadata.labels or {}).get("via") == "status"
    patched = core.patch_namespaced_pod(
        "p",
        namespace,
        {"status": {"conditions": [{"type": "example.com/Other", "status": "True"}]}},
    )
    assert "example.com/Other" not in {c.type for c in patched.status.conditions}


# ------------------------------------------------------------------------ preconditions


def test_uid_and_resource_version_in_patch_are_preconditions(
    core: client.CoreV1Api, namespace: str
) -> None:
    cm = core.create_namespaced_config_map(namespace, _config_map("cm"))
    uid, rv = cm.metadata.uid, cm.metadata.resource_version

    for content_type in (MERGE, STRATEGIC):
        with pytest.raises(ApiException) as exc:
            core.patch_namespaced_config_map(
                "cm",
                namespace,
                {"metadata": {"uid": str(uuid.uuid4())}, "data": {"a": "x"}},
                _content_type=content_type,
            )
        # a patch carries no uid precondition: the patched object is invalid instead
        assert exc.value.status == 422
        status = _status(exc)
        assert status["reason"] == "Invalid"
        assert status["details"]["causes"][0]["field"] == "metadata.uid"
        assert "field is immutable" in status["message"]

    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_config_map(
            "cm",
            namespace,
            [{"op": "replace", "path": "/metadata/resourceVersion", "value": str(int(rv) + 1000)}],
            _content_type=JSON_PATCH,
        )
    assert exc.value.status == 409

    updated = core.patch_namespaced_config_map(
        "cm",
        namespace,
        {"metadata": {"uid": uid, "resourceVersion": rv}, "data": {"a": "x"}},
        _content_type=MERGE,
    )
    assert updated.data["a"] == "x"
    assert updated.metadata.uid == uid
    assert int(updated.metadata.resource_version) > int(rv)

    # The old resourceVersion is now stale.
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_config_map(
            "cm",
            namespace,
            {"metadata": {"resourceVersion": rv}, "data": {"a": "y"}},
            _content_type=MERGE,
        )
    assert exc.value.status == 409
    assert core.read_namespaced_config_map("cm", namespace).data["a"] == "x"


# ------------------------------------------------------------------- unsupported / missing


def _crd(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "size": {"type": "integer"},
                                        "tags": {"type": "array", "items": {"type": "string"}},
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


def test_strategic_merge_patch_on_custom_resource_is_415(
    api_client: Any, namespace: str, wait_for: Any
) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    ext = client.ApiextensionsV1Api(api_client)
    custom = client.CustomObjectsApi(api_client)
    ext.create_custom_resource_definition(_crd(group))
    try:
        wait_for(
            lambda: custom.create_namespaced_custom_object(
                group,
                "v1",
                namespace,
                "widgets",
                {
                    "apiVersion": f"{group}/v1",
                    "kind": "Widget",
                    "metadata": {"name": "w"},
                    "spec": {"size": 1, "tags": ["a"]},
                },
            ),
            message="custom resource served",
        )
        with pytest.raises(ApiException) as exc:
            custom.patch_namespaced_custom_object(
                group,
                "v1",
                namespace,
                "widgets",
                "w",
                {"spec": {"size": 2}},
                _content_type=STRATEGIC,
            )
        assert exc.value.status == 415
        assert _status(exc)["reason"] == "UnsupportedMediaType"
        assert (
            custom.get_namespaced_custom_object(group, "v1", namespace, "widgets", "w")["spec"][
                "size"
            ]
            == 1
        )

        # Merge patch and JSON patch both work on custom resources.
        merged = custom.patch_namespaced_custom_object(
            group, "v1", namespace, "widgets", "w", {"spec": {"size": 2, "tags": ["b"]}}
        )
        assert merged["spec"] == {"size": 2, "tags": ["b"]}
        patched = custom.patch_namespaced_custom_object(
            group,
            "v1",
            namespace,
            "widgets",
            "w",
            [{"op": "add", "path": "/spec/tags/-", "value": "c"}],
            _content_type=JSON_PATCH,
        )
        assert patched["spec"]["tags"] == ["b", "c"]
    finally:
        ext.delete_custom_resource_definition(f"widgets.{group}")


def test_strategic_merge_patch_on_other_built_in_kinds(
    api_client: Any, core: client.CoreV1Api, namespace: str
) -> None:
    """Every built-in kind takes a strategic merge patch (the client's default for a dict body)."""
    core.create_namespaced_service_account(
        namespace, {"metadata": {"name": "sa", "labels": {"a": "1"}}}
    )
    sa = core.patch_namespaced_service_account(
        "sa", namespace, {"metadata": {"labels": {"b": "2"}}}
    )
    assert sa.metadata.labels == {"a": "1", "b": "2"}

    ext = client.ApiextensionsV1Api(api_client)
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    ext.create_custom_resource_definition(_crd(group))
    try:
        crd = ext.patch_custom_resource_definition(
            f"widgets.{group}", {"metadata": {"labels": {"team": "x"}}}
        )
        assert crd.metadata.labels == {"team": "x"}
        assert crd.spec.group == group
    finally:
        ext.delete_custom_resource_definition(f"widgets.{group}")


def test_patch_of_missing_object_is_404(
    core: client.CoreV1Api, apps: client.AppsV1Api, namespace: str
) -> None:
    attempts = [
        lambda: core.patch_namespaced_config_map(
            "missing", namespace, {"data": {"a": "1"}}, _content_type=MERGE
        ),
        lambda: core.patch_namespaced_pod(
            "missing", namespace, {"metadata": {"labels": {"a": "b"}}}
        ),
        lambda: core.patch_namespaced_pod(
            "missing", namespace, [{"op": "add", "path": "/metadata/labels", "value": {}}]
        ),
        lambda: apps.patch_namespaced_stateful_set("missing", namespace, {"spec": {"replicas": 2}}),
        lambda: core.patch_namespaced_pod_status(
            "missing", namespace, {"status": {"phase": "Failed"}}
        ),
    ]
    for attempt in attempts:
        with pytest.raises(ApiException) as exc:
            attempt()
        assert exc.value.status == 404
        body = _status(exc)
        assert body["reason"] == "NotFound"
        assert body["details"]["name"] == "missing"
