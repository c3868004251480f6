"""Utilities shared by workload controllers (StatefulSet, CloneSet, your own).

* :mod:`~kube_runtime.workloads.revision` — ControllerRevision history: hash, create with
  collision handling, rollback, truncation, patch/apply of the versioned spec;
* :mod:`~kube_runtime.workloads.pvc` — claims from templates and a pod's volumes from its
  claims;
* :mod:`~kube_runtime.workloads.pods` — pod state predicates, ordinals, upstream's order for
  choosing pods to delete;
* :mod:`~kube_runtime.workloads.intstr` — int-or-percent values scaled to a total;
* :mod:`~kube_runtime.workloads.inplace` — in-place update of pods: feasibility, the
  ``InPlaceUpdateReady`` readiness gate, grace period, image patch, completion check;
* :mod:`~kube_runtime.workloads.lifecycle` — Kruise's pod lifecycle states and hooks
  (``lifecycle.apps.kruise.io/state``);
* :mod:`~kube_runtime.workloads.podreadiness` — Kruise's ``KruisePodReady`` readiness gate
  (not-ready keys per writer);
* :mod:`~kube_runtime.workloads.updatesort` — update order by priority strategy;
* :mod:`~kube_runtime.workloads.batches` — slow-start batches that go on past a failure;
* :mod:`~kube_runtime.workloads.specview` — a set's spec read and checked once per generation
  (the view pattern of the bundled controllers, :class:`~.specview.InvalidSpecError`);
* :mod:`~kube_runtime.workloads.statuswriter` — status writes coalesced per object within a
  bounded window, the pending status laid over the recorded one for the next sync.

* :mod:`~kube_runtime.workloads.containermeta` — environment from pod metadata and the
  runtime containers' meta annotation;
* :mod:`~kube_runtime.workloads.quantity` — resource quantities as numbers;
* :mod:`~kube_runtime.workloads.templates` — the shape of a pod template and of volume claim
  templates, checked before use.

Import from the submodules; nothing is re-exported here (``__all__`` names the submodules).
"""

__all__ = [
    "batches",
    "containermeta",
    "inplace",
    "intstr",
    "lifecycle",
    "podreadiness",
    "pods",
    "pvc",
    "quantity",
    "revision",
    "specview",
    "statuswriter",
    "templates",
    "updatesort",
]
