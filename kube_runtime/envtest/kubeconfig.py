"""Kubeconfig documents for the test clusters (embedded and real backend alike).

:func:`kubeconfig` builds one context (cluster, user, namespace ``default``) for a server URL,
with a bearer token and a CA when given; :func:`write_kubeconfig` writes it readable by its
owner only, as kubectl expects of a file holding a token.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import yaml

from kube_runtime.envtest.secretfiles import write_private

__all__ = ["kubeconfig", "write_kubeconfig"]


def kubeconfig(
    url: str, *, token: str | None, ca_pem: bytes | None, context: str = "kube-runtime"
) -> dict[str, Any]:
    """A kubeconfig whose current context ``context`` talks to ``url``."""
    user: dict[str, Any] = {"token": token} if token else {}
    cluster: dict[str, Any] = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": context, "user": user}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": context, "namespace": "default"},
            }
        ],
        "current-context": context,
        "preferences": {},
    }


def write_kubeconfig(config: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``config`` as YAML to ``path``, mode 0600 from the first byte (atomically; a
    symlink at ``path`` is replaced, never followed; see :mod:`.secretfiles`); return the
    path."""
    return write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
