"""Who asks and whether they may: bearer tokens, TokenRequest, kube-apiserver's RBAC authorizer.

The embedded server's requests are authenticated by bearer token (:class:`Authenticator`):
the cluster's admin token is user ``admin`` in ``system:masters``, and a token the
TokenRequest subresource (``POST .../serviceaccounts/<name>/token``, :meth:`Authenticator.
request_token`) issued is its ServiceAccount, user ``system:serviceaccount:<ns>:<name>`` in
``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and ``system:authenticated``,
while it has not expired and the ServiceAccount (same uid) exists; any other token is 401.

With ``authorization="RBAC"`` (opt-in: kube-apiserver's ``--authorization-mode=RBAC``;
the default allows every authenticated request), :class:`RbacAuthorizer` decides as
kube-apiserver 1.20's authorizer chain does:

* ``system:masters`` is allowed everything (upstream's privileged-group authorizer);
* otherwise the request's attributes (:func:`request_attributes`, upstream's
  ``RequestInfoFactory``: verb from the method, ``list``/``watch``/``deletecollection`` for
  collections, a ``metadata.name`` field selector as the name, subresources, non-resource
  paths with the lower-cased method as verb) are checked against the rules of the
  ClusterRoleBindings, then the RoleBindings of the request's namespace, whose subjects
  (User, Group, ServiceAccount) name the user (upstream's ``rbac.go`` and
  ``evaluation_helpers.go``: ``*`` in verbs, groups and resources, ``*/<subresource>``,
  ``resourceNames`` only for requests that name an object, ``nonResourceURLs`` with a
  trailing ``*``); an aggregated ClusterRole has the rules of the ClusterRoles its selectors
  match (what upstream's aggregation controller writes into it);
* a refusal is 403 worded as kube-apiserver's (:func:`forbidden`), with ``RBAC: ...`` naming
  the roles a binding refers to that do not exist.

:data:`BOOTSTRAP_OBJECTS` are the bootstrap roles and bindings a client needs (discovery,
``/version``, ``/openapi``, health checks, SelfSubjectAccessReview for authenticated users,
``cluster-admin`` for ``system:masters``); the cluster stores them when it enforces RBAC.
:class:`OwnerReferencesAdmission` is the OwnerReferencesPermissionEnforcement admission
plugin an RBAC cluster runs. Not modelled: escalation prevention on writes of roles and
bindings (``escalate`` / ``bind``), impersonation, anonymous requests.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

import orjson

from kube_runtime import selectors
from kube_runtime.envtest.server import errors, webhooks
from kube_runtime.envtest.server.errors import ApiError, Cause
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import (
    AdmissionCall,
    AdmissionHook,
    Defaulter,
    Obj,
    Store,
    now_rfc3339,
)

__all__ = [
    "ADMIN",
    "BOOTSTRAP_OBJECTS",
    "MODES",
    "Attributes",
    "Authenticator",
    "OwnerReferencesAdmission",
    "RbacAuthorizer",
    "User",
    "access_review",
    "acting",
    "forbidden",
    "request_attributes",
    "rule_allows",
    "service_account_user",
]

#: The authorization modes of the embedded server (kube-apiserver's ``--authorization-mode``).
MODES: Final = ("AlwaysAllow", "RBAC")
RBAC_GROUP: Final = "rbac.authorization.k8s.io"
#: The group allowed everything whatever the rules (upstream ``user.SystemPrivilegedGroup``).
MASTERS: Final = "system:masters"
AUTHENTICATED: Final = "system:authenticated"
#: The issuer and default audience of issued tokens (the real backend's
#: ``--service-account-issuer``).
ISSUER: Final = "https://kubernetes.default.svc.cluster.local"
_MIN_EXPIRATION: Final = 600
_MAX_EXPIRATION: Final = 1 << 32
_TOKEN_SPEC: Final = ("audiences", "expirationSeconds", "boundObjectRef")


@dataclass(frozen=True)
class User:
    """An authenticated user: ``name``, ``groups`` (``system:authenticated`` among them)."""

    name: str
    groups: tuple[str, ...]

    def as_user_info(self) -> dict[str, Any]:
        """The ``userInfo`` of an AdmissionReview or a review's status."""
        return {"username": self.name, "groups": list(self.groups)}


