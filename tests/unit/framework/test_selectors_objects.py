"""``selectors.objects_selecting``: the workloads whose selector could adopt an object."""

from __future__ import annotations

from kube_runtime.selectors import objects_selecting


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
    assert objects_selecting([_set("all", {})], {}) == []
    assert [s["metadata"] for s in objects_selecting([_set("all", {})], {"x": "1"})] == [
        {"name": "all"}
    ]
