"""The bundled CRDs' schemas refuse at admission what OpenKruise's CloneSet and Advanced
StatefulSet webhooks refuse (issue 17 part 3), with the field path: enums, minimums, maximums,
lengths and int-or-percent patterns on both backends; the cross-field CEL rules
(``x-kubernetes-validations``) on the embedded server, which evaluates them as kube-apiserver
1.25+ does. On kube-apiserver 1.20 the installer leaves the rules out and the CRDs install."""

from __future__ import annotations

import copy
import logging
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from controllers import cloneset, statefulset
from controllers.cloneset import CLONESET
from controllers.cloneset import controller as cloneset_controller
from controllers.statefulset import ENHANCED_STATEFULSET
from controllers.statefulset import controller as statefulset_controller
from kube_runtime import crds
from kube_runtime.client import ApiError, Client
from kube_runtime.kinds import CustomResourceDefinition, Kind
from tests.e2e.bad_specs import good


@pytest.fixture(scope="module")
def installed(client: Client) -> None:
    cloneset.install_crd(client)
    statefulset.install_crd(client)


def _refused(client: Client, obj: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ApiError) as caught:
        client.create(obj)
    assert caught.value.code == 422, caught.value
    assert any(
        c.get("field") == field and words in c.get("message", "") for c in caught.value.causes
    ), caught.value.causes


def _with(kind: Kind, name: str, namespace: str, path: str, value: Any) -> dict[str, Any]:
    obj = good(kind, name, namespace)
    node = obj["spec"]
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    return obj


