"""The namespace fixture's optional wait (ini ``kube_runtime_namespace_wait``, issue 21 part
6): a deleted namespace is waited for, and one an object's finalizer keeps terminating is
reported with what holds it."""

from __future__ import annotations

import uuid
import warnings
from typing import Any

import pytest

from kube_runtime.envtest.plugin import _wait_namespace_gone

pytestmark = pytest.mark.embedded_only("waits through the embedded store")


def _namespace(cluster: Any) -> tuple[Any, str]:
    info = cluster.resource("", "namespaces")
    name = f"w-{uuid.uuid4().hex[:8]}"
    cluster.store.create(info, None, {"metadata": {"name": name}})
    return info, name


def test_a_namespace_is_waited_for_and_a_held_one_reported(embedded_cluster: Any) -> None:
    info, clean = _namespace(embedded_cluster)
    embedded_cluster.store.delete(info, None, clean)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _wait_namespace_gone(embedded_cluster, clean, 10)  # gone: no warning
    assert embedded_cluster.store.try_get(info, None, clean) is None

    info, held = _namespace(embedded_cluster)
    client = embedded_cluster.client()
    client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kept", "namespace": held, "finalizers": ["example.com/hold"]},
        }
    )
    embedded_cluster.store.delete(info, None, held)
    with pytest.warns(UserWarning, match=f"namespace {held} is still terminating") as caught:
        _wait_namespace_gone(embedded_cluster, held, 0.5)
    assert "finalizer" in str(caught[0].message)
    client.patch("v1/ConfigMap", "kept", {"metadata": {"finalizers": None}}, namespace=held)
    _wait_namespace_gone(embedded_cluster, held, 10)
    assert embedded_cluster.store.try_get(info, None, held) is None
    client.close()
