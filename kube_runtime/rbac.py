"""Permissions as code: the API access a controller needs, declared next to its watches.

kubebuilder writes RBAC markers above a reconciler and ``controller-gen rbac`` turns them into
a ClusterRole. Here a controller's ``setup`` function carries its rules::

    from kube_runtime import rbac

    @rbac.requires(
        rbac.rule("apps", "statefulsets", rbac.CACHE),
        rbac.rule("apps", "statefulsets/status", "update"),
        rbac.rule("", "pods", rbac.CACHE, rbac.WRITE),
    )
    def setup(manager, *, max_concurrent_reconciles=1):
        Builder(manager).for_(kinds.StatefulSet).owns(kinds.Pod).complete(...)

* ``kube-runtime rbac NAME...`` prints the ClusterRole, Role and bindings of the controllers
  registered under those names (:func:`render`), plus what every manager needs
  (:func:`manager_rules`: events, and the leader-election Lease in the manager's namespace).
  With ``--shards``, also what sharding adds (:mod:`kube_runtime.sharding.permissions`), as a
  ClusterRole and a Role ``<name>-sharding`` of their own (only the grants the others lack),
  so that a sharded deployment is the unsharded one plus those objects.
* While a decorated ``setup`` runs, every controller it builds checks that each kind it
  watches is readable through the cache (``list``, ``watch``) under the declared rules and raises
  :class:`MissingPermissionError` naming the rule to add otherwise: a watch added without
  its permission fails at the first test run, not on a cluster.

Rules are normalised the way ``controller-gen`` does: verbs of one (group, resource, names)
are merged, then resources sharing the same group, verbs and names share one rule; the
output is sorted, so the rendered YAML is stable and can be checked in and diffed.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "CACHE",
    "READ",
    "WRITE",
    "MissingPermissionError",
    "Rule",
    "allows",
    "check_readable",
    "declared",
    "leader_election_rules",
    "manager_rules",
    "normalize",
    "render",
    "requires",
    "rule",
    "rules_of",
    "subtract",
]

#: The verbs of reading a kind through an informer (the cache): all a watch needs.
CACHE = ("list", "watch")
#: :data:`CACHE` plus a direct ``get`` (for re-reads that must not come from the cache).
READ = ("get", "list", "watch")
#: The verbs of writing objects of a kind (``deletecollection`` is separate, as upstream).
WRITE = ("create", "update", "patch", "delete")

F = TypeVar("F", bound=Callable[..., Any])

_CURRENT: contextvars.ContextVar[tuple[Rule, ...] | None] = contextvars.ContextVar(
    "kube_runtime_rbac_current", default=None
)


@dataclass(frozen=True, order=True)
class Rule:
    """One RBAC ``PolicyRule``: ``verbs`` on ``resources`` of ``api_groups`` (``""`` is the
    core group), optionally only on objects named in ``resource_names``. A subresource is
    ``"<resource>/<subresource>"`` (``"statefulsets/status"``)."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The rule as a ``rbac.authorization.k8s.io/v1`` PolicyRule (JSON)."""
        out: dict[str, Any] = {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        return out

    def allows(self, group: str, resource: str, verb: str, name: str | None = None) -> bool:
        """Whether this rule grants ``verb`` on ``resource`` of ``group`` (as the RBAC
        authorizer matches: ``*`` matches anything; ``resource_names`` only restrict requests
        that name an object)."""
        return (
            _matches(self.api_groups, group)
            and _matches(self.resources, resource)
            and _matches(self.verbs, verb)
            and (not self.resource_names or (name is not None and name in self.resource_names))
        )


def _matches(allowed: Sequence[str], value: str) -> bool:
    return "*" in allowed or value in allowed


def rule(
    group: str,
    resources: str | Iterable[str],
    *verbs: str | Iterable[str],
    names: Iterable[str] = (),
) -> Rule:
    """A :class:`Rule` for ``resources`` (one name or several) of API ``group``; ``verbs``
    may be single verbs or groups of them (:data:`READ`, :data:`WRITE`)."""
    flat: list[str] = []
    for v in verbs:
        flat.extend([v] if isinstance(v, str) else v)
    if not flat:
        raise ValueError(f"rule({group!r}, {resources!r}): no verbs")
    res = (resources,) if isinstance(resources, str) else tuple(resources)
    return Rule((group,), res, tuple(dict.fromkeys(flat)), tuple(names))


class MissingPermissionError(Exception):
    """A controller watches a kind its declared rules do not let it read."""


def requires(*rules: Rule) -> Callable[[F], F]:
    """Declare the rules a controller's ``setup`` function needs (see the module docstring).

    The function gets a ``__kube_rbac__`` attribute (read by :func:`rules_of` and
    ``kube-runtime rbac``); while it runs, the controllers it builds check their watches
    against the rules (:func:`check_readable`).
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = _CURRENT.set(tuple(rules))
            try:
                return fn(*args, **kwargs)
            finally:
                _CURRENT.reset(token)

        wrapper.__kube_rbac__ = tuple(rules)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def declared() -> tuple[Rule, ...] | None:
    """The rules of the decorated ``setup`` running now, or None outside of one."""
    return _CURRENT.get()


def rules_of(entry: object) -> tuple[Rule, ...] | None:
    """The rules a controller entry declares: those on its ``setup`` (``@requires``), else
    its ``RBAC_RULES`` attribute; None when it declares none."""
    setup = getattr(entry, "setup", None)
    found = getattr(setup, "__kube_rbac__", None)
    if found is None:
        found = getattr(entry, "RBAC_RULES", None)
    return tuple(found) if found is not None else None


def allows(
    rules: Iterable[Rule], group: str, resource: str, verb: str, name: str | None = None
) -> bool:
    """Whether any of ``rules`` grants ``verb`` on ``resource`` of ``group``."""
    return any(r.allows(group, resource, verb, name) for r in rules)


def check_readable(group: str, resource: str, what: str) -> None:
    """Inside a decorated ``setup``: raise :class:`MissingPermissionError` unless the
    declared rules grant list and watch (:data:`CACHE`) on ``resource`` of ``group`` (``what``
    names the watch in the message). Outside of one: nothing."""
    rules = declared()
    if rules is None:
        return
    missing = [v for v in CACHE if not allows(rules, group, resource, v)]
    if missing:
        raise MissingPermissionError(
            f"{what} watches {resource}.{group or 'core'} but the setup's @rbac.requires(...) "
            f"does not grant {', '.join(missing)}: add "
            f"rbac.rule({group!r}, {resource!r}, rbac.CACHE)"
        )


def manager_rules() -> tuple[Rule, ...]:
    """Cluster-wide rules every manager needs: recording events (core ``events``: create,
    and patch to aggregate a repeated event, as client-go's recorder does)."""
    return (rule("", "events", "create", "patch"),)


def leader_election_rules() -> tuple[Rule, ...]:
    """Rules for leader election in the manager's namespace (a Role there): the Lease, which
    candidates also watch (a released Lease is taken at once, a deposed leader stops)."""
    return (rule("coordination.k8s.io", "leases", "get", "create", "update", "watch"),)


def normalize(rules: Iterable[Rule]) -> list[Rule]:
    """Merge and sort ``rules`` (see the module docstring); ``*`` entries are kept as given."""
    verbs: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    for r in rules:
        for group in r.api_groups:
            for resource in r.resources:
                verbs.setdefault((group, resource, r.resource_names), set()).update(r.verbs)
    shared: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for (group, resource, names), vs in verbs.items():
        shared.setdefault((group, tuple(sorted(vs)), names), []).append(resource)
    merged = [
        Rule((group,), tuple(sorted(resources)), vs, names)
        for (group, vs, names), resources in shared.items()
    ]
    return sorted(merged)


def subtract(rules: Iterable[Rule], granted: Iterable[Rule]) -> list[Rule]:
    """The part of ``rules`` that ``granted`` does not already allow, verb by verb (normalised,
    see :func:`normalize`)."""
    granted = list(granted)
    left: list[Rule] = []
    for r in rules:
        for group in r.api_groups:
            for resource in r.resources:
                for verb in r.verbs:
                    names = r.resource_names or (None,)
                    if all(allows(granted, group, resource, verb, n) for n in names):
                        continue
                    left.append(Rule((group,), (resource,), (verb,), r.resource_names))
    return normalize(left)


def render(
    rules: Iterable[Rule],
    *,
    name: str,
    namespace: str,
    service_account: str,
    leader_election: bool = True,
    sharding: tuple[Iterable[Rule], Iterable[Rule]] | None = None,
    only_sharding: bool = False,
) -> list[dict[str, Any]]:
    """The RBAC objects granting ``rules`` (plus :func:`manager_rules`) to ServiceAccount
    ``namespace/service_account``: a ClusterRole and ClusterRoleBinding named ``name``, and
    with ``leader_election`` a Role and RoleBinding ``<name>-leader-election`` in
    ``namespace`` for the Lease.

    ``sharding``: the (cluster-wide, lease-namespace) rules sharding adds
    (:class:`kube_runtime.sharding.permissions.ShardingRules`); what the objects above do not
    grant yet goes into a ClusterRole and a Role ``<name>-sharding`` with their bindings
    (each left out when it would be empty). ``only_sharding``: those objects only (a
    kustomize overlay adding sharding to a deployment that has the others)."""
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}
    cluster = normalize([*rules, *manager_rules()])
    objects = [
        _role("ClusterRole", name, None, cluster),
        _binding("ClusterRoleBinding", name, None, "ClusterRole", subject),
    ]
    in_namespace: list[Rule] = []
    if leader_election:
        le = f"{name}-leader-election"
        in_namespace = normalize(leader_election_rules())
        objects.append(_role("Role", le, namespace, in_namespace))
        objects.append(_binding("RoleBinding", le, namespace, "Role", subject))
    if sharding is None:
        return objects
    if only_sharding:
        objects = []
    sharded = f"{name}-sharding"
    ring_rules, lease_rules = sharding
    extra_cluster = subtract(ring_rules, cluster)
    if extra_cluster:
        objects.append(_role("ClusterRole", sharded, None, extra_cluster))
        objects.append(_binding("ClusterRoleBinding", sharded, None, "ClusterRole", subject))
    extra_namespace = subtract(lease_rules, [*cluster, *in_namespace])
    if extra_namespace:
        objects.append(_role("Role", sharded, namespace, extra_namespace))
        objects.append(_binding("RoleBinding", sharded, namespace, "Role", subject))
    return objects


def _meta(name: str, namespace: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _role(kind: str, name: str, namespace: str | None, rules: list[Rule]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, namespace),
        "rules": [r.to_dict() for r in rules],
    }


def _binding(
    kind: str, name: str, namespace: str | None, role_kind: str, subject: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
        "subjects": [dict(subject)],
    }
