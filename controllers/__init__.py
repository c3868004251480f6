"""Workload controllers bundled with kube-runtime (StatefulSet, CloneSet)."""
