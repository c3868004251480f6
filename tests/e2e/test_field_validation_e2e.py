"""Server-side field validation (``fieldValidation=Strict|Warn|Ignore`` on create, update and
patch) for built-in kinds and custom resources, through the API and ``kubectl apply
--validate=strict``.

Embedded only: kube-apiserver 1.20 predates server-side field validation (beta and on by
default in 1.25), so it silently drops unknown fields whatever the request says.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from kube_runtime.envtest import wait_for

pytestmark = pytest.mark.embedded_only(
    "kube-apiserver 1.20 predates server-side field validation (1.25)"
)

_STRICT = "cannot be handled as a ConfigMap: strict decoding error: "


def _request(
    api_client: Any, method: str, path: str, body: bytes, ctype: str = "application/json"
) -> tuple[int, dict[str, Any], str | None]:
    """A raw request: (status, parsed answer, Warning header)."""
    params = api_client.param_serialize(
        method,
        path,
        header_params={"Content-Type": ctype, "Accept": "application/json"},
        body=None,
        auth_settings=["BearerToken"],
    )
    method_, url, headers, _, _ = params
    response = api_client.rest_client.pool_manager.request(
        method_, url, body=body, headers=headers, retries=False, timeout=30
    )
    return response.status, json.loads(response.data), response.headers.get("Warning")


_BODY = b'{"metadata":{"name":"NAME","foo":1},"data":{"a":"1"},"bar":2,"data":{"b":"2"}}'


@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore", ""])
def test_create_of_a_builtin_kind(api_client: Any, namespace: str, mode: str) -> None:
    name = f"cm-{mode.lower() or 'default'}"
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    if mode:
        path += f"?fieldValidation={mode}"
    status, answer, warning = _request(
        api_client, "POST", path, _BODY.replace(b"NAME", name.encode())
    )
    if mode == "Strict":
        assert status == 400
        assert answer["reason"] == "BadRequest"
        assert answer["message"] == (
            f'ConfigMap in version "v1" {_STRICT}unknown field "metadata.foo", '
            'unknown field "bar", duplicate field "data"'
        )
        return
    assert status == 201
    stored = client.CoreV1Api(api_client).read_namespaced_config_map(name, namespace)
    assert stored.data == {"b": "2"}  # the last of the duplicates, as Go decodes
    raw = api_client.sanitize_for_serialization(stored)
    assert "bar" not in raw and "foo" not in raw["metadata"]
    if mode == "Ignore":
        assert warning is None
    else:  # Warn, also the default
        assert warning == (
            '299 - "unknown field \\"metadata.foo\\"", 299 - "unknown field \\"bar\\"", '
            '299 - "duplicate field \\"data\\""'
        )


def test_update_and_patch_of_a_builtin_kind(api_client: Any, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    path = f"/api/v1/namespaces/{namespace}/configmaps/cm?fieldValidation=Strict"
    status, answer, _ = _request(
        api_client, "PATCH", path, b'{"spec":{"x":1}}', "application/merge-patch+json"
    )
    assert (status, answer["message"]) == (
        400,
        f'ConfigMap in version "v1" {_STRICT}unknown field "spec"',
    )
    current = api_client.sanitize_for_serialization(
        core.read_namespaced_config_map("cm", namespace)
    )
    current["extra"] = {"y": 1}
    status, answer, _ = _request(api_client, "PUT", path, json.dumps(current).encode())
    assert status == 400 and 'unknown field "extra"' in answer["message"]
    status, _, warning = _request(
        api_client,
        "PATCH",
        path.replace("Strict", "Warn"),
        b'{"data":{"b":"2"},"nope":true}',
        "application/strategic-merge-patch+json",
    )
    assert status == 200 and warning == '299 - "unknown field \\"nope\\""'
    assert core.read_namespaced_config_map("cm", namespace).data == {"a": "1", "b": "2"}


def test_nested_fields_are_named_by_path(api_client: Any, namespace: str) -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "imagePullPolicyy": "Always"}]},
    }
    path = f"/api/v1/namespaces/{namespace}/pods?fieldValidation=Strict"
    status, answer, _ = _request(api_client, "POST", path, json.dumps(pod).encode())
    assert status == 400
    assert answer["message"].endswith(
        'strict decoding error: unknown field "spec.containers[0].imagePullPolicyy"'
    )


def test_invalid_mode_is_rejected(api_client: Any, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps?fieldValidation=Loose"
    status, answer, _ = _request(api_client, "POST", path, b'{"metadata":{"name":"x"}}')
    assert status == 422 and answer["reason"] == "Invalid"
    assert 'Unsupported value: "Loose"' in answer["message"]


@pytest.fixture
def widget_group(api_client: Any) -> Any:
    group = f"v{uuid.uuid4().hex[:8]}.example.com"
    ext = client.ApiextensionsV1Api(api_client)
    ext.create_custom_resource_definition(
        {
            "metadata": {"name": f"widgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {
                                            "size": {"type": "integer"},
                                            "extra": {
                                                "type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True,
                                            },
                                        },
                                    }
                                },
                            }
                        },
                    }
                ],
            },
        }
    )
    wait_for(lambda: _request(api_client, "GET", f"/apis/{group}/v1/widgets", b"")[0] == 200)
    yield group
    ext.delete_custom_resource_definition(f"widgets.{group}")


def test_custom_resources(api_client: Any, namespace: str, widget_group: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    body = {
        "apiVersion": f"{widget_group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "color": "red"},
        "spec": {"size": 1, "foo": 2, "extra": {"anything": True}},
    }
    status, answer, _ = _request(
        api_client, "POST", path + "?fieldValidation=Strict", json.dumps(body).encode()
    )
    assert status == 400
    assert answer["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "metadata.color", unknown field "spec.foo"'
    )
    status, answer, warning = _request(api_client, "POST", path, json.dumps(body).encode())
    assert status == 201
    assert warning == (
        '299 - "unknown field \\"metadata.color\\"", 299 - "unknown field \\"spec.foo\\""'
    )
    assert answer["spec"] == {"size": 1, "extra": {"anything": True}}
    assert "color" not in answer["metadata"]


_KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(_KUBECTL is None, reason="kubectl not installed: run `make kubectl`")
def test_kubectl_apply_validate_strict(kubeconfig: Path, namespace: str) -> None:
    assert _KUBECTL is not None
    manifest = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "strict"},
            "data": {"a": "1"},
            "spec": {"foo": 1},
        }
    )

    def apply(*flags: str) -> subprocess.CompletedProcess[str]:
        cmd = [_KUBECTL, "--kubeconfig", str(kubeconfig), "-n", namespace, "apply", *flags]
        return subprocess.run(
            [*cmd, "-f", "-"], input=manifest, capture_output=True, text=True, timeout=60
        )

    refused = apply("--validate=strict")
    assert refused.returncode != 0
    assert 'strict decoding error: unknown field "spec"' in refused.stderr
    warned = apply("--validate=warn")
    assert warned.returncode == 0, warned.stderr
    assert 'Warning: unknown field "spec"' in warned.stderr