#: The cluster's admin token's user (the real backend's token file says the same).
ADMIN: Final = User("admin", (MASTERS, AUTHENTICATED))


def service_account_user(namespace: str, name: str) -> User:
    """The user of ServiceAccount ``namespace/name``'s tokens (upstream ``serviceaccount.
    UserInfo``)."""
    return User(
        f"system:serviceaccount:{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
    )


# ----------------------------------------------------------------------- authentication


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class _Issued:
    namespace: str
    name: str
    uid: str
    expires: float


class Authenticator:
    """The bearer tokens of a cluster: ``admin_token`` (None: no authentication at all) and
    the ServiceAccount tokens :meth:`request_token` issued (kept in memory: a restarted
    cluster forgets them). Thread-safe."""

    def __init__(self, store: Store, admin_token: str | None) -> None:
        self.store = store
        self.admin_token = admin_token
        self._issued: dict[str, _Issued] = {}
        self._lock = threading.Lock()

    def authenticate(self, authorization: str) -> User:
        """The user of an ``Authorization`` header; 401 ``Unauthorized`` for a missing or
        unknown bearer token, or one whose ServiceAccount is gone or which expired (the
        scheme in any case, as kube-apiserver's bearer authenticator)."""
        scheme, _, credential = authorization.partition(" ")
        credential = credential.strip()
        if scheme.lower() == "bearer" and credential:
            if credential == self.admin_token:
                return ADMIN
            with self._lock:
                issued = self._issued.get(credential)
            if issued is not None and self._valid(issued):
                return service_account_user(issued.namespace, issued.name)
        raise errors.api_error(401, "Unauthorized", "Unauthorized")

    def _valid(self, issued: _Issued) -> bool:
        if self.store.clock.time() >= issued.expires:
            return False
        info = self.store.registry.by_key("", "serviceaccounts")
        stored = self.store.try_get(info, issued.namespace, issued.name) if info else None
        return stored is not None and stored.meta.get("uid") == issued.uid

    def request_token(
        self, namespace: str, name: str, body: bytes, *, manager: str = "", dry_run: bool = False
    ) -> Obj:
        """Serve ``POST /api/v1/namespaces/<namespace>/serviceaccounts/<name>/token``: the
        ``authentication.k8s.io/v1`` TokenRequest ``body`` answered with a token of the
        ServiceAccount (valid ``spec.expirationSeconds``, default 3600, at least 600) as
        kube-apiserver 1.20 answers it (``manager``: the field manager its ``managedFields``
        name); 404 when the ServiceAccount does not exist."""
        review = _decode_review(body, "TokenRequest")
        meta: dict[str, Any] = (
            review["metadata"] if isinstance(review.get("metadata"), dict) else {}
        )
        for key, expected in (("name", name), ("namespace", namespace)):
            given = meta.get(key)
            if given and given != expected:
                raise errors.bad_request(f"{key} in URL does not match {key} in TokenRequest")
        spec = dict(review.get("spec") or {})
        expiration = spec.setdefault("expirationSeconds", 3600)
        if not isinstance(expiration, int) or isinstance(expiration, bool):
            raise errors.bad_request("spec.expirationSeconds must be an integer")
        if not _MIN_EXPIRATION <= expiration <= _MAX_EXPIRATION:
            bound = (
                "less than 10 minutes"
                if expiration < _MIN_EXPIRATION
                else "larger than 2^32 seconds"
            )
            message = f"Invalid value: {expiration}: may not specify a duration {bound}"
            cause = Cause("spec.expirationSeconds", "FieldValueInvalid", message)
            raise errors.invalid("TokenRequest", "authentication.k8s.io", "", [cause])
        info = self.store.registry.by_key("", "serviceaccounts")
        stored = self.store.try_get(info, namespace, name) if info is not None else None
        if stored is None:
            raise errors.not_found("serviceaccounts", "", name)
        # managedFields: what the request set (after defaulting), as kube-apiserver records it
        fields = {f"f:{key}": _fields_of(value) for key, value in spec.items()}
        spec = {
            "audiences": spec.get("audiences") or [ISSUER],
            "expirationSeconds": expiration,
            "boundObjectRef": spec.get("boundObjectRef"),
            **{k: v for k, v in spec.items() if k not in _TOKEN_SPEC},
        }
        uid = str(stored.meta.get("uid") or "")
        now = self.store.clock.time()
        expires = now + expiration
        claims = {
            "aud": spec["audiences"],
            "exp": int(expires),
            "iat": int(now),
            "iss": ISSUER,
            "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
            "nbf": int(now),
            "sub": service_account_user(namespace, name).name,
        }
        header = {"alg": "RS256", "kid": "kube-runtime-envtest"}
        token = ".".join(
            (_b64(orjson.dumps(header)), _b64(orjson.dumps(claims)), _b64(secrets.token_bytes(64)))
        )
        if not dry_run:
            with self._lock:
                self._issued[token] = _Issued(namespace, name, uid, expires)
        return {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": _review_meta(meta, manager, "authentication.k8s.io/v1", now, fields),
            "spec": spec,
            "status": {"token": token, "expirationTimestamp": now_rfc3339(lambda: expires)},
        }


