"""``status_changed`` of the StatefulSet controller (controllers/statefulset/status.py)."""

from controllers.statefulset.status import status_changed

CONVERGED = {
    "observedGeneration": 1,
    "replicas": 5,
    "readyReplicas": 5,
    "currentReplicas": 5,
    "updatedReplicas": 5,
    "currentRevision": "web-1",
    "updateRevision": "web-1",
    "collisionCount": 0,
}


def test_available_replicas_pruned_by_the_server_is_not_rewritten():
    # kube-apiserver < 1.22 has no status.availableReplicas and drops it from every write:
    # comparing it would make every sync PUT an unchanged status.
    stored = {"status": dict(CONVERGED)}
    assert not status_changed(stored, {**CONVERGED, "availableReplicas": 5})


def test_available_replicas_compared_when_the_server_stores_it():
    # From 1.22 the field is always serialized (no omitempty), 0 included.
    stored = {"status": {**CONVERGED, "availableReplicas": 4}}
    assert status_changed(stored, {**CONVERGED, "availableReplicas": 5})
    assert not status_changed(stored, {**CONVERGED, "availableReplicas": 4})
    zero = {"status": {**CONVERGED, "availableReplicas": 0}}
    assert status_changed(zero, {**CONVERGED, "availableReplicas": 5})


def test_other_omitted_zero_fields_still_compare_as_zero():
    # kube-apiserver omits zero-valued omitempty fields (readyReplicas, ...): missing = 0.
    stored = {"status": {k: v for k, v in CONVERGED.items() if k != "readyReplicas"}}
    assert status_changed(stored, CONVERGED)
    assert not status_changed(stored, {**CONVERGED, "readyReplicas": 0})


def test_a_first_status_is_written_even_without_available_replicas():
    assert status_changed({"metadata": {"generation": 1}}, {**CONVERGED, "availableReplicas": 5})
    assert status_changed({"status": {}}, {**CONVERGED, "availableReplicas": 5})
