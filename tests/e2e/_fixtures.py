"""Building blocks the e2e modules' fixtures share: a TLS webhook server on a thread, and a
namespaced manager running the controllers a test module sets up.

They are context managers, not fixtures, so each module keeps its fixtures' names and scopes
(a module-scoped ``hooks``, a per-test ``manager``) and only the set-up code lives here; the
exception is the simulated-time fixtures at the end, which a module imports whole.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import Manager, clock, webhook
from kube_runtime.client import Client
from kube_runtime.envtest.managers import running
from kube_runtime.envtest.server import tls


@contextmanager
def webhook_server(
    directory: Path, dns_names: Iterable[str] = ()
) -> Iterator[tuple[webhook.Server, tls.ServingCerts]]:
    """A webhook server on 127.0.0.1 (a free port, see ``server.address``) serving with a new
    CA and certificate written to ``directory`` (``tls.generate``; ``dns_names`` added to the
    certificate), started on a daemon thread for the block; AssertionError if it has not
    started within 10 s. On the way out it is stopped and its thread joined (10 s at most)."""
    certs = tls.generate(directory, dns_names=dns_names)
    server = webhook.Server(
        host="127.0.0.1",
        port=0,
        cert_dir=certs.directory,
        cert_name="server.crt",
        key_name="server.key",
    )
    stop = clock.current().event()  # the server waits on it: a simulated clock's, in a simulation
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    try:
        assert server.wait_started(10)
        yield server, certs
    finally:
        stop.set()
        thread.join(10)


@contextmanager
def running_manager(
    client: Client, namespace: str, add: Callable[[Manager], object]
) -> Iterator[Manager]:
    """A manager watching ``namespace`` only (metrics and health probes off, a 10 s graceful
    shutdown), its controllers registered by ``add(manager)``, running on a thread for the
    block and stopped (and waited for) on the way out."""
    m = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        graceful_shutdown_timeout=10,
    )
    add(m)
    with running(m):
        yield m


# --- simulated time -----------------------------------------------------------------------------
# A module whose tests should run on simulated time (docs/simtime.md) sets
# ``pytestmark = pytest.mark.simtime`` and imports these: its tests' ``client`` and ``namespace``
# are then those of a cluster of the test's own on the test's clock (the session's on the real
# backend, in real time), and every fixture built on them follows.

SIMULATED = os.environ.get("KUBE_RUNTIME_BACKEND", "embedded") != "real"
"""Whether ``simtime`` tests run on simulated time (the embedded backend): modules pick
upstream's own numbers then, and shorter ones for real time."""


@pytest.fixture(name="client")
def simulated_client(sim_client: Client) -> Client:
    """``client`` for a ``simtime`` module: the client of the test's own cluster."""
    return sim_client


@pytest.fixture(name="namespace")
def simulated_namespace(sim_namespace: str) -> str:
    """``namespace`` for a ``simtime`` module: a namespace of the test's own cluster."""
    return sim_namespace


@pytest.fixture(name="kubelet")
def simulated_kubelet(sim_cluster: Any) -> Iterator[Any]:
    """``kubelet`` for a ``simtime`` module: the test's cluster's simulated kubelet, its
    settings restored afterwards (on the real backend the cluster is the session's)."""
    kubelet = sim_cluster.kubelet
    saved = None if kubelet is None else dataclasses.replace(kubelet.settings)
    yield kubelet
    if saved is not None:
        kubelet.settings = saved


@pytest.fixture(name="faults")
def simulated_faults(sim_cluster: Any) -> Iterator[Any]:
    """``faults`` for a ``simtime`` module: the fault injection of the test's own cluster,
    cleared before and after the test (the test is skipped on the real backend, which has
    none)."""
    from kube_runtime.envtest.cluster import EmbeddedCluster

    if not isinstance(sim_cluster, EmbeddedCluster):
        pytest.skip("real backend: embedded only: fault injection")
    sim_cluster.faults.clear()
    try:
        yield sim_cluster.faults
    finally:
        sim_cluster.faults.clear()
