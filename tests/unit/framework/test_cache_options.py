"""Per-kind cache options (:class:`~kube_runtime.cache.ByObject`) and the server's
metadata-only media-type negotiation (:mod:`kube_runtime.envtest.server.partialmeta`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.cache import ByObject, InformerCache
from kube_runtime.client.errors import ApiError
from kube_runtime.envtest.server import partialmeta

_CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "a",
        "namespace": "ns",
        "resourceVersion": "5",
        "labels": {"app": "x"},
        "managedFields": [{"manager": "kubectl"}],
    },
    "data": {"k": "v"},
}


class _Stream:
    def __init__(self) -> None:
        self._closed = threading.Event()

    def __iter__(self) -> Iterator[Any]:
        self._closed.wait(5)
        return iter(())

    def close(self) -> None:
        self._closed.set()


class _Source:
    """A ListerWatcher serving ``_CM`` and recording the selectors it was asked with."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, Any]] = []

    def list(
        self,
        kind: Any,
        namespace: str | None = None,
        *,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> Mapping[str, Any]:
        self.asked.append((label_selector, field_selector))
        return {"metadata": {"resourceVersion": "5"}, "items": [_CM]}

    def watch(self, kind: Any, namespace: str | None = None, **options: Any) -> _Stream:
        return _Stream()


def test_metadata_only_kind_is_cached_as_metadata() -> None:
    source = _Source()
    cache = InformerCache(source, by_object={kinds.ConfigMap: ByObject(metadata_only=True)})
    try:
        got = cache.get(kinds.ConfigMap, "a", "ns")
    finally:
        cache.stop()
    assert got == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "resourceVersion": "5",
            "labels": {"app": "x"},
        },
    }
    assert cache.is_metadata_only(kinds.ConfigMap)
    assert not cache.is_metadata_only(kinds.Secret)


def test_selectors_are_sent_and_a_shard_selector_is_anded() -> None:
    source = _Source()
    cache = InformerCache(source)
    cache.set_options(
        kinds.ConfigMap, ByObject(label_selector={"app": "x"}, field_selector="metadata.name=a")
    )
    cache.set_label_selector(kinds.ConfigMap, "shard=s1")
    try:
        cache.list(kinds.ConfigMap, "ns")
    finally:
        cache.stop()
    assert source.asked == [("shard=s1,app=x", "metadata.name=a")]


def test_transform_none_keeps_managed_fields_and_options_are_fixed_once_used() -> None:
    source = _Source()
    cache = InformerCache(source, by_object={kinds.ConfigMap: ByObject(transform=None)})
    try:
        assert "managedFields" in cache.get(kinds.ConfigMap, "a", "ns")["metadata"]
        with pytest.raises(ValueError, match="already exists"):
            cache.set_options(kinds.ConfigMap, ByObject(metadata_only=True))
    finally:
        cache.stop()


def test_effective_transform_composes_metadata_cut_and_user_transform() -> None:
    def tag(obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "tagged": True}

    out = ByObject(metadata_only=True, transform=tag).effective_transform()
    assert out is not None
    assert set(out(_CM)) == {"apiVersion", "kind", "metadata", "tagged"}
    assert ByObject().effective_transform() is not None
    assert ByObject(transform=None).effective_transform() is None


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("application/json", None),
        ("application/json;as=Table;g=meta.k8s.io;v=v1", None),
        (
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
            partialmeta.PartialTarget(partialmeta.ITEM, "v1"),
        ),
        (
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,"
            "application/json",
            partialmeta.PartialTarget(partialmeta.LIST, "v1beta1"),
        ),
        # a wrong group or version is skipped, the next range served
        ("application/json;as=PartialObjectMetadata;g=apps;v=v1,application/json", None),
    ],
)
def test_partial_target_negotiation(
    accept: str, expected: partialmeta.PartialTarget | None
) -> None:
    assert partialmeta.partial_target(accept) == expected


def test_a_target_that_does_not_fit_is_not_acceptable() -> None:
    item = partialmeta.PartialTarget(partialmeta.ITEM, "v1")
    name = partialmeta.go_type_name("apps", "StatefulSet", custom=False, listing=True)
    assert name == "*apps.StatefulSetList"
    with pytest.raises(ApiError) as raised:
        partialmeta.require(item, listing=True, type_name=name)
    assert raised.value.status["code"] == 406
    assert partialmeta.go_type_name("x.io", "W", custom=True, listing=False) == (
        "*unstructured.Unstructured"
    )


def test_compact_indexer_stores_json_and_keeps_its_indexes() -> None:
    from kube_runtime.cache.store import INDEX_LABEL, CompactIndexer, compact_json

    indexer = CompactIndexer()
    indexer.replace([_CM])
    first = indexer.get("ns/a")
    assert first == _CM and first is not _CM
    first["data"]["k"] = "changed"  # a read is the caller's own copy
    assert indexer.get("ns/a") == _CM
    relabelled = {**_CM, "metadata": {**_CM["metadata"], "labels": {"app": "y"}}}
    assert indexer.update(relabelled) == _CM
    assert indexer.by_index(INDEX_LABEL, "app=x") == []
    assert indexer.by_index(INDEX_LABEL, "app=y") == [relabelled]
    indexer.add_indexers({"by-name": lambda o: [o["metadata"]["name"]]})  # existing ones too
    assert indexer.by_index("by-name", "a") == [relabelled]
    assert indexer.delete(relabelled) == relabelled
    assert len(indexer) == 0 and indexer.list() == []
    assert compact_json({"a": 1}) == b'{"a":1}'


def test_compact_option_picks_the_compact_store() -> None:
    from kube_runtime.cache.store import CompactIndexer

    cache = InformerCache(_Source(), by_object={kinds.ConfigMap: ByObject(compact=True)})
    try:
        assert isinstance(cache.informer_for(kinds.ConfigMap).indexer, CompactIndexer)
        assert cache.get(kinds.ConfigMap, "a", "ns")["data"] == {"k": "v"}
    finally:
        cache.stop()


def test_label_selector_text_is_parsed_once() -> None:
    """``as_label_selector``: query text gives the selector ``parse_label_selector`` gives,
    the same object on the next read; text that does not parse raises every time."""
    from kube_runtime.cache.cache import as_label_selector
    from kube_runtime.selectors import SelectorError, parse_label_selector

    for text in ("app=web,tier!=db", "env in (a,b),!gone", "x"):
        first = as_label_selector(text)
        assert first == parse_label_selector(text)
        assert as_label_selector(text) is first
        assert first is not None and first.matches({"app": "web", "env": "a", "x": "1"}) == (
            parse_label_selector(text).matches({"app": "web", "env": "a", "x": "1"})
        )
    for _ in range(2):
        with pytest.raises(SelectorError):
            as_label_selector("app=(")
