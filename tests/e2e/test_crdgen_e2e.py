"""A CRD generated from pydantic models (``kube-runtime crd generate``) on a cluster: accepted
as structural, its validation, defaults, pruning and subresources enforced by the server as
the models declare them. Runs on both backends (``KUBE_RUNTIME_BACKEND=real`` for
kube-apiserver 1.20, which predates CEL: those rules are checked on servers that have it)."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from codegen.crdgen import crd_for
from kube_runtime import kinds
from kube_runtime.client import Client, Invalid, NotFound
from kube_runtime.crds import install_crd
from kube_runtime.envtest.plugin import backend_of
from tests.support.crdgen_models import BAD_SPECS, GOOD, Cache, CacheV1alpha1, bad_object


@pytest.fixture
def group(client: Client) -> Iterator[str]:
    """The Cache CRD (both versions) installed under a fresh group; deleted afterwards."""
    doc = crd_for([CacheV1alpha1, Cache])
    group = f"t{uuid.uuid4().hex[:8]}.crdgen.example.com"
    doc["spec"]["group"] = group
    doc["metadata"]["name"] = f"caches.{group}"
    install_crd(client, doc)
    try:
        yield group
    finally:
        try:
            client.delete(kinds.CustomResourceDefinition, doc["metadata"]["name"])
        except NotFound:
            pass


def _object(group: str, namespace: str, obj: dict[str, Any], name: str = "c") -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{group}/v1"
    out["metadata"] = {"name": name, "namespace": namespace}
    return out


def _has_cel(request: pytest.FixtureRequest, kube_version: tuple[int, int]) -> bool:
    return backend_of(request.config) == "embedded" or kube_version >= (1, 25)


def test_generated_crd_is_accepted_and_validates_like_the_model(
    client: Client, namespace: str, group: str
) -> None:
    created = client.create(_object(group, namespace, GOOD))
    spec = created["spec"]
    assert spec["size"] == "1Gi" and spec["ports"] == [
        {"name": "main", "port": 6379, "protocol": "TCP"}  # item default applied
    ]
    assert spec["config"]["nested"] == {"x": [1, 2]}  # preserved unknown fields
    assert spec["template"]["kind"] == "ConfigMap"
    typed = Cache.model_validate({**created, "apiVersion": Cache.__kube_resource__.api_version})
    assert typed.spec.size == "1Gi"

    rejected = []
    for i, (name, change) in enumerate(BAD_SPECS.items()):
        try:
            client.create(_object(group, namespace, bad_object(change), f"bad{i}"))
        except Invalid:
            rejected.append(name)
    assert rejected == list(BAD_SPECS)


def test_defaults_and_pruning(client: Client, namespace: str, group: str) -> None:
    obj = _object(group, namespace, {"spec": {"size": 1024, "comment": None, "surplus": 1}})
    obj["kind"] = "Cache"
    created = client.create(obj)
    spec = created["spec"]
    assert "surplus" not in spec  # undeclared field pruned
    assert (spec["replicas"], spec["engine"], spec["ratio"], spec["shards"]) == (
        1,
        "redis",
        0.5,
        1,
    )
    assert spec["size"] == 1024
    assert spec["comment"] is None  # nullable: null kept


def test_cel_rules(
    client: Client,
    namespace: str,
    group: str,
    request: pytest.FixtureRequest,
    kube_version: tuple[int, int],
) -> None:
    if not _has_cel(request, kube_version):
        pytest.skip(f"kube-apiserver {kube_version} has no CEL validation")
    with pytest.raises(Invalid, match="an odd number"):
        client.create(_object(group, namespace, bad_object({"shards": 2}), "even"))
    with pytest.raises(Invalid, match="min must not exceed max"):
        client.create(_object(group, namespace, bad_object({"eviction": {"min": 5, "max": 1}})))


def test_subresources_and_versions(client: Client, namespace: str, group: str) -> None:
    client.create(_object(group, namespace, GOOD))
    base = f"/apis/{group}/v1/namespaces/{namespace}/caches/c"
    status = client.get_path(base)
    status["status"] = {"replicas": 2, "selector": "app=c"}
    client.update_status(status)
    scale = client.get_path(base + "/scale")
    assert scale["spec"]["replicas"] == 3
    assert scale["status"] == {"replicas": 2, "selector": "app=c"}
    old = client.get(f"{group}/v1alpha1/Cache", "c", namespace)
    assert old["apiVersion"] == f"{group}/v1alpha1"
