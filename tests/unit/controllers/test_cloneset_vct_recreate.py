"""CloneSet: a changed ``volumeClaimTemplates`` recreates pods and claims behind Kruise's
``RecreatePodWhenChangeVCTInCloneSetGate`` (issue 22), on the FakeClient harness of
:mod:`tests.support.cloneset_harness`.

Covered: the claim-template hash every revision records (``kruise.io/cloneset-volumeclaimtemplate-hash``,
rewritten when a rollback brings an older revision back), the in-place decision with the gate on
and off (Kruise's ``CanVCTemplateInplaceUpdate``, ``InPlaceOnly`` ignoring the hash), Kruise's
e2e scenario ``testUpdateVolumeClaimTemplates`` step by step, and how the gate is given
(``KUBE_RUNTIME_FEATURE_GATES`` in Kruise's ``--feature-gates`` syntax).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
from pytest_mock import MockerFixture

from controllers.cloneset.controller import CloneSetReconciler
from controllers.cloneset.pvc import INSTANCE_ID_LABEL
from controllers.cloneset.revision import (
    FEATURE_GATES_ENV,
    RECREATE_POD_WHEN_CHANGE_VCT_GATE,
    VCT_HASH_ANNOTATION,
    can_vct_update_in_place,
    feature_gate_enabled,
    parse_feature_gates,
    vct_hash,
)
from kube_runtime import meta
from kube_runtime.kinds import ControllerRevision
from tests.support.cloneset_harness import NS, Harness, image, make_cs

GATE_ON = {FEATURE_GATES_ENV: f"{RECREATE_POD_WHEN_CHANGE_VCT_GATE}=true"}


def _vct(vol1: str = "1Gi", vol2: str = "1Gi") -> list[dict[str, Any]]:
    """Kruise's two templates, ``data-vol1`` and ``data-vol2``."""
    return [
        {
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
            },
        }
        for name, size in (("data-vol1", vol1), ("data-vol2", vol2))
    ]


class GateHarness(Harness):
    """The harness with the gate set as given."""

    def __init__(self, cs: dict[str, Any], *, gate: bool) -> None:
        super().__init__(cs)
        self.reconciler = CloneSetReconciler(
            self.api, self.reader, self.recorder, recreate_pod_when_change_vct=gate
        )

    def revisions(self) -> dict[str, dict[str, Any]]:
        return {meta.name(r): r for r in self.api.objects(ControllerRevision, NS)}

    def update_revision(self) -> dict[str, Any]:
        return self.revisions()[self.status()["updateRevision"]]

    def ids(self) -> set[str]:
        return {meta.labels(p)[INSTANCE_ID_LABEL] for p in self.pods().values()}

    def sizes(self) -> dict[str, str]:
        """Claim name -> requested storage."""
        return {
            name: c["spec"]["resources"]["requests"]["storage"] for name, c in self.claims().items()
        }

    def change(self, *, image: str | None = None, strategy: str, vct: Any = None) -> None:
        spec: dict[str, Any] = {"updateStrategy": {"type": strategy}}
        if image is not None:
            spec["template"] = {"spec": {"containers": [{"name": "c", "image": image}]}}
        if vct is not None:
            spec["volumeClaimTemplates"] = vct
        self.patch_spec(spec)
        self.settle(rounds=40)


def _created(replicas: int = 4, *, gate: bool = True) -> GateHarness:
    h = GateHarness(
        make_cs(
            replicas,
            image="nginx:alpine",
            updateStrategy={"type": "ReCreate"},
            volumeClaimTemplates=_vct(),
        ),
        gate=gate,
    )
    h.settle()
    assert len(h.pods()) == replicas and len(h.claims()) == 2 * replicas
    return h


# --- the hash --------------------------------------------------------------------------------


