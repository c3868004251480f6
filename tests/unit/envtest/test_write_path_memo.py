"""The write path's caches: priority classes read once per change, pod spec causes memoized."""

from __future__ import annotations

import gc
from typing import Any

import orjson
import pytest

from bench.embedded_server import typical_pod
from kube_runtime.envtest import EmbeddedCluster
from kube_runtime.envtest.server import strategy, validation
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.memo import Memo, forget_key, json_key, known_key
from tests.support import write_path_corpus
from tests.support.write_path_corpus import json_copy, rich_pod


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}], **spec},
    }


def test_a_new_or_changed_priority_class_is_seen_by_the_next_pod() -> None:
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store = cluster.store
        store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": "ns"}})
        pods = cluster.resource("", "pods")
        classes = cluster.resource("scheduling.k8s.io", "priorityclasses")
        assert store.create(pods, "ns", _pod("a")).obj["spec"]["priority"] == 0
        with pytest.raises(ApiError) as refused:
            store.create(pods, "ns", _pod("b", priorityClassName="high"))
        assert refused.value.code == 403
        store.create(
            classes,
            None,
            {"metadata": {"name": "high"}, "value": 1000, "globalDefault": True},
        )
        high = store.create(pods, "ns", _pod("b", priorityClassName="high")).obj["spec"]
        assert high["priority"] == 1000
        default = store.create(pods, "ns", _pod("c")).obj["spec"]
        assert (default["priorityClassName"], default["priority"]) == ("high", 1000)
        store.delete(classes, None, "high")
        assert store.create(pods, "ns", _pod("d")).obj["spec"]["priority"] == 0


def test_pod_spec_causes_are_the_same_from_the_memo() -> None:
    bad = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "C_", "ports": [{"containerPort": 0}]}, {"name": "C_"}]},
    }
    first = validation.validate("", "Pod", bad, None)
    again = validation.validate("", "Pod", bad, None)
    assert first == again and len(first) >= 4
    assert [c.field for c in first][:2] == ["spec.containers[0].name", "spec.containers[0].image"]
    # the same spec under another object: the metadata's causes come first, then the spec's
    renamed = {**bad, "metadata": {"name": "Bad_Name", "namespace": "ns"}}
    causes = validation.validate("", "Pod", renamed, None)
    assert causes[0].field == "metadata.name" and causes[1:] == first


def test_json_key_refuses_what_is_not_plain_json() -> None:
    class Tagged(str):
        pass

    assert json_key({"a": [1, "x", None, True, 1.5]}) == b'{"a":[1,"x",null,true,1.5]}'
    assert json_key({"a": Tagged("x")}) is None
    assert json_key({"a": 2**70}) is None
    assert json_key({1: "a"}) is None


def test_known_key_stands_for_that_very_object_until_forgotten() -> None:
    spec = {"a": 1}
    twin = {"a": 1}
    known_key(spec, b"K")
    try:
        assert json_key(spec) == b"K"
        assert json_key(twin) == b'{"a":1}'  # an equal object is encoded
    finally:
        forget_key()
    assert json_key(spec) == b'{"a":1}'


def test_memo_is_bounded() -> None:
    memo: Memo[int] = Memo(size=3)
    for i in range(7):
        memo.put(str(i).encode(), i)
        assert len(memo) <= 3
    assert memo.get(b"6") == 6
    assert memo.get(b"0") is None


def _outcome(store: Any, info: Any, body: dict[str, Any], name: str) -> bytes:
    """A create's stored bytes or error, with what differs from name to name masked."""
    body = json_copy(body)
    if isinstance(body.get("metadata"), dict):
        body["metadata"]["name"] = name
    try:
        stored = store.create(info, "corpus", body)
    except ApiError as e:
        return orjson.dumps([e.code, e.status]).replace(name.encode(), b"NAME")
    except Exception as e:  # malformed input the HTTP layer refuses earlier
        return type(e).__name__.encode()
    obj = stored.obj
    # the stored bytes (a replayed spec's known encoding written as is) are the object's
    assert stored.raw == orjson.dumps(obj), name
    meta = dict(obj["metadata"], name="", uid="", creationTimestamp="", resourceVersion="")
    return orjson.dumps({**obj, "metadata": meta})


def test_a_shared_pod_spec_prepares_as_the_steps_do() -> None:
    """Every pod spec of the write-path corpus created four times: the second create
    keeps the steps' result, the third and fourth get that prepared spec, shared by the
    pods of the spec; each is stored, or refused, as the first. (One corpus pass: each costs
    seconds.)

    The ~9,300 pods stored stay alive until the cluster stops: what is alive is frozen out of
    the garbage collector's full collections every 256 specs (unfrozen at the end), which
    otherwise scanned the session's heap and the growing store ~6 times, ~1 s of CPU; not when
    something else froze objects (its unfreeze is its own)."""
    bodies = [
        *(body for _, body in write_path_corpus.mutations(typical_pod("x"))),
        *(body for _, body in write_path_corpus.mutations(rich_pod("x"), ("null", "word"))),
        *(body for _, body in write_path_corpus.hostile_templates()),
    ]
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store = cluster.store
        store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": "corpus"}})
        pods = cluster.resource("", "pods")
        freeze = gc.isenabled() and gc.get_freeze_count() == 0
        try:
            for i, body in enumerate(bodies):
                if freeze and i % 256 == 0:
                    gc.freeze()
                outcomes = {_outcome(store, pods, body, f"p{i}-{n}") for n in range(4)}
                assert len(outcomes) == 1, (i, body)
        finally:
            if freeze:
                gc.unfreeze()
        assert len(store.strategy._pod_specs) > 0  # type: ignore[attr-defined]
        entries = store.strategy._pod_specs._entries.values()  # type: ignore[attr-defined]
        assert any(e[1] is not None and e[1] is not strategy._UNSHARED for e in entries)


def test_json_copy_copies_as_deepcopy_does() -> None:
    shared = {"k": [1, "x", None, 1.5, True]}
    tree: dict[str, Any] = {"a": shared, "b": [shared, {"c": {}}], "t": (1, [2])}
    copied = json_copy(tree)
    assert copied == tree and copied is not tree
    assert copied["a"] is copied["b"][0] and copied["a"] is not shared  # met twice: once
    assert copied["a"]["k"] is not shared["k"]
    assert copied["t"] == (1, [2]) and copied["t"][1] is not tree["t"][1]  # deepcopy's
