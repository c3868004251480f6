"""``StatefulPodControl.update_pod`` on a conflict re-reads the pod from its reader (the
cache), as upstream's ``UpdateStatefulPod`` re-reads it from its lister: never a live GET,
which the controller's RBAC does not grant."""

from __future__ import annotations

from typing import Any

from pytest_mock import MockerFixture

from controllers.statefulset.pod_control import StatefulPodControl
from kube_runtime import kinds
from kube_runtime.client.fake import FakeClient, conflict
from kube_runtime.client.interceptor import Interceptor


def _set() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid"},
        "spec": {"replicas": 1, "serviceName": "web", "selector": {"matchLabels": {"a": "b"}}},
    }


def test_a_conflicting_pod_update_re_reads_the_pod_from_the_reader(mocker: MockerFixture) -> None:
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
    reader = fake.direct  # the fake's objects, its own gets unrecorded: the cache's part
    gets = mocker.spy(reader, "get")
    recorder = mocker.NonCallableMock(spec=["event"])
    control = StatefulPodControl(fake, recorder, reader=reader)
    current = fake.direct.get(kinds.Pod, "web-0", "ns")
    control.update_pod(_set(), current)

    written = fake.direct.get(kinds.Pod, "web-0", "ns")
    labels = written["metadata"]["labels"]  # the identity repaired on the retry
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-0"
    assert gets.call_count == 1  # the re-read went to the reader ...
    assert [a for a in fake.actions if a.verb == "get" and a.kind == kinds.Pod] == []  # ... only
