"""Whether a request may call an admission webhook (``Webhooks.wanted``) follows the stored
configurations as they are created, changed and deleted (the webhooks are built once per
change of the configurations, not per request)."""

from __future__ import annotations

from kube_runtime.envtest.server import routing
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import Obj, Store
from kube_runtime.envtest.server.webhooks import MUTATING_KEY, VALIDATING_KEY, Webhooks


def _configuration(resources: list[str]) -> Obj:
    return {
        "metadata": {"name": "check"},
        "webhooks": [
            {
                "name": "check.example.io",
                "clientConfig": {"url": "https://127.0.0.1:1/check"},
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": resources,
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }


def test_wanted_follows_the_configurations() -> None:
    store = Store(Registry())
    hooks = Webhooks(store)
    route = routing.route(store.registry, ["api", "v1", "namespaces", "ns", "configmaps"])
    assert route is not None
    info = store.registry.by_key(*VALIDATING_KEY)
    assert info is not None
    assert not hooks.wanted(route, "create")
    assert not hooks.wanted(route, "create")  # asked again, nothing changed
    store.create(info, None, _configuration(["secrets"]))
    assert not hooks.wanted(route, "create")
    store.update(info, None, "check", _configuration(["configmaps"]))
    assert hooks.wanted(route, "create")
    assert not hooks.wanted(route, "update")  # the rule names CREATE only
    store.delete(info, None, "check")
    assert not hooks.wanted(route, "create")


def test_wanted_sees_mutating_and_restored_configurations() -> None:
    """The short answer for a store that never held a configuration is not taken once one
    of either kind is stored, created or restored from a journal."""
    registry = Registry()
    for key in (MUTATING_KEY, VALIDATING_KEY):
        info = registry.by_key(*key)
        assert info is not None and info.key == key  # what Store.changes_of is asked with
    route = routing.route(registry, ["api", "v1", "namespaces", "ns", "configmaps"])
    assert route is not None
    mutating = registry.by_key(*MUTATING_KEY)
    assert mutating is not None

    created = Store(registry)
    hooks = Webhooks(created)
    assert not hooks.wanted(route, "create")
    created.create(mutating, None, _configuration(["configmaps"]))
    assert hooks.wanted(route, "create")

    restored = Store(registry)
    restored.load([(mutating, created.get(mutating, None, "check"))], created.resource_version)
    assert Webhooks(restored).wanted(route, "create")
