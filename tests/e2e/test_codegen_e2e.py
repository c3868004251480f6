"""Generated models against the embedded cluster: the CloneSet CRD (group renamed, so tests
do not collide) is created, its module generated from the cluster (``--from-cluster``), and a
typed object goes through create / get / update_status / list / patch."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.cli import main
from kube_runtime import kinds
from kube_runtime.client import Client, NoKindMatchError, NotFound
from kube_runtime.models import ObjectMeta
from tests.support.codegen import CRD_DIR, CRD_FILES, load_module

CLONESET_CRD = CRD_DIR / CRD_FILES["cloneset"]


@pytest.fixture
def cloneset_crd(client: Client, wait_for: Any) -> Any:
    """The CloneSet CRD under a fresh group; yields (group, crd name); deleted afterwards."""
    if not CLONESET_CRD.exists():
        pytest.skip(f"no CRD fixtures at {CRD_DIR}")
    crd = copy.deepcopy(yaml.safe_load(CLONESET_CRD.read_text()))
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    crd["spec"]["group"] = group
    crd["metadata"] = {"name": f"clonesets.{group}"}
    client.create(crd)
    kind = f"{group}/v1beta1/CloneSet"

    def served() -> bool:
        try:
            client.mapper.resource_for(kind)
        except NoKindMatchError:
            return False
        return True

    wait_for(served, message="CloneSet served")
    try:
        yield group, crd["metadata"]["name"]
    finally:
        try:
            client.delete(kinds.CustomResourceDefinition, crd["metadata"]["name"])
        except NotFound:
            pass


def test_typed_cloneset_create_get_update_status(
    client: Client, kubeconfig: Path, namespace: str, cloneset_crd: Any, tmp_path: Path
) -> None:
    group, crd_name = cloneset_crd
    out = tmp_path / "models.py"
    args = ["--from-cluster", crd_name, "--kubeconfig", str(kubeconfig), "--version", "v1beta1"]
    assert main([*args, "-o", str(out)]) == 0
    assert main([*args, "-o", str(out), "--check"]) == 0
    mod = load_module(out.read_text(), tmp_path, "cloneset")
    CloneSet = mod.CloneSet
    assert CloneSet.__kube_resource__.group == group

    obj = CloneSet(
        metadata=ObjectMeta(name="web", namespace=namespace, labels={"app": "web"}),
        spec=mod.CloneSetSpec(
            replicas=2,
            selector=mod.CloneSetSpecSelector(match_labels={"app": "web"}),
            template={
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
            update_strategy=mod.CloneSetSpecUpdateStrategy(
                type="InPlaceIfPossible",
                rolling_update=mod.CloneSetSpecUpdateStrategyRollingUpdate(partition="50%"),
            ),
            scale_strategy=mod.CloneSetSpecScaleStrategy(pods_to_delete=[]),
        ),
    )
    created = client.create(obj)
    assert isinstance(created, CloneSet)
    assert created.metadata.uid and created.metadata.resource_version
    assert created.spec.update_strategy.rolling_update.partition == "50%"
    # The server applied the schema default; the model reads it as set.
    assert created.spec.scale_strategy.enable_pvc_reuse is False
    assert "enablePVCReuse" in created.to_wire()["spec"]["scaleStrategy"]

    got = client.get(CloneSet, "web", namespace)
    assert isinstance(got, CloneSet) and got.metadata.uid == created.metadata.uid
    assert got.spec.template["spec"]["containers"][0]["image"] == "nginx"
    # What the server sent comes back unchanged through the model.
    raw = client.get(f"{group}/v1beta1/CloneSet", "web", namespace)
    assert got.to_wire() == raw

    got.status = mod.CloneSetStatus(
        replicas=2,
        ready_replicas=1,
        available_replicas=1,
        updated_replicas=2,
        updated_ready_replicas=1,
        observed_generation=got.metadata.generation,
        label_selector="app=web",
        conditions=[
            mod.CloneSetStatusConditionsItem(
                type="FailedScale", status="False", last_transition_time="2024-05-01T10:00:00Z"
            )
        ],
    )
    updated = client.update_status(got)
    assert isinstance(updated, CloneSet)
    assert updated.status.ready_replicas == 1
    assert updated.status.conditions[0].last_transition_time == "2024-05-01T10:00:00Z"
    assert updated.metadata.generation == got.metadata.generation  # status writes keep generation

    listed = client.list(CloneSet, namespace)
    assert [type(i) for i in listed["items"]] == [CloneSet]
    assert listed["items"][0].status.label_selector == "app=web"

    patched = client.patch(CloneSet, "web", {"spec": {"replicas": 3}}, namespace=namespace)
    assert isinstance(patched, CloneSet) and patched.spec.replicas == 3
    assert patched.status.replicas == 2


def test_stale_check_against_a_changed_crd(
    client: Client, kubeconfig: Path, cloneset_crd: Any, tmp_path: Path, capsys: Any
) -> None:
    _, crd_name = cloneset_crd
    out = tmp_path / "models.py"
    args = ["--from-cluster", crd_name, "--kubeconfig", str(kubeconfig)]
    assert main([*args, "-o", str(out)]) == 0
    crd = client.get(kinds.CustomResourceDefinition, crd_name)
    schema = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["newField"] = {"type": "string"}
    client.update(crd)
    assert main([*args, "-o", str(out), "--check"]) == 1
    assert "is stale" in capsys.readouterr().err


def test_from_cluster_mistakes_are_one_line_errors(
    kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--from-cluster` printed a traceback for an unknown CRD or an unusable kubeconfig."""
    assert main(["--from-cluster", "nope.example.com", "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "CRD nope.example.com not found in the cluster" in err
    missing = tmp_path / "no-such-kubeconfig"
    assert main(["--from-cluster", "nope.example.com", "--kubeconfig", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot use the kubeconfig ({missing})" in err
