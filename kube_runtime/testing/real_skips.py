"""Tests that cannot run on the real (Kubernetes 1.20) backend, with the reason.

Keys are pytest node-id prefixes (a file, a class or one test); the first matching entry
wins. The plugin skips these on ``--backend real``; docs/conformance.md lists them. Tests
marked ``embedded_only``/``needs_k8s``, asking for ``faults`` or touching the embedded
cluster's internals are skipped without being listed here.
"""

from __future__ import annotations

__all__ = ["REAL_SKIPS", "reason_for"]

REAL_SKIPS: dict[str, str] = {}


def reason_for(nodeid: str) -> str | None:
    """The skip reason for the test ``nodeid`` on the real backend, or None."""
    for prefix, reason in REAL_SKIPS.items():
        if nodeid == prefix or nodeid.startswith(prefix + "::") or nodeid.startswith(prefix + "["):
            return reason
    return None
