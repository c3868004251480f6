"""The StatefulSet algorithm's strategy seam (:mod:`controllers.statefulset.strategy`): the
control asks its strategy at each decision the kinds make differently; apps/v1's strategy
refuses the Kruise-style knobs, the enhanced one honours them, a custom one changes a decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from controllers.statefulset.control import StatefulSetControl
from controllers.statefulset.spec import IN_PLACE_IF_POSSIBLE, RECREATE, StatefulSetView
from controllers.statefulset.status import ApiStatusUpdater
from controllers.statefulset.strategy import (
    APPS_V1,
    ENHANCED,
    AppsV1Strategy,
    EnhancedStrategy,
    strategy_for,
)
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from tests.support.statefulset_harness import Harness, make_set

KNOBS: dict[str, Any] = {
    "reserveOrdinals": [1],
    "scaleStrategy": {"maxUnavailable": 2},
    "lifecycle": {"preDelete": {"labelsHandler": {"hold": "true"}}},
    "volumeClaimUpdateStrategy": {"type": "OnPodRollingUpdate"},
}
ROLLING: dict[str, Any] = {
    "partition": 1,
    "paused": True,
    "podUpdatePolicy": IN_PLACE_IF_POSSIBLE,
    "unorderedUpdate": {"priorityStrategy": {"weightPriority": []}},
}


def knobbed(api_version: str = "apps/v1") -> dict[str, Any]:
    sts = make_set(3, strategy={"type": "RollingUpdate", "rollingUpdate": ROLLING}, **KNOBS)
    sts["apiVersion"] = api_version
    return sts


def set_image(image: str):
    def edit(sts: dict[str, Any]) -> None:
        sts["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return edit


def test_the_strategy_is_picked_by_kind():
    assert strategy_for(make_set(1)) is APPS_V1
    assert strategy_for(knobbed(ENHANCED_STATEFULSET.api_version)) is ENHANCED
    assert isinstance(APPS_V1, AppsV1Strategy) and isinstance(ENHANCED, EnhancedStrategy)


def test_apps_v1_refuses_the_extensions_knobs_the_enhanced_strategy_honours_them():
    spec = StatefulSetView.of(knobbed())
    assert list(APPS_V1.ordinals(spec)) == [0, 1, 2]
    assert list(ENHANCED.ordinals(spec)) == [0, 2, 3]
    assert APPS_V1.scale_budget(spec) is None and ENHANCED.scale_budget(spec) == 2
    assert not APPS_V1.resizes_claims(spec) and ENHANCED.resizes_claims(spec)
    assert APPS_V1.in_place_policy(spec) == RECREATE
    assert ENHANCED.in_place_policy(spec) == IN_PLACE_IF_POSSIBLE
    assert not APPS_V1.lifecycle_aware and ENHANCED.lifecycle_aware


def test_an_apps_v1_set_with_kruise_knobs_behaves_as_kube_controller_manager():
    """reserveOrdinals, paused and in-place updates are not apps/v1's: the pods take the
    ordinals 0..2 and a new template recreates them, highest ordinal first, down to the
    partition."""
    h = Harness(knobbed())
    h.converge()
    assert h.pod_names() == ["web-0", "web-1", "web-2"]
    assert "apps.kruise.io/lifecycle-state" not in h.pod(0)["metadata"].get("labels", {})
    h.edit(set_image("nginx:2"))
    h.sync()
    assert h.pod_writes("delete") == ["web-2"]  # recreated: not paused, not in place


def test_the_enhanced_kind_honours_reserved_ordinals_and_paused():
    sts = make_set(
        3, strategy={"type": "RollingUpdate", "rollingUpdate": ROLLING}, reserveOrdinals=[1]
    )
    sts["apiVersion"] = ENHANCED_STATEFULSET.api_version
    h = Harness(sts)
    for _ in range(6):  # the InPlaceUpdateReady gate keeps the harness's pods not ready
        h.sync()
        h.all_ready()
    assert h.pod_names() == ["web-0", "web-2", "web-3"]
    h.edit(set_image("nginx:2"))
    for _ in range(3):
        h.sync()
    assert h.pod_writes("delete") == []
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1" for p in h.pods())


class _NoRollout(AppsV1Strategy):
    def rollout_hold(self, p: Any) -> str | None:
        return "held by a custom strategy"


class _Reserved(AppsV1Strategy):
    def ordinals(self, spec: StatefulSetView) -> Sequence[int]:
        return [o for o in range(spec.start, spec.start + spec.replicas + 1) if o != 1]


def plugged(sts: dict[str, Any], strategy: AppsV1Strategy) -> Harness:
    h = Harness(sts)
    h.control = StatefulSetControl(
        h.pod_control, ApiStatusUpdater(h.fake), h.fake, clock=h.clock, strategy=strategy
    )
    return h


def test_a_custom_strategy_decides_the_ordinals():
    h = plugged(make_set(3), _Reserved())
    h.converge()
    assert h.pod_names() == ["web-0", "web-2", "web-3"]


def test_a_custom_strategy_holds_the_rolling_update():
    h = plugged(make_set(2), _NoRollout())
    h.converge()
    h.edit(set_image("nginx:2"))
    for _ in range(3):
        h.sync()
    assert h.pod_writes("delete") == []
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1" for p in h.pods())
    plain = Harness(make_set(2))
    plain.converge()
    plain.edit(set_image("nginx:2"))
    plain.sync()
    assert plain.pod_writes("delete") == ["web-1"]


class _Recording(AppsV1Strategy):
    """apps/v1's answers, recording which decisions a pass asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def update_targets(self, p: Any) -> list[Mapping[str, Any]]:
        self.asked.append("update_targets")
        return super().update_targets(p)

    def hold_delete(self, p: Any, pod: Mapping[str, Any]) -> bool | None:
        self.asked.append("hold_delete")
        return super().hold_delete(p, pod)

    def complete_status(self, p: Any, claims: Sequence[Mapping[str, Any]], error: bool) -> None:
        self.asked.append("complete_status")


def test_one_rolling_update_loop_asks_the_strategy_for_targets_and_deletions():
    strategy = _Recording()
    h = plugged(make_set(2, policy="Parallel"), strategy)
    h.converge()
    h.edit(set_image("nginx:2"))
    strategy.asked.clear()
    h.sync()
    assert strategy.asked == ["update_targets", "hold_delete", "complete_status"]
    assert h.pod_writes("delete") == ["web-1"]


def test_the_parallel_gate_updates_unavailable_targets_first_then_within_the_budget():
    """apps/v1 under Parallel with maxUnavailable 1: an old pod that is not ready is
    updated whatever the budget, and no available one joins it."""
    sts = make_set(
        3,
        policy="Parallel",
        strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
    )
    h = Harness(sts)
    h.converge()
    h.edit(set_image("nginx:2"))
    h.set_ready(0, ready=False)
    h.sync()
    assert h.pod_writes("delete") == ["web-0"]
