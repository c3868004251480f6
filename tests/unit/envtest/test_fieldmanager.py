"""Unit tests of the field-management core (:mod:`kube_runtime.envtest.server.fieldmanager`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kube_runtime.envtest.server import crdschema
from kube_runtime.envtest.server import fieldmanager as fm
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import Registry, ResourceInfo

Obj = dict[str, Any]
NOW = "2026-01-01T00:00:00Z"


def _info(group: str, plural: str) -> ResourceInfo:
    info = Registry().by_key(group, plural)
    assert info is not None
    return info


DEPLOYMENTS = _info("apps", "deployments")
CONFIGMAPS = _info("", "configmaps")


def _now() -> str:
    return NOW


def deployment(replicas: int = 1, containers: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns", "labels": {"app": "d"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": containers or [{"name": "a", "image": "x:1"}]},
            },
        },
        "status": {"replicas": 0},
    }


# ------------------------------------------------------------------------ set algebra


def test_union_difference_intersection_with_members_and_children() -> None:
    a = {"f:data": {".": {}, "f:x": {}}, "f:spec": {"f:y": {}}}
    b = {"f:data": {"f:x": {}, "f:z": {}}}
    assert fm.union(a, b) == {"f:data": {".": {}, "f:x": {}, "f:z": {}}, "f:spec": {"f:y": {}}}
    # The map itself stays a member of a after its only key is taken away.
    assert fm.diff(a, b) == {"f:data": {}, "f:spec": {"f:y": {}}}
    assert fm.intersect(a, b) == {"f:data": {"f:x": {}}}
    assert fm.diff(b, a) == {"f:data": {"f:z": {}}}
    assert fm.union({}, b) is b and fm.diff(a, {}) is a and fm.intersect(a, {}) == {}


def test_paths_print_like_upstream() -> None:
    s = {
        "f:spec": {
            "f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}}},
            "f:replicas": {},
        },
        "f:metadata": {"f:finalizers": {'v:"x"': {}}},
        "f:list": {"i:0": {}},
    }
    assert list(fm.paths(s)) == [
        ".list[0]",
        '.metadata.finalizers[="x"]',
        '.spec.containers[name="a"]',
        '.spec.containers[name="a"].image',
        ".spec.replicas",
    ]


# ------------------------------------------------------------------------- field sets


def test_field_set_of_an_applied_deployment() -> None:
    node = fm.schema_for(DEPLOYMENTS)
    s = fm.field_set(deployment(), node)
    # apiVersion, kind, name, namespace and (main resource) status are owned by nobody.
    assert s == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},  # atomic, as LabelSelector upstream
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}, "f:name": {}}}
                },
            },
        },
    }


def test_create_marks_added_containers_but_not_go_structs() -> None:
    node = fm.schema_for(DEPLOYMENTS)
    added, modified, removed = fm.compare(None, deployment(), node)
    assert not modified and not removed
    assert added["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    spec = added["f:spec"]
    assert "." not in spec and "." not in spec["f:template"]
    assert spec["f:template"]["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}


def test_compare_finds_added_modified_removed() -> None:
    node = fm.schema_for(DEPLOYMENTS)
    old = deployment(containers=[{"name": "a", "image": "x:1"}, {"name": "b", "image": "y"}])
    new = deployment(replicas=3, containers=[{"name": "a", "image": "x:2"}])
    new["metadata"]["labels"]["tier"] = "web"
    added, modified, removed = fm.compare(old, new, node)
    assert added == {"f:metadata": {"f:labels": {"f:tier": {}}}}
    containers = 'k:{"name":"a"}'
    assert modified == {
        "f:spec": {
            "f:replicas": {},
            "f:template": {"f:spec": {"f:containers": {containers: {"f:image": {}}}}},
        }
    }
    gone = removed["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert gone == {'k:{"name":"b"}': {".": {}, "f:image": {}, "f:name": {}}}


# ------------------------------------------------------------------------------ merge


def test_merge_keyed_lists_atomic_values_and_nulls() -> None:
    node = fm.schema_for(DEPLOYMENTS)
    live = deployment(containers=[{"name": "a", "image": "x:1", "imagePullPolicy": "Always"}])
    live["spec"]["selector"] = {"matchLabels": {"app": "d", "old": "1"}}
    config = deployment(containers=[{"name": "b", "image": "y"}, {"name": "a", "image": "x:2"}])
    config["spec"]["paused"] = None
    merged = fm.merge(live, config, node)
    containers = merged["spec"]["template"]["spec"]["containers"]
    # The applied order wins for the applied items; live fields the config omits stay.
    assert containers == [
        {"name": "b", "image": "y"},
        {"name": "a", "image": "x:2", "imagePullPolicy": "Always"},
    ]
    assert merged["spec"]["selector"] == {"matchLabels": {"app": "d"}}  # atomic: replaced
    assert "paused" not in merged["spec"]
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "x:1"


def test_merge_keeps_live_only_items_in_place() -> None:
    node = fm.schema_for(DEPLOYMENTS)
    items = [{"name": n, "image": "i"} for n in ("a", "b", "c")]
    merged = fm.merge(
        deployment(containers=items), deployment(containers=[{"name": "b", "image": "j"}]), node
    )
    names = [(c["name"], c["image"]) for c in merged["spec"]["template"]["spec"]["containers"]]
    assert names == [("a", "i"), ("b", "j"), ("c", "i")]


@pytest.mark.parametrize(
    "containers, message",
    [
        ([{"image": "x"}], "omits key field"),
        ([{"name": "a"}, {"name": "a"}], "duplicate entries"),
    ],
)
def test_merge_refuses_bad_keyed_lists(containers: list[Obj], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fm.merge(deployment(), deployment(containers=containers), fm.schema_for(DEPLOYMENTS))


# ------------------------------------------------------------------------------ apply


def _apply(live: Obj | None, config: Obj, manager: str, force: bool = False) -> Obj:
    obj, entries = fm.apply(
        DEPLOYMENTS,
        copy.deepcopy(live) if live is not None else None,
        config,
        manager,
        "apps/v1",
        "",
        force,
        _now,
    )
    fm.set_managed_fields(obj, entries)
    return obj


def _managers(obj: Obj) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields") or ()]


def test_apply_conflict_force_and_shared_ownership() -> None:
    first = _apply(None, deployment(), "a")
    assert _managers(first) == [("a", "Apply")]
    shared = _apply(first, deployment(), "b")
    assert _managers(shared) == [("a", "Apply"), ("b", "Apply")]
    with pytest.raises(ApiError) as info:
        _apply(shared, deployment(replicas=2), "b")
    err = info.value
    assert err.code == 409 and err.reason == "Conflict"
    assert err.details["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "a"',
            "field": ".spec.replicas",
        }
    ]
    forced = _apply(shared, deployment(replicas=2), "b", force=True)
    fields = {e["manager"]: e["fieldsV1"] for e in forced["metadata"]["managedFields"]}
    assert "f:replicas" not in fields["a"]["f:spec"]
    assert "f:replicas" in fields["b"]["f:spec"]


def test_apply_removes_what_the_manager_stopped_applying() -> None:
    two = [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]
    first = _apply(None, deployment(containers=two), "m")
    first["spec"]["template"]["spec"]["containers"][1]["imagePullPolicy"] = "Always"  # default
    again = _apply(first, deployment(containers=two[:1]), "m")
    assert [c["name"] for c in again["spec"]["template"]["spec"]["containers"]] == ["a"]


def test_apply_before_first_apply_owns_untracked_objects() -> None:
    live = deployment()
    with pytest.raises(ApiError) as info:
        _apply(live, deployment(replicas=4), "m")
    assert info.value.details["causes"][0]["message"] == (
        'conflict with "before-first-apply" using apps/v1'
    )


def test_apply_checks_kind_and_managed_fields() -> None:
    with pytest.raises(ApiError) as info:
        _apply(None, {**deployment(), "kind": "StatefulSet"}, "m")
    assert info.value.code == 400
    config = deployment()
    config["metadata"]["managedFields"] = []
    with pytest.raises(ApiError, match="managedFields must be nil"):
        _apply(None, config, "m")


# ------------------------------------------------------------------------- updates


def _cm(**data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data}


def _update(old: Obj | None, new: Obj, manager: str) -> Obj:
    fm.update_managed_fields(CONFIGMAPS, old, new, manager, "v1", "", _now)
    return new


def test_update_moves_changed_fields_and_resets() -> None:
    created = _update(None, _cm(a="1"), "creator")
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "creator",
            "operation": "Update",
            "apiVersion": "v1",
            "time": NOW,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
        }
    ]
    edited = copy.deepcopy(created)
    edited["data"]["a"] = "2"
    edited = _update(created, edited, "editor")
    assert _managers(edited) == [("creator", "Update"), ("editor", "Update")]
    # Unchanged object: no entry changes, even with the client's time in another format.
    same = copy.deepcopy(edited)
    same["metadata"]["managedFields"][0]["time"] = "2026-01-01T00:00:00+00:00"
    assert _update(edited, same, "third")["metadata"] == edited["metadata"]
    for reset in ([], [{}]):
        cleared = copy.deepcopy(edited)
        cleared["metadata"]["managedFields"] = reset
        assert "managedFields" not in _update(edited, cleared, "x")["metadata"]


def test_update_by_the_only_manager_restamps_its_entry() -> None:
    """The writer's own entry, the only one, echoed back or not sent: its fields merged as
    the general path merges them (the member mark, then the changed ones), with the write's time."""
    created = _update(None, _cm(a="1", b="1"), "m")
    for sent in ("echoed", "copied", "absent"):
        edited = copy.deepcopy(created)
        if sent == "echoed":
            edited["metadata"]["managedFields"] = created["metadata"]["managedFields"]
        elif sent == "absent":
            del edited["metadata"]["managedFields"]
        edited["data"]["b"] = "2"
        edited["data"]["c"] = "1"
        fm.update_managed_fields(CONFIGMAPS, created, edited, "m", "v1", "", lambda: "later")
        (entry,) = edited["metadata"]["managedFields"]
        assert entry == {
            "manager": "m",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "later",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:c": {}, "f:b": {}, "f:a": {}}},
        }
        assert list(entry["fieldsV1"]["f:data"]) == [".", "f:c", "f:b", "f:a"]
    # Another manager's write, or a removal, takes the general path: two entries.
    other = copy.deepcopy(created)
    other["data"]["b"] = "3"
    assert _managers(_update(created, other, "n")) == [("m", "Update"), ("n", "Update")]


