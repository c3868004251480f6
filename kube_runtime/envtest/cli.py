"""The test cluster's ``kube-runtime`` sub-commands: ``cluster`` and ``kubelet``.

Registered in the ``kube_runtime.commands`` entry-point group (see :mod:`kube_runtime.cli`):

* ``kube-runtime cluster [--port N] [--kubeconfig PATH] [--pod-ready-after S]
  [--image-digest IMAGE=DIGEST]... [--image-digests FILE]... [--no-auth] [--data-dir DIR] [--watch-history-size N] [--watch-history-age S]
  [--max-requests-inflight N] [--max-mutating-requests-inflight N]`` serves
  an embedded cluster (API server + simulated kubelet) until Ctrl-C or SIGTERM and writes a
  kubeconfig for it; with ``--data-dir`` its state is kept on disk; ``--image-digest`` /
  ``--image-digests`` declare the images' digests the simulated kubelet reports
  (:mod:`kube_runtime.envtest.kubelet.images`);
* ``kube-runtime kubelet --kubeconfig PATH`` runs the simulated kubelet against any API
  server (:func:`kube_runtime.envtest.kubelet.main`).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from kube_runtime.entrypoints import Command
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.kubelet import images
from kube_runtime.envtest.server.http import ServerLimits
from kube_runtime.envtest.server.persist import JournalError

__all__ = ["CLUSTER", "KUBELET", "serve_until_signal"]


def serve_until_signal(cluster: EmbeddedCluster, kubeconfig: Path) -> None:
    """Print how to reach ``cluster`` and block until SIGINT or SIGTERM (main thread only)."""
    # The handler only appends to a list: no lock is taken in it (an Event's set() from a
    # handler that interrupts the main thread inside that Event's own lock never returns).
    received: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, _frame: received.append(signum))
    print(f"embedded cluster serving on {cluster.url}", flush=True)
    print(f"kubeconfig written to {kubeconfig}", flush=True)
    print(f"try: kubectl --kubeconfig {kubeconfig} get ns     (Ctrl-C to stop)", flush=True)
    while not received:
        time.sleep(0.2)  # a signal interrupts the sleep and runs the handler at once
    print("stopping", flush=True)


def _cluster_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kube-runtime cluster",
        description="Serve an embedded cluster (API server + simulated kubelet) until Ctrl-C.",
    )
    p.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: pick a free one)"
    )
    p.add_argument(
        "--kubeconfig", default="kubeconfig.embedded", help="where to write the kubeconfig"
    )
    p.add_argument(
        "--pod-ready-after",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="Pending -> Ready delay of new pods",
    )
    images.add_arguments(p)
    p.add_argument(
        "--no-auth", action="store_true", help="serve without bearer-token authentication"
    )
    p.add_argument(
        "--authorization-mode",
        choices=("AlwaysAllow", "RBAC"),
        default="AlwaysAllow",
        help="as kube-apiserver's: RBAC enforces the stored roles and bindings (and "
        "OwnerReferencesPermissionEnforcement); the admin token stays allowed everything "
        "(default %(default)s)",
    )
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep the cluster's state in DIR (SQLite) and start from it: acknowledged writes "
        "survive restarts and SIGKILL (default: memory only)",
    )
    p.add_argument(
        "--watch-history-size",
        type=int,
        default=20_000,
        metavar="N",
        help="events of each resource kept for watches; a watch from before them gets 410 "
        "(default %(default)s)",
    )
    p.add_argument(
        "--watch-history-age",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="seconds of events kept for watches (default 0: no age bound; kube-apiserver's "
        "watch cache keeps 75 s or more)",
    )
    for flag, default, what in (
        ("--max-requests-inflight", ServerLimits.max_requests_inflight, "reads"),
        ("--max-mutating-requests-inflight", ServerLimits.max_mutating_requests_inflight, "writes"),
    ):
        p.add_argument(
            flag,
            type=int,
            default=default,
            metavar="N",
            help=f"as kube-apiserver's: {what} in flight before 429 (0: no bound; "
            "default %(default)s)",
        )
    return p


def cluster_main(argv: Sequence[str]) -> int:
    """``kube-runtime cluster``: serve until a signal; exit code 1 when the port is taken or
    the data directory is unusable, 2 for bad arguments (a malformed image digest too)."""
    parser = _cluster_parser()
    args = parser.parse_args(list(argv))
    digests = images.from_arguments(parser, args)
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.no_auth and args.authorization_mode != "AlwaysAllow":
        parser.error("--authorization-mode RBAC needs authentication (drop --no-auth)")
    token = None if args.no_auth else EmbeddedCluster.new_token()
    try:
        cluster = EmbeddedCluster(
            port=args.port,
            token=token,
            authorization=args.authorization_mode,
            pod_ready_after=args.pod_ready_after,
            data_dir=args.data_dir,
            history_size=args.watch_history_size,
            history_age=args.watch_history_age or None,
            limits=ServerLimits(
                max_requests_inflight=args.max_requests_inflight,
                max_mutating_requests_inflight=args.max_mutating_requests_inflight,
            ),
        )
    except JournalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if cluster.kubelet is not None:
        cluster.kubelet.settings.image_digests = digests
    try:
        cluster.start()
    except RuntimeError as e:
        print(
            f"error: {e}. Is port {args.port} already in use? Pick another with --port.",
            file=sys.stderr,
        )
        return 1
    try:
        serve_until_signal(cluster, cluster.write_kubeconfig(args.kubeconfig))
    finally:
        cluster.stop()
    return 0


def kubelet_main(argv: Sequence[str]) -> int:
    """``kube-runtime kubelet``: see :func:`kube_runtime.envtest.kubelet.main`."""
    from kube_runtime.envtest.kubelet import main

    return main(argv)


CLUSTER = Command(
    help="serve an embedded cluster (API server + simulated kubelet)", main=cluster_main
)
"""The ``cluster`` command."""
KUBELET = Command(
    help="the simulated kubelet against any API server (kube-runtime kubelet --help)",
    main=kubelet_main,
)
"""The ``kubelet`` command."""
