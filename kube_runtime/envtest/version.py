"""The API server's Kubernetes version, for tests that run on more than one backend."""

from __future__ import annotations

import re
import weakref
from typing import Any

__all__ = ["server_version"]

_versions: weakref.WeakKeyDictionary[Any, tuple[int, int]] = weakref.WeakKeyDictionary()


def server_version(client: Any) -> tuple[int, int]:
    """``(major, minor)`` from the server's ``/version`` (read once per client).

    ``client`` is a :class:`~kube_runtime.client.Client`. Minor versions such as ``"20+"``
    (some distributions) count as 20.
    """
    cached = _versions.get(client)
    if cached is None:
        info = client.get_path("/version")
        major, minor = (_leading_int(info[k]) for k in ("major", "minor"))
        cached = _versions[client] = (major, minor)
    return cached


def _leading_int(text: object) -> int:
    match = re.match(r"\d+", str(text))
    if match is None:
        raise ValueError(f"not a version number: {text!r}")
    return int(match.group())
