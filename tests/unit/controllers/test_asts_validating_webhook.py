"""The enhanced (Advanced) StatefulSet's validating webhook checked against OpenKruise's
(``pkg/webhook/statefulset/validating``), check by check, with Kruise's messages and field
paths: ``scaleStrategy.maxUnavailable`` / ``rollingUpdate.maxUnavailable`` (below 1, other
than 1 without Parallel pods), ``reserveOrdinals``, ``rollingUpdate`` under OnDelete,
``minReadySeconds`` over 300, the ``InPlaceUpdateReady`` gate an in-place policy needs, the
priority strategy of ``unorderedUpdate``, the fields an update keeps fixed and the
InPlaceOnly rule that only images change."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from controllers.statefulset.webhooks import (
    FIXED_MESSAGE,
    Errored,
    StatefulSetValidator,
    in_place_only_error,
    kruise_errors,
    set_defaults,
    spec_errors,
    template_spec_changes,
)
from kube_runtime import webhook
from kube_runtime.webhook._errors import go_value
from tests.e2e.bad_specs import good

PARALLEL_ONLY = "can only work with Parallel PodManagementPolicyType"


def _set(**spec: Any) -> dict[str, Any]:
    sts = good(ENHANCED_STATEFULSET, "web", "ns")
    sts["spec"].update(spec)
    return sts


def _rolling(policy: str = "OrderedReady", **rolling: Any) -> dict[str, Any]:
    return _set(
        podManagementPolicy=policy,
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling},
    )


def _texts(sts: Any) -> list[str]:
    return [str(e) for e in spec_errors(sts) or kruise_errors(sts)]


def test_scale_strategy_max_unavailable_needs_parallel_unless_one():
    """Kruise's ``validateScaleStrategy``: anything but the integer 1 needs Parallel."""
    for value in (2, "50%"):
        refused = _set(scaleStrategy={"maxUnavailable": value})
        assert _texts(refused) == [
            f"spec.scaleStrategy.maxUnavailable: Invalid value: {go_value(value)}: " + PARALLEL_ONLY
        ]
        refused["spec"]["podManagementPolicy"] = "Parallel"
        assert _texts(refused) == []
    assert _texts(_set(scaleStrategy={"maxUnavailable": 1})) == []


def test_max_unavailable_below_one_in_kruise_words():
    """0 and ``"0%"`` (of one replica, rounded up) are below 1, for both fields, with Parallel
    pods too; without them the Parallel rule is reported as well."""
    for value in (0, "0%"):
        scale = _set(podManagementPolicy="Parallel", scaleStrategy={"maxUnavailable": value})
        assert _texts(scale) == [
            f"spec.scaleStrategy.maxUnavailable: Invalid value: {go_value(value)}: "
            "should not be less than 1"
        ]
        rolling = _rolling("OrderedReady", maxUnavailable=value)
        assert _texts(rolling) == [
            f"spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "
            f"{go_value(value)}: should not be less than 1",
            f"spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "
            f"{go_value(value)}: " + PARALLEL_ONLY,
        ]
    assert _texts(_rolling("Parallel", maxUnavailable="1%")) == []


def test_reserve_ordinals_as_kruise():
    """Strings must be ranges ``a-b`` (``a <= b``), integers not negative; at ``spec.reserveOrdinals`` (Kruise: ``spec``)."""
    assert _texts(_set(reserveOrdinals=[1, "3-4"])) == []
    entries = [-1, "5-3", "7"]
    assert _texts(_set(reserveOrdinals=entries)) == [
        f"spec.reserveOrdinals: Invalid value: {go_value(entries)}: 0 th reserve ordinal is negative: -1",
        f"spec.reserveOrdinals: Invalid value: {go_value(entries)}: "
        "1 th reserve ordinal is invalid: 5-3, err = invalid range 5-3",
        f"spec.reserveOrdinals: Invalid value: {go_value(entries)}: "
        "2 th reserve ordinal is not a valid range: 7",
        f"spec.reserveOrdinals: Invalid value: {go_value(entries)}: "
        "2 th reserve ordinal is invalid: 7, err = invalid range 7",
    ]


def test_rolling_update_only_with_rolling_update_type():
    sts = _set(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}})
    assert _texts(sts) == [
        'spec.updateStrategy.rollingUpdate: Invalid value: {"partition": 1}: '
        "only allowed for updateStrategy 'RollingUpdate'"
    ]
    assert _texts(_set(updateStrategy={"type": "OnDelete"})) == []


def test_min_ready_seconds_at_most_300():
    assert _texts(_rolling(minReadySeconds=300)) == []
    assert _texts(_rolling(minReadySeconds=301)) == [
        "spec.updateStrategy.rollingUpdate.minReadySeconds: Invalid value: 301: "
        "must be no more than 300 seconds"
    ]


