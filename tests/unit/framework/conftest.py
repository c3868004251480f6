"""Fixtures shared by the framework's unit tests."""

from __future__ import annotations

import pytest

from tests.support.fake_watch_source import FakeServer


@pytest.fixture
def server() -> FakeServer:
    """An empty in-memory list/watch source (:class:`tests.support.fake_watch_source.FakeServer`)."""
    return FakeServer()
