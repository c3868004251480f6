"""The embedded store's journal on disk (kube_runtime/envtest/server/persist.py) and the store's
side of it: a commit is recorded before it takes effect, a failed record changes nothing (500),
and a store loaded from the journal continues its resourceVersions and expires older watches."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.persist import DATABASE, Journal, JournalError, Record
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import Event, Store, Stored
from kube_runtime.envtest.server.strategy import KubeStrategy

NS = "ns"


def _records(journal: Journal) -> dict[tuple[str, str, str, str], Any]:
    return {
        (r.group, r.resource, r.namespace, r.name): orjson.loads(r.body) for r in journal.records()
    }


def _store(journal: Journal | None) -> tuple[Store, ResourceInfo]:
    registry = Registry()
    store = Store(registry, KubeStrategy(), journal=journal)
    cms = registry.by_key("", "configmaps")
    assert cms is not None
    return store, cms


def _namespaces(store: Store) -> ResourceInfo:
    info = store.registry.by_key("", "namespaces")
    assert info is not None
    return info


def _restored(journal: Journal) -> tuple[Store, ResourceInfo]:
    """A new store holding what ``journal`` holds (as the cluster restores it)."""
    store, cms = _store(None)
    registry = store.registry

    def info_of(r: Record) -> ResourceInfo:
        info = registry.by_key(r.group, r.resource)
        assert info is not None
        return info

    store.load(
        ((info_of(r), Stored.decode(r.body)) for r in journal.records()), journal.resource_version()
    )
    store.journal = journal
    return store, cms


# ------------------------------------------------------------------ the journal alone


def test_a_new_journal_is_private_and_empty(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    journal = Journal.open(directory)
    try:
        assert journal.resource_version() == 0
        assert list(journal.records()) == []
        assert directory.stat().st_mode & 0o777 == 0o700
        assert (directory / DATABASE).stat().st_mode & 0o777 == 0o600
    finally:
        journal.close()


def test_records_and_tombstones_survive_reopening(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    journal.record(("", "configmaps"), (NS, "a"), 5, b'{"v":1}')
    journal.record(("", "configmaps"), (NS, "b"), 6, b'{"v":2}')
    journal.record(("", "configmaps"), (NS, "a"), 7, b'{"v":3}')
    journal.record(("", "configmaps"), (NS, "b"), 8, None)
    journal.close()
    again = Journal.open(tmp_path)
    try:
        assert again.resource_version() == 8  # a deletion moves the counter too
        assert list(again.records()) == [Record("", "configmaps", NS, "a", 7, b'{"v":3}')]
    finally:
        again.close()


def test_a_directory_serves_one_process_at_a_time(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    try:
        with pytest.raises(JournalError, match="in use by another process"):
            Journal.open(tmp_path)
    finally:
        journal.close()
    Journal.open(tmp_path).close()  # free again once closed


def test_a_file_that_is_not_a_journal_is_refused(tmp_path: Path) -> None:
    (tmp_path / DATABASE).write_bytes(b"not a database at all" * 100)
    with pytest.raises(JournalError, match="not a kube-runtime journal"):
        Journal.open(tmp_path)


def test_a_symlink_in_place_of_the_database_is_refused(tmp_path: Path) -> None:
    (tmp_path / DATABASE).symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(JournalError, match="cannot open the data directory"):
        Journal.open(tmp_path)
    assert not (tmp_path / "elsewhere.db").exists()


def test_a_failed_write_records_nothing(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    journal.record(("", "configmaps"), (NS, "a"), 1, b"{}")
    journal._db.execute(
        "CREATE TRIGGER refuse BEFORE UPDATE ON counters BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
    )
    with pytest.raises(JournalError, match="disk says no"):
        journal.record(("", "configmaps"), (NS, "b"), 2, b"{}")
    journal._db.execute("DROP TRIGGER refuse")
    assert journal.resource_version() == 1
    assert [r.name for r in journal.records()] == ["a"]  # the object row went with it
    journal.close()


def test_synchronous_full_is_accepted(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path, synchronous="FULL")
    try:
        assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        journal.close()


# ----------------------------------------------------------------- the store's side


def test_every_commit_is_in_the_journal_before_it_is_answered(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    store, cms = _store(journal)
    store.create(_namespaces(store), None, {"metadata": {"name": NS}})
    seen: list[dict[tuple[str, str, str, str], Any]] = []
    store.add_listener(lambda event: seen.append(_records(journal)))
    a = store.create(cms, NS, {"metadata": {"name": "a"}, "data": {"n": "1"}})
    assert seen[-1][("", "configmaps", NS, "a")] == a.obj  # on disk when the event went out
    b = store.update(cms, NS, "a", {"metadata": {"name": "a"}, "data": {"n": "2"}})
    assert _records(journal)[("", "configmaps", NS, "a")] == b.obj
    store.delete(cms, NS, "a")
    assert ("", "configmaps", NS, "a") not in _records(journal)
    assert journal.resource_version() == store.resource_version
    journal.close()


class _RefusingJournal:
    """A journal whose disk fails every write."""

    def record(self, resource: Any, key: Any, resource_version: int, body: Any) -> None:
        raise JournalError("cannot write /data/cluster.db: disk I/O error")


def test_a_write_the_journal_refuses_answers_500_and_changes_nothing(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    store, cms = _store(journal)
    store.create(_namespaces(store), None, {"metadata": {"name": NS}})
    before = store.create(cms, NS, {"metadata": {"name": "a"}, "data": {"n": "1"}})
    rv = store.resource_version
    events: list[Event] = []
    store.add_listener(events.append)
    store.journal = _RefusingJournal()  # type: ignore[assignment]
    for write in (
        lambda: store.create(cms, NS, {"metadata": {"name": "b"}}),
        lambda: store.update(cms, NS, "a", {"metadata": {"name": "a"}, "data": {"n": "2"}}),
        lambda: store.delete(cms, NS, "a"),
    ):
        with pytest.raises(ApiError) as err:
            write()
        assert err.value.code == 500
        assert "disk I/O error" in err.value.message
    assert store.resource_version == rv
    assert events == []
    assert store.get(cms, NS, "a") is before
    assert store.try_get(cms, NS, "b") is None
    store.journal = journal  # the disk is back: writes go on from the same version
    assert int(store.create(cms, NS, {"metadata": {"name": "b"}}).meta["resourceVersion"]) == rv + 1
    journal.close()


def test_without_a_journal_nothing_is_written(tmp_path: Path) -> None:
    store, cms = _store(None)
    store.create(_namespaces(store), None, {"metadata": {"name": NS}})
    store.create(cms, NS, {"metadata": {"name": "a"}})
    assert store.journal is None
    assert list(tmp_path.iterdir()) == []


def test_a_loaded_store_continues_versions_and_expires_older_watches(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    store, cms = _store(journal)
    store.create(_namespaces(store), None, {"metadata": {"name": NS}})
    store.create(cms, NS, {"metadata": {"name": "a"}, "data": {"n": "1"}})
    store.create(cms, NS, {"metadata": {"name": "gone"}})
    store.delete(cms, NS, "gone")  # the newest version is a deletion
    last = store.resource_version
    journal.close()

    restored, cms = _restored(Journal.open(tmp_path))
    assert restored.resource_version == last
    assert [s.meta["name"] for s in restored.list(cms, NS).items] == ["a"]
    assert restored.get(cms, NS, "a").obj == store.get(cms, NS, "a").obj
    # older than the restart: 410, as after a compaction; the current version: a watch
    for resource in (cms, _namespaces(restored)):
        with pytest.raises(ApiError) as err:
            restored.watch(resource, None, str(last - 1), lambda obj: True, lambda *a: None)
        assert err.value.code == 410
        assert "too old resource version" in err.value.message
    got: list[tuple[str, str]] = []
    restored.watch(
        cms, NS, str(last), lambda obj: True, lambda t, s, rv: got.append((t, s.meta["name"]))
    )
    created = restored.create(cms, NS, {"metadata": {"name": "b"}})
    assert int(created.meta["resourceVersion"]) == last + 1
    assert got == [("ADDED", "b")]
    # a resource first written after the restart expires older watches too
    secrets = restored.registry.by_key("", "secrets")
    assert secrets is not None
    with pytest.raises(ApiError):
        restored.watch(secrets, None, "1", lambda obj: True, lambda *a: None)
    assert restored.journal is not None
    restored.journal.close()


def test_a_loaded_store_knows_owners_and_uids(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    store, cms = _store(journal)
    store.create(_namespaces(store), None, {"metadata": {"name": NS}})
    owner = store.create(cms, NS, {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.meta["uid"]}
    dep = store.create(cms, NS, {"metadata": {"name": "dep", "ownerReferences": [ref]}})
    journal.close()
    restored, cms = _restored(Journal.open(tmp_path))
    found = restored.get_by_uid(dep.meta["uid"])
    assert found is not None and found[1].meta["name"] == "dep"
    assert [s.meta["name"] for _, s in restored.dependents_of(owner.meta["uid"])] == ["dep"]
    assert restored.get(cms, NS, "dep").raw == dep.raw  # the stored encoding, reused
    assert restored.journal is not None
    restored.journal.close()


def test_load_needs_an_empty_store() -> None:
    store, _cms = _store(None)
    store.create(_namespaces(store), None, {"metadata": {"name": NS}})
    with pytest.raises(RuntimeError):
        store.load([], 0)


def test_the_journal_is_plain_sqlite(tmp_path: Path) -> None:
    """Anyone can inspect a data directory with the sqlite3 tool (once the server stopped)."""
    journal = Journal.open(tmp_path)
    journal.record(("apps", "deployments"), (NS, "web"), 3, b'{"kind":"Deployment"}')
    journal.close()
    db = sqlite3.connect(tmp_path / DATABASE)
    try:
        rows = db.execute("SELECT grp, resource, namespace, name, rv FROM objects").fetchall()
        assert rows == [("apps", "deployments", NS, "web", 3)]
    finally:
        db.close()
