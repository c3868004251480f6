"""One view pattern for both sets' specs (kube_runtime.workloads.specview): built by ``of``,
kept per set generation by the reconciler, the same error for a spec that cannot be acted on."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controllers.cloneset.core import SCALING_EXCLUDE_PREPARING_DELETE_LABEL, CloneSetView
from controllers.statefulset.spec import StatefulSetView
from kube_runtime import meta
from kube_runtime.workloads.specview import InvalidSpecError, SpecView, SpecViews
from tests.support.cloneset_harness import Harness as CloneSetHarness
from tests.support.cloneset_harness import make_cs
from tests.support.statefulset_harness import make_set
from tests.support.statefulset_reconciler import Setup


def _with(obj: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"].update(metadata)
    return obj


def test_views_are_built_once_per_uid_generation_and_options() -> None:
    built: list[tuple[str, bool]] = []

    def build(obj: Any, *, teardown: bool = False) -> StatefulSetView:
        built.append((meta.name(obj), teardown))
        return StatefulSetView.of(obj, teardown=teardown)

    views = SpecViews(build)
    sts = _with(make_set(3), uid="u1", generation=1)
    first = views.get(sts)
    assert views.get(copy.deepcopy(sts)) is first  # holds no object: served as is
    views.get(sts, teardown=True)
    views.get(_with(sts, generation=2))
    views.get(_with(sts, uid="u2"))
    assert len(built) == views.builds == 4
    bare = make_set(3)
    bare["metadata"].pop("generation", None)
    views.get(bare)
    views.get(bare)  # no generation: read every time
    assert views.builds == 6


def test_an_invalid_spec_is_the_same_error_for_both_kinds_and_not_kept() -> None:
    sts = _with(make_set(3), uid="u1", generation=1)
    sts["spec"]["replicas"] = -1
    cs = _with(make_cs(2), generation=1)
    cs["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    for view_class, obj in ((StatefulSetView, sts), (CloneSetView, cs)):
        assert issubclass(view_class, SpecView)
        views = SpecViews(view_class.of)
        for _ in range(2):
            with pytest.raises(InvalidSpecError):
                views.get(obj)
        assert views.builds == 2


def test_a_kept_cloneset_view_is_rebound_to_the_current_object() -> None:
    views = SpecViews(CloneSetView.of)
    cs = _with(make_cs(4, updateStrategy={"partition": "50%"}), generation=1)
    first = views.get(cs)
    assert first.partition == 2 and not first.scaling_exclude_preparing_delete
    labelled = _with(cs, labels={SCALING_EXCLUDE_PREPARING_DELETE_LABEL: "true"})
    second = views.get(labelled)
    assert views.builds == 1
    assert second.obj is labelled and first.obj is cs
    assert second.spec is first.spec and second.partition == 2
    assert second.scaling_exclude_preparing_delete  # metadata read from the current object


def test_each_reconciler_reads_a_spec_once_per_generation() -> None:
    s = Setup(make_set(2, policy="Parallel"))
    for _ in range(3):
        s.reconcile()
    assert s.reconciler.spec_views.builds == 1

    h = CloneSetHarness(make_cs(2))
    for _ in range(3):
        h.reconcile()
    assert h.reconciler.spec_views.builds == 1
