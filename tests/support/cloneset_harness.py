"""Helpers (no tests): the CloneSet's control and reconciler over the FakeClient, with the
kubelet's part played by the test (:class:`Harness`), and spec builders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Any

from controllers.cloneset.controller import CloneSetReconciler
from controllers.cloneset.core import CLONESET
from controllers.cloneset.models import CloneSet
from kube_runtime import meta
from kube_runtime.client.fake import FakeClient
from kube_runtime.kinds import (
    Kind,
    KindLike,
    PersistentVolumeClaim,
    Pod,
    as_kind,
)
from kube_runtime.reconcile import Request, Result
from kube_runtime.workloads.revision import POD_REVISION_LABEL

NS = "ns"
T0 = "2020-01-01T00:00:00Z"
READS = ("get", "list")


# --- fixtures ---------------------------------------------------------------------------------


def make_cs(replicas: int = 3, image: str = "nginx:1", **spec: Any) -> dict[str, Any]:
    labels = {"app": "web", **spec.pop("extra_labels", {})}
    return {
        "apiVersion": CLONESET.api_version,
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": NS, "uid": "cs-uid"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }


VCT = [
    {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}},
    {"metadata": {"name": "logs"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}},
]


class Recorder:
    """An event recorder keeping ``(type, reason, message)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.events.append((type, reason, message))

    def reasons(self) -> list[str]:
        return [reason for _, reason, _ in self.events]


class LaggingReader:
    """A cache in front of the fake: current, except for the kinds :meth:`lag` froze, which
    read as they were then (with their resourceVersions) until :meth:`catch_up`."""

    def __init__(self, api: FakeClient) -> None:
        self._api = api.direct
        self._snapshot = self._api
        self._lagging: set[Kind] = set()
        self._versions: dict[str, str] = {}

    def lag(self, *kinds: Kind) -> None:
        objects = [o for kind in kinds for o in self._api.objects(kind)]
        self._snapshot = FakeClient().register(CloneSet).with_objects(*objects)
        self._versions = {meta.uid(o): meta.resource_version(o) for o in objects}
        self._lagging = set(kinds)

    def catch_up(self) -> None:
        self._lagging.clear()
        self._versions.clear()

    def _source(self, kind: KindLike) -> FakeClient:
        return self._snapshot if as_kind(kind) in self._lagging else self._api

    def _as_seen(self, obj: dict[str, Any]) -> dict[str, Any]:
        version = self._versions.get(meta.uid(obj))
        if version is not None:
            obj["metadata"]["resourceVersion"] = version
        return obj

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> dict[str, Any]:
        return self._as_seen(self._source(kind).get(kind, name, namespace))

    def list(self, kind: Kind, namespace: str | None = None, **options: Any) -> dict[str, Any]:
        result = self._source(kind).list(kind, namespace, **options)
        return {**result, "items": [self._as_seen(o) for o in result["items"]]}


class Harness:
    """A reconciler over a fake API (see the module docstring)."""

    def __init__(self, cs: dict[str, Any], *objects: Mapping[str, Any]) -> None:
        self.api = FakeClient().register(CloneSet)
        self.api.with_objects(cs, *objects)
        self.reader = LaggingReader(self.api)
        self.recorder = Recorder()
        self.reconciler = CloneSetReconciler(self.api, self.reader, self.recorder)
        #: pods the kubelet stand-in leaves unscheduled
        self.unscheduled: set[str] = set()

    # --- driving --------------------------------------------------------------------------

    def reconcile(self) -> Result | None:
        return self.reconciler.reconcile(Request("web", NS))

    def step(self) -> tuple[Result | None, list[Any]]:
        """One reconcile; ``(result, the writes it made)``."""
        self.api.clear_actions()
        result = self.reconcile()
        return result, self.writes()

    def writes(self) -> list[Any]:
        return [a for a in self.api.actions if a.verb not in READS]

    def settle(self, not_ready: Set[str] = frozenset(), rounds: int = 20) -> None:
        """Reconcile and run the pods until a reconcile writes nothing (a failed reconcile
        is retried, as the work queue would)."""
        for _ in range(rounds):
            try:
                result, writes = self.step()
            except Exception as err:
                result, writes = None, [err]
            self.kubelet(not_ready)
            if not writes and result is None:
                return
        raise AssertionError(f"no convergence; last writes {writes}")

    def kubelet(self, not_ready: Set[str] = frozenset()) -> None:
        """Every pod is scheduled (``spec.nodeName``, unless named in ``unscheduled``) and
        runs its spec's images; Ready unless named in ``not_ready``."""
        for pod in self.api.objects(Pod, NS):
            if meta.is_deleting(pod):
                continue
            name = meta.name(pod)
            if name not in self.unscheduled and not pod["spec"].get("nodeName"):
                self.api.direct.patch(Pod, name, {"spec": {"nodeName": "node-1"}}, namespace=NS)
            ready = {
                "type": "Ready",
                "status": "False" if name in not_ready else "True",
                "lastTransitionTime": T0,
            }
            others = [c for c in meta.status(pod).get("conditions") or () if c["type"] != "Ready"]
            containers = pod["spec"]["containers"]
            status = {
                "phase": "Running",
                "conditions": [ready, *others],
                "containerStatuses": [
                    {"name": c["name"], "image": c["image"], "imageID": f"{c['image']}@sha"}
                    for c in containers
                ],
            }
            self.api.direct.status().patch(Pod, name, {"status": status}, namespace=NS)

    # --- reading --------------------------------------------------------------------------

    def cs(self) -> dict[str, Any]:
        return self.api.get(CLONESET, "web", NS)

    def status(self) -> Mapping[str, Any]:
        return meta.status(self.cs())

    def conditions(self) -> dict[str, Mapping[str, Any]]:
        return {c["type"]: c for c in self.status().get("conditions") or ()}

    def pods(self) -> dict[str, dict[str, Any]]:
        return {meta.name(p): p for p in self.api.objects(Pod, NS)}

    def claims(self) -> dict[str, dict[str, Any]]:
        return {meta.name(c): c for c in self.api.objects(PersistentVolumeClaim, NS)}

    def patch_spec(self, spec: Mapping[str, Any]) -> None:
        self.api.direct.patch(CLONESET, "web", {"spec": spec}, namespace=NS)

    def set_image(self, image: str, **spec: Any) -> None:
        containers = [{"name": "c", "image": image, **spec.pop("container", {})}]
        self.patch_spec({"template": {"spec": {"containers": containers}}, **spec})

    def label_pod(self, name: str, labels: Mapping[str, str | None]) -> None:
        self.api.direct.patch(Pod, name, {"metadata": {"labels": dict(labels)}}, namespace=NS)


def writes_of(writes: Iterable[Any], verb: str, kind: Kind = Pod) -> list[str]:
    return sorted(a.name for a in writes if a.verb == verb and a.kind == kind and not a.subresource)


def image(pod: Mapping[str, Any]) -> str:
    return str(pod["spec"]["containers"][0]["image"])


def revision(pod: Mapping[str, Any]) -> str:
    return str(meta.labels(pod).get(POD_REVISION_LABEL))


def converged(replicas: int = 3, **spec: Any) -> Harness:
    h = Harness(make_cs(replicas, **spec))
    h.settle()
    assert len(h.pods()) == replicas
    return h


# --- scale up ---------------------------------------------------------------------------------
