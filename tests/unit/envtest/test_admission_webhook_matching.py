"""The embedded server's admission webhook dispatch without a network: which webhook a
request matches (rules, scope, selectors, matchPolicy), how refusals are worded, and the
configurations' defaults and validation (kube-apiserver's)."""

from __future__ import annotations

from typing import Any

import pytest

from kube_runtime.client import ApiError
from kube_runtime.envtest.server import validation, webhookconfig, webhooks
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import Store

PODS = ResourceInfo("", ("v1",), "Pod", "pods", "pod", True, has_status=True)
NAMESPACES = ResourceInfo("", ("v1",), "Namespace", "namespaces", "namespace", False)
NODES = ResourceInfo("", ("v1",), "Node", "nodes", "node", False)
WIDGETS = ResourceInfo("example.com", ("v1", "v1beta1"), "Widget", "widgets", "widget", True)


def rule(**overrides: Any) -> dict[str, Any]:
    return {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["pods"],
        "scope": "*",
        **overrides,
    }


@pytest.mark.parametrize(
    ("resources", "subresource", "expected"),
    [
        (["pods"], "", True),
        (["pods"], "status", False),
        (["pods/status"], "status", True),
        (["pods/status"], "", False),
        (["pods/*"], "", True),
        (["pods/*"], "status", True),
        (["*"], "", True),
        (["*"], "status", False),
        (["*/*"], "status", True),
        (["*/status"], "status", True),
        (["*/status"], "binding", False),
        (["deployments"], "", False),
    ],
)
def test_resources_and_subresources(resources: list[str], subresource: str, expected: bool) -> None:
    matched = webhooks._rule_matches(
        rule(resources=resources), PODS, subresource, "CREATE", "v1", "ns"
    )
    assert matched is expected


def test_operations_groups_versions() -> None:
    assert webhooks._rule_matches(rule(operations=["*"]), PODS, "", "DELETE", "v1", "ns")
    assert not webhooks._rule_matches(rule(), PODS, "", "UPDATE", "v1", "ns")
    assert not webhooks._rule_matches(rule(apiGroups=["apps"]), PODS, "", "CREATE", "v1", "ns")
    assert webhooks._rule_matches(rule(apiGroups=["*"]), PODS, "", "CREATE", "v1", "ns")
    assert not webhooks._rule_matches(rule(apiVersions=["v2"]), PODS, "", "CREATE", "v1", "ns")


def test_scope() -> None:
    namespaced, cluster = rule(scope="Namespaced"), rule(scope="Cluster", resources=["*"])
    assert webhooks._rule_matches(namespaced, PODS, "", "CREATE", "v1", "ns")
    assert not webhooks._rule_matches(cluster, PODS, "", "CREATE", "v1", "ns")
    assert webhooks._rule_matches(cluster, NODES, "", "CREATE", "v1", "")
    # a Namespace is cluster-scoped, though its requests name a namespace (itself)
    assert webhooks._rule_matches(cluster, NAMESPACES, "", "CREATE", "v1", "team")
    assert not webhooks._rule_matches(
        rule(scope="Namespaced", resources=["*"]), NAMESPACES, "", "CREATE", "v1", "team"
    )


def _store(*configs: dict[str, Any]) -> Store:
    registry = Registry()
    registry.add(WIDGETS)
    store = Store(registry)
    info = registry.by_key(*webhooks.VALIDATING_KEY)
    assert info is not None
    for config in configs:
        store.create(info, None, config)
    return store


def _config(name: str, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "webhooks": list(hooks)}


def _hook(name: str, **spec: Any) -> dict[str, Any]:
    base = {"name": name, "rules": [rule()], "clientConfig": {"url": "https://h"}}
    return {**base, **spec}


def _attrs(
    info: ResourceInfo, namespace: str = "ns", version: str = "v1", operation: str = "CREATE"
) -> webhooks._Attributes:
    return webhooks._Attributes(info, version, "", operation, namespace, "x", None)  # type: ignore[arg-type]


def test_configurations_in_name_order_webhooks_in_their_order() -> None:
    store = _store(
        _config("b", _hook("b1.x.y"), _hook("b0.x.y")),
        _config("a", _hook("a1.x.y")),
    )
    hooks = webhooks.Webhooks(store)._hooks(webhooks.VALIDATING_KEY)
    assert [h.name for h in hooks] == ["a1.x.y", "b1.x.y", "b0.x.y"]