def _review_meta(
    meta: Mapping[str, Any], manager: str, api_version: str, now: float, fields: dict[str, Any]
) -> dict[str, Any]:
    """The metadata kube-apiserver answers a review (a create that stores nothing) with:
    what was sent, no creation time, and the request's ``managedFields`` entry (``fields``:
    its ``f:spec`` set)."""
    out = {k: v for k, v in meta.items() if k not in ("managedFields", "resourceVersion")}
    out["creationTimestamp"] = None
    if manager:
        entry = {
            "manager": manager,
            "operation": "Update",
            "apiVersion": api_version,
            "time": now_rfc3339(lambda: now),
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": fields},
        }
        out["managedFields"] = [entry]
    return out


def _decode_review(body: bytes, kind: str) -> dict[str, Any]:
    try:
        review = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError as e:
        message = f"the body of the request was in an unknown format: {e}"
        raise errors.bad_request(message) from None
    if not isinstance(review, dict):
        raise errors.bad_request(f"the body of the request must be a {kind}")
    return review


def _fields_of(value: Any) -> dict[str, Any]:
    """The FieldsV1 set of a value a request sent (maps by key; lists and scalars whole)."""
    if isinstance(value, dict) and value:
        return {".": {}, **{f"f:{k}": _fields_of(v) for k, v in value.items()}}
    return {}


# -------------------------------------------------------------------- request attributes


@dataclass(frozen=True)
class Attributes:
    """What an authorizer decides on (upstream ``authorizer.AttributesRecord``)."""

    user: User
    verb: str
    resource_request: bool
    path: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


_METHOD_VERBS: Final = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
_SPECIAL_VERBS: Final = ("proxy", "watch")
#: Subresources of a namespace itself (``/api/v1/namespaces/<ns>/status``).
_NAMESPACE_SUBRESOURCES: Final = ("status", "finalize")
_TRUE: Final = ("1", "true", "True")


def _name_from_field_selector(text: str) -> str:
    """The name an exact ``metadata.name`` field selector asks for ("" when none)."""
    try:
        selector = selectors.parse_field_selector(text)
    except ValueError:
        return ""
    name = selector.requires_exact_match("metadata.name") or ""
    return "" if name in (".", "..") or "/" in name or "%" in name else name


def request_attributes(
    user: User, method: str, path: str, param: Callable[[str], str | None]
) -> Attributes:
    """The attributes of a request as upstream's ``RequestInfoFactory`` reads them from
    ``method``, ``path`` and the query (``param(name)``)."""
    parts = [p for p in path.strip("/").split("/") if p]
    non_resource = Attributes(user, method.lower(), False, path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    prefix, rest = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest[0] in _SPECIAL_VERBS:
        if len(rest) < 2:
            return non_resource  # upstream: an error, then served as a non-resource request
        verb, rest = rest[0], rest[1:]
    else:
        verb = _METHOD_VERBS.get(method, "")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 and verb != "proxy" else ""
    if not name and verb == "get":
        verb = "watch" if (param("watch") or "") in _TRUE else "list"
        field_selector = param("fieldSelector")
        if field_selector:
            name = _name_from_field_selector(field_selector)
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user, verb, True, path, namespace, group, version, resource, subresource, name
    )


