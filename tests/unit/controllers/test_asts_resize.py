"""Volume expansion in the enhanced StatefulSet's rolling update (Kruise
``statefulset_resize_pvc.go`` with ``volumeClaimUpdateStrategy: OnPodRollingUpdate``) on the
FakeClient harness: which claims are patched, when, in what order, and what is waited on."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.statefulset.resize import (
    OWNED_BY_ASTS_ANNOTATION,
    ResizeError,
    claims_completed,
    claims_matched,
    claims_ready,
    resize_patches,
)
from kube_runtime.kinds import PersistentVolumeClaim
from tests.support.enhanced_statefulset_harness import EnhancedHarness, enhanced


def _template(size: str, modes: tuple[str, ...] = ("ReadWriteOnce",)) -> dict[str, Any]:
    return {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": list(modes),
            "storageClassName": "fast",
            "resources": {"requests": {"storage": size}},
        },
    }


def _claim(request: str, capacity: str | None, *conditions: str) -> dict[str, Any]:
    claim = _template(request)
    claim["metadata"] = {"name": "data-web-0"}
    status: dict[str, Any] = {"phase": "Bound"}
    if capacity is not None:
        status["capacity"] = {"storage": capacity}
    if conditions:
        status["conditions"] = [{"type": c, "status": "True"} for c in conditions]
    claim["status"] = status
    return claim


def test_claim_decisions_as_kruise():
    template = _template("2Gi")
    old = [(_claim("1Gi", "1Gi"), template)]
    assert not claims_matched(old) and claims_ready(old) and not claims_completed(old)
    patched = [(_claim("2Gi", "1Gi"), template)]
    assert claims_matched(patched) and not claims_ready(patched)
    assert not claims_completed(patched)
    pending = [(_claim("2Gi", "1Gi", "FileSystemResizePending"), template)]
    assert claims_completed(pending) and not claims_ready(pending)
    done = [(_claim("2Gi", "2Gi"), template)]
    assert claims_matched(done) and claims_ready(done) and claims_completed(done)
    # a larger claim than the template is fine (no shrinking)
    assert claims_matched([(_claim("3Gi", "3Gi"), template)])
    assert resize_patches({"metadata": {"name": "web"}}, old) == {
        "data-web-0": {
            "metadata": {"annotations": {OWNED_BY_ASTS_ANNOTATION: "web"}},
            "spec": {"resources": {"requests": {"storage": "2Gi"}}},
        }
    }
    other_modes = [(_claim("1Gi", "1Gi"), _template("2Gi", ("ReadWriteMany",)))]
    assert not claims_matched(other_modes)
    with pytest.raises(ResizeError, match="contains diff other than spec resource"):
        resize_patches({"metadata": {"name": "web"}}, other_modes)


def _storage(h: EnhancedHarness, ordinal: int) -> tuple[str, str | None]:
    claim = h.claim(f"data-web-{ordinal}")
    assert claim is not None
    capacity = (claim.get("status") or {}).get("capacity", {}).get("storage")
    return claim["spec"]["resources"]["requests"]["storage"], capacity


def _report(h: EnhancedHarness, ordinal: int, capacity: str, *conditions: str) -> None:
    status: dict[str, Any] = {"phase": "Bound", "capacity": {"storage": capacity}}
    if conditions:
        status["conditions"] = [{"type": c, "status": "True"} for c in conditions]
    h.set_status(PersistentVolumeClaim, f"data-web-{ordinal}", status)


def test_rolling_update_expands_claims_one_pod_at_a_time():
    sts = enhanced(
        2,
        {"podUpdatePolicy": "InPlaceIfPossible"},
        volumeClaimUpdateStrategy={"type": "OnPodRollingUpdate"},
    )
    sts["spec"]["volumeClaimTemplates"] = [_template("1Gi")]
    h = EnhancedHarness(sts)
    h.converge()
    for i in (0, 1):
        _report(h, i, "1Gi")
    revision = h.sts["status"]["updateRevision"]

    def grow(s: dict[str, Any]) -> None:
        s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"

    h.edit(grow)
    h.sync()
    # the highest ordinal's claim first; the pod itself is not touched (same revision)
    assert _storage(h, 1) == ("2Gi", "1Gi") and _storage(h, 0) == ("1Gi", "1Gi")
    claim = h.claim("data-web-1")
    assert claim is not None
    assert claim["metadata"]["annotations"][OWNED_BY_ASTS_ANNOTATION] == "web"
    h.sync()
    assert _storage(h, 0) == ("1Gi", "1Gi")  # pod 1's claim is not ready: it is unavailable
    _report(h, 1, "1Gi", "FileSystemResizePending")
    h.sync()
    assert _storage(h, 0) == ("1Gi", "1Gi")
    _report(h, 1, "2Gi")
    h.sync()
    assert _storage(h, 0) == ("2Gi", "1Gi")
    _report(h, 0, "2Gi")
    h.sync()
    assert h.pod_writes("delete") == []
    assert h.sts["status"]["updateRevision"] == revision
    assert h.sts["status"]["volumeClaims"] == [
        {"volumeClaimName": "data", "compatibleReplicas": 2, "compatibleReadyReplicas": 2}
    ]


def test_without_the_strategy_claims_are_left_alone():
    sts = enhanced(1, {"podUpdatePolicy": "InPlaceIfPossible"})
    sts["spec"]["volumeClaimTemplates"] = [_template("1Gi")]
    h = EnhancedHarness(sts)
    h.converge()

    def grow(s: dict[str, Any]) -> None:
        s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"

    h.edit(grow)
    h.converge()
    assert _storage(h, 0)[0] == "1Gi"
