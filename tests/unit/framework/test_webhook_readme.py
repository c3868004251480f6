"""README.md "Admission webhooks": its example registers what the text says, its webhooks answer
as described, and the command it shows prints their configuration."""

from __future__ import annotations

import base64
import sys
import types
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from kube_runtime import Manager
from kube_runtime.cli import main as cli_main
from kube_runtime.client.fake import FakeClient
from kube_runtime.webhook import Server, server_of

README = Path(__file__).resolve().parents[3] / "README.md"
MODULE = "readme_webhooks"


def section() -> str:
    text = README.read_text()
    start = text.index("### Admission webhooks")
    return text[start : text.index("\n### ", start + 1)]


def python_block() -> str:
    text = section()
    start = text.index("```python\n") + len("```python\n")
    return text[start : text.index("```\n", start)]


@pytest.fixture
def example() -> Iterator[types.ModuleType]:
    module = types.ModuleType(MODULE)
    exec(compile(python_block(), "README.md", "exec"), module.__dict__)
    sys.modules[MODULE] = module
    try:
        yield module
    finally:
        del sys.modules[MODULE]


@pytest.fixture
def server(example: types.ModuleType) -> Server:
    manager = Manager(FakeClient(), metrics_bind_address="0")
    example.setup_webhooks(manager)
    found = server_of(manager)
    assert found is not None
    return found


def ask(server: Server, path: str, operation: str, obj: Any, old: Any = None) -> dict[str, Any]:
    request = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
        "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
        "name": "w",
        "namespace": "default",
        "operation": operation,
        "object": obj,
        "oldObject": old,
    }
    body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    endpoint = server.endpoint(path)
    assert endpoint is not None, path
    reply = endpoint.serve("POST", "application/json", orjson.dumps(body))
    response: dict[str, Any] = orjson.loads(reply.body)["response"]
    return response


def widget(**spec: Any) -> dict[str, Any]:
    meta = {"name": "w", "namespace": "default"}
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": spec}


def test_the_example_serves_the_paths_the_text_names(server: Server) -> None:
    text = section()
    assert server.paths == ["/mutate-example-com-v1-widget", "/validate-example-com-v1-widget"]
    for path in server.paths:
        assert f"`{path}`" in text
    assert server.port == 9443
    (validating,) = [r for r in server.registrations if not r.mutating]
    assert validating.operations == ("CREATE", "UPDATE")  # the ones it overrides


def test_the_example_defaults_and_validates(server: Server) -> None:
    mutate, validate = "/mutate-example-com-v1-widget", "/validate-example-com-v1-widget"
    defaulted = ask(server, mutate, "CREATE", widget(size=1))
    assert orjson.loads(base64.b64decode(defaulted["patch"])) == [
        {"op": "add", "path": "/spec/color", "value": "blue"}
    ]
    created = ask(server, validate, "CREATE", widget(size=1, color="blue"))
    assert created["allowed"] and created["warnings"] == ["size is not checked against quotas"]
    negative = ask(server, validate, "CREATE", widget(size=-1))
    assert not negative["allowed"] and negative["status"]["code"] == 422
    recolored = ask(server, validate, "UPDATE", widget(color="red"), widget(color="blue"))
    assert not recolored["allowed"] and recolored["status"]["code"] == 403
    assert recolored["status"]["message"] == "spec.color is immutable"


def test_the_command_shown_prints_the_configurations(
    example: types.ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "kube-runtime webhook-config mypkg.webhooks:setup_webhooks --service" in section()
    code = cli_main(
        ["webhook-config", f"{MODULE}:setup_webhooks", "--service", "system/webhook-service"]
    )
    assert code == 0
    objects = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [(o["kind"], len(o["webhooks"])) for o in objects] == [
        ("MutatingWebhookConfiguration", 1),
        ("ValidatingWebhookConfiguration", 1),
    ]
    service = objects[0]["webhooks"][0]["clientConfig"]["service"]
    assert service["namespace"] == "system" and service["name"] == "webhook-service"
