"""CloneSet update decisions: how many pods maxUnavailable lets update, priority and scatter
order, in-place feasibility, lifecycle hooks, spec validation."""

from __future__ import annotations

import pytest

from controllers.cloneset import core
from controllers.cloneset.pod_control import CloneSetPodControl
from controllers.cloneset.scale import ExpectationDiffs
from controllers.cloneset.update import (
    limit_update_indexes,
    priority_sort,
    scatter_sort,
    sort_update_indexes,
)
from kube_runtime.workloads import lifecycle
from kube_runtime.workloads.inplace import calculate_in_place_spec, check_update_completed


def pod(labels=None, ready=True, state=None):
    labels = dict(labels or {})
    if state:
        labels[lifecycle.LIFECYCLE_STATE_LABEL] = state
    return {"metadata": {"name": "p", "labels": labels}, "ready": ready}


def is_ready(p):
    return p["ready"]


@pytest.mark.parametrize(
    ("ready", "update_num", "max_unavailable", "want"),
    [
        ([True] * 5, 5, 1, [0]),  # one at a time
        ([True] * 5, 5, 2, [0, 1]),
        ([True] * 5, 2, 5, [0, 1]),  # never more than update_num
        ([False, True, True, True, True], 5, 1, [0]),  # a not-ready pod uses the budget...
        ([False, True, True, True, True], 5, 2, [0, 1]),  # ...but updating it costs nothing
        ([True, True, True, True, False], 5, 1, []),  # someone else is already unavailable
        ([True] * 5, -2, 1, [0]),  # rollback obeys the same bound
    ],
)
def test_limit_update_indexes(ready, update_num, max_unavailable, want):
    pods = [pod(ready=r) for r in ready]
    diffs = ExpectationDiffs(update_num=update_num, update_max_unavailable=max_unavailable)
    assert limit_update_indexes(diffs, list(range(len(pods))), pods, is_ready) == want


def test_weight_priority():
    pods = [pod({"k": "low"}), pod({"k": "high"}), pod({"k": "none"}), pod({"k": "high"})]
    strategy = {
        "weightPriority": [
            {"weight": 50, "matchSelector": {"matchLabels": {"k": "high"}}},
            {"weight": 10, "matchSelector": {"matchLabels": {"k": "low"}}},
        ]
    }
    # ties (the two "high") put the higher index first, as upstream
    assert priority_sort(strategy, pods, [0, 1, 2, 3]) == [3, 1, 0, 2]


def test_order_priority():
    pods = [pod({"o": "v-1"}), pod({"o": "v-10"}), pod({}), pod({"o": "v-3"}), pod({"p": "9"})]
    strategy = {"orderPriority": [{"orderedKey": "o"}, {"orderedKey": "p"}]}
    # no key (level -1) first, then the first key by bigger number, then the second key
    assert priority_sort(strategy, pods, [0, 1, 2, 3, 4]) == [2, 1, 3, 0, 4]


def test_scatter_spreads_matching_pods():
    pods = [pod({"zone": "a"})] * 3 + [pod({"zone": "b"})] * 3
    got = scatter_sort([{"key": "zone", "value": "a"}], pods, [0, 1, 2, 3, 4, 5])
    assert got == [0, 3, 4, 1, 5, 2]
    assert sorted(got) == list(range(6))


def test_scatter_leaves_few_matches_alone():
    pods = [pod({"zone": "a"}), pod({"zone": "b"}), pod({"zone": "b"})]
    assert scatter_sort([{"key": "zone", "value": "a"}], pods, [0, 1, 2]) == [0, 1, 2]


def test_preparing_update_first():
    pods = [
        {
            "metadata": {"name": f"p{i}", "labels": {lifecycle.LIFECYCLE_STATE_LABEL: s}},
            "spec": {"nodeName": "n"},
            "status": {"phase": "Running"},
        }
        for i, s in enumerate(["Normal", "PreparingUpdate", "Normal"])
    ]
    assert sort_update_indexes({}, pods, [0, 1, 2])[0] == 1


def revision(name, image="nginx:1", labels=None, env=None, extra_container=False):
    container = {"name": "c", "image": image}
    if env:
        container["env"] = env
    containers = [container] + ([{"name": "d", "image": "x"}] if extra_container else [])
    return {
        "metadata": {"name": name},
        "data": {
            "spec": {
                "template": {
                    "$patch": "replace",
                    "metadata": {"labels": labels or {"app": "a"}},
                    "spec": {"containers": containers},
                }
            }
        },
    }


