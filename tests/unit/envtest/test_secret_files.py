"""Secrets on disk (issue 18 part 3): private from the first byte, atomic, no symlink followed."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from kube_runtime.envtest import secretfiles
from kube_runtime.envtest.kubeconfig import kubeconfig, write_kubeconfig
from kube_runtime.envtest.secretfiles import write_private
from kube_runtime.envtest.server import tls


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_file_is_private_from_its_first_byte_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real_replace = os.replace

    def spy(src: str, dst: str | Path) -> None:
        seen.append(mode(Path(src)))  # the data is in, the file not yet in place
        real_replace(src, dst)

    monkeypatch.setattr(secretfiles.os, "replace", spy)
    old = os.umask(0)
    try:
        target = write_private(tmp_path / "new" / "kubeconfig", b"token: s3cret\n")
    finally:
        os.umask(old)
    assert seen == [0o600]
    assert mode(target) == 0o600 and target.read_bytes() == b"token: s3cret\n"
    assert mode(target.parent) == 0o700
    assert [p.name for p in target.parent.iterdir()] == ["kubeconfig"]  # no temporary left


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = tmp_path / "kubeconfig"
    link.symlink_to(victim)
    write_kubeconfig(kubeconfig("https://127.0.0.1:1", token="t", ca_pem=None), link)
    assert victim.read_text() == "precious"
    assert not link.is_symlink() and "token: t" in link.read_text() and mode(link) == 0o600


def test_readers_see_the_old_or_the_new_file_never_a_part(tmp_path: Path) -> None:
    target = tmp_path / "kubeconfig"
    old, new = b"a" * 200_000, b"b" * 300_000
    write_private(target, old)
    seen: set[bytes] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(target.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(20):
            write_private(target, new)
            write_private(target, old)
    finally:
        stop.set()
        reader.join()
    assert seen <= {old, new}


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    target = tmp_path / "kubeconfig"
    write_private(target, b"old")
    fsync = mocker.patch.object(secretfiles.os, "fsync", side_effect=OSError("disk full"))
    with pytest.raises(OSError, match="disk full"):
        write_private(target, b"new")
    fsync.assert_called_once()  # the new data was written, then failed to reach the disk
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["kubeconfig"]


def test_the_tls_key_is_private_and_its_own_directory_goes_on_remove(tmp_path: Path) -> None:
    certs = tls.generate()
    try:
        assert certs.owned and mode(certs.directory) == 0o700
        assert mode(certs.directory / "server.key") == 0o600
    finally:
        certs.remove()
    assert not certs.directory.exists()
    given = tls.generate(tmp_path / "mine")
    given.remove()  # a directory the caller chose is theirs: kept
    assert (tmp_path / "mine" / "server.key").exists() and mode(
        tmp_path / "mine" / "server.key"
    ) == 0o600
