"""``python -m bench [--quick] [--profile] [--markdown PATH] [--list] [name ...]``.

Four suites share one report: ``server`` (the embedded API server, :mod:`bench.embedded_server`),
``framework`` (informers, queue, cache memory, steady state, :mod:`bench.framework`),
``controllers`` (StatefulSet and CloneSet convergence, :mod:`bench.controllers`) and ``real``
(our StatefulSet controller vs kube-controller-manager 1.20 on a real kube-apiserver,
:mod:`bench.real_controllers`; needs ``scripts/real-apiserver.sh``'s binaries, takes minutes).
A name is a suite or a scenario; no name runs every suite but ``real``. Examples::

    python -m bench --quick                        # server, framework, controllers; small sizes
    python -m bench real                           # vs kube-controller-manager (minutes)
    python -m bench framework --markdown out.md    # one suite
    python -m bench informer queue watch           # scenarios from both suites
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import (
    cache_memory,
    controllers,
    embedded_server,
    framework,
    real_controllers,
    scale,
    sharding,
    watch_ingest,
)

SUITES: dict[str, dict[str, Callable[[Any], None]]] = {
    "server": dict(embedded_server.SCENARIOS),
    "framework": {**framework.SCENARIOS, **cache_memory.SCENARIOS, **watch_ingest.SCENARIOS},
    "controllers": dict(controllers.SCENARIOS),
    "scale": dict(scale.SCENARIOS),
    "sharding": dict(sharding.SCENARIOS),
    "real": dict(real_controllers.SCENARIOS),
}
DEFAULT_SUITES = ("server", "framework", "controllers")
"""What runs when no name is given (``real`` needs the real binaries and takes minutes)."""
SCENARIOS: dict[str, Callable[[Any], None]] = {
    name: fn for scenarios in SUITES.values() for name, fn in scenarios.items()
}


def resolve(names: Sequence[str]) -> list[str]:
    """Scenario names in run order (suites expanded, duplicates dropped; no name: the
    :data:`DEFAULT_SUITES`); ValueError if unknown."""
    unknown = [n for n in names if n not in SUITES and n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown name(s): {', '.join(unknown)}")
    chosen: list[str] = []
    for name in names or list(DEFAULT_SUITES):
        suite = SUITES.get(name)
        for scenario in [name] if suite is None else list(suite):
            if scenario not in chosen:
                chosen.append(scenario)
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmarks of the embedded API server, the framework core and the controllers.",
        epilog="suites: "
        + "; ".join(f"{suite} = {' '.join(s)}" for suite, s in SUITES.items())
        + f". No name: {' '.join(DEFAULT_SUITES)}.",
    )
    parser.add_argument("names", nargs="*", metavar="name", help="a suite or a scenario")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="server suite: cProfile the server thread; controllers suite: the reconciles; "
        "real suite: our controller process under yappi (bench/profiled.py)",
    )
    parser.add_argument(
        "--markdown", type=Path, metavar="PATH", help="also write the tables as Markdown"
    )
    parser.add_argument("--list", action="store_true", help="print the suites and scenarios")
    args = parser.parse_args(argv)
    if args.list:
        for suite, scenarios in SUITES.items():
            print(f"{suite}: {' '.join(scenarios)}")
        return 0
    try:
        names = resolve(args.names)
    except ValueError as e:
        parser.error(f"{e}; choose from {', '.join([*SUITES, *SCENARIOS])}")
    ctx = controllers.ControllersContext(
        embedded_server.QUICK if args.quick else embedded_server.FULL,
        args.profile,
        controllers=controllers.QUICK if args.quick else controllers.FULL,
    )
    info = embedded_server.machine_info()
    command = " ".join(["python -m bench", *(sys.argv[1:] if argv is None else argv)])
    log = embedded_server.log
    real = [n for n in names if n in real_controllers.SCENARIOS]
    where = "plain-HTTP embedded clusters, clients in-process"
    if real:
        where = (
            "real kube-apiserver 1.20; controllers and kubelet in their own processes"
            if len(real) == len(names)
            else f"{where}; a real kube-apiserver 1.20 for {' '.join(real)}"
        )
    log(f"benchmarks: {' '.join(names)} ({where})")
    for k, v in info:
        log(f"{k}: {v}")
    if args.profile:
        log("profiling is on: server-suite timings are inflated by cProfile")
    started = time.perf_counter()
    for name in names:
        log(f"== {name}")
        scenario_started = time.perf_counter()
        SCENARIOS[name](ctx)
        log(f"== {name}: {time.perf_counter() - scenario_started:.1f} s")
    seconds = time.perf_counter() - started
    report = embedded_server.render_markdown(ctx, command, info, seconds)
    print()
    print(report)
    if args.markdown is not None:
        args.markdown.write_text(report)
        log(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
