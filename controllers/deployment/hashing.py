"""The ``pod-template-hash`` of a Deployment's pod template (upstream ``controller.ComputeHash``).

Upstream hashes the template with FNV-1a (32 bits) over ``hashutil.DeepHashObject`` (a
``spew`` dump of the Go struct), then, when the Deployment has a ``status.collisionCount``,
over that count as 8 little-endian bytes, and renders the sum's decimal digits with
``rand.SafeEncodeString``. The spew dump depends on Go's struct layout (every field, zero or
not, with Go type names), which a JSON object does not carry; here the template's Go JSON
encoding (:func:`kube_runtime.workloads.revision.go_json`: sorted keys, no spaces, as
``json.Marshal`` of the same value) stands in for it. The names therefore differ from
kube-controller-manager's for the same template, but have the same properties: the same
template gives the same hash on every run, a changed template (or a bumped collision count)
a different one, and the alphabet and length are upstream's (no vowels, at most 10
characters).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from kube_runtime.workloads.revision import go_json, safe_encode

__all__ = ["compute_hash", "fnv32a"]

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes, h: int = _FNV32_OFFSET) -> int:
    """FNV-1a, 32 bits, of ``data``, continuing from ``h`` (Go's ``hash/fnv.New32a``)."""
    for byte in data:
        h ^= byte
        h = (h * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def compute_hash(template: Mapping[str, Any] | None, collision_count: int | None = None) -> str:
    """The ``pod-template-hash`` of ``template`` (a ``PodTemplateSpec`` dict) and the
    Deployment's ``collisionCount`` (None: not hashed, as upstream for a nil count)."""
    h = fnv32a(go_json(template or {}))
    if collision_count is not None:
        h = fnv32a(struct.pack("<I", int(collision_count) & 0xFFFFFFFF) + b"\0" * 4, h)
    return safe_encode(str(h))
