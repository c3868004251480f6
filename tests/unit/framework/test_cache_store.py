"""Indexer: the informer's thread-safe store, its indexes and the mutation detector."""

from __future__ import annotations

import copy
import sys
import threading
from typing import Any

import orjson
import pytest

from kube_runtime.cache import store as store_module
from kube_runtime.cache.store import (
    INDEX_CONTROLLER_UID,
    INDEX_LABEL,
    INDEX_NAMESPACE,
    CacheMutationError,
    DeletedFinalStateUnknown,
    Indexer,
    object_key,
)


def obj(
    name: str,
    namespace: str | None = "ns1",
    labels: dict[str, str] | None = None,
    owner: str | None = None,
    rv: str = "1",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    if labels is not None:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [
            {"kind": "X", "name": "other", "uid": "not-controller"},
            {"kind": "ReplicaSet", "name": "rs", "uid": owner, "controller": True},
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_object_key() -> None:
    assert object_key(obj("a")) == "ns1/a"
    assert object_key(obj("node-1", namespace=None)) == "node-1"
    assert object_key(DeletedFinalStateUnknown("ns/x", obj("x"))) == "ns/x"
    with pytest.raises(ValueError):
        object_key({"metadata": {}})


def test_add_get_update_delete_list_keys() -> None:
    store = Indexer(mutation_detector=False)
    a = obj("a")
    assert store.add(a) is None
    assert store.get("ns1/a") is a  # stored as given: no copy
    a2 = obj("a", rv="2")
    assert store.update(a2) is a  # returns what it replaced
    assert store.get("ns1/a") is a2
    store.add(obj("b", namespace="ns2"))
    store.add(obj("n", namespace=None))
    assert sorted(store.keys()) == ["n", "ns1/a", "ns2/b"]
    assert names(store.list()) == ["a", "b", "n"]
    assert len(store) == 3 and "ns2/b" in store
    assert store.delete(obj("b", namespace="ns2"))["metadata"]["name"] == "b"
    assert store.delete(obj("b", namespace="ns2")) is None
    assert store.delete(DeletedFinalStateUnknown("n", {})) is not None
    assert store.keys() == ["ns1/a"]


def test_builtin_indexes_follow_updates_and_deletes() -> None:
    store = Indexer(mutation_detector=False)
    store.add(obj("a", labels={"app": "web", "tier": "fe"}, owner="rs-1"))
    store.add(obj("b", labels={"app": "web"}, owner="rs-2"))
    store.add(obj("c", namespace="ns2", labels={"app": "db"}))
    store.add(obj("node", namespace=None))
    assert names(store.by_index(INDEX_NAMESPACE, "ns1")) == ["a", "b"]
    assert names(store.by_index(INDEX_NAMESPACE, "ns2")) == ["c"]
    assert names(store.by_index(INDEX_LABEL, "app=web")) == ["a", "b"]
    assert names(store.by_index(INDEX_LABEL, "tier=fe")) == ["a"]
    assert names(store.by_index(INDEX_CONTROLLER_UID, "rs-1")) == ["a"]
    assert store.by_index(INDEX_CONTROLLER_UID, "not-controller") == []
    assert sorted(store.index_values(INDEX_NAMESPACE)) == ["ns1", "ns2"]

    # Relabel and re-own a: the old index entries go, the new ones come.
    store.update(obj("a", labels={"app": "db"}, owner="rs-2", rv="2"))
    assert names(store.by_index(INDEX_LABEL, "app=web")) == ["b"]
    assert store.by_index(INDEX_LABEL, "tier=fe") == []
    assert "tier=fe" not in store.index_values(INDEX_LABEL)  # empty buckets are dropped
    assert names(store.by_index(INDEX_LABEL, "app=db")) == ["a", "c"]
    assert names(store.by_index(INDEX_CONTROLLER_UID, "rs-2")) == ["a", "b"]
    assert store.by_index(INDEX_CONTROLLER_UID, "rs-1") == []

    store.delete(obj("b"))
    assert store.by_index(INDEX_LABEL, "app=web") == []
    assert names(store.by_index(INDEX_NAMESPACE, "ns1")) == ["a"]
    with pytest.raises(KeyError):
        store.by_index("nope", "x")


def test_label_index_values_are_interned() -> None:
    store = Indexer(mutation_detector=False)
    store.add(obj("a", labels={"app": "web"}))
    store.add(obj("b", labels={"app": "w" + "eb"}))
    (value,) = store.index_values(INDEX_LABEL)
    assert value is sys.intern("app=web")  # one string shared by every object


def test_custom_indexer_before_and_after_objects() -> None:
    by_node = {"node": lambda o: [o["spec"]["nodeName"]] if o.get("spec") else []}
    store = Indexer(by_node, mutation_detector=False)
    store.add(dict(obj("a"), spec={"nodeName": "n1"}))
    store.add(dict(obj("b"), spec={"nodeName": "n2"}))
    assert names(store.by_index("node", "n1")) == ["a"]

    # Added later: existing objects are indexed at once, later ones as they come.
    store.add_indexers({"first-letter": lambda o: [o["metadata"]["name"][0]]})
    assert names(store.by_index("first-letter", "b")) == ["b"]
    store.add(obj("bb"))
    assert names(store.by_index("first-letter", "b")) == ["b", "bb"]
    with pytest.raises(ValueError, match="already exists"):
        store.add_indexers({INDEX_LABEL: lambda o: []})


def test_replace_returns_previous_content_and_rebuilds_indexes() -> None:
    store = Indexer(mutation_detector=False)
    a, b = obj("a", labels={"x": "1"}), obj("b", labels={"x": "1"})
    store.add(a)
    store.add(b)
    c = obj("c", labels={"x": "2"})
    a2 = obj("a", labels={"x": "2"}, rv="5")
    old = store.replace([a2, c], "42")
    assert old == {"ns1/a": a, "ns1/b": b}
    assert sorted(store.keys()) == ["ns1/a", "ns1/c"]
    assert store.by_index(INDEX_LABEL, "x=1") == []
    assert names(store.by_index(INDEX_LABEL, "x=2")) == ["a", "c"]


def test_concurrent_writers_keep_indexes_consistent() -> None:
    store = Indexer(mutation_detector=False)

    def writer(prefix: str) -> None:
        for i in range(300):
            store.add(obj(f"{prefix}{i % 20}", labels={"w": prefix, "i": str(i)}, rv=str(i)))
            if i % 3 == 0:
                store.delete(obj(f"{prefix}{(i * 7) % 20}"))

    threads = [threading.Thread(target=writer, args=(p,)) for p in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = store.keys()
    for p in "abcd":
        expected = sorted(k for k in keys if k.startswith(f"ns1/{p}"))
        assert sorted(object_key(o) for o in store.by_index(INDEX_LABEL, f"w={p}")) == expected
    assert sorted(object_key(o) for o in store.by_index(INDEX_NAMESPACE, "ns1")) == sorted(
        store.keys()
    )


@pytest.mark.parametrize("share_subtrees", [True, False])
def test_incremental_indexes_equal_a_rebuild_from_the_content(share_subtrees: bool) -> None:
    """Adds of new keys take a shorter path than updates and deletes: after any sequence of
    them the indexes are the ones a store rebuilt from its content holds."""
    import random

    rng = random.Random(7)
    store = Indexer(mutation_detector=False, share_subtrees=share_subtrees)
    for i in range(600):
        name = f"o{rng.randrange(40)}"
        namespace = rng.choice(["ns1", "ns2", None])
        if rng.random() < 0.25:
            store.delete(obj(name, namespace))
            continue
        labels = rng.choice([None, {}, {"app": "web"}, {"app": "db", "tier": str(i % 3)}])
        owner = rng.choice([None, "rs-1", "rs-2"])
        store.update(obj(name, namespace, labels=labels, owner=owner, rv=str(i)))
    rebuilt = Indexer(mutation_detector=False, share_subtrees=share_subtrees)
    rebuilt.replace(store.list())
    for index in (INDEX_NAMESPACE, INDEX_LABEL, INDEX_CONTROLLER_UID):
        values = sorted(store.index_values(index))
        assert values == sorted(rebuilt.index_values(index))
        for value in values:
            assert sorted(store.index_keys(index, value)) == sorted(
                rebuilt.index_keys(index, value)
            )
    assert len(store.index_values(INDEX_LABEL)) > 2


# --- mutation detector ---------------------------------------------------------------------------


def test_mutation_detector_catches_in_place_changes_on_every_read() -> None:
    store = Indexer(mutation_detector=True)
    store.add(obj("a", labels={"app": "web"}))
    store.add(obj("b"))
    got = store.get("ns1/a")
    assert got is not None
    store.list()
    store.by_index(INDEX_LABEL, "app=web")  # clean reads pass

    got["metadata"]["labels"]["app"] = "changed"  # a reader breaks the contract
    with pytest.raises(CacheMutationError) as err:
        store.get("ns1/a")
    assert err.value.key == "ns1/a" and "ns1/a" in str(err.value)
    with pytest.raises(CacheMutationError):
        store.list()
    with pytest.raises(CacheMutationError):
        store.by_index(INDEX_NAMESPACE, "ns1")
    with pytest.raises(CacheMutationError, match="ns1/a"):
        store.check_mutations()
    assert store.get("ns1/b") is not None  # other objects still read fine

    # Storing a fresh object for the key (the next watch event) clears it.
    store.update(obj("a", rv="2"))
    store.check_mutations()


def test_mutation_detector_follows_replace() -> None:
    store = Indexer(mutation_detector=True)
    store.replace([obj("a"), obj("b")], "10")
    store.list()[0]["metadata"]["name"] = "zzz"
    with pytest.raises(CacheMutationError):
        store.check_mutations()


def test_mutation_detector_is_off_by_default_and_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KUBE_CACHE_MUTATION_DETECTOR", raising=False)
    store = Indexer()
    assert not store.mutation_detector
    store.add(obj("a"))
    store.get("ns1/a")["metadata"]["name"] = "changed"  # type: ignore[index]
    store.check_mutations()  # nothing checked
    store.list()

    monkeypatch.setenv("KUBE_CACHE_MUTATION_DETECTOR", "true")
    store = Indexer()
    assert store.mutation_detector
    store.add(obj("a"))
    store.get("ns1/a")["metadata"]["name"] = "changed"  # type: ignore[index]
    with pytest.raises(CacheMutationError):
        store.get("ns1/a")


def test_stored_objects_share_equal_string_values() -> None:
    store = Indexer(mutation_detector=False)
    a = obj("a", labels={"app": "web"})
    a["status"] = {"conditions": [{"t": "".join(["2024-01-01", "T00:00:00Z"])} for _ in range(3)]}
    b = obj("b", labels={"app": "".join(["w", "eb"])})
    assert a["metadata"]["labels"]["app"] is not b["metadata"]["labels"]["app"]
    store.add(a)
    store.replace([a, b])
    assert b["metadata"]["labels"]["app"] is a["metadata"]["labels"]["app"]
    stamps = {id(c["t"]) for c in a["status"]["conditions"]}
    assert len(stamps) == 1 and a["status"]["conditions"][0]["t"] == "2024-01-01T00:00:00Z"


# --- shared sub-objects --------------------------------------------------------------------------


def pod(name: str, node: str = "n1", image: str = "app:1") -> dict[str, Any]:
    """A pod as decoded from JSON: a fresh dict tree per call, equal parts across calls."""
    p = obj(name, labels={"app": "web"}, owner="rs-1")
    p["spec"] = {
        "nodeName": node,
        "containers": [{"name": "app", "image": image, "ports": [{"containerPort": 80}]}],
        "volumes": [{"name": "cache", "emptyDir": {}}],
    }
    p["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return p


def test_equal_sub_objects_are_stored_once() -> None:
    store = Indexer(mutation_detector=False)
    store.add(pod("a"))
    store.add(pod("b"))
    store.replace([pod("c", node="n2"), *store.list()])
    a, b, c = (store.get(f"ns1/{n}") for n in "abc")
    assert a is not None and b is not None and c is not None
    assert a["spec"] is b["spec"] and a["status"] is b["status"]
    assert c["spec"] is not a["spec"] and c["spec"]["nodeName"] == "n2"  # differs: own dict
    assert c["spec"]["containers"] is a["spec"]["containers"]  # ... with shared parts
    assert c["spec"]["volumes"] is a["spec"]["volumes"]
    # metadata holds name/uid/resourceVersion: never shared, but its parts are
    assert a["metadata"] is not b["metadata"] and a["metadata"]["name"] == "a"
    assert a["metadata"]["labels"] is b["metadata"]["labels"]
    assert a["metadata"]["ownerReferences"] is c["metadata"]["ownerReferences"]
    assert c == pod("c", node="n2")  # content unchanged


def test_an_update_takes_unchanged_parts_from_the_stored_version() -> None:
    store = Indexer(mutation_detector=False)
    store.add(pod("a"))
    old = store.get("ns1/a")
    assert old is not None
    store_module.reset_shared_values()  # the shared tables forget: only the old version helps
    new = pod("a")
    new["status"]["phase"] = "Succeeded"
    store.update(new)
    got = store.get("ns1/a")
    assert got is not None and got["status"]["phase"] == "Succeeded"
    assert got["spec"] is old["spec"]  # unchanged: the stored version's own dict
    assert got["status"]["conditions"] is old["status"]["conditions"]  # inside a changed part
    assert got["metadata"]["labels"] is old["metadata"]["labels"]
    assert got["status"] is not old["status"]
    assert got == new and old["status"]["phase"] == "Running"  # contents as written


def test_sharing_compares_json_values_not_python_equality() -> None:
    store = Indexer(mutation_detector=False)
    one = dict(obj("a"), spec={"x": 1, "y": [1]})
    true = dict(obj("b"), spec={"x": True, "y": [True]})
    real = dict(obj("c"), spec={"x": 1.0, "y": [1.0]})
    for o in (one, true, real):
        store.add(o)
    assert store.get("ns1/b")["spec"]["x"] is True  # type: ignore[index]
    assert isinstance(store.get("ns1/c")["spec"]["y"][0], float)  # type: ignore[index]
    assert store.get("ns1/a")["spec"] is not store.get("ns1/b")["spec"]  # type: ignore[index]


def test_deepcopy_of_a_cached_object_is_independent() -> None:
    store = Indexer(mutation_detector=True)
    store.add(pod("a"))
    store.add(pod("b"))
    mine = copy.deepcopy(store.get("ns1/a"))
    assert mine is not None
    mine["spec"]["containers"][0]["image"] = "app:2"
    mine["metadata"]["labels"]["app"] = "db"
    store.check_mutations()  # the cache (and b, sharing a's parts) is untouched
    assert store.get("ns1/b")["spec"]["containers"][0]["image"] == "app:1"  # type: ignore[index]
    assert store.get("ns1/a")["metadata"]["labels"] == {"app": "web"}  # type: ignore[index]


def test_mutating_a_shared_part_is_caught_for_every_object_sharing_it() -> None:
    store = Indexer(mutation_detector=True)
    store.add(pod("a"))
    store.add(pod("b"))
    store.get("ns1/a")["spec"]["containers"][0]["image"] = "hacked"  # type: ignore[index]
    for key in ("ns1/a", "ns1/b"):
        with pytest.raises(CacheMutationError):
            store.get(key)
    # The table's copy was changed too: a new object with the original content must not
    # be handed the mutated instance.
    store.add(pod("c"))
    c = store.get("ns1/c")
    assert c is not None and c["spec"]["containers"][0]["image"] == "app:1"


def test_values_that_are_not_json_are_stored_unshared() -> None:
    store = Indexer(mutation_detector=False)
    weird = dict(obj("a"), spec={"t": ("x", "y"), "big": 1 << 70, "sub": {"k": "v"}})
    store.add(weird)
    store.add(dict(obj("b"), spec={"sub": {"k": "v"}}))
    got = store.get("ns1/a")
    assert got is not None and got["spec"]["t"] == ("x", "y") and got["spec"]["big"] == 1 << 70
    assert got["spec"]["sub"] is store.get("ns1/b")["spec"]["sub"]  # type: ignore[index]


def test_sub_object_sharing_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    store = Indexer(mutation_detector=False, share_subtrees=False)
    store.add(pod("a"))
    store.add(pod("b"))
    a, b = store.get("ns1/a"), store.get("ns1/b")
    assert a is not None and b is not None
    assert a["spec"] is not b["spec"] and a["spec"] == b["spec"]
    assert a["spec"]["nodeName"] is b["spec"]["nodeName"]  # strings are still shared

    monkeypatch.setenv("KUBE_CACHE_SHARE_SUBTREES", "false")
    store = Indexer(mutation_detector=False)
    store.add(pod("a"))
    store.add(pod("b"))
    assert store.get("ns1/a")["spec"] is not store.get("ns1/b")["spec"]  # type: ignore[index]
    monkeypatch.setenv("KUBE_CACHE_SHARE_SUBTREES", "true")
    store = Indexer(mutation_detector=False)
    store.add(pod("a"))
    store.add(pod("b"))
    assert store.get("ns1/a")["spec"] is store.get("ns1/b")["spec"]  # type: ignore[index]


def test_shared_table_is_bounded_by_entries_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    table = store_module._SharedTable(limit=2, budget=100)
    table.put("a", "A", 1)
    table.put("b", "B", 1)
    table.put("c", "C", 1)  # young was full: {a, b} becomes old
    assert table.get("a", 1) == "A"  # a hit in the old generation moves to the young one
    table.put("d", "D", 1)  # young {c, a} full: becomes old, {b} is dropped
    assert table.get("b", 1) is None and table.get("a", 1) == "A"
    table.put("huge", "H", 99)  # over the byte budget: a new generation starts
    assert table.young == {"huge": "H"}

    # A sub-object bigger than the whole budget is walked (its parts shared), never kept.
    monkeypatch.setattr(store_module, "_shared_subtrees", store_module._SharedTable(100, 64))
    store = Indexer(mutation_detector=False)
    big = {"data": "x" * 100, "small": {"k": "v"}}
    store.add(dict(obj("a"), spec=copy.deepcopy(big)))
    store.add(dict(obj("b"), spec=copy.deepcopy(big)))
    a, b = store.get("ns1/a"), store.get("ns1/b")
    assert a is not None and b is not None
    assert a["spec"] is not b["spec"] and a["spec"]["small"] is b["spec"]["small"]
    assert all(len(orjson.dumps(v)) <= 64 for v in store_module._shared_subtrees.young.values())


def test_reset_shared_values_starts_new_copies() -> None:
    store = Indexer(mutation_detector=False)
    store.add(pod("a"))
    store_module.reset_shared_values()
    store.add(pod("b"))
    store.add(pod("c"))
    a, b, c = (store.get(f"ns1/{n}") for n in "abc")
    assert a is not None and b is not None and c is not None
    assert b["spec"] is not a["spec"] and b["spec"] is c["spec"] and a["spec"] == b["spec"]


def test_label_index_of_objects_sharing_one_labels_map() -> None:
    store = Indexer(mutation_detector=False)
    store.add(pod("a"))
    store.add(pod("b"))
    a, b = store.get("ns1/a"), store.get("ns1/b")
    assert a is not None and b is not None
    assert a["metadata"]["labels"] is b["metadata"]["labels"]  # the values computed once
    assert sorted(store.index_keys(INDEX_LABEL, "app=web")) == ["ns1/a", "ns1/b"]
    moved = pod("a")
    moved["metadata"]["labels"] = {"app": "db"}
    store.update(moved)
    store.update(pod("b"))  # unchanged labels: stays indexed
    assert store.index_keys(INDEX_LABEL, "app=web") == ["ns1/b"]
    assert store.index_keys(INDEX_LABEL, "app=db") == ["ns1/a"]
    store.delete(pod("b"))
    assert store.index_values(INDEX_LABEL) == ["app=db"]


def test_top_level_and_metadata_strings_are_shared_when_seen_before() -> None:
    """The strings share_values checks inline (top level, metadata): a second object's equal
    strings become the first one's; uid and resourceVersion are left as they are."""

    def fresh(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "".join(["v", "1"]),
            "kind": "".join(["Po", "d"]),
            "metadata": {
                "name": name,
                "namespace": "".join(["ns", "1"]),
                "creationTimestamp": "".join(["2024-01-01", "T00:00:00Z"]),
                "uid": "".join(["u", "1"]),
            },
        }

    store = Indexer(mutation_detector=False)
    a, b = fresh("a"), fresh("b")
    store.add(a)
    store.add(b)
    for key in ("apiVersion", "kind"):
        assert b[key] is a[key]
    for key in ("namespace", "creationTimestamp"):
        assert b["metadata"][key] is a["metadata"][key]
    assert b["metadata"]["uid"] == a["metadata"]["uid"]
    assert b["metadata"]["uid"] is not a["metadata"]["uid"]
