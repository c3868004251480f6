"""Embedded-server behaviours aligned with kube-apiserver after the differential checks
(docs/conformance.md, differences 4, 7, 8 and 9): pod spec immutability, unknown paths,
terminating CRDs, zero-valued ``omitempty`` fields. They run without the real binaries;
tests/e2e/test_differential_e2e.py compares the same behaviours with kube-apiserver."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from kube_runtime.client import Client, Invalid, NotFound
from kube_runtime.envtest.version import server_version

Obj = dict[str, Any]


def _pod(name: str, namespace: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}], **spec},
    }


# ------------------------------------------------------------- 4: pod spec immutability


def test_pod_node_name_cannot_be_set_by_update_or_patch(client: Client, namespace: str) -> None:
    # Not scheduled by the simulated kubelet: only an update could bind it.
    created = client.create(_pod("parked", namespace, schedulerName="nobody"))
    moved = copy.deepcopy(created)
    moved["spec"]["nodeName"] = "somewhere"
    with pytest.raises(Invalid) as exc:
        client.update(moved)
    assert "pod updates may not change fields other than" in exc.value.message
    with pytest.raises(Invalid):
        client.patch("v1/Pod", "parked", {"spec": {"nodeName": "somewhere"}}, namespace=namespace)
    assert not client.get("v1/Pod", "parked", namespace)["spec"].get("nodeName")

    # pods/binding stays the way to bind it, once.
    client.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/pods/parked/binding",
        body={
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "parked"},
            "target": {"kind": "Node", "name": "somewhere"},
        },
    )
    bound = client.get("v1/Pod", "parked", namespace)
    assert bound["spec"]["nodeName"] == "somewhere"
    with pytest.raises(Invalid):
        client.patch("v1/Pod", "parked", {"spec": {"nodeName": "elsewhere"}}, namespace=namespace)


def test_pod_update_changes_only_what_upstream_allows(
    client: Client, namespace: str, wait_for: Any
) -> None:
    client.create(_pod("p", namespace, tolerations=[{"key": "a", "operator": "Exists"}]))
    bound = wait_for(
        lambda: (p := client.get("v1/Pod", "p", namespace))["spec"].get("nodeName") and p,
        message="pod bound by the simulated kubelet",
    )
    assert bound["spec"]["nodeName"]
    # Allowed: image, activeDeadlineSeconds set then lowered, an added toleration.
    for change in (
        {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
        {"spec": {"activeDeadlineSeconds": 60}},
        {"spec": {"activeDeadlineSeconds": 30}},
        {"spec": {"tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b"}]}},
    ):
        client.patch("v1/Pod", "p", change, namespace=namespace, patch_type="merge")
    current = client.get("v1/Pod", "p", namespace)
    assert current["spec"]["containers"][0]["image"] == "nginx:2"
    assert current["spec"]["activeDeadlineSeconds"] == 30
    # Refused: anything else in the spec, and raising activeDeadlineSeconds.
    for change in (
        {"spec": {"containers": [{"name": "c", "image": "nginx:2", "args": ["x"]}]}},
        {"spec": {"restartPolicy": "Never"}},
        {"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}},
        {"spec": {"activeDeadlineSeconds": 90}},
        {"spec": {"tolerations": [{"key": "b"}]}},
    ):
        with pytest.raises(Invalid):
            client.patch("v1/Pod", "p", change, namespace=namespace, patch_type="merge")


# ------------------------------------------------------- 9: zero-valued omitempty fields


def _statefulset(name: str, namespace: str) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 0,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx", "tty": False}]},
            },
        },
    }


def test_zero_valued_omitempty_fields_are_dropped(client: Client, namespace: str) -> None:
    # status.availableReplicas (untagged) exists since Kubernetes 1.22.
    untagged = {"replicas": 0, "availableReplicas": 0}
    if server_version(client) < (1, 22):
        del untagged["availableReplicas"]
    sts = client.create(_statefulset("s", namespace))
    assert "tty" not in sts["spec"]["template"]["spec"]["containers"][0]
    assert sts["status"] == untagged  # untagged counters: always written
    sts["status"] = {
        "readyReplicas": 0,
        "currentReplicas": 0,
        "updatedReplicas": 0,
        "observedGeneration": 0,
        "currentRevision": "",
        "updateRevision": "r1",
        "collisionCount": 0,
    }
    written = client.update_status(sts)
    read = client.get("apps/v1/StatefulSet", "s", namespace)
    for got in (written, read):
        # collisionCount is a pointer (*int32): an explicit 0 stays.
        assert got["status"] == {**untagged, "updateRevision": "r1", "collisionCount": 0}
    # Writing the same zeros again changes nothing: no new resourceVersion.
    again = client.update_status({**read, "status": {**read["status"], "readyReplicas": 0}})
    assert again["metadata"]["resourceVersion"] == read["metadata"]["resourceVersion"]

    pod = client.create(_pod("z", namespace, hostNetwork=False, schedulerName="nobody"))
    assert "hostNetwork" not in pod["spec"]


def test_custom_resources_keep_zero_values(client: Client, namespace: str, wait_for: Any) -> None:
    group = f"z{namespace.replace('-', '')[:20]}.example.com"
    client.create(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"counters.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "counters", "kind": "Counter"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
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
    )
    try:
        path = f"/apis/{group}/v1/namespaces/{namespace}/counters"
        wait_for(lambda: client.request("GET", path) is not None, message="counters served")
        created = client.request(
            "POST",
            path,
            body={
                "apiVersion": f"{group}/v1",
                "kind": "Counter",
                "metadata": {"name": "c"},
                "status": {"readyReplicas": 0, "updatedReplicas": 0, "paused": False},
            },
        )
        assert created["status"] == {"readyReplicas": 0, "updatedReplicas": 0, "paused": False}
    finally:
        client.request(
            "DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/counters.{group}"
        )


# ------------------------------------------------------------------- 7: unknown paths


@pytest.mark.parametrize(
    "path",
    [
        "/apis/nope.example.com",
        "/apis/nope.example.com/v1",
        "/apis/nope.example.com/v1/namespaces/default/things",
        "/apis/nope.example.com/v1/namespaces/default/things/x",
    ],
)
def test_unknown_group_answers_page_not_found(client: Client, path: str) -> None:
    # kube-apiserver's last handler: plain text; our client still raises NotFound.
    with pytest.raises(NotFound) as exc:
        client.request("GET", path)
    assert exc.value.code == 404 and exc.value.reason == "NotFound"
    assert "404 page not found" in exc.value.message


@pytest.mark.parametrize(
    "path",
    [
        "/apis/apps/v1/namespaces/default/unknownthings",
        "/apis/apps/v9/namespaces/default/deployments",
        "/api/v1/namespaces/x/unknownthings",
        "/api/v1/namespaces/default/configmaps/x/unknownsub",
    ],
)
def test_unknown_resource_of_a_built_in_group_answers_a_status(client: Client, path: str) -> None:
    # Built-in groups answer from their own handlers: a JSON Status.
    with pytest.raises(NotFound) as exc:
        client.request("GET", path)
    assert exc.value.message == "the server could not find the requested resource"


def test_root_lists_the_served_paths(client: Client) -> None:
    # GET / is the index of paths (kubectl get --raw /); any other path outside the API
    # answers 404 with the same kind of list, not a Status.
    paths = client.get_path("/")["paths"]
    for served in ("/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/healthz"):
        assert served in paths
    with pytest.raises(NotFound) as exc:
        client.request("GET", "/no-such-path")
    assert exc.value.code == 404
    assert '"paths"' in exc.value.message and '"/apis"' in exc.value.message  # body kept


def test_list_items_of_built_in_kinds_carry_no_type(client: Client, namespace: str) -> None:
    # kube-apiserver encodes typed lists with empty TypeMeta on the items; a single object,
    # and a custom resource's list items, carry apiVersion and kind
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t", "namespace": namespace}}
    )
    raw = client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps")
    assert raw["kind"] == "ConfigMapList"
    assert [set(item) & {"apiVersion", "kind"} for item in raw["items"]] == [set()]
    one = client.request("GET", f"/api/v1/namespaces/{namespace}/configmaps/t")
    assert (one["apiVersion"], one["kind"]) == ("v1", "ConfigMap")
    # the framework client fills them in, so callers see typed items either way
    assert client.list("v1/ConfigMap", namespace)["items"][0]["kind"] == "ConfigMap"


def test_deployment_annotations_bump_generation(client: Client, namespace: str) -> None:
    # a Deployment's annotations are copied to its ReplicaSets, so changing them is a new
    # generation (not through the status subresource); other kinds move only with the spec
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert client.create(dep)["metadata"]["generation"] == 1
    patched = client.patch(
        "apps/v1/Deployment", "d", {"metadata": {"annotations": {"a": "1"}}}, namespace=namespace
    )
    assert patched["metadata"]["generation"] == 2
    labelled = client.patch(
        "apps/v1/Deployment", "d", {"metadata": {"labels": {"l": "1"}}}, namespace=namespace
    )
    assert labelled["metadata"]["generation"] == 2
    sts = _statefulset("s", namespace)
    client.create(sts)
    annotated = client.patch(
        "apps/v1/StatefulSet", "s", {"metadata": {"annotations": {"a": "1"}}}, namespace=namespace
    )
    assert annotated["metadata"]["generation"] == 1


def test_terminating_namespace_reports_what_remains(client: Client, wait_for: Any) -> None:
    # the namespace controller's conditions on a namespace whose content a finalizer holds
    name = f"held-{uuid.uuid4().hex[:8]}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "held", "namespace": name, "finalizers": ["example.com/hold"]},
        }
    )
    client.delete("v1/Namespace", name)

    def condition(type_: str) -> dict[str, Any]:
        status = client.get("v1/Namespace", name).get("status") or {}
        return next((c for c in status.get("conditions") or () if c["type"] == type_), {})

    held = wait_for(
        lambda: (c := condition("NamespaceFinalizersRemaining")).get("status") == "True" and c,
        timeout=60,
    )
    assert held["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 "
        "resource instances"
    )
    assert condition("NamespaceContentRemaining")["message"] == (
        "Some resources are remaining: configmaps. has 1 resource instances"
    )
    client.patch("v1/ConfigMap", "held", {"metadata": {"finalizers": None}}, namespace=name)

    def gone() -> bool:
        try:
            client.get("v1/Namespace", name)
        except NotFound:
            return True
        return False

    wait_for(gone, timeout=60, message="namespace removed once released")


def test_service_cluster_ips_are_kept_and_immutable(
    client: Client, namespace: str, kube_version: tuple[int, int]
) -> None:
    def service(name: str, **spec: Any) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec},
        }

    headless = client.create(service("headless", clusterIP="None"))
    assert headless["spec"]["clusterIPs"] == ["None"]
    allocated = client.create(service("web"))
    ip = allocated["spec"]["clusterIP"]
    assert allocated["spec"]["clusterIPs"] == [ip]
    # an update that leaves the IPs out keeps them (1.20 refused it: "primary clusterIP can
    # not be unset"; the service registry keeps allocated values since)
    body = copy.deepcopy(allocated)
    del body["spec"]["clusterIP"], body["spec"]["clusterIPs"]
    if kube_version > (1, 20):
        kept = client.update(body)
        assert (kept["spec"]["clusterIP"], kept["spec"]["clusterIPs"]) == (ip, [ip])
    else:
        with pytest.raises(Invalid):
            client.update(body)
    for name, new_ip in (("web", "10.96.7.7"), ("headless", "10.96.7.8")):
        with pytest.raises(Invalid) as exc:
            client.patch("v1/Service", name, {"spec": {"clusterIP": new_ip}}, namespace=namespace)
        assert "spec.clusterIPs[0]" in exc.value.message


def test_core_events_agree_with_their_namespace(client: Client, namespace: str) -> None:
    def event(name: str, involved_namespace: str) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": involved_namespace},
            "reason": "Tested",
            "message": "m",
        }

    created = client.create(event("ok", namespace))
    # written although empty: these fields have no omitempty tag
    assert (created["reportingComponent"], created["reportingInstance"]) == ("", "")
    with pytest.raises(Invalid) as exc:
        client.create(event("elsewhere", "other-namespace"))
    assert "involvedObject.namespace" in exc.value.message
    assert "does not match event.namespace" in exc.value.message


def _gizmo_crd(group: str) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object"}},
                        }
                    },
                }
            ],
        },
    }


def test_crds_must_be_structural_and_store_one_version(client: Client) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"
    untyped = _gizmo_crd(group)
    schema = untyped["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"] = {
        "properties": {"size": {}, "tags": {"type": "array", "items": {}}}
    }
    with pytest.raises(Invalid) as exc:
        client.create(untyped)
    fields = {c["field"] for c in exc.value.status["details"]["causes"]}
    # one schema shared by every version is reported as the internal spec.validation
    base = "spec.validation.openAPIV3Schema.properties[spec]"
    assert {f"{base}.type", f"{base}.properties[size].type"} <= fields
    assert f"{base}.properties[tags].items.type" in fields
    no_storage = _gizmo_crd(group)
    no_storage["spec"]["versions"][0]["storage"] = False
    with pytest.raises(Invalid) as exc:
        client.create(no_storage)
    assert "status.storedVersions: Invalid value" in exc.value.message
    assert "must have at least one stored version" in exc.value.message
    created = client.create(_gizmo_crd(group))
    try:
        # acceptedNames has no omitempty on plural and kind: written (empty) from the start
        names = created["status"]["acceptedNames"]
        assert {"plural", "kind"} <= set(names)
        assert created["status"]["storedVersions"] == ["v1"]
    finally:
        client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"gizmos.{group}")
