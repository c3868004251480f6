"""kube-runtime: a controller-runtime-style framework for Kubernetes controllers in Python.

The names a controller author needs most are importable from here (loaded on first use)::

    from kube_runtime import Builder, Manager, Request, Result, NotFound, kinds
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Builder": "kube_runtime.builder",
    "Manager": "kube_runtime.manager",
    "Controller": "kube_runtime.controller",
    "Request": "kube_runtime.reconcile",
    "Result": "kube_runtime.reconcile",
    "TerminalError": "kube_runtime.reconcile",
    "Client": "kube_runtime.client",
    "ApiError": "kube_runtime.client.errors",
    "NotFound": "kube_runtime.client.errors",
    "Conflict": "kube_runtime.client.errors",
    "AlreadyExists": "kube_runtime.client.errors",
    "Kind": "kube_runtime.kinds",
}

__all__ = [
    "AlreadyExists",
    "ApiError",
    "Builder",
    "Client",
    "Conflict",
    "Controller",
    "Kind",
    "Manager",
    "NotFound",
    "Request",
    "Result",
    "TerminalError",
    "__version__",
    "kinds",
]

if TYPE_CHECKING:
    from kube_runtime import kinds
    from kube_runtime.builder import Builder
    from kube_runtime.client import Client
    from kube_runtime.client.errors import AlreadyExists, ApiError, Conflict, NotFound
    from kube_runtime.controller import Controller
    from kube_runtime.kinds import Kind
    from kube_runtime.manager import Manager
    from kube_runtime.reconcile import Request, Result, TerminalError


def __getattr__(name: str) -> Any:
    if name == "kinds":
        return importlib.import_module("kube_runtime.kinds")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kube_runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
