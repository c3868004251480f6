"""Workload utilities against the embedded API server: revisions created, collided, rolled
back and truncated on the server; claims created before a pod and released to the garbage
collector as the retention policy says."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controllers.statefulset.pvc import (
    VolumeClaimError,
    claims_for_pod,
    create_missing_claims,
    update_claims_for_retention_policy,
)
from kube_runtime.client.errors import NotFound
from kube_runtime.kinds import ControllerRevision, PersistentVolumeClaim, StatefulSet
from kube_runtime.workloads.revision import (
    HASH_LABEL,
    POD_REVISION_LABEL,
    apply_revision,
    create_revision,
    hash_revision,
    list_revisions,
    resolve_revisions,
    revision_from_object,
    truncate_history,
    update_revision_number,
)


def _statefulset(
    client: Any, namespace: str, *, image: str = "nginx:1", **spec: Any
) -> dict[str, Any]:
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            **spec,
        },
    }
    created: dict[str, Any] = client.create(body)
    return created


def _with_image(sts: dict[str, Any], image: str, **status: Any) -> dict[str, Any]:
    changed = copy.deepcopy(sts)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = image
    changed["status"] = dict(status)
    return changed


def _without_nulls(value: Any) -> Any:
    """``value`` without ``null`` members: to Kubernetes a null and a missing field are the
    same, and kube-apiserver writes unset Go structs such as a template's
    ``metadata.creationTimestamp`` as null where the embedded server leaves them out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _names(revisions: list[dict[str, Any]]) -> list[str]:
    return [r["metadata"]["name"] for r in revisions]


def test_revision_create_is_idempotent_and_round_trips(client: Any, namespace: str) -> None:
    sts = _statefulset(client, namespace)
    revision = revision_from_object(sts, 1, 0)
    created, count = create_revision(client, sts, revision, 0)
    assert count == 0
    stored = client.get(ControllerRevision, created["metadata"]["name"], namespace)
    assert stored["metadata"]["labels"][HASH_LABEL] == hash_revision(stored, 0)
    assert stored["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"]
    # the server's copy hashes and applies like the local one
    assert stored["data"] == revision["data"]
    later = _with_image(sts, "nginx:9")
    restored = apply_revision(later, stored)["spec"]["template"]
    assert _without_nulls(restored) == _without_nulls(sts["spec"]["template"])
    # creating the same data again returns the existing revision, no collision
    again, count = create_revision(client, sts, revision, 0)
    assert count == 0 and again["metadata"]["uid"] == stored["metadata"]["uid"]
    assert _names(list_revisions(client, sts)) == [stored["metadata"]["name"]]


def test_revision_name_collision_bumps_the_collision_count(client: Any, namespace: str) -> None:
    sts = _statefulset(client, namespace)
    revision = revision_from_object(sts, 1, 0)
    squatter = copy.deepcopy(revision)
    squatter["data"] = {
        "spec": {"template": {"$patch": "replace", "metadata": {"labels": {"x": "y"}}}}
    }
    squatter["metadata"]["namespace"] = namespace
    client.create(squatter)

    created, count = create_revision(client, sts, revision, 0)
    assert count == 1
    assert created["metadata"]["name"] == f"web-{hash_revision(revision, 1)}"
    assert created["metadata"]["name"] != squatter["metadata"]["name"]
    assert created["data"] == revision["data"]
    assert len(list_revisions(client, sts)) == 2


