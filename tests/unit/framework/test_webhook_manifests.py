"""Registration on the builder (kube_runtime.webhook._builder) and what it generates: the
Validating/MutatingWebhookConfigurations and CRD conversion stanza (manifests), and the
``kube-runtime webhook-config`` command."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from kube_runtime import Manager, kinds
from kube_runtime.client.fake import FakeClient
from kube_runtime.client.mapping import Resource
from kube_runtime.webhook import (
    ClientConfig,
    Server,
    Validator,
    crd_conversion,
    for_kind,
    manifests,
    server_for,
    server_of,
    webhook_configurations,
)
from kube_runtime.webhook._command import main

WIDGETS = Resource(
    group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
)


class NoDeletes(Validator):
    def validate_delete(self, obj: Any, request: Any) -> None:
        raise ValueError("no")


def manager() -> Manager:
    return Manager(FakeClient(), metrics_bind_address="0")


def register_nothing(mgr: Manager) -> None:
    """A target that registers no webhook."""


def register(mgr: Manager) -> None:
    """A target of the command: what a user's setup does."""
    server_for(mgr, port=8443, cert_dir="/certs")
    (
        for_kind(mgr, "example.com/v1/Widget", resource=WIDGETS)
        .defaulter(lambda obj, req: None)
        .validator(NoDeletes(), failure_policy="Ignore", timeout_seconds=5)
        .converter("v1beta1", "v1", lambda obj: obj)
    )
    for_kind(mgr, kinds.Pod).validator(lambda obj, req: None, side_effects="NoneOnDryRun")


def test_the_builder_registers_paths_and_the_manager_runs_the_server() -> None:
    mgr = manager()
    assert server_of(mgr) is None
    register(mgr)
    server = server_of(mgr)
    assert server is not None and server.port == 8443 and server in mgr._runnables
    assert server.need_leader_election is False  # every replica answers webhooks
    assert server.paths == [
        "/convert",
        "/mutate-example-com-v1-widget",
        "/validate--v1-pod",
        "/validate-example-com-v1-widget",
    ]
    with pytest.raises(ValueError, match="exists already"):
        server_for(mgr, port=1)
    with pytest.raises(ValueError, match="duplicate path"):
        for_kind(mgr, "example.com/v1/Widget", resource=WIDGETS).validator(NoDeletes())


def test_registrations_that_a_configuration_would_refuse_are_refused(tmp_path: Any) -> None:
    builder = for_kind(Server(cert_dir=tmp_path), "example.com/v1/Widget", resource=WIDGETS)
    with pytest.raises(ValueError, match="at least one operation"):
        builder.validator(Validator())
    with pytest.raises(ValueError, match="side_effects"):
        builder.defaulter(lambda obj, req: None, side_effects="Some")
    with pytest.raises(ValueError, match="failure_policy"):
        builder.defaulter(lambda obj, req: None, failure_policy="Retry")
    with pytest.raises(ValueError, match="unknown operations"):
        builder.defaulter(lambda obj, req: None, operations=("PATCH",))


def test_webhook_configurations_for_a_service() -> None:
    mgr = manager()
    register(mgr)
    server = server_of(mgr)
    assert server is not None
    client = ClientConfig(service_name="hooks", service_namespace="system", ca_bundle=b"PEM")
    mutating, validating = webhook_configurations(server.registrations, client)
    assert mutating["apiVersion"] == "admissionregistration.k8s.io/v1"
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert mutating["metadata"] == {"name": "kube-runtime-webhook"}
    assert mutating["webhooks"] == [
        {
            "name": "mwidget-v1.example.com",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {
                    "namespace": "system",
                    "name": "hooks",
                    "path": "/mutate-example-com-v1-widget",
                    "port": 443,
                },
                "caBundle": base64.b64encode(b"PEM").decode(),
            },
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "rules": [
                {
                    "apiGroups": ["example.com"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["widgets"],
                    "scope": "Namespaced",
                }
            ],
        }
    ]
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    widget, pod = validating["webhooks"]
    assert widget["name"] == "vwidget-v1.example.com"
    assert (widget["failurePolicy"], widget["timeoutSeconds"]) == ("Ignore", 5)
    assert widget["rules"][0]["operations"] == ["DELETE"]
    assert pod["name"] == "vpod-v1.core.kube-runtime.io"
    assert pod["sideEffects"] == "NoneOnDryRun"
    assert pod["rules"] == [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]


def test_a_url_and_cert_manager_and_the_crd_conversion_stanza() -> None:
    mgr = manager()
    register(mgr)
    server = server_of(mgr)
    assert server is not None
    client = ClientConfig(url="https://10.0.0.5:8443/")
    objects = manifests(server, client, name="hooks", cert_manager="system/serving-cert")
    assert [o["kind"] for o in objects] == [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "CustomResourceDefinition",
    ]
    assert objects[0]["metadata"] == {
        "name": "hooks",
        "annotations": {"cert-manager.io/inject-ca-from": "system/serving-cert"},
    }
    assert objects[0]["webhooks"][0]["clientConfig"] == {
        "url": "https://10.0.0.5:8443/mutate-example-com-v1-widget"
    }
    crd = objects[2]
    assert crd["metadata"]["name"] == "widgets.example.com"
    assert crd["spec"] == {"conversion": crd_conversion(client)}
    assert crd_conversion(client) == {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://10.0.0.5:8443/convert"},
        },
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"url": "http://plain"},
        {"service_name": "only-a-name"},
        {"url": "https://x", "service_name": "s", "service_namespace": "n"},
    ],
)
def test_a_client_config_is_a_service_or_an_https_url(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ClientConfig(**kwargs)


def test_a_kind_without_a_known_resource_cannot_be_configured(tmp_path: Any) -> None:
    server = Server(cert_dir=tmp_path)
    for_kind(server, "example.com/v1/Gadget").validator(lambda obj, req: None)
    client = ClientConfig(url="https://localhost:9443")
    with pytest.raises(ValueError, match="resource=Resource"):
        manifests(server, client)


def test_the_command_prints_the_configurations(
    capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(b"CA PEM")
    target = f"{__name__}:register"
    argv = [target, "--service", "system/hooks", "--service-port", "9443", "--ca-bundle", str(ca)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# Generated by `kube-runtime webhook-config {target}`.")
    objects = list(yaml.safe_load_all(out))
    assert [o["kind"] for o in objects] == [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "CustomResourceDefinition",
    ]
    service = objects[1]["webhooks"][1]["clientConfig"]["service"]
    assert service == {
        "namespace": "system",
        "name": "hooks",
        "path": "/validate--v1-pod",
        "port": 9443,
    }
    assert (
        base64.b64decode(objects[2]["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"])
        == b"CA PEM"
    )


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        ([f"{__name__}:register_nothing", "--url", "https://h"], "register no webhooks"),
        (["no.such.module:f", "--url", "https://h"], "No module named"),
        ([f"{__name__}:register", "--service", "hooks"], "expected NAMESPACE/NAME"),
        (["no-such-controller", "--url", "https://h"], "no controller named"),
    ],
)
def test_the_command_reports_errors(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert error in capsys.readouterr().err
