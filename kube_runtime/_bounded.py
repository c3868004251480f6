"""Bounded memo tables: what a hot path computes once per recurring key.

The project keeps many small memos keyed by what recurs (a URL, a selector text, a template's
digest, a route). Each is a plain dict emptied when it reaches its limit: memory stays bounded,
and what still recurs is computed again once. A least-recently-used order would cost more per
hit than these tables save.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["remember"]

K = TypeVar("K")
V = TypeVar("V")


def remember(table: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store ``value`` under ``key`` in ``table`` and return it; a table already holding
    ``limit`` entries is emptied first. Not locked: a caller shared between threads holds its
    own lock around it (losing a race costs only a recomputation)."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value
