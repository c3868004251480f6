"""StatefulSetView: what a sync reads of a set's spec, through the enhanced kind's generated model for
``rollingUpdate``, and the specs it refuses (InvalidSpecError names the field)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.statefulset.spec import (
    IN_PLACE_IF_POSSIBLE,
    RECREATE,
    InvalidSpecError,
    StatefulSetView,
)


def spec_of(**spec: Any) -> StatefulSetView:
    return StatefulSetView.of({"metadata": {"name": "web", "namespace": "ns"}, "spec": spec})


def test_apps_v1_defaults() -> None:
    s = spec_of(replicas=3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {}})
    assert s.ordinals == (0, 1, 2) and s.replicas == 3 and not s.parallel
    assert s.strategy == "RollingUpdate" and s.partition == 0 and s.max_unavailable == 1
    assert not s.paused and s.pod_update_policy == RECREATE and not s.unordered
    assert s.revision_history_limit == 10 and s.min_ready_seconds == 0
    assert spec_of().replicas == 1 and spec_of().strategy == "RollingUpdate"
    assert spec_of(updateStrategy={"type": "OnDelete"}).strategy == "OnDelete"


def test_kruise_rolling_update_through_the_model() -> None:
    s = spec_of(
        replicas=10,
        podManagementPolicy="Parallel",
        ordinals={"start": 2},
        reserveOrdinals=[3, "5-6"],
        revisionHistoryLimit=2,
        updateStrategy={
            "rollingUpdate": {
                "partition": 1,
                "maxUnavailable": "25%",
                "paused": True,
                "podUpdatePolicy": IN_PLACE_IF_POSSIBLE,
                "inPlaceUpdateStrategy": {"gracePeriodSeconds": 5},
                "minReadySeconds": 3,
                "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "r"}]}},
            }
        },
    )
    assert s.ordinals == (2, 4, 7, 8, 9, 10, 11, 12, 13, 14) and s.parallel
    assert s.partition == 1 and s.max_unavailable == 2 and s.paused
    assert s.pod_update_policy == IN_PLACE_IF_POSSIBLE and s.grace_period_seconds == 5
    assert s.min_ready_seconds == 3 and s.revision_history_limit == 2
    assert s.unordered and s.priority_strategy == {"orderPriority": [{"orderedKey": "r"}]}


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"reserveOrdinals": ["4-2"]}, "spec.reserveOrdinals"),
        ({"reserveOrdinals": ["x"]}, "spec.reserveOrdinals"),
        (
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "lots"}}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"partition": "first"}}},
            "spec.updateStrategy.rollingUpdate.partition",
        ),
        (
            {
                "updateStrategy": {
                    "rollingUpdate": {
                        "unorderedUpdate": {"priorityStrategy": {"weightPriority": [{"weight": 1}]}}
                    }
                }
            },
            "spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy",
        ),
    ],
)
def test_invalid_specs_name_the_field(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidSpecError, match=field.replace(".", r"\.")):
        spec_of(**spec)


def test_a_teardown_does_not_need_ordinals_or_max_unavailable() -> None:
    sts = {
        "spec": {
            "replicas": 3,
            "reserveOrdinals": ["4-2"],
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": "lots"}},
        }
    }
    s = StatefulSetView.of(sts, teardown=True)
    assert s.teardown and s.ordinals == ()
