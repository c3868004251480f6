"""Predicates: which events pass, and how they combine."""

from __future__ import annotations

import pytest

from kube_runtime import predicates as p


def obj(gen: int = 1, rv: str = "1", labels: dict | None = None, ann: dict | None = None) -> dict:
    meta: dict = {"name": "a", "namespace": "ns", "generation": gen, "resourceVersion": rv}
    if labels is not None:
        meta["labels"] = labels
    if ann is not None:
        meta["annotations"] = ann
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("pred", "old", "new", "passes"),
    [
        (p.GenerationChanged(), obj(gen=1), obj(gen=2), True),
        (p.GenerationChanged(), obj(gen=1, rv="1"), obj(gen=1, rv="2"), False),
        (p.ResourceVersionChanged(), obj(rv="1"), obj(rv="2"), True),
        (p.ResourceVersionChanged(), obj(rv="1"), obj(rv="1"), False),
        (p.LabelsChanged(), obj(labels={"a": "1"}), obj(labels={"a": "2"}), True),
        (p.LabelsChanged(), obj(labels=None), obj(labels={}), False),
        (p.LabelsChanged(), obj(labels={"a": "1"}), obj(labels={"a": "1"}, rv="9"), False),
        (p.AnnotationsChanged(), obj(ann={"x": "1"}), obj(ann={}), True),
        (p.AnnotationsChanged(), obj(ann={"x": "1"}), obj(ann={"x": "1"}, gen=3), False),
    ],
)
def test_changed_predicates_filter_updates(pred, old, new, passes) -> None:
    assert pred.update(old, new) is passes


@pytest.mark.parametrize(
    "pred",
    [p.GenerationChanged(), p.ResourceVersionChanged(), p.LabelsChanged(), p.AnnotationsChanged()],
)
def test_changed_predicates_let_create_delete_generic_through(pred) -> None:
    assert pred.create(obj()) and pred.delete(obj()) and pred.generic(obj())


@pytest.mark.parametrize(
    "pred", [p.GenerationChanged(), p.ResourceVersionChanged(), p.LabelsChanged()]
)
def test_update_with_a_missing_object_is_dropped(pred) -> None:
    assert not pred.update({}, obj())


def test_combinators() -> None:
    gen, labels = p.GenerationChanged(), p.LabelsChanged()
    old, spec_change = obj(gen=1, labels={"a": "1"}), obj(gen=2, labels={"a": "1"})
    assert (gen | labels).update(old, spec_change)
    assert not (gen & labels).update(old, spec_change)
    assert not (~gen).update(old, spec_change)
    assert p.and_().update(old, old) and not p.or_().update(old, old)
    assert p.not_(p.or_(gen, labels)).update(old, obj(gen=1, labels={"a": "1"}, rv="7"))


def test_funcs_and_label_selector() -> None:
    only_named_b = p.Funcs(create=lambda o: o["metadata"]["name"] == "b")
    assert not only_named_b.create(obj()) and only_named_b.update(obj(), obj())
    sel = p.label_selector({"app": "web"})
    assert sel.create(obj(labels={"app": "web"})) and not sel.create(obj(labels={"app": "db"}))
    # an update that moves the object out of the selector still passes (old matched)
    assert sel.update(obj(labels={"app": "web"}), obj(labels={"app": "db"}))
    assert p.label_selector("tier in (a,b)").generic(obj(labels={"tier": "b"}))
