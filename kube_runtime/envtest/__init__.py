"""The test cluster, apart from the framework: an embedded Kubernetes API server, a simulated
kubelet, and a pytest plugin that serves them as fixtures.

The framework never imports this package; tests and the demo do::

    from kube_runtime.envtest import EmbeddedCluster, wait_for

    with EmbeddedCluster() as cluster:           # API server + simulated kubelet on 127.0.0.1
        client = cluster.client()                # the framework's Client, over HTTP
        ...

Modules: :mod:`.cluster` (:class:`EmbeddedCluster`), :mod:`.server` (the API server, one
module per concern), :mod:`.kubelet` (the simulated kubelet, in process or against any API
server), :mod:`.plugin` (pytest fixtures), :mod:`.real` (etcd + kube-apiserver 1.20 as a
second backend), :mod:`.waiting` (:func:`wait_for`), :mod:`.managers` (:func:`running`: a
manager on a thread for a ``with`` block), :mod:`.version` (:func:`server_version`).

The pytest plugin (registered through the ``pytest11`` entry point, so installing
kube-runtime is enough; inert until a test asks for one of its fixtures) provides:

* ``embedded_cluster`` (session): a running cluster (``--backend real``: the real one);
* ``kubeconfig`` (session): path of a kubeconfig file for it (kubectl, the official client);
* ``client`` (session): the framework's :class:`~kube_runtime.client.Client` for it;
* ``api_client``: an official ``kubernetes.client.ApiClient`` bound to it;
* ``namespace``: a fresh namespace per test, deleted afterwards;
* ``kubelet``: the simulated kubelet (change ``kubelet.settings`` to alter pod timing);
* ``faults``: fault injection, cleared after each test;
* ``wait_for``: ``wait_for(predicate, timeout=10, interval=0.01, message=..., every=None)``
  (``every``: under a simulated clock, check every that many virtual seconds);
* ``kube_version`` (session): ``(major, minor)`` of the cluster's Kubernetes.

Names here load on first use, so importing this package (as the plugin does) is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["EmbeddedCluster", "WaitTimeout", "running", "server_version", "wait_for"]

_EXPORTS = {
    "EmbeddedCluster": "kube_runtime.envtest.cluster",
    "WaitTimeout": "kube_runtime.envtest.waiting",
    "wait_for": "kube_runtime.envtest.waiting",
    "running": "kube_runtime.envtest.managers",
    "server_version": "kube_runtime.envtest.version",
}

if TYPE_CHECKING:
    from kube_runtime.envtest.cluster import EmbeddedCluster
    from kube_runtime.envtest.managers import running
    from kube_runtime.envtest.version import server_version
    from kube_runtime.envtest.waiting import WaitTimeout, wait_for


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kube_runtime.envtest' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
