"""Batches of pod operations, as upstream's workload controllers run them.

Upstream runs each batch of creations or deletions concurrently and waits for all of them
(``slowStartBatch`` in the ReplicaSet and CloneSet controllers, ``runForAll`` in the
StatefulSet controller): one failure does not stop the rest of its batch, only the batches
after it. :func:`call_each` is that step, sequential here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["call_each"]


def call_each(fn: Callable[[int], object], indices: Iterable[int]) -> list[BaseException]:
    """Call ``fn(i)`` for every index, going on past failures; the exceptions raised, in
    order (empty when all succeeded). Only :class:`Exception` is caught."""
    errors: list[BaseException] = []
    for i in indices:
        try:
            fn(i)
        except Exception as err:
            errors.append(err)
    return errors
