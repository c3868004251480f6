"""What both commands (``kube-runtime codegen``, :mod:`codegen.cli`; ``kube-runtime crd``,
:mod:`codegen.crdgen`) share on the command line: one-line usage errors, file errors without
Python's decoration."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["ArgumentParser", "os_error"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage mistakes on one line (``PROG: error: ... (see --help)``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def os_error(err: OSError) -> str:
    """``path: reason`` for a file error (no errno, no Python repr)."""
    where = err.filename if err.filename is not None else ""
    reason = err.strerror or str(err)
    return f"{where}: {reason}" if where else reason
