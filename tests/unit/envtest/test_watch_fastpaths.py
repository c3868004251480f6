"""Watch delivery's short ways write what its general way writes: a watch without selectors
(the store's match-all fan-out) and a watch of stored bytes (``deliver``'s shortcut) give the
same lines, in the same order, as the same watch taken the general way, over random writes,
replays from a resourceVersion, namespaces and selectors."""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import urlencode

import pytest

from kube_runtime.envtest.server.faults import Faults
from kube_runtime.envtest.server.http import Request
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.routing import Route
from kube_runtime.envtest.server.storage import Store
from kube_runtime.envtest.server.watch import Watches, _WatchSession


class _Lines:
    """A stream that keeps what is written to it."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.closed = False
        self.lost = False
        self.on_close: Any = None

    def write(self, data: bytes) -> None:
        self.lines.append(data)

    def close(self) -> None:
        self.closed = True


def _open(watches: Watches, route: Route, query: dict[str, str], *, general: bool) -> _Lines:
    request = Request("GET", "/x?" + urlencode({"watch": "1", **query}), {}, b"")
    session = watches.watch(request, route).start.__self__  # type: ignore[attr-defined]
    assert isinstance(session, _WatchSession)
    if general:
        session._as_stored = False
        if session.matches is None:
            session.matches = lambda obj: True
    stream = _Lines()
    session.start(stream)  # type: ignore[arg-type]
    return stream


@pytest.mark.parametrize("seed", range(4))
def test_short_ways_write_what_the_general_way_writes(seed: int) -> None:
    rng = random.Random(seed)
    registry = Registry()
    store = Store(registry)
    namespaces = registry.by_key("", "namespaces")
    configmaps = registry.by_key("", "configmaps")
    assert namespaces is not None and configmaps is not None
    for ns in ("a", "b"):
        store.create(namespaces, None, {"metadata": {"name": ns}})
    watches = Watches(store, Faults(), bookmark_interval=0)
    queries: list[dict[str, str]] = [
        {},
        {"labelSelector": "app=web"},
        {"fieldSelector": "metadata.name=c1"},
        {"labelSelector": "app!=web", "fieldSelector": "metadata.namespace=a"},
    ]
    pairs: list[tuple[_Lines, _Lines]] = []
    rvs: list[int] = [store.resource_version]
    for step in range(400):
        if step % 50 == 0:  # new watches: from now, from an earlier version, or a listing
            for query in queries:
                since = str(rng.choice([rng.choice(rvs), store.resource_version, 0]))
                ns = rng.choice([None, "a"])
                route = Route(configmaps, configmaps.version, ns, None, "", False)
                q = {**query, "resourceVersion": since}
                pairs.append(
                    (
                        _open(watches, route, q, general=False),
                        _open(watches, route, q, general=True),
                    )
                )
        ns, name = rng.choice(["a", "b"]), rng.choice(["c1", "c2", "c3"])
        labels = rng.choice([{}, {"app": "web"}, {"app": "db"}])
        current = store.try_get(configmaps, ns, name)
        if current is None:
            store.create(configmaps, ns, {"metadata": {"name": name, "labels": labels}})
        elif rng.random() < 0.3:
            store.delete(configmaps, ns, name)
        else:
            obj = {**current.obj, "metadata": {**current.meta, "labels": labels}}
            obj["data"] = {"n": str(step)}
            store.update(configmaps, ns, name, obj)
        rvs.append(store.resource_version)
    assert any(short.lines for short, _ in pairs)
    for short, general in pairs:
        assert short.lines == general.lines
