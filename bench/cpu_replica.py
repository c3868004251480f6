"""A replica of a CPU-bound controller, for ``python -m bench sharding-cpu``.

``python -m bench.cpu_replica --kubeconfig K --namespace NS --identity ID [--shards N]
--metrics-port P --health-port P [--rounds R]``: a manager (sharded with ``--shards``,
exactly as ``kube-runtime run --shards`` builds one) running one controller for ConfigMaps
of ``NS`` labelled ``bench.kube-runtime.io/render=true``. Each reconcile "renders" the
ConfigMap: pure-Python work (``--rounds`` rounds of a hash chain over its data, by default
about 20 ms of CPU, standing for a template engine or a diff of a large desired state: code
that holds the GIL, which no number of threads in one process spreads over cores), then
writes the result as an annotation, once (a ConfigMap that carries the result of its current data is left alone).

This is the case sharding is for: the controller, not the API server, is the bottleneck, and
one Python process cannot use a second core.
"""

from __future__ import annotations

import argparse
import hashlib
import time

from kube_runtime import Builder, Manager, NotFound, Request, kinds, logs
from kube_runtime.client import Client
from kube_runtime.predicates import label_selector
from kube_runtime.sharding import Sharding

RENDER_LABEL = "bench.kube-runtime.io/render"
RESULT_ANNOTATION = "bench.kube-runtime.io/rendered"
RING = "bench-cpu"


def rounds_for(work_ms: float) -> int:
    """Hash-chain rounds that take about ``work_ms`` of CPU on this machine. The bench
    calibrates once (best of several probes) and passes the same ``--rounds`` to every
    replica of every run, so the work per object is identical across runs."""
    probe = 200_000
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        _chain(b"calibrate", probe)
        best = min(best, time.process_time() - started)
    return max(1, int(probe * (work_ms / 1000.0) / max(best, 1e-6)))


def _chain(seed: bytes, rounds: int) -> str:
    """``rounds`` rounds of a pure-Python loop around a small hash: GIL-bound work."""
    digest = seed
    acc = 0
    for i in range(rounds):
        acc = (acc * 31 + digest[i % len(digest)] + i) & 0xFFFFFFFF
        if i % 512 == 0:
            digest = hashlib.blake2s(digest + acc.to_bytes(4, "little")).digest()
    return hashlib.blake2s(digest + acc.to_bytes(4, "little")).hexdigest()


class Renderer:
    """The reconciler: render once per data content, record the result."""

    def __init__(self, manager: Manager, rounds: int) -> None:
        self.client = manager.client
        self.rounds = rounds

    def reconcile(self, request: Request) -> None:
        """Render ``request``'s ConfigMap unless its annotation already holds the result."""
        try:
            cm = self.client.get(kinds.ConfigMap, request.name, request.namespace)
        except NotFound:
            return
        data = cm.get("data") or {}
        seed = repr(sorted(data.items())).encode()
        source = hashlib.blake2s(seed).hexdigest()[:16]
        annotations = cm["metadata"].get("annotations") or {}
        if annotations.get(RESULT_ANNOTATION, "").startswith(source + ":"):
            return
        result = _chain(seed, self.rounds)
        self.client.patch(
            kinds.ConfigMap,
            request.name,
            {"metadata": {"annotations": {RESULT_ANNOTATION: f"{source}:{result[:16]}"}}},
            namespace=request.namespace,
        )


def main(argv: list[str] | None = None) -> int:
    """Run one replica until SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m bench.cpu_replica")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--identity", required=True)
    parser.add_argument("--shards", type=int, default=0, help="0: not sharded")
    parser.add_argument("--metrics-port", type=int, required=True)
    parser.add_argument("--health-port", type=int, required=True)
    parser.add_argument(
        "--rounds", type=int, default=0, help="hash-chain rounds per render (0: ~20 ms of CPU)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sharder-only", action="store_true")
    parser.add_argument("--no-sharder", action="store_true")
    args = parser.parse_args(argv)
    logs.setup()
    sharding = (
        Sharding(
            ring=RING,
            lease_namespace=args.namespace,
            min_shards=args.shards,
            run_shard=not args.sharder_only,
            run_sharder=not args.no_sharder,
        )
        if args.shards
        else None
    )
    manager = Manager(
        Client.from_kubeconfig(args.kubeconfig),
        namespace=args.namespace,
        leader_election_namespace=args.namespace,
        lease_duration=4.0,
        renew_deadline=3.0,
        retry_period=0.5,
        metrics_bind_address=f":{args.metrics_port}",
        health_probe_bind_address=f":{args.health_port}",
        sharding=sharding,
        identity=args.identity,
    )
    Builder(manager).named("render").for_(
        kinds.ConfigMap, label_selector(f"{RENDER_LABEL}=true")
    ).with_options(max_concurrent_reconciles=args.workers).complete(
        Renderer(manager, args.rounds or rounds_for(20.0))
    )
    manager.start()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
