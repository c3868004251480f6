"""The serving certificate's reload (kube_runtime.webhook._certwatcher), polled by hand: a new
pair is loaded, a half-written one keeps the old context, a missing one fails at once."""

from __future__ import annotations

import shutil
import ssl
import threading
from pathlib import Path

import pytest

from kube_runtime.envtest.server import tls
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.webhook import CertWatcher, Server


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[tls.ServingCerts, tls.ServingCerts]:
    base = tmp_path_factory.mktemp("pairs")
    return tls.generate(base / "a"), tls.generate(base / "b")


def install(pair: tls.ServingCerts, directory: Path, *names: str) -> None:
    directory.mkdir(exist_ok=True)
    for name in names or ("server.crt", "server.key"):
        shutil.copyfile(pair.directory / name, directory / name)


def watcher(directory: Path) -> CertWatcher:
    return CertWatcher(directory / "server.crt", directory / "server.key", interval=0.01)


def test_a_changed_pair_is_loaded_once(pairs: tuple[tls.ServingCerts, ...], tmp_path: Path) -> None:
    a, b = pairs
    install(a, tmp_path)
    w = watcher(tmp_path)
    first = w.context
    assert w.check() is False and w.context is first and w.reloads == 0
    install(b, tmp_path)  # same sizes, same second: the contents tell
    assert w.check() is True and w.context is not first and w.reloads == 1
    assert w.check() is False and w.reloads == 1


def test_a_half_written_pair_keeps_the_old_context_until_complete(
    pairs: tuple[tls.ServingCerts, ...], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = pairs
    install(a, tmp_path)
    w = watcher(tmp_path)
    first = w.context
    install(b, tmp_path, "server.crt")  # the key is still a's: they do not match
    assert w.check() is False and w.check() is False
    assert w.context is first
    assert len([r for r in caplog.records if "cannot load the certificate" in r.message]) == 1
    install(b, tmp_path, "server.key")
    assert w.check() is True and w.context is not first


def test_a_missing_file_fails_at_once_and_later_keeps_the_context(
    pairs: tuple[tls.ServingCerts, ...], tmp_path: Path
) -> None:
    with pytest.raises(OSError):
        watcher(tmp_path)
    install(pairs[0], tmp_path)
    w = watcher(tmp_path)
    (tmp_path / "server.key").unlink()
    assert w.check() is False and isinstance(w.context, ssl.SSLContext)


def test_run_polls_until_stopped(pairs: tuple[tls.ServingCerts, ...], tmp_path: Path) -> None:
    install(pairs[0], tmp_path)
    w = watcher(tmp_path)
    stop = threading.Event()
    thread = threading.Thread(target=w.run, args=(stop,))
    thread.start()
    install(pairs[1], tmp_path)
    wait_for(lambda: w.reloads == 1, timeout=5, message="the reload")
    stop.set()
    thread.join(5)
    assert not thread.is_alive()


def test_a_server_without_its_certificate_does_not_start(tmp_path: Path) -> None:
    server = Server(cert_dir=tmp_path, port=0, host="127.0.0.1")
    with pytest.raises(RuntimeError, match="cannot load the certificate"):
        server.start(threading.Event())
    with pytest.raises(RuntimeError, match="not bound"):
        _ = server.address
    assert not server.started
    with pytest.raises(RuntimeError, match="not been started"):
        server.started_check()
