"""The StatefulSet controller: apps/v1 (upstream kube-controller-manager semantics) and the
enhanced kind ``apps.kube-runtime.io/v1beta1`` StatefulSet (OpenKruise Advanced StatefulSet
fields), reconciled by one algorithm.

``setup(manager, max_concurrent_reconciles=N, install_crd=False, enhanced=None)`` registers it
with a :class:`~kube_runtime.manager.Manager` (both kinds when the CRD is served);
:func:`install_crd` creates the enhanced kind's CRD from ``crd.yaml``. Modules:
:mod:`.controller` (watches and sync), :mod:`.control` (the algorithm), :mod:`.pod_control`
(API side effects and events), :mod:`.status` (status writes), :mod:`.spec` (the spec a sync
acts on, read once and checked), :mod:`.utils` (pure helpers), :mod:`.models` (typed models
of the enhanced kind, generated).

:func:`setup_webhooks` serves its validating webhook (:mod:`.webhooks`).
"""

from controllers.statefulset.controller import StatefulSetReconciler, install_crd, setup
from controllers.statefulset.utils import ENHANCED_STATEFULSET
from controllers.statefulset.webhooks import setup_webhooks

__all__ = [
    "ENHANCED_STATEFULSET",
    "StatefulSetReconciler",
    "install_crd",
    "setup",
    "setup_webhooks",
]
