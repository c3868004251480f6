"""Helpers (no tests): the StatefulSet reconciler over the harness's cluster, with a reader
that can serve a stale cache (:class:`StaleReader`)."""

from __future__ import annotations

from typing import Any

from controllers.statefulset.controller import StatefulSetReconciler
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from kube_runtime.client.fake import FakeClient
from kube_runtime.clock import use
from kube_runtime.kinds import Kind, KindLike, Pod, StatefulSet, as_kind
from kube_runtime.reconcile import Request
from tests.support.statefulset_harness import NS, Cluster, Recorder, ready_status

REQUEST = Request("web", NS)


class StaleReader:
    """The reconciler's cache: the cluster's state, except that :meth:`freeze` pins the pods
    as they are now (a cache that stopped receiving pod events) until :meth:`thaw`."""

    def __init__(self, fake: FakeClient) -> None:
        self.fake = fake
        self.frozen: FakeClient | None = None

    def freeze(self) -> None:
        self.frozen = FakeClient(self.fake.direct.list(Pod, NS)["items"])

    def thaw(self) -> None:
        self.frozen = None

    def _source(self, kind: KindLike) -> FakeClient:
        if self.frozen is not None and as_kind(kind) == Pod:
            return self.frozen
        return self.fake.direct

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        return self._source(kind).get(kind, name, namespace)

    def list(self, kind: Any, namespace: str | None = None, **options: Any) -> dict[str, Any]:
        return self._source(kind).list(kind, namespace, **options)


class Setup(Cluster):
    """One set in a cluster, its reconciler reading through a :class:`StaleReader`."""

    def __init__(self, sts: dict[str, Any]) -> None:
        super().__init__()
        self.kind: Kind = ENHANCED_STATEFULSET if sts["apiVersion"] != "apps/v1" else StatefulSet
        self.seed(sts)
        self.reader = StaleReader(self.fake)
        self.recorder = Recorder()
        with use(self.clock):  # the reconciler runs on the cluster's clock
            self.reconciler = StatefulSetReconciler(
                self.fake, self.reader, self.recorder, kind=self.kind
            )

    @property
    def sts(self) -> dict[str, Any]:
        return self.get(self.kind, "web")

    def reconcile(self) -> Any:
        return self.reconciler.reconcile(REQUEST)

    def pods(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.items(Pod)]

    def done(self, verb: str, kind: str = "Pod") -> list[str]:
        return [n for v, k, n in self.writes if v == verb and k == kind]

    def ready(self, *names: str) -> None:
        """The kubelet reports the pods Running and Ready (other conditions kept)."""
        for name in names or self.pods():
            pod = self.get(Pod, name)
            if pod["metadata"].get("deletionTimestamp"):
                continue
            status = ready_status(self.now.replace(hour=9))
            kept = [c for c in pod["status"].get("conditions") or () if c["type"] != "Ready"]
            status["conditions"] += kept
            self.set_status(Pod, name, status)

    def converge(self) -> None:
        for _ in range(30):
            self.ready()
            before = len(self.writes)
            self.reconcile()
            if len(self.writes) == before:
                return
        raise AssertionError("did not converge")

    def set_image(self, image: str) -> None:
        def change(sts: dict[str, Any]) -> None:
            sts["spec"]["template"]["spec"]["containers"][0]["image"] = image

        self.edit_object(self.kind, "web", change)


def image_of(pod: dict[str, Any]) -> str:
    return str(pod["spec"]["containers"][0]["image"])


# --- creation ------------------------------------------------------------------------------
