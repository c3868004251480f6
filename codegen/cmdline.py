"""What both commands (``kube-runtime codegen``, :mod:`codegen.cli`; ``kube-runtime crd``,
:mod:`codegen.crdgen`) share on the command line: one-line usage errors, file errors without
Python's decoration, writing the output file or checking that it is up to date."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

__all__ = ["ArgumentParser", "add_check_argument", "file_error", "os_error", "write_or_check"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage mistakes on one line (``PROG: error: ... (see --help)``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def os_error(err: OSError) -> str:
    """``path: reason`` for a file error (no errno, no Python repr)."""
    where = err.filename if err.filename is not None else ""
    reason = err.strerror or str(err)
    return f"{where}: {reason}" if where else reason


def file_error(err: OSError | UnicodeDecodeError, path: object) -> str:
    """The message of a file error: :func:`os_error`, or ``path: not UTF-8 text (byte N)``."""
    if isinstance(err, UnicodeDecodeError):
        return f"{path}: not UTF-8 text (byte {err.start})"
    return os_error(err)


def add_check_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--check`` flag of a command that writes with :func:`write_or_check`."""
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if OUTPUT differs from what would be generated",
    )


def write_or_check(
    text: str, output: str | None, *, check: bool, prog: str, argv: Sequence[str] | None
) -> int:
    """Write the generated ``text`` to ``output`` (standard output when None) and return 0;
    with ``check``, write nothing: 0 when ``output`` holds ``text`` already, else 1 after
    saying on standard error that it is missing or stale and how to regenerate it (``prog``
    and ``argv``, ``sys.argv[1:]`` when None, without ``--check``). File errors
    (``OSError``, ``UnicodeDecodeError``) propagate (:func:`file_error` words them)."""
    if output is None:
        sys.stdout.write(text)
        return 0
    out = Path(output)
    if check:
        current = out.read_text(encoding="utf-8") if out.exists() else None
        if current == text:
            return 0
        state = "is missing" if current is None else "is stale"
        again = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--check"]
        command = " ".join(shlex.quote(a) for a in [*prog.split(), *again])
        print(f"{out} {state}; regenerate it with:\n  {command}", file=sys.stderr)
        return 1
    out.write_text(text, encoding="utf-8")
    return 0
