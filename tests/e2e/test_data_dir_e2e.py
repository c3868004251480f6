"""The embedded cluster's state on disk (issue 18 part 4): ``kube-runtime cluster --data-dir``.

The kill test runs ``kube-runtime cluster --data-dir D`` as a process (forked from one
interpreter that imported the command's modules, ``tests.support.fork_server``), writes config
maps from several threads (creates, updates and deletes, each carrying a counter), SIGKILLs the
server at a random moment, restarts it on the same directory and checks: every acknowledged
write is there (or its later state), no object is half-written (at its acknowledged state or at
the complete state of the one write in flight when the server died), resourceVersions keep
growing, a CRD and its custom object are served again, and a watch from before the restart
gets 410 Expired. ``KUBE_RUNTIME_DATA_DIR_KILLS`` sets the number of kills (docs/RELIABILITY.md
has a 20-kill run); ``KUBE_RUNTIME_DATA_DIR_SEED`` the seed.

The other tests restart an in-process :class:`EmbeddedCluster` on its data directory: the
garbage collector, the kubelet and the CRD finalizer pick up the restored objects.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.client import Client
from kube_runtime.client.errors import (
    ApiConnectionError,
    ApiError,
    Gone,
    MethodNotAllowed,
    NotFound,
)
from kube_runtime.crds import install_crd
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.kinds import Kind
from tests.support.fork_server import Forked, ForkServer

pytestmark = pytest.mark.embedded_only("the embedded server's data directory")

KILLS = int(os.environ.get("KUBE_RUNTIME_DATA_DIR_KILLS", "3"))
SEED = int(os.environ.get("KUBE_RUNTIME_DATA_DIR_SEED", "18"))
WRITERS = 4
NAMES_PER_WRITER = 6
NS = "default"

WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                        },
                    }
                },
            }
        ],
    },
}
WIDGET = Kind("example.com/v1", "Widget")
CRD = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")


def _widget(name: str, size: int, finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {
        "apiVersion": WIDGET.api_version,
        "kind": WIDGET.kind,
        "metadata": meta,
        "spec": {"size": size},
    }


def _configmap(name: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    meta = {"name": name, "namespace": NS}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


# ---------------------------------------------------------------- the server process


#: What ``kube-runtime cluster`` imports: the fork server's preload.
PRELOAD = ("kube_runtime.envtest.cli", "kube_runtime.envtest.cluster", "kube_runtime.cli")


@pytest.fixture(scope="module")
def fork_server() -> Iterator[ForkServer]:
    """One interpreter that imports :data:`PRELOAD` and forks the ``kube-runtime cluster``
    processes: a restart after SIGKILL costs the command's start-up, not its imports (~1 s of
    CPU each)."""
    with ForkServer(PRELOAD) as forks:
        yield forks


def _cluster(forks: ForkServer, log: Path, *args: str) -> Forked:
    """``kube-runtime cluster ARGS`` (forked from ``forks``), its stderr in ``log``."""
    log.write_bytes(b"")
    return forks.popen("kube_runtime.cli", ["cluster", *args], stderr=log)


def _stop(proc: Forked | None) -> None:
    """SIGKILL ``proc`` (if still running) and wait for it."""
    if proc is None:
        return
    proc.kill()
    proc.wait(10)


class Server:
    """``kube-runtime cluster --data-dir`` as a child process (of ``forks``), restartable."""

    def __init__(self, forks: ForkServer, tmp: Path) -> None:
        self.data_dir = tmp / "data"
        self.kubeconfig = tmp / "kubeconfig"
        self.log = tmp / "server.log"
        self.proc: Forked | None = None
        self._forks = forks

    def start(self) -> Client:
        self.kubeconfig.unlink(missing_ok=True)
        proc = self.proc = _cluster(
            self._forks,
            self.log,
            *("--port", "0", "--no-auth", "--data-dir", str(self.data_dir)),
            *("--kubeconfig", str(self.kubeconfig)),
        )
        wait_for(
            lambda: self.kubeconfig.exists() or proc.poll() is not None,
            timeout=30,
            message="the cluster to start",
        )
        assert proc.poll() is None, self.log.read_text(errors="replace")
        return Client.from_kubeconfig(self.kubeconfig, connect_timeout=2, read_timeout=10)

    def kill(self) -> None:
        _stop(self.proc)
        self.proc = None

    def close(self) -> None:
        self.kill()


@pytest.fixture
def server(fork_server: ForkServer, tmp_path: Path) -> Iterator[Server]:
    srv = Server(fork_server, tmp_path)
    try:
        yield srv
    finally:
        srv.close()


# ----------------------------------------------------------------------- the writers

ABSENT: dict[str, str] | None = None


@dataclass
class Writer:
    """One thread's config maps: what the server acknowledged for each, and the write in
    flight (name, intended data or ABSENT) when the server went away."""

    index: int
    rng: random.Random
    acked: dict[str, dict[str, str] | None] = field(default_factory=dict)
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    in_flight: tuple[str, dict[str, str] | None] | None = None
    counter: int = 0
    writes: int = 0
    max_rv: int = 0
    failures: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        return [f"w{self.index}-{i}" for i in range(NAMES_PER_WRITER)]

    def data(self) -> dict[str, str]:
        """Several keys with the same counter: a half-written object would mix them."""
        self.counter += 1
        value = f"{self.index}-{self.counter}"
        return {"a": value, "b": value, "c": value * 3}

    def run(self, client: Client, stop: threading.Event) -> None:
        while not stop.is_set():
            name = self.rng.choice(self.names())
            want: dict[str, str] | None
            if self.acked.get(name) is None:
                op, want = "create", self.data()
            elif self.rng.random() < 0.2:
                op, want = "delete", ABSENT
            else:
                op, want = "update", self.data()
            self.in_flight = (name, want)
            try:
                if op == "create":
                    got = client.create(_configmap(name, want))
                elif op == "update":
                    got = client.update({**self.objects[name], "data": want})
                else:
                    got = client.delete(kinds.ConfigMap, name, NS)
            except ApiConnectionError:
                return  # the server died: this write stays in flight, unacknowledged
            except ApiError as e:
                self.failures.append(f"{op} {name}: {e}")
                return
            self.in_flight = None
            self.writes += 1
            rv = got.get("metadata", {}).get("resourceVersion")  # a deletion answers a Status
            self.max_rv = max(self.max_rv, int(rv or 0))
            self.acked[name] = want
            if want is ABSENT:
                self.objects.pop(name, None)
            else:
                self.objects[name] = got


def _written(writers: list[Writer], at_least: int) -> bool:
    return sum(w.writes for w in writers) >= at_least


@dataclass
class Tally:
    kills: int = 0
    acknowledged: int = 0
    lost: int = 0
    half_applied: int = 0
    in_flight_applied: int = 0


def _check_after_restart(client: Client, writers: list[Writer], tally: Tally) -> None:
    """Compare the restarted server with what was acknowledged; adopt its state."""
    listed = client.list(kinds.ConfigMap, NS)
    on_server = {
        o["metadata"]["name"]: o for o in listed["items"] if o["metadata"]["name"].startswith("w")
    }
    for w in writers:
        assert not w.failures, w.failures
        for name in w.names():
            obj = on_server.get(name)
            data = obj.get("data") if obj is not None else ABSENT
            if data == w.acked.get(name):
                continue
            if w.in_flight is not None and w.in_flight[0] == name and data == w.in_flight[1]:
                tally.in_flight_applied += 1  # done but not answered: complete, allowed
                continue
            if data is not None and len(set(v[: len(data["a"])] for v in data.values())) > 1:
                tally.half_applied += 1
            else:
                tally.lost += 1
        for name in w.names():  # the server is the truth from here on
            obj = on_server.get(name)
            w.acked[name] = obj.get("data") if obj is not None else ABSENT
            if obj is None:
                w.objects.pop(name, None)
            else:
                w.objects[name] = obj
        w.in_flight = None
    assert tally.lost == 0 and tally.half_applied == 0, tally


def test_acknowledged_writes_survive_sigkill(server: Server) -> None:
    rng = random.Random(SEED)
    writers = [Writer(i, random.Random(rng.random())) for i in range(WRITERS)]
    tally = Tally()
    client = server.start()
    install_crd(client, WIDGETS)
    client.create(_widget("kept", 1))
    widget_size = 1
    for cycle in range(KILLS):
        stop = threading.Event()
        threads = [
            threading.Thread(target=w.run, args=(client.clone(), stop), daemon=True)
            for w in writers
        ]
        for t in threads:
            t.start()
        # the kill comes after a random number of writes, while every writer has one in flight
        target = sum(w.writes for w in writers) + rng.randint(10, 200)
        wait_for(partial(_written, writers, target), timeout=30)
        server.kill()
        stop.set()
        tally.kills += 1
        for t in threads:
            t.join(15)
            assert not t.is_alive(), "a writer did not notice the server went away"
        max_seen = max(w.max_rv for w in writers)
        old_rv = client_rv = max_seen  # a version from before the restart
        client.close()

        client = server.start()
        _check_after_restart(client, writers, tally)
        listed = client.list(kinds.ConfigMap, NS)
        client_rv = int(listed["metadata"]["resourceVersion"])
        assert client_rv >= max_seen
        # the CRD is served again and its object kept (then changed, to be checked next time)
        widget = client.get(WIDGET, "kept", NS)
        assert widget["spec"] == {"size": widget_size}
        widget_size += 1
        widget["spec"] = {"size": widget_size}
        updated = client.update(widget)
        assert int(updated["metadata"]["resourceVersion"]) > max_seen
        # a watch from before the restart: 410 Expired; from now: the next events
        older = rng.randint(1, old_rv - 1)
        with (
            pytest.raises(Gone),
            client.watch(kinds.ConfigMap, NS, resource_version=str(older)) as stale,
        ):
            next(iter(stale))
        with client.watch(
            kinds.ConfigMap, NS, resource_version=str(client_rv), allow_bookmarks=False
        ) as live:
            client.create(_configmap(f"probe-{cycle}"))
            event = next(iter(live))
            assert (event.type, event.object["metadata"]["name"]) == ("ADDED", f"probe-{cycle}")
    tally.acknowledged = sum(w.writes for w in writers)
    client.close()
    print(
        f"\ndata-dir kill test: {tally.kills} kills, {tally.acknowledged} acknowledged writes, "
        f"{tally.lost} lost, {tally.half_applied} half-applied, "
        f"{tally.in_flight_applied} unacknowledged writes found complete"
    )
    assert tally.acknowledged > 0


def test_a_second_server_on_the_same_directory_is_refused(
    server: Server, fork_server: ForkServer, tmp_path: Path
) -> None:
    server.start().close()
    log = tmp_path / "second.log"
    second = _cluster(
        fork_server,
        log,
        *("--port", "0", "--no-auth", "--data-dir", str(server.data_dir)),
        *("--kubeconfig", str(tmp_path / "other")),
    )
    try:
        code = second.wait(30)
    finally:
        _stop(second)
    assert code == 1
    assert "in use by another process" in log.read_text(errors="replace")
    assert not (tmp_path / "other").exists()


# ------------------------------------------------------------- in-process restarts


def test_a_restarted_cluster_serves_custom_resources_and_finishes_a_crd_deletion(
    tmp_path: Path,
) -> None:
    with EmbeddedCluster(data_dir=tmp_path, kubelet=False) as cluster, cluster.client() as client:
        install_crd(client, WIDGETS)
        client.create(_widget("held", 1, ("example.com/hold",)))
        client.delete(CRD, "widgets.example.com")
        wait_for(lambda: client.get(WIDGET, "held", NS)["metadata"].get("deletionTimestamp"))
    with EmbeddedCluster(data_dir=tmp_path, kubelet=False) as cluster, cluster.client() as client:
        held = client.get(WIDGET, "held", NS)  # still served while the CRD is terminating
        with pytest.raises(MethodNotAllowed):
            client.create(_widget("new", 2))
        held["metadata"]["finalizers"] = []
        client.update(held)

        def crd_gone() -> bool:
            try:
                client.get(CRD, "widgets.example.com")
            except NotFound:
                return True
            return False

        wait_for(crd_gone, message="the CRD's deletion to finish")


def test_a_restarted_cluster_collects_what_its_garbage_collector_missed(tmp_path: Path) -> None:
    # not started: no collector; an fsync per write (data_sync) changes nothing else
    cluster = EmbeddedCluster(data_dir=tmp_path, kubelet=False, data_sync="FULL")
    ns = cluster.resource("", "namespaces")
    cms = cluster.resource("", "configmaps")
    cluster.store.create(ns, None, {"metadata": {"name": NS}})
    owner = cluster.store.create(cms, NS, {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.meta["uid"]}
    cluster.store.create(cms, NS, {"metadata": {"name": "dependent", "ownerReferences": [ref]}})
    cluster.store.delete(cms, NS, "owner")
    cluster.stop()
    with EmbeddedCluster(data_dir=tmp_path, kubelet=False) as restarted:
        wait_for(
            lambda: restarted.store.try_get(cms, NS, "dependent") is None,
            message="the dependent of a deleted owner to be collected",
        )


def test_a_restarted_cluster_runs_the_pods_it_holds(tmp_path: Path) -> None:
    cluster = EmbeddedCluster(data_dir=tmp_path)  # not started: no kubelet
    pods = cluster.resource("", "pods")
    cluster.store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": NS}})
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    cluster.store.create(pods, NS, pod)
    cluster.stop()
    with EmbeddedCluster(data_dir=tmp_path, pod_ready_after=0) as restarted:
        wait_for(
            lambda: (
                (restarted.store.get(pods, NS, "p").obj.get("status") or {}).get("phase")
                == "Running"
            ),
            message="the restored pod to run",
        )


def test_a_watch_from_before_a_restart_expires_and_the_client_goes_on(tmp_path: Path) -> None:
    """410 Expired for a version older than the restart, a watch from the current one; the
    client that got the 410 keeps working (its connection did not go back to the pool with
    the rest of the ended stream)."""
    with EmbeddedCluster(data_dir=tmp_path, kubelet=False) as cluster, cluster.client() as client:
        first = client.create(_configmap("a"))
        client.create(_configmap("b"))
    with EmbeddedCluster(data_dir=tmp_path, kubelet=False) as cluster, cluster.client() as client:
        current = client.list(kinds.ConfigMap, NS)["metadata"]["resourceVersion"]
        old = first["metadata"]["resourceVersion"]
        with (
            pytest.raises(Gone, match=f"too old resource version: {old}"),
            client.watch(kinds.ConfigMap, NS, resource_version=old) as stale,
        ):
            next(iter(stale))
        with client.watch(
            kinds.ConfigMap, NS, resource_version=current, allow_bookmarks=False
        ) as live:
            created = client.create(_configmap("c"))
            event = next(iter(live))
        assert (event.type, event.object["metadata"]["name"]) == ("ADDED", "c")
        assert int(created["metadata"]["resourceVersion"]) == int(current) + 1
