"""The ``kube-runtime`` command.

* ``kube-runtime cluster``: serve an embedded cluster until Ctrl-C and write a kubeconfig.
* ``kube-runtime demo``: the quick start's demo on a fresh embedded cluster (``--serve`` keeps
  serving afterwards for kubectl).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from kube_runtime.embedded.cluster import EmbeddedCluster


def _serve_until_signal(cluster: EmbeddedCluster, kubeconfig: Path) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"embedded cluster serving on {cluster.url}", flush=True)
    print(f"kubeconfig written to {kubeconfig}", flush=True)
    print(f"try: kubectl --kubeconfig {kubeconfig} get ns     (Ctrl-C to stop)", flush=True)
    stop.wait()
    print("stopping", flush=True)


def cmd_cluster(args: argparse.Namespace) -> int:
    token = None if args.no_auth else EmbeddedCluster.new_token()
    cluster = EmbeddedCluster(port=args.port, token=token, pod_ready_after=args.pod_ready_after)
    try:
        cluster.start()
    except RuntimeError as e:
        print(
            f"error: {e}. Is port {args.port} already in use? Pick another with --port.",
            file=sys.stderr,
        )
        return 1
    try:
        path = cluster.write_kubeconfig(args.kubeconfig)
        _serve_until_signal(cluster, path)
    finally:
        cluster.stop()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from kube_runtime.demo.pods import run_demo

    return run_demo(serve=args.serve, kubeconfig=Path(args.kubeconfig), port=args.port)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kube-runtime", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at debug level")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("cluster", help="serve an embedded cluster (API server + simulated kubelet)")
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
    p.add_argument(
        "--no-auth", action="store_true", help="serve without bearer-token authentication"
    )
    p.set_defaults(func=cmd_cluster)

    p = sub.add_parser("demo", help="run the quick-start demo on a fresh embedded cluster")
    p.add_argument("--serve", action="store_true", help="keep serving after the demo (for kubectl)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--kubeconfig", default="kubeconfig.embedded")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
