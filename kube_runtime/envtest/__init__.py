"""Test support for kube-runtime users: an embedded cluster as pytest fixtures.

The pytest plugin (registered through the ``pytest11`` entry point, so installing
kube-runtime is enough) provides:

* ``embedded_cluster`` (session): a running :class:`~kube_runtime.envtest.cluster.EmbeddedCluster`;
* ``kubeconfig`` (session): path of a kubeconfig file for it (kubectl, the official client);
* ``api_client``: an official ``kubernetes.client.ApiClient`` bound to it;
* ``namespace``: a fresh namespace per test, deleted afterwards;
* ``kubelet``: the simulated kubelet (change ``kubelet.settings`` to alter pod timing);
* ``faults``: fault injection, cleared after each test;
* ``wait_for``: ``wait_for(predicate, timeout=10, interval=0.01, message=...)``;
* ``kube_version`` (session): ``(major, minor)`` of the cluster's Kubernetes.

:func:`server_version` tells which Kubernetes the cluster is (the embedded one models a current
release; ``--backend real`` runs 1.20), for assertions on fields newer releases added.
"""

from kube_runtime.envtest.version import server_version
from kube_runtime.envtest.waiting import WaitTimeout, wait_for

__all__ = ["WaitTimeout", "server_version", "wait_for"]
