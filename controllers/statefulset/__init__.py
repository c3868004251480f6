"""The reference StatefulSet controller (apps/v1, upstream kube-controller-manager semantics).

``setup(manager, max_concurrent_reconciles=N)`` registers it with a
:class:`~kube_runtime.manager.Manager`. Modules: :mod:`.controller` (watches and sync),
:mod:`.control` (the algorithm), :mod:`.pod_control` (API side effects and events),
:mod:`.status` (status writes), :mod:`.utils` (pure helpers).
"""

from controllers.statefulset.controller import StatefulSetReconciler, setup

__all__ = ["StatefulSetReconciler", "setup"]
