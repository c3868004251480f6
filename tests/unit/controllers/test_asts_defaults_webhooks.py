"""The enhanced (Advanced) StatefulSet's webhooks as Kruise's (issue 22):

* the defaulting webhook stores Kruise's ``SetDefaultsStatefulSet`` defaults, the values the
  controller reads absent fields as (:class:`~controllers.statefulset.spec.StatefulSetView`);
* the validating webhook refuses claim-template updates as Kruise's
  ``ValidateVolumeClaimTemplateUpdate`` (templates added/removed/renamed, changed beyond their
  size, grown while their StorageClass does not allow expansion), reading StorageClasses from
  a FakeClient, with Kruise's messages and field paths.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import orjson
import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from controllers.statefulset.controller import PERMISSIONS
from controllers.statefulset.spec import StatefulSetView
from controllers.statefulset.webhooks import (
    DEFAULT_CLASS_ANNOTATION,
    STORAGE_CLASS,
    WEBHOOK_PERMISSIONS,
    StatefulSetValidator,
    default_storage_class,
    set_defaults,
    setup_webhooks,
    volume_claim_template_errors,
)
from kube_runtime import Manager, rbac, webhook
from kube_runtime.client.fake import FakeClient
from tests.e2e.bad_specs import good

# --- defaults ----------------------------------------------------------------------------------


def _bare() -> dict[str, Any]:
    sts = good(ENHANCED_STATEFULSET, "web", "ns")
    for key in ("replicas", "podManagementPolicy", "updateStrategy", "revisionHistoryLimit"):
        sts["spec"].pop(key, None)
    return sts


def test_set_defaults_as_kruise():
    obj = _bare()
    before = copy.deepcopy(obj)
    spec = set_defaults(obj)["spec"]
    assert obj == before, "the input is not changed"
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "partition": 0,
            "maxUnavailable": 1,
            "minReadySeconds": 0,
            "podUpdatePolicy": "ReCreate",
        },
    }
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    assert spec["volumeClaimUpdateStrategy"] == {"type": "OnDelete"}
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10


def test_set_defaults_keeps_what_is_set_and_skips_rolling_update_for_on_delete():
    obj = _bare()
    obj["spec"].update(
        replicas=0,
        revisionHistoryLimit=0,
        podManagementPolicy="Parallel",
        updateStrategy={"type": "OnDelete"},
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"},
        volumeClaimUpdateStrategy={"type": "OnPodRollingUpdate"},
    )
    spec = set_defaults(obj)["spec"]
    assert spec["replicas"] == 0 and spec["revisionHistoryLimit"] == 0
    assert spec["podManagementPolicy"] == "Parallel"
    assert spec["updateStrategy"] == {"type": "OnDelete"}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Delete",
        "whenScaled": "Retain",
    }
    assert spec["volumeClaimUpdateStrategy"] == {"type": "OnPodRollingUpdate"}
    rolling = {"partition": 2, "maxUnavailable": "50%", "podUpdatePolicy": "InPlaceOnly"}
    obj["spec"]["updateStrategy"] = {"rollingUpdate": dict(rolling)}
    got = set_defaults(obj)["spec"]["updateStrategy"]
    assert got == {"type": "RollingUpdate", "rollingUpdate": {**rolling, "minReadySeconds": 0}}


def test_defaults_are_what_the_controller_reads_absent_fields_as():
    bare, defaulted = StatefulSetView.of(_bare()), StatefulSetView.of(set_defaults(_bare()))
    assert bare == defaulted


def test_defaulting_is_idempotent():
    once = set_defaults(_bare())
    assert set_defaults(once) == once


def _review(operation: str, obj: Any, old: Any = None) -> bytes:
    kind = ENHANCED_STATEFULSET
    request = {
        "uid": "u1",
        "kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
        "resource": {"group": kind.group, "version": kind.version, "resource": "statefulsets"},
        "name": "web",
        "namespace": "ns",
        "operation": operation,
        "object": obj,
        "oldObject": old,
    }
    return orjson.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    )


@pytest.fixture
def server(tmp_path) -> webhook.Server:
    manager = Manager(FakeClient(), metrics_bind_address="0")  # type: ignore[arg-type]
    server = webhook.server_for(manager, port=0, cert_dir=str(tmp_path))
    setup_webhooks(manager)
    return server


def test_defaulting_webhook_endpoint(server):
    endpoint = server.endpoint("/mutate-apps-kube-runtime-io-v1beta1-statefulset")
    assert endpoint is not None, server.paths
    reply = endpoint.serve("POST", "application/json", _review("CREATE", _bare()))
    response = orjson.loads(reply.body)["response"]
    assert response["allowed"] and response["patchType"] == "JSONPatch"
    paths = {op["path"] for op in orjson.loads(base64.b64decode(response["patch"]))}
    assert {"/spec/replicas", "/spec/podManagementPolicy", "/spec/updateStrategy"} <= paths


def test_an_update_of_a_set_stored_without_defaults_is_not_refused_for_them():
    """A set created before the defaulting webhook was installed: its update arrives with
    the defaults (podManagementPolicy among them, a field Kruise keeps fixed)."""
    old = _bare()
    new = set_defaults(old)
    new["spec"]["replicas"] = 3
    StatefulSetValidator().validate_update(old, new, None)  # type: ignore[arg-type]


# --- claim-template updates ------------------------------------------------------------------

ALLOW, DISALLOW = "allow-volume-expansion", "disallow-volume-expansion"


def _classes(*extra: dict[str, Any]) -> FakeClient:
    api = FakeClient()
    for name, allow in ((ALLOW, True), (DISALLOW, False)):
        api.create(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": "example.com/simulated",
                "allowVolumeExpansion": allow,
            }
        )
    for obj in extra:
        api.create(obj)
    return api


def _set(*classes: str | None, size: str = "1Gi", strategy: str = "OnPodRollingUpdate") -> Any:
    sts = good(ENHANCED_STATEFULSET, "web", "ns")
    sts["spec"]["volumeClaimUpdateStrategy"] = {"type": strategy}
    sts["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": f"data{i}"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
                **({} if sc is None else {"storageClassName": sc}),
            },
        }
        for i, sc in enumerate(classes)
    ]
    return sts


def _resize(sts: Any, size: str, count: int) -> Any:
    new = copy.deepcopy(sts)
    for template in new["spec"]["volumeClaimTemplates"][:count]:
        template["spec"]["resources"]["requests"]["storage"] = size
    return new


def _errors(api: FakeClient | None, new: Any, old: Any) -> list[str]:
    return [str(e) for e in volume_claim_template_errors(api, new, old)]


@pytest.mark.parametrize(
    ("classes", "resized", "refused_class"),
    [
        # Kruise's e2e "Resize PVC" scenarios: the ones expected to fail, and their pairs
        ((DISALLOW,), 2, DISALLOW),  # *_with_sc_cannot_expand
        ((DISALLOW, DISALLOW), 2, DISALLOW),  # *_with_2sc_cannot_expand
        ((DISALLOW, ALLOW), 1, DISALLOW),  # *_expand_only_cannot_*_with_mixed_sc
        ((DISALLOW, ALLOW), 2, DISALLOW),  # *_expand_both_cannot_*_with_mixed_sc
        ((ALLOW,), 2, None),  # *_with_sc_can_expand
        ((ALLOW, ALLOW), 2, None),
        ((ALLOW, DISALLOW), 1, None),  # *_expand_only_can_*_with_mixed_sc
    ],
)
def test_growing_a_template_whose_class_cannot_expand_is_refused(classes, resized, refused_class):
    old = _set(*classes)
    errors = _errors(_classes(), _resize(old, "2Gi", resized), old)
    if refused_class is None:
        assert errors == []
    else:
        assert errors == [
            "spec.volumeClaimTemplates[data0].spec.resources.requests.storage: Forbidden: "
            f"storage class {refused_class} does not support volume expansion"
        ]


def test_the_check_needs_on_pod_rolling_update():
    for strategy in ("OnDelete", ""):
        old = _set(DISALLOW, strategy=strategy)
        assert _errors(_classes(), _resize(old, "2Gi", 1), old) == []
    old = _set(DISALLOW)
    old["spec"].pop("volumeClaimUpdateStrategy")
    assert _errors(_classes(), _resize(old, "2Gi", 1), old) == []


def test_equal_sizes_in_other_units_are_no_resize():
    old = _set(DISALLOW)
    assert _errors(_classes(), _resize(old, "1024Mi", 1), old) == []


def test_templates_added_removed_renamed_or_changed_are_refused():
    old = _set(ALLOW, ALLOW)
    api = _classes()
    added = copy.deepcopy(old)
    added["spec"]["volumeClaimTemplates"].append(
        copy.deepcopy(added["spec"]["volumeClaimTemplates"][0])
    )
    (error,) = _errors(api, added, old)
    assert error.startswith("spec.volumeClaimTemplates: Invalid value: ")
    assert error.endswith(": volumeClaimTemplate can not be added or deleted when OnRollingUpdate")
    removed = copy.deepcopy(old)
    removed["spec"]["volumeClaimTemplates"].pop()
    assert _errors(api, removed, old)[0].endswith(
        "can not be added or deleted when OnRollingUpdate"
    )
    renamed = copy.deepcopy(old)
    renamed["spec"]["volumeClaimTemplates"][1]["metadata"]["name"] = "other"
    assert _errors(api, renamed, old) == [
        "spec.volumeClaimTemplates[other].name: Forbidden: volumeClaimTemplate name can not be "
        "modified"
    ]
    modes = copy.deepcopy(old)
    modes["spec"]["volumeClaimTemplates"][0]["spec"]["accessModes"] = ["ReadWriteMany"]
    (error,) = _errors(api, modes, old)
    assert error.startswith("spec.volumeClaimTemplates[data0]: Invalid value: ")
    assert error.endswith("volumeClaimTemplate can not be modified when OnRollingUpdate")
    moved = copy.deepcopy(old)
    moved["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] = DISALLOW
    assert _errors(api, moved, old)[0].endswith("can not be modified when OnRollingUpdate")
    # other changes of a compatible template pass (Kruise compares class, modes and size only)
    labelled = copy.deepcopy(old)
    labelled["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"] = {"a": "b"}
    assert _errors(api, labelled, old) == []


def _default_class(name: str, allow: bool, created: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": name,
            "annotations": {DEFAULT_CLASS_ANNOTATION: "true"},
            "creationTimestamp": created,
        },
        "provisioner": "example.com/simulated",
        "allowVolumeExpansion": allow,
    }


def test_a_template_without_a_class_is_checked_against_the_newest_default():
    old = _set(None)
    new = _resize(old, "2Gi", 1)
    assert _errors(_classes(), new, old) == []  # no default class: no check
    api = _classes(
        _default_class("older", True, "2020-01-01T00:00:00Z"),
        _default_class("newer", False, "2021-01-01T00:00:00Z"),
    )
    assert default_storage_class(api)["metadata"]["name"] == "newer"  # type: ignore[index]
    assert _errors(api, new, old) == [
        "spec.volumeClaimTemplates[data0].spec.resources.requests.storage: Forbidden: "
        "storage class newer does not support volume expansion"
    ]


def test_a_class_that_cannot_be_read_is_refused():
    old = _set("missing")
    assert _errors(_classes(), _resize(old, "2Gi", 1), old) == [
        'spec.volumeClaimTemplates[data0].spec.storageClassName: Invalid value: "missing": '
        "can not get sc"
    ]


def test_without_a_reader_only_the_shape_is_checked():
    old = _set(DISALLOW)
    assert _errors(None, _resize(old, "2Gi", 1), old) == []


def test_the_validator_refuses_with_422_and_the_cause():
    api = _classes()
    old = _set(DISALLOW)
    with pytest.raises(webhook.Invalid) as refused:
        StatefulSetValidator(api).validate_update(old, _resize(old, "2Gi", 1), None)  # type: ignore[arg-type]
    (cause,) = refused.value.errors
    assert cause.field == "spec.volumeClaimTemplates[data0].spec.resources.requests.storage"


def test_the_webhook_reads_storage_classes_and_the_controller_grants_it():
    assert rbac.allows(WEBHOOK_PERMISSIONS, "storage.k8s.io", "storageclasses", "get")
    assert rbac.allows(WEBHOOK_PERMISSIONS, "storage.k8s.io", "storageclasses", "list")
    for verb in ("get", "list"):
        assert rbac.allows(PERMISSIONS, STORAGE_CLASS.group, "storageclasses", verb)