SCHEMA_CASES = [
    ("replicas", -1, "spec.replicas", "greater than or equal to 0"),
    ("minReadySeconds", -5, "spec.minReadySeconds", "greater than or equal to 0"),
    ("revisionHistoryLimit", -1, "spec.revisionHistoryLimit", "greater than or equal to 0"),
    ("progressDeadlineSeconds", -1, "spec.progressDeadlineSeconds", "greater than or equal to 0"),
    ("updateStrategy.type", "Sideways", "spec.updateStrategy.type", "Unsupported value"),
    ("updateStrategy.partition", "lots", "spec.updateStrategy.partition", "should match"),
    ("updateStrategy.partition", -1, "spec.updateStrategy.partition", "greater than or equal"),
    ("updateStrategy.maxSurge", "-5%", "spec.updateStrategy.maxSurge", "should match"),
    ("updateStrategy.maxUnavailable", "x%", "spec.updateStrategy.maxUnavailable", "should match"),
    ("scaleStrategy.maxUnavailable", "lots", "spec.scaleStrategy.maxUnavailable", "should match"),
    ("scaleStrategy.podsToDelete", [""], "spec.scaleStrategy.podsToDelete[0]", "at least 1 chars"),
    (
        "updateStrategy.priorityStrategy",
        {"weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"a": "b"}}}]},
        "spec.updateStrategy.priorityStrategy.weightPriority[0].weight",
        "less than or equal to 100",
    ),
    (
        "updateStrategy.priorityStrategy",
        {"orderPriority": [{"orderedKey": ""}]},
        "spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey",
        "at least 1 chars",
    ),
    (
        "lifecycle.preDelete.finalizersHandler",
        ["Not A Name!"],
        "spec.lifecycle.preDelete.finalizersHandler[0]",
        "should match",
    ),
    (
        "updateStrategy.scatterStrategy",
        [{"key": "zone", "value": ""}],
        "spec.updateStrategy.scatterStrategy[0].value",
        "at least 1 chars",
    ),
]


@pytest.mark.parametrize(("path", "value", "field", "words"), SCHEMA_CASES)
def test_the_cloneset_schema_refuses_what_kruise_refuses(
    client: Client,
    namespace: str,
    installed: None,
    kube_version: tuple[int, int],
    path: str,
    value: Any,
    field: str,
    words: str,
) -> None:
    if kube_version <= (1, 20):  # kube-apiserver 1.20 names an item's field without its index
        field = re.sub(r"\[\d+\]", "", field)
    _refused(client, _with(CLONESET, "refused", namespace, path, value), field, words)


ROLLING = "updateStrategy.rollingUpdate"
STATEFULSET_SCHEMA_CASES = [
    (
        f"{ROLLING}.minReadySeconds",
        301,
        f"spec.{ROLLING}.minReadySeconds",
        "less than or equal to 300",
    ),
    (
        f"{ROLLING}.unorderedUpdate",
        {"priorityStrategy": {"orderPriority": [{"orderedKey": ""}]}},
        f"spec.{ROLLING}.unorderedUpdate.priorityStrategy.orderPriority[0].orderedKey",
        "at least 1 chars",
    ),
    (
        f"{ROLLING}.unorderedUpdate",
        {
            "priorityStrategy": {
                "weightPriority": [{"weight": -1, "matchSelector": {"matchLabels": {"a": "b"}}}]
            }
        },
        f"spec.{ROLLING}.unorderedUpdate.priorityStrategy.weightPriority[0].weight",
        "greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(("path", "value", "field", "words"), STATEFULSET_SCHEMA_CASES)
def test_the_enhanced_statefulset_schema_refuses_what_kruise_refuses(
    client: Client,
    namespace: str,
    installed: None,
    kube_version: tuple[int, int],
    path: str,
    value: Any,
    field: str,
    words: str,
) -> None:
    if kube_version <= (1, 20):  # kube-apiserver 1.20 names an item's field without its index
        field = re.sub(r"\[\d+\]", "", field)
    obj = _with(ENHANCED_STATEFULSET, "refused", namespace, path, value)
    obj["spec"]["podManagementPolicy"] = "Parallel"
    _refused(client, obj, field, words)


def test_a_good_cloneset_with_every_checked_field_is_accepted(
    client: Client, namespace: str, installed: None
) -> None:
    """Valid values at the edges of every range the schema and the rules set."""
    obj = good(CLONESET, "edges", namespace)
    obj["spec"].update(
        replicas=0,
        minReadySeconds=0,
        revisionHistoryLimit=0,
        progressDeadlineSeconds=0,
        scaleStrategy={"maxUnavailable": "0%", "podsToDelete": ["edges-x"]},
        updateStrategy={
            "type": "InPlaceOnly",
            "partition": "100%",
            "maxUnavailable": 0,
            "maxSurge": "0%",
            "priorityStrategy": {
                "weightPriority": [{"weight": 100, "matchSelector": {"matchLabels": {"a": "b"}}}]
            },
            "scatterStrategy": [{"key": "zone", "value": "a"}],
        },
    )
    created = client.create(obj)
    assert created["spec"]["updateStrategy"]["partition"] == "100%"


# The CEL rules: (kind, path, value, field, message).
RULE_CASES = [
    (
        CLONESET,
        "updateStrategy",
        {"type": "InPlaceOnly", "maxSurge": 1},
        "spec.updateStrategy.maxSurge",
        "can not use maxSurge with strategy type InPlaceOnly",
    ),
    (
        CLONESET,
        "updateStrategy",
        {"maxUnavailable": "0%", "maxSurge": 0},
        "spec.updateStrategy.maxUnavailable",
        "maxUnavailable and maxSurge should not both be less than 1",
    ),
    (
        CLONESET,
        "updateStrategy.priorityStrategy",
        {
            "orderPriority": [{"orderedKey": "k"}],
            "weightPriority": [{"weight": 1, "matchSelector": {"matchLabels": {"a": "b"}}}],
        },
        "spec.updateStrategy.priorityStrategy",
        "only one of weightPriority and orderPriority can be used",
    ),
    (
        CLONESET,
        "updateStrategy.priorityStrategy",
        {"weightPriority": [{"weight": 1, "matchSelector": {}}]},
        "spec.updateStrategy.priorityStrategy",
        "selector can not be empty",
    ),
    (
        ENHANCED_STATEFULSET,
        "updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy",
        {
            "orderPriority": [{"orderedKey": "k"}],
            "weightPriority": [{"weight": 1, "matchSelector": {"matchLabels": {"a": "b"}}}],
        },
        "spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy",
        "only one of weightPriority and orderPriority can be used",
    ),
    (
        ENHANCED_STATEFULSET,
        "updateStrategy.rollingUpdate.maxUnavailable",
        0,
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
        "maxUnavailable must allow at least one pod",
    ),
]


@pytest.mark.embedded_only("kube-apiserver 1.20 predates CEL validation rules (1.25)")
@pytest.mark.parametrize(("kind", "path", "value", "field", "message"), RULE_CASES)
def test_each_cel_rule_refuses_its_bad_spec_with_the_field_path(
    client: Client,
    namespace: str,
    installed: None,
    kind: Kind,
    path: str,
    value: Any,
    field: str,
    message: str,
) -> None:
    _refused(client, _with(kind, "refused", namespace, path, value), field, message)


@pytest.mark.embedded_only("kube-apiserver 1.20 predates CEL validation rules (1.25)")
@pytest.mark.parametrize("kind", [CLONESET, ENHANCED_STATEFULSET])
def test_the_selector_is_immutable(
    client: Client, namespace: str, installed: None, kind: Kind
) -> None:
    """A transition rule (``self.selector == oldSelf.selector``): the update is refused at
    ``spec.selector``; other changes to the set go through."""
    created = client.create(good(kind, "fixed", namespace))
    changed = copy.deepcopy(created)
    changed["spec"]["selector"] = {"matchLabels": {"app": "fixed", "tier": "x"}}
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    with pytest.raises(ApiError) as caught:
        client.update(changed)
    assert caught.value.code == 422
    assert any(
        c.get("field") == "spec.selector" and "selector is immutable" in c.get("message", "")
        for c in caught.value.causes
    ), caught.value.causes
    created["spec"]["replicas"] = 2
    assert client.update(created)["spec"]["replicas"] == 2


def test_the_installed_crds_carry_the_rules_the_server_knows(
    client: Client, installed: None, kube_version: tuple[int, int]
) -> None:
    """kube-apiserver 1.20: the CRDs installed without their CEL rules (the installer took
    them out); the embedded server (a 1.25+ release) keeps every rule."""
    for manifest in (cloneset_controller.CRD_PATH, statefulset_controller.CRD_PATH):
        crd = client.get(CustomResourceDefinition, _crd_name(manifest))
        want = _rules(crds.for_server_version(_manifest(manifest), kube_version)[0])
        assert _rules(crd) == want
        assert bool(want) == (kube_version >= (1, 25))


def test_the_installer_says_which_rules_it_leaves_out(
    client: Client, kube_version: tuple[int, int], caplog: pytest.LogCaptureFixture
) -> None:
    """The log line of an install on a server older than the rules (the CRD exists already,
    so nothing else changes)."""
    with caplog.at_level(logging.INFO, logger="kube_runtime.crds"):
        cloneset.install_crd(client)
    said = [r.getMessage() for r in caplog.records if "CEL validation rule" in r.getMessage()]
    if kube_version < (1, 25):
        assert said and "Kubernetes 1.20" in said[0] and "left out" in said[0], said
    else:
        assert said == []


def _manifest(path: Path) -> dict[str, Any]:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d)


def _crd_name(path: Path) -> str:
    return str(_manifest(path)["metadata"]["name"])


def _rules(crd: dict[str, Any]) -> list[Any]:
    return [
        node["x-kubernetes-validations"]
        for node in crds.schema_nodes(crd)
        if "x-kubernetes-validations" in node
    ]
