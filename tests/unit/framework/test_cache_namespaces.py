"""Caching several namespaces (controller-runtime's ``DefaultNamespaces`` / ``ByObject.Namespaces``):
one list+watch per kind and namespace, merged reads, indexes and events, per-namespace
selectors, ``ALL_NAMESPACES``, cluster-scoped kinds, and the error for a namespace not cached."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from kube_runtime import Manager, kinds
from kube_runtime.cache import (
    ALL_NAMESPACES,
    ByObject,
    InformerCache,
    MultiNamespaceInformer,
    NamespaceConfig,
    NamespaceNotCached,
    ResourceEventHandlerFuncs,
    SharedInformer,
)
from kube_runtime.cli import build_parser, main, manager_for
from kube_runtime.client import Client
from kube_runtime.client.fake import FakeClient
from kube_runtime.client.mapping import RestMapper
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.kinds import as_kind
from kube_runtime.selectors import object_fields, parse_field_selector, parse_label_selector
from kube_runtime.sharding import Sharding
from kube_runtime.source import KindSource


@dataclass(frozen=True)
class _Event:
    type: str
    object: dict[str, Any]


class _Watch:
    def __init__(self, source: _Source, accepts: Any) -> None:
        self._source = source
        self._accepts = accepts
        self._position = len(source.history)
        self._closed = False

    def __iter__(self) -> Iterator[_Event]:
        cond = self._source.cond
        while True:
            with cond:
                while not self._closed and self._position >= len(self._source.history):
                    cond.wait(0.05)
                if self._closed:
                    return
                event = self._source.history[self._position]
                self._position += 1
            if self._accepts(event.object):
                yield event

    def close(self) -> None:
        with self._source.cond:
            self._closed = True
            self._source.cond.notify_all()


class _Source:
    """An in-memory ListerWatcher of several kinds that honours namespace, label and field
    selectors, and records every list it answers (kind, namespace, label, field)."""

    def __init__(self, *, mapper: bool = False) -> None:
        self.cond = threading.Condition()
        self.rv = 10
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.history: list[_Event] = []
        self.lists: list[tuple[str, str | None, str | None, str | None]] = []
        if mapper:
            self.mapper = RestMapper(None)

    def put(self, kind: str, namespace: str, name: str, **labels: str) -> dict[str, Any]:
        with self.cond:
            self.rv += 1
            key = (kind, namespace, name)
            meta: dict[str, Any] = {"name": name, "resourceVersion": str(self.rv), "uid": name}
            if namespace:
                meta["namespace"] = namespace
            if labels:
                meta["labels"] = labels
            obj = {"apiVersion": "v1", "kind": kind, "metadata": meta}
            kind_event = "MODIFIED" if key in self.objects else "ADDED"
            self.objects[key] = obj
            self.history.append(_Event(kind_event, obj))
            self.cond.notify_all()
            return obj

    def delete(self, kind: str, namespace: str, name: str) -> None:
        with self.cond:
            self.rv += 1
            old = self.objects.pop((kind, namespace, name))
            gone = {**old, "metadata": {**old["metadata"], "resourceVersion": str(self.rv)}}
            self.history.append(_Event("DELETED", gone))
            self.cond.notify_all()

    @staticmethod
    def _filter(kind: Any, namespace: str | None, label: Any, field: Any) -> Any:
        name = as_kind(kind).kind
        labels = parse_label_selector(label) if label else None
        fields = parse_field_selector(field) if field else None

        def accepts(obj: Mapping[str, Any]) -> bool:
            meta = obj["metadata"]
            return (
                obj["kind"] == name
                and (not namespace or meta.get("namespace") == namespace)
                and (labels is None or labels.matches(meta.get("labels")))
                and (fields is None or fields.matches(object_fields(obj)))
            )

        return accepts

    def list(
        self,
        kind: Any,
        namespace: str | None = None,
        *,
        label_selector: Any = None,
        field_selector: Any = None,
        limit: int | None = None,
    ) -> Mapping[str, Any]:
        accepts = self._filter(kind, namespace, label_selector, field_selector)
        with self.cond:
            self.lists.append((as_kind(kind).kind, namespace, label_selector, field_selector))
            items = [o for o in self.objects.values() if accepts(o)]
            return {"metadata": {"resourceVersion": str(self.rv)}, "items": items}

    def watch(self, kind: Any, namespace: str | None = None, **options: Any) -> _Watch:
        accepts = self._filter(
            kind, namespace, options.get("label_selector"), options.get("field_selector")
        )
        with self.cond:
            return _Watch(self, accepts)


def _names(objs: list[Any]) -> list[str]:
    return sorted(f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in objs)


@pytest.fixture
def source() -> _Source:
    src = _Source(mapper=True)
    for ns in ("a", "b", "c"):
        src.put("ConfigMap", ns, "cm", app="x")
        src.put("ConfigMap", ns, "plain")
        src.put("Secret", ns, "s")
    src.put("Namespace", "", "a")
    return src


@pytest.fixture
def caches() -> Iterator[list[InformerCache]]:
    made: list[InformerCache] = []
    yield made
    for cache in made:
        cache.stop()


def test_several_namespaces_are_listed_each_and_read_as_one(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(source, namespaces=["b", "a"])
    caches.append(cache)
    assert cache.namespaces == ["a", "b"] and cache.namespace is None
    assert _names(cache.list(kinds.ConfigMap)) == ["a/cm", "a/plain", "b/cm", "b/plain"]
    assert _names(cache.list(kinds.ConfigMap, "b")) == ["b/cm", "b/plain"]
    assert _names(cache.list(kinds.ConfigMap, label_selector="app=x")) == ["a/cm", "b/cm"]
    assert cache.get(kinds.ConfigMap, "cm", "a")["metadata"]["namespace"] == "a"
    # One list per namespace (a namespaced list each), none of the cluster.
    assert sorted(str(ns) for kind, ns, _, _ in source.lists if kind == "ConfigMap") == ["a", "b"]
    informer = cache.informer_for(kinds.ConfigMap)
    assert isinstance(informer, MultiNamespaceInformer) and informer.namespaces == ["a", "b"]
    assert len(informer.indexer) == 4 and "b/plain" in informer.indexer


def test_reading_a_namespace_not_cached_names_the_cached_ones(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(source, namespaces=["a", "b"])
    caches.append(cache)
    with pytest.raises(NamespaceNotCached, match=r"namespace 'c' is not cached .*'a', 'b'") as e:
        cache.get(kinds.ConfigMap, "cm", "c")
    assert e.value.cached == ["a", "b"] and e.value.namespace == "c"
    with pytest.raises(ValueError, match="not cached"):  # a ValueError, as before
        cache.list(kinds.ConfigMap, "c")
    single = InformerCache(source, namespace="a")
    caches.append(single)
    with pytest.raises(NamespaceNotCached, match=r"'b' is not cached .* in 'a' only"):
        single.list(kinds.ConfigMap, "b")


def test_namespace_is_shorthand_for_one_namespace(
    source: _Source, caches: list[InformerCache]
) -> None:
    one, listed = InformerCache(source, namespace="a"), InformerCache(source, namespaces=["a"])
    caches += [one, listed]
    for cache in (one, listed):
        assert cache.namespace == "a" and cache.namespaces == ["a"]
        informer = cache.informer_for(kinds.ConfigMap)
        assert isinstance(informer, SharedInformer) and informer.namespace == "a"
        assert _names(cache.list(kinds.ConfigMap)) == ["a/cm", "a/plain"]


def test_bad_namespace_options_are_refused(source: _Source) -> None:
    with pytest.raises(ValueError, match="not both"):
        InformerCache(source, namespace="a", namespaces=["b"])
    with pytest.raises(TypeError, match="list of namespace names"):
        InformerCache(source, namespaces="a")
    with pytest.raises(ValueError, match="use None to cache every namespace"):
        InformerCache(source, namespaces=[])
    with pytest.raises(TypeError, match="NamespaceConfig"):
        ByObject(namespaces={"a": "app=x"})


def test_by_object_namespaces_replace_the_default_for_one_kind(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(
        source, namespaces=["a", "b"], by_object={kinds.Secret: ByObject(namespaces=["c"])}
    )
    caches.append(cache)
    assert _names(cache.list(kinds.Secret)) == ["c/s"]
    assert cache.namespaces_of(kinds.Secret) == ["c"]
    assert cache.namespaces_of(kinds.ConfigMap) == ["a", "b"]
    with pytest.raises(NamespaceNotCached, match=r"'a' is not cached for v1/Secret.* 'c' only"):
        cache.get(kinds.Secret, "s", "a")
    with pytest.raises(NamespaceNotCached):
        cache.get(kinds.ConfigMap, "cm", "c")
    # Its selectors still apply (ByObject's other settings are kept).
    labelled = InformerCache(
        source, by_object={kinds.ConfigMap: ByObject(label_selector="app=x", namespaces=["a", "c"])}
    )
    caches.append(labelled)
    assert _names(labelled.list(kinds.ConfigMap)) == ["a/cm", "c/cm"]


def test_per_namespace_selectors_and_their_precedence(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(
        source,
        namespaces={"a": NamespaceConfig(label_selector="app=x"), "b": None},
        by_object={
            kinds.Secret: ByObject(namespaces={"a": NamespaceConfig(field_selector="")}),
        },
    )
    caches.append(cache)
    # a: its namespace's selector; b: everything.
    assert _names(cache.list(kinds.ConfigMap)) == ["a/cm", "b/cm", "b/plain"]
    asked = {ns: label for kind, ns, label, _ in source.lists if kind == "ConfigMap"}
    assert asked == {"a": "app=x", "b": None}
    # A kind's own namespace config falls through to the cache's namespace config.
    assert _names(cache.list(kinds.Secret)) == []  # secrets carry no app=x label
    # A kind-level selector wins over the cache's namespace config when the kind names
    # its namespaces, and is overridden by that kind's own namespace config.
    kind_level = InformerCache(
        source,
        namespaces={"a": NamespaceConfig(label_selector="app=x")},
        by_object={
            kinds.ConfigMap: ByObject(
                label_selector="",
                namespaces={"a": None, "b": NamespaceConfig(label_selector="app=x")},
            )
        },
    )
    caches.append(kind_level)
    assert _names(kind_level.list(kinds.ConfigMap)) == ["a/cm", "a/plain", "b/cm"]


def test_all_namespaces_beside_named_ones_holds_each_object_once(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(
        source, namespaces={ALL_NAMESPACES: None, "a": NamespaceConfig(label_selector="app=x")}
    )
    caches.append(cache)
    assert _names(cache.list(kinds.ConfigMap)) == ["a/cm", "b/cm", "b/plain", "c/cm", "c/plain"]
    fields = {ns: field for kind, ns, _, field in source.lists if kind == "ConfigMap"}
    assert fields == {None: "metadata.namespace!=a", "a": None}
    assert cache.get(kinds.ConfigMap, "plain", "c")["metadata"]["namespace"] == "c"
    assert _names(cache.list(kinds.ConfigMap, "a")) == ["a/cm"]  # from a's informer only
    assert cache.namespaces_of(kinds.ConfigMap) == ["", "a"]


def test_cluster_scoped_kinds_are_cached_cluster_wide(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(source, namespaces=["a", "b"])
    caches.append(cache)
    assert _names(cache.list(kinds.Namespace)) == ["/a"]
    assert cache.namespaces_of(kinds.Namespace) is None
    assert ("Namespace", None, None, None) in source.lists
    wrong = InformerCache(source, by_object={kinds.Namespace: ByObject(namespaces=["a"])})
    caches.append(wrong)
    with pytest.raises(ValueError, match="cluster-scoped: its ByObject"):
        wrong.list(kinds.Namespace)


def test_indexes_span_every_namespace(source: _Source, caches: list[InformerCache]) -> None:
    cache = InformerCache(source, namespaces=["a", "c"])
    caches.append(cache)
    cache.add_indexer(kinds.ConfigMap, "by-name", lambda o: [o["metadata"]["name"]])
    assert _names(cache.list(kinds.ConfigMap, index=("by-name", "cm"))) == ["a/cm", "c/cm"]
    assert _names(cache.list(kinds.ConfigMap, "c", index=("by-name", "cm"))) == ["c/cm"]


class _Sink:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def _record(self, what: str, obj: Any) -> None:
        meta = obj["metadata"]
        with self.lock:
            self.events.append((what, f"{meta.get('namespace')}/{meta['name']}"))

    def on_create(self, obj: Any) -> None:
        self._record("create", obj)

    def on_update(self, old: Any, new: Any) -> None:
        self._record("update", new)

    def on_delete(self, obj: Any) -> None:
        self._record("delete", obj)

    def on_generic(self, obj: Any) -> None:
        self._record("generic", obj)


def test_a_source_gets_each_event_of_every_cached_namespace_once(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(source, namespaces={ALL_NAMESPACES: None, "a": None, "b": None})
    caches.append(cache)
    cache.start()
    sink, stop = _Sink(), threading.Event()
    kind_source = KindSource(cache, kinds.Secret)
    kind_source.start(sink, stop)
    assert kind_source.wait_for_sync(5)
    wait_for(lambda: len(sink.events) == 3, timeout=5, message="the initial adds")
    assert sorted(sink.events) == [("create", "a/s"), ("create", "b/s"), ("create", "c/s")]
    source.put("Secret", "b", "s", changed="yes")
    source.put("Secret", "d", "new")
    source.delete("Secret", "a", "s")
    wait_for(lambda: len(sink.events) == 6, timeout=5, message="the three changes")
    assert sorted(sink.events[3:]) == [("create", "d/new"), ("delete", "a/s"), ("update", "b/s")]
    stop.set()


def test_a_source_sees_nothing_of_namespaces_not_cached(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(source, namespaces=["a", "b"])
    caches.append(cache)
    cache.start()
    sink, stop = _Sink(), threading.Event()
    kind_source = KindSource(cache, kinds.Secret)
    kind_source.start(sink, stop)
    assert kind_source.wait_for_sync(5)
    source.put("Secret", "c", "other")
    source.put("Secret", "b", "last")
    wait_for(lambda: ("create", "b/last") in sink.events, timeout=5, message="the event in b")
    assert sorted(sink.events) == [("create", "a/s"), ("create", "b/last"), ("create", "b/s")]
    stop.set()


def test_manager_takes_namespaces_and_sharding_takes_one(mocker: MockerFixture) -> None:
    m = Manager(FakeClient(), metrics_bind_address="0", namespaces=["x", "y"])
    assert m.namespaces == ["x", "y"] and m.namespace is None
    assert m.cache.namespaces_of(kinds.ConfigMap) == ["x", "y"]
    one = Manager(FakeClient(), metrics_bind_address="0", namespace="x")
    assert one.namespace == "x" and one.namespaces == ["x"]
    sharder = mocker.patch("kube_runtime.sharding._shard.Sharder")
    Manager(FakeClient(), metrics_bind_address="0", namespace="x", sharding=Sharding("ring"))
    assert sharder.call_args.kwargs["namespace"] == "x"  # the sharder watches that namespace
    with pytest.raises(ValueError, match="sharding takes one namespace"):
        Manager(
            FakeClient(), metrics_bind_address="0", namespaces=["x", "y"], sharding=Sharding("r")
        )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], None),
        (["--namespace", "x"], ["x"]),
        (["--namespace", "x,y", "--namespace", "z", "--namespace", "y"], ["x", "y", "z"]),
    ],
)
def test_cli_namespace_flag_is_repeatable_and_takes_comma_lists(
    mocker: MockerFixture, argv: list[str], expected: list[str] | None
) -> None:
    mocker.patch.object(Client, "from_env", side_effect=FakeClient)
    args = build_parser().parse_args(["run", "--metrics-port", "0", "statefulset", *argv])
    manager = manager_for(args)
    assert manager.namespaces == expected
    assert manager.cache.namespaces_of(kinds.Pod) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--namespace", "x,,y"], "an empty namespace name"),
        (["--namespace", "x,y", "--shards", "2"], "--shards takes one --namespace"),
    ],
)
def test_cli_refuses_bad_namespaces(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "statefulset", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_readme_namespaces_block_runs_as_written() -> None:
    readme = Path(__file__).resolve().parents[3] / "README.md"
    marker = "<!-- readme:cache-namespaces -->\n```python\n"
    block = readme.read_text().split(marker, 1)[1].split("```", 1)[0]
    scope: dict[str, Any] = {"client": FakeClient()}
    exec(compile(block, "README.md", "exec"), scope)
    manager = scope["manager"]
    assert manager.namespaces == ["team-a", "team-b"]
    assert manager.cache.namespaces_of(kinds.Secret) == ["operator-system"]
    assert manager.cache.namespaces_of(kinds.Namespace) is None  # cluster-scoped
    with pytest.raises(NamespaceNotCached, match="'team-a', 'team-b'"):
        manager.client.get(kinds.ConfigMap, "x", "team-c")


def test_a_handler_registration_spans_the_namespaces_and_is_removed_from_all(
    source: _Source, caches: list[InformerCache]
) -> None:
    cache = InformerCache(source, namespaces=["a", "b"])
    caches.append(cache)
    informer = cache.informer_for(kinds.Secret)
    assert isinstance(informer, MultiNamespaceInformer)
    added: list[str] = []
    registration = informer.add_event_handler(
        ResourceEventHandlerFuncs(on_add=lambda o: added.append(o["metadata"]["namespace"]))
    )
    assert set(registration.registrations) == {"a", "b"}
    informer.start()
    assert registration.wait_for_sync(5) and registration.has_synced()
    assert sorted(added) == ["a", "b"]
    informer.remove_event_handler(registration)
    kept: list[str] = []
    informer.add_event_handler(
        ResourceEventHandlerFuncs(on_add=lambda o: kept.append(o["metadata"]["name"]))
    )
    source.put("Secret", "a", "after")
    wait_for(lambda: "after" in kept, timeout=5, message="the new Secret at a kept handler")
    assert sorted(added) == ["a", "b"]  # removed from every namespace's informer