def test_revision_rollback_and_truncation_on_the_server(client: Any, namespace: str) -> None:
    sts = _statefulset(client, namespace, revisionHistoryLimit=1)
    # v1, v2, v3 rolled out one after the other
    _, v1, _ = resolve_revisions(client, sts, list_revisions(client, sts))
    _, v2, _ = resolve_revisions(
        client,
        _with_image(sts, "nginx:2", currentRevision=v1["metadata"]["name"]),
        list_revisions(client, sts),
    )
    _, v3, _ = resolve_revisions(
        client,
        _with_image(sts, "nginx:3", currentRevision=v2["metadata"]["name"]),
        list_revisions(client, sts),
    )
    assert [r["revision"] for r in list_revisions(client, sts)] == [1, 2, 3]

    # rollback to nginx:1: the old revision object gets number 4, nothing new is created
    rolled_set = _with_image(sts, "nginx:1", currentRevision=v3["metadata"]["name"])
    current, update, _ = resolve_revisions(client, rolled_set, list_revisions(client, sts))
    assert update["metadata"]["name"] == v1["metadata"]["name"] and update["revision"] == 4
    assert current["metadata"]["name"] == v3["metadata"]["name"]
    on_server = list_revisions(client, sts)
    assert [(r["metadata"]["name"], r["revision"]) for r in on_server] == [
        (v2["metadata"]["name"], 2),
        (v3["metadata"]["name"], 3),
        (v1["metadata"]["name"], 4),
    ]

    # a direct rollback through update_revision_number, from a stale copy (409, re-read)
    stale = copy.deepcopy(v2)
    renumbered = update_revision_number(client, stale, 5)
    assert client.get(ControllerRevision, v2["metadata"]["name"], namespace)["revision"] == 5
    assert renumbered["revision"] == 5
    update_revision_number(client, renumbered, 2)  # put it back

    # truncation: current (v3) and update (v1) are live, a pod still runs v2 -> nothing to
    # delete under limit 1; once no pod uses v2 it goes
    pod_on_v2 = {"metadata": {"labels": {POD_REVISION_LABEL: v2["metadata"]["name"]}}}
    revisions = list_revisions(client, sts)
    assert truncate_history(client, revisions, [pod_on_v2], current, update, 0) == []
    deleted = truncate_history(client, revisions, [], current, update, 0)
    assert _names(deleted) == [v2["metadata"]["name"]]
    assert _names(list_revisions(client, sts)) == [v3["metadata"]["name"], v1["metadata"]["name"]]
    with pytest.raises(NotFound):
        client.get(ControllerRevision, v2["metadata"]["name"], namespace)


def test_claims_are_created_once_and_follow_the_retention_policy(
    client: Any, namespace: str, wait_for: Any
) -> None:
    template = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    sts = _statefulset(
        client,
        namespace,
        volumeClaimTemplates=[template],
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Retain"},
    )
    pod = {"metadata": {"name": "web-0", "namespace": namespace, "uid": "not-created"}}
    created = create_missing_claims(client, sts, pod)
    assert [c["metadata"]["name"] for c in created] == ["data-web-0"]
    stored = client.get(PersistentVolumeClaim, "data-web-0", namespace)
    assert stored["metadata"]["labels"] == {"app": "web"}
    assert create_missing_claims(client, sts, pod) == []  # exists: nothing to do

    # whenDeleted=Delete: the set becomes the claim's controller...
    updated = update_claims_for_retention_policy(client, sts, pod)
    assert [c["metadata"]["name"] for c in updated] == ["data-web-0"]
    refs = client.get(PersistentVolumeClaim, "data-web-0", namespace)["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"], r["controller"]) for r in refs] == [
        ("StatefulSet", sts["metadata"]["uid"], True)
    ]
    assert update_claims_for_retention_policy(client, sts, pod) == []  # up to date: no write

    # ... so deleting the set lets the garbage collector delete the claim
    client.delete(StatefulSet, "web", namespace)

    def claim_gone() -> bool:
        try:
            client.get(PersistentVolumeClaim, "data-web-0", namespace)
        except NotFound:
            return True
        return False

    wait_for(claim_gone, timeout=10, message="claim data-web-0 garbage-collected")


def test_terminating_claim_blocks_the_pod(client: Any, namespace: str) -> None:
    template = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    sts = _statefulset(client, namespace, volumeClaimTemplates=[template])
    pod = {"metadata": {"name": "web-1", "namespace": namespace}}
    claim = dict(claims_for_pod(sts, pod)["data"])
    claim["metadata"] = {**claim["metadata"], "finalizers": ["example.com/hold"]}
    client.create(claim)
    client.delete(PersistentVolumeClaim, "data-web-1", namespace)
    try:
        with pytest.raises(VolumeClaimError, match="is being deleted"):
            create_missing_claims(client, sts, pod)
    finally:
        client.patch(
            PersistentVolumeClaim,
            "data-web-1",
            {"metadata": {"finalizers": None}},
            namespace=namespace,
        )
