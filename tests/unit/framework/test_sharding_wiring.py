"""Sharding's wiring: the manager option, the builder's gate and cache selectors, the CLI flag."""

from __future__ import annotations

from typing import Any

import pytest

from kube_runtime import Manager, kinds
from kube_runtime.builder import Builder
from kube_runtime.cli import main
from kube_runtime.client.fake import FakeClient
from kube_runtime.reconcile import Request
from kube_runtime.sharding import ShardGate, Sharding, shard_label


def manager(**kw: Any) -> Manager:
    return Manager(FakeClient(), metrics_bind_address="0", **kw)


def test_off_by_default() -> None:
    m = manager()
    assert m.sharding is None and m.sharder is None
    Builder(m).for_(kinds.StatefulSet).owns(kinds.Pod).complete(lambda r: None)
    assert m.cache.label_selector(kinds.StatefulSet) is None


def test_sharded_manager_narrows_for_and_owns_kinds_and_gates_the_reconciler() -> None:
    m = manager(sharding=Sharding("ring"), identity="Pod_Name-0")
    assert m.identity == "pod-name-0"  # a shard id: a label value and a Lease name
    assert m.sharder is not None and m.sharding is not None
    controller = (
        Builder(m)
        .for_(kinds.StatefulSet)
        .owns(kinds.Pod)
        .watches(kinds.PersistentVolumeClaim, lambda obj: [])
        .complete(lambda request: None)
    )
    selector = f"{shard_label('ring')}=pod-name-0"
    assert m.cache.label_selector(kinds.StatefulSet) == selector
    assert m.cache.label_selector(kinds.Pod) == selector
    assert m.cache.label_selector(kinds.PersistentVolumeClaim) is None  # watches: whole
    assert isinstance(controller.reconciler, ShardGate)
    assert [rk.primary for rk in m.sharding.ring_kinds()] == [kinds.StatefulSet]
    assert m.sharding.ring_kinds()[0].owned == (kinds.Pod,)


def test_opting_a_controller_out() -> None:
    m = manager(sharding=Sharding("ring"), identity="a")
    controller = (
        Builder(m).for_(kinds.ConfigMap).with_options(sharded=False).complete(lambda request: None)
    )
    assert not isinstance(controller.reconciler, ShardGate)
    assert m.cache.label_selector(kinds.ConfigMap) is None


def test_default_identity_is_a_short_shard_id() -> None:
    m = manager(sharding=Sharding("ring", run_sharder=False))
    assert m.sharder is None
    assert len(m.identity) <= 63 and m.identity == m.identity.lower()


def test_leader_election_and_sharding_exclude_each_other() -> None:
    with pytest.raises(ValueError, match="exclude each other"):
        manager(sharding=Sharding("ring"), leader_election=True, leader_election_id="x")


def test_selector_cannot_change_under_a_running_informer() -> None:
    m = manager()
    m.cache.informer_for(kinds.Pod)
    with pytest.raises(ValueError, match="already exists"):
        m.cache.set_label_selector(kinds.Pod, "a=b")


def test_sharding_options_are_checked() -> None:
    with pytest.raises(ValueError):
        Sharding("Not_A_Name")
    with pytest.raises(ValueError):
        Sharding("ring", min_shards=0)
    with pytest.raises(ValueError, match="not neither"):
        Sharding("ring", run_shard=False, run_sharder=False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sharder-only"], "need --shards"),
        (["--no-sharder"], "need --shards"),
        (["--shards", "2", "--sharder-only", "--no-sharder"], "exclude each other"),
    ],
)
def test_cli_checks_the_sharder_flags(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "statefulset", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_cli_refuses_a_bad_shards_value(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "statefulset", "--shards", value]) == 2
    assert "--shards takes a number of replicas or 'auto'" in capsys.readouterr().err


def test_gate_passes_requests_of_unknown_objects() -> None:
    calls: list[Request] = []
    gate = ShardGate(
        type("R", (), {"reconcile": lambda self, r: calls.append(r)})(),
        kind=kinds.StatefulSet,
        owned=(),
        reader=FakeClient(),
        writer=FakeClient(),
        ring="ring",
        shard="a",
        seen=lambda kind, rv: True,
    )
    gate.reconcile(Request("gone", "ns"))
    assert calls == [Request("gone", "ns")]


def test_a_shard_lease_refused_again_and_again_is_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging
    import threading
    from types import SimpleNamespace

    from kube_runtime.client.errors import error_from_status

    stop = threading.Event()
    attempts: list[int] = []

    class Refusing:
        def create(self, obj: Any) -> None:
            attempts.append(1)
            if len(attempts) >= 4:
                stop.set()
            raise error_from_status(
                {"code": 403, "reason": "Forbidden", "message": "leases is forbidden"}
            )

    stopped: list[bool] = []
    elector = SimpleNamespace(
        _lock=SimpleNamespace(client=Refusing()), _on_stopped_leading=lambda: stopped.append(True)
    )
    m = manager(sharding=Sharding("ring", run_sharder=False), identity="a", retry_period=0.001)
    with caplog.at_level(logging.DEBUG, logger="kube_runtime.manager"):
        m._run_elector(elector, stop)  # type: ignore[arg-type]
    assert len(attempts) == 4 and stopped == [True]
    levels = [r.levelno for r in caplog.records if "shard Lease" in r.getMessage()]
    assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG, logging.DEBUG]
