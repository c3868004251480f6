"""``StatefulPodControl.update_pod`` on a conflict re-reads the pod from its reader (the
cache), as upstream's ``UpdateStatefulPod`` re-reads it from its lister: never a live GET,
which the controller's RBAC does not grant."""

from __future__ import annotations

from typing import Any

from controllers.statefulset.pod_control import StatefulPodControl
from kube_runtime import kinds
from kube_runtime.client.fake import FakeClient, conflict
from kube_runtime.client.interceptor import Interceptor


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        self.events.append((type, reason))


class _CountingReader:
    """A reader over the fake's objects that counts its gets."""

    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.gets = 0

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        self.gets += 1
        return self.client.direct.get(kind, name, namespace)

    def list(self, kind: Any, namespace: str | None = None, **options: Any) -> Any:
        return self.client.direct.list(kind, namespace, **options)


def _set() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid"},
        "spec": {"replicas": 1, "serviceName": "web", "selector": {"matchLabels": {"a": "b"}}},
    }


def test_a_conflicting_pod_update_re_reads_the_pod_from_the_reader() -> None:
    stale = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "ns", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    conflicts = [1]

    def update(client: FakeClient, obj: Any, **options: Any) -> Any:
        if conflicts:
            conflicts.pop()
            raise conflict(kinds.Pod, "web-0")
        return client.update(obj, **options)

    fake = FakeClient(objects=[stale], interceptor=Interceptor(update=update))
    reader = _CountingReader(fake)
    control = StatefulPodControl(fake, _Recorder(), reader=reader)
    current = fake.direct.get(kinds.Pod, "web-0", "ns")
    control.update_pod(_set(), current)

    written = fake.direct.get(kinds.Pod, "web-0", "ns")
    labels = written["metadata"]["labels"]  # the identity repaired on the retry
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-0"
    assert reader.gets == 1  # the re-read went to the reader ...
    assert [a for a in fake.actions if a.verb == "get" and a.kind == kinds.Pod] == []  # ... only
