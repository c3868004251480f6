"""The simulated kubelet against any API server (as KWOK does), through the framework client.

:class:`ClientKubelet` is the embedded cluster's :class:`~kube_runtime.envtest.kubelet.simulator.Kubelet`
(same behaviour, same ``settings``, same simulation annotations) working on an
:class:`~kube_runtime.envtest.kubelet.apistore.ApiStore` instead of the embedded ``Store``: it registers
its Node, binds pending pods to it, reports pod and container status, honours readiness gates,
restarts containers in place on image change, completes graceful deletion and binds PVCs.
``kube-runtime kubelet --kubeconfig PATH`` runs it on its own (:func:`main`).

The names are imported on first access: the embedded cluster imports only
:mod:`.simulator`, and the runner (argparse, the client's informers) is not its concern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kube_runtime.envtest.kubelet.apistore import ApiStore
    from kube_runtime.envtest.kubelet.runner import ClientKubelet, main

__all__ = ["ApiStore", "ClientKubelet", "main"]


def __getattr__(name: str) -> Any:
    if name == "ApiStore":
        from kube_runtime.envtest.kubelet.apistore import ApiStore

        return ApiStore
    if name in ("ClientKubelet", "main"):
        from kube_runtime.envtest.kubelet import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
