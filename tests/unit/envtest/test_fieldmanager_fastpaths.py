"""The field manager's shortcuts give what its generic steps give.

* :func:`fieldmanager.compare` looks members up in the schema only where they differ; the
  reference here is the member-by-member comparison it replaced.
* :func:`fieldmanager.update_managed_fields` writes a create's (or an object's first) entry
  directly; the reference is the generic sequence (take over, check, encode).
* A pod created through the embedded server keys the field-set memo of its spec with the
  encoding its strategy validated: the stored managedFields are those of a spec encoded afresh.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from kube_runtime.envtest.server import fieldmanager as fm
from kube_runtime.envtest.server.resources import Registry

Obj = dict[str, Any]
REGISTRY = Registry()
PODS = REGISTRY.by_key("", "pods")
LEASES = REGISTRY.by_key("coordination.k8s.io", "leases")
assert PODS is not None and LEASES is not None
NOW = "2026-01-01T00:00:00Z"
_MISSING = object()


def _reference_children(
    old: Any, new: Any, node: fm.FNode, added: Obj, modified: Obj, removed: Obj
) -> None:
    """The comparison as written before the shortcut (every member's node looked up)."""
    if isinstance(old, dict):
        for k, ov in old.items():
            child = node.fields.get(k, node.default)
            if child.kind == fm.IGNORE:
                continue
            nv = new.get(k, _MISSING)
            if nv is _MISSING:
                removed["f:" + k] = fm._all(ov, child)
            elif ov is not nv and (ov != nv or type(ov) is not type(nv)):
                _reference_value(ov, nv, child, "f:" + k, added, modified, removed)
        for k, nv in new.items():
            if k not in old:
                child = node.fields.get(k, node.default)
                if child.kind != fm.IGNORE:
                    added["f:" + k] = fm._all(nv, child)
        return
    old_items = dict(zip(fm._item_pes(old, node), old, strict=True))
    new_items = dict(zip(fm._item_pes(new, node), new, strict=True))
    for pe, ov in old_items.items():
        nv = new_items.get(pe, _MISSING)
        if nv is _MISSING:
            removed[pe] = fm._all(ov, node.elem)
        elif ov != nv or type(ov) is not type(nv):
            _reference_value(ov, nv, node.elem, pe, added, modified, removed)
    for pe, nv in new_items.items():
        if pe not in old_items:
            added[pe] = fm._all(nv, node.elem)


def _reference_value(
    ov: Any, nv: Any, node: fm.FNode, pe: str, added: Obj, modified: Obj, removed: Obj
) -> None:
    if type(ov) is type(nv) and (ov or nv) and fm._is_container(ov, node):
        a: Obj = {}
        m: Obj = {}
        r: Obj = {}
        _reference_children(ov, nv, node, a, m, r)
        if a:
            added[pe] = a
        if m:
            modified[pe] = m
        if r:
            removed[pe] = r
        return
    modified[pe] = {}


def _pod(rng: random.Random) -> Obj:
    containers = [
        {
            "name": f"c{i}",
            "image": rng.choice(["nginx", "busybox"]),
            "ports": [{"containerPort": 80 + j} for j in range(rng.randint(0, 2))],
            "resources": {"requests": {"cpu": rng.choice(["1", "100m"])}},
            "env": [{"name": "A", "value": str(rng.randint(0, 3))}],
        }
        for i in range(rng.randint(1, 3))
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "n",
            "resourceVersion": str(rng.randint(1, 9)),
            "labels": {"a": rng.choice(["x", "y"]), "b": "z"},
            "finalizers": rng.sample(["f1", "f2", "f3"], rng.randint(0, 3)),
        },
        "spec": {
            "containers": containers,
            "nodeName": rng.choice(["", "n1"]),
            "priority": rng.choice([0, 1, True, 1.0]),
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
        "status": {"phase": rng.choice(["Pending", "Running"])},
    }


_VALUES: list[Any] = [None, 0, 1, 1.0, True, False, "", "s", {}, [], {"x": 1}, [1, 2], [{"a": 1}]]


def _mutate(rng: random.Random, value: Any) -> Any:
    """``value`` with a few random changes (values, types, keys added, removed, reordered)."""
    value = copy.deepcopy(value)
    for _ in range(rng.randint(0, 4)):
        target = value
        while True:
            if isinstance(target, dict) and target:
                key = rng.choice(list(target))
                if rng.random() < 0.5 and isinstance(target[key], (dict, list)) and target[key]:
                    target = target[key]
                    continue
                action = rng.random()
                if action < 0.4:
                    target[key] = copy.deepcopy(rng.choice(_VALUES))
                elif action < 0.6:
                    del target[key]
                elif action < 0.8:
                    target["new" + str(rng.randint(0, 2))] = copy.deepcopy(rng.choice(_VALUES))
                else:  # the same members in another order
                    items = list(target.items())
                    rng.shuffle(items)
                    target.clear()
                    target.update(items)
            elif isinstance(target, list) and target:
                i = rng.randrange(len(target))
                if rng.random() < 0.5 and isinstance(target[i], (dict, list)) and target[i]:
                    target = target[i]
                    continue
                target[i] = copy.deepcopy(rng.choice(_VALUES))
            break
    return value


def test_compare_matches_the_member_by_member_comparison() -> None:
    rng = random.Random(7)
    node = fm.schema_for(PODS)
    for _ in range(3000):
        old = _pod(rng)
        new = _mutate(rng, old) if rng.random() < 0.9 else old
        expected: tuple[Obj, Obj, Obj] = ({}, {}, {})
        _reference_children(old, new, node, *expected)
        got = fm.compare(old, new, node)
        # equal sets, in the same order (the stored fieldsV1 keep it)
        assert orjson.dumps(got) == orjson.dumps(expected), (old, new)


def _generic_create(old: Obj | None, new: Obj, key: Any, api_version: str) -> list[Obj] | None:
    """managedFields of a write with no entries before, by the generic steps."""
    added, modified, removed = fm.compare(old, new, fm.schema_for(PODS))
    changed = fm.union(added, modified)
    managed: dict[Any, Obj] = {}
    fm._take_over(managed, None, changed, removed)
    if changed:
        managed[key] = fm._entry(key, api_version, NOW, changed)
    fm._check_operations(PODS, new["metadata"], managed)
    meta: Obj = {}
    fm._set_managed(meta, managed)
    return meta.get("managedFields")


def test_first_entry_matches_the_generic_steps() -> None:
    rng = random.Random(11)
    for i in range(1500):
        new = _mutate(rng, _pod(rng))
        new.setdefault("metadata", {})
        if not isinstance(new["metadata"], dict):
            new["metadata"] = {}
        old = None if i % 3 else _mutate(rng, new)
        if old is not None:
            if not isinstance(old.get("metadata"), dict):
                old["metadata"] = {}
            old["metadata"].pop("managedFields", None)
        if i % 5 == 0:  # a client's malformed managedFields: ignored
            new["metadata"]["managedFields"] = [{"fieldsType": "FieldsV2"}]
        key = ("m", "Update", "v1", "")
        expected = _generic_create(old, copy.deepcopy(new), key, "v1")
        written = copy.deepcopy(new)
        fm.update_managed_fields(PODS, old, written, "m", "v1", "", lambda: NOW)
        assert written["metadata"].get("managedFields") == expected
        if expected is not None:
            assert orjson.dumps(written["metadata"]["managedFields"]) == orjson.dumps(expected)


def test_created_pods_managed_fields_do_not_depend_on_the_known_spec_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pods from one template (their spec replayed and its encoding known) get the
    managedFields that the spec's field set computed afresh gives."""
    from kube_runtime.envtest.server import memo
    from kube_runtime.envtest.server.storage import Store
    from kube_runtime.envtest.server.strategy import KubeStrategy
    from kube_runtime.envtest.server.writes import Writes

    store = Store(REGISTRY, KubeStrategy())
    namespaces = REGISTRY.by_key("", "namespaces")
    assert namespaces is not None
    store.create(namespaces, None, {"metadata": {"name": "n"}})
    writes = Writes(store, lambda op, info, obj: None)
    from kube_runtime.envtest.server import routing
    from kube_runtime.envtest.server.http import Request

    route = routing.route(REGISTRY, ["api", "v1", "namespaces", "n", "pods"])
    assert route is not None
    told: list[bytes] = []
    known_key = memo.known_key

    def telling(value: Any, key: bytes) -> None:
        told.append(key)
        known_key(value, key)

    monkeypatch.setattr(memo, "known_key", telling)  # the writes' hook calls it so
    seen = []
    for i in range(6):
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "labels": {"app": "a"}},
            "spec": {
                "containers": [
                    {"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}
                ]
            },
        }
        headers = {"content-type": "application/json", "user-agent": "t/1"}
        response = writes.create(
            Request("POST", "/api/v1/namespaces/n/pods", headers, orjson.dumps(body)), route
        )
        assert response.status == 201
        stored = orjson.loads(response.body)
        fm._memo.clear()  # the field sets computed afresh from the stored object
        fresh = copy.deepcopy(stored)
        fresh["metadata"].pop("managedFields")
        fm.update_managed_fields(PODS, None, fresh, "t", "v1", "", lambda: NOW)
        got = stored["metadata"]["managedFields"]
        assert [e["fieldsV1"] for e in got] == [
            e["fieldsV1"] for e in fresh["metadata"]["managedFields"]
        ]
        assert orjson.dumps(got[0]["fieldsV1"]) == orjson.dumps(
            fresh["metadata"]["managedFields"][0]["fieldsV1"]
        )
        seen.append(got[0]["fieldsV1"])
    assert memo.json_key({"a": 1}) == b'{"a":1}'  # nothing left known after the writes
    assert all(s == seen[0] for s in seen)
    assert len(told) >= 3  # the spec's encoding was known from the third pod on


