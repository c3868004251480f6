"""Finalizer helpers against the embedded API server: idempotent add, removal releasing a
deleted object, and the optimistic lock (a stale copy is re-read, nobody's change is lost)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kube_runtime.client.errors import NotFound
from kube_runtime.finalizers import ensure_finalizer, ensure_finalizer_removed, has_finalizer
from kube_runtime.kinds import ConfigMap, Namespace

MINE = "example.com/cleanup"
THEIRS = "other.io/protect"


class Counting:
    """Forwards to the real client, counting reads and patches."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.gets = 0
        self.patches = 0

    def get(self, *args: Any, **kwargs: Any) -> Any:
        self.gets += 1
        return self.client.get(*args, **kwargs)

    def patch(self, *args: Any, **kwargs: Any) -> Any:
        self.patches += 1
        return self.client.patch(*args, **kwargs)


def _config_map(client: Any, namespace: str, finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "settings", "namespace": namespace}
    if finalizers:
        meta["finalizers"] = finalizers
    created: dict[str, Any] = client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}
    )
    return created


def test_add_is_idempotent(client: Any, namespace: str) -> None:
    counting = Counting(client)
    cm = _config_map(client, namespace)
    assert not has_finalizer(cm, MINE)

    added = ensure_finalizer(counting, cm, MINE)
    assert added["metadata"]["finalizers"] == [MINE]
    assert has_finalizer(added, MINE)
    assert counting.patches == 1

    again = ensure_finalizer(counting, added, MINE)
    assert again is added
    assert counting.patches == 1 and counting.gets == 0  # nothing to change: no request
    stored = client.get(ConfigMap, "settings", namespace)
    assert stored["metadata"]["finalizers"] == [MINE]
    assert stored["metadata"]["resourceVersion"] == added["metadata"]["resourceVersion"]

    assert ensure_finalizer_removed(counting, cm, "never.io/added") is cm
    assert counting.patches == 1


def test_removing_the_last_finalizer_lets_a_deleted_object_go(
    client: Any, namespace: str, wait_for: Any
) -> None:
    cm = ensure_finalizer(client, _config_map(client, namespace), MINE)
    client.delete(ConfigMap, "settings", namespace)
    terminating = client.get(ConfigMap, "settings", namespace)
    assert terminating["metadata"].get("deletionTimestamp")

    ensure_finalizer_removed(client, terminating, MINE)

    def gone() -> bool:
        try:
            client.get(ConfigMap, "settings", namespace)
        except NotFound:
            return True
        return False

    wait_for(gone, 10, message="the ConfigMap to be deleted")
    assert cm["metadata"]["uid"]


def test_a_stale_copy_is_reread_and_no_change_is_lost(client: Any, namespace: str) -> None:
    counting = Counting(client)
    stale = _config_map(client, namespace)
    # Someone else writes between our read and our patch: data and a finalizer of theirs.
    fresh = dict(stale)
    fresh["metadata"] = {**stale["metadata"], "finalizers": [THEIRS]}
    fresh["data"] = {"k": "changed"}
    client.update(fresh)

    added = ensure_finalizer(counting, stale, MINE)
    assert counting.gets == 1 and counting.patches == 2  # 409, re-read, patch again
    assert added["metadata"]["finalizers"] == [THEIRS, MINE]
    assert added["data"] == {"k": "changed"}

    # Removing from a stale copy keeps the finalizer added meanwhile.
    client.patch(
        ConfigMap,
        "settings",
        {"metadata": {"finalizers": [THEIRS, MINE, "third.io/x"]}},
        namespace=namespace,
    )
    removed = ensure_finalizer_removed(client, added, MINE)
    assert removed["metadata"]["finalizers"] == [THEIRS, "third.io/x"]


def test_cluster_scoped_objects(client: Any) -> None:
    name = f"fin-{uuid.uuid4().hex[:8]}"
    ns = client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        added = ensure_finalizer(client, ns, MINE)
        assert client.get(Namespace, name)["metadata"]["finalizers"] == [MINE]
        removed = ensure_finalizer_removed(client, added, MINE)
        assert not has_finalizer(removed, MINE)
        assert not client.get(Namespace, name)["metadata"].get("finalizers")
    finally:
        client.delete(Namespace, name)


def test_a_missing_object_raises_not_found(client: Any, namespace: str) -> None:
    cm = _config_map(client, namespace)
    client.delete(ConfigMap, "settings", namespace)
    with pytest.raises(NotFound):
        ensure_finalizer(client, cm, MINE)
