"""``python -m bench.profiled OUT ARGS...``: ``kube-runtime ARGS`` with its CPU accounted.

``python -m bench real --profile`` runs our controller process through this module. Two
views are written to ``OUT``, both counted from ``SIGUSR1`` (the benchmark sends it just
before its first create, so start-up is left out):

* CPU seconds per thread, grouped by thread name (the kernel's per-thread accounting: exact,
  no overhead), written on ``SIGUSR2`` (the benchmark sends it once the API is quiet after
  convergence, while the threads still run);
* with yappi installed (``pip install yappi``, not a project dependency), the functions
  with the most CPU, by own and by total time, with call counts, written when the process
  ends (``SIGTERM``, as the benchmark stops it); ``BENCH_PROFILED_YAPPI=0`` leaves it out
  (the per-thread figures are then undisturbed). yappi inflates every figure, most of all
  in code making many small calls; read its shares, not its seconds.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TOP = 40
"""Rows per table in ``OUT``."""


# Where a module path is cut: our packages keep their name, a library directory is dropped.
_CUTS = (
    ("/kube_runtime/", True),
    ("/controllers/", True),
    ("site-packages/", False),
    ("/lib/python3.11/", False),
)


def _name(stat: Any) -> str:
    """``function (path:line)`` with the path cut to the package (ours or a library's)."""
    module = stat.module
    for marker, keep in _CUTS:
        at = module.rfind(marker)
        if at >= 0:
            module = module[at + 1 :] if keep else module[at + len(marker) :]
            break
    return f"{stat.name} ({module}:{stat.lineno})"


def function_report(stats: Any) -> str:
    """The ``TOP`` functions by own CPU time and by total CPU time, as Markdown tables."""
    rows = list(stats)
    total = sum(s.tsub for s in rows) or 1.0
    lines = [f"yappi CPU clock; {total:.2f} s of own time over {len(rows)} functions", ""]
    for title, key in (("own time", "tsub"), ("total time (callees included)", "ttot")):
        lines += [
            f"### by {title}",
            "",
            "| function | calls | own s | total s | own % |",
            "|---|---:|---:|---:|---:|",
        ]
        for s in sorted(rows, key=lambda s: getattr(s, key), reverse=True)[:TOP]:
            lines.append(
                f"| {_name(s)} | {s.ncall:,} | {s.tsub:.3f} | {s.ttot:.3f} | "
                f"{100 * s.tsub / total:.1f} |"
            )
        lines.append("")
    return "\n".join(lines)


def thread_cpu() -> dict[int, tuple[str, float]]:
    """``native thread id -> (thread name, CPU seconds)`` for this process's live threads."""
    ticks = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[str, float]] = {}
    for thread in threading.enumerate():
        tid = thread.native_id
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[tid or 0] = (thread.name, (int(fields[11]) + int(fields[12])) / ticks)
    return out


def write_thread_report(before: dict[int, tuple[str, float]], out: Path) -> None:
    """CPU seconds per thread group since ``before`` (threads named alike are summed)."""
    groups: dict[str, tuple[int, float]] = {}
    for tid, (name, cpu) in thread_cpu().items():
        group = re.sub(r"[-_ ]?\d+$", "", re.sub(r"\(.*\)$", "", name)).strip() or name
        threads, seconds = groups.get(group, (0, 0.0))
        groups[group] = (threads + 1, seconds + cpu - before.get(tid, (name, 0.0))[1])
    total = sum(seconds for _, seconds in groups.values()) or 1.0
    lines = [
        f"CPU by thread: {total:.2f} s",
        "",
        "| threads | count | CPU s | share |",
        "|---|---:|---:|---:|",
    ]
    for group, (threads, seconds) in sorted(groups.items(), key=lambda g: -g[1][1]):
        lines.append(f"| {group} | {threads} | {seconds:.2f} | {100 * seconds / total:.1f} % |")
    with out.open("a") as f:
        f.write("\n".join(lines) + "\n\n")


def main(argv: Sequence[str]) -> int:
    if len(argv) < 1:
        print("usage: python -m bench.profiled OUT [kube-runtime args...]", file=sys.stderr)
        return 2
    from kube_runtime.cli import main as kube_runtime_main

    out = Path(argv[0])
    out.write_text("")
    baseline = thread_cpu()
    yappi: Any = None
    if os.environ.get("BENCH_PROFILED_YAPPI", "1") != "0":
        try:
            import yappi
        except ImportError:
            print(
                "bench.profiled: no yappi (pip install yappi): CPU per thread only", file=sys.stderr
            )

    def restart(*_: object) -> None:
        nonlocal baseline
        baseline = thread_cpu()
        if yappi is not None:
            yappi.clear_stats()

    signal.signal(signal.SIGUSR1, restart)
    signal.signal(signal.SIGUSR2, lambda *_: write_thread_report(baseline, out))
    if yappi is not None:
        yappi.set_clock_type("cpu")
        yappi.start()
    try:
        return kube_runtime_main(list(argv[1:]))
    finally:
        if yappi is not None:
            yappi.stop()
        if yappi is not None:
            with out.open("a") as f:
                f.write(function_report(yappi.get_func_stats()))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