# -------------------------------------------------------------------------- evaluation


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and wanted in values


def _resource_matches(rule: Mapping[str, Any], combined: str, subresource: str) -> bool:
    for candidate in rule.get("resources") or ():
        if candidate in ("*", combined):
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


def _non_resource_url_matches(rule: Mapping[str, Any], path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url in ("*", path):
            return True
        if url.endswith("*") and path.startswith(url[:-1]):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Mapping[str, Any]) -> bool:
    """Whether one PolicyRule allows the request (upstream ``RuleAllows``)."""
    verbs = rule.get("verbs")
    if not (_has(verbs, "*") or _has(verbs, attrs.verb)):
        return False
    if not attrs.resource_request:
        return _non_resource_url_matches(rule, attrs.path)
    groups = rule.get("apiGroups")
    if not (_has(groups, "*") or _has(groups, attrs.api_group)):
        return False
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if not _resource_matches(rule, combined, attrs.subresource):
        return False
    names = rule.get("resourceNames")
    return not names or attrs.name in names


def _subject_applies(subject: Mapping[str, Any], user: User, binding_namespace: str) -> bool:
    """Upstream ``appliesToUser``: a User by name, a Group among the user's groups, a
    ServiceAccount by its user name (its namespace defaults to the RoleBinding's)."""
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return bool(namespace) and user.name == f"system:serviceaccount:{namespace}:{name}"
    return False


def _describe(binding: Obj, namespace: str, user: User) -> str:
    """Upstream's description of the binding that allowed a request (``RoleBinding
    "name/ns" of Role "r" to User "u"``), naming the first subject that applies."""
    ref = binding.get("roleRef") or {}
    name = binding["metadata"].get("name", "")
    what = (
        f"RoleBinding {_quote(f'{name}/{namespace}')}"
        if namespace
        else (f"ClusterRoleBinding {_quote(name)}")
    )
    subject = next(
        s for s in binding.get("subjects") or ()
        if isinstance(s, dict) and _subject_applies(s, user, namespace)
    )  # fmt: skip
    who = subject.get("name") or ""
    if subject.get("kind") == "ServiceAccount":
        who = f"{who}/{subject.get('namespace') or namespace}"
    role = f"{ref.get('kind')} {_quote(str(ref.get('name') or ''))}"
    return f"{what} of {role} to {subject.get('kind')} {_quote(who)}"


def _go_struct(value: Mapping[str, Any] | None) -> str:
    """How a field error prints the NonResourceAttributes it names (Go's ``%#v`` of what the
    pointer points to, as kube-apiserver's ``field.Invalid``)."""
    value = value or {}
    return (
        f"authorization.NonResourceAttributes{{Path:{_quote(str(value.get('path') or ''))}, "
        f"Verb:{_quote(str(value.get('verb') or ''))}}}"
    )


def _quote(text: str) -> str:
    """Go's ``%q`` of a plain string."""
    return orjson.dumps(text).decode()


