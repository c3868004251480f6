"""deploy/grafana/controllers.json: every panel's query names a metric a running manager
really exports on /metrics."""

from __future__ import annotations

import json
import re
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from kube_runtime import kinds
from kube_runtime.builder import Builder
from kube_runtime.client import Client
from kube_runtime.envtest.managers import running
from kube_runtime.manager import Manager

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "controllers.json"
# A metric name in PromQL: an identifier followed by a label matcher or a range.
METRIC = re.compile(r"\b([a-z_][a-z0-9_]*)\s*(?=\{|\[)")
PROMQL_WORDS = {"by", "without", "rate", "sum", "max", "histogram_quantile", "label_values"}


def _queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for panel in board["panels"] for t in panel["targets"]]
    exprs += [v["query"] for v in board["templating"]["list"] if v["type"] == "query"]
    return exprs


def _exported(text: str) -> set[str]:
    names: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()[:4]
            names.add(name)
            if kind == "histogram":
                names.update(f"{name}_{s}" for s in ("bucket", "sum", "count"))
            if kind == "counter" and not name.endswith("_total"):
                names.add(f"{name}_total")
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names


def test_every_panel_queries_a_metric_the_manager_exports(
    client: Client, namespace: str, wait_for: Any
) -> None:
    manager = Manager(
        client,
        namespace=namespace,
        leader_election=True,
        leader_election_id=f"grafana-{uuid.uuid4().hex[:6]}",
        leader_election_namespace=namespace,
        lease_duration=2.0,
        renew_deadline=1.5,
        retry_period=0.3,
        metrics_bind_address="127.0.0.1:0",
    )
    Builder(manager).named(f"grafana-{namespace}").for_(kinds.ConfigMap).complete(lambda r: None)
    with running(manager):
        wait_for(manager.elected.is_set, 30, message="elected")
        assert manager.metrics_address is not None
        host, port = manager.metrics_address
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as answer:
            exported = _exported(answer.read().decode())
    queried = {m for expr in _queries() for m in METRIC.findall(expr)} - PROMQL_WORDS
    assert len(queried) >= 15, sorted(queried)
    assert queried <= exported, f"not exported: {sorted(queried - exported)}"
