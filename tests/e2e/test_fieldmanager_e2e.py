"""Field management and server-side apply against the session cluster (``metadata.managedFields``).

Checks what kube-apiserver does (structured-merge-diff semantics): Update entries per manager,
apiVersion and subresource, ownership moving to the writer of a changed field, Apply merging
associative lists by key, removal of fields an applier stopped applying, 409 conflicts with one
cause per field, ``force`` taking fields over; the framework client and both kubectl versions.
"""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client, Conflict

from .test_kubectl_e2e import _BINARIES

Obj = dict[str, Any]


def _entries(obj: Obj) -> list[tuple[str, str, str]]:
    """(manager, operation, subresource) of each managedFields entry, in stored order."""
    return [
        (e["manager"], e["operation"], e.get("subresource", ""))
        for e in obj["metadata"].get("managedFields") or ()
    ]


def _fields_of(obj: Obj, manager: str, operation: str) -> Obj:
    for e in obj["metadata"].get("managedFields") or ():
        if e["manager"] == manager and e["operation"] == operation:
            assert e["fieldsType"] == "FieldsV1" and e["time"].endswith("Z")
            fields: Obj = e["fieldsV1"]
            return fields
    raise AssertionError(f"no {operation} entry of {manager}: {_entries(obj)}")


def _statefulset(name: str, namespace: str, replicas: int = 1) -> Obj:
    """A StatefulSet: a kind with status and scale subresources that no controller of either
    test backend writes to (a Deployment's controller would add its own managedFields)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "serviceName": name,
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
        },
    }


def _cm(name: str, namespace: str, **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def test_update_entries_follow_changed_fields(client: Client, namespace: str) -> None:
    created = client.create(_cm("cm", namespace, a="1", b="2"), field_manager="creator")
    assert _entries(created) == [("creator", "Update", "")]
    assert _fields_of(created, "creator", "Update") == {"f:data": {".": {}, "f:a": {}, "f:b": {}}}
    # Another manager changes one key and adds one: it owns those, the creator keeps the rest.
    changed = copy.deepcopy(created)
    changed["data"] = {"a": "1", "b": "3", "c": "4"}
    updated = client.update(changed, field_manager="editor")
    assert [m for m, _, _ in _entries(updated)] == ["creator", "editor"] or [
        m for m, _, _ in _entries(updated)
    ] == ["editor", "creator"]
    assert _fields_of(updated, "creator", "Update") == {"f:data": {".": {}, "f:a": {}}}
    assert _fields_of(updated, "editor", "Update") == {"f:data": {"f:b": {}, "f:c": {}}}
    # A write that changes nothing changes no entry (and commits nothing).
    same = client.update(copy.deepcopy(updated), field_manager="third")
    assert same["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    assert "third" not in [m for m, _, _ in _entries(same)]
    # A patch without ?fieldManager= is recorded under the User-Agent's product name.
    patched = client.patch("v1/ConfigMap", "cm", {"data": {"d": "5"}}, namespace=namespace)
    assert "kube-runtime" in [m for m, _, _ in _entries(patched)]
    # Removing a field takes it from its owner; an owner left with nothing disappears.
    client.patch(
        "v1/ConfigMap", "cm", {"data": {"d": None}}, namespace=namespace, field_manager="x"
    )
    final = client.get("v1/ConfigMap", "cm", namespace)
    assert "kube-runtime" not in [m for m, _, _ in _entries(final)]


def test_managed_fields_reset_and_kept(
    client: Client, namespace: str, kube_version: tuple[int, int]
) -> None:
    created = client.create(_cm("reset", namespace, a="1"), field_manager="creator")
    # An update that leaves managedFields out keeps them (clients unaware of the field).
    body = copy.deepcopy(created)
    del body["metadata"]["managedFields"]
    body["data"]["a"] = "2"
    kept = client.update(body, field_manager="editor")
    assert {m for m, _, _ in _entries(kept)} == {"creator", "editor"}
    # The creator keeps the map itself (as upstream: the "." member), not the changed key.
    assert _fields_of(kept, "creator", "Update") == {"f:data": {}}
    # An empty list resets them; the write itself is then recorded afresh.
    body = copy.deepcopy(kept)
    body["metadata"]["managedFields"] = []
    body["data"]["b"] = "3"
    reset = client.update(body, field_manager="resetter")
    if kube_version <= (1, 20):  # 1.20 left a reset object without any entry
        assert _entries(reset) == []
        return
    assert _entries(reset) == [("resetter", "Update", "")]
    assert _fields_of(reset, "resetter", "Update") == {"f:data": {"f:b": {}}}


def test_status_and_scale_writes_are_subresource_entries(
    client: Client, namespace: str, kube_version: tuple[int, int]
) -> None:
    client.create(_statefulset("sub", namespace), field_manager="creator")
    client.patch(
        "apps/v1/StatefulSet",
        "sub",
        {"status": {"observedGeneration": 1}},
        namespace=namespace,
        subresource="status",
        field_manager="statuser",
    )
    client.patch(
        "apps/v1/StatefulSet",
        "sub",
        {"spec": {"replicas": 4}},
        namespace=namespace,
        subresource="scale",
        field_manager="scaler",
    )
    obj = client.get("apps/v1/StatefulSet", "sub", namespace)
    entries = _entries(obj)
    if kube_version < (1, 22):  # entries name no subresource, scale writes record none
        assert ("statuser", "Update", "") in entries
        assert "scaler" not in {m for m, _, _ in entries}
        return
    assert ("statuser", "Update", "status") in entries
    assert ("scaler", "Update", "scale") in entries
    scaled = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "scaler")
    assert scaled["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    status = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "statuser")
    assert status["fieldsV1"] == {"f:status": {"f:observedGeneration": {}}}
    # The creator no longer owns spec.replicas.
    assert "f:replicas" not in _fields_of(obj, "creator", "Update")["f:spec"]


def test_apply_conflicts_force_and_ownership(client: Client, namespace: str) -> None:
    first = client.apply(_statefulset("web", namespace), field_manager="a", force=False)
    assert _entries(first) == [("a", "Apply", "")]
    fields = _fields_of(first, "a", "Apply")
    assert fields["f:spec"]["f:selector"] == {}  # label selectors are atomic
    assert fields["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}}
    }
    # b applies the same values: no conflict, shared ownership.
    shared = client.apply(_statefulset("web", namespace), field_manager="b", force=False)
    assert [m for m, _, _ in _entries(shared)] == ["a", "b"]
    # b changes a field a owns: 409 Conflict with one cause per field.
    with pytest.raises(Conflict) as info:
        client.apply(_statefulset("web", namespace, replicas=5), field_manager="b", force=False)
    err = info.value
    assert err.status["reason"] == "Conflict"
    assert err.status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "a"',
            "field": ".spec.replicas",
        }
    ]
    assert (
        err.status["message"] == 'Apply failed with 1 conflict: conflict with "a": .spec.replicas'
    )
    # force takes it over: a loses spec.replicas, b owns it.
    forced = client.apply(_statefulset("web", namespace, replicas=5), field_manager="b", force=True)
    assert forced["spec"]["replicas"] == 5
    assert "f:replicas" not in _fields_of(forced, "a", "Apply")["f:spec"]
    assert "f:replicas" in _fields_of(forced, "b", "Apply")["f:spec"]
    # An Update manager's fields conflict too, named with their apiVersion.
    client.patch(
        "apps/v1/StatefulSet",
        "web",
        {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}},
        namespace=namespace,
        field_manager="kubectl-edit",
    )
    mine = _statefulset("web", namespace, replicas=5)
    mine["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    with pytest.raises(Conflict) as info:
        client.apply(mine, field_manager="b", force=False)
    assert info.value.status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-edit" using apps/v1',
            "field": ".spec.updateStrategy.type",
        }
    ]


def test_apply_merges_lists_by_key_and_removes_what_it_stopped_applying(
    client: Client, namespace: str
) -> None:
    dep = _statefulset("lists", namespace)
    containers = dep["spec"]["template"]["spec"]["containers"]
    containers.append({"name": "sidecar", "image": "busybox:1"})
    dep["metadata"]["labels"] = {"x": "1", "y": "2"}
    client.apply(dep, field_manager="owner")
    # Another manager adds its own container: a keyed list merges item by item.
    other = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "lists", "namespace": namespace},
        "spec": {
            "template": {"spec": {"containers": [{"name": "extra", "image": "redis:1"}]}},
        },
    }
    merged = client.apply(other, field_manager="other")
    names = [c["name"] for c in merged["spec"]["template"]["spec"]["containers"]]
    assert names == ["app", "sidecar", "extra"]
    # The owner drops the sidecar and label y: both go; "extra" (other's) stays.
    again = _statefulset("lists", namespace)
    again["metadata"]["labels"] = {"x": "1"}
    result = client.apply(again, field_manager="owner")
    names = [c["name"] for c in result["spec"]["template"]["spec"]["containers"]]
    assert names == ["app", "extra"]
    assert result["metadata"]["labels"] == {"x": "1"}
    # Re-applying the same configuration is a no-op: no new resourceVersion.
    same = client.apply(again, field_manager="owner")
    assert same["metadata"]["resourceVersion"] == result["metadata"]["resourceVersion"]


def test_apply_keeps_fields_another_manager_owns(client: Client, namespace: str) -> None:
    client.apply(_cm("co", namespace, a="1", b="2"), field_manager="one")
    client.apply(_cm("co", namespace, b="2"), field_manager="two")
    # "one" stops applying b, but "two" owns it too: b stays; a goes.
    result = client.apply(_cm("co", namespace), field_manager="one")
    assert result["data"] == {"b": "2"}


def test_apply_requires_field_manager_and_kind(
    client: Client, namespace: str, kube_version: tuple[int, int]
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/req"
    body = _cm("req", namespace, a="1")
    with pytest.raises(ApiError) as info:
        client.request("PATCH", path, body=body, content_type="application/apply-patch+yaml")
    assert info.value.code == 422
    assert "fieldManager: Required value" in info.value.status["message"]
    wrong = {**body, "kind": "Secret"}
    with pytest.raises(ApiError) as info:
        client.request(
            "PATCH",
            path,
            query={"fieldManager": "m"},
            body=wrong,
            content_type="application/apply-patch+yaml",
        )
    # 1.20 fails such an apply with a 500 ("failed to merge config: expected objects of the
    # same type"); later releases answer 400
    assert info.value.code == (400 if kube_version > (1, 20) else 500)
    with pytest.raises(ApiError) as info:
        client.request(
            "PATCH",
            path,
            query={"fieldManager": "m", "force": "true"},
            body={"data": {"a": "1"}},
            content_type="application/merge-patch+json",
        )
    assert info.value.code == 422


def test_apply_of_a_field_the_schema_does_not_declare_fails(client: Client, namespace: str) -> None:
    """Server-side apply types the applied configuration against the kind's schema, whatever
    field validation says: an undeclared field fails the request (a 500 with no reason, as
    kube-apiserver answers) and nothing is stored."""
    body = {**_cm("undeclared", namespace, a="1"), "spec": {"x": 1}}
    path = f"/api/v1/namespaces/{namespace}/configmaps/undeclared"
    with pytest.raises(ApiError) as info:
        client.request(
            "PATCH",
            path,
            query={"fieldManager": "m"},
            body=body,
            content_type="application/apply-patch+yaml",
        )
    assert info.value.code == 500
    message = info.value.status["message"]
    assert message.startswith("failed to create typed patch object"), message
    assert ".spec: field not declared in schema" in message
    with pytest.raises(ApiError) as missing:
        client.request("GET", path)
    assert missing.value.code == 404


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.fm.example.com"},
    "spec": {
        "group": "fm.example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
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
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "port": {"type": "integer"},
                                            },
                                        },
                                    },
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


def test_custom_resource_lists_follow_the_crd_schema(
    client: Client, namespace: str, wait_for: Any
) -> None:
    try:
        client.create(CRD)
    except ApiError as e:
        if e.code != 409:
            raise
    kind = "fm.example.com/v1/Gadget"

    def served() -> bool:
        try:
            client.list(kind, namespace)
            return True
        except ApiError:
            return False

    wait_for(served, timeout=10)

    def gadget(ports: list[Obj], tags: list[str]) -> Obj:
        return {
            "apiVersion": "fm.example.com/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": {"ports": ports, "tags": tags},
        }

    client.apply(gadget([{"name": "a", "port": 1}], ["x"]), field_manager="one")
    result = client.apply(gadget([{"name": "b", "port": 2}], ["y"]), field_manager="two")
    # ports is a map list keyed by name: both items; tags is atomic: two's value replaces it,
    # and one keeps no claim on it (a conflict without force).
    assert [p["name"] for p in result["spec"]["ports"]] == ["a", "b"]
    assert result["spec"]["tags"] == ["y"]
    fields = _fields_of(result, "two", "Apply")
    assert fields["f:spec"]["f:tags"] == {}
    assert 'k:{"name":"b"}' in fields["f:spec"]["f:ports"]
    with pytest.raises(Conflict):
        client.apply(gadget([{"name": "a", "port": 1}], ["x"]), field_manager="one", force=False)


@pytest.mark.kubectl
@pytest.mark.parametrize("version", sorted(_BINARIES))
def test_kubectl_server_side_apply(version: str, kubeconfig: Path, namespace: str) -> None:
    binary = _BINARIES[version]
    if binary is None:
        pytest.skip(f"kubectl ({version}) not installed: run `make kubectl`")

    def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [binary, "--kubeconfig", str(kubeconfig), "-n", namespace, *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)

    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  k: VALUE\n"
    out = kubectl("apply", "--server-side", "-f", "-", stdin=manifest.replace("VALUE", "one"))
    assert out.returncode == 0, out.stderr
    assert "serverside-applied" in out.stdout
    # A different manager edits the value; kubectl's next apply conflicts with it.
    out = kubectl("patch", "configmap", "ssa", "--type=merge", "-p", '{"data":{"k":"edited"}}')
    assert out.returncode == 0, out.stderr
    out = kubectl("apply", "--server-side", "-f", "-", stdin=manifest.replace("VALUE", "two"))
    assert out.returncode != 0
    assert "conflict" in (out.stderr + out.stdout).lower()
    assert ".data.k" in out.stderr + out.stdout
    out = kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        "-",
        stdin=manifest.replace("VALUE", "two"),
    )
    assert out.returncode == 0, out.stderr
    out = kubectl("get", "configmap", "ssa", "-o", "jsonpath={.data.k}")
    assert out.stdout == "two"
    out = kubectl("get", "configmap", "ssa", "-o", "jsonpath={.metadata.managedFields[*].manager}")
    assert "kubectl" in out.stdout.split()
