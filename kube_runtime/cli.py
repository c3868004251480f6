"""The ``kube-runtime`` command.

* ``kube-runtime cluster``: serve an embedded cluster until Ctrl-C and write a kubeconfig.
* ``kube-runtime demo``: the quick start's demo on a fresh embedded cluster: the bundled
  StatefulSet controller scales, updates and scales down a set (``--pods`` runs the older
  pod-lifecycle demo; ``--serve`` keeps serving afterwards for kubectl).
* ``kube-runtime run statefulset ...``: run bundled controllers against any cluster.
* ``kube-runtime codegen CRD.yaml -o models.py``: typed models (see :mod:`codegen`).
* ``kube-runtime kubelet --kubeconfig PATH``: the simulated kubelet against any API server
  (see :mod:`kube_runtime.envtest.kubelet`).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from kube_runtime.envtest.cluster import EmbeddedCluster


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
    kubeconfig = Path(args.kubeconfig) if args.kubeconfig else None
    if args.pods:
        from kube_runtime.envtest.demo import run_demo as run_pods_demo

        return run_pods_demo(serve=args.serve, kubeconfig=kubeconfig, port=args.port)
    from controllers.demo import run_demo

    return run_demo(serve=args.serve, kubeconfig=kubeconfig, port=args.port)


def cmd_run(args: argparse.Namespace) -> int:
    from controllers import setup_function
    from kube_runtime import logs
    from kube_runtime.client import Client
    from kube_runtime.manager import LeaderElectionLost, Manager

    logs.setup(logging.DEBUG if args.verbose else logging.INFO)
    try:
        setups = [setup_function(name) for name in args.controllers]
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    if args.kubeconfig or args.context:
        client = Client.from_kubeconfig(args.kubeconfig, args.context)
    else:
        client = Client.from_env()
    manager = Manager(
        client,
        namespace=args.namespace,
        leader_election=args.leader_elect,
        leader_election_id=args.leader_election_id,
        leader_election_namespace=args.leader_election_namespace,
        metrics_bind_address=f":{args.metrics_port}" if args.metrics_port else "0",
        health_probe_bind_address=f":{args.health_port}" if args.health_port else "0",
    )
    if args.install_crds:
        import importlib

        for name in args.controllers:
            install = getattr(importlib.import_module(f"controllers.{name}"), "install_crd", None)
            if install is not None:
                install(client)
    for setup in setups:
        setup(manager, max_concurrent_reconciles=args.workers)
    try:
        manager.start()
    except LeaderElectionLost as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


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
    p.add_argument("--pods", action="store_true", help="the pod-lifecycle demo (no controller)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--kubeconfig", help="where to write the kubeconfig (default: a temp dir)")
    p.set_defaults(func=cmd_demo)

    sub.add_parser(
        "codegen",
        help="typed pydantic models from CRD manifests (kube-runtime codegen --help)",
        add_help=False,
    )
    sub.add_parser(
        "kubelet",
        help="the simulated kubelet against any API server (kube-runtime kubelet --help)",
        add_help=False,
    )

    p = sub.add_parser("run", help="run bundled controllers against a cluster")
    p.add_argument("controllers", nargs="+", metavar="CONTROLLER", help="e.g. statefulset")
    p.add_argument(
        "--kubeconfig", help="kubeconfig path (default: in-cluster, $KUBECONFIG, ~/.kube/config)"
    )
    p.add_argument("--context", help="kubeconfig context")
    p.add_argument("--namespace", help="only watch and reconcile this namespace")
    p.add_argument("--workers", type=int, default=2, help="concurrent reconciles per controller")
    p.add_argument(
        "--install-crds",
        action="store_true",
        help="create the CRDs the controllers serve (cloneset) when missing",
    )
    p.add_argument("--leader-elect", action="store_true", help="campaign for a Lease first")
    p.add_argument("--leader-election-id", default="kube-runtime-controllers")
    p.add_argument("--leader-election-namespace", help="default: the pod's namespace or default")
    p.add_argument("--metrics-port", type=int, default=8080, help="0 disables /metrics")
    p.add_argument("--health-port", type=int, default=8081, help="0 disables /healthz, /readyz")
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["codegen"]:  # the code generator has its own argument parser
        from codegen.cli import main as codegen_main

        return codegen_main(argv[1:], prog="kube-runtime codegen")
    if argv[:1] == ["kubelet"]:  # so does the standalone simulated kubelet
        from kube_runtime.envtest.kubelet import main as kubelet_main

        return kubelet_main(argv[1:])
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