def test_manager_from_user_agent_and_validation() -> None:
    assert fm.manager_from_user_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/abc") == "kubectl"
    assert fm.manager_from_user_agent("") == ""
    with pytest.raises(ApiError) as info:
        fm.validate_field_manager("x" * 129)
    assert info.value.code == 422


def test_crd_schema_lists() -> None:
    compiled = crdschema.compile_schema(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name", "proto"],
                            "items": {"type": "object"},
                        },
                        "tags": {
                            "type": "array",
                            "x-kubernetes-list-type": "set",
                            "items": {"type": "string"},
                        },
                        "raw": {"type": "array", "items": {"type": "string"}},
                    },
                }
            },
        }
    )
    info = ResourceInfo(
        group="x.io",
        versions=("v1",),
        kind="W",
        plural="ws",
        singular="w",
        namespaced=True,
        custom=True,
        schemas={"v1": compiled},
    )
    obj = {
        "apiVersion": "x.io/v1",
        "kind": "W",
        "metadata": {"name": "w"},
        "spec": {"ports": [{"name": "a", "proto": "TCP"}], "tags": ["t"], "raw": ["r"]},
    }
    assert fm.field_set(obj, fm.schema_for(info)) == {
        "f:spec": {
            "f:ports": {'k:{"name":"a","proto":"TCP"}': {".": {}, "f:name": {}, "f:proto": {}}},
            "f:tags": {'v:"t"': {}},
            "f:raw": {},
        }
    }
