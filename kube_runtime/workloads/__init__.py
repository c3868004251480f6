"""Utilities shared by workload controllers (StatefulSet, CloneSet, your own).

* :mod:`~kube_runtime.workloads.revision` — ControllerRevision history: hash, create with
  collision handling, rollback, truncation, patch/apply of the versioned spec;
* :mod:`~kube_runtime.workloads.pvc` — per-ordinal and per-instance claims, creating them
  before the pod, the retention policy as owner references;
* :mod:`~kube_runtime.workloads.pods` — pod state predicates, ordinals, upstream's order for
  choosing pods to delete;
* :mod:`~kube_runtime.workloads.intstr` — int-or-percent values scaled to a total;
* :mod:`~kube_runtime.workloads.inplace` — in-place update of pods: feasibility, the
  ``InPlaceUpdateReady`` readiness gate, grace period, image patch, completion check;
* :mod:`~kube_runtime.workloads.updatesort` — update order by priority strategy.

Import from the submodules; nothing is re-exported here.
"""
