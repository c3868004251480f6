"""What a write costs through ``kube_runtime.retry``, for comparing two source trees.

Every controller write goes through :func:`kube_runtime.retry.retry_on_conflict`, so its fast
path (the first try, no conflict) is part of what every write costs. Measured here, each in
one process:

- ``wrapper``: ``retry_on_conflict(fn)`` where ``fn`` returns at once, less calling ``fn``
  directly: the wrapper's own cost, ns per call (best of 7 repeats of 200,000 calls).
- ``fake write``: a read-modify-write (``get`` + ``update`` of a ConfigMap) on the in-memory
  ``FakeClient`` inside ``retry_on_conflict``, us per write (best of 5 x 2,000).
- ``http write``: the same read-modify-write over HTTP to an ``EmbeddedCluster`` with the
  framework's ``Client`` (a typical controller write), us per write (median of 7 x 300,
  wall clock: server and client threads in this process).
- ``one conflict``: a call whose first try raises ``Conflict`` and whose second returns,
  sleeps recorded rather than slept (client-go's ``DefaultRetry``), us per call (best of
  5 x 2,000): the slow path's own cost, without the 10 ms it sleeps.

Run one tree (``--tree`` puts it first on ``sys.path``; default: this checkout)::

    python -m bench.retry_write [--tree PATH] [--json]

or compare two, interleaved (base, this, this, base, ... in fresh processes; run it from a
directory that holds no ``kube_runtime``, e.g. ``cd /tmp``)::

    python /path/to/bench/retry_write.py --compare /path/to/base-tree [--this TREE] --rounds 5

or, with less noise between the two, in one process: the base tree's ``kube_runtime/retry.py``
loaded beside this one's, both on the same fixtures, alternately::

    python -m bench.retry_write --compare /path/to/base-tree --same-process --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
THIS_TREE = os.path.dirname(HERE)
FIGURES = ("wrapper_ns", "fake_write_us", "http_write_us", "conflict_us")
LABELS = {
    "wrapper_ns": "wrapper, ns/call",
    "fake_write_us": "fake write, us",
    "http_write_us": "http write, us",
    "conflict_us": "one conflict, us",
}


class Fixtures:
    """What the figures are taken on: an EmbeddedCluster and its client, a Conflict."""

    def __init__(self) -> None:
        from kube_runtime.client.errors import error_from_status
        from kube_runtime.envtest.cluster import EmbeddedCluster

        self.cluster = EmbeddedCluster(kubelet=False, deployments=False).__enter__()
        self.client = self.cluster.client()
        self.client.create(config_map())
        status = {"kind": "Status", "status": "Failure", "code": 409, "reason": "Conflict"}
        self.conflict = lambda: error_from_status({**status, "message": "x"})

    def close(self) -> None:
        self.client.close()
        self.cluster.__exit__(None, None, None)


def config_map() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "bench", "namespace": "default"},
        "data": {"n": "0"},
    }


def read_modify_write(client: Any) -> Callable[[], Any]:
    from kube_runtime import kinds

    def attempt() -> Any:
        cm = client.get(kinds.ConfigMap, "bench", "default")
        cm["data"]["n"] = str(int(cm["data"]["n"]) + 1)
        return client.update(cm)

    return attempt


def figures(retry_on_conflict: Callable[..., Any], fx: Fixtures) -> dict[str, float]:
    """The four figures for one ``retry_on_conflict``."""
    out: dict[str, float] = {}

    def ok() -> None:
        return None

    n = 200_000
    wrapped = min(timeit.repeat(lambda: retry_on_conflict(ok), number=n, repeat=7))
    # the lambda's own call is in `wrapped`; time it alone and take it out too
    lam = min(timeit.repeat(lambda: ok(), number=n, repeat=7))
    out["wrapper_ns"] = (wrapped - lam) / n * 1e9

    from kube_runtime.client.fake import FakeClient

    # a fresh fake each time: it records every action, so a long-lived one slows down
    fake_rmw = read_modify_write(FakeClient([config_map()]))
    m = 2_000
    best = min(timeit.repeat(lambda: retry_on_conflict(fake_rmw), number=m, repeat=5))
    out["fake_write_us"] = best / m * 1e6

    http_rmw = read_modify_write(fx.client)
    for _ in range(100):  # connections, validators: not measured
        retry_on_conflict(http_rmw)
    batches = []
    for _ in range(7):
        started = time.perf_counter()
        for _ in range(300):
            retry_on_conflict(http_rmw)
        batches.append((time.perf_counter() - started) / 300 * 1e6)
    out["http_write_us"] = statistics.median(batches)

    state = {"left": 0}
    # a new error each time, as each 409 answer is (one raised again and again grows a traceback)
    pool = [fx.conflict() for _ in range(5 * m)]

    def conflicts_once() -> str:
        if state["left"]:
            state["left"] = 0
            raise pool.pop()
        return "ok"

    slept: list[float] = []

    def once() -> None:
        state["left"] = 1
        retry_on_conflict(conflicts_once, sleep=slept.append)

    best = min(timeit.repeat(once, number=m, repeat=5))
    assert len(slept) == 5 * m and all(0.01 <= s <= 0.011 for s in slept), "one sleep each"
    out["conflict_us"] = best / m * 1e6
    return out


def measure() -> dict[str, Any]:
    """The four figures for the ``kube_runtime`` first on ``sys.path``."""
    import kube_runtime
    from kube_runtime.retry import retry_on_conflict

    fx = Fixtures()
    try:
        out: dict[str, Any] = dict(figures(retry_on_conflict, fx))
    finally:
        fx.close()
    out["tree"] = os.path.dirname(os.path.dirname(kube_runtime.__file__))
    return out


def same_process(base: str, rounds: int) -> None:
    """This tree's ``retry_on_conflict`` and the base tree's ``kube_runtime/retry.py`` (loaded
    beside it) on the same fixtures in one process, alternately; print a Markdown table."""
    import importlib.util

    from kube_runtime.retry import retry_on_conflict

    spec = importlib.util.spec_from_file_location(
        "_base_retry", os.path.join(base, "kube_runtime", "retry.py")
    )
    assert spec is not None and spec.loader is not None
    base_retry = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = base_retry  # dataclasses look their module up
    spec.loader.exec_module(base_retry)
    fx = Fixtures()
    results: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    try:
        for r in range(rounds):
            pair = [("base", base_retry.retry_on_conflict), ("this", retry_on_conflict)]
            for name, fn in pair if r % 2 == 0 else pair[::-1]:  # ABBA: no side always first
                results[name].append(figures(fn, fx))
                print(f"round {r + 1} {name}: {results[name][-1]}", file=sys.stderr, flush=True)
    finally:
        fx.close()
    table(results, f"(one process; base: {base}/kube_runtime/retry.py; this: {THIS_TREE})")


def table(results: dict[str, list[dict[str, Any]]], footer: str) -> None:
    """Print the rounds side by side, base / this, and the medians (Markdown)."""
    rounds = len(results["base"])
    rounds_head = " | ".join(f"round {i + 1}: base / this" for i in range(rounds))
    print(f"| figure | {rounds_head} | median base | median this |")
    print("|---|" + "---:|" * rounds + "---:|---:|")
    for key in FIGURES:
        cells = [
            f"{b[key]:.1f} / {t[key]:.1f}"
            for b, t in zip(results["base"], results["this"], strict=True)
        ]
        med_b = statistics.median(x[key] for x in results["base"])
        med_t = statistics.median(x[key] for x in results["this"])
        print(f"| {LABELS[key]} | " + " | ".join(cells) + f" | {med_b:.1f} | {med_t:.1f} |")
    print(footer)


def compare(base: str, this: str, rounds: int) -> None:
    """Run the base and this tree alternately in fresh processes; print a Markdown table."""
    script = os.path.abspath(__file__)
    results: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    for r in range(rounds):
        pair = [("base", base), ("this", this)]
        for name, tree in pair if r % 2 == 0 else pair[::-1]:  # ABBA: no side always first
            done = subprocess.run(
                [sys.executable, script, "--tree", tree, "--json"],
                capture_output=True,
                text=True,
                check=True,
                cwd="/",
                env={**os.environ, "PYTHONPATH": tree},
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            results[name].append(figures)
            print(f"round {r + 1} {name}: {figures}", file=sys.stderr, flush=True)
    table(results, f"(fresh processes; base: {base}; this: {this})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", help="source tree to import kube_runtime from")
    parser.add_argument("--json", action="store_true", help="one JSON line of figures")
    parser.add_argument("--compare", metavar="BASE", help="base tree to compare this one with")
    parser.add_argument(
        "--this", metavar="TREE", default=THIS_TREE, help="the tree compared (default: this one)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--same-process",
        action="store_true",
        help="with --compare: load BASE/kube_runtime/retry.py beside this tree's, one process",
    )
    args = parser.parse_args(argv)
    if args.compare and args.same_process:
        if HERE in sys.path:
            sys.path.remove(HERE)
        same_process(os.path.abspath(args.compare), args.rounds)
        return
    if args.compare:
        compare(os.path.abspath(args.compare), os.path.abspath(args.this), args.rounds)
        return
    if args.tree:
        sys.path.insert(0, os.path.abspath(args.tree))
    if HERE in sys.path:  # run as a script: this folder's modules must not shadow packages
        sys.path.remove(HERE)
    figures = measure()
    if args.json:
        print(json.dumps(figures))
    else:
        for key in FIGURES:
            print(f"{LABELS[key]}: {figures[key]:.1f}")
        print(f"(kube_runtime from {figures['tree']})")


if __name__ == "__main__":
    main()
