"""Logging with the reconciled object in every record.

While a controller reconciles a request, every log record created on that worker thread --
the framework's and the reconciler's own ``logging.getLogger(__name__)`` records alike --
carries ``kr_controller``, ``kr_key`` (``namespace/name``), ``kr_reconcile_id`` and a ready-made
``kr_context`` (`` [controller=web key=ns/web-0 id=...]`` or an empty string outside a reconcile).
This is controller-runtime's "logger from the context" without passing a logger around: the
values live in a :class:`contextvars.ContextVar` and a log-record factory copies them onto each
record, so any formatter can print them. :func:`setup` installs a formatter that does.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_FORMAT",
    "ReconcileContext",
    "current",
    "install_record_factory",
    "reconcile_context",
    "setup",
]

DEFAULT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s%(kr_context)s %(message)s"


@dataclass(frozen=True)
class ReconcileContext:
    controller: str
    key: str
    reconcile_id: str

    def render(self) -> str:
        return f" [controller={self.controller} key={self.key} id={self.reconcile_id}]"


_current: ContextVar[ReconcileContext | None] = ContextVar("kube_runtime_reconcile", default=None)
_installed = False


def current() -> ReconcileContext | None:
    """The reconcile running on this thread, if any."""
    return _current.get()


@contextlib.contextmanager
def reconcile_context(controller: str, key: str, reconcile_id: str) -> Iterator[ReconcileContext]:
    """Tag every log record made inside the block with this reconcile."""
    install_record_factory()
    ctx = ReconcileContext(controller, key, reconcile_id)
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


def install_record_factory() -> None:
    """Make every new LogRecord carry the ``kr_*`` attributes (idempotent, chains the old factory)."""
    global _installed
    if _installed:
        return
    _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        ctx = _current.get()
        if ctx is None:
            record.kr_controller = record.kr_key = record.kr_reconcile_id = record.kr_context = ""
        else:
            record.kr_controller, record.kr_key = ctx.controller, ctx.key
            record.kr_reconcile_id, record.kr_context = ctx.reconcile_id, ctx.render()
        return record

    logging.setLogRecordFactory(factory)


def setup(level: int | str = logging.INFO, fmt: str = DEFAULT_FORMAT) -> None:
    """Configure the root logger to stderr with a format that shows the reconcile context."""
    install_record_factory()
    logging.basicConfig(level=level, format=fmt, force=True)
