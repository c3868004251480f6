"""The StatefulSet's claims: naming, the claims and volumes a pod implies, creating missing
claims, the retention policy as owner references (upstream's decision table)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controllers.statefulset.pvc import (
    VolumeClaimError,
    claim_name,
    claim_names_for_pod,
    claim_owner_up_to_date,
    claims_for_pod,
    create_missing_claims,
    has_stale_owner_ref,
    has_unexpected_controller,
    pod_volumes_for,
    retention_policy,
    storage_matches,
    update_claim_owner_refs,
    update_claims_for_retention_policy,
)
from kube_runtime.client.errors import error_from_status
from kube_runtime.kinds import Kind

STS = Kind("apps/v1", "StatefulSet")


def error(code: int, reason: str) -> Exception:
    return error_from_status({"kind": "Status", "code": code, "reason": reason, "message": reason})


def template(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    return {
        "metadata": meta,
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    }


def statefulset(
    replicas: int = 3,
    when_deleted: str | None = None,
    when_scaled: str | None = None,
    uid: str = "set-uid",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "volumeClaimTemplates": [
            template("data", {"tier": "db", "app": "overridden"}),
            template("logs"),
        ],
    }
    policy = {k: v for k, v in (("whenDeleted", when_deleted), ("whenScaled", when_scaled)) if v}
    if policy:
        spec["persistentVolumeClaimRetentionPolicy"] = policy
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": uid},
        "spec": spec,
    }


def pod(
    ordinal: int, uid: str | None = None, volumes: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{ordinal}",
            "namespace": "ns",
            "uid": uid or f"pod-uid-{ordinal}",
        },
        "spec": {"volumes": volumes or []},
    }


# --- naming, claims, volumes ---------------------------------------------------------------


def test_claim_name() -> None:
    assert claim_name(template("data"), "web", 3) == "data-web-3"


def test_claims_for_pod() -> None:
    sts = statefulset()
    frozen = copy.deepcopy(sts)
    claims = claims_for_pod(sts, pod(2))
    assert list(claims) == ["data", "logs"]
    data = claims["data"]
    assert data["apiVersion"] == "v1" and data["kind"] == "PersistentVolumeClaim"
    assert data["metadata"] == {
        "name": "data-web-2",
        "namespace": "ns",
        "labels": {"tier": "db", "app": "web"},
    }
    assert data["spec"] == sts["spec"]["volumeClaimTemplates"][0]["spec"]
    assert "status" not in data
    assert claims["logs"]["metadata"]["labels"] == {"app": "web"}
    data["spec"]["accessModes"].append("X")
    assert sts == frozen


def test_claim_names_for_pod_are_the_built_claims_names() -> None:
    sts = statefulset()
    built = [c["metadata"]["name"] for c in claims_for_pod(sts, pod(2)).values()]
    assert claim_names_for_pod(sts, pod(2)) == built == ["data-web-2", "logs-web-2"]
    # a template name given twice names one claim, as the dict of built claims has one
    twice = copy.deepcopy(sts)
    twice["spec"]["volumeClaimTemplates"].append(twice["spec"]["volumeClaimTemplates"][0])
    assert claim_names_for_pod(twice, pod(2)) == ["data-web-2", "logs-web-2"]
    assert claim_names_for_pod({"metadata": {"name": "web"}, "spec": {}}, pod(2)) == []


def test_pod_volumes_for_are_those_of_the_built_claims() -> None:
    """The volumes name the claims claims_for_pod builds (without building them), with a
    template name given twice, without templates, and for a pod without an ordinal."""
    from kube_runtime.workloads.pvc import pod_volumes_with_claims

    twice = copy.deepcopy(statefulset())
    twice["spec"]["volumeClaimTemplates"].append(twice["spec"]["volumeClaimTemplates"][0])
    none: dict[str, Any] = {"metadata": {"name": "web"}, "spec": {}}
    other = {"metadata": {"name": "web"}, "spec": {"volumes": [{"name": "x", "emptyDir": {}}]}}
    for sts in (statefulset(), twice, none):
        for p in (pod(2), pod(0, volumes=[{"name": "logs", "emptyDir": {}}]), other):
            assert pod_volumes_for(sts, p) == pod_volumes_with_claims(claims_for_pod(sts, p), p)


def test_pod_volumes_for_replaces_conflicting_and_keeps_others() -> None:
    p = pod(
        1,
        volumes=[{"name": "data", "emptyDir": {}}, {"name": "config", "configMap": {"name": "c"}}],
    )
    frozen = copy.deepcopy(p)
    assert pod_volumes_for(statefulset(), p) == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-1"}},
        {"name": "config", "configMap": {"name": "c"}},
    ]
    assert p == frozen


@pytest.mark.parametrize(
    ("name", "volumes", "expected"),
    [
        ("web-1", None, True),  # the volumes pod_volumes_for gives
        ("web-1", [], False),
        (
            "web-1",
            [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}],
            False,
        ),  # logs missing
        (
            "web-1",
            [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-2"}},
                {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-1"}},
            ],
            False,
        ),
        ("web-1", [{"name": "data", "emptyDir": {}}, {"name": "logs", "emptyDir": {}}], False),
        ("web", None, False),  # no ordinal
    ],
)
def test_storage_matches(name: str, volumes: list[dict[str, Any]] | None, expected: bool) -> None:
    sts = statefulset()
    p = pod(1)
    p["metadata"]["name"] = name
    p["spec"]["volumes"] = pod_volumes_for(sts, pod(1)) if volumes is None else volumes
    assert storage_matches(sts, p) is expected


def test_storage_matches_without_templates() -> None:
    sts = statefulset()
    sts["spec"]["volumeClaimTemplates"] = []
    assert storage_matches(sts, pod(0))


# --- create missing claims -----------------------------------------------------------------


class Claims:
    """A fake client for PVCs: get/create/update with scripted failures."""

    def __init__(self, existing: dict[str, dict[str, Any]] | None = None) -> None:
        self.objects = dict(existing or {})
        self.created: list[str] = []
        self.updated: list[str] = []
        self.get_errors: dict[str, Exception] = {}
        self.create_errors: dict[str, Exception] = {}
        self.conflicts = 0

    def get(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        if name in self.get_errors:
            raise self.get_errors[name]
        if name not in self.objects:
            raise error(404, "NotFound")
        return copy.deepcopy(self.objects[name])

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        if name in self.create_errors:
            raise self.create_errors[name]
        self.created.append(name)
        self.objects[name] = copy.deepcopy(obj)
        return copy.deepcopy(obj)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.conflicts:
            self.conflicts -= 1
            raise error(409, "Conflict")
        self.updated.append(obj["metadata"]["name"])
        self.objects[obj["metadata"]["name"]] = copy.deepcopy(obj)
        return copy.deepcopy(obj)


def test_create_missing_claims_creates_only_missing() -> None:
    client = Claims({"data-web-0": {"metadata": {"name": "data-web-0"}}})
    created = create_missing_claims(client, statefulset(), pod(0))
    assert [c["metadata"]["name"] for c in created] == ["logs-web-0"]
    assert client.created == ["logs-web-0"]


def test_create_missing_claims_builds_only_the_claims_it_creates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import controllers.statefulset.pvc as pvc

    built: list[str] = []
    real = pvc.claim_from_template

    def counting(template: Any, name: str, workload: Any) -> dict[str, Any]:
        built.append(name)
        return real(template, name, workload)

    sts = statefulset()
    expected = claims_for_pod(sts, pod(0))["logs"]
    monkeypatch.setattr(pvc, "claim_from_template", counting)
    client = Claims({"data-web-0": {"metadata": {"name": "data-web-0"}}})
    assert create_missing_claims(client, sts, pod(0)) == [expected]
    assert built == ["logs-web-0"]
    built.clear()
    assert create_missing_claims(client, sts, pod(0)) == []  # both exist: nothing built
    assert built == []


def test_create_missing_claims_reads_from_the_reader() -> None:
    reader = Claims(
        {
            "data-web-0": {"metadata": {"name": "data-web-0"}},
            "logs-web-0": {"metadata": {"name": "logs-web-0"}},
        }
    )
    client = Claims()
    assert create_missing_claims(client, statefulset(), pod(0), reader=reader) == []
    assert client.created == []


def test_create_missing_claims_terminating_claim_is_an_error_and_others_still_created() -> None:
    client = Claims(
        {
            "data-web-0": {
                "metadata": {"name": "data-web-0", "deletionTimestamp": "2024-01-01T00:00:00Z"}
            }
        }
    )
    with pytest.raises(VolumeClaimError, match="PVC ns/data-web-0 is being deleted") as info:
        create_missing_claims(client, statefulset(), pod(0))
    assert client.created == ["logs-web-0"]
    assert len(info.value.errors) == 1


def test_create_missing_claims_already_exists_is_fine() -> None:
    client = Claims()
    client.create_errors["data-web-0"] = error(409, "AlreadyExists")
    created = create_missing_claims(client, statefulset(), pod(0))
    assert [c["metadata"]["name"] for c in created] == ["logs-web-0"]


def test_create_missing_claims_aggregates_errors() -> None:
    client = Claims()
    client.get_errors["data-web-0"] = error(500, "InternalError")
    client.create_errors["logs-web-0"] = error(403, "Forbidden")
    with pytest.raises(VolumeClaimError) as info:
        create_missing_claims(client, statefulset(), pod(0))
    assert len(info.value.errors) == 2
    assert "failed to retrieve PVC data-web-0" in info.value.errors[0]
    assert "failed to create PVC logs-web-0" in info.value.errors[1]


# --- retention policy ----------------------------------------------------------------------


def ref(kind: str, name: str, uid: str, controller: bool | None = True) -> dict[str, Any]:
    api_version = "apps/v1" if kind == "StatefulSet" else "v1"
    r: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller is not None:
        r["controller"] = controller
        r["blockOwnerDeletion"] = True
    return r


SET_REF = ref("StatefulSet", "web", "set-uid")
POD0_REF = ref("Pod", "web-0", "pod-uid-0")
POD5_REF = ref("Pod", "web-5", "pod-uid-5")
OTHER = ref("Foo", "other", "other-uid")


def claim(*refs: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "data-web-x", "namespace": "ns"}
    if refs:
        meta["ownerReferences"] = list(refs)
    return {"metadata": meta}


# (when_deleted, when_scaled, ordinal (0: in range of 3 replicas, 5: condemned), refs before,
#  up to date?, refs after update)
RETENTION_TABLE = [
    ("Retain", "Retain", 0, [], True, []),
    ("Retain", "Retain", 0, [SET_REF], False, []),
    ("Retain", "Retain", 5, [POD5_REF], False, []),
    ("Retain", "Retain", 0, [OTHER], True, [OTHER]),  # a foreign controller is fine under Retain
    ("Delete", "Retain", 0, [], False, [SET_REF]),
    ("Delete", "Retain", 0, [SET_REF], True, [SET_REF]),
    ("Delete", "Retain", 5, [SET_REF], True, [SET_REF]),  # scaling does not matter
    ("Delete", "Retain", 0, [SET_REF, POD0_REF], False, [SET_REF]),
    ("Retain", "Delete", 0, [], True, []),
    ("Retain", "Delete", 5, [], False, [POD5_REF]),
    ("Retain", "Delete", 5, [POD5_REF], True, [POD5_REF]),
    ("Retain", "Delete", 0, [POD0_REF], False, []),  # scaled back up: the pod lets go
    ("Retain", "Delete", 5, [SET_REF, POD5_REF], False, [POD5_REF]),
    ("Delete", "Delete", 0, [], False, [SET_REF]),
    ("Delete", "Delete", 0, [SET_REF], True, [SET_REF]),
    ("Delete", "Delete", 5, [SET_REF], False, [POD5_REF]),
    ("Delete", "Delete", 5, [POD5_REF], True, [POD5_REF]),
    ("Delete", "Delete", 0, [POD0_REF], False, [SET_REF]),
    # a non-controller reference from us must become a controller reference
    (
        "Delete",
        "Retain",
        0,
        [ref("StatefulSet", "web", "set-uid", controller=None)],
        False,
        [SET_REF],
    ),
    # an unexpected controller: our refs are scrubbed, nothing added; without ours, untouched
    ("Delete", "Retain", 0, [OTHER], True, [OTHER]),
    ("Delete", "Retain", 0, [OTHER, SET_REF], False, [OTHER]),
    # a non-controller foreign owner is no obstacle
    (
        "Delete",
        "Retain",
        0,
        [ref("Foo", "f", "f-uid", controller=False)],
        False,
        [ref("Foo", "f", "f-uid", controller=False), SET_REF],
    ),
    # stale references (same name, other uid): hands off
    ("Delete", "Delete", 0, [ref("StatefulSet", "web", "old-set-uid")], True, []),
    ("Delete", "Delete", 5, [ref("Pod", "web-5", "old-pod-uid")], True, []),
    # unknown policy acts as Retain
    ("Sometimes", "Retain", 0, [SET_REF], False, []),
]


@pytest.mark.parametrize(
    ("when_deleted", "when_scaled", "ordinal", "before", "up_to_date", "after"), RETENTION_TABLE
)
def test_retention_policy_as_owner_references(
    when_deleted: str,
    when_scaled: str,
    ordinal: int,
    before: list[dict[str, Any]],
    up_to_date: bool,
    after: list[dict[str, Any]],
) -> None:
    sts = statefulset(3, when_deleted, when_scaled)
    p = pod(ordinal)
    c = claim(*before)
    frozen = copy.deepcopy(c)
    assert claim_owner_up_to_date(c, sts, p) is up_to_date
    if not up_to_date:
        updated = update_claim_owner_refs(c, sts, p)
        assert updated["metadata"].get("ownerReferences", []) == after
        assert claim_owner_up_to_date(updated, sts, p)  # one update converges
        assert c == frozen


def test_retention_policy_defaults() -> None:
    assert retention_policy(statefulset()) == ("Retain", "Retain")
    assert retention_policy(statefulset(when_scaled="Delete")) == ("Retain", "Delete")


def test_stale_and_unexpected_controller_detection() -> None:
    sts, p = statefulset(when_deleted="Delete"), pod(0)
    assert has_stale_owner_ref(claim(ref("StatefulSet", "web", "old")), sts, STS)
    assert not has_stale_owner_ref(claim(SET_REF), sts, STS)
    assert not has_stale_owner_ref(claim(ref("StatefulSet", "other", "old")), sts, STS)
    assert has_unexpected_controller(claim(OTHER), sts, p)
    assert has_unexpected_controller(claim(ref("Pod", "web-0", "old")), sts, p)
    assert not has_unexpected_controller(claim(SET_REF, POD0_REF), sts, p)
    assert not has_unexpected_controller(claim(OTHER), statefulset(), p)  # Retain/Retain


def test_update_claims_for_retention_policy() -> None:
    sts, p = statefulset(when_deleted="Delete"), pod(0)
    client = Claims({"data-web-0": claim(), "logs-web-0": claim(SET_REF)})
    client.objects["data-web-0"]["metadata"]["name"] = "data-web-0"
    client.objects["logs-web-0"]["metadata"]["name"] = "logs-web-0"
    client.conflicts = 1
    updated = update_claims_for_retention_policy(client, sts, p)
    assert [c["metadata"]["name"] for c in updated] == ["data-web-0"]
    assert client.objects["data-web-0"]["metadata"]["ownerReferences"] == [SET_REF]
    # missing claims are skipped
    assert update_claims_for_retention_policy(Claims(), sts, p) == []


def test_update_claims_for_retention_policy_aggregates_errors() -> None:
    client = Claims()
    client.get_errors["data-web-0"] = error(500, "InternalError")
    client.get_errors["logs-web-0"] = error(403, "Forbidden")
    with pytest.raises(VolumeClaimError) as info:
        update_claims_for_retention_policy(client, statefulset(when_deleted="Delete"), pod(0))
    assert len(info.value.errors) == 2
