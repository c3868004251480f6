"""FakeClient: the API server's semantics in memory (each test would fail without the rule
it names). The same scenario against the embedded cluster: tests/e2e/test_client_protocols_e2e.py."""

from __future__ import annotations

import ast
import re
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from kube_runtime import kinds
from kube_runtime.client import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Invalid,
    NoKindMatchError,
    NotFound,
    Resource,
)
from kube_runtime.client.fake import (
    STALE_MESSAGE,
    Action,
    FakeClient,
    Interceptor,
    ScalePaths,
    already_exists,
    conflict,
    not_found,
)
from kube_runtime.client.interfaces import Client as ClientInterface
from kube_runtime.kinds import Kind
from kube_runtime.retry import retry_on_conflict

NS = "ns"
WIDGET = Kind("example.com/v1", "Widget")
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def cm(name: str = "a", namespace: str = NS, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "web"}},
        "data": data or {"k": "v"},
    }


def sts(name: str = "web", namespace: str = NS, replicas: int = 1) -> dict[str, Any]:
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


def pod(name: str, namespace: str = NS, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def widget(name: str = "w", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec or {"size": 1},
    }


class ConfigMapModel(BaseModel):
    """A typed view of a ConfigMap (as codegen would emit one)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    __kube_resource__: ClassVar[Resource] = Resource("", "v1", "ConfigMap", "configmaps", True)
    apiVersion: str = "v1"
    kind: str = "ConfigMap"
    metadata: dict[str, Any]
    data: dict[str, str] | None = None


class Gadget(BaseModel):
    """A custom resource model with status and scale subresources."""

    model_config = ConfigDict(extra="allow")
    __kube_resource__: ClassVar[Resource] = Resource(
        "example.com", "v1", "Gadget", "gadgets", True, frozenset({"status", "scale"})
    )
    apiVersion: str = "example.com/v1"
    kind: str = "Gadget"
    metadata: dict[str, Any]
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None


@pytest.fixture
def fake() -> FakeClient:
    return FakeClient().register(WIDGET)


# ------------------------------------------------------------------------------ create


def test_create_sets_server_fields_and_a_global_resource_version(fake: FakeClient) -> None:
    created = fake.create(cm())
    meta = created["metadata"]
    assert re.fullmatch(r"[0-9a-f-]{36}", meta["uid"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert meta["resourceVersion"] == "1" and isinstance(meta["resourceVersion"], str)
    assert "generation" not in meta  # ConfigMaps do not track generations
    second = fake.create(sts())
    assert second["metadata"]["resourceVersion"] == "2"  # one counter for every kind
    assert second["metadata"]["generation"] == 1
    assert fake.resource_version == "2"


def test_create_ignores_server_owned_fields_and_resets_status(fake: FakeClient) -> None:
    body = sts()
    body["metadata"].update(
        uid="mine", resourceVersion="99", deletionTimestamp="2020-01-01T00:00:00Z"
    )
    body["status"] = {"replicas": 7}
    created = fake.create(body)
    assert created["metadata"]["uid"] != "mine"
    assert created["metadata"]["resourceVersion"] == "1"
    assert "deletionTimestamp" not in created["metadata"]
    assert created["status"] == {"replicas": 0, "availableReplicas": 0}  # the server's initial
    assert fake.create(pod("p"))["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    w = widget()
    w["status"] = {"ready": True}
    assert "status" not in fake.create(w)  # a custom status subresource starts empty


def test_generate_name_uses_five_characters_of_upstreams_alphabet(fake: FakeClient) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}
    names = {fake.create(body, namespace=NS)["metadata"]["name"] for _ in range(20)}
    assert len(names) == 20
    for name in names:
        assert re.fullmatch(rf"gen-[{_ALPHABET}]{{5}}", name)


def test_create_of_a_taken_name_is_already_exists(fake: FakeClient) -> None:
    fake.create(cm())
    with pytest.raises(AlreadyExists) as err:
        fake.create(cm())
    assert err.value.code == 409 and err.value.message == 'configmaps "a" already exists'
    assert err.value.details == {"kind": "configmaps", "name": "a"}
    with pytest.raises(AlreadyExists, match=r'statefulsets.apps "web" already exists'):
        fake.create(sts())
        fake.create(sts())


def test_create_validates_the_name_and_the_namespace(fake: FakeClient) -> None:
    with pytest.raises(Invalid) as err:
        fake.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": NS}})
    assert err.value.message == (
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'
    )
    with pytest.raises(Invalid) as bad:
        fake.create(cm("Bad_Name"))
    assert bad.value.causes[0]["field"] == "metadata.name"
    assert "RFC 1123 subdomain" in bad.value.message
    with pytest.raises(ValueError, match="namespace is required"):
        fake.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    with pytest.raises(BadRequest, match="does not match the namespace"):
        fake.create(cm(), namespace="other")
    created = fake.create(cm("n"), namespace=NS)
    assert created["metadata"]["namespace"] == NS


def test_cluster_scoped_kinds_drop_the_namespace(fake: FakeClient) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "namespace": "x"}}
    created = fake.create(node)
    assert "namespace" not in created["metadata"]
    assert fake.get(kinds.Node, "n1")["metadata"]["name"] == "n1"
    assert fake.get(kinds.Node, "n1", "ignored")["metadata"]["name"] == "n1"


def test_dry_run_create_stores_nothing(fake: FakeClient) -> None:
    dry = fake.create(cm(), dry_run=True)
    assert dry["metadata"]["name"] == "a" and "resourceVersion" not in dry["metadata"]
    with pytest.raises(NotFound):
        fake.get(kinds.ConfigMap, "a", NS)
    assert fake.resource_version == "0"


_EMPTY_META: dict[str, Any] = {
    "labels": {},
    "annotations": {},
    "finalizers": [],
    "ownerReferences": [],
}


@pytest.mark.parametrize("make", [widget, cm], ids=["custom", "built-in"])
def test_empty_metadata_is_dropped_as_kube_apiserver_encodes_it(
    fake: FakeClient, make: Any
) -> None:
    """Empty labels, annotations, finalizers, owner references (or null ones) and an empty
    generateName are not stored, for custom resources as for built-in kinds (kube-apiserver
    1.20 decodes a custom resource's metadata into ObjectMeta too)."""
    body = make()
    body["metadata"].update(_EMPTY_META, generateName="")
    created = fake.create(body)
    server = {"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "generation"}
    assert set(created["metadata"]) <= server
    created["metadata"].update(_EMPTY_META, labels=None)
    updated = fake.update(created)
    assert set(updated["metadata"]) <= server
    name = created["metadata"]["name"]
    kind = Kind(created["apiVersion"], created["kind"])
    fake.patch(kind, name, {"metadata": {"labels": {"a": "1"}}}, namespace=NS)
    patched = fake.patch(kind, name, {"metadata": {"labels": {"a": None}}}, namespace=NS)
    assert "labels" not in patched["metadata"]


# ------------------------------------------------------------------------------ get


def test_get_of_a_missing_object_is_not_found_with_the_servers_message(fake: FakeClient) -> None:
    with pytest.raises(NotFound) as err:
        fake.get(kinds.Pod, "x", NS)
    assert err.value.message == 'pods "x" not found'
    assert err.value.details == {"kind": "pods", "name": "x"}
    with pytest.raises(NotFound) as grouped:
        fake.get(kinds.StatefulSet, "x", NS)
    assert grouped.value.message == 'statefulsets.apps "x" not found'
    assert grouped.value.details == {"kind": "statefulsets", "name": "x", "group": "apps"}
    with pytest.raises(ValueError, match="namespace is required"):
        fake.get(kinds.Pod, "x")


def test_unknown_kinds_are_no_kind_match_until_registered() -> None:
    fake = FakeClient()
    with pytest.raises(NoKindMatchError):
        fake.create(widget())
    fake.register("example.com/v1/Widget", plural="widgets")
    assert fake.create(widget())["metadata"]["generation"] == 1  # custom kinds track it
    assert fake.mapper.resource_for(WIDGET).plural == "widgets"
    with pytest.raises(NotFound, match=r'widgets\.example\.com "nope" not found'):
        fake.get(WIDGET, "nope", NS)


# ------------------------------------------------------------------------------ update


def test_update_with_a_stale_resource_version_is_a_conflict(fake: FakeClient) -> None:
    created = fake.create(cm())
    changed = {**created, "data": {"k": "v2"}}
    updated = fake.update(changed)
    assert updated["metadata"]["resourceVersion"] == "2" and updated["data"] == {"k": "v2"}
    with pytest.raises(Conflict) as err:
        fake.update(changed)
    assert err.value.message == f'Operation cannot be fulfilled on configmaps "a": {STALE_MESSAGE}'
    assert err.value.details == {"kind": "configmaps", "name": "a"}


def test_update_without_resource_version_is_unconditional_for_builtins(fake: FakeClient) -> None:
    fake.create(cm())
    blind = cm(k="blind")
    assert fake.update(blind)["data"] == {"k": "blind"}


def test_custom_kinds_require_a_resource_version_on_update(fake: FakeClient) -> None:
    fake.create(widget())
    with pytest.raises(Invalid, match="must be specified for an update"):
        fake.update(widget(size=2))


def test_update_with_another_uid_is_a_precondition_conflict(fake: FakeClient) -> None:
    created = fake.create(cm())
    created["metadata"]["uid"] = "someone-else"
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: someone-else"):
        fake.update(created)


def test_update_of_a_missing_object_is_not_found(fake: FakeClient) -> None:
    with pytest.raises(NotFound, match='configmaps "a" not found'):
        fake.update(cm())


def test_an_update_that_changes_nothing_stores_nothing(fake: FakeClient) -> None:
    created = fake.create(cm())
    again = fake.update(created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert fake.resource_version == "1"


def test_generation_moves_only_when_the_spec_changes(fake: FakeClient) -> None:
    created = fake.create(sts())
    created["metadata"]["labels"] = {"x": "y"}
    relabeled = fake.update(created)
    assert relabeled["metadata"]["generation"] == 1
    relabeled["spec"]["replicas"] = 3
    scaled = fake.update(relabeled)
    assert scaled["metadata"]["generation"] == 2


def test_update_cannot_change_server_owned_metadata(fake: FakeClient) -> None:
    created = fake.create(sts())
    created["metadata"].update(creationTimestamp="1999-01-01T00:00:00Z", generation=42)
    updated = fake.update(created)
    assert updated["metadata"]["generation"] == 1
    assert updated["metadata"]["creationTimestamp"] != "1999-01-01T00:00:00Z"


def test_the_main_resource_ignores_status_of_kinds_with_a_status_subresource(
    fake: FakeClient,
) -> None:
    created = fake.create(sts())
    created["status"] = {"replicas": 5}
    assert fake.update(created)["status"] == {"replicas": 0, "availableReplicas": 0}
    # A kind registered without a status subresource stores status like any other field.
    fake.register("example.com/v1/Plain", status=False)
    plain = {
        "apiVersion": "example.com/v1",
        "kind": "Plain",
        "metadata": {"name": "p", "namespace": NS},
    }
    plain = fake.create({**plain, "status": {"a": 1}})
    assert plain["status"] == {"a": 1}
    plain["status"] = {"a": 2}
    assert fake.update(plain)["status"] == {"a": 2}


def test_status_subresource_kinds_can_be_chosen() -> None:
    fake = FakeClient(status_subresource_kinds=[])
    created = fake.create(sts())
    created["status"] = {"replicas": 5}
    assert fake.update(created)["status"] == {"replicas": 5}
    with pytest.raises(NotFound, match="could not find the requested resource"):
        fake.status().update(created)
    chosen = FakeClient(status_subresource_kinds=[kinds.StatefulSet]).register(WIDGET)
    running = chosen.create({**pod("p"), "status": {"phase": "Running"}})
    assert running["status"] == {"phase": "Running"}  # Pods are not listed: a plain field
    with pytest.raises(NotFound):
        chosen.status().update(running)
    w = chosen.create(widget())  # registered kinds keep their own (status=True)
    assert chosen.status().update({**w, "status": {"ok": True}})["status"] == {"ok": True}
    s = chosen.create(sts())
    assert chosen.update({**s, "status": {"replicas": 9}})["status"]["replicas"] == 0


# ------------------------------------------------------------------------------ status


def test_status_update_changes_only_the_status(fake: FakeClient) -> None:
    created = fake.create(sts())
    created["status"] = {"replicas": 5, "observedGeneration": 1}
    created["spec"]["replicas"] = 9
    written = fake.status().update(created)
    assert written["status"] == {"replicas": 5, "observedGeneration": 1}
    assert written["spec"]["replicas"] == 1 and written["metadata"]["generation"] == 1
    stored = fake.get(kinds.StatefulSet, "web", NS)
    assert stored["status"]["replicas"] == 5 and stored["spec"]["replicas"] == 1
    with pytest.raises(Conflict):
        fake.status().update(created)  # stale now
    assert fake.update_status({**stored, "status": {"replicas": 6}})["status"] == {"replicas": 6}


def test_status_writes_keep_custom_metadata_and_take_builtin_labels(fake: FakeClient) -> None:
    w = fake.create(widget())
    w["metadata"]["labels"] = {"new": "label"}
    w["status"] = {"ready": True}
    written = fake.status().update(w)
    assert written["status"] == {"ready": True} and "labels" not in written["metadata"]
    s = fake.create(sts())
    s["metadata"]["labels"] = {"new": "label"}
    assert fake.status().update(s)["metadata"]["labels"] == {"new": "label"}


def test_status_patch_and_kinds_without_status(fake: FakeClient) -> None:
    fake.create(sts())
    patched = fake.status().patch(
        kinds.StatefulSet, "web", {"status": {"replicas": 2}, "spec": {"replicas": 8}}, namespace=NS
    )
    assert patched["status"]["replicas"] == 2 and patched["spec"]["replicas"] == 1
    fake.create(cm())
    with pytest.raises(NotFound, match="could not find the requested resource"):
        fake.status().patch(kinds.ConfigMap, "a", {"status": {}}, namespace=NS)
    with pytest.raises(NotFound, match="could not find the requested resource"):
        fake.status().update(fake.get(kinds.ConfigMap, "a", NS))
    with pytest.raises(NotFound, match="could not find the requested resource"):
        fake.subresource("status").get(kinds.ConfigMap, "a", NS)
    assert fake.subresource("status").get(kinds.StatefulSet, "web", NS)["status"]["replicas"] == 2


# ------------------------------------------------------------------------------ delete


def test_delete_removes_and_answers_a_success_status(fake: FakeClient) -> None:
    created = fake.create(cm())
    answer = fake.delete(kinds.ConfigMap, "a", NS)
    assert answer == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "a", "kind": "configmaps", "uid": created["metadata"]["uid"]},
    }
    with pytest.raises(NotFound):
        fake.get(kinds.ConfigMap, "a", NS)
    with pytest.raises(NotFound, match='configmaps "a" not found'):
        fake.delete(kinds.ConfigMap, "a", NS)


def test_deleting_a_pod_answers_the_pod(fake: FakeClient) -> None:
    fake.create(pod("p"))
    answer = fake.delete(kinds.Pod, "p", NS)
    assert answer["kind"] == "Pod" and answer["metadata"]["deletionGracePeriodSeconds"] == 0
    assert fake.objects(kinds.Pod) == []


def test_finalizers_keep_a_deleted_object_until_they_are_removed(fake: FakeClient) -> None:
    body = sts()
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    fake.create(body)
    marked = fake.delete(kinds.StatefulSet, "web", NS)
    meta = marked["metadata"]
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2  # the server bumps it when deletion starts
    assert fake.get(kinds.StatefulSet, "web", NS)["metadata"]["deletionTimestamp"]
    # Deleting again changes nothing.
    again = fake.delete(kinds.StatefulSet, "web", NS)
    assert again["metadata"]["resourceVersion"] == meta["resourceVersion"]
    # No new finalizers while terminating.
    with pytest.raises(Invalid, match="no new finalizers can be added"):
        fake.patch(
            kinds.StatefulSet,
            "web",
            {"metadata": {"finalizers": ["example.com/cleanup", "other/x"]}},
            namespace=NS,
        )
    current = fake.get(kinds.StatefulSet, "web", NS)
    current["metadata"]["finalizers"] = []
    last = fake.update(current)
    assert last["metadata"]["deletionTimestamp"]
    with pytest.raises(NotFound):
        fake.get(kinds.StatefulSet, "web", NS)


def test_removing_the_last_finalizer_by_patch_deletes(fake: FakeClient) -> None:
    body = cm()
    body["metadata"]["finalizers"] = ["a/b", "c/d"]
    fake.create(body)
    fake.delete(kinds.ConfigMap, "a", NS)
    fake.patch(
        kinds.ConfigMap,
        "a",
        [{"op": "remove", "path": "/metadata/finalizers/0"}],
        namespace=NS,
        patch_type="json",
    )
    assert fake.get(kinds.ConfigMap, "a", NS)["metadata"]["finalizers"] == ["c/d"]
    fake.patch(kinds.ConfigMap, "a", {"metadata": {"finalizers": None}}, namespace=NS)
    assert fake.objects(kinds.ConfigMap) == []


def test_delete_preconditions(fake: FakeClient) -> None:
    created = fake.create(cm())
    with pytest.raises(Conflict) as uid:
        fake.delete(kinds.ConfigMap, "a", NS, uid="other")
    assert uid.value.message == (
        f'Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (other) '
        f"does not match the UID in record ({created['metadata']['uid']}). "
        "The object might have been deleted and then recreated"
    )
    with pytest.raises(Conflict, match=r"the ResourceVersion in the precondition \(7\)"):
        fake.delete(kinds.ConfigMap, "a", NS, resource_version="7")
    with pytest.raises(Conflict, match=r'on StatefulSet\.apps "web"'):
        fake.create(sts())
        fake.delete(kinds.StatefulSet, "web", NS, uid="other")
    fake.delete(kinds.ConfigMap, "a", NS, uid=created["metadata"]["uid"], resource_version="1")
    assert fake.objects(kinds.ConfigMap) == []


def test_delete_options_are_checked_and_dry_run_keeps_the_object(fake: FakeClient) -> None:
    fake.create(cm())
    with pytest.raises(BadRequest, match="invalid propagationPolicy: Sideways"):
        fake.delete(kinds.ConfigMap, "a", NS, propagation_policy="Sideways")
    fake.delete(kinds.ConfigMap, "a", NS, dry_run=True)
    assert fake.get(kinds.ConfigMap, "a", NS)
    fake.delete(kinds.ConfigMap, "a", NS, propagation_policy="Foreground")
    assert fake.objects(kinds.ConfigMap) == []  # no garbage collector: gone at once


def test_delete_all_of_with_selectors(fake: FakeClient) -> None:
    fake.create(pod("a", app="web"))
    fake.create(pod("b", app="db"))
    keep = pod("c", app="web")
    keep["metadata"]["finalizers"] = ["x/y"]
    fake.create(keep)
    fake.create(pod("d", "other", app="web"))
    answer = fake.delete_all_of(kinds.Pod, NS, label_selector={"app": "web"})
    assert answer["kind"] == "PodList"
    assert sorted(i["metadata"]["name"] for i in answer["items"]) == ["a", "c"]
    left = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in fake.objects(kinds.Pod)}
    assert left == {(NS, "b"), (NS, "c"), ("other", "d")}
    assert fake.get(kinds.Pod, "c", NS)["metadata"]["deletionTimestamp"]
    fake.delete_all_of(kinds.Pod, NS, field_selector="metadata.name=b")
    assert [p["metadata"]["name"] for p in fake.objects(kinds.Pod, NS)] == ["c"]


# ------------------------------------------------------------------------------ list


def test_list_has_the_list_shape_sorted_by_namespace_and_name(fake: FakeClient) -> None:
    fake.create(cm("b", "y"))
    fake.create(cm("a", "y"))
    fake.create(cm("z", "x"))
    listed = fake.list(kinds.ConfigMap)
    assert set(listed) == {"apiVersion", "kind", "metadata", "items"}
    assert listed["apiVersion"] == "v1" and listed["kind"] == "ConfigMapList"
    assert listed["metadata"] == {"resourceVersion": "3"}
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("x", "z"),
        ("y", "a"),
        ("y", "b"),
    ]
    assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1" for i in listed["items"])
    assert [i["metadata"]["name"] for i in fake.list(kinds.ConfigMap, "y")["items"]] == ["a", "b"]