def test_in_place_feasibility():
    old = revision("r1")
    spec = calculate_in_place_spec(old, revision("r2", image="nginx:2"))
    assert spec is not None and spec.container_images == {"c": "nginx:2"} and spec.revision == "r2"
    labels = calculate_in_place_spec(old, revision("r3", labels={"app": "a", "x": "1"}))
    assert labels is not None and labels.labels == {"x": "1"} and not labels.container_images
    assert calculate_in_place_spec(old, revision("r4", env=[{"name": "A", "value": "1"}])) is None
    assert calculate_in_place_spec(old, revision("r5", extra_container=True)) is None
    assert calculate_in_place_spec(None, revision("r2", image="nginx:2")) is None
    assert calculate_in_place_spec(old, revision("r6")) is None  # nothing to change


def test_update_completed_when_image_ids_change():
    state = '{"revision": "r2", "lastContainerStatuses": {"c": {"imageID": "old"}}}'
    p = {
        "metadata": {
            "labels": {"controller-revision-hash": "r2"},
            "annotations": {"apps.kruise.io/inplace-update-state": state},
        },
        "status": {"containerStatuses": [{"name": "c", "imageID": "old"}]},
    }
    assert check_update_completed(p) is not None
    p["status"]["containerStatuses"][0]["imageID"] = "new"
    assert check_update_completed(p) is None
    assert check_update_completed({"metadata": {}}) is None


def test_lifecycle_hooks():
    hook = {"labelsHandler": {"hold": "true"}, "finalizersHandler": ["example.io/f"]}
    bare = {"metadata": {"labels": {}}}
    labelled = {"metadata": {"labels": {"hold": "true"}}}
    both = {"metadata": {"labels": {"hold": "true"}, "finalizers": ["example.io/f"]}}
    assert not lifecycle.is_pod_hooked(hook, bare)
    assert lifecycle.is_pod_hooked(hook, labelled)
    assert not lifecycle.is_pod_all_hooked(hook, labelled)
    assert lifecycle.is_pod_all_hooked(hook, both)
    assert not lifecycle.is_pod_hooked(None, both)


class FakeClient:
    def __init__(self):
        self.patches = []

    def patch(self, kind, name, patch, namespace=None, patch_type="merge"):
        self.patches.append(patch)
        return {"metadata": {"name": name, "labels": patch["metadata"]["labels"]}}


def test_lifecycle_transition_written_once():
    client = FakeClient()
    control = CloneSetPodControl(client, recorder=None)
    p = {"metadata": {"name": "p", "namespace": "ns", "labels": {}}}
    written, got = control.update_pod_lifecycle(p, lifecycle.PREPARING_DELETE)
    assert written and lifecycle.get_state(got) == lifecycle.PREPARING_DELETE
    assert control.update_pod_lifecycle(got, lifecycle.PREPARING_DELETE) == (False, got)
    assert len(client.patches) == 1


def make_set(**strategy):
    return {
        "metadata": {"name": "cs"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}},
            "updateStrategy": strategy,
        },
    }


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        ({"maxUnavailable": "lots"}, "maxUnavailable"),
        ({"partition": "x%"}, "partition"),
        ({"type": "InPlaceOnly", "maxSurge": 1}, "InPlaceOnly"),
        ({"type": "Rolling"}, "type"),
        ({"maxUnavailable": 0}, "at least 1"),
    ],
)
def test_invalid_specs(strategy, message):
    with pytest.raises(core.InvalidSpecError, match=message):
        core.validate(make_set(**strategy))


def test_invalid_selector():
    cs = make_set()
    cs["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(core.InvalidSpecError, match="template"):
        core.validate(cs)
    cs["spec"]["selector"] = {}
    with pytest.raises(core.InvalidSpecError, match="selects nothing or everything"):
        core.validate(cs)


def test_valid_spec_and_defaults():
    cs = make_set(partition="50%", maxSurge="25%")
    core.validate(cs)
    assert core.partition(cs) == 2
    assert core.max_surge(cs) == 1
    assert core.max_unavailable(cs, 1) == 0  # 20% of 4 rounded down when surging
    assert core.max_unavailable(cs, 0) == 1  # rounded up otherwise
