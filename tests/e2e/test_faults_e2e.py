"""Fault injection and authentication through the official client."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kube_runtime.envtest.cluster import EmbeddedCluster


def test_next_n_calls_fail_with_the_given_code(
    api_client: Any, namespace: str, faults: Any
) -> None:
    core = client.CoreV1Api(api_client)
    faults.fail("configmaps", "create", 500, times=2)
    for _ in range(2):
        with pytest.raises(ApiException) as err:
            core.create_namespaced_config_map(namespace, {"metadata": {"name": "a"}})
        assert err.value.status == 500 and "InternalError" in err.value.body
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "a"}})
    # Other verbs and resources were never affected.
    core.read_namespaced_config_map("a", namespace)


def test_throttling_carries_retry_after(api_client: Any, namespace: str, faults: Any) -> None:
    faults.fail("pods", "list", 429, times=1, retry_after=3)
    cfg = api_client.configuration
    url = f"{cfg.host}/api/v1/namespaces/{namespace}/pods"
    headers = {"Authorization": cfg.api_key["authorization"]}
    # urllib3 would honour Retry-After by itself; look at the raw answer instead.
    resp = api_client.rest_client.pool_manager.request("GET", url, headers=headers, retries=False)
    assert resp.status == 429
    assert resp.headers["Retry-After"] == "3"
    assert b'"retryAfterSeconds":3' in resp.data
    assert client.CoreV1Api(api_client).list_namespaced_pod(namespace).items == []


def test_injected_conflicts_by_probability(api_client: Any, namespace: str, faults: Any) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "a"}})
    faults.fail("configmaps", "patch", 409, probability=0.5)
    codes = []
    for i in range(40):
        try:
            core.patch_namespaced_config_map("a", namespace, {"data": {"i": str(i)}})
            codes.append(200)
        except ApiException as e:
            codes.append(e.status)
    assert set(codes) == {200, 409}


def test_added_latency(api_client: Any, namespace: str, faults: Any) -> None:
    core = client.CoreV1Api(api_client)
    faults.add_latency(0.2, "configmaps", "get")
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "a"}})
    started = time.monotonic()
    core.read_namespaced_config_map("a", namespace)
    assert time.monotonic() - started >= 0.2


def test_token_is_required() -> None:
    with EmbeddedCluster(kubelet=False, token="s3cret") as cluster:
        good = cluster.api_client()
        assert client.CoreV1Api(good).list_namespace().items
        bad = cluster.api_client()
        bad.configuration.api_key = {"authorization": "Bearer wrong"}
        bad.rest_client = type(good.rest_client)(bad.configuration)
        with pytest.raises(ApiException) as err:
            client.CoreV1Api(bad).list_namespace()
        assert err.value.status == 401
        # Health and version stay open, as on kube-apiserver with anonymous health checks.
        assert client.VersionApi(bad).get_code().major == "1"
        good.close()
        bad.close()


@pytest.mark.simtime  # install_crd's retry delays are virtual, on a cluster of the test's own
def test_install_crd_rides_out_transient_errors(sim_client: Any, sim_cluster: Any) -> None:
    """`kube-runtime run --install-crds` exited with a traceback when the API server answered
    a CRD create or read with 409, 429 or 500 (found by `make chaos`): now it waits."""
    from kube_runtime import crds, kinds

    client, faults = sim_client, sim_cluster.faults  # the real backend skips (no faults)

    name = f"widgets{uuid.uuid4().hex[:8]}.chaos.example.com"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "chaos.example.com",
            "scope": "Namespaced",
            "names": {"plural": name.split(".")[0], "kind": "Widget" + name[7:15].upper()},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    before = faults.injected
    faults.fail("customresourcedefinitions", "create", 429, times=1, retry_after=0)
    faults.fail("customresourcedefinitions", "create", 500, times=1)
    faults.fail("customresourcedefinitions", "create", 409, times=1)
    faults.fail("customresourcedefinitions", "get", 503, times=2)
    try:
        assert crds.install_crd(client, crd, timeout=20) == name
        assert faults.injected - before == 5
        # a CRD that exists already is left alone, also when the first create fails
        faults.fail("customresourcedefinitions", "create", 500, times=1)
        assert crds.install_crd(client, crd, timeout=20) == name
    finally:
        client.delete(kinds.CustomResourceDefinition, name)


def _site_crd(group: str) -> dict[str, Any]:
    spec = {"type": "object", "properties": {"image": {"type": "string"}}}
    status = {"type": "object", "properties": {"ready": {"type": "boolean"}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"sites.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "sites", "singular": "site", "kind": "Site"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec, "status": status},
                        }
                    },
                }
            ],
        },
    }


def test_faults_target_a_subresource_and_one_client(
    client: Any, kubeconfig: Any, namespace: str, faults: Any
) -> None:
    """``sites/status`` fails the status writes only, ``user_agent`` the operator's
    requests only, ``field_manager`` the writes of one manager: the test's own spec patches
    go through."""
    from kube_runtime.client import Client
    from kube_runtime.client.errors import ApiError as ClientError
    from kube_runtime.crds import install_crd

    group = f"faults-{uuid.uuid4().hex[:8]}.example.com"
    install_crd(client, _site_crd(group))
    operator = Client.from_kubeconfig(kubeconfig, user_agent="site-operator/v0.1 (linux)")
    path = f"/apis/{group}/v1/namespaces/{namespace}/sites"
    merge = "application/merge-patch+json"
    try:
        site = {"apiVersion": f"{group}/v1", "kind": "Site", "metadata": {"name": "s"}}
        client.request("POST", path, body={**site, "spec": {"image": "a"}})

        faults.fail("sites/status", "patch", 500)
        with pytest.raises(ClientError) as failed:
            operator.request(
                "PATCH", f"{path}/s/status", body={"status": {"ready": True}}, content_type=merge
            )
        assert failed.value.code == 500
        # the spec patch, the same verb on the main resource, is not affected
        client.request("PATCH", f"{path}/s", body={"spec": {"image": "b"}}, content_type=merge)
        faults.clear()

        faults.fail("sites", "patch", 503, user_agent="site-operator")
        client.request("PATCH", f"{path}/s", body={"spec": {"image": "c"}}, content_type=merge)
        for sub in ("", "/status"):
            with pytest.raises(ClientError) as failed:
                operator.request("PATCH", f"{path}/s{sub}", body={}, content_type=merge)
            assert failed.value.code == 503
        faults.clear()

        faults.fail("sites", "*", 409, field_manager="site-operator", times=1)
        operator.request("GET", f"{path}/s")  # a read has no field manager
        client.request(
            "PATCH",
            f"{path}/s",
            body={"spec": {"image": "d"}},
            content_type=merge,
            query={"fieldManager": "test"},
        )
        with pytest.raises(ClientError) as failed:
            client.request(
                "PATCH",
                f"{path}/s/status",
                body={"status": {"ready": True}},
                content_type=merge,
                query={"fieldManager": "site-operator"},
            )
        assert failed.value.code == 409
        stored = operator.request(
            "PATCH", f"{path}/s/status", body={"status": {"ready": True}}, content_type=merge
        )
        assert stored["spec"] == {"image": "d"} and stored["status"] == {"ready": True}
        assert faults.injected == 1
    finally:
        operator.close()
        client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"sites.{group}")