def test_list_label_selectors_follow_the_servers_rules(fake: FakeClient) -> None:
    fake.create(pod("a", app="web", tier="front"))
    fake.create(pod("b", app="web"))
    fake.create(pod("c", app="db"))

    def names(selector: Any) -> list[str]:
        listed = fake.list(kinds.Pod, NS, label_selector=selector)
        return [i["metadata"]["name"] for i in listed["items"]]

    assert names({"app": "web"}) == ["a", "b"]
    assert names("app=web,tier") == ["a"]
    assert names("app in (db, web),!tier") == ["b", "c"]
    assert names("app!=web") == ["c"]
    assert names("") == ["a", "b", "c"]
    with pytest.raises(BadRequest, match="unable to parse requirement"):
        names("app in (web")


def test_list_field_selectors(fake: FakeClient) -> None:
    running = pod("a")
    running["status"] = {"phase": "Running"}
    fake.with_objects(running, pod("b"))
    assert [
        i["metadata"]["name"]
        for i in fake.list(kinds.Pod, NS, field_selector="status.phase=Running")["items"]
    ] == ["a"]
    by_name = fake.list(kinds.Pod, field_selector={"metadata.name": "b"})
    assert [i["metadata"]["name"] for i in by_name["items"]] == ["b"]
    assert fake.list(kinds.Pod, field_selector="metadata.namespace=other")["items"] == []
    with pytest.raises(BadRequest, match=r'"spec\.foo" is not a known field selector'):
        fake.list(kinds.ConfigMap, NS, field_selector="spec.foo=x")
    with pytest.raises(BadRequest, match=r"field label not supported: spec\.foo"):
        fake.list(kinds.Pod, NS, field_selector="spec.foo=x")


