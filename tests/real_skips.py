"""Tests that need a feature newer than the real backend's Kubernetes 1.20, with the feature.

Expectations that merely differ between releases are not skipped: such tests ask for the
``kube_version`` fixture and expect each release's answer.

Keys are pytest node-id prefixes (a file, a class or one test); the first matching entry
wins. The plugin skips these on ``--backend real``; docs/conformance.md lists them. Tests
marked ``embedded_only``/``needs_k8s``, asking for ``faults`` or touching the embedded
cluster's internals are skipped without being listed here.
"""

from __future__ import annotations

__all__ = ["REAL_SKIPS", "reason_for"]

_RETENTION = "needs Kubernetes 1.23: StatefulSet persistentVolumeClaimRetentionPolicy"
_MORE = "tests/e2e/test_statefulset_more_e2e.py::"

REAL_SKIPS: dict[str, str] = {
    "tests/e2e/test_client_e2e.py::test_watch_initial_events_and_bookmarks": (
        "needs Kubernetes 1.27: watch sendInitialEvents"
    ),
    "tests/e2e/test_watch_e2e.py::test_bookmarks_and_initial_events_end": (
        "needs Kubernetes 1.27: watch sendInitialEvents"
    ),
    "tests/e2e/test_workloads_e2e.py::test_claims_are_created_once_and_follow_the_retention_policy": (
        _RETENTION
    ),
    _MORE + "test_when_scaled_delete_removes_condemned_claims_only": _RETENTION,
    _MORE + "test_scale_back_up_while_condemned_claims_go": _RETENTION,
    _MORE + "test_when_deleted_delete_removes_claims_with_the_set": _RETENTION,
    _MORE + "test_retain_keeps_claims_on_scale_down_and_set_deletion": _RETENTION,
    _MORE + "test_max_unavailable_bounds_a_rolling_update": (
        "needs Kubernetes 1.24: StatefulSet rollingUpdate.maxUnavailable"
    ),
    _MORE + "test_min_ready_seconds_delays_availability_and_requeues": (
        "needs Kubernetes 1.22: StatefulSet minReadySeconds"
    ),
    _MORE + "test_ordered_ready_waits_for_availability_before_the_next_pod": (
        "needs Kubernetes 1.22: StatefulSet minReadySeconds"
    ),
    _MORE + "test_ordinals_start": "needs Kubernetes 1.26: StatefulSet ordinals",
}


def reason_for(nodeid: str) -> str | None:
    """The skip reason for the test ``nodeid`` on the real backend, or None."""
    for prefix, reason in REAL_SKIPS.items():
        if nodeid == prefix or nodeid.startswith(prefix + "::") or nodeid.startswith(prefix + "["):
            return reason
    return None
