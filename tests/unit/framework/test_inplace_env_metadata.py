"""In-place update of env vars taken from pod metadata (Kruise's ``UpdateEnvFromMetadata``,
``pkg/util/inplaceupdate``): which label changes become per-container metadata, when the
pod's labels are patched (with the container's batch, after the grace period), the state
recorded, and completion only once every container runs with the new values."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from kube_runtime.client.fake import FakeClient
from kube_runtime.clock import FakeClock
from kube_runtime.kinds import Pod
from kube_runtime.workloads.containermeta import (
    RUNTIME_META_ANNOTATION,
    env_hashes_consistent,
    expected_env_hash,
    meta_refs,
)
from kube_runtime.workloads.inplace import (
    GRACE_ANNOTATION,
    STATE_ANNOTATION,
    InPlaceControl,
    calculate_in_place_spec,
    check_update_completed,
)

NS = "default"
ENV_REF = {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}


def _template(labels: dict[str, str], image: str = "nginx:1") -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": image,
                    "env": [{"name": "TEST_ENV", "valueFrom": ENV_REF}],
                },
                {"name": "side", "image": "busybox:1"},
            ]
        },
    }


def _revision(name: str, template: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "data": {"spec": {"template": {"$patch": "replace", **template}}},
    }


def test_a_referred_label_becomes_container_metadata():
    old = _revision("r1", _template({"app": "web", "test-env": "foo", "other": "x"}))
    new = _revision("r2", _template({"app": "web", "test-env": "bar", "other": "y"}))
    spec = calculate_in_place_spec(old, new)
    assert spec is not None
    assert spec.container_ref_metadata == {"main": {"labels": {"test-env": "bar"}}}
    assert spec.labels == {"other": "y"}  # not referred to: a plain metadata patch
    assert spec.update_env_from_metadata and spec.container_images == {}


def test_a_removed_referred_label_stays_a_plain_metadata_change():
    old = _revision("r1", _template({"app": "web", "test-env": "foo"}))
    new = _revision("r2", _template({"app": "web"}))
    spec = calculate_in_place_spec(old, new)
    assert spec is not None
    assert spec.container_ref_metadata == {} and spec.labels == {"test-env": None}


def test_meta_refs_ignore_literal_values_and_sidecarset_envs():
    container = {
        "env": [
            {"name": "A", "valueFrom": ENV_REF},
            {"name": "B", "value": "x", "valueFrom": ENV_REF},
            {"name": "SIDECARSET_VERSION", "valueFrom": ENV_REF},
            {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "D", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['a/b']"}}},
        ]
    }
    assert meta_refs(container) == [
        ("A", "metadata.labels", "test-env"),
        ("D", "metadata.annotations", "a/b"),
    ]


def _pod(labels: dict[str, str]) -> dict[str, Any]:
    template = _template(labels)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": NS,
            "labels": {**labels, "controller-revision-hash": "r1"},
        },
        "spec": {**template["spec"], "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]},
        "status": {
            "conditions": [{"type": "InPlaceUpdateReady", "status": "True"}],
            "containerStatuses": [
                {"name": "main", "containerID": "c-1", "image": "nginx:1", "imageID": "n1"},
                {"name": "side", "containerID": "s-1", "image": "busybox:1", "imageID": "b1"},
            ],
        },
    }


def _report(api: FakeClient, main_id: str) -> None:
    """What the node agent reports: the containers' IDs and the env hashes they started with."""
    pod = api.get(Pod, "p", NS)
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    statuses = [dict(c) for c in pod["status"]["containerStatuses"]]
    statuses[0]["containerID"] = main_id
    api.direct.status().patch(Pod, "p", {"status": {"containerStatuses": statuses}}, namespace=NS)
    entries = [
        {
            "name": cs["name"],
            "containerID": cs["containerID"],
            "hashes": {
                "extractedEnvFromMetadataHash": expected_env_hash(
                    containers[cs["name"]], pod["metadata"]
                )
            },
        }
        for cs in statuses
    ]
    body = {
        "metadata": {"annotations": {RUNTIME_META_ANNOTATION: json.dumps({"containers": entries})}}
    }
    api.patch(Pod, "p", body, namespace=NS)


def _state(api: FakeClient) -> dict[str, Any]:
    return dict(json.loads(api.get(Pod, "p", NS)["metadata"]["annotations"][STATE_ANNOTATION]))


def test_update_waits_for_the_grace_period_then_completes_after_the_restart():
    clock = FakeClock(start=datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())
    api = FakeClient().with_objects(_pod({"app": "web", "test-env": "foo"}))
    _report(api, "c-1")
    control = InPlaceControl(api, clock=clock)
    old = _revision("r1", _template({"app": "web", "test-env": "foo"}))
    new = _revision("r2", _template({"app": "web", "test-env": "bar"}))
    spec = calculate_in_place_spec(old, new)
    assert spec is not None
    assert control.update(api.get(Pod, "p", NS), spec, grace_seconds=10) == 10.0
    pod = api.get(Pod, "p", NS)
    # in the grace period: revision and state written, the env label not yet
    assert pod["metadata"]["labels"]["test-env"] == "foo"
    assert pod["metadata"]["labels"]["controller-revision-hash"] == "r2"
    assert _state(api)["updateEnvFromMetadata"] is True
    grace = json.loads(pod["metadata"]["annotations"][GRACE_ANNOTATION])
    assert grace["containerRefMetadata"] == {"main": {"labels": {"test-env": "bar"}}}
    assert check_update_completed(pod) == "images wait for the grace period"
    wrote, left = control.refresh(pod)
    assert not wrote and left == 10.0
    clock.step(10)
    assert control.refresh(api.get(Pod, "p", NS)) == (True, 0.0)
    pod = api.get(Pod, "p", NS)
    assert pod["metadata"]["labels"]["test-env"] == "bar"
    assert GRACE_ANNOTATION not in pod["metadata"]["annotations"]
    assert [b["containers"] for b in _state(api)["containerBatchesRecord"]] == [["main"]]
    # the container still runs with foo: not complete, the gate stays False
    assert env_hashes_consistent(pod) is not None
    assert check_update_completed(pod) is not None
    assert control.refresh(pod) == (False, 0.0)
    # restarted (a new container ID) with bar
    _report(api, "c-2")
    assert check_update_completed(api.get(Pod, "p", NS)) is None
    assert control.refresh(api.get(Pod, "p", NS)) == (True, 0.0)


def test_without_grace_the_label_is_patched_at_once():
    api = FakeClient().with_objects(_pod({"app": "web", "test-env": "foo"}))
    control = InPlaceControl(api)
    old = _revision("r1", _template({"app": "web", "test-env": "foo"}))
    new = _revision("r2", _template({"app": "web", "test-env": "bar"}, image="nginx:2"))
    spec = calculate_in_place_spec(old, new)
    assert spec is not None and spec.container_images == {"main": "nginx:2"}
    assert control.update(api.get(Pod, "p", NS), spec) == 0.0
    pod = api.get(Pod, "p", NS)
    assert pod["metadata"]["labels"]["test-env"] == "bar"
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"
    # no runtime meta reported: never complete (Kruise: "runtime-container-meta not found")
    assert check_update_completed(pod) == "waiting for the runtime container meta"
