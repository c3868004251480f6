"""Mutating admission of the embedded server (kube_runtime/envtest/server/admission.py): the rules of
kube-apiserver's Priority, DefaultTolerationSeconds and StorageObjectInUseProtection plugins."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kube_runtime.envtest.server.admission import (
    PVC_PROTECTION_FINALIZER,
    Admission,
    add_default_tolerations,
    global_default,
)
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import Registry

REGISTRY = Registry()
PODS = REGISTRY.by_key("", "pods")
CLAIMS = REGISTRY.by_key("", "persistentvolumeclaims")
CONFIGMAPS = REGISTRY.by_key("", "configmaps")
assert PODS is not None and CLAIMS is not None and CONFIGMAPS is not None

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = {**NOT_READY, "key": "node.kubernetes.io/unreachable"}


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def admitted(p: dict[str, Any], admission: Admission | None = None) -> dict[str, Any]:
    (admission or Admission()).admit_create(PODS, p)
    return p


def refused(p: dict[str, Any], admission: Admission | None = None) -> ApiError:
    with pytest.raises(ApiError) as info:
        (admission or Admission()).admit_create(PODS, p)
    assert info.value.code == 403 and info.value.reason == "Forbidden"
    assert info.value.details == {"name": "p", "kind": "pods"}
    return info.value


# ------------------------------------------------------------------------------ priority


def test_pod_without_class_gets_priority_zero_and_preempt_lower_priority() -> None:
    spec = admitted(pod())["spec"]
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert "priorityClassName" not in spec


@pytest.mark.parametrize(
    ("name", "value"),
    [("system-node-critical", 2000001000), ("system-cluster-critical", 2000000000)],
)
def test_built_in_classes(name: str, value: int) -> None:
    spec = admitted(pod(priorityClassName=name))["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (value, "PreemptLowerPriority")


def test_unknown_class_is_refused() -> None:
    e = refused(pod(priorityClassName="gold"))
    assert e.message == 'pods "p" is forbidden: no PriorityClass with name gold was found'


def test_priority_sent_must_equal_the_computed_one() -> None:
    e = refused(pod(priority=5))
    assert e.message == (
        'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod '
        "spec; priority admission controller computed 0 from the given PriorityClass name"
    )
    refused(pod(priorityClassName="system-node-critical", priority=0))
    assert admitted(pod(priority=0))["spec"]["priority"] == 0
    same = pod(priorityClassName="system-cluster-critical", priority=2000000000)
    assert admitted(same)["spec"]["priority"] == 2000000000


def test_preemption_policy_sent_must_equal_the_computed_one() -> None:
    e = refused(pod(preemptionPolicy="Never"))
    assert "the string value of PreemptionPolicy (Never) must not be provided" in e.message
    assert "computed PreemptLowerPriority" in e.message
    spec = admitted(pod(preemptionPolicy="PreemptLowerPriority"))["spec"]
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"


def test_served_classes_and_the_global_default() -> None:
    classes = [
        {
            "metadata": {"name": "low"},
            "value": 10,
            "globalDefault": True,
            "preemptionPolicy": "Never",
        },
        {"metadata": {"name": "lower"}, "value": 5, "globalDefault": True},
        {"metadata": {"name": "gold"}, "value": 1000, "preemptionPolicy": "PreemptLowerPriority"},
    ]
    admission = Admission(lambda: classes)
    spec = admitted(pod(), admission)["spec"]
    # the lowest-valued default wins; a class without preemptionPolicy leaves the pod's unset
    assert spec["priorityClassName"] == "lower" and spec["priority"] == 5
    assert "preemptionPolicy" not in spec
    spec = admitted(pod(priorityClassName="gold"), admission)["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (1000, "PreemptLowerPriority")
    # only the served classes exist (a server serving PriorityClass lists the built-in ones)
    refused(pod(priorityClassName="system-node-critical"), admission)
    assert global_default(classes[2:]) is None


def test_update_keeps_priority_the_client_omitted() -> None:
    old = admitted(pod(priorityClassName="system-node-critical"))
    new = copy.deepcopy(old)
    del new["spec"]["priority"], new["spec"]["preemptionPolicy"]
    Admission().admit_update(PODS, new, old)
    assert new["spec"]["priority"] == 2000001000
    assert new["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    changed = copy.deepcopy(old)
    changed["spec"]["priority"] = 1  # left for validation to refuse, as upstream
    Admission().admit_update(PODS, changed, old)
    assert changed["spec"]["priority"] == 1


# --------------------------------------------------------------------------- tolerations


def test_default_tolerations_are_appended() -> None:
    own = {"key": "x", "operator": "Equal", "value": "y", "effect": "NoSchedule"}
    assert admitted(pod())["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    assert admitted(pod(tolerations=[own]))["spec"]["tolerations"] == [
        own,
        NOT_READY,
        UNREACHABLE,
    ]


@pytest.mark.parametrize(
    ("toleration", "added"),
    [
        ({"operator": "Exists"}, []),  # empty key and effect: tolerates everything
        ({"operator": "Exists", "effect": "NoExecute"}, []),
        ({"key": "node.kubernetes.io/not-ready", "operator": "Exists"}, [UNREACHABLE]),
        (
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 5,
            },
            [NOT_READY],
        ),
        (
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"},
            [NOT_READY, UNREACHABLE],
        ),
        ({"key": "other", "operator": "Exists", "effect": "NoExecute"}, [NOT_READY, UNREACHABLE]),
    ],
)
def test_what_counts_as_tolerating(toleration: dict[str, Any], added: list[Any]) -> None:
    p = pod(tolerations=[toleration])
    add_default_tolerations(p)
    assert p["spec"]["tolerations"] == [toleration, *added]


def test_update_puts_default_tolerations_back_and_is_idempotent() -> None:
    old = admitted(pod())
    new = copy.deepcopy(old)
    del new["spec"]["tolerations"]
    Admission().admit_update(PODS, new, old)
    assert new == old
    again = copy.deepcopy(new)
    Admission().admit_update(PODS, again, new)
    assert again == new


def test_malformed_specs_are_left_to_validation() -> None:
    p: dict[str, Any] = {"metadata": {"name": "p"}, "spec": {"tolerations": "nope"}}
    Admission().admit_create(PODS, {"metadata": {"name": "p"}})
    add_default_tolerations(p)
    assert p["spec"]["tolerations"] == "nope"


# ---------------------------------------------------------------------------- pvc finalizer


def test_claims_get_the_protection_finalizer_once() -> None:
    claim: dict[str, Any] = {"metadata": {"name": "c", "finalizers": ["example.com/x"]}}
    Admission().admit_create(CLAIMS, claim)
    assert claim["metadata"]["finalizers"] == ["example.com/x", PVC_PROTECTION_FINALIZER]
    Admission().admit_create(CLAIMS, claim)
    assert claim["metadata"]["finalizers"] == ["example.com/x", PVC_PROTECTION_FINALIZER]
    bare: dict[str, Any] = {"metadata": {"name": "c"}}
    Admission().admit_create(CLAIMS, bare)
    assert bare["metadata"]["finalizers"] == [PVC_PROTECTION_FINALIZER]


def test_updates_and_other_kinds_are_untouched() -> None:
    claim: dict[str, Any] = {"metadata": {"name": "c"}}
    Admission().admit_update(CLAIMS, claim, {"metadata": {"name": "c"}})
    assert claim == {"metadata": {"name": "c"}}
    cm: dict[str, Any] = {"metadata": {"name": "c"}, "spec": {}}
    Admission().admit_create(CONFIGMAPS, cm)
    assert cm == {"metadata": {"name": "c"}, "spec": {}}
