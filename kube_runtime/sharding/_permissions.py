"""The API access sharding needs on top of the controllers' own (``kube-runtime rbac --shards``).

What the sharding code sends, by verb, and where (checked against an API server with RBAC and
an audit log by ``tests/e2e/test_rbac_sharding_e2e.py``):

* **every kind on the ring** (each sharded controller's ``for_`` kind and its ``owns`` kinds):
  ``patch``. The sharder writes the shard label on primary objects (assignment, the drain
  request, a cancelled drain) and relabels owned objects when their owner moves; a shard
  answers a drain by patching both labels off the primary object. Reads are the
  controllers' own ``list``/``watch`` (the sharder's metadata view, its fresh list of what an
  old shard labelled), which their ``@rbac.requires`` already declares.
* **Leases in the lease namespace** (:data:`LEASE_RULES`): ``get``, ``create``, ``update``,
  ``watch`` as for leader election (each replica's shard Lease, the ``<ring>-sharder`` Lease;
  ``update`` also takes an expired shard's Lease over); ``list`` and ``watch`` of the ring's
  Leases (the sharder's view of the shards); ``patch`` to label a replica's Lease that exists
  without the ring's label; ``delete`` of dead shards' Leases nothing refers to any more.

:func:`ring_resources` finds the ring's kinds by running the controllers' ``setup`` against a
fake client with sharding on (the kinds their builders register), so the rules follow the
code rather than a list kept by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kube_runtime.entrypoints import ControllerEntry
from kube_runtime.rbac import Rule, rule

__all__ = ["LEASE_RULES", "RING_VERBS", "ShardingRules", "ring_resources", "sharding_rules"]

#: The verbs sharding uses on each kind of the ring (primary and owned).
RING_VERBS = ("patch",)

#: The Lease access of a sharded replica, in its lease namespace (see the module docstring).
LEASE_RULES = (
    rule(
        "coordination.k8s.io",
        "leases",
        "get",
        "list",
        "watch",
        "create",
        "update",
        "patch",
        "delete",
    ),
)


@dataclass(frozen=True)
class ShardingRules:
    """The rules sharding adds: ``cluster`` (a ClusterRole: the ring's kinds, in every
    namespace the controllers watch) and ``namespace`` (a Role in the lease namespace)."""

    cluster: tuple[Rule, ...]
    namespace: tuple[Rule, ...] = LEASE_RULES


def ring_resources(entries: Iterable[ControllerEntry]) -> list[tuple[str, str]]:
    """The (API group, resource) of every kind the controller ``entries`` put on a ring: each
    entry's ``setup(manager, max_concurrent_reconciles=1)`` (as ``kube-runtime run`` calls it)
    runs against a fake client serving the CRDs its ``install_crd(client, timeout=...)``
    creates, on a manager with sharding on; nothing is started and nothing is sent anywhere."""
    from kube_runtime.client.fake import FakeClient
    from kube_runtime.kinds import CustomResourceDefinition
    from kube_runtime.manager import Manager
    from kube_runtime.sharding._shard import Sharding

    fake = FakeClient()
    entries = list(entries)
    for entry in entries:
        install: Callable[..., Any] | None = getattr(entry, "install_crd", None)
        if callable(install):
            try:  # creates the CRD, then finds it not Established (nothing runs here)
                install(fake, timeout=0)
            except TimeoutError:
                pass
    for crd in fake.list(CustomResourceDefinition)["items"]:
        spec = crd["spec"]
        for version in spec.get("versions") or ():
            if version.get("served", True):
                fake.register(
                    f"{spec['group']}/{version['name']}/{spec['names']['kind']}",
                    spec["names"]["plural"],
                    namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                )
    manager = Manager(
        fake,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        sharding=Sharding(),
        identity="rbac",
    )
    for entry in entries:
        entry.setup(manager, max_concurrent_reconciles=1)
    assert manager.sharding is not None
    mapper = manager.api_reader.mapper
    found: dict[tuple[str, str], None] = {}
    for rk in manager.sharding.ring_kinds():
        for kind in (rk.primary, *rk.owned):
            resource = mapper.resource_for(kind)
            found[(resource.group, resource.plural)] = None
    return list(found)


def sharding_rules(resources: Iterable[tuple[str, str]]) -> ShardingRules:
    """The rules of a sharded replica whose ring holds ``resources`` ((group, plural) pairs,
    see :func:`ring_resources`)."""
    return ShardingRules(
        cluster=tuple(rule(group, plural, RING_VERBS) for group, plural in resources)
    )
