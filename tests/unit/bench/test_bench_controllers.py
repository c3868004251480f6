"""Pure helpers of the controllers benchmark (bench/controllers.py)."""

from bench.controllers import Writes, pod_available, resource_of, sts_minimum


def test_resource_of_drops_namespace_and_name():
    assert resource_of("/api/v1/namespaces/ns/pods") == "pods"
    assert resource_of("/api/v1/namespaces/ns/pods/web-0/status") == "pods/status"
    assert resource_of("/apis/apps/v1/namespaces/ns/statefulsets/web/status") == (
        "statefulsets/status"
    )
    assert resource_of("/apis/apps/v1/namespaces/ns/controllerrevisions?x=1") == (
        "controllerrevisions"
    )
    assert resource_of("/api/v1/namespaces") == "namespaces"
    assert resource_of("/api/v1/namespaces/ns") == "namespaces"


def test_writes_split_separates_own_and_event_writes():
    w = Writes()
    w.ok.update({("POST", "pods"): 5, ("POST", "statefulsets"): 1, ("POST", "events"): 3})
    w.ok[("PUT", "statefulsets/status")] = 2
    controller, own, events = w.split([("POST", "statefulsets")])
    assert (own, events) == (1, 3)
    assert controller.total() == 7
    assert controller.by_verb() == "POST 5, PUT 2"
    assert controller.count("PUT", "statefulsets") == 2


def _pod(ready="True", gate=None, container_ready=True, deleting=False):
    conditions = [{"type": "Ready", "status": ready}]
    if gate is not None:
        conditions.append({"type": "InPlaceUpdateReady", "status": gate})
    meta = {"name": "p", "deletionTimestamp": "2024-01-01T00:00:00Z"} if deleting else {"name": "p"}
    return {
        "metadata": meta,
        "status": {"conditions": conditions, "containerStatuses": [{"ready": container_ready}]},
    }


def test_pod_available_is_strict():
    assert pod_available(_pod())
    assert pod_available(_pod(gate="True"))
    assert not pod_available(_pod(ready="False"))
    assert not pod_available(_pod(gate="False"))  # Ready not yet recomputed by the kubelet
    assert not pod_available(_pod(container_ready=False))
    assert not pod_available(_pod(deleting=True))


def test_sts_minimum_counts_pods_claims_revision_and_one_status_write():
    assert sts_minimum(5) == 12
