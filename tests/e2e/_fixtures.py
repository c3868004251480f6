"""Building blocks the e2e modules' fixtures share: a TLS webhook server on a thread, and a
namespaced manager running the controllers a test module sets up.

They are context managers, not fixtures, so each module keeps its fixtures' names and scopes
(a module-scoped ``hooks``, a per-test ``manager``) and only the set-up code lives here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

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