class RbacAuthorizer:
    """kube-apiserver 1.20's ``--authorization-mode=RBAC`` over the roles and bindings
    ``store`` holds (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _objects(self, plural: str, namespace: str | None) -> list[Obj]:
        info = self.store.registry.by_key(RBAC_GROUP, plural)
        if info is None:
            return []
        if namespace is None:
            return [s.obj for s in self.store.objects(info)]
        return [s.obj for s in self.store.list(info, namespace).items]

    def _role_rules(self, ref: Mapping[str, Any], namespace: str) -> tuple[list[Any], str]:
        """The rules of a binding's role and "" or the error upstream's ``GetRoleReferenceRules``
        gives (a missing role, an unknown kind)."""
        kind, name = ref.get("kind"), str(ref.get("name") or "")
        if kind == "ClusterRole":
            info = self.store.registry.by_key(RBAC_GROUP, "clusterroles")
            stored = self.store.try_get(info, None, name) if info else None
            if stored is None:
                return [], f'clusterrole.rbac.authorization.k8s.io "{name}" not found'
            return self._cluster_role_rules(stored.obj), ""
        if kind == "Role":
            info = self.store.registry.by_key(RBAC_GROUP, "roles")
            stored = self.store.try_get(info, namespace, name) if info else None
            if stored is None:
                return [], f'role.rbac.authorization.k8s.io "{name}" not found'
            return list(stored.obj.get("rules") or ()), ""
        return [], f"unsupported role reference kind: {kind!r}"

    def _cluster_role_rules(self, role: Obj) -> list[Any]:
        """A ClusterRole's rules; an aggregated one's are those of the ClusterRoles its
        ``aggregationRule`` selects (the aggregation controller's result)."""
        aggregation = role.get("aggregationRule")
        chosen = (aggregation or {}).get("clusterRoleSelectors") if aggregation else None
        if not chosen:
            return list(role.get("rules") or ())
        wanted = [selectors.label_selector_from_dict(s) for s in chosen if isinstance(s, dict)]
        own = role["metadata"].get("name")
        rules: list[Any] = []
        for other in self._objects("clusterroles", None):
            labels = other["metadata"].get("labels") or {}
            if other["metadata"].get("name") != own and any(s.matches(labels) for s in wanted):
                rules.extend(r for r in other.get("rules") or () if r not in rules)
        return rules

    def _bindings(self, namespace: str) -> Iterator[tuple[Obj, str]]:
        """ClusterRoleBindings, then the RoleBindings of ``namespace`` (upstream's order),
        each with the namespace its subjects and role are read in."""
        for binding in self._objects("clusterrolebindings", None):
            yield binding, ""
        if namespace:
            for binding in self._objects("rolebindings", namespace):
                yield binding, namespace

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        """The decision and, for a refusal, upstream's reason ("" or ``RBAC: <errors>``)."""
        if MASTERS in attrs.user.groups:
            return True, ""
        problems: list[str] = []
        for binding, namespace in self._bindings(attrs.namespace):
            subjects = binding.get("subjects") or ()
            if not any(
                isinstance(s, dict) and _subject_applies(s, attrs.user, namespace) for s in subjects
            ):
                continue
            rules, problem = self._role_rules(binding.get("roleRef") or {}, namespace)
            if problem:
                problems.append(problem)
            if any(isinstance(r, dict) and rule_allows(attrs, r) for r in rules):
                return True, f"RBAC: allowed by {_describe(binding, namespace, attrs.user)}"
        if not problems:
            return False, ""
        joined = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
        return False, f"RBAC: {joined}"

    def check(self, attrs: Attributes) -> None:
        """Nothing when ``attrs`` is allowed; the 403 :func:`forbidden` otherwise."""
        allowed, reason = self.authorize(attrs)
        if not allowed:
            raise forbidden(attrs, reason)


def access_review(
    authorizer: RbacAuthorizer | None,
    user: User | None,
    body: bytes,
    *,
    self_review: bool,
    manager: str = "",
    now: float = 0.0,
) -> Obj:
    """Answer an ``authorization.k8s.io/v1`` SelfSubjectAccessReview (``self_review``: about
    ``user``) or SubjectAccessReview (about ``spec.user`` / ``spec.groups``) as kube-apiserver
    does: ``status.allowed`` and the authorizer's reason (``authorizer`` None: AlwaysAllow)."""
    kind = "SelfSubjectAccessReview" if self_review else "SubjectAccessReview"
    review = _decode_review(body, kind)
    spec: dict[str, Any] = review["spec"] if isinstance(review.get("spec"), dict) else {}
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    resource = resource if isinstance(resource, dict) else None
    non_resource = non_resource if isinstance(non_resource, dict) else None
    if (resource is None) == (non_resource is None):
        if resource is None:
            where, detail = (
                "resourceAttributes",
                (
                    'Invalid value: "null": exactly one of nonResourceAttributes or '
                    "resourceAttributes must be specified"
                ),
            )
        else:
            where = "nonResourceAttributes"
            detail = f"Invalid value: {_go_struct(non_resource)}: cannot be specified in "
            detail += "combination with resourceAttributes"
        cause = Cause(f"spec.{where}", "FieldValueInvalid", detail)
        # kube-apiserver names no kind here (its decoded object's kind is empty)
        raise errors.invalid("", "authorization.k8s.io", "", [cause])
    if self_review or user is None:
        subject = user or ADMIN
    else:
        subject = User(str(spec.get("user") or ""), tuple(spec.get("groups") or ()))
    if resource:
        attrs = Attributes(
            subject,
            str(resource.get("verb") or ""),
            True,
            namespace=str(resource.get("namespace") or ""),
            api_group=str(resource.get("group") or ""),
            api_version=str(resource.get("version") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            name=str(resource.get("name") or ""),
        )
    else:
        assert non_resource is not None
        attrs = Attributes(
            subject,
            str(non_resource.get("verb") or ""),
            False,
            path=str(non_resource.get("path") or ""),
        )
    allowed, reason = (True, "") if authorizer is None else authorizer.authorize(attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    meta = review["metadata"] if isinstance(review.get("metadata"), dict) else {}
    fields = {f"f:{key}": _fields_of(value) for key, value in spec.items()}
    return {
        "kind": kind,
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": _review_meta(meta, manager, "authorization.k8s.io/v1", now, fields),
        "spec": spec,
        "status": status,
    }


def _qualified(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource


def _forbidden_error(group: str, resource: str, name: str, detail: str) -> ApiError:
    """Upstream ``NewForbidden(groupResource, name, err)``."""
    if not resource:
        message = f"forbidden: {detail}"
    elif name:
        message = f'{_qualified(group, resource)} "{name}" is forbidden: {detail}'
    else:
        message = f"{_qualified(group, resource)} is forbidden: {detail}"
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    return errors.api_error(403, message, "Forbidden", details)


def forbidden(attrs: Attributes, reason: str = "") -> ApiError:
    """kube-apiserver's 403 for a refused request: ``User "<user>" cannot <verb> resource
    "<resource>[/<subresource>]" in API group "<group>" in the namespace "<ns>"`` (``at the
    cluster scope`` without a namespace; ``path "<path>"`` for a non-resource request),
    behind ``<resource>[.<group>] ["<name>"] is forbidden:`` and followed by ``: <reason>``."""
    user = attrs.user.name
    if not attrs.resource_request:
        message = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = attrs.resource
        if attrs.subresource:
            resource = f"{resource}/{attrs.subresource}"
        where = (
            f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        )
        message = (
            f'User "{user}" cannot {attrs.verb} resource "{resource}" '
            f'in API group "{attrs.api_group}" {where}'
        )
    for raw, safe in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        message = message.replace(raw, safe)
    if reason:
        message = f"{message}: {reason}"
    return _forbidden_error(attrs.api_group, attrs.resource, attrs.name, message)


# ------------------------------------------------------------------------------ admission

_ACTING: ContextVar[User | None] = ContextVar("authz_user", default=None)


@contextlib.contextmanager
def acting(user: User | None) -> Iterator[None]:
    """The store's writes in this block are made by ``user`` (for admission)."""
    token = _ACTING.set(user)
    try:
        yield
    finally:
        _ACTING.reset(token)


def _refs(obj: Obj | None) -> list[dict[str, Any]]:
    meta = (obj or {}).get("metadata") or {}
    return [r for r in meta.get("ownerReferences") or () if isinstance(r, dict)]


class OwnerReferencesAdmission:
    """The OwnerReferencesPermissionEnforcement admission plugin (upstream
    ``plugin/pkg/admission/gc``) in front of the server's other admission (``inner``, the
    webhooks): a write of the user :func:`acting` that changes an object's
    ``ownerReferences`` needs ``delete`` on the object (updates only), and one that sets
    ``blockOwnerDeletion: true`` on a reference needs ``update`` on the owner's
    ``<plural>/finalizers``; else 403 as upstream words it. Writes made by no request's user
    (the server's own) pass."""

    def __init__(self, inner: AdmissionHook, authorizer: RbacAuthorizer) -> None:
        self.inner = inner
        self.authorizer = authorizer

    def active(self) -> bool:
        return self.inner.active()

    def mutate(self, call: AdmissionCall, *, default: Defaulter | None = None) -> Obj | None:
        return self.inner.mutate(call, default=default)

    def validate(self, call: AdmissionCall) -> None:
        user, obj = _ACTING.get(), call.obj
        context = webhooks.current()
        own = context is not None and context.route.info.key == call.info.key  # no side write
        if user is not None and own and call.operation in ("CREATE", "UPDATE") and obj is not None:
            self._enforce(user, call.info, call.operation, obj, call.old)
        self.inner.validate(call)

    def _enforce(
        self, user: User, info: ResourceInfo, operation: str, obj: Obj, old: Obj | None
    ) -> None:
        new_refs, old_refs = _refs(obj), _refs(old if operation == "UPDATE" else None)
        if new_refs == old_refs:
            return
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        name = str(meta.get("name") or "")

        def refused(detail: str) -> ApiError:
            return _forbidden_error(info.group, info.plural, name, detail)

        if operation == "UPDATE":
            allowed, reason = self.authorizer.authorize(
                Attributes(user, "delete", True, namespace=namespace, api_group=info.group,
                           api_version=info.version, resource=info.plural, name=name)
            )  # fmt: skip
            if not allowed:
                raise refused(
                    f"cannot set an ownerRef on a resource you can't delete: {reason}, <nil>"
                )
        blocking_before = {r.get("uid") for r in old_refs if r.get("blockOwnerDeletion") is True}
        for ref in new_refs:
            if ref.get("blockOwnerDeletion") is not True or ref.get("uid") in blocking_before:
                continue
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            owner = self.authorizer.store.registry.by_kind(group, str(ref.get("kind") or ""))
            if owner is None:
                raise refused(
                    "cannot set blockOwnerDeletion in this case because cannot find RESTMapping "
                    f"for APIVersion {ref.get('apiVersion')} Kind {ref.get('kind')}: "
                    f'no matches for kind "{ref.get("kind")}" in version "{ref.get("apiVersion")}"'
                )
            allowed, reason = self.authorizer.authorize(
                Attributes(user, "update", True, namespace=namespace, api_group=owner.group,
                           api_version=owner.version, resource=owner.plural,
                           subresource="finalizers", name=str(ref.get("name") or ""))
            )  # fmt: skip
            if not allowed:
                raise refused(
                    "cannot set blockOwnerDeletion if an ownerReference refers to a resource "
                    f"you can't set finalizers on: {reason}, <nil>"
                )


# ---------------------------------------------------------------------- bootstrap policy


def _bootstrap_meta(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    }


def _cluster_role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": _bootstrap_meta(name),
        "rules": rules,
    }


def _cluster_binding(name: str, groups: Iterable[str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": _bootstrap_meta(name),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups],
    }


_PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"]

#: kube-apiserver 1.20's bootstrap roles and bindings a client needs (a subset of its
#: ``bootstrappolicy``): ``cluster-admin`` (bound to ``system:masters``), ``system:discovery``
#: and ``system:basic-user`` (``system:authenticated``), ``system:public-info-viewer``
#: (``system:authenticated`` and ``system:unauthenticated``).
BOOTSTRAP_OBJECTS: Final[tuple[dict[str, Any], ...]] = (
    _cluster_role(
        "cluster-admin",
        [
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]},
        ],
    ),
    _cluster_role(
        "system:discovery",
        [
            {
                "nonResourceURLs": [
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
                "verbs": ["get"],
            }
        ],
    ),
    _cluster_role(
        "system:basic-user",
        [
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                "verbs": ["create"],
            }
        ],
    ),
    _cluster_role(
        "system:public-info-viewer", [{"nonResourceURLs": _PUBLIC_INFO, "verbs": ["get"]}]
    ),
    _cluster_binding("cluster-admin", [MASTERS]),
    _cluster_binding("system:discovery", [AUTHENTICATED]),
    _cluster_binding("system:basic-user", [AUTHENTICATED]),
    _cluster_binding("system:public-info-viewer", [AUTHENTICATED, "system:unauthenticated"]),
)


def bootstrap(store: Store) -> None:
    """Store :data:`BOOTSTRAP_OBJECTS` that are missing (as kube-apiserver's post-start hook
    ``rbac/bootstrap-roles`` does on an RBAC cluster)."""
    for obj in BOOTSTRAP_OBJECTS:
        plural = "clusterroles" if obj["kind"] == "ClusterRole" else "clusterrolebindings"
        info = store.registry.by_key(RBAC_GROUP, plural)
        assert info is not None
        if store.try_get(info, None, obj["metadata"]["name"]) is None:
            store.create(info, None, orjson.loads(orjson.dumps(obj)))
