"""The embedded store's write-ahead journal on disk: SQLite (standard library) in WAL mode.

The journal holds the current version of every object, one row per (group, resource,
namespace, name) with the object's JSON, and the store's resourceVersion counter.
:meth:`Journal.record` writes one committed version (or removes the row: the tombstone of a
DELETED event) together with the counter in one transaction, and returns only once SQLite has
committed it; :class:`~.storage.Store` calls it before changing anything in memory and before
the write is answered, so a write that was acknowledged is on disk, and a write that failed
here (:class:`JournalError`) changed nothing. :meth:`Journal.load` reads the state back when
the cluster starts again on the same directory.

Durability: ``synchronous=NORMAL`` (the default) survives the death of the process at any
moment, SIGKILL included: a transaction is complete in the WAL file (in the operating system's
page cache) when COMMIT returns, and SQLite documents transactions as durable across
application crashes whatever the synchronous setting. An operating-system crash or a power
loss may roll back the last transactions (never corrupt the database); ``synchronous="FULL"``
closes that window with an fsync per write, at a cost (see docs/RELIABILITY.md).

One process at a time: the database is opened in EXCLUSIVE locking mode and locked at
:meth:`Journal.open`; a second server on the same directory gets :class:`JournalError`. The
lock goes with the process, however it ends. The directory is created 0700 and the database
0600: it holds Secrets.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["DATABASE", "Journal", "JournalError", "Record", "Synchronous"]

#: The database's file name inside the data directory.
DATABASE = "cluster.db"
_SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS objects ("
    " grp TEXT NOT NULL, resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    " rv INTEGER NOT NULL, body BLOB NOT NULL,"
    " PRIMARY KEY (grp, resource, namespace, name)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO counters (name, value) VALUES ('resourceVersion', 0)",
)
_PUT = "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)"
_DELETE = "DELETE FROM objects WHERE grp = ? AND resource = ? AND namespace = ? AND name = ?"
_COUNTER = "UPDATE counters SET value = ? WHERE name = 'resourceVersion'"

Synchronous = Literal["NORMAL", "FULL"]
"""SQLite's ``synchronous`` settings a journal accepts (see the module's docstring)."""


class JournalError(Exception):
    """The journal could not be opened, read or written (nothing was recorded)."""


@dataclass(frozen=True)
class Record:
    """One stored object as the journal holds it: where it lives and its JSON encoding."""

    group: str
    resource: str
    namespace: str
    name: str
    resource_version: int
    body: bytes


class Journal:
    """The SQLite database of one data directory. Not thread-safe: the store calls it under
    its lock. Open with :meth:`open`; :meth:`close` when the cluster stops."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        #: The database file.
        self.path = path

    @classmethod
    def open(
        cls, directory: str | os.PathLike[str], *, synchronous: Synchronous = "NORMAL"
    ) -> Journal:
        """Open (creating when absent) the journal in ``directory`` and lock it for this
        process; :class:`JournalError` when it is in use or not a journal."""
        root = Path(directory)
        path = root / DATABASE
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
            # The database (and the -wal file SQLite creates with the same mode) are private
            # from the first byte; an existing file keeps its mode, a symlink is refused.
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
        except OSError as e:
            raise JournalError(f"cannot open the data directory {root}: {e}") from None
        try:
            db = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise JournalError(f"cannot open {path}: {e}") from None
        try:
            # EXCLUSIVE before WAL: no shared-memory index, and the first write below takes a
            # lock held until the connection closes (or the process dies).
            db.execute("PRAGMA locking_mode = EXCLUSIVE")
            mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"{path}: SQLite refused WAL mode ({mode})")
            db.execute(f"PRAGMA synchronous = {synchronous}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _SCHEMA_VERSION):
                raise JournalError(f"{path}: unknown journal format {version}")
            db.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            db.execute("COMMIT")
        except sqlite3.OperationalError as e:
            db.close()
            if "locked" in str(e) or "busy" in str(e):
                raise JournalError(
                    f"the data directory {root} is in use by another process"
                ) from None
            raise JournalError(f"cannot open {path}: {e}") from None
        except sqlite3.DatabaseError as e:
            db.close()
            raise JournalError(f"{path} is not a kube-runtime journal: {e}") from None
        except JournalError:
            db.close()
            raise
        return cls(db, path)

    # ------------------------------------------------------------------ reads

    def resource_version(self) -> int:
        """The last resourceVersion recorded (0 for a new journal)."""
        try:
            row = self._db.execute(
                "SELECT value FROM counters WHERE name = 'resourceVersion'"
            ).fetchone()
        except sqlite3.Error as e:
            raise JournalError(f"cannot read {self.path}: {e}") from None
        return int(row[0]) if row else 0

    def records(self) -> Iterator[Record]:
        """Every stored object, ordered by (group, resource, namespace, name)."""
        try:
            rows = self._db.execute(
                "SELECT grp, resource, namespace, name, rv, body FROM objects"
                " ORDER BY grp, resource, namespace, name"
            ).fetchall()
        except sqlite3.Error as e:
            raise JournalError(f"cannot read {self.path}: {e}") from None
        for group, resource, namespace, name, rv, body in rows:
            yield Record(group, resource, namespace, name, int(rv), bytes(body))

    # ----------------------------------------------------------------- writes

    def record(
        self,
        resource: tuple[str, str],
        key: tuple[str, str],
        resource_version: int,
        body: bytes | None,
    ) -> None:
        """Record the version ``resource_version`` of object ``key`` (namespace, name) of
        ``resource`` (group, plural): its JSON ``body``, or its removal when None, with the
        counter, in one transaction. Returns once committed; :class:`JournalError` (and
        nothing recorded) otherwise."""
        db = self._db
        where = (resource[0], resource[1], key[0], key[1])
        try:
            db.execute("BEGIN")
            if body is None:
                db.execute(_DELETE, where)
            else:
                db.execute(_PUT, (*where, resource_version, body))
            db.execute(_COUNTER, (resource_version,))
            db.execute("COMMIT")
        except sqlite3.Error as e:
            if db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise JournalError(f"cannot write {self.path}: {e}") from None

    def close(self) -> None:
        """Close the database (its WAL is checkpointed) and release the directory's lock."""
        try:
            self._db.close()
        except sqlite3.Error:
            pass
