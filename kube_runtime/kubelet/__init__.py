"""Deprecated: the simulated kubelet moved to :mod:`kube_runtime.envtest.kubelet`.

The old paths keep working for one release, with a ``DeprecationWarning``.
"""

from kube_runtime._moved import install

__getattr__ = install(__name__, "kube_runtime.envtest.kubelet")
