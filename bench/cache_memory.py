"""The informer cache's memory for objects carrying managedFields (issue 19 part 5):
``python -m bench cache-transform`` stores 10,000 ConfigMaps as a cluster serves them after a
``kubectl apply`` and a controller's update (two managedFields entries, the last-applied
annotation, three data keys) in an :class:`~kube_runtime.cache.store.Indexer`, with the
informers' default transform (:func:`~kube_runtime.cache.informer.strip_managed_fields`) and
without, and reports the bytes the store holds per object (``tracemalloc``) against the
objects' JSON size. The metadata-only row is what a
``ByObject(metadata_only=True)`` informer keeps: the server sends ``PartialObjectMetadata``
(the object's whole metadata), the default transform then drops managedFields and the
annotation."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

from bench.embedded_server import Context
from kube_runtime.cache import ByObject
from kube_runtime.cache.informer import LAST_APPLIED_ANNOTATION, Transform, strip_managed_fields
from kube_runtime.cache.store import CompactIndexer, Indexer

OBJECTS = 10_000


def applied_configmap(i: int) -> dict[str, Any]:
    """A ConfigMap as kube-apiserver returns it after ``kubectl apply`` and an operator's
    update of one key."""
    data = {f"key{j}": f"value-{i}-{j}" for j in range(3)}
    owned: dict[str, Any] = {"f:data": {f"f:key{j}": {} for j in range(3)}}
    last_applied = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"cm-{i}", "namespace": "default", "labels": {"app": "demo"}},
        "data": data,
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"cm-{i}",
            "namespace": "default",
            "uid": f"{i:08x}-aaaa-bbbb-cccc-dddddddddddd",
            "resourceVersion": str(1_000 + i),
            "creationTimestamp": "2026-11-25T07:00:00Z",
            "labels": {"app": "demo"},
            "annotations": {LAST_APPLIED_ANNOTATION: json.dumps(last_applied)},
            "managedFields": [
                {
                    "manager": "kubectl-client-side-apply",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-25T07:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        **owned,
                        "f:metadata": {
                            "f:annotations": {".": {}, f"f:{LAST_APPLIED_ANNOTATION}": {}},
                            "f:labels": {".": {}, "f:app": {}},
                        },
                    },
                },
                {
                    "manager": "my-operator",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-25T07:05:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:key0": {}}},
                },
            ],
        },
        "data": data,
    }


def stored_bytes(texts: list[str], transform: Transform | None, *, compact: bool = False) -> int:
    """Bytes an Indexer (a CompactIndexer with ``compact``) holds after storing the decoded
    ``texts`` through ``transform``."""
    gc.collect()
    tracemalloc.start()
    try:
        objs = [json.loads(t) for t in texts]
        indexer = CompactIndexer() if compact else Indexer()
        indexer.replace([transform(o) for o in objs] if transform else objs)
        del objs
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del indexer
    return held


def scenario_cache_transform(ctx: Context) -> None:
    texts = [json.dumps(applied_configmap(i), separators=(",", ":")) for i in range(OBJECTS)]
    json_bytes = sum(len(t) for t in texts) / OBJECTS
    table = ctx.table(
        "cache-transform",
        f"cache memory: {OBJECTS:,} applied ConfigMaps (managedFields, last-applied annotation)",
        "transform | stored bytes per object | JSON bytes per object | stored / JSON",
    )
    cases: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]] | None]] = [
        ("none (objects as served)", None),
        ("strip_managed_fields (the default)", strip_managed_fields),
        (
            "metadata-only, `ByObject(metadata_only=True)` (+ the default)",
            ByObject(metadata_only=True).effective_transform(),
        ),
    ]
    for name, transform in cases:
        held = stored_bytes(texts, transform) / OBJECTS
        table.add(name, f"{held:,.0f}", f"{json_bytes:,.0f}", f"{held / json_bytes:.2f}x")
    compact_cases = [
        ("the default, `ByObject(compact=True)`", strip_managed_fields),
        (
            "metadata-only, `ByObject(metadata_only=True, compact=True)`",
            ByObject(metadata_only=True).effective_transform(),
        ),
    ]
    for name, transform in compact_cases:
        held = stored_bytes(texts, transform, compact=True) / OBJECTS
        table.add(name, f"{held:,.0f}", f"{json_bytes:,.0f}", f"{held / json_bytes:.2f}x")


SCENARIOS: dict[str, Callable[[Any], None]] = {"cache-transform": scenario_cache_transform}
