"""Testing an operator under exactly its RBAC rules, on an API server with an RBAC authorizer.

A cluster that allows every authenticated request (the embedded server's default, and the
session's real backend with ``--authorization-mode=AlwaysAllow``) hides a missing grant. This
module gives a test a cluster that enforces RBAC and a client that has exactly the given
rules::

    from kube_runtime import rbac
    from my_operator import setup

    def test_the_operator_under_its_rules(client_with_rules, rbac_admin):
        granted = client_with_rules(rbac.rules_of(setup))  # a Client of a ServiceAccount
        manager = Manager(granted.client, leader_election=True,
                          leader_election_namespace=granted.namespace, ...)
        setup(manager)
        with running(manager):
            ...  # rbac_admin (system:masters) creates the objects and reads the results

* :func:`rbac_cluster`: a :class:`~kube_runtime.envtest.real.RealCluster` started with
  ``--authorization-mode=RBAC`` and the OwnerReferencesPermissionEnforcement admission plugin
  (``blockOwnerDeletion`` then needs ``update`` on the owner's ``finalizers``, as on clusters
  that enable it); :func:`embedded_rbac_cluster`: an
  :class:`~kube_runtime.envtest.cluster.EmbeddedCluster` with ``authorization="RBAC"``, which
  decides as kube-apiserver 1.20's authorizer and admission plugin do
  (:mod:`kube_runtime.envtest.server.authz`; ``tests/e2e/test_rbac_authorizer_e2e.py`` holds
  it to the real one). Their admin token is in ``system:masters``.
* :func:`granted`: a ServiceAccount with the ClusterRole, Role and bindings that
  ``kube-runtime rbac`` renders for the rules (:func:`kube_runtime.rbac.render`: the rules,
  events, and the leader-election Lease in the ServiceAccount's namespace), and a
  :class:`~kube_runtime.client.Client` authenticated with a token of it (TokenRequest); all
  deleted on the way out.
* The pytest plugin's fixtures (:mod:`kube_runtime.envtest.plugin`): ``rbac_cluster``
  (session-scoped, started on first use: the embedded one on the embedded backend, the real
  one on the real backend, which needs its binaries), ``rbac_admin`` (its admin client) and
  ``client_with_rules(rules, ...)`` (:func:`granted` for the test, undone after it).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kube_runtime import kinds
from kube_runtime import rbac as _rbac
from kube_runtime.client import Client
from kube_runtime.client.errors import AlreadyExists, NotFound
from kube_runtime.envtest.real import RealCluster

__all__ = [
    "ENFORCING_ADMISSION",
    "Grant",
    "embedded_rbac_cluster",
    "granted",
    "rbac_cluster",
    "token_client",
]

#: The admission plugin an RBAC cluster enables beyond the defaults: setting
#: ``blockOwnerDeletion`` needs ``update`` on the owner's ``finalizers`` subresource.
ENFORCING_ADMISSION = "--enable-admission-plugins=OwnerReferencesPermissionEnforcement"


def rbac_cluster(*, extra_apiserver_args: Sequence[str] = (), **options: Any) -> RealCluster:
    """A :class:`~kube_runtime.envtest.real.RealCluster` (not started) that enforces RBAC:
    ``--authorization-mode=RBAC`` and :data:`ENFORCING_ADMISSION`, then
    ``extra_apiserver_args`` (an audit log, say); ``options`` go to ``RealCluster``."""
    return RealCluster(
        authorization_mode="RBAC",
        extra_apiserver_args=[ENFORCING_ADMISSION, *extra_apiserver_args],
        **options,
    )


def embedded_rbac_cluster(**options: Any) -> Any:
    """An :class:`~kube_runtime.envtest.cluster.EmbeddedCluster` (not started) that enforces
    RBAC and OwnerReferencesPermissionEnforcement (``authorization="RBAC"``); ``options`` go
    to ``EmbeddedCluster``."""
    from kube_runtime.envtest.cluster import EmbeddedCluster

    return EmbeddedCluster(authorization="RBAC", **options)


def token_client(
    admin: Client, namespace: str, service_account: str, *, expiration_seconds: int = 3600
) -> Client:
    """A :class:`~kube_runtime.client.Client` of the cluster ``admin`` talks to, authenticated
    as ServiceAccount ``namespace/service_account`` with a token ``admin`` requests for it
    (TokenRequest, valid ``expiration_seconds``)."""
    answer = admin.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
        body={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": expiration_seconds},
        },
    )
    from kubernetes.client import Configuration

    base = admin.configuration
    config = Configuration()
    config.host = base.host
    config.ssl_ca_cert = base.ssl_ca_cert
    config.verify_ssl = base.verify_ssl
    config.api_key = {"authorization": f"Bearer {answer['status']['token']}"}
    return Client(config)


@dataclass
class Grant:
    """What :func:`granted` made: ``client`` is authenticated as ServiceAccount
    ``namespace/service_account`` (``user`` is its user name, as audit logs and
    SubjectAccessReviews name it), bound to ``objects`` (the rendered RBAC objects)."""

    client: Client
    namespace: str
    service_account: str
    rules: tuple[_rbac.Rule, ...]
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"


def _create(admin: Client, obj: dict[str, Any]) -> None:
    try:
        admin.create(obj)
    except AlreadyExists:
        pass


@contextlib.contextmanager
def granted(
    admin: Client,
    rules: Iterable[_rbac.Rule],
    *,
    namespace: str | None = None,
    name: str | None = None,
    leader_election: bool = True,
) -> Iterator[Grant]:
    """A ServiceAccount granted exactly ``rules`` (see the module docstring) for the block.

    ``admin`` must be allowed to grant them (``system:masters``). ``namespace`` holds the
    ServiceAccount and the leader-election Role (made when missing; default a new
    ``rbac-<random>``, deleted afterwards); ``name`` names the ServiceAccount, roles and
    bindings (default ``<namespace>-operator``: cluster-wide objects of concurrent tests do
    not meet). ``leader_election=False`` leaves out the Lease Role. ``rules`` that are not
    :class:`~kube_runtime.rbac.Rule` objects are a ``TypeError``."""
    rules = tuple(rules)
    wrong = [r for r in rules if not isinstance(r, _rbac.Rule)]
    if wrong:
        raise TypeError(f"granted() takes kube_runtime.rbac.Rule objects, not {wrong[0]!r}")
    own_namespace = namespace is None
    namespace = namespace or f"rbac-{uuid.uuid4().hex[:8]}"
    name = name or f"{namespace}-operator"
    _create(admin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    service_account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace},
    }
    made: list[dict[str, Any]] = []
    try:
        admin.create(service_account)
        made.append(service_account)
        objects = _rbac.render(
            rules,
            name=name,
            namespace=namespace,
            service_account=name,
            leader_election=leader_election,
        )
        for obj in objects:
            admin.create(obj)
            made.append(obj)
        client = token_client(admin, namespace, name)
        try:
            yield Grant(client, namespace, name, rules, objects)
        finally:
            client.close()
    finally:
        for obj in reversed(made):
            meta = obj["metadata"]
            try:
                admin.delete(kinds.Kind(obj["apiVersion"], obj["kind"]), meta["name"],
                             meta.get("namespace"))  # fmt: skip
            except NotFound:
                pass
        if own_namespace:
            with contextlib.suppress(Exception):
                admin.delete(kinds.Namespace, namespace)
