"""``rbac.authorization.k8s.io/v1`` Role, ClusterRole, RoleBinding, ClusterRoleBinding as
kube-apiserver stores them (enforced only by a server with ``authorization="RBAC"``, whose
authorizer reads them: :mod:`.authz`; by default every authenticated request is allowed).

Validation follows upstream's ``pkg/apis/rbac/validation`` (``ValidatePolicyRule``,
``ValidateRoleBinding``, ``ValidateRoleBindingSubject``, an immutable ``roleRef``), the
printers ``printRoleBinding`` / ``printClusterRoleBinding`` as kube-apiserver 1.20 renders
them; roles have no printer upstream (the default Name / Created At). Binding defaults
(``apiGroup`` of the role reference and of User and Group subjects) are :mod:`.defaults`'.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import (
    AGE,
    DEFAULT_COLUMNS,
    NAME,
    Column,
    _col,
    _list,
    _str,
    _wide,
)
from kube_runtime.envtest.server.validation import is_dns1123_subdomain
from kube_runtime.validation import path_segment_errors

__all__ = [
    "BINDING_COLUMNS",
    "GROUP",
    "ROLE_COLUMNS",
    "check_binding",
    "check_cluster_binding",
    "check_cluster_role",
    "check_role",
]

GROUP: Final = "rbac.authorization.k8s.io"


# ------------------------------------------------------------------------------ roles


def _check_rules(out: list[Cause], rules: Any, *, namespaced: bool) -> None:
    """Upstream ``ValidatePolicyRule`` for each rule."""
    for i, raw in enumerate(rules if isinstance(rules, list) else ()):
        rule = fe.as_map(raw)
        path = f"rules[{i}]"
        if not rule.get("verbs"):
            out.append(fe.required(f"{path}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs")
        if urls:
            if namespaced:
                out.append(
                    fe.invalid(
                        f"{path}.nonResourceURLs",
                        urls,
                        "namespaced rules cannot apply to non-resource URLs",
                    )
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                out.append(
                    fe.invalid(
                        f"{path}.nonResourceURLs",
                        urls,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    )
                )
            continue
        if not rule.get("apiGroups"):
            out.append(
                fe.required(
                    f"{path}.apiGroups", "resource rules must supply at least one api group"
                )
            )
        if not rule.get("resources"):
            out.append(
                fe.required(f"{path}.resources", "resource rules must supply at least one resource")
            )


def check_role(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateRole``: each rule (no non-resource URLs in a namespace)."""
    _check_rules(out, obj.get("rules"), namespaced=True)


def check_cluster_role(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateClusterRole``: each rule; an aggregation rule needs selectors."""
    _check_rules(out, obj.get("rules"), namespaced=False)
    aggregation = obj.get("aggregationRule")
    if aggregation is not None and not fe.as_map(aggregation).get("clusterRoleSelectors"):
        out.append(
            fe.required(
                "aggregationRule.clusterRoleSelectors",
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            )
        )


#: Roles have no printer upstream: the default convertor's Name / Created At.
ROLE_COLUMNS: Final[list[Column]] = list(DEFAULT_COLUMNS)


# ------------------------------------------------------------------------------ bindings


def _go_role_ref(ref: Mapping[str, Any]) -> str:
    """The role reference as Go's ``%#v`` writes it in upstream's message."""
    fields = ", ".join(
        f"{go}:{json.dumps(_str(ref.get(key)))}"
        for go, key in (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name"))
    )
    return f"rbac.RoleRef{{{fields}}}"


def _check_subjects(out: list[Cause], subjects: Any, *, namespaced: bool) -> None:
    """Upstream ``ValidateRoleBindingSubject`` for each subject."""
    for i, raw in enumerate(subjects if isinstance(subjects, list) else ()):
        subject = fe.as_map(raw)
        path = f"subjects[{i}]"
        name = _str(subject.get("name"))
        group = _str(subject.get("apiGroup"))
        if not name:
            out.append(fe.required(f"{path}.name"))
        kind = subject.get("kind")
        if kind == "ServiceAccount":
            for msg in is_dns1123_subdomain(name) if name else ():
                out.append(fe.invalid(f"{path}.name", name, msg))
            if group:
                out.append(fe.not_supported(f"{path}.apiGroup", group, ("",)))
            if not namespaced and not subject.get("namespace"):
                out.append(fe.required(f"{path}.namespace"))
        elif kind in ("User", "Group"):
            if group != GROUP:
                out.append(fe.not_supported(f"{path}.apiGroup", group, (GROUP,)))
        else:
            out.append(fe.not_supported(f"{path}.kind", kind, ("ServiceAccount", "User", "Group")))


def _check_binding(
    out: list[Cause],
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    *,
    namespaced: bool,
) -> None:
    ref = fe.as_map(obj.get("roleRef"))
    if _str(ref.get("apiGroup")) != GROUP:
        out.append(fe.not_supported("roleRef.apiGroup", _str(ref.get("apiGroup")), (GROUP,)))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        out.append(fe.not_supported("roleRef.kind", _str(ref.get("kind")), kinds))
    name = _str(ref.get("name"))
    if not name:
        out.append(fe.required("roleRef.name"))
    for msg in path_segment_errors(name):
        out.append(fe.invalid("roleRef.name", name, msg))
    _check_subjects(out, obj.get("subjects"), namespaced=namespaced)
    if old is None:
        return
    old_ref = fe.as_map(old.get("roleRef"))
    if any(_str(old_ref.get(k)) != _str(ref.get(k)) for k in ("apiGroup", "kind", "name")):
        cause = fe.invalid("roleRef", None, "cannot change roleRef")
        out.append(
            Cause(
                cause.field,
                cause.reason,
                f"Invalid value: {_go_role_ref(ref)}: cannot change roleRef",
            )
        )


def check_binding(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateRoleBinding`` (+ ``Update``: ``roleRef`` cannot change)."""
    _check_binding(out, obj, old, namespaced=True)


def check_cluster_binding(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateClusterRoleBinding`` (+ ``Update``)."""
    _check_binding(out, obj, old, namespaced=False)


def _subjects(kind: str) -> Any:
    """``rbac.SubjectsStrings``: users, groups or ``namespace/name`` of service accounts."""

    def cell(obj: Mapping[str, Any]) -> str:
        found = []
        for subject in _list(obj.get("subjects")):
            if subject.get("kind") != kind:
                continue
            name = _str(subject.get("name"))
            if kind == "ServiceAccount":
                name = f"{_str(subject.get('namespace'))}/{name}"
            found.append(name)
        return ", ".join(found)

    return cell


BINDING_COLUMNS: Final[list[Column]] = [
    NAME,
    _col(
        "Role",
        lambda o: (
            f"{_str(fe.as_map(o.get('roleRef')).get('kind'))}/{_str(fe.as_map(o.get('roleRef')).get('name'))}"
        ),
    ),
    AGE,
    _wide("Users", _subjects("User")),
    _wide("Groups", _subjects("Group")),
    _wide("ServiceAccounts", _subjects("ServiceAccount")),
]
