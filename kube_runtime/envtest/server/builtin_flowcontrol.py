"""``flowcontrol.apiserver.k8s.io/v1beta1`` (what kube-apiserver 1.20 serves): FlowSchema and
PriorityLevelConfiguration, cluster-scoped, with a status subresource.

* The configuration kube-apiserver 1.20 creates at start (:func:`bootstrap_objects`, from
  upstream's ``bootstrap/default.go``): the mandatory ``exempt`` and ``catch-all`` priority
  levels and flow schemas, and the suggested ``system``, ``leader-election``,
  ``workload-high``, ``workload-low`` and ``global-default`` levels with their schemas. Each
  flow schema reads back with the ``Dangling`` condition the apiserver's configuration
  controller writes (``False``: its priority level exists); :class:`FlowSchemaConditions`
  keeps that condition for the schemas and levels written later.
* ``v1beta1`` defaults (:func:`default_flow_schema`, :func:`default_priority_level`):
  ``matchingPrecedence`` 1000; ``assuredConcurrencyShares`` 30; queuing 64 queues, hand size 8,
  queue length limit 50.
* Validation "where simple" (upstream ``ValidateFlowSchemaSpec`` /
  ``ValidatePriorityLevelConfigurationSpec``): required fields, enums (distinguisher method,
  subject kind, verbs, priority level type, limit response type), positive numbers, subjects
  matching their kind, rules naming what they match, type ``Exempt`` for the level named
  ``exempt`` only, the mandatory objects' fixed specs (the refused value is printed as JSON
  where upstream prints the Go struct). Not checked: the shuffle-sharding entropy bound.
* Printers as upstream's ``printFlowSchema`` (rows of a list in matching order: precedence,
  then name) and ``printPriorityLevelConfiguration``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.fieldmanager import update_managed_fields
from kube_runtime.envtest.server.storage import DELETED, MODIFIED, Event, Obj, Store, now_rfc3339
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _get, _int, _list, _str
from kube_runtime.envtest.server.validation import (
    NOT_SUPPORTED,
    is_dns1123_label,
    is_dns1123_subdomain,
)
from kube_runtime.envtest.server.validation import _list as _seq
from kube_runtime.envtest.server.worker import StoreWorker

__all__ = [
    "FLOW_SCHEMA_COLUMNS",
    "FLOW_SCHEMA_KEY",
    "GROUP",
    "PRIORITY_LEVEL_COLUMNS",
    "PRIORITY_LEVEL_KEY",
    "VERSION",
    "FlowSchemaConditions",
    "bootstrap",
    "bootstrap_objects",
    "check_flow_schema",
    "check_priority_level",
    "dangling_condition",
    "default_flow_schema",
    "default_priority_level",
    "flow_schema_order",
]

GROUP: Final = "flowcontrol.apiserver.k8s.io"
VERSION: Final = "v1beta1"
FLOW_SCHEMA_KEY: Final = (GROUP, "flowschemas")
PRIORITY_LEVEL_KEY: Final = (GROUP, "prioritylevelconfigurations")

_DISTINGUISHER_METHODS: Final = ("ByNamespace", "ByUser")
_SUBJECT_KINDS: Final = ("Group", "ServiceAccount", "User")
_VERBS: Final = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
)
_LEVEL_TYPES: Final = ("Exempt", "Limited")
_LIMIT_RESPONSES: Final = ("Queue", "Reject")
_MAX_PRECEDENCE: Final = 10000
_MAX_QUEUES: Final = 10_000_000
_NS_INTRO: Final = "each member of this list must be '*' or a DNS-1123 label; "


# ------------------------------------------------------------------------------ defaults


def default_flow_schema(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """``v1beta1``'s ``SetDefaults_FlowSchemaSpec``: a zero ``matchingPrecedence`` is 1000."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def default_priority_level(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """``v1beta1``'s defaults of a limited level: 30 assured shares; a queuing configuration
    of 64 queues, hand size 8, queue length limit 50 (each where zero)."""
    limited = _get(obj, "spec", "limited")
    if not isinstance(limited, dict):
        return
    if not limited.get("assuredConcurrencyShares"):
        limited["assuredConcurrencyShares"] = 30
    queuing = _get(limited, "limitResponse", "queuing")
    if isinstance(queuing, dict):
        for name, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
            if not queuing.get(name):
                queuing[name] = value


# ------------------------------------------------------------------------------ validation


def _verbs(out: list[Cause], path: str, verbs: Any) -> None:
    missing = "verbs must contain at least one value"
    listed = _wildcard_list(out, f"{path}.verbs", verbs, "verbs", missing)
    if listed and not set(listed) <= set(_VERBS):
        out.append(fe.not_supported(f"{path}.verbs", listed, _VERBS))


def _wildcard_list(
    out: list[Cause], path: str, values: Any, what: str, missing: str, *, required: bool = True
) -> list[str]:
    """A rule's list that is ``["*"]`` or names: Required (``missing``) when empty and
    ``required``, Invalid when ``*`` stands with others. The names for the caller to check
    one by one; none when the list is empty or holds ``*``."""
    values = [v for v in _seq(values) if isinstance(v, str)]
    if not values:
        if required:
            out.append(fe.required(path, missing))
        return []
    if "*" in values:
        if len(values) > 1:
            out.append(
                fe.invalid(path, values, f"if '*' is present, must not specify other {what}")
            )
        return []
    return values


def _resource_rule(out: list[Cause], path: str, rule: Mapping[str, Any]) -> None:
    _verbs(out, path, rule.get("verbs"))
    _wildcard_list(
        out,
        f"{path}.apiGroups",
        rule.get("apiGroups"),
        "api groups",
        "resource rules must supply at least one api group",
    )
    _wildcard_list(
        out,
        f"{path}.resources",
        rule.get("resources"),
        "resources",
        "resource rules must supply at least one resource",
    )
    namespaces = _wildcard_list(
        out,
        f"{path}.namespaces",
        rule.get("namespaces"),
        "namespaces",
        "resource rules that are not cluster scoped must supply at least one namespace",
        required=not rule.get("clusterScope"),
    )
    for i, name in enumerate(namespaces):
        for msg in is_dns1123_label(name):
            out.append(fe.invalid(f"{path}.namespaces[{i}]", name, _NS_INTRO + msg))


def _url_error(url: str) -> str | None:
    """Upstream ``ValidateNonResourceURLPath``: the problem with one non-resource URL."""
    if not url:
        return "must not be empty"
    if url == "/":
        return None
    if not url.startswith("/"):
        return "must start with slash"
    if " " in url:
        return "must not contain white-space"
    if "//" in url:
        return "must not contain double slash"
    stars = url.count("*")
    if stars > 1 or (stars == 1 and not url.endswith("/*")):
        return "wildcard can only do suffix matching"
    return None


def _non_resource_rule(out: list[Cause], path: str, rule: Mapping[str, Any]) -> None:
    _verbs(out, path, rule.get("verbs"))
    urls = _wildcard_list(
        out,
        f"{path}.nonResourceURLs",
        rule.get("nonResourceURLs"),
        "non-resource URLs",
        "nonResourceURLs must contain at least one value",
    )
    for i, url in enumerate(urls):
        problem = _url_error(url)
        if problem is not None:
            out.append(fe.invalid(f"{path}.nonResourceURLs[{i}]", url, problem))


_SUBJECT_FIELDS: Final = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}


def _subject(out: list[Cause], path: str, subject: Mapping[str, Any]) -> None:
    kind = subject.get("kind")
    if kind not in _SUBJECT_FIELDS:
        out.append(fe.not_supported(f"{path}.kind", kind or "", _SUBJECT_KINDS))
        return
    field = _SUBJECT_FIELDS[str(kind)]
    body = subject.get(field)
    if not isinstance(body, Mapping):
        out.append(
            fe.required(f"{path}.{field}", f"{field} is required when subject kind is '{kind}'")
        )
    elif not body.get("name"):
        out.append(fe.required(f"{path}.{field}.name"))
    elif kind == "ServiceAccount" and body.get("name") != "*":
        for msg in is_dns1123_subdomain(str(body.get("name"))):
            out.append(fe.invalid(f"{path}.{field}.name", body.get("name"), msg))
    if kind == "ServiceAccount" and isinstance(body, Mapping):
        namespace = body.get("namespace")
        if not namespace:
            out.append(
                fe.required(
                    f"{path}.{field}.namespace", "must specify namespace for service account"
                )
            )
        else:
            for msg in is_dns1123_label(str(namespace)):
                out.append(fe.invalid(f"{path}.{field}.namespace", namespace, msg))
    for other_kind, other in _SUBJECT_FIELDS.items():
        if other != field and subject.get(other) is not None:
            out.append(
                fe.forbidden(
                    f"{path}.{other}",
                    f"{other} is forbidden when subject kind is not '{other_kind}'",
                )
            )


def check_flow_schema(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateFlowSchemaSpec`` (and the status conditions' types)."""
    spec = fe.as_map(obj.get("spec"))
    name = fe.as_map(obj.get("metadata")).get("name")
    precedence = spec.get("matchingPrecedence")
    if isinstance(precedence, int):
        if precedence <= 0:
            out.append(
                fe.invalid("spec.matchingPrecedence", precedence, "must be a positive value")
            )
        if precedence > _MAX_PRECEDENCE:
            out.append(
                fe.invalid(
                    "spec.matchingPrecedence",
                    precedence,
                    f"must not be greater than {_MAX_PRECEDENCE}",
                )
            )
        if precedence == 1 and name != "exempt":
            out.append(
                fe.invalid(
                    "spec.matchingPrecedence",
                    precedence,
                    "only the schema named 'exempt' may have matchingPrecedence 1",
                )
            )
    method = spec.get("distinguisherMethod")
    if isinstance(method, Mapping) and method.get("type") not in _DISTINGUISHER_METHODS:
        # upstream reports the whole struct, as Go's %#v prints it
        shown = json.dumps(str(method.get("type") or ""))
        supported = ", ".join(json.dumps(m) for m in _DISTINGUISHER_METHODS)
        out.append(
            Cause(
                "spec.distinguisherMethod.type",
                NOT_SUPPORTED,
                f"Unsupported value: flowcontrol.FlowDistinguisherMethod{{Type:{shown}}}: "
                f"supported values: {supported}",
            )
        )
    level = fe.as_map(spec.get("priorityLevelConfiguration")).get("name")
    if level:
        for msg in is_dns1123_subdomain(str(level)):
            out.append(fe.invalid("spec.priorityLevelConfiguration.name", level, msg))
    else:
        out.append(
            fe.required("spec.priorityLevelConfiguration.name", "must reference a priority level")
        )
    for i, raw in enumerate(_seq(spec.get("rules"))):
        rule = fe.as_map(raw)
        path = f"spec.rules[{i}]"
        subjects = _seq(rule.get("subjects"))
        if not subjects:
            out.append(fe.required(f"{path}.subjects", "subjects must contain at least one value"))
        for j, subject in enumerate(subjects):
            _subject(out, f"{path}.subjects[{j}]", fe.as_map(subject))
        resource_rules = _seq(rule.get("resourceRules"))
        non_resource_rules = _seq(rule.get("nonResourceRules"))
        if not resource_rules and not non_resource_rules:
            out.append(
                fe.required(
                    path, "at least one of resourceRules and nonResourceRules has to be non-empty"
                )
            )
        for j, resource_rule in enumerate(resource_rules):
            _resource_rule(out, f"{path}.resourceRules[{j}]", fe.as_map(resource_rule))
        for j, non_resource_rule in enumerate(non_resource_rules):
            _non_resource_rule(out, f"{path}.nonResourceRules[{j}]", fe.as_map(non_resource_rule))
    _fixed_spec(out, "FlowSchema", obj)
    _conditions(out, obj)


