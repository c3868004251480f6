"""The command lines the multi-process benchmarks (bench/scale.py, bench/sharding.py) start
their controllers with: one builder for both, read back by kube-runtime's own parser."""

from __future__ import annotations

from pathlib import Path

from bench.scale import _CLI, _controllers_command, _manager_flags
from kube_runtime.cli import build_parser


def test_controllers_command_runs_both_controllers_with_crds_and_no_webhooks() -> None:
    argv = _controllers_command(Path("/tmp/kubeconfig"), 18081, 18082)
    assert argv[: len(_CLI)] == list(_CLI)
    args = build_parser().parse_args(argv[len(_CLI) :])
    assert args.command == "run"
    assert args.controllers == ["statefulset", "cloneset"]
    assert args.install_crds is True
    assert args.install_webhooks is False
    assert args.kubeconfig == "/tmp/kubeconfig"
    assert args.namespace == ["bench"]
    assert (args.metrics_port, args.health_port) == (18081, 18082)


def test_manager_flags_name_the_cluster_namespace_and_ports() -> None:
    flags = _manager_flags(Path("/k"), 1, 2)
    args = build_parser().parse_args(["run", "statefulset", *flags])
    assert (args.kubeconfig, args.namespace, args.metrics_port, args.health_port) == (
        "/k",
        ["bench"],
        1,
        2,
    )
