"""The Deployment and ReplicaSet controllers (upstream kube-controller-manager's
``pkg/controller/deployment`` and ``pkg/controller/replicaset`` semantics, apps/v1).

``setup(manager, max_concurrent_reconciles=N, replicasets=True)`` registers both with a
:class:`~kube_runtime.manager.Manager` (``kube-runtime run deployment``; the embedded cluster
runs them by default). Modules, one concern each:

- :mod:`.controller`: the Deployment controller's watches and sync, :func:`setup`;
- :mod:`.sync`: the shared steps (the new ReplicaSet and revisions, proportional scaling,
  history cleanup, status) and the API side of a sync;
- :mod:`.rolling` / :mod:`.recreate`: the two strategies;
- :mod:`.progress`: the ``Progressing`` condition and ``progressDeadlineSeconds``;
- :mod:`.conditions`: Deployment / ReplicaSet conditions and their reasons;
- :mod:`.util`: pure decisions (fenceposts, new ReplicaSet size, proportions, annotations);
- :mod:`.hashing`: the ``pod-template-hash``;
- :mod:`.replicaset`: the ReplicaSet controller.
"""

from controllers.deployment.controller import PERMISSIONS, DeploymentReconciler, setup
from controllers.deployment.replicaset import ReplicaSetReconciler, setup_replicasets

__all__ = [
    "PERMISSIONS",
    "DeploymentReconciler",
    "ReplicaSetReconciler",
    "setup",
    "setup_replicasets",
]
