"""The CloneSet controller (OpenKruise ``apps.kruise.io/v1alpha1`` semantics, served as
``apps.kube-runtime.io/v1alpha1``).

``setup(manager, max_concurrent_reconciles=N, install_crd=False)`` registers it with a
:class:`~kube_runtime.manager.Manager`; :func:`install_crd` creates the CRD from ``crd.yaml``.
Modules: :mod:`.controller` (watches and the sync), :mod:`.core` (spec accessors, pod
readiness, new pods), :mod:`.scale`, :mod:`.update`, :mod:`.lifecycle`,
:mod:`.status`.
"""

from controllers.cloneset.controller import CloneSetReconciler, install_crd, setup
from controllers.cloneset.core import CLONESET

__all__ = ["CLONESET", "CloneSetReconciler", "install_crd", "setup"]
