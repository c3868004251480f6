"""The watch-ingest fast paths (issue 32) against the general ones: the decoder's one search
for a NUL escape instead of searching for its marker, the shared-string table's miss path,
and the informer's sink binding its transform."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from kube_runtime.cache import store as store_module
from kube_runtime.cache.informer import (
    _ADD,
    _DELETE,
    _SYNCED,
    HandlerRegistration,
    ResourceEventHandlerFuncs,
    SharedInformer,
    strip_managed_fields,
)
from kube_runtime.cache.store import Indexer, decode_watch_event, share_values

CONTAINERS = [
    {"name": f"c{i}", "image": f"registry.example.com/app:{i}", "args": ["--a", "--b"]}
    for i in range(8)
]


def pod(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", **meta},
        "spec": {"containers": copy.deepcopy(CONTAINERS)},
        "status": {"phase": "Pending"},
    }


def line(o: Any) -> bytes:
    return orjson.dumps({"type": "ADDED", "object": o})


@pytest.fixture(autouse=True)
def fresh_tables() -> None:
    store_module.reset_shared_values()


@pytest.mark.parametrize(
    "annotations",
    [
        {"note": "a\x00b"},  # a NUL outside the spec: the whole line is decoded
        {"note": store_module._RAW_MARK},  # the marker itself
        {"json": '{"a": "b\\\\u0000"}'},  # an escaped backslash before "u0000": no NUL at all
        {"json": '{"k": "v"}'},  # escapes (\") but no NUL: the spec is still cut out
    ],
)
def test_lines_with_escapes_decode_as_orjson_does(annotations: dict[str, str]) -> None:
    first = decode_watch_event(line(pod("a")))
    doc = pod("b", annotations=annotations)
    got = decode_watch_event(line(doc))
    assert got == orjson.loads(line(doc)) and orjson.dumps(got) == line(doc)
    if "\\u0000" not in line(doc).decode():
        assert got["object"]["spec"] is first["object"]["spec"]  # the cut was taken


def test_a_nul_inside_the_spec_is_decoded_whole() -> None:
    doc = pod("a")
    doc["spec"]["containers"][0]["args"] = ["a\x00b"]
    for _ in range(2):  # first sighting, then again: never from the table
        got = decode_watch_event(line(doc))
        assert got["object"] == doc and orjson.dumps(got) == line(doc)
    assert not store_module._raw_specs.young and not store_module._raw_recent


def test_a_string_in_the_old_generation_is_found_and_moved_up() -> None:
    table = store_module._shared_strings
    old_name = "".join(["node-", "1"])
    table.old[old_name] = old_name  # as after a generation change
    o = pod("a", labels={"x": "y"})
    o["metadata"]["generateName"] = "".join(["node-", "1"])  # equal, another instance
    o["kind"] = "".join(["Po", "d2"])  # a top-level string missing from both generations
    share_values(o)
    assert o["metadata"]["generateName"] is old_name
    assert table.young[old_name] is old_name
    assert table.young["Pod2"] is o["kind"]


def test_the_sink_applies_the_transform_on_add_and_update() -> None:
    informer = SharedInformer(None, "v1/Pod")  # type: ignore[arg-type]  # never started
    sink = informer.reflector.sink
    fields = [{"manager": "kubectl"}]
    sink.add(pod("a", managedFields=fields))
    sink.update(pod("b", managedFields=fields))
    for name in "ab":
        got = informer.indexer.get(f"ns/{name}")
        assert got == strip_managed_fields(pod(name, managedFields=fields))
        assert got is not None and "managedFields" not in got["metadata"]
    plain = SharedInformer(None, "v1/Pod", transform=None)  # type: ignore[arg-type]
    plain.reflector.sink.add(pod("c", managedFields=fields))
    assert plain.indexer.get("ns/c") == pod("c", managedFields=fields)
    assert isinstance(informer.indexer, Indexer)


_DONE = (_SYNCED, None, None)


class _Recording(ResourceEventHandlerFuncs):
    """A subclass overriding on_add: called as a handler, not through its functions."""

    def __init__(self, seen: list[Any]) -> None:
        super().__init__(on_add=lambda obj: seen.append(("funcs", obj)))
        self.seen = seen

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.seen.append(("method", obj, is_in_initial_list))


def test_handlers_from_functions_and_subclasses_see_adds_as_before() -> None:
    seen: list[Any] = []
    plain = HandlerRegistration(ResourceEventHandlerFuncs(on_add=seen.append), None, "plain")
    empty = HandlerRegistration(ResourceEventHandlerFuncs(), None, "empty")
    sub = HandlerRegistration(_Recording(seen), None, "sub")
    for registration in (plain, empty, sub):
        registration._push_many([(_ADD, {"n": 1}, True), (_DELETE, {"n": 2}, None), _DONE])
        registration._start()
        assert registration.wait_for_sync(5)  # everything before the marker was handled
        registration._stop()
        registration._join(5)
    assert seen == [{"n": 1}, ("method", {"n": 1}, True)]


def test_metadata_strings_across_a_generation_change(monkeypatch: pytest.MonkeyPatch) -> None:
    table = store_module._SharedTable(limit=2, budget=1 << 20)
    monkeypatch.setattr(store_module, "_shared_strings", table)
    meta = {"name": "a", "generateName": "g-", "namespace": "ns", "creationTimestamp": "t"}
    first = pod("a", **{k: v for k, v in meta.items() if k != "name"})
    share_values(first)
    second = pod("a", **{k: "".join([v]) for k, v in meta.items() if k != "name"})
    store = Indexer(mutation_detector=True)
    store.add(first)
    store.update(second)  # every metadata string found in the stored version, or the table
    got = store.get("ns/a")
    assert got == pod("a", **{k: v for k, v in meta.items() if k != "name"})
    assert len(table.young) <= 2 and len(table.old) <= 2
    third = pod("b", generateName="".join(["x", "-"]), creationTimestamp="".join(["t2"]))
    share_values(third)  # misses that start new generations mid-walk
    assert third == pod("b", generateName="x-", creationTimestamp="t2")
    assert table.young.get("t2") is third["metadata"]["creationTimestamp"] or "t2" in table.old


def test_a_shared_spec_is_noted_again_after_the_notes_were_cleared() -> None:
    a = decode_watch_event(line(pod("a")))["object"]
    store_module._raw_shared.clear()  # as when the notes fill up
    b = decode_watch_event(line(pod("b")))["object"]
    assert b["spec"] is a["spec"]
    assert store_module._raw_shared.get(id(b["spec"])) is b["spec"]
    share_values(b)  # left as it is: not walked, not replaced
    assert b["spec"] is a["spec"] and b == pod("b")
