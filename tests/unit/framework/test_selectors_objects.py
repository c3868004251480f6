"""``selectors.objects_selecting`` and ``handlers.SelectingOwners``: the workloads whose selector
could adopt an object."""

from __future__ import annotations

from kube_runtime.client.fake import FakeClient
from kube_runtime.handlers import SelectingOwners
from kube_runtime.kinds import ReplicaSet
from kube_runtime.reconcile import Request
from kube_runtime.selectors import label_selector_from_dict, objects_selecting


def _set(name: str, selector: object) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"selector": selector}}


def test_matching_sets_in_order_and_bad_or_missing_selectors_match_nothing() -> None:
    sets = [
        _set("a", {"matchLabels": {"app": "web"}}),
        _set("b", {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}),
        {"metadata": {"name": "c"}, "spec": {}},
        _set("d", {"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
        _set("e", {"matchLabels": {"app": "db"}}),
    ]
    found = objects_selecting(sets, {"app": "web"})
    assert [s["metadata"]["name"] for s in found] == ["a", "d"]  # type: ignore[index]


def test_an_object_without_labels_is_selected_by_nothing() -> None:
    assert objects_selecting([_set("a", {"matchLabels": {"x": "1"}})], {}) == []


def test_an_empty_selector_selects_nothing_as_upstream_listers() -> None:
    # upstream GetPodStatefulSets / GetPodReplicaSets: "a nil or empty selector ... should
    # match nothing, not everything"
    assert objects_selecting([_set("all", {})], {"x": "1"}) == []
    assert objects_selecting([_set("none", None)], {"x": "1"}) == []


def test_selector_of_supplies_the_parsed_selectors() -> None:
    parsed = {"a": label_selector_from_dict({"matchLabels": {"x": "1"}}), "b": None}
    sets = [_set("a", "not parsed here"), _set("b", {"matchLabels": {"x": "1"}})]
    found = objects_selecting(sets, {"x": "1"}, selector_of=lambda s: parsed[s["metadata"]["name"]])
    assert [s["metadata"]["name"] for s in found] == ["a"]


def test_selecting_owners_maps_orphans_only() -> None:
    client = FakeClient()
    for name, labels in (("web", {"app": "web"}), ("db", {"app": "db"})):
        client.create(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": name, "namespace": "ns"},
                "spec": {"selector": {"matchLabels": labels}},
            }
        )
    owners = SelectingOwners(client, ReplicaSet)
    pod = {"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}}}
    assert owners(pod) == [Request("web", "ns")]
    owned = {
        "metadata": {
            **pod["metadata"],
            "ownerReferences": [{"uid": "u", "controller": True, "kind": "ReplicaSet"}],
        }
    }
    assert owners(owned) == []
    assert owners.selecting(owned) == [Request("web", "ns")]
    assert owners({"metadata": {"name": "q", "namespace": "other", "labels": {"app": "web"}}}) == []
