""":class:`ClientKubelet` and the ``kube-runtime kubelet`` command (:func:`main`)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from collections.abc import Sequence
from typing import Any, Unpack

from kube_runtime.client import Client
from kube_runtime.clock import REAL, Clock
from kube_runtime.envtest.kubelet import images
from kube_runtime.envtest.kubelet.apistore import ApiStore
from kube_runtime.envtest.kubelet.simulator import DEFAULT_NODE_NAME, Kubelet, KubeletOptions

__all__ = ["ClientKubelet", "main"]

log = logging.getLogger(__name__)


class ClientKubelet(Kubelet):
    """The simulated kubelet working through ``client`` (see :mod:`kube_runtime.envtest.kubelet`).

    ``start()`` starts the informers (waiting for their first list) and then the kubelet;
    ``stop()`` stops both, and closes the client when this object created it. ``clock``
    (None: the current clock when it is built) is the time the kubelet and its informers run
    on (:class:`~kube_runtime.clock.SimClock`: its delays are virtual).
    """

    def __init__(
        self,
        client: Any,
        *,
        owns_client: bool = False,
        clock: Clock | None = None,
        **options: Unpack[KubeletOptions],
    ) -> None:
        """``options``: :class:`Kubelet`'s (node name and timings)."""
        self.api_store = ApiStore(client, clock=clock)
        self._owns_client = owns_client
        super().__init__(self.api_store, **options)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Clock | None = None,
        **options: Unpack[KubeletOptions],
    ) -> ClientKubelet:
        """A kubelet with its own client for the kubeconfig at ``path`` (closed on stop)."""
        client = Client.from_kubeconfig(str(path) if path is not None else None)
        return cls(client, owns_client=True, clock=clock, **options)

    def start(self) -> None:
        self.api_store.start()
        super().start()

    def stop(self, timeout: float = 5.0) -> None:
        super().stop(timeout)
        self.api_store.stop()
        if self._owns_client:
            self.api_store.client.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kube-runtime kubelet",
        description="Run the simulated kubelet (one node) against an API server.",
    )
    p.add_argument("--kubeconfig", help="kubeconfig path (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--node-name", default=DEFAULT_NODE_NAME, help="name of the simulated node")
    p.add_argument("--pod-ready-after", type=float, default=0.5, help="seconds a pod stays Pending")
    p.add_argument(
        "--restart-delay", type=float, default=0.5, help="seconds per in-place restart step"
    )
    p.add_argument(
        "--grace-scale",
        type=float,
        default=0.0,
        help="fraction of a pod's grace period waited before it is stopped",
    )
    p.add_argument("--max-grace", type=float, default=1.0, help="cap on that wait (seconds)")
    images.add_arguments(p)
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def main(argv: Sequence[str] | None = None, stop: threading.Event | None = None) -> int:
    """``kube-runtime kubelet``: run until SIGINT/SIGTERM (or ``stop`` is set); exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    digests = images.from_arguments(parser, args)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    done = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: done.set())
    kubelet = ClientKubelet.from_kubeconfig(
        args.kubeconfig,
        clock=REAL,  # a process of its own: real time
        node_name=args.node_name,
        ready_after=args.pod_ready_after,
        restart_delay=args.restart_delay,
        grace_scale=args.grace_scale,
        max_grace=args.max_grace,
        image_digests=digests,
    )
    kubelet.start()
    log.info("simulated kubelet running as node %s", kubelet.node_name)
    try:
        done.wait()
    finally:
        kubelet.stop()
    return 0
