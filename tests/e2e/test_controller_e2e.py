"""Controllers wired by the builder, run by a manager, against the embedded cluster.

On the embedded backend every test runs on simulated time (``docs/simtime.md``) on a cluster
of its own, so leader election runs with client-go's 15/10/2 s; on kube-apiserver
(``--backend real``) in real time with 1/0.6/0.1 s.
"""

from __future__ import annotations

import logging
import threading
import urllib.request
from collections.abc import Iterator

import pytest

from kube_runtime import Builder, Manager, Request, Result, TerminalError, clock, kinds
from kube_runtime.envtest.managers import running
from kube_runtime.predicates import GenerationChanged
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    simulated_client,
    simulated_namespace,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

# client-go's lease duration, renew deadline and retry period; shrunk in real time
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = (15.0, 10.0, 2.0) if SIMULATED else (1.0, 0.6, 0.1)


class Recorder:
    """A reconciler that records its requests (and can fail or block on demand)."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.behaviour: dict[str, object] = {}

    def reconcile(self, request: Request) -> Result | None:
        with self.lock:
            self.requests.append(request)
        action = self.behaviour.get(request.name)
        if callable(action):
            return action(request)  # type: ignore[no-any-return]
        return None

    def count(self, name: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r.name == name)


def sts(name: str, ns: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "serviceName": name,
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def cm(name: str, ns: str, owner: dict | None = None, **labels: str) -> dict:
    meta: dict = {"name": name, "namespace": ns, "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {}}


@pytest.fixture
def manager(client, namespace) -> Iterator[Manager]:
    yield Manager(
        client,
        namespace=namespace,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        graceful_shutdown_timeout=10,
    )


def test_for_and_owns_enqueue_the_owner(client, namespace, manager, wait_for) -> None:
    rec = Recorder()
    Builder(manager).named(f"owns-{namespace}").for_(kinds.StatefulSet).owns(
        kinds.ConfigMap
    ).complete(rec)
    with running(manager):
        web = client.create(sts("web", namespace))
        wait_for(lambda: rec.count("web") >= 1, message="reconcile of the created set")
        before = rec.count("web")
        client.create(cm("web-config", namespace, owner=web))
        client.create(cm("unowned", namespace))
        wait_for(lambda: rec.count("web") > before, message="owned object wakes its owner")
        assert rec.count("web-config") == 0 and rec.count("unowned") == 0
        before = rec.count("web")
        client.patch(
            kinds.ConfigMap, "web-config", {"metadata": {"labels": {"x": "1"}}}, namespace=namespace
        )
        wait_for(lambda: rec.count("web") > before, message="owned update wakes its owner")
        assert all(r.namespace == namespace for r in rec.requests)


def test_generation_predicate_skips_status_only_changes(
    client, namespace, manager, wait_for
) -> None:
    rec = Recorder()
    Builder(manager).named(f"gen-{namespace}").for_(
        kinds.StatefulSet, GenerationChanged()
    ).complete(rec)
    with running(manager):
        web = client.create(sts("web", namespace))
        wait_for(lambda: rec.count("web") == 1)
        web = client.update_status({**web, "status": {"replicas": 0, "observedGeneration": 1}})
        client.patch(kinds.StatefulSet, "web", {"spec": {"replicas": 1}}, namespace=namespace)
        wait_for(lambda: rec.count("web") == 2, message="spec change reconciled")
        # the status write came first and was filtered; only create + spec change got through
        assert rec.count("web") == 2


def test_errors_requeue_terminal_errors_do_not(client, namespace, manager, wait_for) -> None:
    rec = Recorder()
    attempts = {"flaky": 0}

    def flaky(request: Request) -> None:
        attempts["flaky"] += 1
        if attempts["flaky"] < 3:
            raise RuntimeError("transient")

    def terminal(request: Request) -> None:
        raise TerminalError("bad spec")

    def again_later(request: Request) -> Result:
        return Result(requeue_after=0.05)

    rec.behaviour = {"flaky": flaky, "terminal": terminal, "again": again_later}
    Builder(manager).named(f"err-{namespace}").for_(kinds.ConfigMap).complete(rec)
    with running(manager):
        for name in ("flaky", "terminal", "again"):
            client.create(cm(name, namespace))
        wait_for(lambda: attempts["flaky"] == 3, message="failing reconcile retried until success")
        wait_for(lambda: rec.count("again") >= 3, message="requeue_after repeats the reconcile")
        assert rec.count("terminal") == 1
        assert manager_thread_alive(manager)


def manager_thread_alive(manager: Manager) -> bool:
    return not manager._stop.is_set()


def test_reconcile_logs_carry_the_object_key(client, namespace, manager, wait_for, caplog) -> None:
    caplog.set_level(logging.INFO)
    user_log = logging.getLogger("my.reconciler")

    def reconcile(request: Request) -> None:
        user_log.info("hello from the reconciler")

    Builder(manager).named(f"logs-{namespace}").for_(kinds.ConfigMap).complete(reconcile)
    with running(manager):
        client.create(cm("logged", namespace))
        wait_for(lambda: any(r.name == "my.reconciler" for r in caplog.records))
    record = next(r for r in caplog.records if r.name == "my.reconciler")
    assert record.kr_key == f"{namespace}/logged"
    assert record.kr_controller == f"logs-{namespace}"
    assert f"key={namespace}/logged" in record.kr_context


def test_graceful_shutdown_finishes_in_flight_reconciles(
    client, namespace, manager, wait_for
) -> None:
    clk = clock.current()  # the events' waits are virtual under simulation
    entered, release, finished = clk.event(), clk.event(), clk.event()

    def slow(request: Request) -> None:
        entered.set()
        release.wait(10)
        finished.set()

    Builder(manager).named(f"slow-{namespace}").for_(kinds.ConfigMap).complete(slow)
    with running(manager) as runner:
        client.create(cm("slow", namespace))
        assert entered.wait(10)
        stopper = threading.Thread(target=runner.stop)
        stopper.start()
        wait_for(lambda: manager._runnable_stop.is_set(), message="shutdown begun")
        assert runner.thread.is_alive() and not finished.is_set()
        release.set()
        stopper.join(15)
        assert finished.is_set() and not runner.thread.is_alive()
        assert runner.error is None


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_metrics_and_probes(client, namespace, manager, wait_for) -> None:
    name = f"metrics-{namespace}"
    rec = Recorder()
    Builder(manager).named(name).for_(kinds.ConfigMap).complete(rec)
    with running(manager):
        client.create(cm("m", namespace))
        wait_for(lambda: rec.count("m") == 1)
        wait_for(lambda: manager.health_probe_address is not None)
        host, port = manager.health_probe_address
        wait_for(lambda: get(f"http://{host}:{port}/readyz")[0] == 200, message="ready")
        assert get(f"http://{host}:{port}/healthz") == (200, "ok")
        host, port = manager.metrics_address
        status, text = get(f"http://{host}:{port}/metrics")
    assert status == 200
    assert f'controller_runtime_reconcile_total{{controller="{name}",result="success"}} 1.0' in text
    assert f'controller_runtime_reconcile_time_seconds_count{{controller="{name}"}} 1.0' in text
    assert f'workqueue_adds_total{{name="{name}"}}' in text
    assert f'workqueue_depth{{name="{name}"}} 0.0' in text
    assert 'rest_client_requests_total{code="201",host=' in text
    assert "kube_runtime_informer_events_total{kind=" in text


def test_leader_election_only_the_leader_reconciles_and_a_follower_takes_over(
    client, namespace, wait_for
) -> None:
    lease = f"le-{namespace}"

    def make(identity: str, rec: Recorder) -> Manager:
        m = Manager(
            client,
            namespace=namespace,
            leader_election=True,
            leader_election_id=lease,
            leader_election_namespace=namespace,
            lease_duration=LEASE_DURATION,
            renew_deadline=RENEW_DEADLINE,
            retry_period=RETRY_PERIOD,
            identity=identity,
            metrics_bind_address="0",
        )
        Builder(m).named(f"le-{identity}-{namespace}").for_(kinds.ConfigMap).complete(rec)
        return m

    recorders = {"a": Recorder(), "b": Recorder()}
    managers = {name: make(name, rec) for name, rec in recorders.items()}
    with running(managers["a"]) as run_a, running(managers["b"]) as run_b:
        runners = {"a": run_a, "b": run_b}
        wait_for(lambda: any(m.elected.is_set() for m in managers.values()), message="a leader")
        leader = "a" if managers["a"].elected.is_set() else "b"
        follower = "b" if leader == "a" else "a"
        client.create(cm("one", namespace))
        wait_for(lambda: recorders[leader].count("one") == 1)
        assert recorders[follower].count("one") == 0
        assert not managers[follower].elected.is_set()
        runners[leader].stop()  # releases the lease on the way out
        wait_for(
            lambda: managers[follower].elected.is_set(),
            timeout=LEASE_DURATION * 10,
            message="takeover",
        )
        wait_for(lambda: recorders[follower].count("one") == 1, message="new leader reconciles")
        assert client.get(kinds.Lease, lease, namespace)["spec"]["holderIdentity"] == follower

    def lease_events() -> set[str]:
        items = client.list(kinds.Event, namespace)["items"]
        return {e["message"] for e in items if e["involvedObject"]["kind"] == "Lease"}

    wait_for(lambda: {"a became leader", "b became leader"} <= lease_events(), message="events")
