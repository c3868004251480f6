"""Malformed input to the field manager: wrong shapes where maps belong, in applied
configurations and in the ``managedFields`` a client writes, end in an :class:`ApiError`
below 500 or a valid result, never in another exception, and what is stored always reads
back as field sets.

The server refuses many of these shapes before the field manager sees them (ObjectMeta's and
built-in kinds' JSON types, custom resources' schemas); these tests call the field manager
directly, so each shape reaches it.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kube_runtime.envtest.server import crdschema
from kube_runtime.envtest.server import fieldmanager as fm
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import Registry, ResourceInfo

Obj = dict[str, Any]
NOW = "2026-01-01T00:00:00Z"
PODS = Registry().by_key("", "pods")
assert PODS is not None
CUSTOM = ResourceInfo(
    group="x.io",
    versions=("v1",),
    kind="W",
    plural="ws",
    singular="w",
    namespaced=True,
    custom=True,
    has_status=True,
    schemas={
        "v1": crdschema.compile_schema(
            {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {
                            "items": {
                                "type": "array",
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string"},
                                        "v": {
                                            "type": "object",
                                            "x-kubernetes-preserve-unknown-fields": True,
                                        },
                                    },
                                },
                            },
                            "tags": {
                                "type": "array",
                                "x-kubernetes-list-type": "set",
                                "items": {"type": "string"},
                            },
                            "m": {"type": "object", "additionalProperties": {"type": "string"}},
                        },
                    },
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }
        )
    },
)
NOT_MAPS: list[Any] = ["x", "", 5, 1.5, True, [], [1], ["x"], [[1]], [{"a": 1}], [[{"f:x": {}}]]]


def _now() -> str:
    return NOW


def pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "annotations": {"n": "v"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "env": [{"name": "E", "value": "1"}],
                    "resources": {"requests": {"cpu": "1"}},
                }
            ],
            "tolerations": [{"key": "k"}],
        },
    }


def custom() -> Obj:
    return {
        "apiVersion": "x.io/v1",
        "kind": "W",
        "metadata": {
            "name": "w",
            "labels": {"a": "b"},
            "finalizers": ["f"],
            "ownerReferences": [{"uid": "u", "name": "n"}],
        },
        "spec": {
            "items": [{"name": "a", "v": {"q": [1]}}],
            "tags": ["t"],
            "m": {"k": "v"},
            "free": {"x": {"y": 1}},
        },
        "status": {"s": {"a": 1}},
    }


KINDS = [(PODS, pod), (CUSTOM, custom)]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def swap_maps(rng: random.Random, body: Any, rounds: int) -> Any:
    """``body`` with ``rounds`` of its objects, at any depth, replaced by a non-object."""
    body = copy.deepcopy(body)
    for _ in range(rounds):
        maps = [p for p in _paths(body) if p and isinstance(_at(body, p), dict)]
        if not maps:
            break
        path = rng.choice(maps)
        _at(body, path[:-1])[path[-1]] = copy.deepcopy(rng.choice(NOT_MAPS))
    return body


def _at(body: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        body = body[key]
    return body


def _assert_readable(obj: Obj) -> None:
    """Every stored entry's fieldsV1 is a field set in canonical form."""
    for entry in obj["metadata"].get("managedFields") or ():
        fields = entry["fieldsV1"]
        assert fm._read_set(fields, True) == fields, entry


def _created(info: ResourceInfo, body: Obj) -> Obj:
    obj, entries = fm.apply(info, None, body, "first", body["apiVersion"], "", False, _now)
    fm.set_managed_fields(obj, entries)
    return obj


def _step(rng: random.Random, info: ResourceInfo, fresh: Obj, live: Obj) -> Obj:
    """One random write to ``live``: an apply of a configuration with non-objects where
    objects belong, or an update whose managedFields (and maybe body) hold them."""
    api_version = fresh["apiVersion"]
    if rng.random() < 0.5:
        config = swap_maps(rng, fresh, rng.randint(1, 3))
        config.update(apiVersion=api_version, kind=info.kind)
        sub = rng.choice(["", "", "status"])
        obj, entries = fm.apply(
            info, copy.deepcopy(live), config, rng.choice(["first", "other"]), api_version, sub,
            rng.random() < 0.5, _now,
        )  # fmt: skip
        fm.set_managed_fields(obj, entries)
        return obj
    new = copy.deepcopy(live)
    meta = new["metadata"]
    entries = meta.get("managedFields") or [
        {"manager": "m", "operation": "Update", "apiVersion": api_version, "fieldsType": "FieldsV1"}
    ]
    entry = rng.choice(entries)
    fields = entry.get("fieldsV1")
    if isinstance(fields, dict) and fields and rng.random() < 0.7:
        entry["fieldsV1"] = swap_maps(rng, fields, rng.randint(1, 2))
    else:
        entry["fieldsV1"] = copy.deepcopy(rng.choice([*NOT_MAPS, None]))
    meta["managedFields"] = entries
    if rng.random() < 0.5:
        spec = swap_maps(rng, {"spec": new["spec"]}, 1)["spec"]
        new["spec"] = spec
    fm.update_managed_fields(info, live, new, "editor", api_version, "", _now)
    return new


