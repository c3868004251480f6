"""Deletion end to end: the official client against the embedded API server over HTTP.

Graceful pod deletion with the simulated kubelet, finalizers, delete preconditions, the
garbage collector (Background, Orphan and Foreground propagation, dangling and partially
dangling owner references) and namespace deletion.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

MERGE = "application/merge-patch+json"
FINALIZER = "example.com/hold"


def _status(exc: pytest.ExceptionInfo[ApiException]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.value.body)
    return body


def _config_map(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": {"k": "v"},
    }


def _pod(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **meta},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    }


def _ref(owner: Any, *, block: bool = False, controller: bool = False) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": owner.kind or "ConfigMap",
        "name": owner.metadata.name,
        "uid": owner.metadata.uid,
    }
    if block:
        ref["blockOwnerDeletion"] = True
    if controller:
        ref["controller"] = True
    return ref


def _meta(response: Any) -> dict[str, Any]:
    """The metadata of the object a DELETE answered with (called with ``_preload_content=False``:
    the generated methods declare a Status answer, the server sends the object as it stands)."""
    meta: dict[str, Any] = json.loads(response.data)["metadata"]
    return meta


def _gone(read: Callable[[], Any]) -> bool:
    try:
        read()
    except ApiException as e:
        if e.status == 404:
            return True
        raise
    return False


@pytest.fixture
def core(api_client: Any) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


def _cm_gone(core: client.CoreV1Api, namespace: str, name: str) -> Callable[[], bool]:
    return lambda: _gone(lambda: core.read_namespaced_config_map(name, namespace))


def _drop_finalizers(core: client.CoreV1Api, namespace: str, name: str) -> None:
    core.patch_namespaced_config_map(
        name, namespace, {"metadata": {"finalizers": None}}, _content_type=MERGE
    )


# --------------------------------------------------------------------------- pods


def test_graceful_pod_deletion(
    core: client.CoreV1Api, namespace: str, kubelet: Any, wait_for: Any
) -> None:
    # 30 s of grace become 0.3 s with this scale: long enough to see the terminating pod.
    kubelet.settings.grace_scale = 0.01
    kubelet.settings.max_grace = 5.0
    core.create_namespaced_pod(namespace, _pod("p"))
    wait_for(
        lambda: core.read_namespaced_pod("p", namespace).status.phase == "Running",
        message="pod Running",
    )

    returned = core.delete_namespaced_pod("p", namespace)
    assert returned.metadata.deletion_timestamp is not None
    assert returned.metadata.deletion_grace_period_seconds == 30

    terminating = core.read_namespaced_pod("p", namespace)
    assert terminating.metadata.deletion_timestamp is not None
    assert terminating.metadata.deletion_grace_period_seconds == 30

    # Deleting again with a shorter grace period shortens it.
    shorter = core.delete_namespaced_pod("p", namespace, grace_period_seconds=20)
    assert shorter.metadata.deletion_grace_period_seconds == 20

    wait_for(
        lambda: _gone(lambda: core.read_namespaced_pod("p", namespace)),
        message="pod removed by the kubelet",
    )


def test_pod_with_grace_zero_goes_at_once(
    core: client.CoreV1Api, namespace: str, kubelet: Any, wait_for: Any
) -> None:
    kubelet.settings.grace_scale = 1.0
    kubelet.settings.max_grace = 60.0
    core.create_namespaced_pod(namespace, _pod("p"))
    wait_for(lambda: core.read_namespaced_pod("p", namespace).spec.node_name, message="pod bound")
    core.delete_namespaced_pod("p", namespace, grace_period_seconds=0)
    assert _gone(lambda: core.read_namespaced_pod("p", namespace))


@pytest.mark.needs_k8s("1.26", "spec.schedulingGates keeps the pod unscheduled")
def test_unscheduled_pod_goes_at_once(core: client.CoreV1Api, namespace: str) -> None:
    # A pod that never got a node has nothing to stop: removed at once.
    gated = _pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/gate"}]
    core.create_namespaced_pod(namespace, gated)
    core.delete_namespaced_pod("gated", namespace)
    assert _gone(lambda: core.read_namespaced_pod("gated", namespace))


# --------------------------------------------------------------------- finalizers


def test_finalizers_keep_an_object_until_removed(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(
        namespace, _config_map("cm", finalizers=[FINALIZER, "example.com/other"])
    )

    # Held by finalizers, the deletion answers 200 with the object (202 is kept for
    # orphanDependents=false, as kube-apiserver does).
    first = core.delete_namespaced_config_map("cm", namespace, _preload_content=False)
    assert first.status == 200
    assert _meta(first)["deletionTimestamp"]
    held = core.read_namespaced_config_map("cm", namespace)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == [FINALIZER, "example.com/other"]

    # No new finalizers on an object being deleted; other changes are fine.
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_config_map(
            "cm",
            namespace,
            {"metadata": {"finalizers": [FINALIZER, "example.com/other", "example.com/new"]}},
            _content_type=MERGE,
        )
    assert exc.value.status == 422
    updated = core.patch_namespaced_config_map(
        "cm", namespace, {"data": {"k": "changed"}}, _content_type=MERGE
    )
    assert updated.data == {"k": "changed"}

    # Deleting again changes nothing.
    again = core.delete_namespaced_config_map("cm", namespace, _preload_content=False)
    assert _meta(again)["resourceVersion"] == updated.metadata.resource_version
    accepted = core.delete_namespaced_config_map(
        "cm",
        namespace,
        body=client.V1DeleteOptions(orphan_dependents=False),
        _preload_content=False,
    )
    assert accepted.status == 202

    core.patch_namespaced_config_map(
        "cm", namespace, {"metadata": {"finalizers": ["example.com/other"]}}, _content_type=MERGE
    )
    assert core.read_namespaced_config_map("cm", namespace).metadata.finalizers == [
        "example.com/other"
    ]
    _drop_finalizers(core, namespace, "cm")
    assert _gone(lambda: core.read_namespaced_config_map("cm", namespace))


def test_delete_preconditions(core: client.CoreV1Api, namespace: str) -> None:
    cm = core.create_namespaced_config_map(namespace, _config_map("cm"))
    uid, rv = cm.metadata.uid, cm.metadata.resource_version
    precondition_uid = str(uuid.uuid4())

    with pytest.raises(ApiException) as exc:
        core.delete_namespaced_config_map(
            "cm",
            namespace,
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=precondition_uid)),
        )
    assert exc.value.status == 409
    status = _status(exc)
    assert status["reason"] == "Conflict"
    assert status["message"].startswith('Operation cannot be fulfilled on ConfigMap "cm": ')
    assert (
        f"the UID in the precondition ({precondition_uid}) does not match the UID in "
        in (status["message"])
    )
    assert status["details"]["kind"] == "ConfigMap"

    updated = core.patch_namespaced_config_map(
        "cm", namespace, {"data": {"k": "2"}}, _content_type=MERGE
    )
    with pytest.raises(ApiException) as exc:
        core.delete_namespaced_config_map(
            "cm",
            namespace,
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version=rv)),
        )
    assert exc.value.status == 409
    assert (
        f"the ResourceVersion in the precondition ({rv}) does not match the "
        in (_status(exc)["message"])
    )
    assert core.read_namespaced_config_map("cm", namespace).metadata.uid == uid

    core.delete_namespaced_config_map(
        "cm",
        namespace,
        body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(
                uid=uid, resource_version=updated.metadata.resource_version
            )
        ),
    )
    assert _gone(lambda: core.read_namespaced_config_map("cm", namespace))

    with pytest.raises(ApiException) as exc:
        core.delete_namespaced_config_map("cm", namespace)
    assert exc.value.status == 404


# ------------------------------------------------------------ garbage collection


def test_background_deletion_collects_dependents(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    core.create_namespaced_config_map(namespace, _config_map("dep", ownerReferences=[_ref(owner)]))
    core.create_namespaced_pod(
        namespace, _pod("dep-pod", ownerReferences=[_ref(owner, controller=True)])
    )
    # A dependent of a dependent goes too (cascading).
    dep = core.read_namespaced_config_map("dep", namespace)
    core.create_namespaced_config_map(
        namespace, _config_map("grandchild", ownerReferences=[_ref(dep)])
    )
    unrelated = core.create_namespaced_config_map(namespace, _config_map("unrelated"))

    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Background")
    assert _gone(lambda: core.read_namespaced_config_map("owner", namespace))

    wait_for(_cm_gone(core, namespace, "dep"), message="dependent ConfigMap collected")
    wait_for(
        lambda: _gone(lambda: core.read_namespaced_pod("dep-pod", namespace)),
        message="dependent pod collected",
    )
    wait_for(_cm_gone(core, namespace, "grandchild"), message="grandchild collected")
    assert (
        core.read_namespaced_config_map("unrelated", namespace).metadata.uid
        == unrelated.metadata.uid
    )


def test_orphan_deletion_keeps_dependents_without_the_reference(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    other = core.create_namespaced_config_map(namespace, _config_map("other"))
    core.create_namespaced_config_map(namespace, _config_map("dep1", ownerReferences=[_ref(owner)]))
    core.create_namespaced_config_map(
        namespace, _config_map("dep2", ownerReferences=[_ref(owner), _ref(other)])
    )

    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Orphan")
    wait_for(_cm_gone(core, namespace, "owner"), message="owner deleted after orphaning")

    dep1 = core.read_namespaced_config_map("dep1", namespace)
    assert not dep1.metadata.owner_references
    dep2 = core.read_namespaced_config_map("dep2", namespace)
    assert [r.uid for r in dep2.metadata.owner_references] == [other.metadata.uid]
    assert dep1.metadata.deletion_timestamp is None and dep2.metadata.deletion_timestamp is None


def test_orphan_finalizer_is_visible_while_dependents_are_orphaned(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(
        namespace, _config_map("owner", finalizers=[FINALIZER])
    )
    core.create_namespaced_config_map(namespace, _config_map("dep", ownerReferences=[_ref(owner)]))

    deleted = core.delete_namespaced_config_map(
        "owner",
        namespace,
        body=client.V1DeleteOptions(orphan_dependents=True),
        _preload_content=False,
    )
    assert "orphan" in _meta(deleted)["finalizers"]
    # The GC removes the orphan finalizer after orphaning; ours still holds the owner.
    held = wait_for(
        lambda: (
            (o := core.read_namespaced_config_map("owner", namespace)).metadata.finalizers
            == [FINALIZER]
            and o
        ),
        message="orphan finalizer removed",
    )
    assert held.metadata.deletion_timestamp is not None
    assert not core.read_namespaced_config_map("dep", namespace).metadata.owner_references
    _drop_finalizers(core, namespace, "owner")
    assert _gone(lambda: core.read_namespaced_config_map("owner", namespace))
    assert core.read_namespaced_config_map("dep", namespace).metadata.deletion_timestamp is None


def test_foreground_deletion_waits_for_blocking_dependents(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    # The blocking dependent carries a finalizer so its deletion can be held and observed.
    core.create_namespaced_config_map(
        namespace,
        _config_map("blocker", ownerReferences=[_ref(owner, block=True)], finalizers=[FINALIZER]),
    )
    core.create_namespaced_config_map(
        namespace, _config_map("plain", ownerReferences=[_ref(owner)])
    )

    deleted = core.delete_namespaced_config_map(
        "owner", namespace, propagation_policy="Foreground", _preload_content=False
    )
    assert _meta(deleted)["deletionTimestamp"]
    assert "foregroundDeletion" in _meta(deleted)["finalizers"]

    wait_for(
        lambda: core.read_namespaced_config_map("blocker", namespace).metadata.deletion_timestamp,
        message="blocking dependent being deleted",
    )
    wait_for(_cm_gone(core, namespace, "plain"), message="non-blocking dependent deleted")
    held = core.read_namespaced_config_map("owner", namespace)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.finalizers == ["foregroundDeletion"]

    _drop_finalizers(core, namespace, "blocker")
    wait_for(_cm_gone(core, namespace, "blocker"), message="blocking dependent deleted")
    wait_for(_cm_gone(core, namespace, "owner"), message="owner deleted after its dependents")


def test_foreground_deletion_keeps_a_dependent_with_another_live_owner(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    other = core.create_namespaced_config_map(namespace, _config_map("other"))
    core.create_namespaced_config_map(
        namespace, _config_map("shared", ownerReferences=[_ref(owner, block=True), _ref(other)])
    )

    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Foreground")
    # The shared dependent only loses its reference; then nothing blocks the owner any more.
    wait_for(_cm_gone(core, namespace, "owner"), message="owner deleted")
    shared = core.read_namespaced_config_map("shared", namespace)
    assert shared.metadata.deletion_timestamp is None
    assert [r.uid for r in shared.metadata.owner_references] == [other.metadata.uid]


def test_foreground_deletion_cascades_through_generations(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    child = core.create_namespaced_config_map(
        namespace, _config_map("child", ownerReferences=[_ref(owner, block=True)])
    )
    core.create_namespaced_config_map(
        namespace,
        _config_map(
            "grandchild", ownerReferences=[_ref(child, block=True)], finalizers=[FINALIZER]
        ),
    )

    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Foreground")
    # The child has dependents of its own: it is deleted in the foreground too.
    wait_for(
        lambda: (
            "foregroundDeletion"
            in (core.read_namespaced_config_map("child", namespace).metadata.finalizers or [])
        ),
        message="child deleted in the foreground",
    )
    wait_for(
        lambda: (
            core.read_namespaced_config_map("grandchild", namespace).metadata.deletion_timestamp
        ),
        message="grandchild being deleted",
    )
    assert core.read_namespaced_config_map("owner", namespace).metadata.finalizers == [
        "foregroundDeletion"
    ]

    _drop_finalizers(core, namespace, "grandchild")
    for name in ("grandchild", "child", "owner"):
        wait_for(_cm_gone(core, namespace, name), message=f"{name} deleted")


def test_foreground_deletion_waits_for_a_terminating_pod(
    core: client.CoreV1Api, namespace: str, kubelet: Any, wait_for: Any
) -> None:
    kubelet.settings.grace_scale = 0.01  # 30 s of grace: 0.3 s
    kubelet.settings.max_grace = 5.0
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    core.create_namespaced_pod(
        namespace, _pod("p", ownerReferences=[_ref(owner, block=True, controller=True)])
    )
    wait_for(
        lambda: core.read_namespaced_pod("p", namespace).status.phase == "Running",
        message="pod Running",
    )

    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Foreground")
    pod = wait_for(
        lambda: (p := core.read_namespaced_pod("p", namespace)).metadata.deletion_timestamp and p,
        message="pod terminating",
    )
    assert pod.metadata.deletion_grace_period_seconds == 30
    assert (
        core.read_namespaced_config_map("owner", namespace).metadata.deletion_timestamp is not None
    )

    wait_for(lambda: _gone(lambda: core.read_namespaced_pod("p", namespace)), message="pod removed")
    wait_for(_cm_gone(core, namespace, "owner"), message="owner deleted after the pod")


def test_foreground_owner_without_blocking_dependents_goes_with_them(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    owner = core.create_namespaced_config_map(namespace, _config_map("owner"))
    core.create_namespaced_config_map(namespace, _config_map("dep", ownerReferences=[_ref(owner)]))
    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Foreground")
    wait_for(_cm_gone(core, namespace, "owner"), message="owner deleted")
    wait_for(_cm_gone(core, namespace, "dep"), message="dependent deleted")


def test_object_whose_only_owner_is_missing_is_collected(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": str(uuid.uuid4())}
    core.create_namespaced_config_map(namespace, _config_map("orphaned", ownerReferences=[ghost]))
    wait_for(_cm_gone(core, namespace, "orphaned"), message="object with a missing owner collected")

    # A reference whose uid exists under another name is dangling too.
    real = core.create_namespaced_config_map(namespace, _config_map("real"))
    wrong_name = {**_ref(real), "name": "not-real"}
    core.create_namespaced_config_map(
        namespace, _config_map("misnamed", ownerReferences=[wrong_name])
    )
    wait_for(
        _cm_gone(core, namespace, "misnamed"),
        message="object whose owner name does not match collected",
    )
    assert core.read_namespaced_config_map("real", namespace).metadata.uid == real.metadata.uid


def test_owner_in_another_namespace_counts_as_absent(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    elsewhere = f"t-other-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": elsewhere}})
    try:
        foreign = core.create_namespaced_config_map(elsewhere, _config_map("owner"))
        local = core.create_namespaced_config_map(namespace, _config_map("owner"))
        # Same name, same kind, but the uid belongs to a ConfigMap of another namespace.
        core.create_namespaced_config_map(
            namespace, _config_map("cross", ownerReferences=[_ref(foreign)])
        )
        core.create_namespaced_config_map(
            namespace, _config_map("same", ownerReferences=[_ref(local)])
        )
        wait_for(
            _cm_gone(core, namespace, "cross"),
            message="dependent of a foreign-namespace owner collected",
        )
        assert (
            core.read_namespaced_config_map("same", namespace).metadata.owner_references[0].uid
            == local.metadata.uid
        )
        assert (
            core.read_namespaced_config_map("owner", elsewhere).metadata.uid == foreign.metadata.uid
        )
    finally:
        core.delete_namespace(elsewhere)


def test_object_with_a_live_and_a_dead_owner_loses_only_the_dead_reference(
    core: client.CoreV1Api, namespace: str, wait_for: Any
) -> None:
    live = core.create_namespaced_config_map(namespace, _config_map("live"))
    dead = {"apiVersion": "v1", "kind": "ConfigMap", "name": "dead", "uid": str(uuid.uuid4())}
    created = core.create_namespaced_config_map(
        namespace, _config_map("dep", ownerReferences=[_ref(live), dead])
    )

    dep = wait_for(
        lambda: (
            (d := core.read_namespaced_config_map("dep", namespace)).metadata.owner_references
            and len(d.metadata.owner_references) == 1
            and d
        ),
        message="dead owner reference removed",
    )
    assert dep.metadata.owner_references[0].uid == live.metadata.uid
    assert dep.metadata.uid == created.metadata.uid
    assert dep.metadata.deletion_timestamp is None

    # Once the live owner goes too, the dependent is collected.
    core.delete_namespaced_config_map("live", namespace)
    wait_for(_cm_gone(core, namespace, "dep"), message="dependent collected after its last owner")


# ---------------------------------------------------------------------- namespaces


def test_namespace_deletion_deletes_content_then_namespace(
    core: client.CoreV1Api, wait_for: Any
) -> None:
    name = f"t-del-{uuid.uuid4().hex[:8]}"
    created = core.create_namespace({"metadata": {"name": name}})
    assert created.status.phase == "Active"
    assert "kubernetes" in created.spec.finalizers
    core.create_namespaced_config_map(name, _config_map("plain"))
    core.create_namespaced_config_map(name, _config_map("held", finalizers=[FINALIZER]))
    core.create_namespaced_pod(name, _pod("p"))

    try:
        core.delete_namespace(name)
        terminating = core.read_namespace(name)
        assert terminating.metadata.deletion_timestamp is not None
        assert terminating.status.phase == "Terminating"

        with pytest.raises(ApiException) as exc:
            core.create_namespaced_config_map(name, _config_map("late"))
        assert exc.value.status == 403
        assert _status(exc)["reason"] == "Forbidden"
        assert "being terminated" in _status(exc)["message"]

        wait_for(_cm_gone(core, name, "plain"), message="namespace content deleted")
        wait_for(
            lambda: _gone(lambda: core.read_namespaced_pod("p", name)),
            message="namespace pods deleted",
        )
        held = wait_for(
            lambda: core.read_namespaced_config_map("held", name).metadata.deletion_timestamp,
            message="held ConfigMap being deleted",
        )
        assert held
        # The finalizer on the content keeps the namespace in Terminating.
        still = core.read_namespace(name)
        assert still.status.phase == "Terminating"
        assert [i.metadata.name for i in core.list_namespaced_config_map(name).items] == ["held"]

        _drop_finalizers(core, name, "held")
        wait_for(lambda: _gone(lambda: core.read_namespace(name)), message="namespace deleted")
        assert core.list_namespaced_config_map(name).items == []
    finally:
        try:  # never leave a namespace held by the test's own finalizer
            _drop_finalizers(core, name, "held")
        except ApiException:
            pass
