"""The RBAC authorizer's decisions and 403 answers, the same on both backends.

Each test makes a ServiceAccount of its own (namespace ``<test>-<random>``), binds it to a
few rules through the ``rbac_admin`` client (``system:masters``) of the ``rbac_cluster``
fixture, and asks as the ServiceAccount (a TokenRequest token): on the real backend a
kube-apiserver 1.20 with ``--authorization-mode=RBAC`` and OwnerReferencesPermissionEnforcement
answers, on the embedded one :mod:`kube_runtime.envtest.server.authz`; the messages are
kube-apiserver's, so where the two differ the embedded server is wrong. kube-apiserver reads
roles and bindings through informers, so each test first waits until a request its rules
allow is allowed.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.client import ApiError, Client, Forbidden, Invalid, NotFound, Unauthorized
from kube_runtime.envtest.rbac import token_client
from kube_runtime.envtest.waiting import wait_for

RBAC_V1 = "rbac.authorization.k8s.io/v1"
TIMEOUT = 30.0


@dataclass
class Subject:
    """A ServiceAccount ``namespace/sa``, a client authenticated as it, and the cluster-wide
    objects made for it (deleted after the test)."""

    namespace: str
    client: Client
    cluster_objects: list[tuple[kinds.Kind, str]] = field(default_factory=list)

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.namespace}:sa"


@pytest.fixture
def subject(rbac_admin: Client) -> Iterator[Subject]:
    namespace = f"authz-{uuid.uuid4().hex[:8]}"
    rbac_admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    rbac_admin.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": namespace}}
    )  # fmt: skip
    made = Subject(namespace, token_client(rbac_admin, namespace, "sa"))
    try:
        yield made
    finally:
        made.client.close()
        for kind, name in made.cluster_objects:
            with contextlib.suppress(NotFound):
                rbac_admin.delete(kind, name)
        rbac_admin.delete(kinds.Namespace, namespace)


def _grant(
    admin: Client,
    subject: Subject,
    rules: list[dict[str, Any]],
    *,
    cluster_wide: bool = False,
    role_kind: str | None = None,
    role_name: str | None = None,
) -> None:
    """A Role (a ClusterRole with ``cluster_wide`` or ``role_kind="ClusterRole"``) of
    ``rules`` bound to the ServiceAccount by a RoleBinding in its namespace or, with
    ``cluster_wide``, a ClusterRoleBinding. ``role_name`` binds a role of that name instead
    (which may not exist)."""
    name = f"{subject.namespace}-{uuid.uuid4().hex[:4]}"
    kind = role_kind or ("ClusterRole" if cluster_wide else "Role")
    namespaced = {"namespace": subject.namespace}
    if role_name is None:
        meta = {"name": name, **(namespaced if kind == "Role" else {})}
        admin.create({"apiVersion": RBAC_V1, "kind": kind, "metadata": meta, "rules": rules})
        if kind == "ClusterRole":
            subject.cluster_objects.append((kinds.Kind(RBAC_V1, kind), name))
    binding_kind = "ClusterRoleBinding" if cluster_wide else "RoleBinding"
    admin.create(
        {
            "apiVersion": RBAC_V1,
            "kind": binding_kind,
            "metadata": {"name": name, **({} if cluster_wide else namespaced)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role_name or name},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": subject.namespace}],
        }
    )  # fmt: skip
    if cluster_wide:
        subject.cluster_objects.append((kinds.Kind(RBAC_V1, binding_kind), name))


def _answer(call: Callable[[], Any]) -> ApiError | None:
    try:
        call()
    except ApiError as e:
        return e
    return None


def _allowed(call: Callable[[], Any]) -> bool:
    """The request got past authorization (it may still be refused for another reason)."""
    found = _answer(call)
    return not isinstance(found, Forbidden | Unauthorized)


def _wait_allowed(call: Callable[[], Any]) -> None:
    wait_for(lambda: _allowed(call), TIMEOUT, message="the grant takes effect")


def _refused(call: Callable[[], Any]) -> dict[str, Any]:
    found = _answer(call)
    assert isinstance(found, Forbidden), found
    return found.status


def _cm(name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, **meta}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def _forbidden(user: str, verb: str, resource: str, group: str, where: str) -> str:
    return f'User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {where}'


def test_a_missing_verb_is_refused_with_kube_apiservers_message(
    rbac_admin: Client, subject: Subject
) -> None:
    ns = subject.namespace
    _grant(
        rbac_admin, subject, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    )
    sa = subject.client
    _wait_allowed(lambda: sa.get(kinds.ConfigMap, "absent", ns))
    status = _refused(lambda: sa.create(_cm("x", ns)))
    where = f'in the namespace "{ns}"'
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "configmaps is forbidden: "
        + _forbidden(subject.user, "create", "configmaps", "", where),
        "reason": "Forbidden",
        "details": {"kind": "configmaps"},
        "code": 403,
    }
    status = _refused(lambda: sa.delete(kinds.ConfigMap, "x", ns))
    assert status["message"] == 'configmaps "x" is forbidden: ' + _forbidden(
        subject.user, "delete", "configmaps", "", where
    )
    assert status["details"] == {"name": "x", "kind": "configmaps"}
    # a collection read is list, a watch with a name selector names the object
    status = _refused(lambda: sa.request("GET", f"/apis/apps/v1/namespaces/{ns}/deployments"))
    assert status["message"] == "deployments.apps is forbidden: " + _forbidden(
        subject.user, "list", "deployments", "apps", where
    )
    assert status["details"] == {"group": "apps", "kind": "deployments"}
    watch = f"/api/v1/namespaces/{ns}/configmaps?watch=1&fieldSelector=metadata.name%3Dx"
    status = _refused(lambda: sa.request("GET", watch))
    assert status["message"] == 'configmaps "x" is forbidden: ' + _forbidden(
        subject.user, "watch", "configmaps", "", where
    )
    status = _refused(lambda: sa.request("DELETE", f"/api/v1/namespaces/{ns}/configmaps"))
    assert "cannot deletecollection resource" in status["message"]


def test_subresources_need_their_own_grant_and_star_slash_grants_one_of_every_resource(
    rbac_admin: Client, subject: Subject
) -> None:
    ns = subject.namespace
    _grant(
        rbac_admin,
        subject,
        [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            {"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["get"]},
        ],
    )
    sa = subject.client
    _wait_allowed(lambda: sa.get(kinds.Pod, "p", ns))
    status = _refused(lambda: sa.request("GET", f"/api/v1/namespaces/{ns}/pods/p/status"))
    assert status["message"] == 'pods "p" is forbidden: ' + _forbidden(
        subject.user, "get", "pods/status", "", f'in the namespace "{ns}"'
    )
    assert status["details"] == {"name": "p", "kind": "pods"}
    scale = f"/apis/apps/v1/namespaces/{ns}/deployments/d/scale"
    assert isinstance(_answer(lambda: sa.request("GET", scale)), NotFound)  # allowed
    status = _refused(lambda: sa.request("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/d"))
    assert status["message"].startswith('deployments.apps "d" is forbidden: ')


def test_resource_names_allow_only_requests_that_name_the_object(
    rbac_admin: Client, subject: Subject
) -> None:
    ns = subject.namespace
    rules = [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["only"],
         "verbs": ["get", "list", "create", "update"]},
    ]  # fmt: skip
    _grant(rbac_admin, subject, rules)
    sa = subject.client
    _wait_allowed(lambda: sa.get(kinds.ConfigMap, "only", ns))
    assert isinstance(_answer(lambda: sa.get(kinds.ConfigMap, "only", ns)), NotFound)
    where = f'in the namespace "{ns}"'
    status = _refused(lambda: sa.get(kinds.ConfigMap, "other", ns))
    assert status["message"] == 'configmaps "other" is forbidden: ' + _forbidden(
        subject.user, "get", "configmaps", "", where
    )
    # a create names no object in its URL, a plain list neither
    status = _refused(lambda: sa.create(_cm("only", ns)))
    assert status["message"] == "configmaps is forbidden: " + _forbidden(
        subject.user, "create", "configmaps", "", where
    )
    _refused(lambda: sa.list(kinds.ConfigMap, ns))
    # ...but a list with a metadata.name field selector does
    listed = sa.request(
        "GET", f"/api/v1/namespaces/{ns}/configmaps?fieldSelector=metadata.name%3Donly"
    )
    assert listed["items"] == []


def test_a_role_binding_grants_in_its_namespace_and_a_cluster_role_binding_everywhere(
    rbac_admin: Client, subject: Subject
) -> None:
    ns = subject.namespace
    rules = [
        {"apiGroups": [""], "resources": ["configmaps", "namespaces"], "verbs": ["list", "get"]}
    ]
    _grant(rbac_admin, subject, rules, role_kind="ClusterRole")  # a RoleBinding to it
    sa = subject.client
    _wait_allowed(lambda: sa.list(kinds.ConfigMap, ns))
    status = _refused(lambda: sa.list(kinds.ConfigMap, "default"))
    assert status["message"] == "configmaps is forbidden: " + _forbidden(
        subject.user, "list", "configmaps", "", 'in the namespace "default"'
    )
    status = _refused(lambda: sa.list(kinds.ConfigMap))
    assert status["message"] == "configmaps is forbidden: " + _forbidden(
        subject.user, "list", "configmaps", "", "at the cluster scope"
    )
    # a namespace's own path is in its namespace: its RoleBindings apply
    assert sa.get(kinds.Namespace, ns)["metadata"]["name"] == ns
    status = _refused(lambda: sa.get(kinds.Namespace, "default"))
    assert status["message"] == 'namespaces "default" is forbidden: ' + _forbidden(
        subject.user, "get", "namespaces", "", 'in the namespace "default"'
    )
    status = _refused(lambda: sa.list(kinds.Namespace))
    assert status["message"].endswith("at the cluster scope")
    _grant(rbac_admin, subject, rules, cluster_wide=True)
    _wait_allowed(lambda: sa.list(kinds.ConfigMap))
    assert _allowed(lambda: sa.list(kinds.ConfigMap, "default"))


def test_groups_and_missing_roles(rbac_admin: Client, subject: Subject) -> None:
    ns = subject.namespace
    rbac_admin.create(
        {
            "apiVersion": RBAC_V1,
            "kind": "RoleBinding",
            "metadata": {"name": "group", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view-secrets-" + ns},
            "subjects": [{"kind": "Group", "name": f"system:serviceaccounts:{ns}", "apiGroup": "rbac.authorization.k8s.io"}],
        }
    )  # fmt: skip
    rbac_admin.create(
        {"apiVersion": RBAC_V1, "kind": "ClusterRole", "metadata": {"name": "view-secrets-" + ns},
         "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}
    )  # fmt: skip
    sa = subject.client
    try:
        _wait_allowed(lambda: sa.get(kinds.Secret, "s", ns))
        _grant(rbac_admin, subject, [], role_name="missing")  # a RoleBinding to no Role
        expected = (
            "secrets is forbidden: "
            + _forbidden(subject.user, "list", "secrets", "", f'in the namespace "{ns}"')
            + ': RBAC: role.rbac.authorization.k8s.io "missing" not found'
        )

        def with_reason() -> bool:
            return _refused(lambda: sa.list(kinds.Secret, ns))["message"] == expected

        wait_for(with_reason, TIMEOUT, message="the refusal names the missing Role")
    finally:
        rbac_admin.delete(kinds.Kind(RBAC_V1, "ClusterRole"), "view-secrets-" + ns)


def test_non_resource_urls_and_discovery(rbac_admin: Client, subject: Subject) -> None:
    sa = subject.client
    # the bootstrap roles: discovery and version for every authenticated user
    assert sa.request("GET", "/api")["kind"] == "APIVersions"
    assert sa.request("GET", "/apis/apps/v1")["groupVersion"] == "apps/v1"
    assert "gitVersion" in sa.request("GET", "/version")
    status = _refused(lambda: sa.request("GET", "/logs/x"))
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'forbidden: User "{subject.user}" cannot get path "/logs/x"',
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }
    _grant(
        rbac_admin, subject, [{"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}], cluster_wide=True
    )
    _wait_allowed(lambda: sa.request("GET", "/logs/x"))
    _refused(lambda: sa.request("GET", "/logsx"))


def test_self_subject_access_reviews(rbac_admin: Client, subject: Subject) -> None:
    ns = subject.namespace
    _grant(
        rbac_admin, subject, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    )
    sa = subject.client
    _wait_allowed(lambda: sa.get(kinds.ConfigMap, "absent", ns))

    binding = _binding_of(rbac_admin, ns)

    def review(**attributes: Any) -> dict[str, Any]:
        answer = sa.request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body={
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": attributes,
            },
        )
        assert answer["kind"] == "SelfSubjectAccessReview"
        return answer["status"]

    assert review(
        resourceAttributes={"verb": "get", "resource": "configmaps", "namespace": ns}
    ) == {
        "allowed": True,
        "reason": f'RBAC: allowed by RoleBinding "{binding}/{ns}" of Role "{binding}" '
        f'to ServiceAccount "sa/{ns}"',
    }
    assert review(
        resourceAttributes={"verb": "list", "resource": "configmaps", "namespace": ns}
    ) == {"allowed": False}
    assert review(nonResourceAttributes={"path": "/version", "verb": "get"})["allowed"] is True
    assert review(nonResourceAttributes={"path": "/logs", "verb": "get"}) == {"allowed": False}
    neither = _answer(lambda: review())
    assert isinstance(neither, Invalid) and neither.status["message"] == (
        '.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
        "must be specified"
    )
    both = _answer(
        lambda: review(
            resourceAttributes={"verb": "get", "resource": "pods"},
            nonResourceAttributes={"path": "/x", "verb": "get"},
        )
    )
    assert isinstance(both, Invalid) and both.status["message"] == (
        '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: '
        'Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be '
        "specified in combination with resourceAttributes"
    )


def _binding_of(admin: Client, namespace: str) -> str:
    (binding,) = admin.list(kinds.Kind(RBAC_V1, "RoleBinding"), namespace)["items"]
    return str(binding["metadata"]["name"])


def test_an_unknown_token_is_401(rbac_admin: Client, subject: Subject) -> None:
    from kubernetes.client import Configuration

    config = Configuration()
    base = rbac_admin.configuration
    config.host, config.ssl_ca_cert, config.verify_ssl = base.host, base.ssl_ca_cert, True
    config.api_key = {"authorization": "Bearer not-a-token"}
    with Client(config) as stranger:
        found = _answer(lambda: stranger.list(kinds.ConfigMap, subject.namespace))
    assert isinstance(found, Unauthorized)
    assert found.status["message"] == "Unauthorized"


def test_a_token_request_is_answered_as_by_kube_apiserver(
    rbac_admin: Client, subject: Subject
) -> None:
    path = f"/api/v1/namespaces/{subject.namespace}/serviceaccounts/sa/token"
    review = rbac_admin.request(
        "POST", path, body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"}
    )
    assert review["kind"] == "TokenRequest" and review["apiVersion"] == "authentication.k8s.io/v1"
    assert review["metadata"]["creationTimestamp"] is None
    assert review["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {"f:expirationSeconds": {}}
    }
    assert review["spec"] == {
        "audiences": ["https://kubernetes.default.svc.cluster.local"],
        "expirationSeconds": 3600,
        "boundObjectRef": None,
    }
    assert review["status"]["token"].count(".") == 2 and review["status"]["expirationTimestamp"]
    short = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 100}}  # fmt: skip
    found = _answer(lambda: rbac_admin.request("POST", path, body=short))
    assert found is not None and found.status["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 100: may not specify a duration less than 10 minutes"
    )
    missing = path.replace("/sa/", "/nobody/")
    found = _answer(lambda: rbac_admin.request("POST", missing, body=short | {"spec": {}}))
    assert (
        isinstance(found, NotFound)
        and found.status["message"] == 'serviceaccounts "nobody" not found'
    )


def test_block_owner_deletion_needs_update_of_the_owners_finalizers(
    rbac_admin: Client, subject: Subject
) -> None:
    ns = subject.namespace
    owner = rbac_admin.create(_cm("owner", ns))
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    _grant(
        rbac_admin,
        subject,
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "update"]}],
    )
    sa = subject.client
    _wait_allowed(lambda: sa.get(kinds.ConfigMap, "owner", ns))
    child = _cm("child", ns, ownerReferences=[ref])
    status = _refused(lambda: sa.create(child))
    assert status["message"] == (
        'configmaps "child" is forbidden: cannot set blockOwnerDeletion if an ownerReference '
        "refers to a resource you can't set finalizers on: , <nil>"
    )
    assert status["details"] == {"name": "child", "kind": "configmaps"}
    # without blockOwnerDeletion the create is allowed; adding a reference on an update
    # needs delete of the object itself
    plain = sa.create(_cm("child", ns, ownerReferences=[{**ref, "blockOwnerDeletion": False}]))
    other = rbac_admin.create(_cm("other", ns))
    plain["metadata"]["ownerReferences"].append(
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": other["metadata"]["uid"]}
    )
    status = _refused(lambda: sa.update(plain))
    assert status["message"] == (
        'configmaps "child" is forbidden: cannot set an ownerRef on a resource you can\'t '
        "delete: , <nil>"
    )
    _grant(
        rbac_admin,
        subject,
        [
            {"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["update"]},
        ],
        role_kind="ClusterRole",
    )
    second = _cm("second", ns, ownerReferences=[ref])
    _wait_allowed(lambda: sa.create(second))  # once the finalizers grant takes effect
    assert rbac_admin.get(kinds.ConfigMap, "second", ns)["metadata"]["ownerReferences"][0][
        "blockOwnerDeletion"
    ]
