"""The README's example controller (examples/configmap_sync.py), end to end."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path

import pytest

from kube_runtime import Manager, NotFound, kinds
from kube_runtime.envtest.managers import running

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "configmap_sync.py"


def load_example():
    spec = importlib.util.spec_from_file_location("configmap_sync_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_is_under_80_lines() -> None:
    assert len(EXAMPLE.read_text().splitlines()) < 80


@pytest.fixture
def extra_namespaces(client):
    names = [f"sync-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    yield names
    for name in names:
        try:
            client.delete(kinds.Namespace, name)
        except NotFound:
            pass


def test_configmap_is_copied_kept_in_sync_and_removed(
    client, namespace, extra_namespaces, wait_for
) -> None:
    example = load_example()
    labelled_a, labelled_b, plain = extra_namespaces
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "shared", "namespace": namespace}, "data": {"k": "v1"}}
    )  # fmt: skip
    for name in extra_namespaces:
        labels = {"config-sync": "enabled"} if name != plain else {}
        client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        )
    manager = Manager(client, metrics_bind_address="0")
    example.setup(manager, namespace, "shared")

    def data_in(ns: str):
        try:
            return client.get(kinds.ConfigMap, "shared", ns).get("data")
        except NotFound:
            return None

    with running(manager):
        wait_for(lambda: data_in(labelled_a) == {"k": "v1"} and data_in(labelled_b) == {"k": "v1"},
                 message="copies in labelled namespaces")  # fmt: skip
        assert data_in(plain) is None
        copy = client.get(kinds.ConfigMap, "shared", labelled_a)
        assert copy["metadata"]["ownerReferences"][0]["kind"] == "Namespace"

        # the source changes: every copy follows
        client.patch(kinds.ConfigMap, "shared", {"data": {"k": "v2"}}, namespace=namespace)
        wait_for(lambda: data_in(labelled_a) == {"k": "v2"} == data_in(labelled_b), message="sync")

        # someone edits or deletes a copy: it is restored
        client.patch(kinds.ConfigMap, "shared", {"data": {"k": "tampered"}}, namespace=labelled_a)
        client.delete(kinds.ConfigMap, "shared", labelled_b)
        wait_for(
            lambda: data_in(labelled_a) == {"k": "v2"} == data_in(labelled_b), message="restore"
        )

        # a namespace gains the label: it gets a copy; one loses it: its copy goes away
        client.patch(kinds.Namespace, plain, {"metadata": {"labels": {"config-sync": "enabled"}}})
        client.patch(kinds.Namespace, labelled_a, {"metadata": {"labels": {"config-sync": None}}})
        wait_for(
            lambda: data_in(plain) == {"k": "v2"} and data_in(labelled_a) is None, message="relabel"
        )
        assert data_in(namespace) == {"k": "v2"}  # the source is never touched
