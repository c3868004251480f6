"""The manager's own webhook provisioning (kube_runtime.webhook.install, issue 29): the
self-signed certificate in a Secret (made, shared between replicas, rotated before it
expires), the files the server reads, and the configurations / CRD conversions carrying the CA
bundle. On the fake client: no cluster, milliseconds."""

from __future__ import annotations

import base64
import datetime as dt
import ssl
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client.fake import FakeClient, conflict
from kube_runtime.client.mapping import Resource
from kube_runtime.webhook import ClientConfig, Server, for_kind
from kube_runtime.webhook.install import (
    CA_CERT_KEY,
    Certificates,
    SecretCertStore,
    WebhookInstaller,
    certificates_problem,
    ensure_crd_conversions,
    ensure_webhook_configurations,
    generate_certificates,
    hosts_of,
    write_cert_dir,
)

WIDGETS = Resource(
    group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
)
HOSTS = ["hooks.system.svc", "hooks.system.svc.cluster.local"]
NOW = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
MUTATING = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
VALIDATING = "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"


def _client() -> FakeClient:
    """A fake serving the webhook configurations (cluster-scoped) and CRDs."""
    return (
        FakeClient()
        .register(MUTATING, namespaced=False, status=False)
        .register(VALIDATING, namespaced=False, status=False)
    )


def _server(tmp_path: Path) -> Server:
    server = Server(port=0, cert_dir=tmp_path / "certs")
    for_kind(server, "example.com/v1/Widget", resource=WIDGETS).defaulter(
        lambda obj, req: None
    ).validator(lambda obj, req: None)
    return server


def test_generated_certificates_serve_their_hosts_and_verify_against_the_ca(
    tmp_path: Path,
) -> None:
    certs = generate_certificates(["127.0.0.1", "hooks.system.svc"], now=NOW)
    assert certificates_problem(certs, ["127.0.0.1", "hooks.system.svc"], now=NOW) is None
    assert certificates_problem(certs, ["other.svc"], now=NOW) == (
        "the certificate does not name other.svc"
    )
    # A TLS stack accepts the pair, and the CA as a trust root.
    write_cert_dir(tmp_path, certs)
    ssl.create_default_context().load_verify_locations(cadata=certs.ca_cert.decode())
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    assert oct((tmp_path / "tls.key").stat().st_mode & 0o777) == "0o600"
    assert write_cert_dir(tmp_path, certs) is False  # unchanged files are not rewritten


def test_a_certificate_is_due_for_renewal_before_it_expires_and_keeps_its_ca() -> None:
    certs = generate_certificates(HOSTS, now=NOW, cert_validity=dt.timedelta(days=10))
    renew = dt.timedelta(days=3)
    assert (
        certificates_problem(certs, HOSTS, now=NOW + dt.timedelta(days=6), renew_before=renew)
        is None
    )
    problem = certificates_problem(certs, HOSTS, now=NOW + dt.timedelta(days=8), renew_before=renew)
    assert problem is not None and problem.startswith("the certificate expires at")
    renewed = generate_certificates(HOSTS, ca=certs, now=NOW + dt.timedelta(days=8))
    assert renewed.ca_cert == certs.ca_cert and renewed.cert != certs.cert  # same CA bundle
    other = generate_certificates(HOSTS, now=NOW)
    mixed = Certificates(ca_cert=other.ca_cert, ca_key=other.ca_key, cert=certs.cert, key=certs.key)
    assert certificates_problem(mixed, HOSTS, now=NOW) == "the certificate is not signed by the CA"
    wrong_key = Certificates(certs.ca_cert, certs.ca_key, certs.cert, other.key)
    assert certificates_problem(wrong_key, HOSTS, now=NOW) == "the key is not the certificate's"


def test_hosts_of_a_service_and_of_a_url() -> None:
    assert hosts_of(ClientConfig(service_name="hooks", service_namespace="system")) == HOSTS
    assert hosts_of(ClientConfig(url="https://127.0.0.1:9443")) == ["127.0.0.1"]


