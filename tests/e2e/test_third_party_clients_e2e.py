"""Third-party Python clients against the cluster (issue 21 part 7): lightkube, kr8s and
kubernetes-asyncio, as their users call them, through the session kubeconfig (TLS, bearer
token). Each covers discovery, CRUD, the patch types, server-side apply, paging,
subresources, custom objects and error types; all run on both backends."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from controllers.cloneset import install_crd as install_cloneset_crd
from kube_runtime.client import Client


def _sts(name: str, namespace: str, replicas: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


def _cloneset(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kube-runtime.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


def test_lightkube(kubeconfig: Path, namespace: str, client: Client) -> None:
    from lightkube import ApiError, KubeConfig
    from lightkube import Client as LightClient
    from lightkube.generic_resource import create_namespaced_resource
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.apps_v1 import StatefulSet
    from lightkube.resources.core_v1 import ConfigMap
    from lightkube.types import PatchType

    light = LightClient(config=KubeConfig.from_file(str(kubeconfig)), field_manager="lk")
    # CRUD and every patch type
    light.create(ConfigMap(metadata=ObjectMeta(name="a", namespace=namespace), data={"k": "1"}))
    got = light.get(ConfigMap, "a", namespace=namespace)
    assert got.data == {"k": "1"} and got.metadata.uid
    light.patch(
        ConfigMap, "a", {"data": {"m": "2"}}, namespace=namespace, patch_type=PatchType.MERGE
    )
    light.patch(ConfigMap, "a", {"data": {"s": "3"}}, namespace=namespace)  # strategic
    light.patch(
        ConfigMap,
        "a",
        [{"op": "add", "path": "/data/j", "value": "4"}],
        namespace=namespace,
        patch_type=PatchType.JSON,
    )
    assert light.get(ConfigMap, "a", namespace=namespace).data == {
        "k": "1",
        "m": "2",
        "s": "3",
        "j": "4",
    }
    # server-side apply, with a conflict for another manager
    applied = light.apply(
        ConfigMap(metadata=ObjectMeta(name="b", namespace=namespace), data={"x": "1"})
    )
    assert applied.data == {"x": "1"}
    with pytest.raises(ApiError) as conflict:
        light.apply(
            ConfigMap(metadata=ObjectMeta(name="b", namespace=namespace), data={"x": "2"}),
            field_manager="other",
        )
    assert conflict.value.status.code == 409
    # paging: lightkube follows continue tokens itself
    for i in range(5):
        light.create(ConfigMap(metadata=ObjectMeta(name=f"p{i}", namespace=namespace)))
    names = {cm.metadata.name for cm in light.list(ConfigMap, namespace=namespace, chunk_size=2)}
    assert {f"p{i}" for i in range(5)} <= names
    # subresources: scale and status
    light.create(StatefulSet.from_dict(_sts("web", namespace)))
    scale = light.get(StatefulSet.Scale, "web", namespace=namespace)
    assert scale.spec.replicas is None  # omitempty: 0 is not written, on both backends
    light.patch(StatefulSet.Scale, "web", {"spec": {"replicas": 0}}, namespace=namespace)
    status = light.get(StatefulSet.Status, "web", namespace=namespace)
    assert status.metadata.name == "web"
    # custom objects
    install_cloneset_crd(client)
    clonesets = create_namespaced_resource(
        "apps.kube-runtime.io", "v1alpha1", "CloneSet", "clonesets"
    )
    light.create(clonesets.from_dict(_cloneset("cs", namespace)))
    assert light.get(clonesets, "cs", namespace=namespace).spec["replicas"] == 0
    # errors and delete
    with pytest.raises(ApiError) as missing:
        light.get(ConfigMap, "nope", namespace=namespace)
    assert missing.value.status.code == 404 and missing.value.status.reason == "NotFound"
    light.delete(ConfigMap, "a", namespace=namespace)
    with pytest.raises(ApiError):
        light.get(ConfigMap, "a", namespace=namespace)
    light.close()


def test_kr8s(kubeconfig: Path, namespace: str, client: Client) -> None:
    import kr8s
    from kr8s.objects import ConfigMap, StatefulSet, new_class

    api = kr8s.api(kubeconfig=str(kubeconfig))
    assert api.version()["major"] == "1"
    assert any(r["name"] == "configmaps" for r in api.api_resources())
    cm = ConfigMap({"metadata": {"name": "a", "namespace": namespace}, "data": {"k": "1"}}, api=api)
    cm.create()
    cm.patch({"data": {"m": "2"}})
    cm.patch([{"op": "add", "path": "/data/j", "value": "3"}], type="json")
    cm.label({"team": "x"})
    fresh = ConfigMap.get("a", namespace=namespace, api=api)
    assert fresh.raw["data"] == {"k": "1", "m": "2", "j": "3"}
    assert fresh.labels == {"team": "x"}
    labelled = list(api.get("configmaps", namespace=namespace, label_selector={"team": "x"}))
    assert [o.name for o in labelled] == ["a"]
    sts = StatefulSet(_sts("web", namespace), api=api)
    sts.create()
    sts.scale(0)
    assert StatefulSet.get("web", namespace=namespace, api=api).replicas == 0
    install_cloneset_crd(client)
    CloneSet = new_class("CloneSet.apps.kube-runtime.io/v1alpha1", namespaced=True)
    CloneSet(_cloneset("cs", namespace), api=api).create()
    assert CloneSet.get("cs", namespace=namespace, api=api).spec["replicas"] == 0
    # ConfigMap.get("nope") lists by metadata.name and, finding nothing, tries again for 2 s
    # (kr8s's timeout) before NotFoundError: the same list once, and a GET answered 404
    nope = {"metadata.name": "nope"}
    assert list(api.get("configmaps", namespace=namespace, field_selector=nope)) == []
    with pytest.raises(kr8s.NotFoundError):
        ConfigMap({"metadata": {"name": "nope", "namespace": namespace}}, api=api).refresh()
    cm.delete()
    assert not ConfigMap({"metadata": {"name": "a", "namespace": namespace}}, api=api).exists()


def test_kubernetes_asyncio(kubeconfig: Path, namespace: str) -> None:
    from kubernetes_asyncio import client as aclient
    from kubernetes_asyncio import config
    from kubernetes_asyncio.client.rest import ApiException

    async def scenario() -> None:
        configuration = aclient.Configuration()
        await config.load_kube_config(
            config_file=str(kubeconfig), client_configuration=configuration
        )
        async with aclient.ApiClient(configuration) as api_client:
            version = await aclient.VersionApi(api_client).get_code()
            assert version.major == "1"
            core = aclient.CoreV1Api(api_client)
            body = {"metadata": {"name": "a"}, "data": {"k": "1"}}
            await core.create_namespaced_config_map(namespace, body)
            await core.patch_namespaced_config_map("a", namespace, {"data": {"m": "2"}})
            cm = await core.read_namespaced_config_map("a", namespace)
            assert cm.data == {"k": "1", "m": "2"}
            for i in range(5):
                await core.create_namespaced_config_map(namespace, {"metadata": {"name": f"p{i}"}})
            first = await core.list_namespaced_config_map(namespace, limit=2)
            assert len(first.items) == 2 and first.metadata._continue
            rest = await core.list_namespaced_config_map(
                namespace, limit=10, _continue=first.metadata._continue
            )
            assert len(first.items) + len(rest.items) == 6 and not rest.metadata._continue
            apps = aclient.AppsV1Api(api_client)
            await apps.create_namespaced_stateful_set(namespace, _sts("web", namespace))
            scale = await apps.read_namespaced_stateful_set_scale("web", namespace)
            assert scale.spec.replicas is None  # omitempty: 0 is not written
            custom = aclient.CustomObjectsApi(api_client)
            name = f"cs-{uuid.uuid4().hex[:6]}"
            await custom.create_namespaced_custom_object(
                "apps.kube-runtime.io",
                "v1alpha1",
                namespace,
                "clonesets",
                _cloneset(name, namespace),
            )
            got = await custom.get_namespaced_custom_object(
                "apps.kube-runtime.io", "v1alpha1", namespace, "clonesets", name
            )
            assert got["spec"]["replicas"] == 0
            try:
                await core.read_namespaced_config_map("nope", namespace)
            except ApiException as err:
                assert err.status == 404
            else:
                raise AssertionError("a missing object read without error")
            await core.delete_namespaced_config_map("a", namespace)

    asyncio.run(scenario())


@pytest.fixture(autouse=True)
def _cloneset_crd(client: Client) -> None:
    install_cloneset_crd(client)
