"""create_or_update / create_or_patch given the manager's client, whose reads come from a
cache that can lag the API server (docs/framework.md, "controllerutil"): a read that has not
seen a write yet ends in ``AlreadyExists`` / ``Conflict``, the retry re-reads, and when the
cache is still behind after the last try the error propagates (the controller requeues).

``LaggingCache`` stands for the informer cache: reads answer what the API server held some
writes ago (``lag`` re-reads until a key catches up); writes go straight to the API server,
a :class:`FakeClient`.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.client import AlreadyExists, NotFound
from kube_runtime.client.fake import FakeClient
from kube_runtime.controllerutil import OperationResult, create_or_patch, create_or_update
from kube_runtime.retry import Backoff

NO_WAIT = Backoff(steps=3, duration=0.0, factor=1.0, jitter=0.0)


class LaggingCache:
    """Reads from a snapshot of ``api`` that catches up with a key only after ``lag`` reads
    of it; every other call goes to ``api``."""

    def __init__(self, api: FakeClient, lag: int) -> None:
        self.api = api
        self.lag = lag
        self.snapshot: dict[tuple[str, str], Any] = {}
        self.reads: dict[tuple[str, str], int] = {}
        self.writes: list[str] = []

    def freeze(self, kind: Any, name: str, namespace: str) -> None:
        """Remember what the API holds now for the key (NotFound: absent) as the cache's."""
        try:
            self.snapshot[(name, namespace)] = self.api.get(kind, name, namespace)
        except NotFound:
            self.snapshot[(name, namespace)] = None

    def get(self, kind: Any, name: str, namespace: str | None = None, **kw: Any) -> Any:
        key = (name, namespace or "")
        self.reads[key] = self.reads.get(key, 0) + 1
        if key in self.snapshot and self.reads[key] <= self.lag:
            held = self.snapshot[key]
            if held is None:
                raise NotFound({"kind": "Status", "code": 404, "reason": "NotFound"})
            return copy.deepcopy(held)
        return self.api.get(kind, name, namespace, **kw)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.api, name)
        if name in ("create", "update", "patch"):
            self.writes.append(name)
        return attr


def config_map(namespace: str = "ns", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": namespace},
        **({"data": dict(data)} if data else {}),
    }


def set_data(obj: dict[str, Any]) -> None:
    obj["data"] = {"k": "mine"}


@pytest.mark.parametrize("writer", [create_or_update, create_or_patch])
def test_a_create_the_cache_has_not_seen_is_retried(writer: Any) -> None:
    api = FakeClient()
    cache = LaggingCache(api, lag=1)
    cache.freeze(kinds.ConfigMap, "settings", "ns")  # the cache: no ConfigMap yet
    api.create(config_map(k="theirs"))  # created meanwhile (e.g. by the last reconcile)
    obj, result = writer(cache, config_map(), set_data, backoff=NO_WAIT)
    assert result is OperationResult.UPDATED  # AlreadyExists, re-read, then written
    assert cache.writes[0] == "create"
    assert api.get(kinds.ConfigMap, "settings", "ns")["data"] == {"k": "mine"}
    assert obj["data"] == {"k": "mine"}


def test_an_update_from_a_stale_read_conflicts_and_is_retried() -> None:
    api = FakeClient()
    api.create(config_map(k="old"))
    cache = LaggingCache(api, lag=1)
    cache.freeze(kinds.ConfigMap, "settings", "ns")
    api.update({**api.get(kinds.ConfigMap, "settings", "ns"), "data": {"k": "theirs"}})
    _, result = create_or_update(cache, config_map(), set_data, backoff=NO_WAIT)
    assert result is OperationResult.UPDATED
    assert cache.writes == ["update", "update"]  # Conflict on the stale one, then written
    assert api.get(kinds.ConfigMap, "settings", "ns")["data"] == {"k": "mine"}


def test_a_cache_still_behind_after_the_last_try_raises_for_a_requeue() -> None:
    api = FakeClient()
    cache = LaggingCache(api, lag=10)
    cache.freeze(kinds.ConfigMap, "settings", "ns")
    api.create(config_map(k="theirs"))
    with pytest.raises(AlreadyExists):
        create_or_update(cache, config_map(), set_data, backoff=NO_WAIT)
    assert cache.writes == ["create"] * NO_WAIT.steps
    # The next reconcile, once the cache has caught up, converges without a conflict.
    cache.lag = 0
    _, result = create_or_update(cache, config_map(), set_data, backoff=NO_WAIT)
    assert result is OperationResult.UPDATED


def test_a_converged_object_read_from_the_cache_sends_no_request() -> None:
    api = FakeClient()
    api.create(config_map(k="mine"))
    cache = LaggingCache(api, lag=0)
    before = len(api.actions)
    _, result = create_or_patch(cache, config_map(), set_data)
    assert result is OperationResult.UNCHANGED
    assert cache.writes == []
    assert [a.verb for a in api.actions[before:]] == ["get"]  # the cache's read, here