def _semantic(value: Any) -> Any:
    """``value`` as apimachinery's semantic equality sees it (empty and absent alike)."""
    if isinstance(value, Mapping):
        kept = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


@functools.cache
def _mandatory_specs() -> dict[tuple[str, str], Any]:
    """(kind, name) -> the spec of each mandatory object (``exempt``, ``catch-all``)."""
    levels, schemas = bootstrap_objects()
    mandatory = ("exempt", "catch-all")
    return {
        (o["kind"], o["metadata"]["name"]): _semantic(o["spec"])
        for o in (*levels, *schemas)
        if o["metadata"]["name"] in mandatory
    }


def _fixed_spec(out: list[Cause], kind: str, obj: Mapping[str, Any]) -> None:
    """A mandatory object's spec must equal kube-apiserver's (upstream prints the Go struct
    as the value; here its JSON)."""
    name = str(fe.as_map(obj.get("metadata")).get("name") or "")
    fixed = _mandatory_specs().get((kind, name))
    if fixed is not None and _semantic(obj.get("spec") or {}) != fixed:
        out.append(
            fe.invalid(
                "spec", obj.get("spec") or {}, f"spec of '{name}' must equal the fixed value"
            )
        )


def _conditions(out: list[Cause], obj: Mapping[str, Any]) -> None:
    seen: set[str] = set()
    for i, raw in enumerate(_seq(fe.as_map(obj.get("status")).get("conditions"))):
        kind = fe.as_map(raw).get("type")
        path = f"status.conditions[{i}].type"
        if not kind:
            out.append(fe.required(path, "must not be empty"))
        elif kind in seen:
            out.append(fe.duplicate(path, kind))
        seen.add(str(kind or ""))