def test_namespace_and_object_selectors() -> None:
    store = _store()
    ns_info = store.registry.by_key("", "namespaces")
    assert ns_info is not None
    store.create(ns_info, None, {"metadata": {"name": "ns", "labels": {"team": "a"}}})
    dispatch = webhooks.Webhooks(store)
    selected = webhooks._Hook(
        "c", 0, _hook("h.x.y", namespaceSelector={"matchLabels": {"team": "a"}})
    )
    other = webhooks._Hook("c", 1, _hook("h.x.y", namespaceSelector={"matchLabels": {"team": "b"}}))
    pod = {"metadata": {"labels": {"app": "web"}}}
    assert dispatch._should_call(selected, _attrs(PODS), pod, None) == "v1"
    assert dispatch._should_call(other, _attrs(PODS), pod, None) is None
    # a namespace's own labels decide for a Namespace being created
    ns_rule = rule(resources=["namespaces"])
    by_labels = webhooks._Hook(
        "c", 2, _hook("n.x.y", rules=[ns_rule], namespaceSelector={"matchLabels": {"team": "b"}})
    )
    new_ns = {"metadata": {"name": "fresh", "labels": {"team": "b"}}}
    assert dispatch._should_call(by_labels, _attrs(NAMESPACES, "fresh"), new_ns, None) == "v1"
    # objectSelector: the new or the old object's labels
    by_object = webhooks._Hook(
        "c", 3, _hook("o.x.y", objectSelector={"matchLabels": {"app": "web"}})
    )
    assert dispatch._should_call(by_object, _attrs(PODS), pod, None) == "v1"
    assert dispatch._should_call(by_object, _attrs(PODS), {"metadata": {}}, pod) == "v1"
    assert dispatch._should_call(by_object, _attrs(PODS), {"metadata": {}}, None) is None
    # cluster-scoped objects ignore the namespaceSelector
    node_hook = webhooks._Hook(
        "c",
        4,
        _hook(
            "d.x.y",
            rules=[rule(resources=["nodes"])],
            namespaceSelector={"matchLabels": {"x": "y"}},
        ),
    )
    assert dispatch._should_call(node_hook, _attrs(NODES, ""), {"metadata": {}}, None) == "v1"


def test_match_policy_equivalent_sends_the_rule_version() -> None:
    dispatch = webhooks.Webhooks(_store())
    v1_only = rule(apiGroups=["example.com"], resources=["widgets"])
    equivalent = webhooks._Hook("c", 0, _hook("w.x.y", rules=[v1_only]))
    exact = webhooks._Hook("c", 1, _hook("w.x.y", rules=[v1_only], matchPolicy="Exact"))
    request = _attrs(WIDGETS, version="v1beta1")
    obj: dict[str, Any] = {"metadata": {}}
    assert dispatch._should_call(equivalent, request, obj, None) == "v1"
    assert dispatch._should_call(exact, request, obj, None) is None


def test_denials_worded_as_kube_apiserver() -> None:
    err = webhooks._denied("h.x.y", {"code": 403, "reason": "Forbidden", "message": "no"})
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == 'admission webhook "h.x.y" denied the request: no'
    bare = webhooks._denied("h.x.y", {"code": 200})
    assert bare.code == 400
    assert bare.message == 'admission webhook "h.x.y" denied the request without explanation'
    reason_only = webhooks._denied("h.x.y", {"code": 409, "reason": "Conflict"})
    assert reason_only.message.endswith("denied the request: Conflict")
    assert isinstance(webhooks._denied("h.x.y", None), ApiError)


def test_configuration_defaults() -> None:
    config: dict[str, Any] = {
        "webhooks": [{"name": "a.b.c", "rules": [{}], "clientConfig": {"service": {"name": "s"}}}]
    }
    webhookconfig.default_mutating(config)
    hook = config["webhooks"][0]
    assert hook["failurePolicy"] == "Fail" and hook["matchPolicy"] == "Equivalent"
    assert hook["timeoutSeconds"] == 10 and hook["reinvocationPolicy"] == "Never"
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["rules"][0]["scope"] == "*"
    assert hook["clientConfig"]["service"]["port"] == 443


def test_configuration_validation() -> None:
    obj = {
        "metadata": {"name": "cfg"},
        "webhooks": [
            {
                "name": "short",
                "clientConfig": {"url": "http://x"},
                "rules": [rule()],
                "sideEffects": "Some",
                "admissionReviewVersions": ["v2"],
                "timeoutSeconds": 31,
            }
        ],
    }
    causes = validation.validate(
        "admissionregistration.k8s.io", "ValidatingWebhookConfiguration", obj
    )
    messages = {c.field: c.message for c in causes}
    assert messages["webhooks[0].name"] == (
        'Invalid value: "short": should be a domain with at least three segments separated by dots'
    )
    assert messages["webhooks[0].sideEffects"] == (
        'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'
    )
    assert "webhooks[0].admissionReviewVersions" in messages
    assert messages["webhooks[0].timeoutSeconds"] == (
        "Invalid value: 31: the timeout value must be between 1 and 30 seconds"
    )
    assert messages["webhooks[0].clientConfig.url"].endswith(
        "'https' is the only allowed URL scheme"
    )
