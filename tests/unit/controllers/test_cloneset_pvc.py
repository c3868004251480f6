"""A CloneSet's claims per instance id (controllers/cloneset/pvc.py): names, labels, owners,
pod volumes, which claims go with a pod, and which ids new pods get."""

from __future__ import annotations

import random
from typing import Any

import pytest

from controllers.cloneset.pvc import (
    INSTANCE_ID_LABEL,
    available_instance_ids,
    claims_of_instance,
    instance_claims_for_pod,
    instance_id,
    instance_pod_volumes_for,
)

OWNER = {"apiVersion": "apps.kube-runtime.io/v1alpha1", "kind": "CloneSet", "name": "web"}


def cloneset() -> dict[str, Any]:
    templates = [
        {"metadata": {"name": "data", "labels": {"tier": "db"}}, "spec": {}, "status": {"x": 1}},
        {"metadata": {"name": "logs"}, "spec": {}},
    ]
    return {
        "metadata": {"name": "web", "namespace": "ns", "uid": "u"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "volumeClaimTemplates": templates},
    }


def pod(instance: str, owned: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"web-{instance}", "labels": {INSTANCE_ID_LABEL: instance}}
    if owned:
        meta["ownerReferences"] = [{**OWNER, "uid": "u", "controller": True}]
    return {"metadata": meta, "spec": {"volumes": [{"name": "logs"}, {"name": "tmp"}]}}


def claim(instance: str) -> dict[str, Any]:
    return {"metadata": {"name": f"data-web-{instance}", "labels": {INSTANCE_ID_LABEL: instance}}}


def test_claims_of_a_pod_are_named_labelled_and_owned_by_its_set():
    claims = instance_claims_for_pod(cloneset(), pod("k2x9q"))
    assert list(claims) == ["data", "logs"]
    data = claims["data"]
    assert data["metadata"]["name"] == "data-web-k2x9q" and data["metadata"]["namespace"] == "ns"
    assert data["metadata"]["labels"] == {"tier": "db", "app": "web", INSTANCE_ID_LABEL: "k2x9q"}
    assert data["metadata"]["ownerReferences"] == [{**OWNER, "uid": "u", "controller": True}]
    assert "status" not in data and data["kind"] == "PersistentVolumeClaim"
    assert (
        "ownerReferences"
        not in instance_claims_for_pod(cloneset(), pod("a", False))["logs"]["metadata"]
    )


def test_pod_volumes_use_the_claims_then_keep_the_pods_other_volumes():
    assert instance_pod_volumes_for(cloneset(), pod("k2x9q")) == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-k2x9q"}},
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-k2x9q"}},
        {"name": "tmp"},
    ]


def test_claims_of_an_instance():
    claims = [claim("a"), claim("b"), {"metadata": {"name": "unlabelled"}}]
    assert claims_of_instance("b", claims) == [claims[1]]
    assert claims_of_instance("", claims) == []
    assert instance_id(claims[2]) == ""


@pytest.mark.parametrize(
    ("count", "pods", "claims", "reused"),
    [
        (3, [], ["q", "c"], ["c", "q"]),  # claims without a pod first, in order
        (1, [], ["q", "c"], ["c"]),
        (2, ["c"], ["c", "q"], ["q"]),  # c's pod lives: only q is free
        (1, ["c"], ["c"], []),
        (0, [], ["c"], []),
    ],
)
def test_new_pods_take_over_free_claims_then_get_fresh_ids(count, pods, claims, reused):
    ids = available_instance_ids(
        count, [pod(i) for i in pods], [claim(i) for i in claims], rng=random.Random(7)
    )
    assert len(ids) == len(set(ids)) == count
    assert ids[: len(reused)] == reused
    for fresh in ids[len(reused) :]:
        assert len(fresh) == 5 and fresh not in pods + claims
        assert set(fresh) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_fresh_ids_never_collide_with_existing_ones():
    class Repeats(random.Random):
        """Draws "bbbbb" (taken) twice, then "ccccc"."""

        draws = 0

        def choice(self, seq: Any) -> Any:
            self.draws += 1
            return "b" if self.draws <= 10 else "c"

    assert available_instance_ids(1, [pod("bbbbb")], [], rng=Repeats()) == ["ccccc"]
