"""A small in-memory list/watch source (a fake API server for one kind) and its own checks.

``FakeServer`` keeps objects, a global resourceVersion, and an event history; ``watch`` replays
history after a resourceVersion, then follows live events until closed. Knobs make it misbehave
as a real server does: ``drop_after`` ends each stream after N events, ``evict()`` forgets
history so an older resourceVersion gets 410 Gone, ``watch_errors`` / ``list_errors`` make the
next calls fail, ``stream_errors`` break a stream after its next event.
"""

from __future__ import annotations

import pytest

from tests.support.fake_watch_source import FakeGone, FakeServer


def test_fake_watch_replays_after_rv_then_follows_live_events() -> None:
    server = FakeServer()
    a = server.create("a")
    server.create("b")
    w = server.watch(None, resource_version=a["metadata"]["resourceVersion"])
    it = iter(w)
    assert next(it).object["metadata"]["name"] == "b"
    server.create("c")
    assert next(it).object["metadata"]["name"] == "c"
    w.close()
    assert list(it) == []


def test_fake_watch_from_evicted_rv_is_gone() -> None:
    server = FakeServer()
    server.create("a")
    server.evict()
    with pytest.raises(FakeGone):
        server.watch(None, resource_version="100")
