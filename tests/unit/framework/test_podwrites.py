"""PodLifecycleWriter: the lifecycle-state and KruisePodReady writes both workload pod
controls make, on the fake client."""

from __future__ import annotations

from typing import Any

from kube_runtime.client.fake import FakeClient
from kube_runtime.kinds import Pod
from kube_runtime.workloads import lifecycle, podreadiness
from kube_runtime.workloads.podwrites import PodLifecycleWriter


def _pod(api: FakeClient, *, gate: bool = True, state: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    if gate:
        spec["readinessGates"] = [{"conditionType": podreadiness.KRUISE_POD_READY}]
    labels = {lifecycle.LIFECYCLE_STATE_LABEL: state} if state else {}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": labels}}
    created: dict[str, Any] = api.create({**body, "spec": spec}, namespace="ns")
    return created


def test_update_lifecycle_writes_the_state_once_and_reports_each_write() -> None:
    api = FakeClient()
    written: list[dict[str, Any]] = []
    writer = PodLifecycleWriter(api, written.append)
    pod = _pod(api)

    got = writer.update_lifecycle(pod, lifecycle.PREPARING_UPDATE, mark_not_ready=True)

    assert got is not None and lifecycle.get_state(got) == lifecycle.PREPARING_UPDATE
    stored = api.get(Pod, "p", "ns")
    condition = podreadiness.get_condition(stored)
    assert condition is not None and condition["status"] == "False"
    # the readiness patch, then the state patch: both handed to on_write, in order
    assert len(written) == 2 and written[-1] == got
    assert podreadiness.get_condition(written[0]) is not None
    assert lifecycle.get_state(written[0]) == ""
    # in the state already: no request
    assert writer.update_lifecycle(stored, lifecycle.PREPARING_UPDATE) is None
    assert len(written) == 2


def test_ensure_readiness_condition_writes_only_when_missing() -> None:
    api = FakeClient()
    writer = PodLifecycleWriter(api)
    pod = _pod(api)
    assert writer.ensure_readiness_condition(pod) is True
    stored = api.get(Pod, "p", "ns")
    condition = podreadiness.get_condition(stored)
    assert condition is not None and condition["status"] == "True"
    assert writer.ensure_readiness_condition(stored) is False
    assert writer.ensure_readiness_condition(_pod(FakeClient(), gate=False)) is False
