"""A user's operator under exactly the rules it declares, on an API server with
``--authorization-mode=RBAC`` and OwnerReferencesPermissionEnforcement (the
``client_with_rules`` fixture).

The operator is the kind the docs describe: a ``Site`` custom resource that owns a ConfigMap
(controller reference, so ``blockOwnerDeletion: true``), writes its status through the
status subresource, reads through the direct client and cleans up through a finalizer, with
leader election. Its rules are what ``@rbac.requires`` makes it declare (the setup check
refuses an ``owns()`` without ``sites/finalizers: update``); under them it converges and its
Site can be deleted, and without the ``finalizers`` grant kube-apiserver refuses its
ConfigMap. Both backends: on the embedded one the ``rbac_cluster`` fixture is an
``EmbeddedCluster(authorization="RBAC")``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime import Builder, Manager, kinds, rbac
from kube_runtime.client import Client, Forbidden, NotFound
from kube_runtime.controllerutil import create_or_patch, patch_status, set_controller_reference
from kube_runtime.crds import install_crd
from kube_runtime.envtest import running
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.finalizers import ensure_finalizer, ensure_finalizer_removed

GROUP = "rbac-e2e.kube-runtime.io"
SITE = f"{GROUP}/v1/Site"
FINALIZER = f"{GROUP}/cleanup"
TIMEOUT = 60.0

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"sites.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "sites", "singular": "site", "kind": "Site", "listKind": "SiteList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"greeting": {"type": "string"}},
                            },
                            "status": {
                                "type": "object",
                                "properties": {"observed": {"type": "string"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}

#: What the operator needs, as its author would declare it (``kube-runtime rbac`` prints these).
RULES = (
    rbac.rule(GROUP, "sites", rbac.READ, "patch"),  # the cache, re-reads, the finalizer patch
    rbac.rule(GROUP, "sites/status", "patch"),
    rbac.rule(GROUP, "sites/finalizers", "update"),  # blockOwnerDeletion on what it owns
    rbac.rule("", "configmaps", rbac.READ, "create", "patch"),
)


def _reconcile(manager: Manager, site: dict[str, Any]) -> None:
    api = manager.api_reader  # the direct client: gets go to the API server
    meta = site["metadata"]
    if meta.get("deletionTimestamp"):
        if FINALIZER in (meta.get("finalizers") or []):
            ensure_finalizer_removed(api, site, FINALIZER)
        return
    if FINALIZER not in (meta.get("finalizers") or []):
        site = ensure_finalizer(api, site, FINALIZER)
    greeting = (site.get("spec") or {}).get("greeting", "hello")

    def configure(cm: dict[str, Any]) -> None:
        cm["data"] = {"greeting": greeting}
        set_controller_reference(site, cm)

    create_or_patch(
        api,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
        },
        configure,
    )
    patch_status(api, site, {"observed": greeting})


def _setup(rules: tuple[rbac.Rule, ...]) -> Callable[[Manager], Any]:
    @rbac.requires(*rules)
    def setup(manager: Manager) -> Any:
        return (
            Builder(manager)
            .for_(SITE)
            .owns(kinds.ConfigMap)
            .complete_objects(lambda site: _reconcile(manager, site))
        )

    return setup


SETUP = _setup(RULES)


def _manager(client: Client, namespace: str) -> Manager:
    return Manager(
        client,
        namespace=namespace,
        leader_election=True,
        leader_election_id=f"site-{uuid.uuid4().hex[:6]}",
        leader_election_namespace=namespace,
        metrics_bind_address="0",
        health_probe_bind_address="0",
    )


def _site(name: str, namespace: str, greeting: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Site",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"greeting": greeting},
    }


def test_the_setup_check_asks_for_the_finalizers_grant_owns_needs() -> None:
    """What makes the author declare ``sites/finalizers`` (no cluster needed to fail)."""
    without = _setup(tuple(r for r in RULES if r.resources != ("sites/finalizers",)))
    from kube_runtime.client.fake import FakeClient
    from kube_runtime.client.mapping import Resource

    fake = FakeClient()
    fake.mapper.add(Resource(GROUP, "v1", "Site", "sites", True))
    manager = Manager(fake, metrics_bind_address="0", health_probe_bind_address="0")
    with pytest.raises(rbac.MissingPermissionError, match=r"rbac\.rule\('rbac-e2e\.kube-runtime\.io', 'sites/finalizers', 'update'\)"):  # fmt: skip
        without(manager)


def test_the_operator_converges_and_finalizes_under_exactly_its_rules(
    rbac_admin: Client, client_with_rules: Callable[..., Any]
) -> None:
    install_crd(rbac_admin, CRD)
    grant = client_with_rules(rbac.rules_of(SETUP))
    namespace = grant.namespace
    manager = _manager(grant.client, namespace)
    SETUP(manager)
    with running(manager):
        rbac_admin.create(_site("web", namespace, "hi"))

        def converged() -> bool:
            site = rbac_admin.get(SITE, "web", namespace)
            try:
                cm = rbac_admin.get(kinds.ConfigMap, "web", namespace)
            except NotFound:
                return False
            return (
                (site.get("status") or {}).get("observed") == "hi"
                and FINALIZER in site["metadata"].get("finalizers", [])
                and cm["data"] == {"greeting": "hi"}
            )

        wait_for(converged, TIMEOUT, message="the Site converges under its rules")
        owner = rbac_admin.get(kinds.ConfigMap, "web", namespace)["metadata"]["ownerReferences"]
        assert owner[0]["blockOwnerDeletion"] is True and owner[0]["controller"] is True
        rbac_admin.delete(SITE, "web", namespace)

        def gone() -> bool:
            try:
                rbac_admin.get(SITE, "web", namespace)
            except NotFound:
                return True
            return False

        wait_for(gone, TIMEOUT, message="the Site is finalized and deleted")


def test_without_the_finalizers_grant_the_owned_object_is_refused(
    rbac_admin: Client, client_with_rules: Callable[..., Any]
) -> None:
    install_crd(rbac_admin, CRD)
    rules = [r for r in RULES if r.resources != ("sites/finalizers",)]
    grant = client_with_rules(rules, leader_election=False)
    namespace = grant.namespace
    site = rbac_admin.create(_site("web", namespace, "hi"))
    cm: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "web", "namespace": namespace},
    }
    set_controller_reference(site, cm)
    with pytest.raises(Forbidden) as refused:
        grant.client.create(cm)
    assert "cannot set blockOwnerDeletion" in refused.value.message
    # The same request under the declared rules is allowed.
    full = client_with_rules(rbac.rules_of(SETUP), namespace=namespace, name="full")
    assert full.client.create(cm)["metadata"]["ownerReferences"][0]["blockOwnerDeletion"]


def test_without_the_status_grant_the_status_write_is_refused(
    rbac_admin: Client, client_with_rules: Callable[..., Any]
) -> None:
    """A write verb missing from the declared rules fails on both backends, with
    kube-apiserver's message naming the subresource."""
    install_crd(rbac_admin, CRD)
    rules = [r for r in RULES if r.resources != ("sites/status",)]
    grant = client_with_rules(rules, leader_election=False)
    namespace = grant.namespace
    site = rbac_admin.create(_site("web", namespace, "hi"))
    with pytest.raises(Forbidden) as refused:
        patch_status(grant.client, site, {"observed": "hi"})
    assert refused.value.message == (
        f'sites.{GROUP} "web" is forbidden: User "{grant.user}" cannot patch resource '
        f'"sites/status" in API group "{GROUP}" in the namespace "{namespace}"'
    )
