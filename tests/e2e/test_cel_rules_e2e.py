"""CEL validation rules of CRD schemas (``x-kubernetes-validations``, issue 17 part 2): what
kube-apiserver 1.25+ answers, on the embedded server. kube-apiserver 1.20 (the real backend
here) predates CEL rules, so these run on the embedded server only."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client
from kube_runtime.crds import install_crd

pytestmark = pytest.mark.embedded_only("kube-apiserver 1.20 predates CEL validation rules (1.25)")

SPEC_RULES = [
    {
        "rule": "self.minReplicas <= self.replicas",
        "message": "minReplicas must not exceed replicas",
    },
    {"rule": "!has(self.tier) || self.tier.startsWith('gold')"},
    {
        "rule": "self.replicas <= 10 || self.size == 'large'",
        "messageExpression": "'replicas ' + string(self.replicas) + ' need size large'",
        "fieldPath": ".size",
    },
    {"rule": "!has(self.legacy)", "reason": "FieldValueForbidden", "message": "legacy is gone"},
]


def _crd(group: str) -> dict[str, Any]:
    spec_schema = {
        "type": "object",
        "x-kubernetes-validations": SPEC_RULES,
        "properties": {
            "replicas": {"type": "integer"},
            "minReplicas": {"type": "integer"},
            "tier": {"type": "string"},
            "size": {"type": "string"},
            "legacy": {"type": "string"},
            "mode": {
                "type": "string",
                "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "mode is immutable"}
                ],
            },
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "port": {
                            "type": "integer",
                            "x-kubernetes-validations": [
                                {"rule": "self >= oldSelf", "message": "ports only go up"}
                            ],
                        },
                    },
                },
            },
            "labels": {
                "type": "object",
                "additionalProperties": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self.size() <= 5"}],
                },
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"caches.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "caches", "singular": "cache", "kind": "Cache"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-validations": [
                                {
                                    "rule": "self.metadata.name.size() <= 20",
                                    "message": "name too long",
                                }
                            ],
                            "properties": {"spec": spec_schema},
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def group(client: Client) -> Iterator[str]:
    group = f"cel-{uuid.uuid4().hex[:8]}.example.com"
    install_crd(client, _crd(group))
    yield group
    client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"caches.{group}")


def _cache(group: str, namespace: str, name: str = "c", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Cache",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 3, "minReplicas": 1, **spec},
    }


def _refused(client: Client, obj: dict[str, Any], *, update: bool = False) -> ApiError:
    with pytest.raises(ApiError) as caught:
        client.update(obj) if update else client.create(obj)
    assert caught.value.code == 422
    return caught.value


def test_failed_rules_answer_422_with_upstream_messages(
    client: Client, namespace: str, group: str
) -> None:
    assert client.create(_cache(group, namespace, "ok", tier="gold-1"))["spec"]["tier"] == "gold-1"
    err = _refused(client, _cache(group, namespace, minReplicas=5, tier="silver"))
    assert [(c["field"], c["reason"], c["message"]) for c in err.causes] == [
        (
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": minReplicas must not exceed replicas',
        ),
        (
            "spec",
            "FieldValueInvalid",
            "Invalid value: \"object\": failed rule: !has(self.tier) || self.tier.startsWith('gold')",
        ),
    ]
    assert err.message.startswith(f'Cache.{group} "c" is invalid: [spec: Invalid value: "object"')


def test_message_expression_field_path_and_reason(
    client: Client, namespace: str, group: str
) -> None:
    err = _refused(client, _cache(group, namespace, replicas=12, size="small", legacy="x"))
    assert {(c["field"], c["reason"], c["message"]) for c in err.causes} == {
        ("spec.size", "FieldValueInvalid", 'Invalid value: "object": replicas 12 need size large'),
        ("spec", "FieldValueForbidden", "Forbidden: legacy is gone"),
    }


def test_rules_on_map_values_and_the_resource_root(
    client: Client, namespace: str, group: str
) -> None:
    err = _refused(client, _cache(group, namespace, labels={"a": "short", "b": "toolong"}))
    assert [(c["field"], c["message"]) for c in err.causes] == [
        ("spec.labels[b]", 'Invalid value: "string": failed rule: self.size() <= 5')
    ]
    err = _refused(client, _cache(group, namespace, name="a-name-longer-than-twenty"))
    assert [(c["field"], c["message"]) for c in err.causes] == [
        ("", 'Invalid value: "object": name too long')
    ]


def test_transition_rules_see_the_old_value_on_update_only(
    client: Client, namespace: str, group: str
) -> None:
    created = client.create(
        _cache(group, namespace, "t", mode="fast", ports=[{"name": "http", "port": 80}])
    )
    created["spec"]["mode"] = "slow"
    err = _refused(client, created, update=True)
    assert [(c["field"], c["message"]) for c in err.causes] == [
        ("spec.mode", 'Invalid value: "string": mode is immutable')
    ]
    created["spec"]["mode"] = "fast"
    created["spec"]["ports"] = [{"name": "http", "port": 79}, {"name": "new", "port": 1}]
    err = _refused(client, created, update=True)
    assert [(c["field"], c["message"]) for c in err.causes] == [
        ("spec.ports[0].port", 'Invalid value: "integer": ports only go up')
    ]
    created["spec"]["ports"] = [{"name": "new", "port": 1}, {"name": "http", "port": 81}]
    assert client.update(created)["spec"]["ports"][1]["port"] == 81  # correlated by name


def test_a_rule_that_fails_to_evaluate_is_reported(client: Client, group: str) -> None:
    crd = _crd(group.replace("cel-", "cel-eval-"))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.tier.size() > 1"}]
    eval_group = crd["spec"]["group"]
    install_crd(client, crd)
    try:
        namespace = "default"
        err = _refused(client, _cache(eval_group, namespace, "e"))
        assert [c["message"] for c in err.causes] == [
            'Invalid value: "object": no such key: tier evaluating rule: self.tier.size() > 1'
        ]
    finally:
        client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", crd["metadata"]["name"])


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("self.replicas >", "Syntax error"),
        ("self.frobnicate()", "undeclared reference to 'frobnicate'"),
    ],
)
def test_a_crd_whose_rule_does_not_compile_is_refused(
    client: Client, rule: str, problem: str
) -> None:
    crd = _crd(f"cel-bad-{uuid.uuid4().hex[:6]}.example.com")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": rule}]
    with pytest.raises(ApiError) as caught:
        client.create(crd)
    assert caught.value.code == 422
    (cause,) = caught.value.causes
    # one version: upstream validates its schema as the CRD's top-level one
    assert cause["field"] == (
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    )
    assert "compilation failed" in cause["message"] and problem in cause["message"]
