"""Embedded-server behaviours fixed after the differential checks against kube-apiserver 1.20
(tests/e2e/test_differential_e2e.py); these guard them when no real server is cached."""

from __future__ import annotations

import pytest

from kube_runtime.client import ApiError, Client


def test_delete_answers_status_unless_the_resource_returns_the_object(
    client: Client, namespace: str
) -> None:
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": namespace}}
    )
    created = client.get("v1/ConfigMap", "a", namespace)
    answer = client.delete("v1/ConfigMap", "a", namespace)
    assert answer["kind"] == "Status" and answer["status"] == "Success"
    assert answer["details"] == {
        "name": "a",
        "kind": "configmaps",
        "uid": created["metadata"]["uid"],
    }

    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s", "namespace": namespace},
        "spec": {
            "serviceName": "s",
            "selector": {"matchLabels": {"app": "s"}},
            "template": {
                "metadata": {"labels": {"app": "s"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    client.create(sts)
    answer = client.delete("apps/v1/StatefulSet", "s", namespace, propagation_policy="Background")
    assert answer["kind"] == "Status"
    assert answer["details"]["group"] == "apps" and answer["details"]["kind"] == "statefulsets"

    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    client.create(claim)
    answer = client.delete("v1/PersistentVolumeClaim", "c", namespace)
    assert answer["kind"] == "PersistentVolumeClaim"  # its storage returns the deleted object


def test_pod_removed_at_once_is_answered_stamped(client: Client, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "schedulerName": "nobody"},
    }
    client.create(pod)  # never scheduled: deleting it removes it at once
    answer = client.delete("v1/Pod", "p", namespace)
    assert answer["kind"] == "Pod"
    assert answer["metadata"]["deletionTimestamp"]
    assert answer["metadata"]["deletionGracePeriodSeconds"] == 0


def test_pod_volume_mounts_name_a_volume_with_a_unique_path(client: Client, namespace: str) -> None:
    """Upstream ``ValidateVolumeMounts`` (found by the bad-specs corpus, issue 18 part 5)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": namespace},
        "spec": {
            "volumes": [{"name": "data", "emptyDir": {}}],
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "volumeMounts": [
                        {"name": "nope", "mountPath": "/a"},
                        {"name": "data", "mountPath": "/b"},
                        {"name": "data", "mountPath": "/b"},
                    ],
                }
            ],
        },
    }
    with pytest.raises(ApiError) as caught:
        client.create(pod)
    assert caught.value.code == 422
    causes = {(c["field"], c["reason"]) for c in caught.value.causes}
    assert causes == {
        ("spec.containers[0].volumeMounts[0].name", "FieldValueNotFound"),
        ("spec.containers[0].volumeMounts[2].mountPath", "FieldValueInvalid"),
    }
    assert caught.value.message == (
        'Pod "p" is invalid: [spec.containers[0].volumeMounts[0].name: Not found: "nope", '
        'spec.containers[0].volumeMounts[2].mountPath: Invalid value: "/b": must be unique]'
    )  # apimachinery's aggregate: more than one error in brackets
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/b"}]
    assert client.create(pod)["metadata"]["name"] == "p"