def test_the_secret_is_created_once_then_read() -> None:
    client = _client()
    store = SecretCertStore(client, "system")
    certs, written = store.ensure(HOSTS, now=NOW)
    assert written
    again, written_again = store.ensure(HOSTS, now=NOW)
    assert not written_again and again.cert == certs.cert and again.ca_cert == certs.ca_cert
    secret = client.get("v1/Secret", "kube-runtime-webhook-certs", "system")
    assert base64.b64decode(secret["data"]["tls.crt"]) == certs.cert
    assert base64.b64decode(secret["data"][CA_CERT_KEY]) == certs.ca_cert


def test_two_replicas_starting_at_once_end_with_one_certificate(mocker: Any) -> None:
    """Both read no Secret; the second's create meets AlreadyExists and it takes the first's."""
    client = _client()
    first = SecretCertStore(client, "system")
    second = SecretCertStore(client, "system")
    raced: list[Any] = []
    original_create = client.create

    def create_after_the_other(obj: Any, **options: Any) -> Any:
        if not raced:  # the other replica's create lands between our read and our create
            raced.append(None)
            raced.append(first.ensure(HOSTS, now=NOW))
        return original_create(obj, **options)

    create = mocker.patch.object(client, "create", side_effect=create_after_the_other)
    certs, written = second.ensure(HOSTS, now=NOW)
    (winner, winner_wrote) = raced[1]
    assert winner_wrote and not written
    assert create.call_count == 2  # each tried to create; one Secret exists
    assert certs.cert == winner.cert and certs.key == winner.key


def test_a_conflicting_rotation_takes_the_other_replicas_certificate(mocker: Any) -> None:
    client = _client()
    store = SecretCertStore(
        client, "system", cert_validity=dt.timedelta(days=10), renew_before=dt.timedelta(days=3)
    )
    store.ensure(HOSTS, now=NOW)
    later = NOW + dt.timedelta(days=8)
    other = SecretCertStore(
        client, "system", cert_validity=dt.timedelta(days=10), renew_before=dt.timedelta(days=3)
    )
    original_update = client.update
    rotated: list[Any] = []

    def update_after_the_other(obj: Any, **options: Any) -> Any:
        if not rotated:  # the other replica's rotation lands between our read and our update
            rotated.append(None)
            rotated.append(other.ensure(HOSTS, now=later))
        return original_update(obj, **options)

    mocker.patch.object(client, "update", side_effect=update_after_the_other)
    certs, written = store.ensure(HOSTS, now=later)
    winner, _ = rotated[1]
    assert not written and certs.cert == winner.cert
    assert certificates_problem(certs, HOSTS, now=later, renew_before=dt.timedelta(days=3)) is None


def test_rotation_rewrites_the_secret_and_the_files_and_keeps_the_ca(tmp_path: Path) -> None:
    client = _client()
    server = _server(tmp_path)
    installer = WebhookInstaller(
        client,
        server,
        ClientConfig(url="https://127.0.0.1:9443"),
        secret_namespace="system",
        cert_validity=dt.timedelta(days=10),
        renew_before=dt.timedelta(days=3),
    )
    first = installer.ensure_certificates(now=NOW)
    assert first is not None
    assert (tmp_path / "certs" / "tls.crt").read_bytes() == first.cert
    second = installer.ensure_certificates(now=NOW + dt.timedelta(days=8))
    assert second is not None and second.cert != first.cert and second.ca_cert == first.ca_cert
    assert (tmp_path / "certs" / "tls.crt").read_bytes() == second.cert
    assert (tmp_path / "certs" / "tls.key").read_bytes() == second.key


def _bundles(obj: dict[str, Any]) -> set[bytes]:
    return {base64.b64decode(h["clientConfig"]["caBundle"]) for h in obj["webhooks"]}


def test_sync_writes_configurations_with_the_ca_bundle_and_updates_them(tmp_path: Path) -> None:
    client = _client()
    server = _server(tmp_path)
    installer = WebhookInstaller(
        client,
        server,
        ClientConfig(url="https://127.0.0.1:9443"),
        secret_namespace="system",
        name="hooks",
    )
    installer.sync(now=NOW)
    certs = installer.certificates
    assert certs is not None
    mutating = client.get(MUTATING, "hooks")
    validating = client.get(VALIDATING, "hooks")
    assert _bundles(mutating) == _bundles(validating) == {certs.ca_cert}
    assert mutating["webhooks"][0]["clientConfig"]["url"] == (
        "https://127.0.0.1:9443/mutate-example-com-v1-widget"
    )
    # Up to date: no write. A scope set by hand survives; a changed CA is written.
    version = mutating["metadata"]["resourceVersion"]
    installer.sync(now=NOW)
    assert client.get(MUTATING, "hooks")["metadata"]["resourceVersion"] == version
    mutating["webhooks"][0]["namespaceSelector"] = {"matchLabels": {"team": "a"}}
    mutating["webhooks"][0]["clientConfig"]["caBundle"] = base64.b64encode(b"stale").decode()
    client.update(mutating)
    installer.sync(now=NOW)
    hook = client.get(MUTATING, "hooks")["webhooks"][0]
    assert hook["namespaceSelector"] == {"matchLabels": {"team": "a"}}
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == certs.ca_cert


