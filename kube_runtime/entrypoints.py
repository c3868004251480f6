"""What the ``kube-runtime`` command loads by entry point: controllers and sub-commands.

:mod:`kube_runtime.cli` hosts them; a command that lives in another package of the framework
(``webhook-config``, :mod:`kube_runtime.webhook._command`) or outside it (the test cluster's
``cluster``, ``codegen``) is a :class:`Command` from here, and loads controllers with
:func:`load_controller`, without importing the command line (which imports the webhook
package to serve webhooks: the command line sits above both). Every name here is also
importable from :mod:`kube_runtime.cli`, its documented home.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = [
    "COMMANDS_GROUP",
    "CONTROLLERS_GROUP",
    "Command",
    "ControllerEntry",
    "ControllerNotFound",
    "controller_entries",
    "entry_point_group",
    "load_controller",
]

CONTROLLERS_GROUP = "kube_runtime.controllers"
"""Entry-point group of the controllers ``kube-runtime run`` knows."""
COMMANDS_GROUP = "kube_runtime.commands"
"""Entry-point group of the other ``kube-runtime`` sub-commands."""


@runtime_checkable
class ControllerEntry(Protocol):
    """What a ``kube_runtime.controllers`` entry point names (a module fits).

    ``setup`` registers the controller's watches with the manager; it may also define
    ``install_crd(client)``, which ``kube-runtime run --install-crds`` calls first, and
    ``setup_webhooks(manager)``, which ``kube-runtime run --install-webhooks`` (or
    ``--webhook-port N``) calls after making the manager's webhook server
    (:func:`kube_runtime.webhook.server_for`). A controller with feature gates declares them
    as ``FEATURE_GATES`` (a mapping of each gate's name to its default);
    ``kube-runtime run --feature-gates Name=true,...`` then passes its setup
    ``feature_gates=`` (the given gates it declares).
    """

    def setup(self, manager: Manager, *, max_concurrent_reconciles: int) -> object: ...


@dataclass(frozen=True)
class Command:
    """A ``kube-runtime`` sub-command from the ``kube_runtime.commands`` group.

    ``main`` receives the arguments after the command's name and returns the exit code; it
    parses them itself (``kube-runtime NAME --help`` reaches it).
    """

    help: str
    main: Callable[[Sequence[str]], int]


def entry_point_group(name: str) -> dict[str, EntryPoint]:
    """The entry points of group ``name`` by name (not loaded)."""
    return {ep.name: ep for ep in entry_points(group=name)}


def controller_entries() -> dict[str, EntryPoint]:
    """The registered controllers by name (entry points, not loaded)."""
    return entry_point_group(CONTROLLERS_GROUP)


class ControllerNotFound(KeyError):
    """:func:`load_controller` found nothing under the name (its message says what it tried)."""


class _FunctionEntry:
    """A ``module:function`` target as a :class:`ControllerEntry`: ``setup`` calls the
    function with the manager and those of the keyword arguments its signature names (a
    ``**kwargs`` catch-all takes none of them: it often forwards to something else, as a
    webhook setup forwards to the webhook server)."""

    def __init__(self, target: str, fn: Callable[..., object]) -> None:
        self.target = target
        self.function = fn
        rules = getattr(fn, "__kube_rbac__", None)
        if rules is not None:
            self.__kube_rbac__ = rules
        params: list[inspect.Parameter] = []
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # a builtin without a signature: pass the manager only
            pass
        self._keywords: set[str] = set()
        for p in params:
            if p.kind in (
                inspect.Parameter.KEYWORD_ONLY,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
            ):
                self._keywords.add(p.name)

    def __repr__(self) -> str:
        return self.target

    def setup(self, manager: Manager, **options: Any) -> object:
        """``function(manager, **options it accepts)``."""
        taken = {k: v for k, v in options.items() if k in self._keywords}
        return self.function(manager, **taken)


def _load_target(target: str) -> ControllerEntry:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ControllerNotFound(f"{target!r}: expected module:function (or module:object)")
    # Like `python -m`: an operator in the current directory imports without being installed.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ControllerNotFound(
            f"cannot import {module_name!r} for {target!r}: {e} (run from the directory that "
            "holds it, or install its package)"
        ) from None
    found: Any = module
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ControllerNotFound(f"{target!r}: {found.__name__!r} has no attribute {part!r}")
        found = getattr(found, part)
    if callable(getattr(found, "setup", None)):
        entry: ControllerEntry = found
        return entry
    if callable(found):
        return _FunctionEntry(target, found)
    raise TypeError(
        f"{target!r} is a {type(found).__name__}: name a setup function of a manager or an "
        "object with setup(manager, ...)"
    )


def load_controller(name: str) -> ControllerEntry:
    """The controller ``name`` names: one registered in :data:`CONTROLLERS_GROUP`, or
    ``module:function`` -- a ``setup`` function of a manager in a module importable from here
    (the current directory is searched, as ``python -m`` does) -- or ``module:object`` with a
    ``setup`` (and optionally ``install_crd``, ``setup_webhooks``, ``FEATURE_GATES``).

    :class:`ControllerNotFound` (a ``KeyError``) naming the registered controllers, or why the
    module or attribute was not found; ``TypeError`` when what it names cannot set up a
    controller."""
    if ":" in name:
        return _load_target(name)
    entries = controller_entries()
    if name not in entries:
        known = ", ".join(sorted(entries)) or "none"
        raise ControllerNotFound(
            f"no controller named {name!r} (registered: {known}); a package registers one "
            f"in the entry-point group {CONTROLLERS_GROUP!r}, or name a setup function as "
            "module:function"
        )
    entry: Any = entries[name].load()
    if not callable(getattr(entry, "setup", None)):
        raise TypeError(f"entry point {name!r} ({entries[name].value}) has no setup(manager, ...)")
    return entry
