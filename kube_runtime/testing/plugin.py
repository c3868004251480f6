"""pytest plugin: embedded-cluster fixtures (see :mod:`kube_runtime.testing`)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client import Client
from kube_runtime.embedded.cluster import EmbeddedCluster
from kube_runtime.embedded.faults import Faults
from kube_runtime.testing.waiting import wait_for as _wait_for


def pytest_configure(config: pytest.Config) -> None:
    # Tests run with the cache's mutation detector on: a test mutating a cached object fails.
    os.environ.setdefault("KUBE_CACHE_MUTATION_DETECTOR", "true")


@pytest.fixture(scope="session")
def embedded_cluster() -> Iterator[EmbeddedCluster]:
    """One embedded cluster for the whole session (tests isolate by namespace)."""
    cluster = EmbeddedCluster(token=EmbeddedCluster.new_token(), pod_ready_after=0.02)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def kubeconfig(embedded_cluster: EmbeddedCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return embedded_cluster.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")


@pytest.fixture(scope="session")
def client(kubeconfig: Path) -> Iterator[Client]:
    """The framework's :class:`~kube_runtime.client.Client` for the session cluster
    (thread-safe, shared by every test; closed at the end of the session)."""
    c = Client.from_kubeconfig(kubeconfig)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def api_client(embedded_cluster: EmbeddedCluster) -> Iterator[Any]:
    client = embedded_cluster.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def namespace(embedded_cluster: EmbeddedCluster) -> Iterator[str]:
    """A fresh namespace for one test, deleted (with its content) afterwards."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    info = embedded_cluster.resource("", "namespaces")
    embedded_cluster.store.create(info, None, {"metadata": {"name": name}})
    try:
        yield name
    finally:
        try:
            embedded_cluster.store.delete(info, None, name)
        except Exception:
            pass


@pytest.fixture
def kubelet(embedded_cluster: EmbeddedCluster) -> Iterator[Any]:
    kubelet = embedded_cluster.kubelet
    saved = None
    if kubelet is not None:
        from dataclasses import replace

        saved = replace(kubelet.settings)
    yield kubelet
    if kubelet is not None and saved is not None:
        kubelet.settings = saved


@pytest.fixture
def faults(embedded_cluster: EmbeddedCluster) -> Iterator[Faults]:
    embedded_cluster.faults.clear()
    try:
        yield embedded_cluster.faults
    finally:
        embedded_cluster.faults.clear()


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    return _wait_for