def _queuing(out: list[Cause], path: str, queuing: Mapping[str, Any]) -> None:
    limit = queuing.get("queueLengthLimit")
    if not isinstance(limit, int) or limit <= 0:
        out.append(fe.invalid(f"{path}.queueLengthLimit", limit or 0, "must be positive"))
    queues = queuing.get("queues")
    queues = queues if isinstance(queues, int) else 0
    if queues <= 0:
        out.append(fe.invalid(f"{path}.queues", queues, "must be positive"))
    elif queues > _MAX_QUEUES:
        out.append(fe.invalid(f"{path}.queues", queues, f"must not be greater than {_MAX_QUEUES}"))
    hand = queuing.get("handSize")
    hand = hand if isinstance(hand, int) else 0
    if hand <= 0:
        out.append(fe.invalid(f"{path}.handSize", hand, "must be positive"))
    elif hand > queues:
        out.append(
            fe.invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})")
        )


def check_priority_level(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidatePriorityLevelConfigurationSpec`` (and the status conditions' types)."""
    spec = fe.as_map(obj.get("spec"))
    kind = spec.get("type")
    limited = spec.get("limited")
    if (fe.as_map(obj.get("metadata")).get("name") == "exempt") != (kind == "Exempt"):
        out.append(
            fe.invalid(
                "spec.type", kind or "", "type must be 'Exempt' if and only if name is 'exempt'"
            )
        )
    if kind == "Exempt":
        if limited is not None:
            out.append(fe.forbidden("spec.limited", "must be nil if the type is not Limited"))
    elif kind == "Limited":
        if not isinstance(limited, Mapping):
            out.append(fe.required("spec.limited", "must not be empty when type is Limited"))
        else:
            shares = limited.get("assuredConcurrencyShares")
            if not isinstance(shares, int) or shares <= 0:
                out.append(
                    fe.invalid(
                        "spec.limited.assuredConcurrencyShares", shares or 0, "must be positive"
                    )
                )
            response = fe.as_map(limited.get("limitResponse"))
            path = "spec.limited.limitResponse"
            queuing = response.get("queuing")
            if response.get("type") == "Reject":
                if queuing is not None:
                    out.append(
                        fe.forbidden(
                            f"{path}.queuing",
                            "must be nil if limited.limitResponse.type is not Limited",
                        )
                    )
            elif response.get("type") == "Queue":
                if not isinstance(queuing, Mapping):
                    out.append(
                        fe.required(
                            f"{path}.queuing",
                            "must not be empty if limited.limitResponse.type is Limited",
                        )
                    )
                else:
                    _queuing(out, f"{path}.queuing", queuing)
            else:
                out.append(
                    fe.not_supported(f"{path}.type", response.get("type") or "", _LIMIT_RESPONSES)
                )
    else:
        out.append(fe.not_supported("spec.type", kind or "", _LEVEL_TYPES))
    _fixed_spec(out, "PriorityLevelConfiguration", obj)
    _conditions(out, obj)


# ------------------------------------------------------------------------------ printers


def _missing_level(obj: Mapping[str, Any]) -> str:
    for condition in _list(_get(obj, "status", "conditions")):
        if condition.get("type") == "Dangling":
            return _str(condition.get("status"))
    return "?"


FLOW_SCHEMA_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("PriorityLevel", lambda o: _str(_get(o, "spec", "priorityLevelConfiguration", "name"))),
    _col("MatchingPrecedence", lambda o: _int(_get(o, "spec", "matchingPrecedence"))),
    _col(
        "DistinguisherMethod",
        lambda o: (
            _str(_get(o, "spec", "distinguisherMethod", "type"))
            if isinstance(_get(o, "spec", "distinguisherMethod"), Mapping)
            else "<none>"
        ),
    ),
    AGE,
    _col("MissingPL", _missing_level),
]


def flow_schema_order(obj: Mapping[str, Any]) -> tuple[int, str]:
    """Upstream's ``FlowSchemaSequence``: the order a list's rows are printed in."""
    return (_int(_get(obj, "spec", "matchingPrecedence")), _str(_get(obj, "metadata", "name")))


def _limited(*path: str) -> Any:
    def cell(obj: Mapping[str, Any]) -> Any:
        limited = _get(obj, "spec", "limited")
        if not isinstance(limited, Mapping):
            return "<none>"
        if path[0] != "assuredConcurrencyShares":
            queuing = _get(limited, "limitResponse", "queuing")
            if not isinstance(queuing, Mapping):
                return "<none>"
            return _int(queuing.get(path[0]))
        return _int(limited.get(path[0]))

    return cell


PRIORITY_LEVEL_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Type", lambda o: _str(_get(o, "spec", "type"))),
    _col("AssuredConcurrencyShares", _limited("assuredConcurrencyShares")),
    _col("Queues", _limited("queues")),
    _col("HandSize", _limited("handSize")),
    _col("QueueLengthLimit", _limited("queueLengthLimit")),
    AGE,
]