def test_configurations_retry_a_conflict(tmp_path: Path) -> None:
    client = _client()
    server = _server(tmp_path)
    config = ClientConfig(url="https://127.0.0.1:9443", ca_bundle=b"ca-1")
    ensure_webhook_configurations(client, server.registrations, config, name="hooks")
    hooks = Resource(
        group="admissionregistration.k8s.io",
        version="v1",
        kind="MutatingWebhookConfiguration",
        plural="mutatingwebhookconfigurations",
        namespaced=False,
    )
    client.fail_next("update", conflict(hooks, "hooks"))
    written = ensure_webhook_configurations(
        client,
        server.registrations,
        ClientConfig(url="https://127.0.0.1:9443", ca_bundle=b"ca-2"),
        name="hooks",
    )
    assert written == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    assert _bundles(client.get(VALIDATING, "hooks")) == {b"ca-2"}


def test_cert_manager_mode_writes_no_secret_and_keeps_the_injected_bundle(tmp_path: Path) -> None:
    client = _client()
    server = _server(tmp_path)
    with pytest.raises(ValueError, match="cert_manager"):
        WebhookInstaller(
            client,
            server,
            ClientConfig(url="https://h:1"),
            secret_namespace="s",
            manage_certs=False,
        )
    installer = WebhookInstaller(
        client,
        server,
        ClientConfig(service_name="hooks", service_namespace="system"),
        secret_namespace="system",
        name="hooks",
        manage_certs=False,
        cert_manager="system/serving-cert",
    )
    installer.sync()
    assert client.objects("v1/Secret") == []
    validating = client.get(VALIDATING, "hooks")
    annotations = validating["metadata"]["annotations"]
    assert annotations["cert-manager.io/inject-ca-from"] == "system/serving-cert"
    validating["webhooks"][0]["clientConfig"]["caBundle"] = base64.b64encode(b"injected").decode()
    client.update(validating)
    installer.sync()
    assert _bundles(client.get(VALIDATING, "hooks")) == {b"injected"}


def test_crd_conversions_get_the_bundle_once() -> None:
    client = _client()
    client.create(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "conversion": {"strategy": "None"}},
        }
    )
    config = ClientConfig(url="https://127.0.0.1:9443", ca_bundle=b"ca")
    crds = ["widgets.example.com", "missing.example.com"]
    assert ensure_crd_conversions(client, crds, config) == ["widgets.example.com"]
    assert ensure_crd_conversions(client, crds, config) == []
    conversion = client.get(
        "apiextensions.k8s.io/v1/CustomResourceDefinition", "widgets.example.com"
    )["spec"]["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert base64.b64decode(conversion["webhook"]["clientConfig"]["caBundle"]) == b"ca"
    assert conversion["webhook"]["clientConfig"]["url"] == "https://127.0.0.1:9443/convert"


def test_a_local_installer_removes_only_configurations_that_call_it(tmp_path: Path) -> None:
    client = _client()
    server = _server(tmp_path)
    installer = WebhookInstaller(
        client,
        server,
        ClientConfig(url="https://127.0.0.1:9443"),
        secret_namespace="system",
        name="hooks",
        remove_on_stop=True,
    )
    installer.sync(now=NOW)
    other = ClientConfig(url="https://127.0.0.1:9444", ca_bundle=b"ca")
    ensure_webhook_configurations(client, server.registrations, other, name="hooks")
    assert installer.remove() == []  # another replica's URL now: left alone
    installer.sync(now=NOW)
    assert installer.remove() == [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    assert client.objects(VALIDATING) == [] and client.objects(MUTATING) == []
