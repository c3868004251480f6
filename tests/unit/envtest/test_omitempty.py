"""kube_runtime.envtest.server.omitempty: zero values as kube-apiserver's Go encoding writes them."""

from __future__ import annotations

from kube_runtime.envtest.server.omitempty import normalize


def test_zero_omitempty_scalars_are_dropped_and_pointers_kept() -> None:
    sts = {
        "spec": {
            "replicas": 0,  # *int32: kept
            "minReadySeconds": 0,
            "template": {
                "spec": {
                    "hostNetwork": False,
                    "containers": [{"name": "a", "tty": False, "stdin": True}, {"name": "b"}],
                    "initContainers": [{"name": "i", "workingDir": ""}],
                }
            },
        },
        "status": {
            "readyReplicas": 0,
            "updatedReplicas": 2,
            "currentRevision": "",
            "collisionCount": 0,  # *int32: kept
        },
    }
    normalize("apps", "StatefulSet", sts)
    assert sts["spec"] == {
        "replicas": 0,
        "template": {
            "spec": {
                "containers": [{"name": "a", "stdin": True}, {"name": "b"}],
                "initContainers": [{"name": "i"}],
            }
        },
    }
    # replicas and availableReplicas have no omitempty tag: always written.
    assert sts["status"] == {
        "updatedReplicas": 2,
        "collisionCount": 0,
        "replicas": 0,
        "availableReplicas": 0,
    }


def test_only_the_zero_of_the_fields_type_is_dropped() -> None:
    pod = {"spec": {"hostNetwork": 0, "nodeName": "n"}, "status": {"phase": "", "podIP": None}}
    normalize("", "Pod", pod)
    assert pod == {"spec": {"hostNetwork": 0, "nodeName": "n"}, "status": {"podIP": None}}


def test_other_kinds_are_left_alone() -> None:
    deployment_status = {"status": {"replicas": 0, "observedGeneration": 0}}
    normalize("apps", "Deployment", deployment_status)
    assert deployment_status == {"status": {}}  # Deployment's replicas is omitempty
    custom = {"status": {"replicas": 0, "readyReplicas": 0}}
    normalize("apps.kruise.io", "CloneSet", custom)
    assert custom == {"status": {"replicas": 0, "readyReplicas": 0}}
