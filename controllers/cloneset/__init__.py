"""The CloneSet controller (OpenKruise ``apps.kruise.io/v1alpha1`` semantics, served as
``apps.kube-runtime.io/v1alpha1``).

``setup(manager, max_concurrent_reconciles=N, install_crd=False)`` registers it with a
:class:`~kube_runtime.manager.Manager`; :func:`install_crd` creates the CRD from ``crd.yaml``.

Modules, as the StatefulSet's:

- :mod:`.controller`: watches, event mapping, the reconcile (reads, expectation waits,
  claiming, revisions), :func:`setup` and :func:`install_crd`;
- :mod:`.control`: the sync algorithm (scale, then update, then status, history), decisions
  only, with :mod:`.scale` and :mod:`.update` (and the pure :mod:`.lifecycle` rules);
- :mod:`.pod_control`: every API side effect (pods, claims, lifecycle and in-place patches,
  events, expectation bookkeeping);
- :mod:`.status`: computing and writing the status;
- :mod:`.pvc`: the set's claims per pod instance id;
- :mod:`.revision`: the set's revisions with the hash of its ``volumeClaimTemplates``, and
  Kruise's ``RecreatePodWhenChangeVCTInCloneSetGate`` (``setup(recreate_pod_when_change_vct=...)``
  ``kube-runtime run cloneset --feature-gates ...`` or ``KUBE_RUNTIME_FEATURE_GATES``);
- :mod:`.core`: the typed view of a CloneSet (:class:`~.core.CloneSetView`, over the models
  generated from the CRD in :mod:`.models`), spec validation, pod readiness, new pods.

:func:`setup_webhooks` serves its validating webhook (:mod:`.webhooks`).
"""

from controllers.cloneset.controller import CloneSetReconciler, install_crd, setup
from controllers.cloneset.core import CLONESET
from controllers.cloneset.revision import FEATURE_GATES
from controllers.cloneset.webhooks import setup_webhooks

__all__ = [
    "CLONESET",
    "FEATURE_GATES",
    "CloneSetReconciler",
    "install_crd",
    "setup",
    "setup_webhooks",
]
