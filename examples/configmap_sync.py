"""Keep one ConfigMap copied into every namespace labelled ``config-sync=enabled``.

Run it against any cluster: ``python examples/configmap_sync.py SOURCE_NAMESPACE NAME``.
The README walks through it. Each copy is owned by its namespace, so ``owns(ConfigMap)`` wakes
the namespace's reconcile when someone edits or deletes a copy; the ``watches`` on the source
fans a change of the source out to every labelled namespace.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from kube_runtime import Builder, Manager, NotFound, Request, kinds
from kube_runtime.ownership import is_controlled_by, set_controller_reference

LABEL = "config-sync=enabled"


class ConfigMapSync:
    def __init__(self, manager: Manager, source_namespace: str, name: str) -> None:
        self.client, self.source_ns, self.name = manager.client, source_namespace, name

    def reconcile(self, request: Request) -> None:
        if request.name == self.source_ns:
            return  # never overwrite the source itself
        try:
            ns = self.client.get(kinds.Namespace, request.name)
            src = self.client.get(kinds.ConfigMap, self.name, self.source_ns)
        except NotFound:
            return  # the watches bring us back when they exist
        try:
            copy = self.client.get(kinds.ConfigMap, self.name, request.name)
        except NotFound:
            copy = None
        labels = ns["metadata"].get("labels") or {}
        if labels.get("config-sync") != "enabled" or "deletionTimestamp" in ns["metadata"]:
            if copy is not None and is_controlled_by(copy, ns):
                self.client.delete(kinds.ConfigMap, self.name, request.name)
            return
        data = {"data": src.get("data", {}), "binaryData": src.get("binaryData", {})}
        if copy is None:
            meta = {"name": self.name, "namespace": request.name}
            new = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **data}
            self.client.create(set_controller_reference(ns, new))
        elif {key: copy.get(key, {}) for key in data} != data:
            self.client.update({**copy, **data})  # a new dict: cached objects stay untouched


def setup(manager: Manager, source_namespace: str, name: str) -> None:
    def namespaces_for(cm: Mapping[str, Any]) -> list[Request]:
        if (cm["metadata"]["namespace"], cm["metadata"]["name"]) != (source_namespace, name):
            return []
        labelled = manager.client.list(kinds.Namespace, label_selector=LABEL)
        return [Request.for_object(ns) for ns in labelled["items"]]

    Builder(manager).named("configmap-sync").for_(kinds.Namespace).owns(kinds.ConfigMap).watches(
        kinds.ConfigMap, namespaces_for
    ).complete(ConfigMapSync(manager, source_namespace, name))


if __name__ == "__main__":
    from kube_runtime import logs

    logs.setup()
    manager = Manager(leader_election=True, leader_election_id="configmap-sync")
    setup(manager, sys.argv[1], sys.argv[2])
    manager.start()  # until Ctrl-C / SIGTERM
