"""Whether a request may call an admission webhook (``Webhooks.wanted``) follows the stored
configurations as they are created, changed and deleted (the webhooks are built once per
change of the configurations, not per request)."""

from __future__ import annotations

from kube_runtime.envtest.server import routing
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import Obj, Store
from kube_runtime.envtest.server.webhooks import VALIDATING_KEY, Webhooks


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
