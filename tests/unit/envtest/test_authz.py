"""The embedded server's authentication and RBAC authorizer (kube_runtime.envtest.server.authz):
upstream's rule evaluation, request attributes, bindings and 403 wording, in process.
``tests/e2e/test_rbac_authorizer_e2e.py`` holds the same decisions to kube-apiserver 1.20."""

from __future__ import annotations

import types
from typing import Any

import orjson
import pytest

from kube_runtime.client import Forbidden, Invalid, NotFound, Unauthorized
from kube_runtime.envtest.server import authz
from kube_runtime.envtest.server.authz import Attributes, User
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import Store

ALICE = User("alice", ("devs", "system:authenticated"))
RBAC = "rbac.authorization.k8s.io"


def _res(verb: str, resource: str, *, group: str = "", sub: str = "", name: str = "",
         namespace: str = "ns") -> Attributes:  # fmt: skip
    return Attributes(ALICE, verb, True, "", namespace, group, "v1", resource, sub, name)


def _path(verb: str, path: str) -> Attributes:
    return Attributes(ALICE, verb, False, path=path)


@pytest.mark.parametrize(
    ("rule", "attrs", "allowed"),
    [
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, _res("get", "pods"), True),
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, _res("list", "pods"), False),
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}, _res("delete", "pods"), True),
        ({"apiGroups": ["apps"], "resources": ["pods"], "verbs": ["*"]}, _res("get", "pods"), False),
        ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}, _res("get", "x", group="a.io"), True),
        # a subresource is its own resource...
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, _res("get", "pods", sub="status"), False),
        ({"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]}, _res("get", "pods", sub="status"), True),
        ({"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get"]}, _res("get", "pods"), False),
        # ..."*/scale" is that subresource of every resource, "*" everything
        ({"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["get"]}, _res("get", "deployments", group="apps", sub="scale"), True),
        ({"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["get"]}, _res("get", "deployments", group="apps"), False),
        ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}, _res("get", "pods", sub="log"), True),
        # resourceNames: only requests that name the object
        ({"apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"], "verbs": ["*"]}, _res("get", "cm", name="a"), True),
        ({"apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"], "verbs": ["*"]}, _res("get", "cm", name="b"), False),
        ({"apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"], "verbs": ["*"]}, _res("create", "cm"), False),
        ({"apiGroups": [""], "resources": ["cm"], "resourceNames": ["a"], "verbs": ["*"]}, _res("list", "cm"), False),
        # non-resource URLs: exact, a trailing "*" as a prefix, "*" all; never a resource
        ({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, _path("get", "/healthz"), True),
        ({"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, _path("get", "/healthz/etcd"), False),
        ({"nonResourceURLs": ["/healthz*"], "verbs": ["get"]}, _path("get", "/healthz/etcd"), True),
        ({"nonResourceURLs": ["/api/*"], "verbs": ["get"]}, _path("get", "/api"), False),
        ({"nonResourceURLs": ["*"], "verbs": ["*"]}, _path("post", "/anything"), True),
        ({"nonResourceURLs": ["/metrics"], "verbs": ["get"]}, _path("post", "/metrics"), False),
        ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, _path("get", "/metrics"), False),
        ({"nonResourceURLs": ["*"], "verbs": ["*"]}, _res("get", "pods"), False),
    ],
)  # fmt: skip
def test_rule_allows(rule: dict[str, Any], attrs: Attributes, allowed: bool) -> None:
    assert authz.rule_allows(attrs, rule) is allowed


def _attrs(method: str, target: str) -> tuple[Any, ...]:
    path, _, query = target.partition("?")
    params = dict(p.split("=", 1) for p in query.split("&") if p)
    a = authz.request_attributes(ALICE, method, path, params.get)
    if not a.resource_request:
        return (a.verb, a.path)
    return (a.verb, a.api_group, a.namespace, a.resource, a.subresource, a.name)


