"""The reconciler's sync over an in-memory API and a cache that can lag behind it."""

from __future__ import annotations

from typing import Any

from controllers.statefulset.controller import StatefulSetReconciler
from kube_runtime.kinds import as_kind
from kube_runtime.reconcile import Request
from tests.unit.test_statefulset_fakes import NS, FakeApi, Recorder, make_set


class LaggingCache:
    """Reads from the API, except that ``freeze()`` pins the pod list (a stale cache)."""

    def __init__(self, api: FakeApi) -> None:
        self.api = api
        self.frozen_pods: list[dict[str, Any]] | None = None

    def freeze(self) -> None:
        self.frozen_pods = self.api.list("v1/Pod", NS)["items"]

    def get(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        return self.api.get(kind, name, namespace)

    def list(self, kind: Any, namespace: str | None = None, **_: Any) -> dict[str, Any]:
        if as_kind(kind).kind == "Pod" and self.frozen_pods is not None:
            return {"items": list(self.frozen_pods)}
        return self.api.list(kind, namespace)


def reconciler(
    sts: dict[str, Any],
) -> tuple[StatefulSetReconciler, FakeApi, LaggingCache, Recorder]:
    api = FakeApi()
    api.create(sts)
    cache = LaggingCache(api)
    recorder = Recorder()
    return StatefulSetReconciler(api, cache, recorder), api, cache, recorder  # type: ignore[arg-type]


def pod_writes(api: FakeApi, verb: str) -> list[str]:
    return [n for v, k, n in api.writes if v == verb and k == "Pod"]


def test_stale_cache_never_creates_twice():
    r, api, cache, _ = reconciler(make_set(3, policy="Parallel"))
    cache.freeze()  # the cache will not show the pods created below
    request = Request("web", NS)
    r.reconcile(request)
    assert pod_writes(api, "create") == ["web-0", "web-1", "web-2"]
    result = r.reconcile(request)
    assert pod_writes(api, "create") == ["web-0", "web-1", "web-2"]
    assert result is not None and result.requeue_after
    cache.frozen_pods = None  # the cache catches up
    r.reconcile(request)
    assert pod_writes(api, "create") == ["web-0", "web-1", "web-2"]


def test_stale_cache_never_deletes_twice():
    r, api, cache, _ = reconciler(make_set(2, policy="Parallel"))
    request = Request("web", NS)
    r.reconcile(request)
    sts = api.get("apps/v1/StatefulSet", "web", NS)
    sts["spec"]["replicas"] = 0
    api.update(sts)
    api.graceful = True  # deleted pods linger with a deletionTimestamp
    cache.freeze()
    r.reconcile(request)
    assert sorted(pod_writes(api, "delete")) == ["web-0", "web-1"]
    r.reconcile(request)
    assert sorted(pod_writes(api, "delete")) == ["web-0", "web-1"]


def test_invalid_selector_is_reported_once_per_sync_without_retry():
    sts = make_set(1)
    sts["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}
    r, api, _, recorder = reconciler(sts)
    assert r.reconcile(Request("web", NS)) is None
    assert [e[1] for e in recorder.events] == ["InvalidSelector"]
    assert pod_writes(api, "create") == []


def test_deleted_set_is_forgotten():
    r, api, _, _ = reconciler(make_set(1))
    api.objects.clear()
    assert r.reconcile(Request("web", NS)) is None