@pytest.mark.parametrize("seed", range(4))
def test_wrong_shapes_where_maps_belong_never_crash_the_field_manager(seed: int) -> None:
    rng = random.Random(seed)
    refused = 0
    for _ in range(60):
        info, make = rng.choice(KINDS)
        fresh = make()
        live = _created(info, fresh)
        for _ in range(4):
            try:
                live = _step(rng, info, fresh, live)
            except ApiError as err:
                assert err.code < 500, err
                refused += 1
            _assert_readable(live)
    assert refused  # the campaign reaches the refusals too, not only the valid paths


@pytest.mark.parametrize(
    "fields",
    [[1], "x", 5, {"f:data": [1]}, {"f:data": {"f:a": "x"}}, {"f:data": {"f:a": [[1]]}}],
    ids=["list", "string", "number", "nested-list", "nested-string", "nested-nested-list"],
)
def test_update_ignores_managed_fields_that_are_no_field_sets(fields: Any) -> None:
    """Upstream ``DecodeManagedFields`` fails for the whole list (a good entry too), and the
    update keeps the live object's entries instead."""
    info = Registry().by_key("", "configmaps")
    assert info is not None
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    fm.update_managed_fields(info, None, live, "creator", "v1", "", _now)
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"].extend(
        [
            {"manager": "bad", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": fields},
            {"manager": "good", "operation": "Update", "apiVersion": "v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:b": {}}}},
        ]
    )  # fmt: skip
    new["metadata"]["labels"] = {"l": "1"}
    fm.update_managed_fields(info, live, new, "editor", "v1", "", _now)
    assert [e["manager"] for e in new["metadata"]["managedFields"]] == ["creator", "editor"]


def test_read_set_reads_like_upstream() -> None:
    read = fm._read_set
    assert read(None) == {}
    assert read({"f:a": None, ".": [1]}, True) == {"f:a": {}}
    assert read({"f:a": {".": "x", "f:b": {}}}, True) == {"f:a": {".": {}, "f:b": {}}}
    assert read({"f:a": {"x:y": {"f:q": []}}}, True) == {"f:a": {}}  # unknown type dropped
    assert read({'k:{ "b": 1, "a": "x" }': {}, "i:+1": {}, "v:2 3": {}}, True) == {
        'k:{"a":"x","b":1}': {},
        "i:1": {},
        "v:2": {},
    }
    for bad in ([1], "x", {"zz": {}}, {"f": {}}, {"k:[1]": {}}, {"i:1x": {}}, {"v:{": {}}):
        assert read(bad, True) is None, bad


def test_bad_operation_is_invalid_unless_the_write_takes_its_fields() -> None:
    info = Registry().by_key("", "configmaps")
    assert info is not None
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    bogus = {"manager": "m", "operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1"}
    taken = copy.deepcopy(obj)
    taken["metadata"]["managedFields"] = [{**bogus, "fieldsV1": {"f:data": {}}}]
    fm.update_managed_fields(info, None, taken, "w", "v1", "", _now)
    assert [e["manager"] for e in taken["metadata"]["managedFields"]] == ["w"]
    kept = copy.deepcopy(obj)
    kept["metadata"]["managedFields"] = [{**bogus, "fieldsV1": {"f:other": {}}}]
    with pytest.raises(ApiError) as info_:
        fm.update_managed_fields(info, None, kept, "w", "v1", "", _now)
    assert info_.value.code == 422
    assert info_.value.details["causes"][0]["field"] == "metadata.managedFields.operation"


def test_entries_omit_empty_manager() -> None:
    info = Registry().by_key("", "configmaps")
    assert info is not None
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    fm.update_managed_fields(info, None, obj, "", "v1", "", _now)
    assert "manager" not in obj["metadata"]["managedFields"][0]
