"""Lenient typed reads: a stored object its model no longer accepts still reaches the object
reconciler (``complete_objects``), its finalizer can be removed, and the write helpers answer
it as a model (kube_runtime.models.validate_lenient, reconcile.ObjectReconciler)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field, ValidationError

from kube_runtime import controllerutil, finalizers
from kube_runtime.client import Resource
from kube_runtime.client.fake import FakeClient
from kube_runtime.models import KubeModel, ObjectMeta, validate_lenient
from kube_runtime.reconcile import InvalidObject, Request, Result, as_reconciler

FINALIZER = "example.com/cleanup"


class Port(KubeModel):
    port: int = Field(ge=1)


class SiteSpec(KubeModel):
    replicas: int = Field(ge=1)  # the rule the CRD gained after objects were stored
    image: str
    tier: Literal["web", "batch"] = "web"
    ports: list[Port] | None = None


class SiteStatus(KubeModel):
    observed: int | None = None


class Site(KubeModel):
    __kube_resource__: ClassVar[Resource] = Resource(
        group="example.com",
        version="v1",
        kind="Site",
        plural="sites",
        namespaced=True,
        subresources=frozenset({"status"}),
    )
    api_version: str = Field("example.com/v1", alias="apiVersion")
    kind: str = "Site"
    metadata: ObjectMeta
    spec: SiteSpec
    status: SiteStatus | None = None


def site(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Site",
        "metadata": {"name": "s", "namespace": "ns", **meta},
        "spec": spec,
    }


STORED = {"replicas": 0, "tier": "edge", "ports": [{"port": 80}, {"port": 0}], "legacy": True}


# ------------------------------------------------------------------ validate_lenient


def test_a_valid_object_is_validated_as_usual() -> None:
    obj, error = validate_lenient(Site, site({"replicas": 2, "image": "nginx"}))
    assert error is None and obj == Site.model_validate(site({"replicas": 2, "image": "nginx"}))


def test_an_invalid_object_is_typed_where_it_validates_and_kept_where_not() -> None:
    raw = site(STORED, finalizers=[FINALIZER])
    obj, error = validate_lenient(Site, raw)
    assert isinstance(error, ValidationError)
    assert isinstance(obj, Site) and isinstance(obj.spec, SiteSpec)
    assert obj.metadata.finalizers == [FINALIZER]  # metadata typed as always
    assert (obj.spec.replicas, obj.spec.tier) == (0, "edge")  # as stored
    assert obj.spec.ports is not None and all(isinstance(p, Port) for p in obj.spec.ports)
    assert obj.spec.image is None  # missing required field: Go's zero value to read...
    assert obj.to_wire() == raw  # ...never written; unknown keys kept
    obj.spec.image = "nginx"
    assert obj.to_wire()["spec"]["image"] == "nginx"


# ------------------------------------------------------------------ the object reconciler


def fake(*objects: dict[str, Any]) -> FakeClient:
    client = FakeClient(objects=(), status_subresource_kinds=[Site])
    client.register(Site)
    return client.with_objects(*objects)


def test_an_invalid_object_reaches_the_reconciler_leniently() -> None:
    client = fake(site(STORED))
    seen: list[Site] = []
    as_reconciler(client, Site, seen.append).reconcile(Request("s", "ns"))
    assert len(seen) == 1 and isinstance(seen[0], Site) and seen[0].spec.replicas == 0
    with pytest.raises(ValidationError):  # what every typed reconcile raised before
        client.get(Site, "s", "ns")


def test_on_invalid_gets_the_fields_and_the_reconciler_is_not_called() -> None:
    client = fake(site(STORED))
    called: list[Any] = []
    invalid: list[InvalidObject] = []

    def on_invalid(obj: InvalidObject) -> Result:
        invalid.append(obj)
        return Result(requeue_after=30)

    reconciler = as_reconciler(client, Site, called.append, on_invalid)
    assert reconciler.reconcile(Request("s", "ns")) == Result(requeue_after=30)
    assert called == []
    [got] = invalid
    assert got.request == Request("s", "ns") and not got.being_deleted
    assert got.raw["spec"] == STORED and got.object.spec.replicas == 0
    assert [str(e) for e in got.field_errors] == [
        "spec.replicas: Invalid value: 0: must be greater than or equal to 1",
        "spec.image: Required value",
        "spec.tier: Invalid value: \"edge\": input should be 'web' or 'batch'",
        "spec.ports[1].port: Invalid value: 0: must be greater than or equal to 1",
    ]


def test_an_invalid_object_being_deleted_is_finalized_and_goes() -> None:
    stored = site(STORED, finalizers=[FINALIZER], deletionTimestamp="2024-01-31T12:00:00Z")
    client = fake(stored)
    cleaned: list[str] = []

    def reconcile(obj: Site) -> None:
        assert obj.metadata.deletion_timestamp is not None
        cleaned.append(obj.spec.tier)
        gone = finalizers.ensure_finalizer_removed(client, obj, FINALIZER)
        assert isinstance(gone, Site) and gone.spec.replicas == 0  # answered leniently

    def on_invalid(obj: InvalidObject) -> None:
        raise AssertionError("an object being deleted goes to the reconciler")

    as_reconciler(client, Site, reconcile, on_invalid).reconcile(Request("s", "ns"))
    assert cleaned == ["edge"]
    assert client.objects(Site) == []


def test_finalizer_and_status_writes_answer_an_invalid_object_as_a_model() -> None:
    client = fake(site(STORED))
    obj, _ = validate_lenient(Site, client.get("example.com/v1/Site", "s", "ns"))
    added = finalizers.ensure_finalizer(client, obj, FINALIZER)
    assert isinstance(added, Site) and added.metadata.finalizers == [FINALIZER]
    patched = controllerutil.patch_status(client, added, {"observed": 0})
    assert isinstance(patched, Site) and patched.status is not None
    assert patched.status.observed == 0 and patched.spec.replicas == 0
    live, result = controllerutil.create_or_patch(
        client, Site.model_construct(metadata=ObjectMeta(name="s", namespace="ns")), lambda s: None
    )
    assert isinstance(live, Site) and result is controllerutil.OperationResult.UNCHANGED
