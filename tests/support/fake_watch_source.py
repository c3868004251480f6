"""Helpers: an in-memory list/watch source with the API server's resourceVersion semantics
(replay after a resourceVersion, 410 Gone for evicted ones, server errors), for informer and
reflector tests without a server."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any


class FakeGone(Exception):
    code = 410


class FakeServerError(Exception):
    code = 500


@dataclass(frozen=True)
class Event:
    type: str
    object: dict[str, Any]


def make_obj(
    name: str,
    rv: int,
    namespace: str | None = "default",
    labels: dict[str, str] | None = None,
    owner_uid: str | None = None,
    data: str = "",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": str(rv), "uid": f"uid-{name}"}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": owner_uid,
             "controller": True}
        ]  # fmt: skip
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"v": data}}


class FakeWatch:
    def __init__(self, server: FakeServer, since: int) -> None:
        self.server = server
        self.since = since
        self.closed = False
        self.delivered = 0

    def __iter__(self) -> Any:
        server = self.server
        pos = server._position_after(self.since)
        while True:
            with server.cond:
                while not self.closed and pos >= len(server.history):
                    server.cond.wait(0.05)
                if self.closed:
                    return
                event = server.history[pos][1]
                pos += 1
            yield event
            self.delivered += 1
            with server.cond:
                if server.stream_errors:
                    raise server.stream_errors.popleft()
                if server.drop_after and self.delivered >= server.drop_after:
                    return

    def close(self) -> None:
        with self.server.cond:
            self.closed = True
            self.server.cond.notify_all()


class FakeServer:
    """One kind's objects, history and watches; every method is thread-safe."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.rv = 100
        self.objects: dict[str, dict[str, Any]] = {}
        self.history: list[tuple[int, Event]] = []  # (rv, event)
        self.evicted_rv = 0
        self.drop_after: int | None = None
        self.watch_errors: deque[Exception] = deque()
        self.list_errors: deque[Exception] = deque()
        self.stream_errors: deque[Exception] = deque()
        self.list_calls: list[dict[str, Any]] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.watches: list[FakeWatch] = []
        self.watch_gate = threading.Event()  # cleared: new watches wait (hold_watches)
        self.watch_gate.set()

    # --- writes ------------------------------------------------------------------------------

    def _emit(self, type_: str, obj: dict[str, Any]) -> None:
        self.history.append((self.rv, Event(type_, obj)))
        self.cond.notify_all()

    def create(self, name: str, **kw: Any) -> dict[str, Any]:
        with self.cond:
            self.rv += 1
            obj = make_obj(name, self.rv, **kw)
            key = f"{obj['metadata'].get('namespace')}/{name}"
            self.objects[key] = obj
            self._emit("ADDED", obj)
            return obj

    def update(self, name: str, data: str, namespace: str = "default") -> dict[str, Any]:
        with self.cond:
            old = self.objects[f"{namespace}/{name}"]
            self.rv += 1
            meta = dict(old["metadata"], resourceVersion=str(self.rv))
            obj = dict(old, metadata=meta, data={"v": data})
            self.objects[f"{namespace}/{name}"] = obj
            self._emit("MODIFIED", obj)
            return obj

    def delete(self, name: str, namespace: str = "default") -> None:
        with self.cond:
            old = self.objects.pop(f"{namespace}/{name}")
            self.rv += 1
            obj = dict(old, metadata=dict(old["metadata"], resourceVersion=str(self.rv)))
            self._emit("DELETED", obj)

    def bookmark(self) -> int:
        """Advance the RV (as writes to other kinds do) and send a BOOKMARK."""
        with self.cond:
            self.rv += 5
            self.history.append(
                (self.rv, Event("BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1",
                                             "metadata": {"resourceVersion": str(self.rv)}}))
            )  # fmt: skip
            self.cond.notify_all()
            return self.rv

    def evict(self) -> None:
        """Forget the history: watches from an older RV get 410 Gone."""
        with self.cond:
            self.evicted_rv = self.rv
            self.history.clear()

    def drop_streams(self) -> None:
        for w in list(self.watches):
            w.close()

    # --- the client face -----------------------------------------------------------------------

    def _position_after(self, since: int) -> int:
        with self.cond:
            for i, (rv, _) in enumerate(self.history):
                if rv > since:
                    return i
            return len(self.history)

    def list(self, kind: Any, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        with self.cond:
            self.list_calls.append(dict(kw, namespace=namespace))
            if self.list_errors:
                raise self.list_errors.popleft()
            items = [o for o in self.objects.values()
                     if namespace is None or o["metadata"].get("namespace") == namespace]  # fmt: skip
            return {"items": list(items), "metadata": {"resourceVersion": str(self.rv)}}

    def hold_watches(self) -> None:
        """Make new watch calls wait (after being recorded) until :meth:`release_watches`."""
        self.watch_gate.clear()

    def release_watches(self) -> None:
        self.watch_gate.set()

    def watch(self, kind: Any, namespace: str | None = None, **kw: Any) -> FakeWatch:
        with self.cond:
            self.watch_calls.append(dict(kw, namespace=namespace))
        self.watch_gate.wait(10)
        with self.cond:
            if self.watch_errors:
                raise self.watch_errors.popleft()
            since = int(kw["resource_version"])
            if since < self.evicted_rv:
                raise FakeGone(f"too old resource version: {since}")
            w = FakeWatch(self, since)
            self.watches.append(w)
            return w

    def wait_watches(self, n: int, timeout: float = 5.0) -> None:
        """Block until at least ``n`` watches were opened."""
        from kube_runtime.envtest import wait_for

        wait_for(lambda: len(self.watch_calls) >= n, timeout=timeout, message=f"{n} watches")


class RecordingBackoff:
    """A backoff that never waits and counts how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def next_delay(self) -> float:
        self.calls += 1
        return 0.0
