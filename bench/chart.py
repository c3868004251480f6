"""Charts of benchmark runs (matplotlib, Agg backend: no display needed).

:func:`draw_ready_pods` draws the ready-pod curves of several contenders of one workload
on one chart, as :mod:`bench.real_controllers` records them (seconds since the first
create, pods Ready at that time). Importing this module needs neither matplotlib nor a
cluster; matplotlib is imported when a chart is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

#: One curve: (seconds since the workload started, ready pods) samples, in time order.
Curve = Sequence[tuple[float, int]]


def step_points(curve: Curve) -> tuple[list[float], list[int]]:
    """The x and y lists of ``curve`` with consecutive samples of equal value merged (the
    first and last sample kept), so a long run sampled every 50 ms stays a small figure."""
    xs: list[float] = []
    ys: list[int] = []
    for i, (t, v) in enumerate(curve):
        if ys and ys[-1] == v and i != len(curve) - 1:
            continue
        xs.append(t)
        ys.append(v)
    return xs, ys


def zoom_limit(curves: Mapping[str, Curve]) -> float | None:
    """Where a second, zoomed panel should end: 1.1 x the second-longest curve's last
    sample when the longest runs more than 2.5 x as long (one slow contender would squeeze
    the others into a corner of the chart); None when no zoom is needed."""
    ends = sorted(c[-1][0] for c in curves.values() if c)
    if len(ends) < 2 or ends[-2] <= 0 or ends[-1] <= 2.5 * ends[-2]:
        return None
    return 1.1 * ends[-2]


def draw_ready_pods(
    curves: Mapping[str, Curve],
    path: Path,
    *,
    title: str,
    total: int | None = None,
    dpi: int = 110,
) -> Path:
    """Draw one line per entry of ``curves`` (label -> samples) as ready pods over seconds,
    with a dotted line at ``total`` pods when given, and a second panel zoomed on the
    faster contenders when :func:`zoom_limit` asks for one; write a PNG to ``path``
    (parents created) and return ``path``. An empty curve is listed in the legend with no
    line; ``dpi`` sets the resolution. The figure is closed afterwards (no pyplot state is
    left behind)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    zoom = zoom_limit(curves)
    panels = 1 if zoom is None else 2
    fig, axes = plt.subplots(1, panels, figsize=(7 * panels, 5), dpi=dpi, squeeze=False)
    try:
        for n, ax in enumerate(axes[0]):
            for label, curve in curves.items():
                xs, ys = step_points(curve)
                if xs:
                    label = f"{label}: {xs[-1]:.1f} s"
                ax.step(xs, ys, where="post", label=label, linewidth=1.8)
            if total is not None:
                ax.axhline(total, linestyle=":", color="grey", linewidth=1)
            ax.set_xlabel("seconds since the first create")
            ax.set_ylabel("pods Ready (sum of the sets' status.readyReplicas)")
            ax.set_xlim(left=0, right=zoom if n == 1 else None)
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(loc="lower right", fontsize=8)
            if n == 1:
                ax.set_title(f"the first {zoom:.0f} s", fontsize=10)
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
