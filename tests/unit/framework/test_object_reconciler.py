"""reconcile.as_reconciler: a function of the object itself behind the Request contract."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from kube_runtime.client.errors import NotFound
from kube_runtime.reconcile import Request, Result, as_reconciler


class _Reader:
    def __init__(self, objects: dict[tuple[str | None, str], dict[str, Any]]) -> None:
        self.objects = objects
        self.calls: list[tuple[Any, str, str | None]] = []

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        self.calls.append((kind, name, namespace))
        try:
            obj = self.objects[(namespace, name)]
        except KeyError:
            raise NotFound({"code": 404, "reason": "NotFound", "message": "gone"}) from None
        return kind.model_validate(obj) if isinstance(kind, type) else obj


def test_the_function_gets_a_private_copy_of_the_cached_object() -> None:
    shared = {"metadata": {"name": "a", "namespace": "ns"}, "data": {"k": "v"}}
    reader = _Reader({("ns", "a"): shared})
    seen: list[dict[str, Any]] = []

    def fn(obj: dict[str, Any]) -> Result:
        obj["data"]["k"] = "changed"  # allowed: the cache's copy must not change
        seen.append(obj)
        return Result(requeue_after=5)

    result = as_reconciler(reader, "v1/ConfigMap", fn).reconcile(Request("a", "ns"))
    assert result == Result(requeue_after=5)
    assert seen[0]["data"] == {"k": "changed"}
    assert shared["data"] == {"k": "v"}
    assert reader.calls == [("v1/ConfigMap", "a", "ns")]


def test_a_gone_object_is_done_without_a_call() -> None:
    called: list[Any] = []
    reconciler = as_reconciler(_Reader({}), "v1/ConfigMap", called.append)
    assert reconciler.reconcile(Request("a", "ns")) is None
    assert called == []


class _Meta(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    namespace: str | None = None


class _Thing(BaseModel):
    model_config = ConfigDict(extra="allow")
    metadata: _Meta


def test_a_model_kind_gives_models_and_requests_name_them() -> None:
    reader = _Reader({("ns", "t"): {"metadata": {"name": "t", "namespace": "ns"}}})
    got: list[_Thing] = []
    as_reconciler(reader, _Thing, got.append).reconcile(Request("t", "ns"))
    assert isinstance(got[0], _Thing)
    assert Request.for_object(got[0]) == Request("t", "ns")
