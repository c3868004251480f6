"""The checks that keep bad specs the API accepted from crashing the workload controllers
(issue 18 part 5): template shapes, enhanced StatefulSet and CloneSet field values, and which
reconcile failures count as panics."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.cloneset.core import validate
from controllers.statefulset.spec import InvalidSpecError, StatefulSetView, spec_field_errors
from kube_runtime.client import ApiError
from kube_runtime.controller import _is_api_failure
from kube_runtime.workloads.intstr import int_or_percent_error
from kube_runtime.workloads.templates import template_problems

TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}]}}
CLAIM = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"template": TEMPLATE, "volumeClaimTemplates": [CLAIM]}, []),
        ({}, []),
        ({"template": "nginx"}, ["spec.template: must be an object, not a string"]),
        ({"template": {"spec": []}}, ["spec.template.spec: must be an object, not a list"]),
        (
            {"template": {"metadata": {"labels": "app=a"}}},
            ["spec.template.metadata.labels: must be an object of strings, not a string"],
        ),
        (
            {"template": {"metadata": {"annotations": {"a": 1}}}},
            ["spec.template.metadata.annotations[a]: must be a string, not int"],
        ),
        (
            {"volumeClaimTemplates": "data"},
            ["spec.volumeClaimTemplates: must be a list, not a string"],
        ),
        (
            {"volumeClaimTemplates": ["data"]},
            ["spec.volumeClaimTemplates[0]: must be an object, not a string"],
        ),
        (
            {"volumeClaimTemplates": [{"spec": {}}]},
            ["spec.volumeClaimTemplates[0].metadata.name: Required value"],
        ),
        (
            {"volumeClaimTemplates": [CLAIM, CLAIM]},
            ["spec.volumeClaimTemplates[1].metadata.name: Duplicate value: 'data'"],
        ),
        (
            {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": "1Gi"}]},
            ["spec.volumeClaimTemplates[0].spec: must be an object, not a string"],
        ),
    ],
)
def test_template_problems(spec: dict[str, Any], expected: list[str]) -> None:
    assert template_problems(spec) == expected


def test_a_claim_template_name_must_be_a_dns_label() -> None:
    (problem,) = template_problems({"volumeClaimTemplates": [{"metadata": {"name": "Data_1"}}]})
    assert problem.startswith("spec.volumeClaimTemplates[0].metadata.name: Invalid value: 'Data_1'")
    assert "RFC 1123 label" in problem


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (1, None),
        ("25%", None),
        (0, None),
        (-1, "Invalid value: -1: must be greater than or equal to 0"),
        ("-10%", "Invalid value: '-10%': must be greater than or equal to 0"),
        ("lots", "Invalid value: 'lots': must be an integer or percentage (e.g '5%')"),
        (1.5, "must be an integer or a percentage like '25%', not 1.5"),
        (True, "must be an integer or a percentage like '25%', not True"),
    ],
)
def test_int_or_percent_error(value: object, error: str | None) -> None:
    assert int_or_percent_error(value) == error


def _set(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "s", "namespace": "n", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE, **spec},
    }


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"replicas": -3}, "spec.replicas: Invalid value: -3"),
        ({"revisionHistoryLimit": -1}, "spec.revisionHistoryLimit"),
        ({"ordinals": {"start": -1}}, "spec.ordinals.start"),
        ({"podManagementPolicy": "Sometimes"}, "spec.podManagementPolicy: Unsupported value"),
        ({"updateStrategy": {"type": "Sideways"}}, "spec.updateStrategy.type"),
        (
            {"updateStrategy": {"rollingUpdate": {"partition": -1}}},
            "spec.updateStrategy.rollingUpdate.partition",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"minReadySeconds": -5}}},
            "spec.updateStrategy.rollingUpdate.minReadySeconds",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "Teleport"}}},
            "spec.updateStrategy.rollingUpdate.podUpdatePolicy",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "-10%"}}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: must not round",
        ),
        ({"scaleStrategy": {"maxUnavailable": "lots"}}, "spec.scaleStrategy.maxUnavailable"),
        # issue 29: what reached the controller and was acted on without a word
        (
            {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "150%"}}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: '150%': must not "
            "be greater than 100%",
        ),
        (
            {"updateStrategy": {"rollingUpdate": {"partition": "150%"}}},
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: '150%'",
        ),
        (
            {
                "updateStrategy": {
                    "rollingUpdate": {"inPlaceUpdateStrategy": {"gracePeriodSeconds": -10}}
                }
            },
            "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds: "
            "Invalid value: -10: must be greater than or equal to 0",
        ),
        (
            {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Shred"}},
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
        ),
        ({"selector": {"matchLabels": {"app": "b"}}}, "spec.template.metadata.labels"),
    ],
)
def test_enhanced_statefulset_spec_values(spec: dict[str, Any], path: str) -> None:
    sts = _set(**spec)
    (error,) = spec_field_errors(sts["spec"])
    assert error.startswith(path)
    with pytest.raises(InvalidSpecError, match=r"^spec\."):
        StatefulSetView.of(sts)


def test_a_good_statefulset_spec_has_no_errors_and_a_teardown_skips_the_values() -> None:
    good = _set(
        replicas=3,
        podManagementPolicy="Parallel",
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}},
    )
    assert spec_field_errors(good["spec"]) == []
    assert StatefulSetView.of(good).replicas == 3
    assert StatefulSetView.of(_set(replicas=-3), teardown=True).ordinals == ()
    with pytest.raises(InvalidSpecError, match=r"spec.template: must be an object"):
        StatefulSetView.of(_set(template="nginx"), teardown=True)  # nothing can be built from it


def _cloneset(**spec: Any) -> dict[str, Any]:
    obj = _set(replicas=1, **spec)
    obj["apiVersion"], obj["kind"] = "apps.kube-runtime.io/v1alpha1", "CloneSet"
    return obj


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"revisionHistoryLimit": -1}, "revisionHistoryLimit: Invalid value: -1"),
        ({"minReadySeconds": -5}, "minReadySeconds: Invalid value: -5"),
        ({"progressDeadlineSeconds": -1}, "progressDeadlineSeconds: Invalid value: -1"),
        ({"scaleStrategy": {"podsToDelete": [""]}}, "scaleStrategy.podsToDelete"),
        ({"updateStrategy": {"maxSurge": "-5%"}}, 'updateStrategy.maxSurge: Invalid value: "-5%"'),
        ({"updateStrategy": {"partition": "lots"}}, "updateStrategy.partition: Invalid value"),
        ({"volumeClaimTemplates": ["data"]}, "spec.volumeClaimTemplates[0]: must be an object"),
        (
            {"updateStrategy": {"maxUnavailable": "150%"}},
            "updateStrategy.maxUnavailable: Invalid value: '150%': must not be greater than 100%",
        ),
        (
            {"updateStrategy": {"partition": "150%"}},
            "updateStrategy.partition: Invalid value: '150%': must not be greater than 100%",
        ),
    ],
)
def test_cloneset_spec_values(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(_cloneset(**spec))


def test_a_cloneset_surge_above_100_percent_is_valid() -> None:
    """apps/v1 bounds ``maxUnavailable`` (and a partition can keep at most every pod), not
    ``maxSurge``: 150% surge is a valid spec."""
    assert validate(_cloneset(updateStrategy={"maxSurge": "150%", "maxUnavailable": "100%"}))


def test_a_failure_raised_from_an_api_error_is_not_a_panic() -> None:
    api = ApiError({"code": 422, "reason": "Invalid", "message": "bad"})
    try:
        try:
            raise api
        except ApiError as err:
            raise RuntimeError("creating the claim failed") from err
    except RuntimeError as wrapped:
        assert _is_api_failure(wrapped)
    assert _is_api_failure(api)
    assert not _is_api_failure(AttributeError("'str' object has no attribute 'get'"))


def test_a_cloneset_condition_whose_message_alone_changes_is_not_written() -> None:
    from controllers.cloneset.status import set_condition, status_changed

    stored: dict[str, Any] = {"replicas": 1}
    set_condition(stored, "FailedScale", 'Pod "web-abcde" is invalid')
    cs = {"metadata": {"name": "web"}, "status": stored}
    again = {"replicas": 1, "conditions": [dict(c) for c in stored["conditions"]]}
    set_condition(again, "FailedScale", 'Pod "web-fghij" is invalid')
    assert again["conditions"][0]["message"] != stored["conditions"][0]["message"]
    assert not status_changed(cs, again)
    more = dict(again, replicas=2)
    assert status_changed(cs, more)  # then the new message is written too
    cleared = {"replicas": 1}
    set_condition(cleared, "FailedScale", None)
    assert status_changed(cs, cleared)