def test_list_by_index(fake: FakeClient) -> None:
    owner_uid = "u-1"
    owned = pod("a")
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "web",
            "uid": owner_uid,
            "controller": True,
        }
    ]
    owned["spec"]["nodeName"] = "n1"
    fake.with_objects(owned, pod("b", app="web"), pod("c", "other"))
    fake.add_index(kinds.Pod, "node", lambda o: [o["spec"].get("nodeName") or ""])

    def names(index: tuple[str, str], namespace: str | None = None) -> list[str]:
        return [
            i["metadata"]["name"] for i in fake.list(kinds.Pod, namespace, index=index)["items"]
        ]

    assert names(("node", "n1")) == ["a"]
    assert names(("controller-uid", owner_uid)) == ["a"]
    assert names(("label", "app=web")) == ["b"]
    assert names(("namespace", "other")) == ["c"]
    assert names(("namespace", "other"), NS) == []  # filters combine
    with pytest.raises(KeyError, match="'nope' does not exist"):
        names(("nope", "x"))
    with pytest.raises(ValueError, match="already exists"):
        fake.add_index(kinds.Pod, "node", lambda o: [])
    # The index sees later writes.
    moved = fake.get(kinds.Pod, "b", NS)
    moved["spec"]["nodeName"] = "n1"
    fake.update(moved)
    assert names(("node", "n1")) == ["a", "b"]


