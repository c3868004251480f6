"""Deprecated: the test fixtures and helpers moved to :mod:`kube_runtime.envtest`.

The old paths keep working for one release, with a ``DeprecationWarning``.
"""

from kube_runtime._moved import install

__getattr__ = install(__name__, "kube_runtime.envtest")
