"""Typed reconcilers and objects their model does not accept, on both backends
(``KUBE_RUNTIME_BACKEND=real`` for kube-apiserver 1.20).

* An operator whose model gained ``replicas >= 1`` runs against objects stored before that
  rule (the operator upgraded before its CRD): ``complete_objects`` still gets the object (a
  lenient model), adds its finalizer, and on deletion runs the cleanup and lets it go.
* When the CRD itself gains the rule, kube-apiserver 1.20 (no validation ratcheting, which
  came with 1.28) refuses every update of the stored object, a finalizer's removal included;
  the embedded server agrees. The reconciler is reached all the same.
* The CRD schema ``crd generate`` writes for ``kube_runtime.models.Condition`` makes the API
  server refuse an invalid condition and accept those ``set_condition`` writes.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import Field, create_model

from codegen.crdgen import crd_for
from kube_runtime import Builder, Manager, finalizers, kinds
from kube_runtime.client import Client, Invalid, NotFound, Resource
from kube_runtime.conditions import set_condition
from kube_runtime.controllerutil import patch_status
from kube_runtime.crds import install_crd
from kube_runtime.envtest import running
from kube_runtime.models import Condition, KubeModel, ObjectMeta

FINALIZER = "lenient.example.com/cleanup"


class OldSpec(KubeModel):
    replicas: int = 1


class NewSpec(KubeModel):
    replicas: int = Field(1, ge=1)


class SiteStatus(KubeModel):
    conditions: list[Condition] | None = None


def site_models(group: str) -> tuple[type[KubeModel], type[KubeModel]]:
    """``(old, new)`` Site models of ``group``: the new one requires ``replicas >= 1``."""

    def model(spec: type[KubeModel]) -> type[KubeModel]:
        site = create_model(
            "Site",
            __base__=KubeModel,
            api_version=(str, Field(f"{group}/v1", alias="apiVersion")),
            kind=(str, "Site"),
            metadata=(ObjectMeta, ...),
            spec=(spec, ...),
            status=(SiteStatus | None, None),
        )
        site.__kube_resource__ = Resource(  # type: ignore[attr-defined]
            group=group,
            version="v1",
            kind="Site",
            plural="sites",
            namespaced=True,
            subresources=frozenset({"status"}),
        )
        return site

    return model(OldSpec), model(NewSpec)


@pytest.fixture
def sites(client: Client) -> Iterator[tuple[type[KubeModel], type[KubeModel]]]:
    """The Site CRD of a fresh group, installed from the old model; deleted afterwards."""
    group = f"t{uuid.uuid4().hex[:8]}.lenient.example.com"
    old, new = site_models(group)
    doc = crd_for([old])
    install_crd(client, doc)
    try:
        yield old, new
    finally:
        try:
            client.delete(kinds.CustomResourceDefinition, doc["metadata"]["name"])
        except NotFound:
            pass


def stored_site(model: type[KubeModel], namespace: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": model.__kube_resource__.api_version,  # type: ignore[attr-defined]
        "kind": "Site",
        "metadata": {"name": "s", "namespace": namespace},
        "spec": {"replicas": replicas},
    }


def gone(client: Client, kind: str, namespace: str) -> bool:
    try:
        client.get(kind, "s", namespace)
    except NotFound:
        return True
    return False


def test_an_object_the_new_model_refuses_is_finalized_and_deleted(
    client: Client,
    namespace: str,
    sites: tuple[type[KubeModel], type[KubeModel]],
    wait_for: Callable[..., Any],
) -> None:
    old, new = sites
    kind = old.__kube_resource__.api_version + "/Site"  # type: ignore[attr-defined]
    client.create(stored_site(old, namespace, 0))  # valid when stored
    cleaned: list[int] = []
    lock = threading.Lock()

    def reconcile(site: Any) -> None:
        if site.metadata.deletion_timestamp:
            with lock:
                cleaned.append(site.spec.replicas)  # the external cleanup
            finalizers.ensure_finalizer_removed(manager.api_reader, site, FINALIZER)
            return
        finalizers.ensure_finalizer(manager.api_reader, site, FINALIZER)

    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    Builder(manager).for_(new).complete_objects(reconcile)
    with running(manager):
        wait_for(
            lambda: (
                FINALIZER in (client.get(kind, "s", namespace)["metadata"].get("finalizers") or [])
            ),
            timeout=30,
            message="the finalizer added to the object the model refuses",
        )
        client.delete(kind, "s", namespace=namespace)
        wait_for(lambda: gone(client, kind, namespace), timeout=30, message="the Site gone")
    assert cleaned and set(cleaned) == {0}


def test_a_crd_that_gains_a_rule_refuses_updates_of_what_it_stored(
    client: Client,
    namespace: str,
    sites: tuple[type[KubeModel], type[KubeModel]],
    wait_for: Callable[..., Any],
) -> None:
    old, new = sites
    kind = old.__kube_resource__.api_version + "/Site"  # type: ignore[attr-defined]
    site = stored_site(old, namespace, 0)
    site["metadata"]["finalizers"] = [FINALIZER]
    client.create(site)
    name = f"sites.{old.__kube_resource__.group}"  # type: ignore[attr-defined]
    crd = client.get(kinds.CustomResourceDefinition, name)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["replicas"]["minimum"] = 1
    client.update(crd)

    def refused() -> bool:
        try:
            client.patch(kind, "s", {"metadata": {"labels": {"a": "b"}}}, namespace=namespace)
        except Invalid as e:
            return "spec.replicas" in e.message
        return False

    wait_for(refused, timeout=30, message="the new rule enforced")
    reached: list[Any] = []
    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    Builder(manager).for_(new).complete_objects(reached.append)
    with running(manager):
        client.delete(kind, "s", namespace=namespace)
        wait_for(
            lambda: any(s.metadata.deletion_timestamp for s in reached),
            timeout=30,
            message="the reconciler reached with the object being deleted",
        )
    with pytest.raises(Invalid, match=r"spec\.replicas"):  # no ratcheting before 1.28
        client.patch(kind, "s", {"metadata": {"finalizers": None}}, namespace=namespace)
    # What a user does: make the object valid, then the finalizer can go.
    client.patch(kind, "s", {"spec": {"replicas": 1}}, namespace=namespace)
    client.patch(kind, "s", {"metadata": {"finalizers": None}}, namespace=namespace)
    wait_for(lambda: gone(client, kind, namespace), timeout=30, message="the Site gone")


def test_the_condition_schema_refuses_invalid_conditions_and_takes_set_conditions(
    client: Client, namespace: str, sites: tuple[type[KubeModel], type[KubeModel]]
) -> None:
    old, _ = sites
    created = old.model_validate(client.create(stored_site(old, namespace, 1)))
    good = {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "2024-01-31T12:00:00Z",
        "reason": "Up",
        "message": "serving",
    }
    bad = {
        "reason ''": {**good, "reason": ""},
        "reason pattern": {**good, "reason": "not camel"},
        "reason missing": {k: v for k, v in good.items() if k != "reason"},
        "message missing": {k: v for k, v in good.items() if k != "message"},
        "time missing": {k: v for k, v in good.items() if k != "lastTransitionTime"},
        "type pattern": {**good, "type": "not a type"},
        "status enum": {**good, "status": "Maybe"},
        "generation": {**good, "observedGeneration": -1},
    }
    kind = old.__kube_resource__.api_version + "/Site"  # type: ignore[attr-defined]
    accepted = []
    for what, condition in bad.items():
        try:
            client.patch(
                kind,
                "s",
                {"status": {"conditions": [condition]}},
                namespace=namespace,
                subresource="status",
            )
            accepted.append(what)
        except Invalid:
            pass
    assert accepted == []

    def ready(site: Any) -> None:
        set_condition(site, "Ready", True, "MinimumReplicasAvailable", "1 of 1 ready")
        set_condition(site, "example.com/Degraded", False, "AsExpected", "nothing to report")

    patched = patch_status(client, created, ready)
    conditions = patched.status.conditions  # type: ignore[attr-defined]
    assert [(c.type, c.status, c.reason) for c in conditions] == [
        ("Ready", "True", "MinimumReplicasAvailable"),
        ("example.com/Degraded", "False", "AsExpected"),
    ]


def test_set_conditions_default_empty_message_is_stored(
    client: Client, namespace: str, sites: tuple[type[KubeModel], type[KubeModel]]
) -> None:
    """``message`` is required and may be empty (set_condition's default). kube-apiserver
    1.20.2 accepts ``""``; the real backend does once built with the kube-openapi#230 patch
    (``make real-apiserver``; a build without it refuses ``""`` as null, kubernetes#99804)."""
    old, _ = sites
    created = old.model_validate(client.create(stored_site(old, namespace, 1)))
    patched = patch_status(client, created, lambda s: set_condition(s, "Ready", True, "Up"))
    assert patched.status.conditions[0].message == ""  # type: ignore[attr-defined]