# ------------------------------------------------------------------------------ patch


def test_merge_json_and_strategic_patches(fake: FakeClient) -> None:
    fake.create(cm(a="1", b="2"))
    merged = fake.patch(kinds.ConfigMap, "a", {"data": {"a": None, "c": "3"}}, namespace=NS)
    assert merged["data"] == {"b": "2", "c": "3"}
    patched = fake.patch(
        kinds.ConfigMap,
        "a",
        [
            {"op": "test", "path": "/data/b", "value": "2"},
            {"op": "replace", "path": "/data/b", "value": "20"},
        ],
        namespace=NS,
        patch_type="json",
    )
    assert patched["data"]["b"] == "20"
    with pytest.raises(Invalid, match="test"):
        fake.patch(
            kinds.ConfigMap,
            "a",
            [{"op": "test", "path": "/data/b", "value": "nope"}],
            namespace=NS,
            patch_type="json",
        )
    with pytest.raises(BadRequest):
        fake.patch(
            kinds.ConfigMap, "a", [{"op": "jump", "path": "/x"}], namespace=NS, patch_type="json"
        )
    p = pod("p")
    p["spec"]["containers"].append({"name": "side", "image": "busybox"})
    fake.create(p)
    strategic = fake.patch(
        kinds.Pod,
        "p",
        {"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}},
        namespace=NS,
        patch_type="strategic",
    )
    assert [(c["name"], c["image"]) for c in strategic["spec"]["containers"]] == [
        ("c", "nginx"),
        ("side", "busybox:2"),
    ]


def test_strategic_patch_of_a_custom_kind_is_unsupported_media_type(fake: FakeClient) -> None:
    fake.create(widget())
    with pytest.raises(ApiError) as err:
        fake.patch(WIDGET, "w", {"spec": {"size": 2}}, namespace=NS, patch_type="strategic")
    assert err.value.code == 415 and err.value.reason == "UnsupportedMediaType"


def test_patch_resource_version_is_a_precondition(fake: FakeClient) -> None:
    fake.create(cm())
    with pytest.raises(Conflict, match="the object has been modified"):
        fake.patch(kinds.ConfigMap, "a", {"metadata": {"resourceVersion": "0"}}, namespace=NS)
    ok = fake.patch(
        kinds.ConfigMap,
        "a",
        {"metadata": {"resourceVersion": "1"}, "data": {"k": "x"}},
        namespace=NS,
    )
    assert ok["metadata"]["resourceVersion"] == "2"


def test_patch_errors_and_client_side_checks(fake: FakeClient) -> None:
    with pytest.raises(NotFound, match='configmaps "a" not found'):
        fake.patch(kinds.ConfigMap, "a", {"data": {}}, namespace=NS)
    with pytest.raises(ValueError, match="patch_type"):
        fake.patch(kinds.ConfigMap, "a", {}, namespace=NS, patch_type="bogus")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list of operations"):
        fake.patch(kinds.ConfigMap, "a", {"op": "add"}, namespace=NS, patch_type="json")
    with pytest.raises(ValueError, match="force"):
        fake.patch(kinds.ConfigMap, "a", {}, namespace=NS, force=True)
    with pytest.raises(ValueError, match="field_manager"):
        fake.patch(kinds.ConfigMap, "a", {}, namespace=NS, patch_type="apply")
    with pytest.raises(NotFound, match="could not find the requested resource"):
        fake.patch(kinds.ConfigMap, "a", {}, namespace=NS, subresource="bogus")


def test_patch_of_the_main_resource_ignores_status(fake: FakeClient) -> None:
    fake.create(sts())
    patched = fake.patch(
        kinds.StatefulSet, "web", {"status": {"replicas": 3}, "spec": {"replicas": 2}}, namespace=NS
    )
    assert patched["status"]["replicas"] == 0 and patched["spec"]["replicas"] == 2
    assert patched["metadata"]["generation"] == 2


def test_apply_creates_then_merges(fake: FakeClient) -> None:
    applied = fake.apply(cm(k="v"), field_manager="me")
    assert applied["data"] == {"k": "v"} and applied["metadata"]["resourceVersion"] == "1"
    again = fake.apply(cm(k2="w"), field_manager="me")
    assert again["data"] == {"k": "v", "k2": "w"}  # not tracked: fields are never removed
    assert again["metadata"]["uid"] == applied["metadata"]["uid"]
    via_patch = fake.patch(
        kinds.ConfigMap, "b", cm("b", k="p"), namespace=NS, patch_type="apply", field_manager="me"
    )
    assert via_patch["data"] == {"k": "p"}
    p = pod("p")
    fake.create(p)
    sidecar = {**pod("p"), "spec": {"containers": [{"name": "side", "image": "busybox"}]}}
    merged = fake.apply(sidecar, field_manager="me")
    assert sorted(c["name"] for c in merged["spec"]["containers"]) == ["c", "side"]  # by key
    with pytest.raises(ValueError, match="field_manager"):
        fake.apply(cm(), field_manager="")


# ------------------------------------------------------------------------------ scale


def test_scale_subresource_of_a_statefulset(fake: FakeClient) -> None:
    created = fake.create(sts(replicas=2))
    scale = fake.subresource("scale").get(kinds.StatefulSet, "web", NS)
    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": "web",
            "namespace": NS,
            "uid": created["metadata"]["uid"],
            "resourceVersion": "1",
            "creationTimestamp": created["metadata"]["creationTimestamp"],
        },
        "spec": {"replicas": 2},
        "status": {"replicas": 0, "selector": "app=web"},
    }
    scale["spec"]["replicas"] = 5
    written = fake.subresource("scale").update(created, body=scale)
    assert written["spec"]["replicas"] == 5
    assert fake.get(kinds.StatefulSet, "web", NS)["spec"]["replicas"] == 5
    with pytest.raises(Conflict):
        fake.subresource("scale").update(created, body=scale)  # stale resourceVersion
    patched = fake.subresource("scale").patch(
        kinds.StatefulSet, "web", {"spec": {"replicas": 1}}, namespace=NS
    )
    assert patched["spec"]["replicas"] == 1
    via_patch = fake.patch(
        kinds.StatefulSet, "web", {"spec": {"replicas": 4}}, namespace=NS, subresource="scale"
    )
    assert via_patch["kind"] == "Scale" and via_patch["spec"]["replicas"] == 4
    assert fake.get(kinds.StatefulSet, "web", NS)["metadata"]["generation"] == 4
    with pytest.raises(Invalid, match="must be greater than or equal to 0"):
        fake.subresource("scale").patch(
            kinds.StatefulSet, "web", {"spec": {"replicas": -1}}, namespace=NS
        )
    fake.create(cm())
    with pytest.raises(NotFound, match="could not find the requested resource"):
        fake.subresource("scale").get(kinds.ConfigMap, "a", NS)