@pytest.mark.parametrize(
    ("method", "target", "expected"),
    [
        ("GET", "/api/v1/namespaces/ns/pods", ("list", "", "ns", "pods", "", "")),
        ("GET", "/api/v1/namespaces/ns/pods?watch=true", ("watch", "", "ns", "pods", "", "")),
        ("GET", "/api/v1/watch/namespaces/ns/pods/p", ("watch", "", "ns", "pods", "", "p")),
        ("GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name=p", ("list", "", "ns", "pods", "", "p")),
        ("GET", "/api/v1/namespaces/ns/pods?fieldSelector=metadata.name!=p", ("list", "", "ns", "pods", "", "")),
        ("GET", "/api/v1/pods", ("list", "", "", "pods", "", "")),
        ("HEAD", "/api/v1/namespaces/ns/pods/p", ("get", "", "ns", "pods", "", "p")),
        ("PUT", "/api/v1/namespaces/ns/pods/p/status", ("update", "", "ns", "pods", "status", "p")),
        ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", ("patch", "apps", "ns", "deployments", "scale", "d")),
        ("POST", "/apis/apps/v1/namespaces/ns/deployments", ("create", "apps", "ns", "deployments", "", "")),
        ("DELETE", "/api/v1/namespaces/ns/pods", ("deletecollection", "", "ns", "pods", "", "")),
        ("DELETE", "/api/v1/namespaces/ns/pods/p", ("delete", "", "ns", "pods", "", "p")),
        # a namespace is in its own namespace; its status and finalize too
        ("GET", "/api/v1/namespaces/ns", ("get", "", "ns", "namespaces", "", "ns")),
        ("PUT", "/api/v1/namespaces/ns/finalize", ("update", "", "ns", "namespaces", "finalize", "ns")),
        ("GET", "/api/v1/namespaces", ("list", "", "", "namespaces", "", "")),
        ("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/x", ("get", RBAC, "", "clusterroles", "", "x")),
        # too short for a resource: a non-resource path with the method as verb
        ("GET", "/api/v1", ("get", "/api/v1")),
        ("GET", "/apis/apps/v1", ("get", "/apis/apps/v1")),
        ("GET", "/version", ("get", "/version")),
        ("POST", "/metrics", ("post", "/metrics")),
    ],
)  # fmt: skip
def test_request_attributes_as_upstreams_request_info(
    method: str, target: str, expected: tuple[Any, ...]
) -> None:
    assert _attrs(method, target) == expected


# --------------------------------------------------------------------------- bindings


def _store(*objects: dict[str, Any]) -> Store:
    store = Store(Registry())
    ns_info = store.registry.by_key("", "namespaces")
    assert ns_info is not None
    for name in ("ns", "a", "b", "c"):
        store.create(ns_info, None, {"metadata": {"name": name}})
    for obj in objects:
        plural = {
            "Role": "roles",
            "ClusterRole": "clusterroles",
            "RoleBinding": "rolebindings",
            "ClusterRoleBinding": "clusterrolebindings",
            "ServiceAccount": "serviceaccounts",
        }[obj["kind"]]
        group = "" if plural == "serviceaccounts" else RBAC
        info = store.registry.by_key(group, plural)
        assert info is not None
        store.create(info, obj["metadata"].get("namespace"), obj)
    return store


