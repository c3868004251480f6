"""The simulated kubelet against any API server (as KWOK does), through the framework client.

:class:`ClientKubelet` is the embedded cluster's :class:`~kube_runtime.envtest.kubelet.simulator.Kubelet`
(same behaviour, same ``settings``, same simulation annotations) working on an
:class:`~kube_runtime.envtest.kubelet.apistore.ApiStore` instead of the embedded ``Store``: it registers
its Node, binds pending pods to it, reports pod and container status, honours readiness gates,
restarts containers in place on image change, completes graceful deletion and binds PVCs.
``kube-runtime kubelet --kubeconfig PATH`` runs it on its own (:func:`main`).
"""

from kube_runtime.envtest.kubelet.apistore import ApiStore
from kube_runtime.envtest.kubelet.runner import ClientKubelet, main

__all__ = ["ApiStore", "ClientKubelet", "main"]
