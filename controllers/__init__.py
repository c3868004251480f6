"""The bundled controllers, by the name ``kube-runtime run NAME`` uses.

Each entry is ``module:function``; the function is ``setup(manager, *, max_concurrent_reconciles)``
and registers the controller with a :class:`~kube_runtime.manager.Manager`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

BUNDLED: dict[str, str] = {
    "statefulset": "controllers.statefulset:setup",
    "cloneset": "controllers.cloneset:setup",
}


def setup_function(name: str) -> Callable[..., Any]:
    """The setup function of the bundled controller ``name`` (KeyError lists the known names)."""
    try:
        target = BUNDLED[name]
    except KeyError:
        known = ", ".join(sorted(BUNDLED))
        raise KeyError(f"no bundled controller named {name!r} (known: {known})") from None
    module, _, func = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), func)
    return fn
