"""CustomResourceDefinitions end to end: the official client against the embedded API server.

Creating a CRD starts serving its kind (discovery, CRUD, list selectors, watch), its status
gets ``Established``; status and scale subresources, several served versions, structural
schema validation, pruning and defaulting; deleting the CRD stops serving and removes its
objects. Every test uses its own API group, since CRDs are cluster-scoped.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

V1 = "v1"

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "size": {"type": "integer", "minimum": 0},
        "replicas": {"type": "integer"},
        "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
        "color": {"type": "string"},
        "limits": {
            "type": "object",
            "default": {},
            "properties": {
                "cpu": {"type": "string", "default": "100m"},
                "memory": {"type": "string"},
            },
        },
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}

STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"},
        "selector": {"type": "string"},
        "phase": {"type": "string"},
    },
}


def _group() -> str:
    return f"t{uuid.uuid4().hex[:8]}.example.com"


def _version(
    name: str, *, storage: bool, served: bool = True, subresources: dict[str, Any] | None = None
) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "required": ["spec"],
                "properties": {"spec": SPEC_SCHEMA, "status": STATUS_SCHEMA},
            }
        },
    }
    if subresources is not None:
        version["subresources"] = subresources
    return version


def _crd(
    group: str,
    *,
    scope: str = "Namespaced",
    kind: str = "Widget",
    plural: str = "widgets",
    versions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
                "shortNames": [f"{plural[:2]}x"],
            },
            "versions": versions or [_version(V1, storage=True)],
        },
    }


def _widget(
    group: str, name: str, spec: dict[str, Any] | None = None, version: str = V1, **meta: Any
) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "Widget",
        "metadata": {"name": name, **meta},
        "spec": spec if spec is not None else {"size": 1},
    }


def _status(exc: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.value.body)
    return body


def _get_raw(api_client: Any, path: str) -> tuple[int, str, bytes]:
    """A raw GET through the client's own transport and authentication: (status, content
    type, body)."""
    params = api_client.param_serialize("GET", path, auth_settings=["BearerToken"])
    response = api_client.call_api(*params)
    response.read()
    return response.status, str(response.getheader("content-type") or ""), response.data


def _get_json(api_client: Any, path: str) -> tuple[int, Any]:
    """A raw GET whose answer is JSON: (status, parsed body)."""
    status, _, body = _get_raw(api_client, path)
    return status, json.loads(body)


def _page_not_found(api_client: Any, path: str) -> bool:
    """Whether ``path`` gets kube-apiserver's answer for what no handler serves (e.g. a
    group no CRD serves any more): 404 with a text/plain ``404 page not found``."""
    status, content_type, body = _get_raw(api_client, path)
    return (
        status == 404
        and content_type.startswith("text/plain")
        and body.strip() == b"404 page not found"
    )


class Crds:
    """Creates CRDs for one test and deletes them afterwards."""

    def __init__(self, api_client: Any, wait_for: Any) -> None:
        self.ext = client.ApiextensionsV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.wait_for = wait_for
        self.names: list[str] = []

    def create(self, body: dict[str, Any]) -> Any:
        crd = self.ext.create_custom_resource_definition(body)
        name = body["metadata"]["name"]
        self.names.append(name)
        group = body["spec"]["group"]
        plural = body["spec"]["names"]["plural"]
        for version in body["spec"]["versions"]:
            if version.get("served", True):
                self.wait_for(
                    lambda v=version["name"]: any(
                        r.name == plural for r in self.custom.get_api_resources(group, v).resources
                    ),
                    message=f"{plural}.{group}/{version['name']} served",
                )
        return crd

    def cleanup(self) -> None:
        for name in self.names:
            try:
                self.ext.delete_custom_resource_definition(name)
            except ApiException as e:
                if e.status != 404:
                    raise


@pytest.fixture
def crds(api_client: Any, wait_for: Any) -> Any:
    helper = Crds(api_client, wait_for)
    yield helper
    helper.cleanup()


@pytest.fixture
def custom(api_client: Any) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


# ----------------------------------------------------------------------------- serving


def test_namespaced_crd_is_established_discoverable_and_served(
    crds: Crds, custom: client.CustomObjectsApi, api_client: Any, namespace: str, wait_for: Any
) -> None:
    group = _group()
    name = f"widgets.{group}"
    with pytest.raises(ApiException) as exc:
        custom.list_namespaced_custom_object(group, V1, namespace, "widgets")
    assert exc.value.status == 404

    crds.create(_crd(group))

    crd = wait_for(
        lambda: (
            (c := crds.ext.read_custom_resource_definition(name)).status
            and any(
                x.type == "Established" and x.status == "True" for x in c.status.conditions or []
            )
            and c
        ),
        message="CRD Established",
    )
    conditions = {c.type: c.status for c in crd.status.conditions}
    assert conditions["NamesAccepted"] == "True"
    assert crd.status.accepted_names.kind == "Widget"
    assert crd.status.stored_versions == [V1]

    # Discovery: the group in /apis, the group document, the resource list.
    groups = client.ApisApi(api_client).get_api_versions()
    assert any(g.name == group for g in groups.groups)
    status, doc = _get_json(api_client, f"/apis/{group}")
    assert status == 200
    assert doc["preferredVersion"]["groupVersion"] == f"{group}/{V1}"
    resources = custom.get_api_resources(group, V1)
    assert resources.group_version == f"{group}/{V1}"
    main = next(r for r in resources.resources if r.name == "widgets")
    assert main.kind == "Widget" and main.namespaced is True
    assert main.singular_name == "widget"
    assert main.short_names == ["wix"]
    assert {"create", "get", "list", "watch", "patch", "update", "delete"} <= set(main.verbs)

    # CRUD.
    created = custom.create_namespaced_custom_object(
        group, V1, namespace, "widgets", _widget(group, "w1")
    )
    assert created["metadata"]["uid"]
    assert created["metadata"]["generation"] == 1
    assert created["kind"] == "Widget" and created["apiVersion"] == f"{group}/{V1}"
    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(
            group, V1, namespace, "widgets", _widget(group, "w1")
        )
    assert exc.value.status == 409 and _status(exc)["reason"] == "AlreadyExists"

    got = custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w1")
    assert got["spec"]["size"] == 1
    got["spec"]["size"] = 2
    replaced = custom.replace_namespaced_custom_object(group, V1, namespace, "widgets", "w1", got)
    assert replaced["spec"]["size"] == 2
    assert replaced["metadata"]["generation"] == 2
    # A stale resourceVersion on update is a conflict.
    with pytest.raises(ApiException) as exc:
        custom.replace_namespaced_custom_object(group, V1, namespace, "widgets", "w1", got)
    assert exc.value.status == 409

    patched = custom.patch_namespaced_custom_object(
        group, V1, namespace, "widgets", "w1", {"spec": {"color": "red"}}
    )
    assert patched["spec"]["color"] == "red" and patched["spec"]["size"] == 2

    listed = custom.list_namespaced_custom_object(group, V1, namespace, "widgets")
    assert listed["kind"] == "WidgetList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["w1"]
    assert (
        custom.list_cluster_custom_object(group, V1, "widgets")["items"][0]["metadata"]["namespace"]
        == namespace
    )

    custom.delete_namespaced_custom_object(group, V1, namespace, "widgets", "w1")
    with pytest.raises(ApiException) as exc:
        custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w1")
    assert exc.value.status == 404


def test_cluster_scoped_crd(crds: Crds, custom: client.CustomObjectsApi, namespace: str) -> None:
    group = _group()
    crds.create(_crd(group, scope="Cluster", kind="Gadget", plural="gadgets"))
    resource = next(r for r in custom.get_api_resources(group, V1).resources if r.name == "gadgets")
    assert resource.namespaced is False

    body = {
        "apiVersion": f"{group}/{V1}",
        "kind": "Gadget",
        "metadata": {"name": "g1"},
        "spec": {"size": 3},
    }
    created = custom.create_cluster_custom_object(group, V1, "gadgets", body)
    assert "namespace" not in created["metadata"]
    assert custom.get_cluster_custom_object(group, V1, "gadgets", "g1")["spec"]["size"] == 3
    patched = custom.patch_cluster_custom_object(group, V1, "gadgets", "g1", {"spec": {"size": 4}})
    assert patched["spec"]["size"] == 4
    assert [
        i["metadata"]["name"]
        for i in custom.list_cluster_custom_object(group, V1, "gadgets")["items"]
    ] == ["g1"]

    # A cluster-scoped kind has no namespaced URL.
    with pytest.raises(ApiException) as exc:
        custom.list_namespaced_custom_object(group, V1, namespace, "gadgets")
    assert exc.value.status == 404

    custom.delete_cluster_custom_object(group, V1, "gadgets", "g1")
    with pytest.raises(ApiException) as exc:
        custom.get_cluster_custom_object(group, V1, "gadgets", "g1")
    assert exc.value.status == 404


# ------------------------------------------------------------------------ subresources


def test_status_subresource(
    crds: Crds, custom: client.CustomObjectsApi, api_client: Any, namespace: str
) -> None:
    group = _group()
    crds.create(_crd(group, versions=[_version(V1, storage=True, subresources={"status": {}})]))
    names = {r.name for r in custom.get_api_resources(group, V1).resources}
    assert {"widgets", "widgets/status"} <= names

    body = _widget(group, "w", {"size": 1})
    body["status"] = {"phase": "Sent"}
    created = custom.create_namespaced_custom_object(group, V1, namespace, "widgets", body)
    assert "status" not in created  # status is server-owned on create

    # The status endpoint changes only the status, and does not bump the generation.
    after_status = custom.patch_namespaced_custom_object_status(
        group,
        V1,
        namespace,
        "widgets",
        "w",
        {"spec": {"size": 9}, "status": {"phase": "Ready", "replicas": 1}},
    )
    assert after_status["status"] == {"phase": "Ready", "replicas": 1}
    assert after_status["spec"]["size"] == 1
    assert after_status["metadata"]["generation"] == 1

    # The main endpoint ignores status changes (update and patch).
    current = custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")
    current["spec"]["size"] = 2
    current["status"] = {"phase": "Hacked"}
    replaced = custom.replace_namespaced_custom_object(
        group, V1, namespace, "widgets", "w", current
    )
    assert replaced["spec"]["size"] == 2
    assert replaced["status"] == {"phase": "Ready", "replicas": 1}
    assert replaced["metadata"]["generation"] == 2
    patched = custom.patch_namespaced_custom_object(
        group, V1, namespace, "widgets", "w", {"status": {"phase": "Hacked"}}
    )
    assert patched["status"]["phase"] == "Ready"
    assert patched["metadata"]["resourceVersion"] == replaced["metadata"]["resourceVersion"]

    # PUT on /status replaces the status.
    current = custom.get_namespaced_custom_object_status(group, V1, namespace, "widgets", "w")
    current["status"] = {"phase": "Done"}
    current["spec"]["size"] = 100
    put = custom.replace_namespaced_custom_object_status(
        group, V1, namespace, "widgets", "w", current
    )
    assert put["status"] == {"phase": "Done"}
    assert put["spec"]["size"] == 2


def test_scale_subresource(crds: Crds, custom: client.CustomObjectsApi, namespace: str) -> None:
    group = _group()
    subresources = {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    crds.create(_crd(group, versions=[_version(V1, storage=True, subresources=subresources)]))
    resources = {r.name: r for r in custom.get_api_resources(group, V1).resources}
    assert resources["widgets/scale"].group == "autoscaling"
    assert resources["widgets/scale"].kind == "Scale"

    custom.create_namespaced_custom_object(
        group, V1, namespace, "widgets", _widget(group, "w", {"size": 1, "replicas": 2})
    )
    custom.patch_namespaced_custom_object_status(
        group, V1, namespace, "widgets", "w", {"status": {"replicas": 2, "selector": "app=w"}}
    )

    scale = custom.get_namespaced_custom_object_scale(group, V1, namespace, "widgets", "w")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["metadata"]["name"] == "w"
    assert scale["spec"]["replicas"] == 2
    assert scale["status"] == {"replicas": 2, "selector": "app=w"}

    scaled = custom.patch_namespaced_custom_object_scale(
        group, V1, namespace, "widgets", "w", {"spec": {"replicas": 5}}
    )
    assert scaled["spec"]["replicas"] == 5
    obj = custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")
    assert obj["spec"]["replicas"] == 5
    assert obj["spec"]["size"] == 1
    assert obj["metadata"]["generation"] == 2

    with pytest.raises(ApiException) as exc:
        custom.patch_namespaced_custom_object_scale(
            group, V1, namespace, "widgets", "w", {"spec": {"replicas": -1}}
        )
    assert exc.value.status == 422
    assert (
        custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")["spec"][
            "replicas"
        ]
        == 5
    )

    # Update of the scale with a stale resourceVersion is a conflict.
    scale["spec"]["replicas"] = 7
    with pytest.raises(ApiException) as exc:
        custom.replace_namespaced_custom_object_scale(group, V1, namespace, "widgets", "w", scale)
    assert exc.value.status == 409
    fresh = custom.get_namespaced_custom_object_scale(group, V1, namespace, "widgets", "w")
    fresh["spec"]["replicas"] = 7
    assert (
        custom.replace_namespaced_custom_object_scale(group, V1, namespace, "widgets", "w", fresh)[
            "spec"
        ]["replicas"]
        == 7
    )


def test_two_served_versions_read_the_same_objects(
    crds: Crds, custom: client.CustomObjectsApi, api_client: Any, namespace: str
) -> None:
    group = _group()
    crds.create(
        _crd(
            group,
            versions=[
                _version("v1beta1", storage=False),
                _version(V1, storage=True),
                _version("v1alpha1", storage=False, served=False),
            ],
        )
    )
    status, doc = _get_json(api_client, f"/apis/{group}")
    assert status == 200
    assert [v["version"] for v in doc["versions"]] == [V1, "v1beta1"]
    assert doc["preferredVersion"]["version"] == V1

    created = custom.create_namespaced_custom_object(
        group, "v1beta1", namespace, "widgets", _widget(group, "w", {"size": 4}, version="v1beta1")
    )
    assert created["apiVersion"] == f"{group}/v1beta1"
    as_v1 = custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")
    as_beta = custom.get_namespaced_custom_object(group, "v1beta1", namespace, "widgets", "w")
    assert as_v1["apiVersion"] == f"{group}/{V1}"
    assert as_beta["apiVersion"] == f"{group}/v1beta1"
    assert (
        as_v1["spec"] == as_beta["spec"] == {"size": 4, "mode": "fast", "limits": {"cpu": "100m"}}
    )
    assert as_v1["metadata"]["uid"] == as_beta["metadata"]["uid"]

    patched = custom.patch_namespaced_custom_object(
        group, V1, namespace, "widgets", "w", {"spec": {"size": 5}}
    )
    listed = custom.list_namespaced_custom_object(group, "v1beta1", namespace, "widgets")
    assert listed["apiVersion"] == f"{group}/v1beta1"
    assert [(i["apiVersion"], i["spec"]["size"]) for i in listed["items"]] == [
        (f"{group}/v1beta1", 5)
    ]
    assert (
        listed["items"][0]["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    )

    # A version that is not served is not there.
    with pytest.raises(ApiException) as exc:
        custom.get_namespaced_custom_object(group, "v1alpha1", namespace, "widgets", "w")
    assert exc.value.status == 404


# ------------------------------------------------------------------------------ schema


def test_schema_validation_rejects_with_causes(
    crds: Crds, custom: client.CustomObjectsApi, namespace: str
) -> None:
    group = _group()
    crds.create(_crd(group))

    bad = _widget(group, "bad", {"size": "big", "mode": "medium"})
    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(group, V1, namespace, "widgets", bad)
    assert exc.value.status == 422
    status = _status(exc)
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "Widget"
    assert status["details"]["group"] == group
    assert status["details"]["name"] == "bad"
    causes = {c["field"]: c for c in status["details"]["causes"]}
    assert set(causes) == {"spec.size", "spec.mode"}
    assert "must be of type integer" in causes["spec.size"]["message"]
    assert causes["spec.mode"]["reason"] == "FieldValueNotSupported"
    assert "spec.size" in status["message"] and "spec.mode" in status["message"]

    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(
            group, V1, namespace, "widgets", _widget(group, "neg", {"size": -1})
        )
    assert exc.value.status == 422
    assert [c["field"] for c in _status(exc)["details"]["causes"]] == ["spec.size"]

    # `spec` is required by the schema.
    no_spec = {"apiVersion": f"{group}/{V1}", "kind": "Widget", "metadata": {"name": "nospec"}}
    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(group, V1, namespace, "widgets", no_spec)
    assert exc.value.status == 422
    assert _status(exc)["details"]["causes"][0]["reason"] == "FieldValueRequired"

    # Updates are validated too and leave the object untouched.
    custom.create_namespaced_custom_object(
        group, V1, namespace, "widgets", _widget(group, "ok", {"size": 1})
    )
    with pytest.raises(ApiException) as exc:
        custom.patch_namespaced_custom_object(
            group, V1, namespace, "widgets", "ok", {"spec": {"size": "x"}}
        )
    assert exc.value.status == 422
    assert (
        custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "ok")["spec"]["size"]
        == 1
    )
    for name in ("bad", "neg", "nospec"):
        with pytest.raises(ApiException) as exc:
            custom.get_namespaced_custom_object(group, V1, namespace, "widgets", name)
        assert exc.value.status == 404


def test_unknown_fields_are_pruned_and_defaults_applied(
    crds: Crds, custom: client.CustomObjectsApi, namespace: str
) -> None:
    group = _group()
    crds.create(_crd(group))
    body = _widget(
        group, "w", {"size": 1, "unknown": "dropped", "extra": {"anything": {"goes": 1}}}
    )
    body["topLevel"] = "dropped"
    created = custom.create_namespaced_custom_object(group, V1, namespace, "widgets", body)
    assert "topLevel" not in created
    assert created["spec"] == {
        "size": 1,
        "mode": "fast",
        "limits": {"cpu": "100m"},
        "extra": {"anything": {"goes": 1}},
    }
    stored = custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")
    assert stored["spec"] == created["spec"]
    assert "topLevel" not in stored

    # Explicit values win over defaults; removed defaulted fields come back on update.
    patched = custom.patch_namespaced_custom_object(
        group,
        V1,
        namespace,
        "widgets",
        "w",
        {"spec": {"mode": "slow", "limits": {"cpu": None, "memory": "1Gi"}, "bogus": 1}},
    )
    assert patched["spec"]["mode"] == "slow"
    assert patched["spec"]["limits"] == {"cpu": "100m", "memory": "1Gi"}
    assert "bogus" not in patched["spec"]


# ------------------------------------------------------------------------ list / watch


def test_list_custom_objects_with_label_selector(
    crds: Crds, custom: client.CustomObjectsApi, namespace: str
) -> None:
    group = _group()
    crds.create(_crd(group))
    for name, tier in (("a", "web"), ("b", "web"), ("c", "db"), ("d", None)):
        labels = {"tier": tier} if tier else {}
        custom.create_namespaced_custom_object(
            group, V1, namespace, "widgets", _widget(group, name, labels=labels)
        )

    def names(selector: str) -> list[str]:
        result = custom.list_namespaced_custom_object(
            group, V1, namespace, "widgets", label_selector=selector
        )
        return [i["metadata"]["name"] for i in result["items"]]

    assert names("tier=web") == ["a", "b"]
    assert names("tier!=web") == ["c", "d"]
    assert names("tier in (db, cache)") == ["c"]
    assert names("tier") == ["a", "b", "c"]
    assert names("!tier") == ["d"]
    assert names("tier=none") == []

    with pytest.raises(ApiException) as exc:
        names("tier in web")
    assert exc.value.status == 400


def test_watch_custom_objects(crds: Crds, custom: client.CustomObjectsApi, namespace: str) -> None:
    group = _group()
    crds.create(_crd(group))
    # kube-apiserver fills a new resource's watch cache after its first request; a list at
    # resourceVersion 0 is served from that cache once it is ready, so the start below is not
    # older than the cache (else the watch is a 410 under load).
    custom.list_namespaced_custom_object(group, V1, namespace, "widgets", resource_version="0")
    start_rv = custom.list_namespaced_custom_object(group, V1, namespace, "widgets")["metadata"][
        "resourceVersion"
    ]
    custom.create_namespaced_custom_object(group, V1, namespace, "widgets", _widget(group, "w1"))
    custom.patch_namespaced_custom_object(
        group, V1, namespace, "widgets", "w1", {"spec": {"size": 2}}
    )
    custom.delete_namespaced_custom_object(group, V1, namespace, "widgets", "w1")

    seen: list[tuple[str, str, Any]] = []
    w = watch.Watch()
    for event in w.stream(
        custom.list_namespaced_custom_object,
        group,
        V1,
        namespace,
        "widgets",
        resource_version=start_rv,
        timeout_seconds=5,
    ):
        obj = event["object"]
        seen.append((event["type"], obj["metadata"]["name"], obj["spec"].get("size")))
        if event["type"] == "DELETED":
            # The replay is done; this one arrives live on the open stream.
            custom.create_namespaced_custom_object(
                group, V1, namespace, "widgets", _widget(group, "w2", {"size": 7})
            )
        if obj["metadata"]["name"] == "w2":
            assert obj["apiVersion"] == f"{group}/{V1}"
            w.stop()
    assert seen == [
        ("ADDED", "w1", 1),
        ("MODIFIED", "w1", 2),
        ("DELETED", "w1", 2),
        ("ADDED", "w2", 7),
    ]


# ------------------------------------------------------------------------- deletion


def test_deleting_the_crd_stops_serving_and_deletes_objects(
    crds: Crds, custom: client.CustomObjectsApi, api_client: Any, namespace: str, wait_for: Any
) -> None:
    group = _group()
    name = f"widgets.{group}"
    body = _crd(group)
    crds.create(body)
    for i in range(3):
        custom.create_namespaced_custom_object(
            group, V1, namespace, "widgets", _widget(group, f"w{i}")
        )

    # A failed precondition deletes nothing: the CRD and its objects stay served.
    with pytest.raises(ApiException) as exc:
        crds.ext.delete_custom_resource_definition(
            name,
            body=client.V1DeleteOptions(
                preconditions=client.V1Preconditions(uid=str(uuid.uuid4()))
            ),
        )
    assert exc.value.status == 409
    assert len(custom.list_namespaced_custom_object(group, V1, namespace, "widgets")["items"]) == 3

    crds.ext.delete_custom_resource_definition(name)

    def gone() -> bool:
        try:
            crds.ext.read_custom_resource_definition(name)
        except ApiException as e:
            return e.status == 404
        return False

    # The CRD's cleanup finalizer deletes its objects first (kube-apiserver polls for that
    # every 5 s), then the CRD goes.
    wait_for(gone, timeout=30, message="CRD deleted")

    def not_found(call: Any) -> bool:
        try:
            call()
        except ApiException as e:
            return e.status == 404
        return False

    # kube-apiserver drops the kind's handlers a moment after the CRD is gone: wait for it.
    for call in (
        lambda: custom.list_namespaced_custom_object(group, V1, namespace, "widgets"),
        lambda: custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w0"),
        lambda: custom.create_namespaced_custom_object(
            group, V1, namespace, "widgets", _widget(group, "late")
        ),
        lambda: custom.get_api_resources(group, V1),
    ):
        wait_for(lambda call=call: not_found(call), timeout=10, message="404 once the CRD is gone")
    for path in (
        f"/apis/{group}",
        f"/apis/{group}/{V1}",
        f"/apis/{group}/{V1}/namespaces/{namespace}/widgets",
    ):
        # The aggregated discovery handlers are dropped asynchronously too.
        wait_for(
            lambda path=path: _page_not_found(api_client, path),
            timeout=10,
            message=f"{path}: 404 page not found once the CRD is gone",
        )
    wait_for(
        lambda: (
            not any(g.name == group for g in client.ApisApi(api_client).get_api_versions().groups)
        ),
        timeout=10,
        message="group dropped from /apis",
    )

    # Serving the kind again does not bring the old objects back.
    crds.create(body)
    assert custom.list_namespaced_custom_object(group, V1, namespace, "widgets")["items"] == []


def test_deleting_crds_by_collection_stops_serving(
    crds: Crds, custom: client.CustomObjectsApi, namespace: str, wait_for: Any
) -> None:
    group = _group()
    label = f"suite-{uuid.uuid4().hex[:8]}"
    for kind, plural in (("Widget", "widgets"), ("Gadget", "gadgets")):
        body = _crd(group, kind=kind, plural=plural)
        body["metadata"]["labels"] = {"suite": label}
        crds.create(body)
        custom.create_namespaced_custom_object(
            group, V1, namespace, plural, {**_widget(group, "x"), "kind": kind}
        )

    crds.ext.delete_collection_custom_resource_definition(label_selector=f"suite={label}")
    assert crds.ext.list_custom_resource_definition(label_selector=f"suite={label}").items == []
    # kube-apiserver stops serving a deleted CRD's resource once its CRD informer sees the
    # deletion (shortly after, under load); the embedded server at once.
    for plural in ("widgets", "gadgets"):

        def not_served(plural: str = plural) -> bool:
            try:
                custom.list_namespaced_custom_object(group, V1, namespace, plural)
            except ApiException as e:
                assert e.status == 404, e
                return True
            return False

        wait_for(not_served, 30, message=f"{plural} no longer served")


def test_updating_the_crd_changes_what_is_served(
    crds: Crds, custom: client.CustomObjectsApi, namespace: str, wait_for: Any
) -> None:
    group = _group()
    name = f"widgets.{group}"
    crds.create(_crd(group))
    custom.create_namespaced_custom_object(
        group, V1, namespace, "widgets", _widget(group, "w", {"size": 2})
    )

    # A new served version is served (at once on the embedded server; kube-apiserver picks
    # CRD changes up from its informer shortly after), over the same objects.
    crds.ext.patch_custom_resource_definition(
        name, [{"op": "add", "path": "/spec/versions/-", "value": _version("v2", storage=False)}]
    )
    as_v2 = wait_for(
        lambda: custom.get_namespaced_custom_object(group, "v2", namespace, "widgets", "w"),
        message="v2 served",
    )
    assert as_v2["apiVersion"] == f"{group}/v2" and as_v2["spec"]["size"] == 2

    # Unserving it stops serving that version only.
    crds.ext.patch_custom_resource_definition(
        name, [{"op": "replace", "path": "/spec/versions/1/served", "value": False}]
    )

    def v2_unserved() -> bool:
        try:
            custom.get_namespaced_custom_object(group, "v2", namespace, "widgets", "w")
        except ApiException as e:
            return e.status == 404
        return False

    wait_for(v2_unserved, message="v2 no longer served")
    assert (
        custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")["spec"]["size"]
        == 2
    )


def test_crd_held_by_a_finalizer_stops_serving_and_goes_when_released(
    crds: Crds, custom: client.CustomObjectsApi, namespace: str, wait_for: Any
) -> None:
    """As apiextensions-apiserver: a deleted CRD gets the cleanup finalizer and
    ``Terminating=True``; its kind stays served for reads, writes and deletes but refuses
    creates (405) until its objects are gone; another finalizer then holds the CRD, and the
    kind stops being served only when the CRD goes."""
    group = _group()
    name = f"widgets.{group}"
    body = _crd(group)
    body["metadata"]["finalizers"] = ["example.com/hold"]
    crds.create(body)
    kept = _widget(group, "kept")
    kept["metadata"]["finalizers"] = ["example.com/keep"]
    custom.create_namespaced_custom_object(group, V1, namespace, "widgets", kept)
    custom.create_namespaced_custom_object(group, V1, namespace, "widgets", _widget(group, "w"))

    answer = crds.ext.delete_custom_resource_definition(name)
    # The answer is the CRD itself, marked (the client types it as a Status: a plain dict).
    assert isinstance(answer, dict) and answer["kind"] == "CustomResourceDefinition"
    assert answer["metadata"]["deletionTimestamp"]
    held = crds.ext.read_custom_resource_definition(name)
    assert held.metadata.deletion_timestamp is not None
    assert "customresourcecleanup.apiextensions.k8s.io" in held.metadata.finalizers
    assert any(c.type == "Terminating" and c.status == "True" for c in held.status.conditions)

    def w_gone() -> bool:
        try:
            custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "w")
        except ApiException as e:
            return e.status == 404
        return False

    wait_for(w_gone, timeout=30, message="the cleanup deleted w")
    # Still served while terminating: get, list, patch; "kept" waits on its own finalizer.
    got = custom.get_namespaced_custom_object(group, V1, namespace, "widgets", "kept")
    assert got["metadata"]["deletionTimestamp"]
    listed = custom.list_namespaced_custom_object(group, V1, namespace, "widgets")["items"]
    assert [i["metadata"]["name"] for i in listed] == ["kept"]
    custom.patch_namespaced_custom_object(
        group, V1, namespace, "widgets", "kept", {"metadata": {"labels": {"touched": "yes"}}}
    )
    resources = {r.name: r for r in custom.get_api_resources(group, V1).resources}
    assert "create" not in resources["widgets"].verbs
    with pytest.raises(ApiException) as exc:
        custom.create_namespaced_custom_object(
            group, V1, namespace, "widgets", _widget(group, "late")
        )
    assert exc.value.status == 405
    assert json.loads(exc.value.body)["message"] == (
        "create not allowed while custom resource definition is terminating"
    )

    # Releasing the last object completes the cleanup; example.com/hold still holds the CRD.
    custom.patch_namespaced_custom_object(
        group, V1, namespace, "widgets", "kept", {"metadata": {"finalizers": None}}
    )

    def cleaned_up() -> Any:
        crd = crds.ext.read_custom_resource_definition(name)
        done = "customresourcecleanup.apiextensions.k8s.io" not in (crd.metadata.finalizers or [])
        return crd if done else None

    crd = wait_for(cleaned_up, timeout=30, message="the cleanup finalizer removed")
    assert crd.metadata.finalizers == ["example.com/hold"]
    terminating = next(c for c in crd.status.conditions if c.type == "Terminating")
    assert (terminating.status, terminating.reason) == ("False", "InstanceDeletionCompleted")
    assert custom.list_namespaced_custom_object(group, V1, namespace, "widgets")["items"] == []

    crds.ext.patch_custom_resource_definition(
        name, {"metadata": {"finalizers": None}}, _content_type="application/merge-patch+json"
    )
    with pytest.raises(ApiException) as exc:
        crds.ext.read_custom_resource_definition(name)
    assert exc.value.status == 404

    def unserved() -> bool:
        try:
            custom.list_namespaced_custom_object(group, V1, namespace, "widgets")
        except ApiException as e:
            return e.status == 404
        return False

    wait_for(unserved, message="the kind no longer served")
