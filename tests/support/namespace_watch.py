"""A watch of one kind in an empty namespace, read on a thread of its own (the differential
tests' recorders)."""

from __future__ import annotations

import threading
from typing import Any

from kube_runtime.client import Client


class NamespaceWatch:
    """Lists ``kind`` in ``namespace`` (it must be empty: nothing is missed or replayed) and
    watches from that resourceVersion, handing each event to :meth:`on_event` under
    :attr:`lock`, in the order the watch delivers them, until :meth:`close`."""

    def __init__(self, client: Client, kind: Any, namespace: str, name: str) -> None:
        self.lock = threading.Lock()
        listed = client.list(kind, namespace)
        assert listed["items"] == []
        self._watch = client.watch(
            kind,
            namespace,
            resource_version=listed["metadata"]["resourceVersion"],
            allow_bookmarks=False,
        )
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def on_event(self, event: Any) -> None:
        """Record ``event`` (called with :attr:`lock` held)."""
        raise NotImplementedError

    def _run(self) -> None:
        for event in self._watch:
            with self.lock:
                self.on_event(event)

    def close(self) -> None:
        """End the watch and wait for its thread."""
        self._watch.close()
        self._thread.join(10)
