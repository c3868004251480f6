"""The embedded API server. It imports libraries that only the ``envtest`` extra installs
(``pip install 'kube-runtime[envtest]'``): importing any of its modules without them raises
:class:`ModuleNotFoundError` naming the extra and what is missing, instead of a bare
``No module named ...`` from deep inside the server. The framework never imports this package,
so a controller installed without the extra runs as before; only the embedded cluster (and the
pytest fixtures that start one) need it."""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRA_MODULES", "missing_extra"]

#: The modules this package imports that only the ``envtest`` extra installs, each with the
#: distribution that provides it (pyproject.toml's ``[project.optional-dependencies] envtest``).
EXTRA_MODULES: dict[str, str] = {
    "msgspec": "msgspec",
    "cel": "common-expression-language",
    "jsonpath_ng": "jsonpath-ng",
    "kubernetes_validate": "kubernetes-validate",
    "google.protobuf": "protobuf",
}


def missing_extra() -> list[str]:
    """The distributions of :data:`EXTRA_MODULES` whose module cannot be found (none imported
    here: a lookup only)."""
    missing = []
    for module, distribution in EXTRA_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a missing parent package; a broken sys.modules entry
            found = False
        if not found:
            missing.append(distribution)
    return missing


if _missing := missing_extra():
    raise ModuleNotFoundError(
        "the embedded cluster (kube_runtime.envtest) needs the envtest extra: "
        f"pip install 'kube-runtime[envtest]' (missing: {', '.join(_missing)})",
    )