@pytest.mark.parametrize("policy", ["InPlaceIfPossible", "InPlaceOnly"])
def test_in_place_policies_need_the_readiness_gate_in_the_template(policy):
    sts = _rolling(podUpdatePolicy=policy)
    assert _texts(sts) == [
        "spec.template.spec.readinessGates: Invalid value: null: "
        f"must contains InPlaceUpdateReady when podUpdatePolicy is {policy}"
    ]
    sts["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    assert _texts(sts) == []
    assert _texts(_rolling(podUpdatePolicy="ReCreate")) == []


def test_unordered_update_priority_strategy_is_checked():
    both = {
        "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"a": "b"}}}],
        "orderPriority": [{"orderedKey": "k"}],
    }
    sts = _rolling("Parallel", unorderedUpdate={"priorityStrategy": both})
    assert _texts(sts) == [
        "spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy: Required value: "
        "only one of weightPriority and orderPriority can be used"
    ]
    empty_key = _rolling("Parallel", unorderedUpdate={"priorityStrategy": {"orderPriority": [{}]}})
    assert _texts(empty_key)[0].endswith("order key can not be empty")
    fine = _rolling(
        "Parallel",
        unorderedUpdate={"priorityStrategy": {"orderPriority": [both["orderPriority"][0]]}},
    )
    assert _texts(fine) == []


def _update(old: Any, new: Any) -> webhook.AdmissionError | None:
    try:
        StatefulSetValidator().validate_update(old, new, None)  # type: ignore[arg-type]
    except webhook.AdmissionError as err:
        return err
    return None


def test_updates_keep_every_field_kruise_keeps_fixed_in_its_words():
    old = _set()
    for changes in ({"selector": {"matchLabels": {"app": "web", "x": "y"}}}, {"serviceName": "x"}):
        new = _set(**changes)
        if "selector" in changes:
            new["spec"]["template"]["metadata"]["labels"]["x"] = "y"
        err = _update(old, new)
        assert isinstance(err, webhook.Invalid), changes
        assert [str(e) for e in err.errors] == [f"spec: Forbidden: {FIXED_MESSAGE}"]
    scaled = _set(replicas=5, reserveOrdinals=[1], scaleStrategy={"maxUnavailable": 1})
    assert _update(old, scaled) is None


def _in_place_only(image: str = "nginx:1", **pod: Any) -> dict[str, Any]:
    sts = _rolling(podUpdatePolicy="InPlaceOnly")
    template = sts["spec"]["template"]
    template["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    template["spec"]["containers"][0]["image"] = image
    template["spec"].update(pod)
    return sts


def test_in_place_only_updates_change_images_only():
    """Kruise's ``validateTemplateInPlaceOnly``: a 422 without causes naming the first other
    change; images and template metadata may change."""
    old = _in_place_only()
    assert _update(old, _in_place_only("nginx:2")) is None
    relabeled = _in_place_only()
    relabeled["spec"]["template"]["metadata"]["annotations"] = {"a": "b"}
    assert _update(old, relabeled) is None
    err = _update(old, _in_place_only("nginx:2", hostname="h"))
    assert isinstance(err, Errored)
    assert err.status("g", "k", "n") == {
        "metadata": {},
        "code": 422,
        "message": "invalid template modified with InPlaceOnly strategy: add /hostname, "
        "currently only image update is allowed for InPlaceOnly",
    }
    # a ReCreate set may change anything
    recreate = copy.deepcopy(old)
    recreate["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = "ReCreate"
    changed = copy.deepcopy(recreate)
    changed["spec"]["template"]["spec"]["hostname"] = "h"
    assert _update(recreate, changed) is None


def test_template_spec_changes_as_json_patch_operations():
    old = {"containers": [{"name": "a", "image": "x", "env": [{"name": "E", "value": "1"}]}]}
    new = {
        "containers": [{"name": "a", "image": "y", "env": []}, {"name": "b", "image": "z"}],
        "volumes": [],
    }
    assert template_spec_changes(old, new) == [
        ("add", "/containers/1"),
        ("remove", "/containers/0/env/0"),
        ("replace", "/containers/0/image"),
        ("add", "/volumes"),
    ]
    assert template_spec_changes({"a/b": 1}, {"a/b": 2}) == [("replace", "/a~1b")]
    assert (
        in_place_only_error(
            {"spec": {"template": {"spec": old}}}, {"spec": {"template": {"spec": old}}}
        )
        is None
    )


def test_a_metadata_only_update_of_a_set_stored_before_the_webhook_passes():
    """A set the webhook would refuse (stored before it was installed) can still get and lose
    the controller's finalizer: an update that leaves the spec alone is not checked."""
    old = _rolling(podUpdatePolicy="InPlaceIfPossible")  # no InPlaceUpdateReady gate
    finalized = copy.deepcopy(old)
    finalized["metadata"]["finalizers"] = ["apps.kube-runtime.io/ordered-teardown"]
    assert _update(old, finalized) is None
    bare = copy.deepcopy(old)
    del bare["spec"]["replicas"]  # stored without the defaulting webhook, which adds it now
    assert _update(bare, set_defaults(finalized)) is None
    scaled = copy.deepcopy(finalized)
    scaled["spec"]["replicas"] = 5
    err = _update(finalized, scaled)
    assert isinstance(err, webhook.Invalid)
    assert "must contains InPlaceUpdateReady" in str(err)