def test_scale_of_a_registered_custom_kind() -> None:
    fake = FakeClient().register(
        WIDGET, scale_paths=ScalePaths(".spec.size", ".status.size", ".status.selector")
    )
    w = fake.create(widget(size=2))
    fake.status().update({**w, "status": {"size": 1, "selector": "app=w"}})
    scale = fake.subresource("scale").get(WIDGET, "w", NS)
    assert scale["spec"] == {"replicas": 2} and scale["status"] == {
        "replicas": 1,
        "selector": "app=w",
    }
    fake.subresource("scale").patch(WIDGET, "w", {"spec": {"replicas": 7}}, namespace=NS)
    assert fake.get(WIDGET, "w", NS)["spec"]["size"] == 7


# ------------------------------------------------------------------------------ copies and threads


def test_the_store_never_aliases_caller_objects(fake: FakeClient) -> None:
    body = cm()
    created = fake.create(body)
    body["data"]["k"] = "mutated input"
    created["data"]["k"] = "mutated output"
    got = fake.get(kinds.ConfigMap, "a", NS)
    assert got["data"] == {"k": "v"}
    got["metadata"]["labels"]["x"] = "y"
    fake.list(kinds.ConfigMap)["items"][0]["data"]["k"] = "mutated list"
    fake.objects(kinds.ConfigMap)[0]["data"]["k"] = "mutated objects"
    assert fake.get(kinds.ConfigMap, "a", NS)["data"] == {"k": "v"}
    assert fake.get(kinds.ConfigMap, "a", NS)["metadata"]["labels"] == {"app": "web"}
    seed = cm("seed")
    fake.with_objects(seed)
    seed["data"]["k"] = "mutated seed"
    assert fake.get(kinds.ConfigMap, "seed", NS)["data"] == {"k": "v"}