def _role(
    name: str, rules: list[dict[str, Any]], namespace: str | None = None, **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
    meta.update(extra.pop("meta", {}))
    kind = "Role" if namespace else "ClusterRole"
    return {"apiVersion": f"{RBAC}/v1", "kind": kind, "metadata": meta, "rules": rules, **extra}


def _binding(
    name: str,
    role_kind: str,
    role: str,
    subjects: list[dict[str, Any]],
    namespace: str | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding" if namespace else "ClusterRoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
        "subjects": subjects,
    }  # fmt: skip


READ_CM = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
SA = authz.service_account_user("ns", "op")


def test_service_account_users_are_named_and_grouped_as_upstream() -> None:
    assert (
        User(
            "system:serviceaccount:ns:op",
            ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"),
        )
        == SA
    )


def test_subjects_user_group_and_service_account() -> None:
    store = _store(
        _role("read", READ_CM),
        _binding("by-user", "ClusterRole", "read", [{"kind": "User", "name": "alice"}], "a"),
        _binding("by-group", "ClusterRole", "read", [{"kind": "Group", "name": "devs"}], "b"),
        # a RoleBinding's ServiceAccount defaults to the binding's namespace
        _binding("by-sa", "ClusterRole", "read", [{"kind": "ServiceAccount", "name": "op"}], "ns"),
        _binding("other-sa", "ClusterRole", "read",
                 [{"kind": "ServiceAccount", "name": "op", "namespace": "elsewhere"}], "c"),
    )  # fmt: skip
    authorizer = authz.RbacAuthorizer(store)

    def allowed(user: User, namespace: str) -> bool:
        attrs = Attributes(user, "get", True, namespace=namespace, resource="configmaps", name="x")
        return authorizer.authorize(attrs)[0]

    assert allowed(ALICE, "a") and allowed(ALICE, "b") and not allowed(ALICE, "ns")
    assert allowed(SA, "ns") and not allowed(SA, "a") and not allowed(SA, "c")
    assert not allowed(User("bob", ("system:authenticated",)), "a")
    # a namespaced request is not allowed at the cluster scope by a RoleBinding
    assert not allowed(ALICE, "")


def test_cluster_role_bindings_grant_everywhere_and_masters_everything() -> None:
    store = _store(
        _role("read", READ_CM),
        _binding("sa", "ClusterRole", "read",
                 [{"kind": "ServiceAccount", "name": "op", "namespace": "ns"}]),
    )  # fmt: skip
    authorizer = authz.RbacAuthorizer(store)
    for namespace in ("ns", "other", ""):
        attrs = Attributes(SA, "get", True, namespace=namespace, resource="configmaps", name="x")
        assert authorizer.authorize(attrs) == (
            True,
            'RBAC: allowed by ClusterRoleBinding "sa" of ClusterRole "read" to '
            'ServiceAccount "op/ns"',
        )
    assert authorizer.authorize(Attributes(authz.ADMIN, "delete", True, resource="nodes")) == (
        True,
        "",
    )


def test_a_role_binding_to_a_missing_role_gives_the_refusal_a_reason() -> None:
    store = _store(
        _binding("gone", "Role", "missing", [{"kind": "User", "name": "alice"}], "ns"),
        _binding("gone-too", "ClusterRole", "absent", [{"kind": "User", "name": "alice"}], "ns"),
        _binding("not-mine", "Role", "nothing", [{"kind": "User", "name": "bob"}], "ns"),
    )
    attrs = _res("list", "secrets")
    allowed, reason = authz.RbacAuthorizer(store).authorize(attrs)
    assert not allowed
    assert reason == (
        'RBAC: [role.rbac.authorization.k8s.io "missing" not found, '
        'clusterrole.rbac.authorization.k8s.io "absent" not found]'
    )
    assert authz.forbidden(attrs, reason).status["message"] == (
        'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in '
        'the namespace "ns": ' + reason
    )


def test_an_aggregated_cluster_role_has_the_rules_of_the_roles_it_selects() -> None:
    label = {"rbac.example.com/aggregate-to-monitoring": "true"}
    store = _store(
        _role("monitoring", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": label}]}),
        _role("endpoints", [{"apiGroups": [""], "resources": ["endpoints"], "verbs": ["list"]}],
              meta={"labels": label}),
        _role("unlabelled", [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]),
        _binding("m", "ClusterRole", "monitoring", [{"kind": "User", "name": "alice"}]),
    )  # fmt: skip
    authorizer = authz.RbacAuthorizer(store)
    assert authorizer.authorize(_res("list", "endpoints"))[0]
    assert not authorizer.authorize(_res("list", "secrets"))[0]


@pytest.mark.parametrize(
    ("attrs", "message", "details"),
    [
        (_res("create", "configmaps"),
         'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "ns"',
         {"kind": "configmaps"}),
        (_res("get", "deployments", group="apps", sub="scale", name="d"),
         'deployments.apps "d" is forbidden: User "alice" cannot get resource "deployments/scale" in API group "apps" in the namespace "ns"',
         {"name": "d", "group": "apps", "kind": "deployments"}),
        (_res("list", "nodes", namespace=""),
         'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
         {"kind": "nodes"}),
        (_path("get", "/metrics"), 'forbidden: User "alice" cannot get path "/metrics"', {}),
        (_path("get", "/a<b>&c"), 'forbidden: User "alice" cannot get path "/a&lt;b&gt;&amp;c"', {}),
    ],
)  # fmt: skip
def test_forbidden_is_worded_as_kube_apiserver(
    attrs: Attributes, message: str, details: dict[str, Any]
) -> None:
    err = authz.forbidden(attrs)
    assert isinstance(err, Forbidden)
    assert err.status["message"] == message and err.status["details"] == details


# ------------------------------------------------------------------------ tokens


def _service_account(namespace: str = "ns", name: str = "op") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace}}  # fmt: skip