# ------------------------------------------------------------------------------ bootstrap

_EVERYTHING: Final = {
    "resourceRules": [
        {
            "verbs": ["*"],
            "apiGroups": ["*"],
            "resources": ["*"],
            "clusterScope": True,
            "namespaces": ["*"],
        }
    ],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
}
_LEASE_RULES: Final = [
    {
        "verbs": ["get", "create", "update"],
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "namespaces": ["*"],
    }
]


def _groups(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _users(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


_KUBE_SYSTEM_ACCOUNTS: Final = [
    {"kind": "ServiceAccount", "serviceAccount": {"name": "*", "namespace": "kube-system"}}
]


def _election_rules(config_namespaces: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "verbs": ["get", "create", "update"],
            "apiGroups": [""],
            "resources": ["endpoints", "configmaps"],
            "namespaces": config_namespaces,
        },
        *_LEASE_RULES,
    ]


def _schema(
    name: str, level: str, precedence: int, method: str | None, rules: list[dict[str, Any]]
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
    }
    if method is not None:
        spec["distinguisherMethod"] = {"type": method}
    spec["rules"] = rules
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "spec": spec,
    }


def _everything(subjects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"subjects": subjects, **copy.deepcopy(_EVERYTHING)}]


def _level(name: str, shares: int | None, queuing: tuple[int, int, int] | None) -> dict[str, Any]:
    spec: dict[str, Any]
    if shares is None:
        spec = {"type": "Exempt"}
    else:
        response: dict[str, Any] = {"type": "Reject"}
        if queuing is not None:
            queues, hand, limit = queuing
            response = {
                "type": "Queue",
                "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": limit},
            }
        spec = {
            "type": "Limited",
            "limited": {"assuredConcurrencyShares": shares, "limitResponse": response},
        }
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name},
        "spec": spec,
    }