def test_concurrent_read_modify_writes_lose_nothing(fake: FakeClient) -> None:
    fake.create(cm(n="0"))

    def bump() -> None:
        def once() -> None:
            current = fake.get(kinds.ConfigMap, "a", NS)
            current["data"]["n"] = str(int(current["data"]["n"]) + 1)
            fake.update(current)

        for _ in range(25):
            retry_on_conflict(once, backoff=_no_wait_backoff())

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake.get(kinds.ConfigMap, "a", NS)["data"]["n"] == "100"
    assert fake.resource_version == "101"


def _no_wait_backoff() -> Any:
    from kube_runtime.retry import Backoff

    return Backoff(steps=1000, duration=0.0, factor=1.0, jitter=0.0)


# ------------------------------------------------------------------------------ models


def test_models_in_and_out() -> None:
    fake = FakeClient()
    model = ConfigMapModel(metadata={"name": "m", "namespace": NS}, data={"k": "v"})
    created = fake.create(model)
    assert isinstance(created, ConfigMapModel) and created.metadata["uid"]
    got = fake.get(ConfigMapModel, "m", NS)
    assert isinstance(got, ConfigMapModel) and got.data == {"k": "v"}
    got.data = {"k": "v2"}
    assert fake.update(got).data == {"k": "v2"}
    listed = fake.list(ConfigMapModel, NS)
    assert isinstance(listed, dict) and isinstance(listed["items"][0], ConfigMapModel)
    patched = fake.patch(ConfigMapModel, "m", {"data": {"k": "v3"}}, namespace=NS)
    assert isinstance(patched, ConfigMapModel) and patched.data == {"k": "v3"}
    assert isinstance(fake.delete(ConfigMapModel, "m", NS), dict)


