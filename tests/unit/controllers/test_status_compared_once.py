"""Each controller compares the status it computed with the recorded one once per sync (issue
31 item 9): the StatefulSet's held-back write is not compared again when the sync settles, the
CloneSet's invalid-spec report compares once before its event and write."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from controllers.cloneset import control as cloneset_control
from controllers.cloneset import status as cloneset_status
from controllers.statefulset import control as sts_control
from controllers.statefulset.controller import StatefulSetReconciler
from controllers.statefulset.status import ApiStatusUpdater, status_changed
from kube_runtime.clock import use
from tests.support.cloneset_harness import Harness as CloneSetHarness
from tests.support.cloneset_harness import make_cs
from tests.support.statefulset_harness import make_set
from tests.support.statefulset_reconciler import Setup

Compare = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def _counting(compare: Compare, counts: list[bool]) -> Compare:
    def counted(obj: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
        changed = compare(obj, status)
        counts.append(changed)
        return changed

    return counted


@pytest.fixture
def sts_compares(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The StatefulSet's comparisons (the updater's ``changed``, which the coalescing
    writer's policy and the updater's ``update_if_changed`` both call)."""
    counts: list[bool] = []
    counted = _counting(status_changed, counts)
    monkeypatch.setattr(ApiStatusUpdater, "changed", staticmethod(counted))
    # where the control compared by itself before
    monkeypatch.setattr(sts_control, "status_changed", counted, raising=False)
    return counts


def _sync(s: Setup, counts: list[bool]) -> list[bool]:
    counts.clear()
    s.reconcile()
    return list(counts)


def test_a_statefulset_sync_compares_its_status_once(sts_compares: list[bool]) -> None:
    s = Setup(make_set(3, policy="Parallel"))
    with use(s.clock):
        s.reconciler = StatefulSetReconciler(
            s.fake, s.reader, s.recorder, kind=s.kind, status_window=1.0
        )
    # the first sync's status is held back: compared when held, not again when settled
    assert _sync(s, sts_compares) == [True]
    assert s.reconciler.status_writer.pending(s.sts) is not None
    for name in ("web-0", "web-1", "web-2"):
        s.ready(name)
    assert _sync(s, sts_compares) == [True]  # converged: written at once
    assert s.reconciler.status_writer.pending(s.sts) is None
    assert _sync(s, sts_compares) == [False]  # nothing changed, nothing pending


def test_a_statefulset_sync_without_coalescing_compares_once(sts_compares: list[bool]) -> None:
    s = Setup(make_set(2, policy="Parallel"))
    assert _sync(s, sts_compares) == [True]
    s.ready("web-0")
    s.ready("web-1")
    assert _sync(s, sts_compares) == [True]
    assert _sync(s, sts_compares) == [False]


def test_a_cloneset_sync_compares_its_status_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counts: list[bool] = []
    counted = _counting(cloneset_status.status_changed, counts)
    monkeypatch.setattr(cloneset_status, "status_changed", counted)
    monkeypatch.setattr(cloneset_control, "status_changed", counted)
    cs = make_cs(2)
    cs["spec"]["updateStrategy"] = {"type": "Rolling"}
    h = CloneSetHarness(cs)
    h.reconcile()  # invalid: reported (event and condition) after one comparison
    assert counts == [True] and h.recorder.reasons() == ["InvalidSpec"]
    counts.clear()
    h.reconcile()  # reported already
    assert counts == [False] and h.recorder.reasons() == ["InvalidSpec"]

    counts.clear()
    h = CloneSetHarness(make_cs(2))
    h.reconcile()
    assert counts == [True]
