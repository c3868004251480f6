"""The informer cache hands out exactly what the server sent, types included.

Python's ``==`` takes ``1 == True == 1.0`` and ``0 == False == 0.0 == -0.0`` for equal, also
inside dicts and lists. A schemaless value (a custom resource field with
``x-kubernetes-preserve-unknown-fields``, a free-form status map) can change from one of
these to another; the cache's sub-object sharing must not keep the stored (previous or
shared) instance then: the cached object is compared with the decoded one as JSON bytes.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

import orjson
import pytest

from kube_runtime.cache import store as store_module
from kube_runtime.cache.informer import SharedInformer
from kube_runtime.cache.reflector import Reflector
from kube_runtime.cache.store import Indexer

from .test_watch_batching import Chunks, Source

# Big enough for the watch decoder to cut the spec out of the line (decode_watch_event).
CONTAINERS = [
    {"name": f"c{i}", "image": f"registry.example.com/app:{i}", "args": ["--a", "--b"]}
    for i in range(8)
]

# (value before, value after): equal under ``==``, different JSON.
CHANGES = [
    (1, True),
    (0, False),
    (True, 1),
    (False, 0),
    (1, 1.0),
    (1.0, 1),
    (0.0, -0.0),
]


@pytest.fixture(autouse=True)
def fresh_tables() -> None:
    store_module.reset_shared_values()


def pod(rv: int, value: Any, *, phase: str = "Running", big_spec: bool = False) -> dict[str, Any]:
    """A pod whose spec, status and an annotation-free ownerReferences entry hold ``value``
    nested in schemaless maps and lists."""
    spec: dict[str, Any] = {"nodeName": "n1", "config": {"replicas": value, "flags": [value]}}
    if big_spec:
        spec["containers"] = copy.deepcopy(CONTAINERS)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "uid": "uid-a",
            "resourceVersion": str(rv),
            "labels": {"app": "web"},
            "ownerReferences": [{"kind": "X", "name": "x", "uid": "u", "controller": value}],
        },
        "spec": spec,
        "status": {
            "phase": phase,
            "observed": {"values": {"flag": value, "list": [value, "x"]}},
        },
    }


def event_line(o: Any, type_: str) -> bytes:
    return orjson.dumps({"type": type_, "object": o})


def reflect(sink: Any, *lines: bytes) -> None:
    """Feed watch lines to ``sink`` through a reflector, as a running informer does."""
    reflector = Reflector(Source(Chunks(b"\n".join(lines) + b"\n")), "v1/Pod", sink)
    reflector._list()
    reflector._watch_once(threading.Event())


def leaves(o: dict[str, Any]) -> list[Any]:
    return [
        o["metadata"]["ownerReferences"][0]["controller"],
        o["spec"]["config"]["replicas"],
        o["spec"]["config"]["flags"][0],
        o["status"]["observed"]["values"]["flag"],
        o["status"]["observed"]["values"]["list"][0],
    ]


def assert_exactly(got: dict[str, Any] | None, want: dict[str, Any]) -> None:
    assert got is not None
    assert orjson.dumps(got) == orjson.dumps(want)
    assert [type(v) for v in leaves(got)] == [type(v) for v in leaves(want)]


@pytest.mark.parametrize("big_spec", [False, True], ids=["small-spec", "cut-spec"])
@pytest.mark.parametrize("phase", ["Running", "Succeeded"], ids=["same-phase", "new-phase"])
@pytest.mark.parametrize(("before", "after"), CHANGES, ids=repr)
def test_an_update_changing_only_the_type_of_a_value_is_stored_as_sent(
    before: Any, after: Any, phase: str, big_spec: bool
) -> None:
    informer = SharedInformer(None, "v1/Pod")  # type: ignore[arg-type]  # never started
    first, second = pod(1, before, big_spec=big_spec), pod(2, after, phase=phase, big_spec=big_spec)
    reflect(informer.reflector.sink, event_line(first, "ADDED"), event_line(second, "MODIFIED"))
    assert_exactly(informer.indexer.get("ns/a"), second)


@pytest.mark.parametrize(("before", "after"), CHANGES, ids=repr)
def test_store_update_and_replace_keep_the_types_sent(before: Any, after: Any) -> None:
    store = Indexer(mutation_detector=True)
    store.add(orjson.loads(orjson.dumps(pod(1, before))))
    store.update(orjson.loads(orjson.dumps(pod(2, after))))
    assert_exactly(store.get("ns/a"), pod(2, after))
    store.replace([orjson.loads(orjson.dumps(pod(3, before)))])  # a relist, back again
    assert_exactly(store.get("ns/a"), pod(3, before))
    store.check_mutations()


@pytest.mark.parametrize(("before", "after"), CHANGES, ids=repr)
def test_a_shared_copy_mutated_to_another_type_is_not_handed_on(before: Any, after: Any) -> None:
    # Against the contract (the mutation detector's job), a shared sub-object is changed in
    # place to an ``==``-equal value of another type: an object sent with the original value
    # must not be handed the mutated instance.
    store = Indexer(mutation_detector=False)
    store.add(orjson.loads(orjson.dumps(pod(1, before))))
    a = store.get("ns/a")
    assert a is not None
    a["status"]["observed"]["values"]["flag"] = after
    b = pod(1, before)
    b["metadata"]["name"] = "b"
    store.add(orjson.loads(orjson.dumps(b)))
    assert_exactly(store.get("ns/b"), b)
