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
  With ``--shards``, also what sharding adds (:mod:`kube_runtime.sharding._permissions`), as a
  ClusterRole and a Role ``<name>-sharding`` of their own (only the grants the others lack),
  so that a sharded deployment is the unsharded one plus those objects.
* ``kube-runtime rbac module:function`` does the same for a ``setup`` function that is not
  an installed entry point (an operator run from its source tree).
* While a decorated ``setup`` runs, every controller it builds checks its wiring against the
  declared rules (:func:`check_controller`) and raises :class:`MissingPermissionError` naming
  every rule to add otherwise: a watch or an ``owns()`` added without its permission fails at
  the first test run, not on a cluster. What a controller's wiring needs:

  - each kind it watches (``for_``, ``owns``, ``watches``): ``list`` and ``watch`` (the cache);
  - each kind it ``owns()``: ``create`` as well (an owner creates what it owns);
  - the ``for_`` kind of a controller that owns anything: ``update`` on its ``finalizers``
    subresource (``<plural>/finalizers``). :func:`~kube_runtime.controllerutil.set_controller_reference`
    sets ``blockOwnerDeletion: true``, which kube-apiserver's OwnerReferencesPermissionEnforcement
    admission plugin allows only to who may update the owner's finalizers.

  What the reconciler does at run time is not seen at setup: declare ``get`` for reads through
  the direct client (``manager.api_reader``, ``create_or_update``), ``update``/``patch``/``delete``
  where it writes, ``<plural>/status`` for status writes, and ``<plural>/finalizers: update``
  for every kind it adds finalizers to (kubebuilder's scaffold does the same). Events and the
  leader-election Lease come with every manager (:func:`manager_rules`,
  :func:`leader_election_rules`). :func:`refused_actions` checks what a test on the
  :class:`~kube_runtime.client.fake.FakeClient` did against the rules, and the pytest fixture
  ``client_with_rules`` (:mod:`kube_runtime.envtest.rbac`) runs a test under them on
  kube-apiserver with its RBAC authorizer.

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
    "NoRulesDeclared",
    "Rule",
    "allows",
    "check_controller",
    "check_readable",
    "declared",
    "leader_election_rules",
    "manager_rules",
    "normalize",
    "refused_actions",
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


class NoRulesDeclared(TypeError):
    """:func:`rules_of` got something that declares no rules (or rules that are not
    :class:`Rule` objects)."""


def rules_of(entry: object) -> tuple[Rule, ...]:
    """The rules a controller declares: ``entry`` is a ``setup`` function decorated with
    :func:`requires`, or an entry (a module, an object) whose ``setup`` is, or one with an
    ``RBAC_RULES`` attribute (the decorator wins when both are there).

    :class:`NoRulesDeclared` (a ``TypeError``) when it declares none, naming what was given
    and how to declare them: a missing declaration is never read as "needs nothing"."""
    setup = getattr(entry, "setup", None)
    found = getattr(entry, "__kube_rbac__", None)
    source = "@rbac.requires"
    if found is None:
        found = getattr(setup, "__kube_rbac__", None)
    if found is None:
        found, source = getattr(entry, "RBAC_RULES", None), "RBAC_RULES"
    if found is None:
        what = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
        described = f"{what} ({type(entry).__name__})" if what else repr(entry)
        hint = (
            "decorate it with @kube_runtime.rbac.requires(...)"
            if callable(entry) and setup is None
            else "decorate its setup with @kube_runtime.rbac.requires(...) or give it RBAC_RULES"
        )
        raise NoRulesDeclared(f"{described} declares no RBAC rules: {hint}")
    rules = tuple(found)
    wrong = [r for r in rules if not isinstance(r, Rule)]
    if wrong:
        raise NoRulesDeclared(
            f"{source} of {entry!r} holds {wrong[0]!r}, not a kube_runtime.rbac.Rule "
            "(make rules with rbac.rule(group, resource, verbs...))"
        )
    return rules


def allows(
    rules: Iterable[Rule], group: str, resource: str, verb: str, name: str | None = None
) -> bool:
    """Whether any of ``rules`` grants ``verb`` on ``resource`` of ``group``."""
    return any(r.allows(group, resource, verb, name) for r in rules)


def check_readable(group: str, resource: str, what: str) -> None:
    """Inside a decorated ``setup``: raise :class:`MissingPermissionError` unless the
    declared rules grant list and watch (:data:`CACHE`) on ``resource`` of ``group`` (``what``
    names the watch in the message). Outside of one: nothing."""
    check_controller(what, watched=[(group, resource)])


def _needed(
    owner: tuple[str, str] | None,
    owned: Iterable[tuple[str, str]],
    watched: Iterable[tuple[str, str]],
) -> list[tuple[str, str, str, str]]:
    """(group, resource, verb, why) of what a controller's wiring needs, in order."""
    owned = list(owned)
    needs: list[tuple[str, str, str, str]] = []
    seen: set[tuple[str, str, str]] = set()

    def need(group: str, resource: str, verb: str, why: str) -> None:
        if (group, resource, verb) not in seen:
            seen.add((group, resource, verb))
            needs.append((group, resource, verb, why))

    for group, resource in [*([owner] if owner else []), *owned, *watched]:
        for verb in CACHE:
            need(group, resource, verb, "it watches them")
    for group, resource in owned:
        need(group, resource, "create", "it owns them: it creates them")
    if owner is not None and owned:
        group, resource = owner
        need(
            group,
            f"{resource}/finalizers",
            "update",
            "its controller references set blockOwnerDeletion, which "
            "OwnerReferencesPermissionEnforcement allows only with this grant",
        )
    return needs


def check_controller(
    what: str,
    *,
    owner: tuple[str, str] | None = None,
    owned: Iterable[tuple[str, str]] = (),
    watched: Iterable[tuple[str, str]] = (),
) -> None:
    """Inside a decorated ``setup``: raise :class:`MissingPermissionError` unless the declared
    rules grant what a controller's wiring needs (see the module docstring): ``owner`` is the
    ``(group, plural)`` of its ``for_`` kind, ``owned`` those of its ``owns()`` kinds,
    ``watched`` those of its other watches. The message names every missing grant and the
    ``rbac.rule(...)`` lines that add them; ``what`` names the controller. Outside of a
    decorated ``setup``: nothing."""
    rules = declared()
    if rules is None:
        return
    missing = [
        (group, resource, verb, why)
        for group, resource, verb, why in _needed(owner, owned, watched)
        if not allows(rules, group, resource, verb)
    ]
    if not missing:
        return
    by_reason: dict[tuple[str, str, str], list[str]] = {}
    by_resource: dict[tuple[str, str], list[str]] = {}
    for group, resource, verb, why in missing:
        by_reason.setdefault((group, resource, why), []).append(verb)
        by_resource.setdefault((group, resource), []).append(verb)
    reasons = "; ".join(
        f"{', '.join(verbs)} on {resource}.{group or 'core'} ({why})"
        for (group, resource, why), verbs in by_reason.items()
    )
    additions = ", ".join(
        f"rbac.rule({group!r}, {resource!r}, {', '.join(repr(v) for v in verbs)})"
        for (group, resource), verbs in by_resource.items()
    )
    raise MissingPermissionError(
        f"{what}: the setup's @rbac.requires(...) does not grant {reasons}: add {additions}"
    )


#: The RBAC verb of each :class:`~kube_runtime.client.fake.FakeClient` call (its ``Action.verb``).
_ACTION_VERBS = {
    "get": "get",
    "list": "list",
    "create": "create",
    "update": "update",
    "patch": "patch",
    "apply": "patch",
    "delete": "delete",
    "delete_all_of": "deletecollection",
}


def _metadata_of(body: Any) -> Mapping[str, Any]:
    if hasattr(body, "model_dump"):
        body = body.model_dump(by_alias=True, exclude_none=True)
    meta = body.get("metadata") if isinstance(body, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def refused_actions(rules: Iterable[Rule], actions: Iterable[Any], mapper: Any) -> list[str]:
    """What kube-apiserver's RBAC authorizer would refuse of ``actions`` (a
    :class:`~kube_runtime.client.fake.FakeClient`'s ``actions``; ``mapper``: its ``mapper``)
    under ``rules``, one line per missing grant with the ``rbac.rule(...)`` that adds it
    (empty: every call was allowed). Checked per call: its verb on its resource or
    subresource (``apply`` is ``patch``, ``delete_all_of`` ``deletecollection``); a body
    whose owner references set ``blockOwnerDeletion: true`` needs ``update`` on the owner's
    ``<plural>/finalizers`` (OwnerReferencesPermissionEnforcement); a create or patch setting
    finalizers needs ``update`` on its own kind's ``<plural>/finalizers`` (kubebuilder's
    convention, for clusters that check finalizer changes). Watches are the informers'
    ``list`` calls (``watch`` is checked at setup, :func:`check_controller`). A kind the
    mapper does not know is a ``LookupError``."""
    rules = list(rules)
    missing: dict[tuple[str, str, str], str] = {}

    def need(group: str, resource: str, verb: str, why: str) -> None:
        if not allows(rules, group, resource, verb) and (group, resource, verb) not in missing:
            missing[group, resource, verb] = why

    for action in actions:
        verb = _ACTION_VERBS.get(action.verb)
        if verb is None:
            raise ValueError(f"unknown client call {action.verb!r} in {action!r}")
        res = mapper.resource_for(action.kind)
        resource = f"{res.plural}/{action.subresource}" if action.subresource else res.plural
        where = "/".join(p for p in (action.namespace, action.name) if p)
        need(res.group, resource, verb, f"{action.verb} {res.plural} {where}".rstrip())
        if verb not in ("create", "update", "patch") or action.obj is None:
            continue
        meta = _metadata_of(action.obj)
        for ref in meta.get("ownerReferences") or ():
            if isinstance(ref, Mapping) and ref.get("blockOwnerDeletion"):
                owner = mapper.resource_for(f"{ref.get('apiVersion')}/{ref.get('kind')}")
                need(
                    owner.group,
                    f"{owner.plural}/finalizers",
                    "update",
                    f"blockOwnerDeletion on {res.plural} {where} owned by {ref.get('kind')}",
                )
        if meta.get("finalizers") and verb != "update" and not action.subresource:
            need(res.group, f"{res.plural}/finalizers", "update", f"finalizers of {where}")
    return [
        f"{verb} on {resource}.{group or 'core'} ({why}): add rbac.rule({group!r}, "
        f"{resource!r}, {verb!r})"
        for (group, resource, verb), why in missing.items()
    ]


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
    (:class:`kube_runtime.sharding._permissions.ShardingRules`); what the objects above do not
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
