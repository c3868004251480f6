"""Helpers: a minimal in-memory Lease client (with injectable API errors) and leader electors
on a FakeClock, for the leader-election tests."""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from kube_runtime.client.errors import AlreadyExists, Conflict, NotFound, ServerError
from kube_runtime.clock import FakeClock
from kube_runtime.kinds import Lease
from kube_runtime.leaderelection import LeaderElector

MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
NS, NAME = "kube-system", "my-controller"


def status_body(code: int, reason: str) -> dict[str, Any]:
    """An API Status body with ``code`` and ``reason``."""
    return {"kind": "Status", "code": code, "reason": reason, "message": reason}


class FakeClient:
    """Just enough of ``Client`` for Leases: get/create/update with resourceVersion checks."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.rv = 0
        self.calls: list[str] = []
        self.before_update: Callable[[], None] | None = None
        self.fail_updates = False
        self.lock = threading.Lock()

    def get(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        assert kind == Lease
        with self.lock:
            self.calls.append("get")
            obj = self.objects.get((namespace or "", name))
            if obj is None:
                raise NotFound(status_body(404, "NotFound"))
            return copy.deepcopy(obj)

    def create(self, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        with self.lock:
            self.calls.append("create")
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            if key in self.objects:
                raise AlreadyExists(status_body(409, "AlreadyExists"))
            return self._store(key, copy.deepcopy(obj))

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.before_update is not None:
            hook, self.before_update = self.before_update, None
            hook()
        with self.lock:
            self.calls.append("update")
            if self.fail_updates:
                raise ServerError(status_body(500, "InternalError"))
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            stored = self.objects.get(key)
            if stored is None:
                raise NotFound(status_body(404, "NotFound"))
            if obj["metadata"].get("resourceVersion") != stored["metadata"]["resourceVersion"]:
                raise Conflict(status_body(409, "Conflict"))
            return self._store(key, copy.deepcopy(obj))

    def _store(self, key: tuple[str, str], obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = obj
        return copy.deepcopy(obj)

    def spec(self) -> dict[str, Any]:
        return dict(self.objects[(NS, NAME)]["spec"])


EPOCH = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp()


def lease_clock(start: float = EPOCH) -> FakeClock:
    """A hand-stepped clock whose wall clock reads ``start`` at first."""
    return FakeClock(start=start)


def make_elector(client: FakeClient, identity: str, clock: Any = None, **kw: Any) -> LeaderElector:
    """A LeaderElector for ``identity`` on the test lease, with no-op callbacks by default."""
    kw.setdefault("on_started_leading", lambda stop: None)
    kw.setdefault("on_stopped_leading", lambda: None)
    return LeaderElector(client, NS, NAME, identity, clock=clock or lease_clock(), **kw)


@dataclass
class Running:
    """An elector's :meth:`~LeaderElector.run` on a thread of its own, and what its callbacks
    saw: ``started`` is set by ``on_started_leading``, whose stop event goes to
    ``leading_stop``; ``stopped`` by ``on_stopped_leading``."""

    elector: LeaderElector
    stop: threading.Event
    runner: threading.Thread
    started: threading.Event
    stopped: threading.Event
    leading_stop: list[threading.Event]

    def end(self) -> None:
        """Set ``stop`` and wait (5 s at most) for ``run`` to return."""
        self.stop.set()
        self.runner.join(5)


def run_elector(client: FakeClient, identity: str, **kw: Any) -> Running:
    """:func:`make_elector` with recording callbacks, its ``run`` started on a thread."""
    started, stopped = threading.Event(), threading.Event()
    leading_stop: list[threading.Event] = []

    def on_started(stop: threading.Event) -> None:
        leading_stop.append(stop)
        started.set()

    elector = make_elector(
        client, identity, on_started_leading=on_started, on_stopped_leading=stopped.set, **kw
    )
    stop = threading.Event()
    runner = threading.Thread(target=elector.run, args=(stop,))
    runner.start()
    return Running(elector, stop, runner, started, stopped, leading_stop)
