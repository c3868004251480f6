"""The bundled controllers, built on the framework's public API only.

Each is registered in the ``kube_runtime.controllers`` entry-point group (pyproject.toml), so
``kube-runtime run statefulset cloneset`` finds them as it finds any user's controller: the
entry point names the package, whose ``setup(manager, *, max_concurrent_reconciles)``
registers the controller with a :class:`~kube_runtime.manager.Manager` and whose
``install_crd(client)`` creates the CRD it serves.
"""

from __future__ import annotations

__all__: list[str] = []
