"""Event filters (controller-runtime's ``pkg/predicate``).

A predicate decides, per event, whether it should reach the handler (and so the queue). Each of
``create(obj)``, ``update(old, new)``, ``delete(obj)`` and ``generic(obj)`` returns True to let
the event through. Predicates combine with ``&``, ``|`` and ``~`` (or :func:`and_`, :func:`or_`,
:func:`not_`). Objects are the cache's shared dicts: read them, never change them.

The stock predicates follow controller-runtime: the "changed" ones filter only updates and let
creates, deletes and generic events through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kube_runtime.meta import ObjView as Obj

__all__ = [
    "AnnotationsChanged",
    "Funcs",
    "GenerationChanged",
    "LabelsChanged",
    "Predicate",
    "ResourceVersionChanged",
    "and_",
    "label_selector",
    "not_",
    "or_",
]


class Predicate:
    """Base predicate: lets every event through. Override the methods you filter on."""

    def create(self, obj: Obj) -> bool:
        return True

    def update(self, old: Obj, new: Obj) -> bool:
        return True

    def delete(self, obj: Obj) -> bool:
        return True

    def generic(self, obj: Obj) -> bool:
        return True

    def __and__(self, other: Predicate) -> Predicate:
        return and_(self, other)

    def __or__(self, other: Predicate) -> Predicate:
        return or_(self, other)

    def __invert__(self) -> Predicate:
        return not_(self)


def _meta(obj: Obj) -> Mapping[str, Any]:
    # Predicates run on every watch event of every controller: a plain dict read (a
    # kube_runtime.meta accessor costs about four times as much).
    return obj.get("metadata") or {}


class Funcs(Predicate):
    """A predicate from optional functions; a missing function lets its events through."""

    def __init__(
        self,
        create: Callable[[Obj], bool] | None = None,
        update: Callable[[Obj, Obj], bool] | None = None,
        delete: Callable[[Obj], bool] | None = None,
        generic: Callable[[Obj], bool] | None = None,
    ) -> None:
        self._create, self._update, self._delete, self._generic = create, update, delete, generic

    def create(self, obj: Obj) -> bool:
        return self._create(obj) if self._create else True

    def update(self, old: Obj, new: Obj) -> bool:
        return self._update(old, new) if self._update else True

    def delete(self, obj: Obj) -> bool:
        return self._delete(obj) if self._delete else True

    def generic(self, obj: Obj) -> bool:
        return self._generic(obj) if self._generic else True


class _UpdateOnly(Predicate):
    """Filters updates by comparing one metadata field of old and new."""

    field: str = ""

    def update(self, old: Obj, new: Obj) -> bool:
        if not old or not new:
            return False
        return bool(_meta(old).get(self.field) != _meta(new).get(self.field))


class GenerationChanged(_UpdateOnly):
    """Updates pass only when ``metadata.generation`` changed (spec changes, not status)."""

    field = "generation"


class ResourceVersionChanged(_UpdateOnly):
    """Updates pass only when ``metadata.resourceVersion`` changed (drops periodic resyncs)."""

    field = "resourceVersion"


class LabelsChanged(Predicate):
    """Updates pass only when the labels changed."""

    def update(self, old: Obj, new: Obj) -> bool:
        return bool(old and new) and (_meta(old).get("labels") or {}) != (
            _meta(new).get("labels") or {}
        )


class AnnotationsChanged(Predicate):
    """Updates pass only when the annotations changed."""

    def update(self, old: Obj, new: Obj) -> bool:
        return bool(old and new) and (_meta(old).get("annotations") or {}) != (
            _meta(new).get("annotations") or {}
        )


class _Combined(Predicate):
    """Every event passes through each of ``preds``; ``combine`` (``all`` or ``any``) decides."""

    def __init__(
        self, preds: tuple[Predicate, ...], combine: Callable[[Iterable[bool]], bool]
    ) -> None:
        self.preds = preds
        self.combine = combine

    def create(self, obj: Obj) -> bool:
        return self.combine(p.create(obj) for p in self.preds)

    def update(self, old: Obj, new: Obj) -> bool:
        return self.combine(p.update(old, new) for p in self.preds)

    def delete(self, obj: Obj) -> bool:
        return self.combine(p.delete(obj) for p in self.preds)

    def generic(self, obj: Obj) -> bool:
        return self.combine(p.generic(obj) for p in self.preds)


class _Not(Predicate):
    def __init__(self, pred: Predicate) -> None:
        self.pred = pred

    def create(self, obj: Obj) -> bool:
        return not self.pred.create(obj)

    def update(self, old: Obj, new: Obj) -> bool:
        return not self.pred.update(old, new)

    def delete(self, obj: Obj) -> bool:
        return not self.pred.delete(obj)

    def generic(self, obj: Obj) -> bool:
        return not self.pred.generic(obj)


def and_(*preds: Predicate) -> Predicate:
    """Passes an event only when every predicate passes it (no predicates: everything passes)."""
    return _Combined(preds, all)


def or_(*preds: Predicate) -> Predicate:
    """Passes an event when any predicate passes it (no predicates: nothing passes)."""
    return _Combined(preds, any)


def not_(pred: Predicate) -> Predicate:
    """Passes exactly the events ``pred`` drops."""
    return _Not(pred)


def label_selector(selector: str | Mapping[str, str]) -> Predicate:
    """Passes events for objects whose labels match ``selector`` (old or new, for updates)."""
    from kube_runtime.selectors import parse_label_selector

    text = (
        selector if isinstance(selector, str) else ",".join(f"{k}={v}" for k, v in selector.items())
    )
    sel = parse_label_selector(text)

    def match(obj: Obj) -> bool:
        return bool(sel.matches(_meta(obj).get("labels") or {}))

    return Funcs(match, lambda old, new: match(old) or match(new), match, match)
