"""Watch events decoded with their object's spec shared (``decode_watch_event``): the same
documents as ``orjson.loads``, equal specs handed on as one instance without decoding, a
mutated shared spec never handed on, and the reflector using it only for stores that share
sub-objects."""

from __future__ import annotations

import copy
import threading
from typing import Any

import orjson
import pytest

from kube_runtime.cache import store as store_module
from kube_runtime.cache.reflector import Reflector
from kube_runtime.cache.store import CompactIndexer, Indexer, decode_watch_event
from kube_runtime.client import Watch

from .test_watch_batching import Chunks, Source

# Big enough to be cut out of the line (the decoder leaves small specs to orjson.loads).
CONTAINERS = [
    {"name": f"c{i}", "image": f"registry.example.com/app:{i}", "args": ["--a", "--b"]}
    for i in range(8)
]


def pod(name: str, spec: Any = None, status: Any = None, **top: Any) -> dict[str, Any]:
    o: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod"}
    o.update(top)
    o["metadata"] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    o["spec"] = {"containers": copy.deepcopy(CONTAINERS)} if spec is None else spec
    o["status"] = {"phase": "Pending"} if status is None else status
    return o


def event_line(o: Any, type_: str = "ADDED") -> bytes:
    return orjson.dumps({"type": type_, "object": o})


@pytest.fixture(autouse=True)
def fresh_tables() -> None:
    store_module.reset_shared_values()


@pytest.mark.parametrize(
    "doc",
    [
        pod("plain"),
        # a nested "spec" key (an ephemeral volume's claim template) before the top-level end
        pod(
            "nested-spec",
            spec={
                "containers": CONTAINERS,
                "volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
            },
        ),
        # a nested "status" key after a "}" inside the status: the last cut is not the spec's end
        pod("nested-status", status={"a": {"b": 1}, "status": {"c": 2}}),
        # a field before the spec holding a "spec" key of its own (a custom resource)
        pod("field-before", data={"x": 1, "spec": {"k": "v" * 600}, "status": {}}),
        # the decoder's own marker in the line
        pod("marker", status={"m": store_module._RAW_MARK}),
        # the markers inside strings (escaped quotes: never a cut)
        pod("in-strings", status={"message": ',"spec":{' + "x" * 600 + '},"status":'}),
        # no status after the spec, a spec too small to cut, a spec that is not an object
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "n"}, "spec": {"c": CONTAINERS}},
        pod("small", spec={"nodeName": "n1"}),
        pod("list-spec", spec=[CONTAINERS]),
    ],
    ids=lambda d: d["metadata"]["name"],
)
def test_decoded_events_are_what_orjson_decodes(doc: dict[str, Any]) -> None:
    line = event_line(doc)
    for _ in range(2):  # first sighting, then from the table
        got = decode_watch_event(line)
        assert got == orjson.loads(line)
        assert orjson.dumps(got) == line  # key order and types included


def test_invalid_lines_raise_as_orjson_does() -> None:
    line = event_line(pod("a"))
    for bad in (line[:-1], line.replace(b'"phase"', b"phase")):
        with pytest.raises(orjson.JSONDecodeError):
            decode_watch_event(bad)


def test_equal_specs_arrive_as_one_shared_instance() -> None:
    a = decode_watch_event(event_line(pod("a")))["object"]
    b = decode_watch_event(event_line(pod("b"), "MODIFIED"))["object"]
    c = decode_watch_event(event_line(pod("c", spec={"containers": CONTAINERS[:7]})))["object"]
    assert a["spec"] is b["spec"] and a["metadata"] is not b["metadata"]
    assert c["spec"] is not a["spec"]
    assert c["spec"]["containers"][0] is a["spec"]["containers"][0]  # parts still shared
    store = Indexer(mutation_detector=True)
    store.add(a)
    store.add(b)
    assert store.get("ns/b")["spec"] is a["spec"]  # type: ignore[index]
    store.check_mutations()


def test_a_mutated_shared_spec_is_not_handed_on() -> None:
    a = decode_watch_event(event_line(pod("a")))["object"]
    a["spec"]["containers"][0]["image"] = "hacked"  # against the contract
    b = decode_watch_event(event_line(pod("b")))["object"]
    assert b["spec"] is not a["spec"] and b["spec"]["containers"][0]["image"].endswith(":0")
    assert b == pod("b")


def reflect(store: Indexer, *lines: bytes) -> Reflector:
    reflector = Reflector(Source(Chunks(b"\n".join(lines) + b"\n")), "v1/Pod", store)
    reflector._list()
    reflector._watch_once(threading.Event())
    return reflector


def test_the_reflector_decodes_shared_only_for_a_store_sharing_sub_objects() -> None:
    lines = [event_line(pod(n)) for n in "ab"]
    sharing = Indexer(mutation_detector=False)
    reflect(sharing, *lines)
    assert sharing.get("ns/a")["spec"] is sharing.get("ns/b")["spec"]  # type: ignore[index]

    store_module.reset_shared_values()
    plain = Indexer(mutation_detector=False, share_subtrees=False)
    assert not plain.shares_subtrees
    reflect(plain, *lines)
    a, b = plain.get("ns/a"), plain.get("ns/b")
    assert a is not None and b is not None
    assert a["spec"] is not b["spec"] and a["spec"] == b["spec"]

    compact = CompactIndexer()
    assert not compact.shares_subtrees
    reflect(compact, *lines)
    assert compact.get("ns/a") == pod("a")


def test_a_watch_decodes_with_its_loads() -> None:
    w = Watch(Chunks(event_line(pod("a")) + b"\n"))
    assert w.loads is orjson.loads
    seen: list[bytes] = []

    def loads(line: bytes) -> Any:
        seen.append(line)
        return orjson.loads(line)

    w.loads = loads
    assert next(w).object == pod("a") and seen == [event_line(pod("a"))]


def test_a_spec_of_the_same_length_is_not_taken_for_another() -> None:
    # The decoder remembers the last spec per length: an equal-length spec with other bytes
    # is its own, and the first one is still found after it.
    one = pod("a", spec={"containers": CONTAINERS, "nodeName": "node-1"})
    two = pod("b", spec={"containers": CONTAINERS, "nodeName": "node-2"})
    assert len(orjson.dumps(one["spec"])) == len(orjson.dumps(two["spec"]))
    got = [decode_watch_event(event_line(o))["object"] for o in (one, two, one, two)]
    assert got == [one, two, one, two]
    assert got[0]["spec"] is got[2]["spec"] and got[1]["spec"] is got[3]["spec"]
    assert got[0]["spec"] is not got[1]["spec"]
