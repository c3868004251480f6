"""conditions.py: apimachinery's SetStatusCondition rules (lastTransitionTime moves only with
status), find/remove/is_* helpers, and set_condition on dicts and typed models."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar

import pytest
from pydantic import Field

from kube_runtime.client import Resource
from kube_runtime.conditions import (
    find_status_condition,
    format_time,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_condition,
    set_failure_condition,
    set_status_condition,
)
from kube_runtime.models import Condition, KubeModel, ObjectMeta

T0 = datetime(2024, 1, 31, 12, 0, 0, tzinfo=timezone.utc)
T1 = T0 + timedelta(minutes=5)
S0, S1 = "2024-01-31T12:00:00Z", "2024-01-31T12:05:00Z"


def ready(
    status: str = "True", reason: str = "Ok", message: str = "fine", **extra: Any
) -> dict[str, Any]:
    return {"type": "Ready", "status": status, "reason": reason, "message": message, **extra}


def stored(**extra: Any) -> list[dict[str, Any]]:
    """One stored Ready=True condition that transitioned at S0."""
    return [ready(lastTransitionTime=S0, **extra)]


# ------------------------------------------------------------------ set_status_condition


def test_a_new_condition_is_appended_with_now_as_transition_time() -> None:
    conditions: list[dict[str, Any]] = [{"type": "Other", "status": "False"}]
    assert set_status_condition(conditions, ready(), now=T0) is True
    assert conditions[1] == ready(lastTransitionTime=S0)
    assert conditions[0] == {"type": "Other", "status": "False"}


def test_a_given_transition_time_is_kept_on_add_and_on_status_change() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, ready(lastTransitionTime="2020-01-01T00:00:00Z"), now=T0)
    assert conditions[0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    set_status_condition(conditions, ready("False", lastTransitionTime=S1), now=T0)
    assert conditions[0]["lastTransitionTime"] == S1


def test_status_change_moves_the_transition_time() -> None:
    conditions = stored()
    assert set_status_condition(conditions, ready("False", "Broken", "down"), now=T1) is True
    assert conditions == [ready("False", "Broken", "down", lastTransitionTime=S1)]


def test_reason_message_generation_change_without_moving_the_transition_time() -> None:
    conditions = stored()
    changed = set_status_condition(
        conditions, ready(reason="Better", message="finer", observedGeneration=4), now=T1
    )
    assert changed is True
    assert conditions == [
        ready(reason="Better", message="finer", observedGeneration=4, lastTransitionTime=S0)
    ]


def test_an_identical_condition_changes_nothing() -> None:
    conditions = stored(observedGeneration=2)
    before = conditions[0]
    assert set_status_condition(conditions, ready(observedGeneration=2), now=T1) is False
    assert conditions[0] is before
    assert conditions == stored(observedGeneration=2)


def test_keys_left_out_take_go_zero_values() -> None:
    # Go's metav1.Condition has no "missing": an absent reason is "", an absent generation 0.
    conditions = stored(observedGeneration=3)
    new = {"type": "Ready", "status": "True", "message": "fine"}
    assert set_status_condition(conditions, new, now=T1) is True
    assert conditions == [
        {"type": "Ready", "status": "True", "message": "fine", "lastTransitionTime": S0}
    ]
    # ... and equal to "" / 0, so an explicit zero on a stored absent key changes nothing.
    assert set_status_condition(conditions, {**new, "reason": "", "observedGeneration": 0}) is False
    assert "reason" not in conditions[0]


def test_other_keys_are_set_when_given_and_kept_when_not() -> None:
    conditions = stored(lastProbeTime="x")
    assert set_status_condition(conditions, ready(), now=T1) is False
    assert conditions[0]["lastProbeTime"] == "x"
    assert set_status_condition(conditions, ready(lastProbeTime="y"), now=T1) is True
    assert conditions[0]["lastProbeTime"] == "y"


def test_stored_condition_dicts_are_replaced_never_modified() -> None:
    cached = stored()
    original = cached[0]
    copy_of_list = list(cached)  # what a reconciler does with a cached object's list
    set_status_condition(copy_of_list, ready("False"), now=T1)
    assert original == ready(lastTransitionTime=S0)
    assert cached == [original]
    assert copy_of_list[0]["status"] == "False"


def test_a_model_condition_and_nulls() -> None:
    conditions: list[dict[str, Any]] = []
    model = Condition(
        type="Ready", status="Unknown", reason="Wait", message="", last_transition_time=S1
    )
    assert model.observed_generation is None
    assert set_status_condition(conditions, model, now=T0) is True
    assert conditions == [
        {
            "type": "Ready",
            "status": "Unknown",
            "reason": "Wait",
            "message": "",
            "lastTransitionTime": S1,
        }
    ]


@pytest.mark.parametrize(
    "new", [{"type": "Ready"}, {"status": "True"}, {"type": "", "status": "True"}]
)
def test_type_and_status_are_required(new: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="type and a status"):
        set_status_condition([], new)


def test_the_clock_can_be_a_function_and_defaults_to_now() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, ready(), now=lambda: T1)
    assert conditions[0]["lastTransitionTime"] == S1
    before = datetime.now(timezone.utc).replace(microsecond=0)
    set_status_condition(conditions, ready("False"))
    after = datetime.now(timezone.utc)
    stamp = conditions[0]["lastTransitionTime"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert before <= moment <= after


def test_format_time_is_utc_with_whole_seconds() -> None:
    assert format_time(datetime(2024, 1, 31, 12, 0, 0, 999_999)) == S0  # naive: UTC
    assert format_time(datetime(2024, 1, 31, 13, 5, tzinfo=timezone(timedelta(hours=1)))) == S1


# ------------------------------------------------------------------ find / remove / is_*


def test_find_returns_the_element() -> None:
    conditions = [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]
    assert find_status_condition(conditions, "B") is conditions[1]
    assert find_status_condition(conditions, "C") is None
    assert find_status_condition(None, "A") is None


def test_remove_in_place() -> None:
    conditions = [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]
    alias = conditions
    assert remove_status_condition(conditions, "A") is True
    assert alias == [{"type": "B", "status": "False"}]
    assert remove_status_condition(conditions, "A") is False
    assert alias == [{"type": "B", "status": "False"}]


def test_is_true_false_present_and_equal() -> None:
    conditions = [
        {"type": "A", "status": "True"},
        {"type": "B", "status": "False"},
        {"type": "C", "status": "Unknown"},
    ]
    assert is_status_condition_true(conditions, "A")
    assert not is_status_condition_true(conditions, "B")
    assert is_status_condition_false(conditions, "B")
    assert not is_status_condition_false(conditions, "A")
    assert not is_status_condition_true(conditions, "C") and not is_status_condition_false(
        conditions, "C"
    )
    assert is_status_condition_present_and_equal(conditions, "C", "Unknown")
    assert not is_status_condition_true(conditions, "Missing")
    assert not is_status_condition_false(None, "Missing")


# ------------------------------------------------------------------ set_condition


def test_set_condition_on_a_dict_creates_status_and_conditions() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x", "generation": 3}}
    assert set_condition(obj, "Ready", True, "Up", "all good", observed_generation=3, now=T0)
    assert obj["status"] == {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Up",
                "message": "all good",
                "observedGeneration": 3,
                "lastTransitionTime": S0,
            }
        ]
    }
    assert not set_condition(obj, "Ready", "True", "Up", "all good", observed_generation=3, now=T1)
    assert set_condition(obj, "Ready", False, "Down", now=T1)
    assert obj["status"]["conditions"][0]["lastTransitionTime"] == S1
    assert obj["status"]["conditions"][0]["message"] == ""


def test_set_condition_on_a_dict_leaves_the_previous_list_alone() -> None:
    previous = stored()
    obj: dict[str, Any] = {"status": {"replicas": 1, "conditions": previous}}
    assert set_condition(obj, "Ready", "False", "Down", now=T1)
    assert previous == stored()
    assert obj["status"]["conditions"] is not previous
    assert obj["status"]["replicas"] == 1


class WidgetStatus(KubeModel):
    ready_replicas: int | None = Field(default=None, alias="readyReplicas")
    conditions: list[Condition] | None = None


class Widget(KubeModel):
    __kube_resource__: ClassVar[Resource] = Resource(
        group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
    )
    metadata: ObjectMeta
    status: WidgetStatus | None = None


def test_set_condition_on_a_model_with_and_without_status() -> None:
    fresh = Widget(metadata=ObjectMeta(name="w"))
    assert set_condition(fresh, "Ready", True, "Up", now=T0)
    assert fresh.status is not None and fresh.status.conditions is not None
    assert fresh.status.conditions[0].status == "True"
    assert fresh.status.conditions[0].last_transition_time == S0

    read = Widget.model_validate(
        {"metadata": {"name": "w"}, "status": {"readyReplicas": 2, "conditions": stored()}}
    )
    assert not set_condition(read, "Ready", True, "Ok", "fine", now=T1)
    assert set_condition(read, "Ready", False, "Down", "gone", now=T1)
    assert read.to_wire()["status"] == {
        "readyReplicas": 2,
        "conditions": [ready("False", "Down", "gone", lastTransitionTime=S1)],
    }


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("Ready", True, ""), "reason ''"),  # metav1: reason may not be empty
        (("Ready", True, "not camel"), "reason 'not camel'"),
        (("Ready", True, "Up:"), "reason 'Up:'"),
        (("Ready", True, "A" * 1025), "reason"),
        (("not a type!", True, "Up"), "type 'not a type!'"),
        (("x" * 317, True, "Up"), "type"),
        (("Ready", "Maybe", "Up"), "status 'Maybe'"),
        (("Ready", True, "Up", "m" * 32769), "message"),
    ],
)
def test_set_condition_refuses_what_a_metav1_condition_schema_refuses(
    args: tuple[Any, ...], field: str
) -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x"}}
    with pytest.raises(ValueError, match=f"invalid condition: {re.escape(field)}"):
        set_condition(obj, *args, now=T0)
    with pytest.raises(ValueError, match="observed_generation -1"):
        set_condition(obj, "Ready", True, "Up", observed_generation=-1, now=T0)
    assert obj == {"metadata": {"name": "x"}}  # nothing changed


def test_set_condition_accepts_what_the_condition_model_accepts() -> None:
    obj: dict[str, Any] = {}
    for condition_type, reason in [
        ("example.com/Ready", "MinimumReplicasAvailable"),
        ("Ready", "A"),
        ("Ready", "Deploy_Failed,Retrying:3"),
    ]:
        set_condition(obj, condition_type, True, reason, now=T0)
    for condition in obj["status"]["conditions"]:
        assert Condition.model_validate(condition).to_wire() == condition


def test_set_failure_condition_sets_true_then_false_or_removes() -> None:
    conditions: list[dict[str, Any]] = []
    assert not set_failure_condition(conditions, "FailedCreatePod", None, now=T0)
    assert conditions == []
    assert set_failure_condition(conditions, "FailedCreatePod", ("Quota", "over"), now=T0)
    assert conditions == [
        {
            "type": "FailedCreatePod",
            "status": "True",
            "reason": "Quota",
            "message": "over",
            "lastTransitionTime": "2024-01-31T12:00:00Z",
        }
    ]
    later = T0 + timedelta(minutes=1)
    removable = [dict(c) for c in conditions]
    assert set_failure_condition(conditions, "FailedCreatePod", None, now=later)
    assert conditions == [
        {
            "type": "FailedCreatePod",
            "status": "False",
            "reason": "Succeeded",
            "lastTransitionTime": "2024-01-31T12:01:00Z",
        }
    ]
    assert not set_failure_condition(conditions, "FailedCreatePod", None, now=later)
    assert set_failure_condition(removable, "FailedCreatePod", None, remove_on_success=True)
    assert removable == []