def test_model_classes_register_their_custom_kind() -> None:
    fake = FakeClient()
    g = fake.create(Gadget(metadata={"name": "g", "namespace": NS}, spec={"replicas": 2}))
    assert isinstance(g, Gadget) and g.metadata["generation"] == 1
    g.status = {"replicas": 2}
    written = fake.status().update(g)
    assert isinstance(written, Gadget) and written.status == {"replicas": 2}
    assert fake.subresource("scale").get(Gadget, "g", NS)["spec"] == {"replicas": 2}
    assert fake.get("example.com/v1/Gadget", "g", NS)["spec"] == {"replicas": 2}


# ------------------------------------------------------------------------------ seeding and inspection


def test_initial_objects_are_stored_as_given() -> None:
    terminating = cm("t")
    terminating["metadata"].update(
        finalizers=["x/y"], deletionTimestamp="2024-01-01T00:00:00Z", uid="given-uid"
    )
    s = sts()
    s["status"] = {"replicas": 3}
    fake = FakeClient(objects=[terminating, s])
    got = fake.get(kinds.ConfigMap, "t", NS)
    assert got["metadata"]["uid"] == "given-uid"
    assert got["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:00Z"
    assert fake.get(kinds.StatefulSet, "web", NS)["status"] == {"replicas": 3}
    assert [o["metadata"]["resourceVersion"] for o in fake.objects(kinds.ConfigMap)] == ["1"]
    with pytest.raises(ValueError, match="deletionTimestamp but no finalizers"):
        FakeClient(objects=[{**cm(), "metadata": {**cm()["metadata"], "deletionTimestamp": "x"}}])
    with pytest.raises(AlreadyExists):
        FakeClient().with_objects(cm(), cm())
    with pytest.raises(ValueError, match=r"metadata\.namespace"):
        FakeClient(objects=[cm(namespace="")])


def test_actions_record_every_call(fake: FakeClient) -> None:
    fake.create(cm())
    fake.get(kinds.ConfigMap, "a", NS)
    with pytest.raises(NotFound):
        fake.get(kinds.ConfigMap, "b", NS)
    fake.list(kinds.ConfigMap, NS)
    s = fake.create(sts())
    fake.status().update(s)
    fake.subresource("scale").get(kinds.StatefulSet, "web", NS)
    fake.delete(kinds.ConfigMap, "a", NS)
    fake.direct.get(kinds.StatefulSet, "web", NS)  # not recorded
    cm_kind, sts_kind = kinds.ConfigMap, kinds.StatefulSet
    assert fake.actions == [
        Action("create", cm_kind, NS, "a"),
        Action("get", cm_kind, NS, "a"),
        Action("get", cm_kind, NS, "b"),
        Action("list", cm_kind, NS),
        Action("create", sts_kind, NS, "web"),
        Action("update", sts_kind, NS, "web", "status"),
        Action("get", sts_kind, NS, "web", "scale"),
        Action("delete", cm_kind, NS, "a"),
    ]
    assert fake.actions[0].obj["data"] == {"k": "v"}
    writes = [a for a in fake.actions if a.verb not in ("get", "list")]
    assert [a.verb for a in writes] == ["create", "create", "update", "delete"]
    fake.clear_actions()
    assert fake.actions == []


def test_watch_points_at_the_envtest_cluster(fake: FakeClient) -> None:
    with pytest.raises(NotImplementedError, match="embedded cluster"):
        fake.watch(kinds.Pod, NS)


# ------------------------------------------------------------------------------ faults


def test_an_interceptor_fails_chosen_calls_and_passes_the_rest(fake: FakeClient) -> None:
    seen: list[str] = []

    def update(client: FakeClient, obj: dict[str, Any], **options: Any) -> Any:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "web":
            raise conflict(kinds.StatefulSet, "web")
        return client.update(obj, **options)

    fake.intercept(Interceptor(update=update))
    fake.create(sts())
    created = fake.create(cm())
    with pytest.raises(Conflict, match=r'statefulsets\.apps "web"'):
        fake.update(fake.get(kinds.StatefulSet, "web", NS))
    assert fake.update({**created, "data": {"k": "v2"}})["data"] == {"k": "v2"}
    assert seen == ["web", "a"]
    assert [a.verb for a in fake.actions].count("update") == 2  # each call recorded once
    fake.intercept(None)
    fake.update(fake.get(kinds.StatefulSet, "web", NS))


def test_status_and_subresource_hooks(fake: FakeClient) -> None:
    calls: list[tuple[str, ...]] = []

    def status_update(client: FakeClient, obj: Any, **options: Any) -> Any:
        calls.append(("status_update", obj["metadata"]["name"]))
        return client.status().update(obj, **options)

    def subresource_get(client: FakeClient, sub: str, kind: Any, name: str, ns: Any) -> Any:
        calls.append(("subresource_get", sub, name))
        raise not_found(kinds.StatefulSet, name)

    fake = FakeClient(
        interceptor=Interceptor(status_update=status_update, subresource_get=subresource_get)
    )
    s = fake.create(sts())
    fake.update_status({**s, "status": {"replicas": 1}})
    with pytest.raises(NotFound):
        fake.subresource("scale").get(kinds.StatefulSet, "web", NS)
    assert calls == [("status_update", "web"), ("subresource_get", "scale", "web")]
    assert fake.get(kinds.StatefulSet, "web", NS)["status"] == {"replicas": 1}


def test_fail_next(fake: FakeClient) -> None:
    fake.create(cm())
    fake.fail_next("update", conflict(kinds.ConfigMap, "a"), times=2)
    fake.fail_next("create", lambda action: already_exists(action.kind, action.name or ""))
    fake.fail_next("get", not_found(kinds.ConfigMap, "b"), when=lambda a: a.name == "b")
    current = fake.get(kinds.ConfigMap, "a", NS)
    for _ in range(2):
        with pytest.raises(Conflict):
            fake.update(current)
    fake.update(current)  # the third goes through
    with pytest.raises(AlreadyExists, match='configmaps "z" already exists'):
        fake.create(cm("z"))
    fake.create(cm("z"))
    assert fake.get(kinds.ConfigMap, "a", NS)  # `when` did not match: not used up
    fake.create(cm("b"))
    with pytest.raises(NotFound):
        fake.get(kinds.ConfigMap, "b", NS)
    assert fake.get(kinds.ConfigMap, "b", NS)
    verbs = [a.verb for a in fake.actions]
    assert verbs.count("update") == 3  # failed calls are recorded too
    with pytest.raises(ValueError, match="unknown verb"):
        fake.fail_next("frobnicate", conflict(kinds.ConfigMap, "a"))


def test_fail_next_on_status_writes_by_predicate(fake: FakeClient) -> None:
    s = fake.create(sts())
    fake.fail_next(
        "update", conflict(kinds.StatefulSet, "web"), when=lambda a: a.subresource == "status"
    )
    fake.update(s)  # the main resource is not matched
    with pytest.raises(Conflict):
        fake.status().update(s)


# ------------------------------------------------------------------------------ shape


def test_fake_client_is_a_client() -> None:
    assert isinstance(FakeClient(), ClientInterface)


def test_the_fake_imports_no_test_cluster() -> None:
    import kube_runtime.client.fake as fake_module
    import kube_runtime.client.interceptor as interceptor_module

    for module in (fake_module, interceptor_module):
        assert module.__file__ is not None
        tree = ast.parse(Path(module.__file__).read_text())
        imported = [
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        ] + [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ]
        assert not [m for m in imported if "envtest" in m], imported
        assert all(m.split(".")[0] in _ALLOWED_ROOTS for m in imported), imported


_ALLOWED_ROOTS = {
    "__future__",
    "builtins",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "kube_runtime",
    "pydantic",
    "secrets",
    "threading",
    "time",
    "typing",
    "uuid",
}
