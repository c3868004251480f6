"""kube_runtime.envtest.webhooks.serving_webhooks (the ``serve_webhooks`` fixture) on both
backends: the webhooks are called for the test's namespace only, and nothing is left after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kube_runtime import Manager, kinds, webhook
from kube_runtime.client import Client, NotFound
from kube_runtime.envtest.webhooks import serving_webhooks
from kube_runtime.webhook.install import MUTATING_KIND, VALIDATING_KIND


def _stamp(obj: dict[str, Any], request: webhook.AdmissionRequest) -> None:
    obj.setdefault("metadata", {}).setdefault("labels", {})["stamped"] = "yes"


@pytest.fixture
def other_namespace(client: Client, namespace: str) -> Iterator[str]:
    name = f"{namespace}-other"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        client.delete(kinds.Namespace, name)


def _secret(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
    }


def test_serving_webhooks_scopes_them_to_the_namespace_and_cleans_up(
    client: Client, namespace: str, other_namespace: str
) -> None:
    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    webhook.for_kind(manager, kinds.Secret).defaulter(_stamp)
    with serving_webhooks(manager, namespace, client=client) as installer:
        assert client.create(_secret("a", namespace))["metadata"]["labels"] == {"stamped": "yes"}
        assert "labels" not in client.create(_secret("b", other_namespace))["metadata"]
        label = installer.name
        labels = client.get(kinds.Namespace, namespace)["metadata"]["labels"]
        assert labels[label] == "on"
    for kind in (MUTATING_KIND, VALIDATING_KIND):
        for name in (label, f"{label}-probe"):
            with pytest.raises(NotFound):
                client.get(kind, name)
    assert label not in client.get(kinds.Namespace, namespace)["metadata"].get("labels", {})


def test_a_manager_without_webhooks_is_refused(client: Client, namespace: str) -> None:
    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    with (
        pytest.raises(ValueError, match="registers no webhooks"),
        serving_webhooks(manager, namespace),
    ):
        pass