def test_hash_is_empty_without_templates_and_ignores_order_and_other_metadata():
    assert vct_hash(None) == "" and vct_hash([]) == ""
    one = _vct()
    reordered = list(reversed(copy.deepcopy(one)))
    reordered[0]["metadata"]["labels"] = {"x": "y"}
    assert vct_hash(one) == vct_hash(reordered) != ""
    assert vct_hash(_vct("2Gi")) != vct_hash(one)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        ("1", "1", True),
        ("1", "2", False),
        ("", "", True),
        ("", "1", False),
        (None, "1", True),  # recorded before the hash: no recreate for it
        ("1", None, True),
        (None, None, True),
    ],
)
def test_can_vct_update_in_place_as_kruise(old, new, want):
    def rev(value: str | None) -> dict[str, Any]:
        annotations = {} if value is None else {VCT_HASH_ANNOTATION: value}
        return {"metadata": {"name": "r", "annotations": annotations}}

    assert can_vct_update_in_place(rev(old), rev(new)) is want


def test_every_revision_records_the_claim_template_hash():
    h = _created(2, gate=False)
    (only,) = h.revisions().values()
    assert meta.annotations(only)[VCT_HASH_ANNOTATION] == vct_hash(_vct())
    h.change(image="nginx:new", strategy="ReCreate", vct=_vct("2Gi"))
    assert meta.annotations(h.update_revision())[VCT_HASH_ANNOTATION] == vct_hash(_vct("2Gi"))


def test_a_set_without_templates_records_an_empty_hash():
    h = GateHarness(make_cs(1), gate=True)
    h.settle()
    (only,) = h.revisions().values()
    assert meta.annotations(only)[VCT_HASH_ANNOTATION] == ""


def test_a_change_of_the_templates_alone_makes_no_revision():
    h = _created(2)
    before = h.revisions()
    h.change(strategy="ReCreate", vct=_vct("1Gi", "2Gi"))
    assert h.revisions().keys() == before.keys()
    (only,) = h.revisions().values()
    assert meta.annotations(only)[VCT_HASH_ANNOTATION] == vct_hash(_vct())


def test_a_rollback_rewrites_the_hash_of_the_revision_it_brings_back():
    h = _created(2)
    first = h.status()["updateRevision"]
    h.change(image="nginx:new", strategy="ReCreate")
    h.change(image="nginx:alpine", strategy="ReCreate", vct=_vct("3Gi", "3Gi"))
    back = h.update_revision()
    assert meta.name(back) == first and back["revision"] == 3
    assert meta.annotations(back)[VCT_HASH_ANNOTATION] == vct_hash(_vct("3Gi", "3Gi"))


# --- the in-place decision ---------------------------------------------------------------------


def test_gate_off_updates_in_place_and_keeps_the_claims():
    h = _created(gate=False)
    ids, claims = h.ids(), set(h.claims())
    h.change(image="nginx:new", strategy="InPlaceIfPossible", vct=_vct("2Gi"))
    assert h.ids() == ids and set(h.claims()) == claims
    assert {image(p) for p in h.pods().values()} == {"nginx:new"}
    assert set(h.sizes().values()) == {"1Gi"}


