"""The store's admission hook points: webhooks are called with the store lock released, an
update whose object changed during the calls is redone (as kube-apiserver retries a
conflicting update), and writes of threads serving no request call nothing."""

from __future__ import annotations

import threading
from typing import Any

from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import AdmissionCall, Obj, Store


class RecordingHook:
    """An admission hook that records its calls and can run something during one."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.during_mutate: Any = None
        self.enabled = True

    def active(self) -> bool:
        return self.enabled

    def mutate(self, call: AdmissionCall, *, default: Any = None) -> Obj | None:
        self.calls.append(("mutate", call.operation))
        if self.during_mutate is not None:
            action, self.during_mutate = self.during_mutate, None
            action()
        obj = call.obj
        if obj is None:
            return None
        labels = dict(obj.get("metadata", {}).get("labels") or {})
        labels["mutated"] = "yes"
        return {**obj, "metadata": {**obj["metadata"], "labels": labels}}

    def validate(self, call: AdmissionCall) -> None:
        self.calls.append(("validate", call.operation))


def _setup() -> tuple[Store, Any, RecordingHook]:
    store = Store(Registry())
    info = store.registry.by_key("", "configmaps")
    hook = RecordingHook()
    hook.enabled = False
    namespaces = store.registry.by_key("", "namespaces")
    assert namespaces is not None
    store.create(namespaces, None, {"metadata": {"name": "ns"}})
    store.admission = hook
    return store, info, hook


def test_create_update_delete_call_the_hook() -> None:
    store, info, hook = _setup()
    hook.enabled = True
    created = store.create(info, "ns", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    assert created.obj["metadata"]["labels"] == {"mutated": "yes"}
    store.update(info, "ns", "c", {"metadata": {"name": "c"}, "data": {"a": "2"}})
    store.delete(info, "ns", "c")
    assert hook.calls == [
        ("mutate", "CREATE"),
        ("validate", "CREATE"),
        ("mutate", "UPDATE"),
        ("validate", "UPDATE"),
        ("mutate", "DELETE"),
        ("validate", "DELETE"),
    ]


def test_no_calls_outside_a_request() -> None:
    store, info, hook = _setup()
    store.create(info, "ns", {"metadata": {"name": "c"}})
    assert hook.calls == []


def test_the_lock_is_released_during_a_call_and_a_changed_object_is_redone() -> None:
    store, info, hook = _setup()
    store.create(info, "ns", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    hook.enabled = True

    def concurrent_write() -> None:
        # another thread gets the lock while the webhook is being called, and writes
        def write() -> None:
            store.mutate(info, "ns", "c", lambda obj: {**obj, "data": {"a": "1", "b": "2"}})

        other = threading.Thread(target=write)
        hook.enabled = False  # the other thread serves no request
        other.start()
        other.join(5)
        hook.enabled = True
        assert not other.is_alive()

    hook.during_mutate = concurrent_write
    result = store.mutate(info, "ns", "c", lambda obj: {**obj, "data": {**obj["data"], "c": "3"}})
    # redone on the object the other thread wrote: nothing of its write is lost
    assert result.obj["data"] == {"a": "1", "b": "2", "c": "3"}
    assert hook.calls.count(("mutate", "UPDATE")) == 2
    assert hook.calls.count(("validate", "UPDATE")) == 1
