"""Files that hold secrets (kubeconfigs with tokens, private keys): private from the first byte.

:func:`write_private` never lets another local user read a secret, not even for a moment: the
data goes to a new temporary file in the target's directory, created with ``O_EXCL`` and
``O_NOFOLLOW`` and mode 0600 (whatever the umask), flushed to disk, then renamed over the
target. A rename replaces a symlink at the target; it never writes through it. A missing
directory is created 0700.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_private"]


def write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Atomically replace ``path`` with ``data``, readable and writable by its owner only."""
    target = Path(path)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkstemp: O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600 regardless of the umask
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target