def test_kruise_update_volume_claim_templates_scenario():
    """Kruise's ``testUpdateVolumeClaimTemplates`` with the gate on: 4 replicas, two
    templates of 1Gi, ReCreate at first."""
    h = _created()
    ids, claims = h.ids(), set(h.claims())

    # image + data-vol1 2Gi, InPlaceIfPossible: pods and claims recreated
    h.change(image="nginx:new", strategy="InPlaceIfPossible", vct=_vct("2Gi"))
    assert len(h.pods()) == 4 and not h.ids() & ids
    assert len(h.claims()) == 8 and not set(h.claims()) & claims
    for name, size in h.sizes().items():
        assert size == ("2Gi" if name.startswith("data-vol1") else "1Gi")
        assert meta.labels(h.claims()[name])[INSTANCE_ID_LABEL] in h.ids()
    assert {image(p) for p in h.pods().values()} == {"nginx:new"}
    ids, claims = h.ids(), set(h.claims())

    # data-vol2 2Gi alone: nothing recreated, the claims keep their sizes
    h.change(strategy="InPlaceIfPossible", vct=_vct("2Gi", "2Gi"))
    assert h.ids() == ids and set(h.claims()) == claims
    assert sorted(h.sizes().values()) == ["1Gi"] * 4 + ["2Gi"] * 4

    # image only: the hash recorded with the new revision differs from the pods' revision
    # (changed in the step before): recreated, every claim 2Gi
    h.change(image="redis:new", strategy="InPlaceIfPossible")
    assert len(h.pods()) == 4 and not h.ids() & ids
    assert not set(h.claims()) & claims and set(h.sizes().values()) == {"2Gi"}
    ids, claims = h.ids(), set(h.claims())

    # InPlaceOnly with an image: in place
    h.change(image="httpd:new", strategy="InPlaceOnly")
    assert h.ids() == ids and set(h.claims()) == claims
    assert {image(p) for p in h.pods().values()} == {"httpd:new"}

    # InPlaceOnly with an image and templates 3Gi: in place (the hash is ignored), claims kept
    h.change(image="redis:new", strategy="InPlaceOnly", vct=_vct("3Gi", "3Gi"))
    assert h.ids() == ids and set(h.claims()) == claims
    assert {image(p) for p in h.pods().values()} == {"redis:new"}
    assert set(h.sizes().values()) == {"2Gi"}
    assert not any(c.get("type") == "FailedUpdate" for c in h.status().get("conditions") or ())


def test_pods_of_a_revision_without_a_hash_are_updated_in_place():
    """A revision recorded before the hash was (Kruise's upgrade case): no recreate for it."""
    h = _created(2)
    for rev in h.revisions().values():
        annotations = dict(meta.annotations(rev))
        annotations.pop(VCT_HASH_ANNOTATION)
        rev["metadata"]["annotations"] = annotations
        h.api.direct.update(rev)
    ids = h.ids()
    h.change(image="nginx:new", strategy="InPlaceIfPossible", vct=_vct("2Gi"))
    assert h.ids() == ids
    assert {image(p) for p in h.pods().values()} == {"nginx:new"}


# --- how the gate is given ---------------------------------------------------------------------


def test_feature_gates_in_kruise_syntax():
    assert parse_feature_gates(" A=true, B=False ,") == {"A": True, "B": False}
    with pytest.raises(ValueError, match="missing bool value for A"):
        parse_feature_gates("A")
    # Go bools, as the --feature-gates flag reads them (one parser for both)
    assert parse_feature_gates("A=1,B=F,C=TRUE") == {"A": True, "B": False, "C": True}
    with pytest.raises(ValueError):
        parse_feature_gates("A=yes")
    assert feature_gate_enabled(RECREATE_POD_WHEN_CHANGE_VCT_GATE, GATE_ON)
    assert not feature_gate_enabled(RECREATE_POD_WHEN_CHANGE_VCT_GATE, {})
    off = {FEATURE_GATES_ENV: f"{RECREATE_POD_WHEN_CHANGE_VCT_GATE}=false"}
    assert not feature_gate_enabled(RECREATE_POD_WHEN_CHANGE_VCT_GATE, off)


@pytest.mark.parametrize(("env", "argument", "want"), [
    ({}, None, False),
    (GATE_ON, None, True),
    (GATE_ON, False, False),
    ({}, True, True),
])  # fmt: skip
def test_setup_reads_the_gate_from_the_environment_unless_given(
    monkeypatch: pytest.MonkeyPatch,
    mocker: MockerFixture,
    env: Mapping[str, str],
    argument: bool | None,
    want: bool,
) -> None:
    from controllers.cloneset import controller

    monkeypatch.delenv(FEATURE_GATES_ENV, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)

    class _Stop(Exception):
        pass

    # setup stops where it builds the reconciler: what it was built with is the answer
    reconciler = mocker.patch.object(controller, "CloneSetReconciler", side_effect=_Stop)
    manager = mocker.NonCallableMock(api_reader=None, client=None)
    with pytest.raises(_Stop):
        controller.setup(manager, recreate_pod_when_change_vct=argument)
    reconciler.assert_called_once()
    assert reconciler.call_args.kwargs["recreate_pod_when_change_vct"] is want
