"""The ``pod-template-hash`` of a Deployment's pod template (upstream ``controller.ComputeHash``).

Upstream hashes the template with FNV-1a (32 bits) over ``hashutil.DeepHashObject`` (a
go-spew ``%#v`` dump of the ``v1.PodTemplateSpec`` Go struct), then, when the Deployment has
a ``status.collisionCount``, over that count as 8 little-endian bytes, and renders the sum's
decimal digits with ``rand.SafeEncodeString``. Here :func:`._spew.dump_template` writes the
same dump from the template dict, for the Go value kube-controller-manager 1.20 holds (every
field of the Go types, in their order, with the Go type names; quantities with their
internals): the hash, and so the ReplicaSet and pod names, equal upstream's for the same
template (checked against upstream's own ``ComputeHash`` in
``tests/unit/controllers/test_deployment_hash.py``). One shape is not reproduced: a
non-null ``metav1.Time`` inside the template (see :mod:`._spew`). A template with a quantity
upstream's parser rejects (which the API server does not store) falls back to a hash of its
Go JSON encoding, so the controller still names its ReplicaSets.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from typing import Any

from controllers.deployment._spew import QuantityError, dump_template
from kube_runtime.workloads.revision import go_json, safe_encode

__all__ = ["compute_hash", "fnv32a"]

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193

# The FNV sum of recent template dumps, by a digest of the dump: every sync of a Deployment
# hashes its template, and the byte loop costs several times the dump (a few KiB for a
# typical template).
_SUMS: dict[bytes, int] = {}
_SUMS_MAX = 4096


def fnv32a(data: bytes, h: int = _FNV32_OFFSET) -> int:
    """FNV-1a, 32 bits, of ``data``, continuing from ``h`` (Go's ``hash/fnv.New32a``)."""
    for byte in data:
        h ^= byte
        h = (h * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def compute_hash(template: Mapping[str, Any] | None, collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of ``template`` (a ``PodTemplateSpec`` dict) and the
    Deployment's ``collisionCount`` (None: not hashed, as upstream for a nil count)."""
    try:
        data = dump_template(template or {}).encode()
    except (QuantityError, TypeError, ValueError):
        data = go_json(template or {})
    key = hashlib.blake2b(data, digest_size=16).digest()
    h = _SUMS.get(key)
    if h is None:
        h = fnv32a(data)
        if len(_SUMS) >= _SUMS_MAX:
            _SUMS.clear()
        _SUMS[key] = h
    if collision_count is not None:
        h = fnv32a(struct.pack("<I", int(collision_count) & 0xFFFFFFFF) + b"\0" * 4, h)
    return safe_encode(str(h))
