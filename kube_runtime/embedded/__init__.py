"""Deprecated: the embedded cluster moved to :mod:`kube_runtime.envtest`.

``kube_runtime.embedded.cluster`` is now ``kube_runtime.envtest.cluster``, the server's modules
are under ``kube_runtime.envtest.server``, the kubelet simulator is
``kube_runtime.envtest.kubelet.simulator`` and the patch functions are :mod:`kube_runtime.patch`.
The old paths keep working for one release, with a ``DeprecationWarning``.
"""

from kube_runtime._moved import install

__getattr__ = install(
    __name__,
    "kube_runtime.envtest.server",
    {
        "cluster": "kube_runtime.envtest.cluster",
        "kubelet": "kube_runtime.envtest.kubelet.simulator",
        "patch": "kube_runtime.patch",
    },
)