def _token(auth: authz.Authenticator, body: dict[str, Any] | None = None) -> dict[str, Any]:
    return auth.request_token("ns", "op", orjson.dumps(body or {}), manager="test")


def test_tokens_authenticate_their_service_account_while_it_lives() -> None:
    store = _store(_service_account())
    auth = authz.Authenticator(store, "admin-token")
    assert auth.authenticate("Bearer admin-token") == authz.ADMIN
    assert auth.authenticate("bearer admin-token") == authz.ADMIN  # the scheme in any case
    review = _token(auth, {"spec": {"expirationSeconds": 600}})
    token = review["status"]["token"]
    assert auth.authenticate(f"Bearer {token}") == SA
    assert review["metadata"]["managedFields"][0]["manager"] == "test"
    for wrong in ("", "Bearer", "Basic admin-token", "Bearer nope", f"Bearer {token}x"):
        with pytest.raises(Unauthorized):
            auth.authenticate(wrong)
    # expired...
    real = store.clock
    store.clock = types.SimpleNamespace(time=lambda: real.time() + 601)
    with pytest.raises(Unauthorized):
        auth.authenticate(f"Bearer {token}")
    store.clock = real
    # ...or its ServiceAccount deleted (a new one of the same name is another uid)
    info = store.registry.by_key("", "serviceaccounts")
    assert info is not None
    store.delete(info, "ns", "op")
    store.create(info, "ns", _service_account())
    with pytest.raises(Unauthorized):
        auth.authenticate(f"Bearer {token}")


def test_token_requests_are_validated_as_upstream() -> None:
    store = _store()
    auth = authz.Authenticator(store, "t")
    with pytest.raises(NotFound, match='serviceaccounts "op" not found'):
        _token(auth)
    with pytest.raises(Invalid, match="may not specify a duration less than 10 minutes"):
        _token(auth, {"spec": {"expirationSeconds": 599}})


def test_access_reviews() -> None:
    store = _store(
        _role("read", READ_CM),
        _binding("b", "ClusterRole", "read", [{"kind": "User", "name": "alice"}], "ns"),
    )
    body = {
        "spec": {"resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "ns"}}
    }
    authorizer = authz.RbacAuthorizer(store)
    mine = authz.access_review(authorizer, ALICE, orjson.dumps(body), self_review=True)
    assert mine["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "b/ns" of ClusterRole "read" to User "alice"',
    }
    about_bob = {"spec": {**body["spec"], "user": "bob"}}
    review = authz.access_review(
        authorizer, authz.ADMIN, orjson.dumps(about_bob), self_review=False
    )
    assert review["kind"] == "SubjectAccessReview" and review["status"] == {"allowed": False}
    with pytest.raises(Invalid, match="exactly one of nonResourceAttributes or resourceAttributes"):
        authz.access_review(authorizer, ALICE, b"{}", self_review=True)


def test_the_cluster_command_takes_an_authorization_mode(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kube_runtime.envtest import cli

    parser = cli._cluster_parser()
    assert parser.parse_args([]).authorization_mode == "AlwaysAllow"
    assert parser.parse_args(["--authorization-mode", "RBAC"]).authorization_mode == "RBAC"
    with pytest.raises(SystemExit) as exited:
        cli.cluster_main(["--no-auth", "--authorization-mode", "RBAC"])
    assert exited.value.code == 2
    assert "--authorization-mode RBAC needs authentication" in capsys.readouterr().err


def test_an_rbac_api_server_needs_a_known_mode_and_enforces_owner_references() -> None:
    from kube_runtime.envtest.server.api import ApiServer

    with pytest.raises(ValueError, match="authorization must be one of"):
        ApiServer(Store(Registry()), authorization="Node")
    store = Store(Registry())
    server = ApiServer(store, token="t", authorization="RBAC")
    assert isinstance(server.authorizer, authz.RbacAuthorizer)
    assert isinstance(store.admission, authz.OwnerReferencesAdmission)
    assert ApiServer(Store(Registry()), token="t").authorizer is None
