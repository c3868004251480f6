"""bench/chart.py: the ready-pod chart of the ``real`` suite, drawn from synthetic curves
(no cluster), and the helpers that feed it in bench/real_controllers.py."""

from pathlib import Path

from bench.chart import draw_ready_pods, step_points, zoom_limit
from bench.real_controllers import CONTENDERS, Result, chart_path, draw_chart, ready_pods

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_step_points_merges_repeats_and_keeps_the_last_sample():
    curve = [(0.0, 0), (0.05, 0), (0.1, 3), (0.15, 3), (0.2, 3), (0.25, 5), (0.3, 5)]
    assert step_points(curve) == ([0.0, 0.1, 0.25, 0.3], [0, 3, 5, 5])
    assert step_points([]) == ([], [])


def test_zoom_only_when_one_curve_runs_far_longer():
    fast = [(0.0, 0), (20.0, 1000)]
    slow = [(0.0, 0), (150.0, 1000)]
    assert zoom_limit({"a": fast, "b": [(0.0, 0), (25.0, 1000)]}) is None
    assert zoom_limit({"a": fast, "b": slow}) == 22.0
    assert zoom_limit({"a": fast, "b": []}) is None


def test_draws_a_png_with_a_zoom_panel(tmp_path):
    curves = {
        "ours": [(t / 10, min(1000, 50 * t)) for t in range(0, 201)],
        "slow": [(float(t), min(1000, 7 * t)) for t in range(0, 151)],
        "empty": [],
    }
    one = draw_ready_pods(dict(list(curves.items())[:1]), tmp_path / "one.png", title="t", dpi=10)
    two = draw_ready_pods(curves, tmp_path / "sub" / "two.png", title="t", total=1000, dpi=10)
    w1, h1 = _png_size(one)
    w2, h2 = _png_size(two)
    assert h1 == h2 and w2 == 2 * w1  # the second panel is the zoom


def _result(key: str, curve: list[tuple[float, int]]) -> Result:
    contender = next(c for c in CONTENDERS if c.key == key)
    return Result(
        contender, "Parallel 2 x 5", 2, 5, 0.0, {"converged": curve[-1][0]}, {}, {}, {}, 0.0, curve
    )


def test_draw_chart_from_results(tmp_path):
    results = [
        _result("ours", [(0.0, 0), (1.0, 4), (2.0, 10)]),
        _result("kcm", [(0.0, 0), (3.0, 10)]),
    ]
    path = draw_chart(results, tmp_path / "c.png", dpi=10)
    assert path is not None and _png_size(path)[0] > 0
    assert draw_chart([], tmp_path / "none.png", dpi=10) is None
    assert not (tmp_path / "none.png").exists()


def test_ready_pods_and_chart_path():
    sets = [{"status": {"readyReplicas": 3}}, {"status": {}}, {}, {"status": {"readyReplicas": 2}}]
    assert ready_pods(sets) == 5
    assert chart_path("Parallel", 200, 5).name == "real-parallel-200x5.png"
    assert chart_path("Parallel", 200, 5).parent.name == "bench"
