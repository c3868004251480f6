"""The Greeting's webhooks as the API server calls them: the manager serves them over HTTPS,
the test registers Mutating/ValidatingWebhookConfigurations pointing at it (scoped to the
test's namespace), and kube-apiserver (or the embedded server) defaults and refuses Greetings
through them."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import Manager, webhook
from kube_runtime.client import ApiError, Client
from kube_runtime.crds import install_crd
from kube_runtime.envtest import running
from kube_runtime.envtest.server import tls

from .webhooks import setup_webhooks

HERE = Path(__file__).resolve().parent


def _admission_served(client: Client) -> bool:
    try:
        client.request("GET", "/apis/admissionregistration.k8s.io/v1")
    except ApiError:
        return False
    return True


@pytest.fixture
def webhooks(client: Client, namespace: str, tmp_path: Path) -> Iterator[str]:
    """The manager's webhook server, registered with the API server for ``namespace``."""
    if not _admission_served(client):
        pytest.skip("the API server does not call admission webhooks (issue 17 part 2)")
    install_crd(client, HERE / "crd.yaml")
    certs = tls.generate(tmp_path / "certs")
    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    server = setup_webhooks(
        manager,
        host="127.0.0.1",
        port=0,
        cert_dir=certs.directory,
        cert_name="server.crt",
        key_name="server.key",
    )
    label = f"greetings-{uuid.uuid4().hex[:8]}"
    client.patch("v1/Namespace", namespace, {"metadata": {"labels": {label: "on"}}})
    host, port = server.bind()  # the port now, so the configuration can name it
    with running(manager):
        config = webhook.ClientConfig(url=f"https://{host}:{port}", ca_bundle=certs.ca_pem)
        objects = webhook.manifests(server, config, name=label)
        for obj in objects:
            for hook in obj["webhooks"]:
                hook["namespaceSelector"] = {"matchLabels": {label: "on"}}
            client.create(obj)
        try:
            yield namespace
        finally:
            for obj in objects:
                client.delete(f"admissionregistration.k8s.io/v1/{obj['kind']}", label)


def _greeting(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "examples.kube-runtime.io/v1",
        "kind": "Greeting",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def test_the_api_server_defaults_and_refuses_through_the_webhooks(
    client: Client, webhooks: str, wait_for: Callable[..., Any]
) -> None:
    namespace = webhooks
    attempts = iter(range(10_000))

    def defaulted() -> bool:
        # The API server picks up new webhook configurations after a moment: until then the
        # schema refuses a Greeting without a message.
        try:
            created = client.create(_greeting(f"probe-{next(attempts)}", namespace))
        except ApiError as err:
            assert err.code == 422, err
            return False
        assert created["spec"]["message"] == "hello"  # filled in by the defaulter
        return True

    wait_for(defaulted, timeout=30, message="the mutating webhook defaults the message")
    with pytest.raises(ApiError) as refused:
        client.create(_greeting("blank", namespace, message="   "))
    assert refused.value.code == 422
    assert "denied the request" in refused.value.message
    assert "spec.message" in refused.value.message and "must not be blank" in refused.value.message
    kept = client.create(_greeting("loud", namespace, message="HELLO"))
    assert kept["spec"]["message"] == "HELLO"  # allowed, with a warning for the client


def test_metadata_only_updates_pass_the_validator() -> None:
    """A Greeting stored before the webhook (a blank message) can still get its finalizer."""
    from .webhooks import GreetingValidator

    def review(operation: str, obj: dict[str, Any], old: dict[str, Any]) -> Any:
        request = webhook.AdmissionRequest(
            uid="u",
            operation=operation,
            kind={"group": "examples.kube-runtime.io", "version": "v1", "kind": "Greeting"},
            resource={
                "group": "examples.kube-runtime.io",
                "version": "v1",
                "resource": "greetings",
            },
            namespace="ns",
            object=obj,
            old_object=old,
        )
        return webhook.ValidatingHandler(GreetingValidator()).handle(request)

    stored = {"metadata": {"name": "g", "namespace": "ns"}, "spec": {"message": " "}}
    finalized = {**stored, "metadata": {**stored["metadata"], "finalizers": ["example.com/f"]}}
    assert review("UPDATE", finalized, stored).allowed
    changed = {**stored, "spec": {"message": "  "}}
    refused = review("UPDATE", changed, stored)
    assert not refused.allowed and refused.status is not None and refused.status["code"] == 422
