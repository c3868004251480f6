"""OpenAPI v2 and v3 documents, and ``kubectl explain`` on them.

``/openapi/v2`` (JSON and gnostic protobuf) is checked on both backends: built-in kinds with
their group-version-kind and strategic-merge metadata, a CRD's definitions appearing, changing
with its schema and disappearing with it. ``/openapi/v3`` is checked on the embedded server
only: kube-apiserver 1.20 has no v3 endpoint (alpha in 1.23, GA in 1.27). ``kubectl explain``
runs with the current kubectl (which reads v3) and Debian's 1.20 client (which reads v2
protobuf); a binary that is absent is skipped with the reason (`make kubectl` installs both).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kube_runtime.envtest import wait_for
from kube_runtime.envtest.server.openapi_proto import decode_names

_OLD = Path(
    os.environ.get(
        "KUBECTL_OLD", Path.home() / ".cache/kube-runtime/kubectl-debian/usr/bin/kubectl"
    )
)
_BINARIES = {
    "current": shutil.which("kubectl"),
    "debian-1.20": str(_OLD) if _OLD.exists() else None,
}
_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_NO_V3 = "kube-apiserver 1.20 serves no /openapi/v3 (alpha in 1.23, GA in 1.27)"


@pytest.fixture(params=sorted(_BINARIES))
def kubectl(request: pytest.FixtureRequest, kubeconfig: Path, tmp_path: Path) -> Any:
    binary = _BINARIES[request.param]
    if binary is None:
        pytest.skip(
            f"kubectl ({request.param}) not installed: run `make kubectl` (scripts/ensure-kubectl.sh)"
        )

    def run(*args: str, check: bool = True) -> str:
        # A cache directory of its own: a shared one could hold another cluster's documents.
        cmd = [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc.stdout + proc.stderr

    return run


def _get(api_client: Any, path: str, accept: str = "application/json") -> tuple[int, bytes]:
    params = api_client.param_serialize(
        "GET", path, header_params={"Accept": accept}, auth_settings=["BearerToken"]
    )
    response = api_client.call_api(*params)
    response.read()
    return response.status, response.data


def _v2(api_client: Any) -> dict[str, Any]:
    status, body = _get(api_client, "/openapi/v2")
    assert status == 200
    document: dict[str, Any] = json.loads(body)
    return document


def _crd(group: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "A gizmo for the OpenAPI tests.",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "description": "What the gizmo should be.",
                                    "required": ["size"],
                                    "properties": properties,
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


_SIZE = {"size": {"type": "integer", "description": "How many parts the gizmo has."}}
_COLOR = {"color": {"type": "string", "description": "The colour the gizmo is painted."}}


@pytest.fixture
def gizmo_group(api_client: Any) -> Any:
    """A CRD of its own group (``Gizmo``, spec.size), deleted afterwards."""
    group = f"o{uuid.uuid4().hex[:8]}.example.com"
    ext = client.ApiextensionsV1Api(api_client)
    ext.create_custom_resource_definition(_crd(group, _SIZE))
    yield group
    try:
        ext.delete_custom_resource_definition(f"gizmos.{group}")
    except ApiException as e:
        if e.status != 404:
            raise


def _definition_name(group: str, kind: str) -> str:
    return ".".join(reversed(group.split("."))) + ".v1." + kind


def test_v2_json_has_builtin_kinds(api_client: Any) -> None:
    definitions = _v2(api_client)["definitions"]
    sts = definitions["io.k8s.api.apps.v1.StatefulSet"]
    assert sts["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "StatefulSet", "version": "v1"}
    ]
    containers = definitions["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert "containers" in definitions["io.k8s.api.core.v1.PodSpec"]["required"]
    int_or_string = definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert (int_or_string["type"], int_or_string["format"]) == ("string", "int-or-string")


def test_v2_protobuf_decodes_as_gnostic_document(api_client: Any) -> None:
    status, body = _get(api_client, "/openapi/v2", _PROTOBUF)
    assert status == 200
    names = decode_names(body)
    assert names["io.k8s.api.core.v1.Pod"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert names["io.k8s.api.apps.v1.StatefulSet"] == [
        {"group": "apps", "kind": "StatefulSet", "version": "v1"}
    ]


def test_crd_definitions_follow_the_crd(api_client: Any, gizmo_group: str) -> None:
    name = _definition_name(gizmo_group, "Gizmo")

    def published() -> dict[str, Any] | None:
        found: dict[str, Any] | None = _v2(api_client)["definitions"].get(name)
        return found

    schema = wait_for(published, timeout=30, message=f"{name} in /openapi/v2")
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": gizmo_group, "kind": "Gizmo", "version": "v1"}
    ]
    assert schema["description"] == "A gizmo for the OpenAPI tests."
    # kube-apiserver's aggregator renames a CRD's copy of a shared definition it
    # cannot merge with the built-in one (``ObjectMeta_v2``); either name is valid.
    assert re.fullmatch(
        r"#/definitions/io\.k8s\.apimachinery\.pkg\.apis\.meta\.v1\.ObjectMeta(_v\d+)?",
        schema["properties"]["metadata"]["$ref"],
    )
    assert schema["properties"]["spec"]["properties"]["size"]["type"] == "integer"
    listed = _v2(api_client)["definitions"][_definition_name(gizmo_group, "GizmoList")]
    assert listed["properties"]["items"]["items"]["$ref"] == f"#/definitions/{name}"

    ext = client.ApiextensionsV1Api(api_client)
    crd = ext.read_custom_resource_definition(f"gizmos.{gizmo_group}")
    props = crd.spec.versions[0].schema.open_apiv3_schema.properties["spec"].properties
    props["color"] = client.V1JSONSchemaProps(**_COLOR["color"])
    ext.replace_custom_resource_definition(f"gizmos.{gizmo_group}", crd)
    wait_for(
        lambda: (
            "color"
            in (published() or {}).get("properties", {}).get("spec", {}).get("properties", {})
        ),
        timeout=30,
        message="the new field in /openapi/v2",
    )

    ext.delete_custom_resource_definition(f"gizmos.{gizmo_group}")
    wait_for(lambda: published() is None, timeout=30, message=f"{name} gone from /openapi/v2")


@pytest.mark.embedded_only(_NO_V3)
def test_v3_discovery_and_group_version_documents(api_client: Any, gizmo_group: str) -> None:
    key = f"apis/{gizmo_group}/v1"

    def listed() -> dict[str, Any] | None:
        status, body = _get(api_client, "/openapi/v3")
        assert status == 200
        found: dict[str, Any] | None = json.loads(body)["paths"].get(key)
        return found

    entry = wait_for(listed, timeout=30, message=f"{key} in /openapi/v3")
    url = entry["serverRelativeURL"]
    assert url.startswith(f"/openapi/v3/{key}?hash=")
    status, body = _get(api_client, url)
    assert status == 200
    doc = json.loads(body)
    assert doc["openapi"].startswith("3.")
    schema = doc["components"]["schemas"][_definition_name(gizmo_group, "Gizmo")]
    assert schema["properties"]["spec"]["required"] == ["size"]
    patch = doc["paths"][f"/apis/{gizmo_group}/v1/namespaces/{{namespace}}/gizmos/{{name}}"][
        "patch"
    ]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "Gizmo"
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    # What the schema references comes along.
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["components"]["schemas"]

    status, body = _get(api_client, "/openapi/v3/apis/apps/v1")
    apps = json.loads(body)["components"]["schemas"]
    sts = apps["io.k8s.api.apps.v1.StatefulSet"]
    assert sts["properties"]["spec"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.apps.v1.StatefulSetSpec"}
    ]
    assert _get(api_client, "/openapi/v3/apis/nothing.example.com/v1")[0] == 404

    # A change to the CRD moves the hash.
    ext = client.ApiextensionsV1Api(api_client)
    crd = ext.read_custom_resource_definition(f"gizmos.{gizmo_group}")
    props = crd.spec.versions[0].schema.open_apiv3_schema.properties["spec"].properties
    props["color"] = client.V1JSONSchemaProps(**_COLOR["color"])
    ext.replace_custom_resource_definition(f"gizmos.{gizmo_group}", crd)
    wait_for(lambda: (listed() or {}).get("serverRelativeURL") != url, timeout=30)


def test_explain_builtin_kinds(kubectl: Any) -> None:
    pod = kubectl("explain", "pod.spec")
    assert "containers" in pod and "-required-" in pod
    assert "List of containers belonging to the pod" in pod
    sts = kubectl("explain", "statefulset.spec")
    assert "serviceName" in sts and "volumeClaimTemplates" in sts
    assert "StatefulSet" in sts


def test_explain_custom_resource(kubectl: Any, gizmo_group: str, api_client: Any) -> None:
    resource = f"gizmos.{gizmo_group}"
    # kubectl 1.20 reads no group in the field path: the group goes into --api-version.
    version = f"--api-version={gizmo_group}/v1"
    out = wait_for(
        lambda: (
            "size" in (text := kubectl("explain", "gizmos.spec", version, check=False)) and text
        ),
        timeout=30,
        message="kubectl explain of the CRD",
    )
    assert "How many parts the gizmo has." in out
    assert "-required-" in out
    assert "What the gizmo should be." in out

    ext = client.ApiextensionsV1Api(api_client)
    crd = ext.read_custom_resource_definition(resource)
    props = crd.spec.versions[0].schema.open_apiv3_schema.properties["spec"].properties
    props["color"] = client.V1JSONSchemaProps(**_COLOR["color"])
    ext.replace_custom_resource_definition(resource, crd)
    wait_for(
        lambda: (
            "The colour the gizmo is painted."
            in kubectl("explain", "gizmo.spec.color", version, check=False)
        ),
        timeout=30,
        message="the new field in kubectl explain",
    )


def test_kubectl_1_20_validates_against_the_v2_document(kubeconfig: Path, tmp_path: Path) -> None:
    """kubectl 1.20 has no server-side validation: ``--validate`` (on by default) checks the
    manifest against ``/openapi/v2`` itself, so an unknown field is refused before sending."""
    binary = _BINARIES["debian-1.20"]
    if binary is None:
        pytest.skip("kubectl (debian-1.20) not installed: run `make kubectl`")
    manifest = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "validated"},
            "data": {"a": "1"},
            "spec": {"foo": 1},
        }
    )
    cmd = [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path)]
    proc = subprocess.run(
        [*cmd, "apply", "--validate=true", "--dry-run=client", "-f", "-"],
        input=manifest,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert 'unknown field "spec" in io.k8s.api.core.v1.ConfigMap' in proc.stderr
