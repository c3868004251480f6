"""The Greeting's webhooks as the API server calls them: the ``serve_webhooks`` fixture runs
the manager, installs its webhooks for the test's namespace as the manager installs its own
(a certificate, the Mutating/ValidatingWebhookConfigurations) and returns once kube-apiserver
(or the embedded server) calls them; then it defaults and refuses Greetings through them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import Manager
from kube_runtime.client import ApiError, Client
from kube_runtime.crds import install_crd

from .webhooks import setup_webhooks

HERE = Path(__file__).resolve().parent


@pytest.fixture
def webhooks(client: Client, namespace: str, serve_webhooks: Callable[..., Any]) -> str:
    """The Greeting webhooks, called by the API server for ``namespace``."""
    install_crd(client, HERE / "crd.yaml")
    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    setup_webhooks(manager)
    serve_webhooks(manager, namespace)
    return namespace


def _greeting(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "examples.kube-runtime.io/v1",
        "kind": "Greeting",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def test_the_api_server_defaults_and_refuses_through_the_webhooks(
    client: Client, webhooks: str
) -> None:
    namespace = webhooks
    created = client.create(_greeting("plain", namespace))
    assert created["spec"]["message"] == "hello"  # filled in by the defaulter
    with pytest.raises(ApiError) as refused:
        client.create(_greeting("blank", namespace, message="   "))
    assert refused.value.code == 422
    assert "denied the request" in refused.value.message
    assert "spec.message" in refused.value.message and "must not be blank" in refused.value.message
    kept = client.create(_greeting("loud", namespace, message="HELLO"))
    assert kept["spec"]["message"] == "HELLO"  # allowed, with a warning for the client
