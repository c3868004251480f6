"""controllerutil against the embedded cluster through the REST client: create_or_update and
create_or_patch (created, unchanged without a write, updated, status only, object and status,
a writer sneaking in between our read and our write), patch_status on a stale object, the
finalizer and owner-reference helpers composed with them, typed models, ignoring_not_found.

(kube_runtime/client/fake.py did not exist when these were written: this file is also where
the client-facing behaviour of the helpers is tested.)"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, ClassVar

import pytest
from pydantic import Field

from kube_runtime import kinds
from kube_runtime.client import Client, Conflict, NotFound, Resource
from kube_runtime.conditions import set_condition
from kube_runtime.controllerutil import (
    OperationResult,
    add_finalizer,
    contains_finalizer,
    create_or_patch,
    create_or_update,
    ignoring_not_found,
    is_controlled_by,
    patch_status,
    remove_finalizer,
    set_controller_reference,
)
from kube_runtime.models import KubeModel, ObjectMeta
from kube_runtime.retry import Backoff

NO_WAIT = Backoff(steps=5, duration=0.0, factor=1.0, jitter=0.0)
FINALIZER = "example.com/cleanup"
T0 = datetime(2024, 1, 31, 12, 0, tzinfo=timezone.utc)


class Recording:
    """Forwards to the real client, recording every call; ``between`` (if set) runs once,
    right after the first ``get`` answered: a concurrent writer between our read and write."""

    def __init__(self, client: Client, between: Callable[[], None] | None = None) -> None:
        self.client = client
        self.between = between
        self.calls: list[tuple[str, Any]] = []

    @property
    def mapper(self) -> Any:
        return self.client.mapper

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.calls]

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        self.calls.append(("get", name))
        obj = self.client.get(kind, name, namespace)
        if self.between is not None:
            between, self.between = self.between, None
            between()
        return obj

    def create(self, obj: Any) -> Any:
        self.calls.append(("create", obj))
        return self.client.create(obj)

    def update(self, obj: Any) -> Any:
        self.calls.append(("update", obj))
        return self.client.update(obj)

    def patch(self, kind: Any, name: str, patch: Any, **kwargs: Any) -> Any:
        self.calls.append(("patch:" + str(kwargs.get("subresource") or ""), patch))
        return self.client.patch(kind, name, patch, **kwargs)


def config_map(namespace: str, name: str = "settings") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
    }


def stateful_set(namespace: str, name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
    }


def sts_spec(obj: dict[str, Any], replicas: int = 1) -> None:
    obj["spec"] = {
        "replicas": replicas,
        "serviceName": "web",
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
        },
    }


def rv(obj: Any) -> str:
    return str(obj["metadata"]["resourceVersion"])


def set_data(**data: str) -> Callable[[dict[str, Any]], None]:
    def mutate(obj: dict[str, Any]) -> None:
        obj["data"] = dict(data)

    return mutate


# ------------------------------------------------------------------ create_or_update


def test_create_or_update_created_unchanged_updated(client: Client, namespace: str) -> None:
    rec = Recording(client)
    created, result = create_or_update(rec, config_map(namespace), set_data(k="v"))
    assert result is OperationResult.CREATED
    assert created["data"] == {"k": "v"} and created["metadata"].get("uid")
    assert rec.verbs() == ["get", "create"]

    rec.calls.clear()
    same, result = create_or_update(rec, config_map(namespace), set_data(k="v"))
    assert result is OperationResult.UNCHANGED
    assert rec.verbs() == ["get"]  # no write at all
    assert rv(same) == rv(created) == rv(client.get(kinds.ConfigMap, "settings", namespace))

    updated, result = create_or_update(rec, config_map(namespace), set_data(k="v2", extra="x"))
    assert result is OperationResult.UPDATED
    assert rv(updated) != rv(created)
    stored = client.get(kinds.ConfigMap, "settings", namespace)
    assert stored["data"] == {"k": "v2", "extra": "x"} and rv(stored) == rv(updated)


def test_create_or_update_does_not_touch_the_given_object(client: Client, namespace: str) -> None:
    given = config_map(namespace)
    create_or_update(client, given, set_data(k="v"))
    assert given == config_map(namespace)


@pytest.mark.parametrize("field", ["name", "namespace"])
def test_mutate_must_not_rename(client: Client, namespace: str, field: str) -> None:
    def rename(obj: dict[str, Any]) -> None:
        obj["metadata"][field] = "other"

    with pytest.raises(ValueError, match="name and/or namespace"):
        create_or_update(client, config_map(namespace), rename)
    with pytest.raises(NotFound):
        client.get(kinds.ConfigMap, "settings", namespace)  # nothing was created
    client.create({**config_map(namespace), "data": {"k": "v"}})
    with pytest.raises(ValueError, match="name and/or namespace"):
        create_or_patch(client, config_map(namespace), rename)


def test_create_or_update_retries_a_conflict_rereading(client: Client, namespace: str) -> None:
    client.create({**config_map(namespace), "data": {"k": "v"}})

    def concurrent_writer() -> None:
        theirs = client.get(kinds.ConfigMap, "settings", namespace)
        theirs["data"]["theirs"] = "1"
        client.update(theirs)

    rec = Recording(client, between=concurrent_writer)
    seen: list[dict[str, str]] = []

    def mutate(obj: dict[str, Any]) -> None:
        seen.append(dict(obj["data"]))
        obj["data"]["ours"] = "1"

    result_obj, result = create_or_update(rec, config_map(namespace), mutate, backoff=NO_WAIT)
    assert result is OperationResult.UPDATED
    assert rec.verbs() == ["get", "update", "get", "update"]  # 409, re-read, again
    assert seen == [{"k": "v"}, {"k": "v", "theirs": "1"}]  # mutate saw the fresh object
    stored = client.get(kinds.ConfigMap, "settings", namespace)
    assert stored["data"] == {"k": "v", "theirs": "1", "ours": "1"}
    assert rv(stored) == rv(result_obj)


def test_create_or_update_conflicts_propagate_when_tries_run_out(
    client: Client, namespace: str
) -> None:
    client.create({**config_map(namespace), "data": {"n": "0"}})
    writes = 0

    class AlwaysInterfering(Recording):
        def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
            nonlocal writes
            obj = super().get(kind, name, namespace)
            writes += 1
            client.patch(kind, name, {"data": {"n": str(writes)}}, namespace=namespace)
            return obj

    rec = AlwaysInterfering(client)
    with pytest.raises(Conflict):
        create_or_update(
            rec, config_map(namespace), set_data(n="mine"), backoff=Backoff(3, 0.0, 1.0, 0.0)
        )
    assert rec.verbs().count("update") == 3


def test_create_or_update_takes_over_after_a_concurrent_create(
    client: Client, namespace: str
) -> None:
    class CreatedMeanwhile(Recording):
        def create(self, obj: Any) -> Any:
            if not any(verb == "create" for verb, _ in self.calls):
                client.create({**config_map(namespace), "data": {"theirs": "1"}})
            return super().create(obj)

    rec = CreatedMeanwhile(client)
    obj, result = create_or_update(rec, config_map(namespace), set_data(k="v"), backoff=NO_WAIT)
    assert result is OperationResult.UPDATED  # AlreadyExists: re-read and updated
    assert rec.verbs() == ["get", "create", "get", "update"]
    assert client.get(kinds.ConfigMap, "settings", namespace)["data"] == {"k": "v"}
    assert obj["data"] == {"k": "v"}


def test_create_or_update_leaves_status_to_the_status_subresource(
    client: Client, namespace: str
) -> None:
    # As controller-runtime's CreateOrUpdate: a PUT of the object ignores status changes.
    create_or_update(client, stateful_set(namespace), sts_spec)

    def status_only(obj: dict[str, Any]) -> None:
        obj["status"] = {"replicas": 1, "observedGeneration": 1}

    _, result = create_or_update(client, stateful_set(namespace), status_only)
    assert result is OperationResult.UPDATED
    stored = client.get(kinds.StatefulSet, "web", namespace)
    assert (stored.get("status") or {}).get("replicas") in (None, 0)


# ------------------------------------------------------------------ create_or_patch


def test_create_or_patch_configmap(client: Client, namespace: str) -> None:
    rec = Recording(client)
    created, result = create_or_patch(rec, config_map(namespace), set_data(a="1", b="2"))
    assert result is OperationResult.CREATED

    rec.calls.clear()
    _, result = create_or_patch(rec, config_map(namespace), set_data(a="1", b="2"))
    assert result is OperationResult.UNCHANGED
    assert rec.verbs() == ["get"]
    assert rv(client.get(kinds.ConfigMap, "settings", namespace)) == rv(created)

    rec.calls.clear()
    updated, result = create_or_patch(rec, config_map(namespace), set_data(a="1", c="3"))
    assert result is OperationResult.UPDATED
    # Only the difference travels: b removed, c added, a untouched; no precondition.
    assert rec.calls[1] == ("patch:", {"data": {"b": None, "c": "3"}})
    assert updated["data"] == {"a": "1", "c": "3"}
    assert client.get(kinds.ConfigMap, "settings", namespace)["data"] == {"a": "1", "c": "3"}


def test_create_or_patch_statefulset_with_status(client: Client, namespace: str) -> None:
    rec = Recording(client)

    def desired(replicas: int, ready: int | None) -> Callable[[dict[str, Any]], None]:
        def mutate(obj: dict[str, Any]) -> None:
            if "spec" in obj:
                obj["spec"]["replicas"] = replicas
            else:
                sts_spec(obj, replicas)
            if ready is not None:
                obj["status"] = {
                    **(obj.get("status") or {}),
                    "replicas": ready,
                    "readyReplicas": ready,
                    "observedGeneration": obj["metadata"].get("generation", 1),
                }

        return mutate

    created, result = create_or_patch(rec, stateful_set(namespace), desired(1, None))
    assert result is OperationResult.CREATED
    assert created["spec"]["replicas"] == 1

    rec.calls.clear()
    obj, result = create_or_patch(rec, stateful_set(namespace), desired(1, 1))
    assert result is OperationResult.UPDATED_STATUS_ONLY
    assert rec.verbs() == ["get", "patch:status"]
    assert rec.calls[1][1]["status"]["readyReplicas"] == 1
    assert obj["status"]["readyReplicas"] == 1
    assert obj["metadata"]["generation"] == created["metadata"]["generation"]

    rec.calls.clear()
    obj, result = create_or_patch(rec, stateful_set(namespace), desired(2, 2))
    assert result is OperationResult.UPDATED_STATUS
    assert rec.verbs() == ["get", "patch:", "patch:status"]
    assert rec.calls[1][1] == {"spec": {"replicas": 2}}
    stored = client.get(kinds.StatefulSet, "web", namespace)
    assert stored["spec"]["replicas"] == 2 and stored["status"]["readyReplicas"] == 2
    assert rv(obj) == rv(stored)

    rec.calls.clear()
    obj, result = create_or_patch(rec, stateful_set(namespace), desired(3, None))
    assert result is OperationResult.UPDATED
    assert rec.verbs() == ["get", "patch:"]

    rec.calls.clear()
    _, result = create_or_patch(rec, stateful_set(namespace), desired(3, None))
    assert result is OperationResult.UNCHANGED
    assert rec.verbs() == ["get"]
    assert rv(client.get(kinds.StatefulSet, "web", namespace)) == rv(obj)


def test_create_or_patch_keeps_a_concurrent_writers_fields(client: Client, namespace: str) -> None:
    client.create({**config_map(namespace), "data": {"k": "v"}})

    def concurrent_writer() -> None:
        client.patch(kinds.ConfigMap, "settings", {"data": {"theirs": "1"}}, namespace=namespace)

    def ours(obj: dict[str, Any]) -> None:
        obj["data"]["ours"] = "1"

    rec = Recording(client, between=concurrent_writer)
    _, result = create_or_patch(rec, config_map(namespace), ours)
    assert result is OperationResult.UPDATED
    assert rec.verbs() == ["get", "patch:"]  # a merge patch without precondition: no 409
    stored = client.get(kinds.ConfigMap, "settings", namespace)
    assert stored["data"] == {"k": "v", "theirs": "1", "ours": "1"}


def test_create_or_patch_with_optimistic_lock_retries_a_conflict(
    client: Client, namespace: str
) -> None:
    created = client.create(config_map(namespace))

    def concurrent_writer() -> None:
        client.patch(
            kinds.ConfigMap,
            "settings",
            {"metadata": {"finalizers": ["other.io/protect"]}},
            namespace=namespace,
        )

    rec = Recording(client, between=concurrent_writer)
    obj, result = create_or_patch(
        rec,
        config_map(namespace),
        lambda o: add_finalizer(o, FINALIZER),
        optimistic_lock=True,
        backoff=NO_WAIT,
    )
    assert result is OperationResult.UPDATED
    assert rec.verbs() == ["get", "patch:", "get", "patch:"]
    first_patch = rec.calls[1][1]
    assert first_patch == {"metadata": {"finalizers": [FINALIZER], "resourceVersion": rv(created)}}
    # Without the lock the whole-list merge patch would have dropped their finalizer.
    assert obj["metadata"]["finalizers"] == ["other.io/protect", FINALIZER]
    remove_finalizers = {"metadata": {"finalizers": None}}
    client.patch(kinds.ConfigMap, "settings", remove_finalizers, namespace=namespace)


def test_status_and_object_patches_across_a_retry(client: Client, namespace: str) -> None:
    create_or_patch(client, stateful_set(namespace), sts_spec)
    status_patches = 0

    class StatusConflictOnce(Recording):
        def patch(self, kind: Any, name: str, patch: Any, **kwargs: Any) -> Any:
            nonlocal status_patches
            if kwargs.get("subresource") == "status":
                status_patches += 1
                if status_patches == 1:  # someone writes between our two patches
                    client.patch(
                        kind, name, {"metadata": {"labels": {"x": "y"}}}, namespace=namespace
                    )
            return super().patch(kind, name, patch, **kwargs)

    def both(obj: dict[str, Any]) -> None:
        obj["spec"]["replicas"] = 4
        obj["status"] = {"replicas": 0, "observedGeneration": 2}

    rec = StatusConflictOnce(client)
    _, result = create_or_patch(
        rec, stateful_set(namespace), both, optimistic_lock=True, backoff=NO_WAIT
    )
    # The object patch of the first try counts: the answer is not "status only".
    assert result is OperationResult.UPDATED_STATUS
    assert rec.verbs() == ["get", "patch:", "patch:status", "get", "patch:status"]
    stored = client.get(kinds.StatefulSet, "web", namespace)
    assert stored["spec"]["replicas"] == 4 and stored["status"]["observedGeneration"] == 2


# ------------------------------------------------------------------ patch_status


def test_patch_status_from_a_stale_object_does_not_conflict(client: Client, namespace: str) -> None:
    created, _ = create_or_patch(client, stateful_set(namespace), sts_spec)
    cached = client.get(kinds.StatefulSet, "web", namespace)  # what the cache handed out
    # Meanwhile the object moves on (another controller, the user).
    client.patch(
        kinds.StatefulSet, "web", {"metadata": {"labels": {"moved": "on"}}}, namespace=namespace
    )

    stale = {**cached, "status": {**(cached.get("status") or {}), "replicas": 1}}
    with pytest.raises(Conflict):
        client.update_status(stale)  # what controllers do today

    rec = Recording(client)

    def observe(obj: dict[str, Any]) -> None:
        obj["status"]["replicas"] = 1
        obj["status"]["observedGeneration"] = obj["metadata"]["generation"]
        set_condition(obj, "Progressing", True, "Scaling", now=T0)

    before = repr(cached)
    patched = patch_status(rec, cached, observe)
    assert repr(cached) == before  # the cached object is untouched
    assert rec.verbs() == ["patch:status"]
    sent = rec.calls[0][1]
    assert set(sent) == {"status"}  # no resourceVersion, only status
    assert sent["status"]["replicas"] == 1
    assert [c["type"] for c in sent["status"]["conditions"]] == ["Progressing"]
    assert patched["status"]["replicas"] == 1
    assert patched["metadata"]["labels"] == {"moved": "on"}

    # Nothing changed: no request, the given object back.
    rec.calls.clear()
    assert patch_status(rec, patched, observe) is patched
    assert rec.calls == []
    assert rv(client.get(kinds.StatefulSet, "web", namespace)) == rv(patched) != rv(created)


def test_patch_status_with_optimistic_lock_refuses_a_stale_object(
    client: Client, namespace: str
) -> None:
    create_or_patch(client, stateful_set(namespace), sts_spec)
    cached = client.get(kinds.StatefulSet, "web", namespace)
    client.patch(
        kinds.StatefulSet, "web", {"metadata": {"labels": {"moved": "on"}}}, namespace=namespace
    )

    def observe(obj: dict[str, Any]) -> None:
        obj.setdefault("status", {})["replicas"] = 1

    with pytest.raises(Conflict):
        patch_status(client, cached, observe, optimistic_lock=True)
    fresh = client.get(kinds.StatefulSet, "web", namespace)
    patched = patch_status(client, fresh, observe, optimistic_lock=True)
    assert patched["status"]["replicas"] == 1


def test_patch_status_with_a_new_status(client: Client, namespace: str) -> None:
    create_or_patch(client, stateful_set(namespace), sts_spec)
    obj = patch_status(
        client,
        client.get(kinds.StatefulSet, "web", namespace),
        {"replicas": 1, "readyReplicas": 1, "currentRevision": "r1"},
    )
    assert obj["status"]["currentRevision"] == "r1"
    rec = Recording(client)
    obj = patch_status(rec, obj, {"replicas": 1, "readyReplicas": 1})  # currentRevision dropped
    assert rec.calls[0][1]["status"]["currentRevision"] is None
    assert "currentRevision" not in obj["status"]
    assert obj["status"]["readyReplicas"] == 1


# ------------------------------------------------------------------ finalizers and owners


def test_finalizer_helpers_compose_with_create_or_patch(client: Client, namespace: str) -> None:
    create_or_update(client, config_map(namespace), set_data(k="v"))

    obj, result = create_or_patch(
        client, config_map(namespace), lambda o: add_finalizer(o, FINALIZER)
    )
    assert result is OperationResult.UPDATED and contains_finalizer(obj, FINALIZER)
    _, result = create_or_patch(
        client, config_map(namespace), lambda o: add_finalizer(o, FINALIZER)
    )
    assert result is OperationResult.UNCHANGED

    client.delete(kinds.ConfigMap, "settings", namespace)
    terminating = client.get(kinds.ConfigMap, "settings", namespace)
    assert terminating["metadata"].get("deletionTimestamp")
    _, result = create_or_update(
        client, config_map(namespace), lambda o: remove_finalizer(o, FINALIZER)
    )
    assert result is OperationResult.UPDATED
    with ignoring_not_found():  # the last finalizer gone, the object is gone
        client.get(kinds.ConfigMap, "settings", namespace)
        pytest.fail("the object should be gone")
    with ignoring_not_found():
        client.delete(kinds.ConfigMap, "settings", namespace)


def test_owner_reference_composes_with_create_or_update(client: Client, namespace: str) -> None:
    owner, _ = create_or_update(client, stateful_set(namespace), sts_spec)

    def owned(obj: dict[str, Any]) -> None:
        obj["data"] = {"k": "v"}
        set_controller_reference(owner, obj)

    obj, result = create_or_update(client, config_map(namespace), owned)
    assert result is OperationResult.CREATED and is_controlled_by(obj, owner)
    _, result = create_or_update(client, config_map(namespace), owned)
    assert result is OperationResult.UNCHANGED


# ------------------------------------------------------------------ typed models


class ConfigMapModel(KubeModel):
    __kube_resource__: ClassVar[Resource] = Resource("", "v1", "ConfigMap", "configmaps", True)

    api_version: str = Field("v1", alias="apiVersion")
    kind: str = "ConfigMap"
    metadata: ObjectMeta
    data: dict[str, str] | None = None


def test_models_in_models_out(client: Client, namespace: str) -> None:
    given = ConfigMapModel(metadata=ObjectMeta(name="typed", namespace=namespace))
    seen: list[type] = []

    def mutate(cm: ConfigMapModel) -> None:
        seen.append(type(cm))
        cm.data = {"k": "v"}
        add_finalizer(cm, FINALIZER)

    obj, result = create_or_update(client, given, mutate)
    assert result is OperationResult.CREATED and isinstance(obj, ConfigMapModel)
    assert obj.data == {"k": "v"} and obj.metadata.finalizers == [FINALIZER]
    assert given.data is None  # the given model is not modified

    obj, result = create_or_update(client, given, mutate)
    assert result is OperationResult.UNCHANGED and isinstance(obj, ConfigMapModel)

    def release(cm: ConfigMapModel) -> None:
        remove_finalizer(cm, FINALIZER)
        cm.data = {"k": "v2"}

    obj, result = create_or_patch(client, given, release)
    assert result is OperationResult.UPDATED and isinstance(obj, ConfigMapModel)
    assert obj.data == {"k": "v2"} and not obj.metadata.finalizers
    assert seen and set(seen) == {ConfigMapModel}


# ------------------------------------------------------------------ no status subresource


def test_kinds_without_a_status_subresource(client: Client, namespace: str, wait_for: Any) -> None:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    any_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,  # no subresources: status is an ordinary field
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": any_object, "status": any_object},
                        }
                    },
                }
            ],
        },
    }
    client.create(crd)
    try:
        kind = f"{group}/v1/Gadget"
        gadget = {
            "apiVersion": f"{group}/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
        }
        wait_for(lambda: client.list(kind, namespace) is not None, message="CRD served")

        def both(obj: dict[str, Any]) -> None:
            obj["spec"] = {"size": 1}
            obj["status"] = {"phase": "Ready"}

        created, result = create_or_patch(client, gadget, both)
        assert result is OperationResult.CREATED
        assert created["status"] == {"phase": "Ready"}  # kept on create: no subresource

        rec = Recording(client)

        def status_only(obj: dict[str, Any]) -> None:
            obj["status"] = {"phase": "Done"}

        _, result = create_or_patch(rec, gadget, status_only)
        assert result is OperationResult.UPDATED  # one patch of the object carries status
        assert rec.calls[1] == ("patch:", {"status": {"phase": "Done"}})

        rec.calls.clear()
        patched = patch_status(rec, client.get(kind, "g", namespace), {"phase": "Gone"})
        assert rec.verbs() == ["patch:"]
        assert patched["status"] == {"phase": "Gone"}
    finally:
        with ignoring_not_found():
            client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"gadgets.{group}")
