"""Helpers (no tests): the StatefulSet's control and reconciler over
:class:`~kube_runtime.client.fake.FakeClient`, with the kubelet's part played by the test.

The fake has the API server's semantics (resourceVersion, status subresource, generation,
finalizers, selectors, indexes, strategic merge patches of pods). What it does not model, the
harness adds in the open:

* a pod's life (Pending -> Running and Ready, Failed, ...): the test writes its status
  (:meth:`Harness.set_ready`, :meth:`Harness.set_phase`), as a kubelet would;
* graceful deletion (``harness.graceful = True``): a deleted pod gets a test finalizer first,
  so it stays with a ``deletionTimestamp`` until :meth:`Harness.remove_pod` plays the kubelet
  that finishes it;
* :attr:`Harness.writes`: the writes that succeeded, as ``(verb, kind, name)`` (the fake's
  ``actions`` also list reads and failed calls).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from controllers.statefulset import models
from controllers.statefulset.control import StatefulSetControl, SyncResult
from controllers.statefulset.pod_control import StatefulPodControl
from controllers.statefulset.status import ApiStatusUpdater
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime.client.fake import FakeClient, Interceptor
from kube_runtime.clock import FakeClock
from kube_runtime.kinds import (
    ControllerRevision,
    Kind,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
    as_kind,
)

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=timezone.utc)
NS = "ns"
GRACEFUL = "test.kube-runtime.io/graceful"
"""The finalizer that stands for a kubelet still shutting a deleted pod down."""
HOLD = "test.kube-runtime.io/hold"
"""A finalizer that keeps a deleted set around (it is nobody's to remove)."""


def ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Recorder:
    """An event recorder that keeps ``(type, reason, message)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        self.events.append((type, reason, message))


class Cluster:
    """A FakeClient serving both StatefulSet kinds, recording successful writes, with
    optional graceful pod deletion and a clock the test moves (:attr:`clock`, a
    :class:`~kube_runtime.clock.FakeClock` at :data:`T0`; ``now`` reads and moves it)."""

    def __init__(self) -> None:
        self.clock = FakeClock(start=T0.timestamp())
        self.graceful = False
        self.writes: list[tuple[str, str, str]] = []
        self.fake = FakeClient(
            clock=self.clock.time,
            interceptor=Interceptor(
                create=self._create,
                update=self._update,
                patch=self._patch,
                delete=self._delete,
                status_update=self._status_update,
            ),
        )
        self.fake.register(models.StatefulSet)

    @property
    def now(self) -> datetime:
        """The clock's time (setting it moves the clock on; never back)."""
        return self.clock.now()

    @now.setter
    def now(self, when: datetime) -> None:
        self.clock.set_time(when)

    # --- the recording seam ----------------------------------------------------------------

    def _note(self, verb: str, obj: Any) -> Any:
        self.writes.append((verb, obj["kind"], obj["metadata"]["name"]))
        return obj

    def _create(self, client: FakeClient, obj: Any, **options: Any) -> Any:
        return self._note("create", client.create(obj, **options))

    def _update(self, client: FakeClient, obj: Any, **options: Any) -> Any:
        return self._note("update", client.update(obj, **options))

    def _status_update(self, client: FakeClient, obj: Any, **options: Any) -> Any:
        return self._note("update_status", client.status().update(obj, **options))

    def _patch(self, client: FakeClient, kind: Any, name: str, patch: Any, **options: Any) -> Any:
        return self._note("patch", client.patch(kind, name, patch, **options))

    def _delete(
        self, client: FakeClient, kind: Any, name: str, namespace: str | None = None, **options: Any
    ) -> Any:
        if self.graceful and as_kind(kind) == Pod:
            current = client.get(Pod, name, namespace)
            finalizers = [*(current["metadata"].get("finalizers") or ()), GRACEFUL]
            client.patch(Pod, name, {"metadata": {"finalizers": finalizers}}, namespace=namespace)
        result = client.delete(kind, name, namespace, **options)
        self.writes.append(("delete", as_kind(kind).kind, name))
        return result

    # --- playing the kubelet and the user --------------------------------------------------

    def get(self, kind: Kind, name: str) -> dict[str, Any]:
        return self.fake.direct.get(kind, name, NS)

    def items(self, kind: Kind) -> list[dict[str, Any]]:
        return self.fake.direct.list(kind, NS)["items"]

    def seed(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create ``obj`` as someone else would (not one of :attr:`writes`)."""
        return self.fake.direct.create(obj)

    def edit_object(self, kind: Kind, name: str, change: Callable[[dict[str, Any]], None]) -> None:
        """Change an object as a user would (generation moves with the spec)."""
        obj = self.get(kind, name)
        change(obj)
        self.fake.direct.update(obj)

    def set_status(self, kind: Kind, name: str, status: dict[str, Any]) -> None:
        obj = self.get(kind, name)
        obj["status"] = status
        self.fake.direct.status().update(obj)

    def remove_pod(self, name: str) -> None:
        """The pod is gone: a kubelet finished a graceful deletion, or someone deleted it."""
        pod = self.get(Pod, name)
        finalizers = [f for f in pod["metadata"].get("finalizers") or () if f != GRACEFUL]
        if pod["metadata"].get("deletionTimestamp"):
            self.fake.direct.patch(
                Pod, name, {"metadata": {"finalizers": finalizers}}, namespace=NS
            )
        else:
            self.fake.direct.delete(Pod, name, NS)

    def terminate_pod(self, name: str) -> None:
        """The pod is being deleted (by someone else) and its kubelet has not finished."""
        pod = self.get(Pod, name)
        finalizers = [*(pod["metadata"].get("finalizers") or ()), GRACEFUL]
        self.fake.direct.patch(Pod, name, {"metadata": {"finalizers": finalizers}}, namespace=NS)
        self.fake.direct.delete(Pod, name, NS)

    def mark_deleting(self, kind: Kind, name: str) -> None:
        """The set is deleted; a finalizer (its own, or a test one) keeps it around."""
        obj = self.get(kind, name)
        if not obj["metadata"].get("finalizers"):
            self.fake.direct.patch(kind, name, {"metadata": {"finalizers": [HOLD]}}, namespace=NS)
        self.fake.direct.delete(kind, name, NS)


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
        "metadata": {"name": name, "namespace": NS},
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


def ready_status(since: datetime, phase: str = "Running", ready: bool = True) -> dict[str, Any]:
    return {
        "phase": phase,
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": ts(since),
            }
        ],
    }


class Harness(Cluster):
    """A set in a :class:`Cluster` driven by the real control and pod control over it."""

    def __init__(self, sts: dict[str, Any]) -> None:
        super().__init__()
        self.recorder = Recorder()
        self.name = sts["metadata"]["name"]
        self.kind = ENHANCED_STATEFULSET if sts["apiVersion"] != "apps/v1" else StatefulSet
        self.seed(sts)
        self.pod_control = StatefulPodControl(self.fake, self.recorder)
        self.control = StatefulSetControl(
            self.pod_control, ApiStatusUpdater(self.fake), self.fake, clock=self.clock
        )

    @property
    def sts(self) -> dict[str, Any]:
        return self.get(self.kind, self.name)

    def edit(self, change: Callable[[dict[str, Any]], None]) -> None:
        self.edit_object(self.kind, self.name, change)

    def pods(self) -> list[dict[str, Any]]:
        return self.items(Pod)

    def pod(self, ordinal: int) -> dict[str, Any]:
        return self.get(Pod, f"{self.name}-{ordinal}")

    def edit_pod(self, ordinal: int, change: Callable[[dict[str, Any]], None]) -> None:
        self.edit_object(Pod, f"{self.name}-{ordinal}", change)

    def pod_names(self) -> list[str]:
        return sorted(
            (p["metadata"]["name"] for p in self.pods()), key=lambda n: int(n.rsplit("-", 1)[1])
        )

    def revisions(self) -> list[dict[str, Any]]:
        return self.items(ControllerRevision)

    def claims(self) -> list[dict[str, Any]]:
        return self.items(PersistentVolumeClaim)

    def claim(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.claims() if c["metadata"]["name"] == name), None)

    def sync(self) -> SyncResult:
        return self.control.update(self.sts, self.revisions(), self.pods(), self.claims())

    def pod_writes(self, verb: str) -> list[str]:
        return [n for v, k, n in self.writes if v == verb and k == "Pod"]

    def set_phase(self, ordinal: int, phase: str) -> None:
        status = copy.deepcopy(self.pod(ordinal)["status"])
        status["phase"] = phase
        self.set_status(Pod, f"{self.name}-{ordinal}", status)

    def set_ready(self, ordinal: int, ready: bool = True, *, since: datetime | None = None) -> None:
        status = ready_status(since or self.now - timedelta(hours=1), ready=ready)
        self.set_status(Pod, f"{self.name}-{ordinal}", status)

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
            before = len(self.writes)
            self.sync()
            if len(self.writes) == before:
                return
        raise AssertionError("did not converge")
