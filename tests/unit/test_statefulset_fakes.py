"""Helpers (no tests): an in-memory API for the StatefulSet control tests: enough of the client for the pod
control, the revision history and the status updater, with every write recorded."""

from __future__ import annotations

import copy
import itertools
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

from controllers.statefulset.control import StatefulSetControl, SyncResult
from controllers.statefulset.pod_control import StatefulPodControl
from controllers.statefulset.status import ApiStatusUpdater
from kube_runtime.client.errors import AlreadyExists, NotFound
from kube_runtime.kinds import as_kind

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=timezone.utc)
NS = "ns"


def ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeApi:
    """Objects by (kind, namespace, name); ``writes`` lists (verb, kind, name)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.writes: list[tuple[str, str, str]] = []
        self.graceful = False
        self._uids = itertools.count(1)
        self._rv = itertools.count(1)
        self.now = T0

    @staticmethod
    def _k(kind: Any, namespace: Any, name: Any) -> tuple[str, str, str]:
        return (as_kind(kind).kind, namespace or "", name)

    def get(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        try:
            return copy.deepcopy(self.objects[self._k(kind, namespace, name)])
        except KeyError:
            raise NotFound(
                {"code": 404, "reason": "NotFound", "message": f"{name} not found"}
            ) from None

    def list(self, kind: Any, namespace: str | None = None, **_: Any) -> dict[str, Any]:
        k = as_kind(kind).kind
        items = [
            copy.deepcopy(o)
            for (kk, ns, _n), o in self.objects.items()
            if kk == k and ns == namespace
        ]
        return {"items": items}

    def items(self, kind: str) -> list[dict[str, Any]]:
        return [o for (k, _, _n), o in sorted(self.objects.items()) if k == kind]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        key = (obj["kind"], meta.get("namespace") or "", meta["name"])
        if key in self.objects:
            raise AlreadyExists({"code": 409, "reason": "AlreadyExists", "message": "exists"})
        meta["uid"] = f"uid-{next(self._uids)}"
        meta["resourceVersion"] = str(next(self._rv))
        meta["creationTimestamp"] = ts(self.now)
        if obj["kind"] == "Pod":
            obj.setdefault("status", {})["phase"] = "Pending"
        self.objects[key] = obj
        self.writes.append(("create", obj["kind"], meta["name"]))
        return copy.deepcopy(obj)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        key = (obj["kind"], meta.get("namespace") or "", meta["name"])
        if key not in self.objects:
            raise NotFound({"code": 404, "reason": "NotFound", "message": "gone"})
        obj["status"] = self.objects[key].get("status")
        meta["resourceVersion"] = str(next(self._rv))
        self.objects[key] = obj
        self.writes.append(("update", obj["kind"], meta["name"]))
        return copy.deepcopy(obj)

    def status(self) -> Any:
        return SimpleNamespace(update=self.update_status)

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        key = (obj["kind"], meta.get("namespace") or "", meta["name"])
        self.objects[key]["status"] = copy.deepcopy(obj["status"])
        self.writes.append(("update_status", obj["kind"], meta["name"]))
        return copy.deepcopy(self.objects[key])

    def delete(
        self, kind: Any, name: str, namespace: str | None = None, **_: Any
    ) -> dict[str, Any]:
        key = self._k(kind, namespace, name)
        if key not in self.objects:
            raise NotFound({"code": 404, "reason": "NotFound", "message": "gone"})
        self.writes.append(("delete", key[0], name))
        if self.graceful and key[0] == "Pod":
            self.objects[key]["metadata"]["deletionTimestamp"] = ts(self.now)
            return copy.deepcopy(self.objects[key])
        return self.objects.pop(key)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


def make_set(
    replicas: int = 3,
    *,
    name: str = "web",
    policy: str = "OrderedReady",
    strategy: dict[str, Any] | None = None,
    image: str = "nginx:1",
    templates: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    sts: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS, "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": name}},
            "updateStrategy": strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }
    if templates:
        sts["spec"]["volumeClaimTemplates"] = templates
    return sts


class Harness:
    """A set in a :class:`FakeApi` driven by the real pod control over it."""

    def __init__(self, sts: dict[str, Any]) -> None:
        self.api = FakeApi()
        self.recorder = Recorder()
        self.name = sts["metadata"]["name"]
        self.api.create(sts)
        self.pod_control = StatefulPodControl(self.api, self.recorder)
        self.control = StatefulSetControl(
            self.pod_control, ApiStatusUpdater(self.api), self.api, clock=lambda: self.api.now
        )

    @property
    def sts(self) -> dict[str, Any]:
        return self.api.get("apps/v1/StatefulSet", self.name, NS)

    def edit(self, fn: Any) -> None:
        sts = self.sts
        fn(sts)
        sts["metadata"]["generation"] += 1
        self.api.update(sts)

    def pods(self) -> list[dict[str, Any]]:
        return self.api.items("Pod")

    def pod(self, ordinal: int) -> dict[str, Any]:
        return self.api.objects[("Pod", NS, f"{self.name}-{ordinal}")]

    def pod_names(self) -> list[str]:
        return sorted(
            (p["metadata"]["name"] for p in self.pods()), key=lambda n: int(n.rsplit("-", 1)[1])
        )

    def revisions(self) -> list[dict[str, Any]]:
        return self.api.items("ControllerRevision")

    def sync(self) -> SyncResult:
        return self.control.update(self.sts, self.revisions(), self.pods())

    def pod_writes(self, verb: str) -> list[str]:
        return [n for v, k, n in self.api.writes if v == verb and k == "Pod"]

    def set_ready(self, ordinal: int, ready: bool = True, *, since: datetime | None = None) -> None:
        pod = self.pod(ordinal)
        pod["status"] = {
            "phase": "Running",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": ts(since or self.api.now - timedelta(hours=1)),
                }
            ],
        }

    def all_ready(self) -> None:
        for pod in self.pods():
            if pod["status"].get("phase") in ("Pending", "Running") and not pod["metadata"].get(
                "deletionTimestamp"
            ):
                self.set_ready(int(pod["metadata"]["name"].rsplit("-", 1)[1]))

    def converge(self, rounds: int = 50) -> None:
        """Sync and make everything ready until nothing changes."""
        for _ in range(rounds):
            self.all_ready()
            before = len(self.api.writes)
            self.sync()
            if len(self.api.writes) == before:
                return
        raise AssertionError("did not converge")
