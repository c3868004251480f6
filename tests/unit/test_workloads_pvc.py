"""kube_runtime.workloads.pvc: what claim-per-pod controllers share (a claim from a template,
a pod's volumes from its claims), the CloneSet's instance-id claims, and the old names of the
StatefulSet's half (moved to controllers.statefulset.pvc) with their DeprecationWarning."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest

from kube_runtime.workloads import pvc
from kube_runtime.workloads.pvc import (
    INSTANCE_ID_LABEL,
    available_instance_ids,
    claim_from_template,
    claims_of_instance,
    instance_claims_for_pod,
    instance_pod_volumes_for,
    pod_volumes_with_claims,
)


def template(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    return {
        "metadata": meta,
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    }


def ref(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


# --- shared --------------------------------------------------------------------------------


def test_claim_from_template() -> None:
    workload = {
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "w", "tier": "x"}}},
    }
    source = template("data", {"tier": "db", "keep": "1"})
    claim = claim_from_template(source, "data-w-0", workload, {"extra": "e"})
    assert claim == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data-w-0",
            "namespace": "ns",
            "labels": {"tier": "x", "keep": "1", "app": "w", "extra": "e"},
        },
        "spec": source["spec"],
    }
    assert source["metadata"] == {"name": "data", "labels": {"tier": "db", "keep": "1"}}
    assert claim["spec"] is not source["spec"]


def test_pod_volumes_with_claims() -> None:
    claims = {"data": {"metadata": {"name": "data-w-0"}}}
    pod = {"spec": {"volumes": [{"name": "data", "emptyDir": {}}, {"name": "x", "emptyDir": {}}]}}
    assert pod_volumes_with_claims(claims, pod) == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-w-0"}},
        {"name": "x", "emptyDir": {}},
    ]


# --- the StatefulSet's half, moved -----------------------------------------------------------


def test_moved_names_still_import_with_a_deprecation_warning() -> None:
    from controllers.statefulset import pvc as statefulset_pvc

    for name in sorted(pvc.MOVED_TO_STATEFULSET):
        with pytest.warns(DeprecationWarning, match=f"controllers.statefulset.pvc.{name}"):
            assert getattr(pvc, name) is getattr(statefulset_pvc, name)
    with pytest.raises(AttributeError):
        pvc.no_such_name  # noqa: B018


def test_importing_the_framework_module_loads_no_controller() -> None:
    code = (
        "import sys, kube_runtime.workloads.pvc; "
        "print(any(m.startswith('controllers') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- CloneSet instance ids -----------------------------------------------------------------


def cloneset() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "ns", "uid": "cs-uid"},
        "spec": {
            "selector": {"matchLabels": {"app": "cs"}},
            "volumeClaimTemplates": [template("data", {"t": "1"})],
        },
    }


def instance_pod(instance_id: str, controlled: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": f"cs-{instance_id}",
        "namespace": "ns",
        "labels": {INSTANCE_ID_LABEL: instance_id},
    }
    if controlled:
        meta["ownerReferences"] = [
            ref("CloneSet", "cs", "cs-uid") | {"apiVersion": "apps.kruise.io/v1alpha1"}
        ]
    return {
        "metadata": meta,
        "spec": {"volumes": [{"name": "data", "emptyDir": {}}, {"name": "x", "emptyDir": {}}]},
    }


def test_instance_claims_for_pod() -> None:
    claims = instance_claims_for_pod(cloneset(), instance_pod("abcde"))
    data = claims["data"]
    assert data["metadata"]["name"] == "data-cs-abcde"
    assert data["metadata"]["labels"] == {"t": "1", "app": "cs", INSTANCE_ID_LABEL: "abcde"}
    assert data["metadata"]["ownerReferences"][0]["uid"] == "cs-uid"
    assert (
        "ownerReferences"
        not in instance_claims_for_pod(cloneset(), instance_pod("x", False))["data"]["metadata"]
    )
    assert instance_pod_volumes_for(cloneset(), instance_pod("abcde")) == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-cs-abcde"}},
        {"name": "x", "emptyDir": {}},
    ]


def labelled(instance_id: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"data-cs-{instance_id}", "labels": {INSTANCE_ID_LABEL: instance_id}}
    }


@pytest.mark.parametrize(
    ("count", "pod_ids", "claim_ids", "reused"),
    [
        (2, [], ["b", "a"], ["a", "b"]),  # free claims reused, sorted
        (1, [], ["b", "a"], ["a"]),
        (3, ["a"], ["a", "b"], ["b"]),  # a is in use: only b is free, two fresh ids
        (2, ["a", "b"], ["a", "b"], []),
        (0, [], ["a"], []),
    ],
)
def test_available_instance_ids(
    count: int, pod_ids: list[str], claim_ids: list[str], reused: list[str]
) -> None:
    ids = available_instance_ids(
        count,
        [instance_pod(i) for i in pod_ids],
        [labelled(i) for i in claim_ids],
        rng=random.Random(1),
    )
    assert len(ids) == count == len(set(ids))
    assert ids[: len(reused)] == reused
    for fresh in ids[len(reused) :]:
        assert len(fresh) == 5 and fresh not in pod_ids + claim_ids
        assert set(fresh) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_available_instance_ids_never_repeats_existing() -> None:
    class Stubborn(random.Random):
        def __init__(self) -> None:
            super().__init__(0)
            self.calls = 0

        def choice(self, seq: Any) -> Any:
            self.calls += 1
            return (
                "b" if self.calls <= 10 else "c"
            )  # first candidate "bbbbb" (taken), then "bbbbb" again, then "ccccc"

    ids = available_instance_ids(1, [instance_pod("bbbbb")], [], rng=Stubborn())
    assert ids == ["ccccc"]


def test_claims_of_instance() -> None:
    claims = [labelled("a"), labelled("b"), {"metadata": {"name": "plain"}}]
    assert [c["metadata"]["name"] for c in claims_of_instance("a", claims)] == ["data-cs-a"]
    assert claims_of_instance("", claims) == []
