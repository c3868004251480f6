"""The webhook server over real HTTPS (kube_runtime.webhook): run by a manager, certificates
from files (the envtest CA helpers), AdmissionReview and ConversionReview JSON posted by a
client that verifies the server against the CA, and a certificate replaced on disk picked up
by new connections."""

from __future__ import annotations

import base64
import http.client
import os
import shutil
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from pydantic import BaseModel, ConfigDict

from kube_runtime import Manager, webhook
from kube_runtime.client.mapping import Resource
from kube_runtime.envtest.managers import running
from kube_runtime.envtest.server import tls


class WidgetSpec(BaseModel):
    model_config = ConfigDict(extra="allow")
    size: int | None = None
    color: str | None = None


class Widget(BaseModel):
    """A resource model as codegen writes one (extra fields round-trip)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    __kube_resource__: ClassVar[Resource] = Resource(
        group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
    )
    metadata: dict[str, Any]
    spec: WidgetSpec | None = None


def set_defaults(widget: Widget, request: webhook.AdmissionRequest) -> None:
    assert widget.spec is not None
    if widget.spec.color is None:
        widget.spec.color = "blue"
    if request.dry_run:
        request.warn("dry run: nothing is persisted")


class WidgetValidator(webhook.Validator):
    def validate_create(self, obj: Widget, request: webhook.AdmissionRequest) -> list[str]:
        assert obj.spec is not None
        if (obj.spec.size or 0) < 0:
            raise webhook.Invalid("spec.size", "must be at least 0", value=obj.spec.size)
        return ["size is not checked against quotas"]

    def validate_delete(self, obj: Widget, request: webhook.AdmissionRequest) -> None:
        if obj.metadata.get("labels", {}).get("protected") == "true":
            raise webhook.Denied("protected widgets cannot be deleted")


def v1alpha1_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "spec": {"size": obj["spec"]["replicas"]}}


def widget(spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    meta = {"name": "w", "namespace": "default", **metadata}
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": spec}


def admission_review(operation: str, obj: Any = None, old: Any = None, **extra: Any) -> bytes:
    request = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
        "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
        "name": "w",
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": "tester"},
        "object": obj,
        "oldObject": old,
        **extra,
    }
    return orjson.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    )


class Https:
    """Posts to the server, verifying its certificate against ``ca_file``."""

    def __init__(self, address: tuple[str, int], ca_file: Path) -> None:
        self.address = address
        self.context = ssl.create_default_context(cafile=str(ca_file))

    def post(self, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPSConnection(*self.address, context=self.context, timeout=10)
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        return response.status, orjson.loads(data) if data.startswith(b"{") else {}


@pytest.fixture
def certs(tmp_path: Path) -> Iterator[tls.ServingCerts]:
    yield tls.generate(tmp_path / "serving-certs")


@pytest.fixture
def manager(client: Any) -> Manager:
    return Manager(client, metrics_bind_address="0", health_probe_bind_address="127.0.0.1:0")


@pytest.fixture
def server(manager: Manager, certs: tls.ServingCerts) -> Iterator[webhook.Server]:
    server = webhook.server_for(
        manager,
        host="127.0.0.1",
        port=0,
        cert_dir=certs.directory,
        cert_name="server.crt",
        key_name="server.key",
        cert_poll_interval=0.02,
    )
    (
        webhook.for_kind(manager, Widget)
        .defaulter(set_defaults)
        .validator(WidgetValidator())
        .converter("v1alpha1", "v1", v1alpha1_to_v1)
    )
    with running(manager) as runner:
        assert server.wait_started(10), runner.error
        yield server


def test_defaulting_answers_a_json_patch(server: webhook.Server, certs: tls.ServingCerts) -> None:
    https = Https(server.address, certs.ca_file)
    body = admission_review("CREATE", widget({"size": 3, "shape": "round"}), dryRun=True)
    status, review = https.post("/mutate-example-com-v1-widget", body)
    assert status == 200
    response = review["response"]
    assert response["uid"] == orjson.loads(body)["request"]["uid"]
    assert response["allowed"] is True and response["status"]["code"] == 200
    assert response["patchType"] == "JSONPatch"
    # The unknown field "shape" is kept: the patch only adds the default.
    patch = orjson.loads(base64.b64decode(response["patch"]))
    assert patch == [{"op": "add", "path": "/spec/color", "value": "blue"}]
    assert response["warnings"] == ["dry run: nothing is persisted"]


def test_validating_allows_refuses_and_checks_deletes(
    server: webhook.Server, certs: tls.ServingCerts
) -> None:
    https = Https(server.address, certs.ca_file)
    path = "/validate-example-com-v1-widget"
    _, ok = https.post(path, admission_review("CREATE", widget({"size": 1})))
    assert ok["response"]["allowed"] is True
    assert ok["response"]["warnings"] == ["size is not checked against quotas"]

    _, bad = https.post(path, admission_review("CREATE", widget({"size": -2})))
    assert bad["response"]["allowed"] is False
    assert bad["response"]["status"]["code"] == 422
    assert bad["response"]["status"]["message"] == (
        'Widget.example.com "w" is invalid: spec.size: Invalid value: -2: must be at least 0'
    )

    protected = widget({"size": 1}, labels={"protected": "true"})
    _, refused = https.post(path, admission_review("DELETE", None, protected))
    assert refused["response"]["allowed"] is False
    assert refused["response"]["status"]["code"] == 403
    assert refused["response"]["status"]["message"] == "protected widgets cannot be deleted"

    _, garbled = https.post(path, b'{"apiVersion": "admission.k8s.io/v1"')
    assert garbled["response"]["allowed"] is False
    assert garbled["response"]["status"]["code"] == 400


def test_conversion_review(server: webhook.Server, certs: tls.ServingCerts) -> None:
    https = Https(server.address, certs.ca_file)
    old = {
        "apiVersion": "example.com/v1alpha1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "uid": "u-1"},
        "spec": {"replicas": 4},
    }
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": "example.com/v1", "objects": [old]},
    }
    status, answer = https.post("/convert", orjson.dumps(review))
    assert status == 200
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1"
    assert answer["kind"] == "ConversionReview"
    assert answer["response"]["uid"] == "c-1"
    assert answer["response"]["result"]["status"] == "Success"
    assert answer["response"]["convertedObjects"] == [
        {**old, "apiVersion": "example.com/v1", "spec": {"size": 4}}
    ]

    review["request"]["desiredAPIVersion"] = "example.com/v2"  # type: ignore[index]
    _, failed = https.post("/convert", orjson.dumps(review))
    assert failed["response"]["result"]["status"] == "Failure"
    assert "no converter registered" in failed["response"]["result"]["message"]


def test_unknown_path_and_untrusted_client(
    server: webhook.Server, certs: tls.ServingCerts, tmp_path: Path
) -> None:
    status, _ = Https(server.address, certs.ca_file).post("/nowhere", b"{}")
    assert status == 404
    stranger = tls.generate(tmp_path / "other")
    with pytest.raises(ssl.SSLCertVerificationError):
        Https(server.address, stranger.ca_file).post("/convert", b"{}")


def test_a_certificate_replaced_on_disk_is_served_to_new_connections(
    server: webhook.Server, certs: tls.ServingCerts, tmp_path: Path, wait_for: Any
) -> None:
    path = "/validate-example-com-v1-widget"
    body = admission_review("CREATE", widget({"size": 1}))
    assert Https(server.address, certs.ca_file).post(path, body)[0] == 200

    renewed = tls.generate(tmp_path / "renewed")  # a new CA too: old clients cannot verify
    for name in ("server.key", "server.crt"):  # as a Secret volume update: rename into place
        staged = certs.directory / f".{name}.new"
        shutil.copyfile(renewed.directory / name, staged)
        os.replace(staged, certs.directory / name)

    def served_with_the_new_certificate() -> bool:
        return Https(server.address, renewed.ca_file).post(path, body)[0] == 200

    wait_for(served_with_the_new_certificate, timeout=10, message="the renewed certificate")
    assert server.cert_watcher is not None and server.cert_watcher.reloads >= 1
    with pytest.raises(ssl.SSLCertVerificationError):
        Https(server.address, certs.ca_file).post(path, body)


def test_the_manager_is_ready_once_the_server_serves(
    manager: Manager, server: webhook.Server, wait_for: Any
) -> None:
    def readyz() -> str:
        assert manager.health_probe_address is not None
        conn = http.client.HTTPConnection(*manager.health_probe_address, timeout=10)
        try:
            conn.request("GET", "/readyz?verbose")
            response = conn.getresponse()
            return response.read().decode() if response.status == 200 else ""
        finally:
            conn.close()

    assert "[+]webhook ok" in wait_for(readyz, message="the manager's /readyz")
