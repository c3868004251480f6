"""Secrets as kube-apiserver stores them: ``stringData`` is written into ``data`` (base64,
winning over a key of the same name) and never stored; on both backends."""

from __future__ import annotations

from kube_runtime import kinds
from kube_runtime.client import Client


def test_string_data_is_merged_into_data_on_create_and_update(
    client: Client, namespace: str
) -> None:
    created = client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": namespace},
            "data": {"kept": "a2VwdA==", "k": "b2xk"},
            "stringData": {"k": "v"},
        }
    )
    assert "stringData" not in created
    assert created["data"] == {"kept": "a2VwdA==", "k": "dg=="}
    assert created["type"] == "Opaque"
    patched = client.patch(kinds.Secret, "s", {"stringData": {"new": "x"}}, namespace=namespace)
    assert "stringData" not in patched
    assert patched["data"] == {"kept": "a2VwdA==", "k": "dg==", "new": "eA=="}
    assert client.get(kinds.Secret, "s", namespace)["data"] == patched["data"]