def bootstrap_objects() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(priority levels, flow schemas) kube-apiserver 1.20 creates at start: the mandatory
    then the suggested ones, as upstream's ``bootstrap/default.go`` of that release."""
    levels = [
        _level("exempt", None, None),
        _level("catch-all", 5, None),
        _level("system", 30, (64, 6, 50)),
        _level("leader-election", 10, (16, 4, 50)),
        _level("workload-high", 40, (128, 6, 50)),
        _level("workload-low", 100, (128, 6, 50)),
        _level("global-default", 20, (128, 6, 50)),
    ]
    everyone = ("system:unauthenticated", "system:authenticated")
    schemas = [
        _schema("exempt", "exempt", 1, None, _everything(_groups("system:masters"))),
        _schema("catch-all", "catch-all", 10000, "ByUser", _everything(_groups(*everyone))),
        _schema("system-nodes", "system", 500, "ByUser", _everything(_groups("system:nodes"))),
        _schema(
            "system-leader-election",
            "leader-election",
            100,
            "ByUser",
            [
                {
                    "subjects": _users("system:kube-controller-manager", "system:kube-scheduler")
                    + copy.deepcopy(_KUBE_SYSTEM_ACCOUNTS),
                    "resourceRules": _election_rules(["kube-system"]),
                }
            ],
        ),
        _schema(
            "workload-leader-election",
            "leader-election",
            200,
            "ByUser",
            [
                {
                    "subjects": copy.deepcopy(_KUBE_SYSTEM_ACCOUNTS),
                    "resourceRules": _election_rules(["*"]),
                }
            ],
        ),
        _schema(
            "kube-controller-manager",
            "workload-high",
            800,
            "ByNamespace",
            _everything(_users("system:kube-controller-manager")),
        ),
        _schema(
            "kube-scheduler",
            "workload-high",
            800,
            "ByNamespace",
            _everything(_users("system:kube-scheduler")),
        ),
        _schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            "ByNamespace",
            _everything(copy.deepcopy(_KUBE_SYSTEM_ACCOUNTS)),
        ),
        _schema(
            "service-accounts",
            "workload-low",
            9000,
            "ByUser",
            _everything(_groups("system:serviceaccounts")),
        ),
        _schema(
            "global-default", "global-default", 9900, "ByUser", _everything(_groups(*everyone))
        ),
    ]
    return levels, schemas


