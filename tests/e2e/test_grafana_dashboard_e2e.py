"""deploy/grafana/controllers.json: every panel's query names a metric a running manager
really exports on /metrics: a leader-elected manager for the controller panels, sharded
replicas (one joining, so that objects move with drains) for the shard-ownership panels. Those
have samples only with sharding on (their ``# TYPE`` lines are there in every manager), so
for them a sample is required."""

from __future__ import annotations

import contextlib
import itertools
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
from kube_runtime.sharding import Sharding, shard_for, shard_label

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "controllers.json"
# A metric name in PromQL: an identifier followed by a label matcher or a range.
METRIC = re.compile(r"\b([a-z_][a-z0-9_]*)\s*(?=\{|\[)")
PROMQL_WORDS = {"by", "without", "rate", "sum", "max", "histogram_quantile", "label_values"}


FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.3}
SHARDING_METRICS = {
    "kube_runtime_sharding_objects",
    "kube_runtime_sharding_shards",
    "kube_runtime_sharding_syncs_total",
    "kube_runtime_sharding_drains_total",
}


def _queries() -> list[str]:
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for panel in board["panels"] for t in panel.get("targets", ())]
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


def _sampled(text: str) -> set[str]:
    """The metric names with at least one sample in an exposition."""
    return {
        re.split(r"[{ ]", line, maxsplit=1)[0]
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def _scrape(manager: Manager) -> str:
    assert manager.metrics_address is not None
    host, port = manager.metrics_address
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as answer:
        text: str = answer.read().decode()
    return text


def _leader_scrape(client: Client, namespace: str, wait_for: Any) -> str:
    manager = Manager(
        client,
        namespace=namespace,
        leader_election=True,
        leader_election_id=f"grafana-{uuid.uuid4().hex[:6]}",
        leader_election_namespace=namespace,
        metrics_bind_address="127.0.0.1:0",
        **FAST,
    )
    Builder(manager).named(f"grafana-{namespace}").for_(kinds.ConfigMap).complete(lambda r: None)
    with running(manager):
        wait_for(manager.elected.is_set, 30, message="elected")
        return _scrape(manager)


def _sharded_scrape(client: Client, namespace: str, wait_for: Any) -> str:
    """Replica ``a`` takes four ConfigMaps, ``b`` joins and takes its share (``a`` answers the
    drains); then ``a``, which runs the sharder, is scraped."""
    ring = f"g{uuid.uuid4().hex[:8]}"
    shards = [f"{ring}-a", f"{ring}-b"]
    names = [f"cm{i}" for i in range(4)]
    for i in itertools.count(4):  # at least one of them for each shard
        if {shard_for(f"{namespace}/{n}", shards) for n in names} == set(shards):
            break
        names[i % 4] = f"cm{i}"
    key = shard_label(ring)

    def placed() -> dict[str, str | None]:
        return {
            n: (client.get(kinds.ConfigMap, n, namespace)["metadata"].get("labels") or {}).get(key)
            for n in names
        }

    def replica(identity: str) -> Manager:
        manager = Manager(
            client,
            namespace=namespace,
            identity=identity,
            metrics_bind_address="127.0.0.1:0",
            sharding=Sharding(ring, lease_namespace=namespace),
            **FAST,
        )
        Builder(manager).named(f"grafana-{identity}").for_(kinds.ConfigMap).complete(lambda r: None)
        return manager

    with contextlib.ExitStack() as stack:
        first = replica(shards[0])
        stack.enter_context(running(first))
        for name in names:
            client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace},
                }
            )
        wait_for(lambda: set(placed().values()) == {shards[0]}, 30, message="all on a")
        stack.enter_context(running(replica(shards[1])))
        want = {n: shard_for(f"{namespace}/{n}", shards) for n in names}
        wait_for(lambda: placed() == want, 30, message="split over a and b")
        return _scrape(first)


def test_every_panel_queries_a_metric_the_manager_exports(
    client: Client, namespace: str, wait_for: Any
) -> None:
    leader = _leader_scrape(client, namespace, wait_for)
    sharded = _sharded_scrape(client, namespace, wait_for)
    assert "leader_election_master_status" in _sampled(leader)
    assert _sampled(sharded) >= SHARDING_METRICS, sorted(SHARDING_METRICS - _sampled(sharded))
    queried = {m for expr in _queries() for m in METRIC.findall(expr)} - PROMQL_WORDS
    assert len(queried) >= 19, sorted(queried)
    assert queried >= SHARDING_METRICS, sorted(SHARDING_METRICS - queried)
    exported = _exported(leader) | _exported(sharded)
    assert queried <= exported, f"not exported: {sorted(queried - exported)}"