def test_echoed_managed_fields_count_as_the_live_ones() -> None:
    """An update that sends back an equal copy of the live managedFields gets what one that
    sends the very live list gets (the copy is not compared again)."""
    rng = random.Random(13)
    for i in range(1500):
        old = _pod(rng)
        managers = [("a", "v1"), ("b", "v1"), ("a", "v2")][: 1 + i % 3]
        for manager, version in managers:
            fm.update_managed_fields(
                PODS,
                None if manager == "a" and version == "v1" else old,
                old,
                manager,
                version,
                "",
                lambda: NOW,
            )
        new = _mutate(rng, old)
        if not isinstance(new.get("metadata"), dict):
            continue
        new["metadata"]["managedFields"] = old["metadata"].get("managedFields")
        same = copy.deepcopy(new)
        same["metadata"]["managedFields"] = old["metadata"].get("managedFields")
        echoed = copy.deepcopy(new)  # an equal copy, as a client sends it back
        manager = rng.choice(["a", "b", "c"])
        fm.update_managed_fields(PODS, old, same, manager, "v1", "", lambda: NOW)
        fm.update_managed_fields(PODS, old, echoed, manager, "v1", "", lambda: NOW)
        assert orjson.dumps(echoed) == orjson.dumps(same)


def test_field_manager_characters_are_those_from_space_to_tilde() -> None:
    """validate_field_manager's test of the characters (ASCII and printable) takes exactly
    the characters " " to "~", as upstream's check of each one does."""
    from kube_runtime.envtest.server.errors import ApiError

    for code in range(0x110000):
        ch = chr(code)
        allowed = " " <= ch <= "~"
        try:
            fm.validate_field_manager("m" + ch)
            taken = True
        except ApiError:
            taken = False
        assert taken == allowed, hex(code)