def dangling_condition(level: str, exists: bool, now: str) -> dict[str, Any]:
    """The ``Dangling`` condition kube-apiserver's configuration controller writes on a
    flow schema whose priority level is named ``level``."""
    if exists:
        status, reason = "False", "Found"
        message = (
            f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
            "and it exists"
        )
    else:
        status, reason = "True", "NotFound"
        message = (
            f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
            "but there is no such object"
        )
    return {
        "type": "Dangling",
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def bootstrap(store: Store) -> None:
    """Create the configuration objects of :func:`bootstrap_objects` that do not exist, each
    flow schema with its ``Dangling`` condition: the mandatory ones always, the suggested ones
    on a fresh cluster only (a restored cluster keeps the suggested objects it deleted)."""
    levels_info = store.registry.by_key(*PRIORITY_LEVEL_KEY)
    schemas_info = store.registry.by_key(*FLOW_SCHEMA_KEY)
    if levels_info is None or schemas_info is None:
        return
    levels, schemas = bootstrap_objects()
    if store.try_get(levels_info, None, "exempt") is not None:
        # 1.20 creates the suggested objects only while the exempt level is missing (a
        # fresh cluster); the mandatory ones are always ensured
        mandatory = ("exempt", "catch-all")
        levels = [o for o in levels if o["metadata"]["name"] in mandatory]
        schemas = [o for o in schemas if o["metadata"]["name"] in mandatory]
    api_version = f"{GROUP}/{VERSION}"

    def managed_by(manager: str, info: Any, subresource: str = "") -> Any:
        def hook(old: Obj | None, new: Obj) -> None:
            update_managed_fields(
                info,
                old,
                new,
                manager,
                api_version,
                subresource,
                lambda: now_rfc3339(store.clock.time),
            )

        return hook

    for level in levels:
        if store.try_get(levels_info, None, level["metadata"]["name"]) is None:
            store.create(levels_info, None, level, fields=managed_by(_PRODUCER, levels_info))
    existing = {str(s.meta.get("name")) for s in store.objects(levels_info)}
    now = now_rfc3339(store.clock.time)
    for schema in schemas:
        name = schema["metadata"]["name"]
        if store.try_get(schemas_info, None, name) is not None:
            continue
        created = store.create(
            schemas_info, None, schema, fields=managed_by(_PRODUCER, schemas_info)
        )
        written = dict(created.obj)
        level = written["spec"]["priorityLevelConfiguration"]["name"]
        written["status"] = {"conditions": [dangling_condition(level, level in existing, now)]}
        store.update(
            schemas_info,
            None,
            name,
            written,
            subresource="status",
            fields=managed_by(_CONSUMER, schemas_info, "status"),
        )


#: The field managers of kube-apiserver's flow control configuration: its bootstrap writer
#: and the controller that writes the flow schemas' conditions.
_PRODUCER: Final = "api-priority-and-fairness-config-producer-v1"
_CONSUMER: Final = "api-priority-and-fairness-config-consumer-v1"


_ALL_SCHEMAS: Final = ""  # a queue item: look at every flow schema


class FlowSchemaConditions(StoreWorker[str]):
    """The part of kube-apiserver's flow control configuration controller the embedded
    cluster runs: each flow schema's ``Dangling`` condition follows whether its priority
    level exists (written through the status subresource by the consumer field manager,
    ``lastTransitionTime`` kept while the status stays), after every change of a flow
    schema and every priority level created or deleted. It does not recreate deleted
    mandatory objects."""

    thread_name = "embedded-apf-config"
    description = "flow schema conditions"
    event_kinds = frozenset({FLOW_SCHEMA_KEY, PRIORITY_LEVEL_KEY})

    def _on_event(self, event: Event) -> None:
        key = event.info.key
        if key == FLOW_SCHEMA_KEY and event.type != DELETED:
            self.enqueue(str(event.new.meta.get("name")))
        elif key == PRIORITY_LEVEL_KEY and event.type != MODIFIED:
            self.enqueue(_ALL_SCHEMAS)

    def _seed(self) -> None:
        self.enqueue(_ALL_SCHEMAS)

    def _handle(self, item: str) -> None:
        schemas = self.store.registry.by_key(*FLOW_SCHEMA_KEY)
        if schemas is None:
            return
        if item == _ALL_SCHEMAS:
            for stored in self.store.objects(schemas):
                self.sync(str(stored.meta.get("name")))
        else:
            self.sync(item)

    def sync(self, name: str) -> None:
        """Write flow schema ``name``'s ``Dangling`` condition if it is not what it should be."""
        schemas = self.store.registry.by_key(*FLOW_SCHEMA_KEY)
        levels = self.store.registry.by_key(*PRIORITY_LEVEL_KEY)
        if schemas is None or levels is None:
            return
        stored = self.store.try_get(schemas, None, name)
        if stored is None:
            return
        level = str(_get(stored.obj, "spec", "priorityLevelConfiguration", "name") or "")
        exists = self.store.try_get(levels, None, level) is not None
        now = now_rfc3339(self.store.clock.time)
        wanted = dangling_condition(level, exists, now)
        conditions = [c for c in _list(_get(stored.obj, "status", "conditions"))]
        current = next((c for c in conditions if c.get("type") == "Dangling"), None)
        if current is not None and all(
            current.get(k) == wanted[k] for k in ("status", "reason", "message")
        ):
            return
        if current is not None and current.get("status") == wanted["status"]:
            wanted["lastTransitionTime"] = current.get("lastTransitionTime") or now
        uid = stored.meta.get("uid")

        def change(obj: Obj) -> Obj:
            if obj["metadata"].get("uid") != uid:
                return obj
            kept = [
                c for c in _list(_get(obj, "status", "conditions")) if c.get("type") != "Dangling"
            ]
            status = dict(obj.get("status") or {})
            status["conditions"] = [*kept, wanted]
            obj = {**obj, "status": status}
            obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
            return obj

        def fields(old: Obj | None, new: Obj) -> None:
            update_managed_fields(
                schemas, old, new, _CONSUMER, f"{GROUP}/{VERSION}", "status", lambda: now
            )

        self._ignore_gone(
            lambda: self.store.mutate(
                schemas, None, name, change, subresource="status", fields=fields
            )
        )
