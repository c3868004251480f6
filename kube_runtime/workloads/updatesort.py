"""Ordering the pods of a workload for an update (openkruise ``pkg/util/updatesort``), shared
by the CloneSet and the enhanced StatefulSet (``unorderedUpdate.priorityStrategy``).

A priority strategy is ``{"weightPriority": [{"weight": w, "matchSelector": selector}],
"orderPriority": [{"orderedKey": key}]}`` (the first non-empty list decides).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj
from kube_runtime.selectors import label_selector_from_dict

__all__ = ["priority_sort"]


def _int_suffix(value: str) -> int:
    digits = ""
    for ch in reversed(value):
        if not ch.isdigit():
            break
        digits = ch + digits
    return int(digits) if digits else 0


def priority_sort(strategy: Obj | None, pods: Sequence[Obj], indexes: list[int]) -> list[int]:
    """Upstream ``prioritySort``: by the summed weight of matching ``weightPriority`` terms
    (higher first), or else by ``orderPriority`` (earlier key first, then bigger trailing
    number first); ties put the higher pod index first, as upstream."""
    weights = list((strategy or {}).get("weightPriority") or ())
    orders = list((strategy or {}).get("orderPriority") or ())
    if not weights and not orders:
        return indexes

    def weight(labels: Mapping[str, str]) -> int:
        total = 0
        for term in weights:
            try:
                selector = label_selector_from_dict(term.get("matchSelector") or {})
            except ValueError:
                continue
            if selector.matches(labels):
                total += int(term.get("weight") or 0)
        return total

    def order(labels: Mapping[str, str]) -> tuple[int, int]:
        for i, term in enumerate(orders):
            key = term.get("orderedKey")
            if key in labels:
                return i, _int_suffix(labels[key])
        return -1, 0

    labels = {i: meta.labels(pods[i]) for i in indexes}  # once per pod, not per comparison

    def compare(i: int, j: int) -> int:
        li, lj = labels[i], labels[j]
        if weights:
            wi, wj = weight(li), weight(lj)
            if wi != wj:
                return -1 if wi > wj else 1
        else:
            (level_i, order_i), (level_j, order_j) = order(li), order(lj)
            if level_i != level_j:
                return -1 if level_i < level_j else 1
            if order_i != order_j:
                return -1 if order_i > order_j else 1
        return -1 if i > j else (1 if i < j else 0)

    return sorted(indexes, key=functools.cmp_to_key(compare))
