"""The watch/list predicate of ``reads.matcher`` answers what the generic selector match
(``object_fields`` of every object) answers, on its shortcut for metadata-only field
selectors too, over random objects and selectors."""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urlencode

import pytest

from kube_runtime import selectors
from kube_runtime.envtest.server.http import Request
from kube_runtime.envtest.server.reads import matcher
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.routing import Route

REGISTRY = Registry()
NAMES = ["a", "b", "lease-1", ""]
LABELS = [{}, {"app": "web"}, {"app": "db", "tier": "x"}, None]


def _route(plural: str) -> Route:
    info = REGISTRY.by_key("coordination.k8s.io" if plural == "leases" else "", plural)
    assert info is not None
    return Route(info, info.version, "ns", None, "", False)


def _generic(label_text: str, field_text: str, obj: dict[str, Any]) -> bool:
    if label_text:
        labels = selectors.parse_label_selector(label_text)
        if not labels.matches(obj["metadata"].get("labels")):
            return False
    if field_text:
        fields = selectors.parse_field_selector(field_text)
        return fields.matches(selectors.object_fields(obj))
    return True


def _random_field_selector(rng: random.Random) -> str:
    terms = []
    for _ in range(rng.randint(1, 3)):
        field = rng.choice(["metadata.name", "metadata.namespace", "metadata.name"])
        terms.append(f"{field}{rng.choice(['=', '==', '!='])}{rng.choice([*NAMES, 'ns'])}")
    return ",".join(terms)


def _random_object(rng: random.Random, kind: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if rng.random() < 0.9:
        meta["name"] = rng.choice(NAMES)
    if rng.random() < 0.3:
        meta["name"] = rng.choice([None, 3])  # not a string: the field is ""
    if rng.random() < 0.8:
        meta["namespace"] = rng.choice(["ns", "other", ""])
    labels = rng.choice(LABELS)
    if labels is not None:
        meta["labels"] = labels
    return {"kind": kind, "metadata": meta}


@pytest.mark.parametrize("seed", range(5))
def test_metadata_field_selectors_match_as_the_generic_predicate(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        plural, kind = rng.choice([("leases", "Lease"), ("pods", "Pod"), ("secrets", "Secret")])
        field_text = _random_field_selector(rng)
        label_text = rng.choice(["", "", "app=web", "app in (web,db)", "!tier"])
        query = urlencode({"fieldSelector": field_text, "labelSelector": label_text})
        request = Request("GET", f"/x?{query}", {}, b"")
        matches = matcher(request, _route(plural))
        assert matches is not None
        for _ in range(10):
            obj = _random_object(rng, kind)
            assert matches(obj) == _generic(label_text, field_text, obj), (
                field_text,
                label_text,
                obj,
            )


def test_a_single_name_term_matches_that_name_only() -> None:
    request = Request("GET", "/x?fieldSelector=metadata.name%3Dlease-1", {}, b"")
    matches = matcher(request, _route("leases"))
    assert matches is not None
    assert matches({"metadata": {"name": "lease-1"}})
    assert not matches({"metadata": {"name": "lease-2"}})
    assert not matches({"metadata": {}})
