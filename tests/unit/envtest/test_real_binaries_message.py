"""kube_runtime/envtest/real.py: when the real backend's binaries are missing, the error says
where it looked, where that directory came from, and that it must be the ``bin/`` folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from kube_runtime.envtest.real import (
    BINARIES,
    RealCluster,
    RealClusterError,
    missing_binaries_message,
)


def install(folder: Path, names: tuple[str, ...] = BINARIES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = folder / name
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)


def test_all_present_is_no_message(tmp_path: Path) -> None:
    install(tmp_path)
    assert missing_binaries_message(tmp_path) is None


def test_the_variable_naming_the_parent_of_bin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path / "bin")
    monkeypatch.setenv("KUBE_RUNTIME_REAL_BIN", str(tmp_path))
    message = missing_binaries_message()
    assert message is not None
    assert f"missing etcd, kube-apiserver, kube-controller-manager in {tmp_path} " in message
    assert "(from $KUBE_RUNTIME_REAL_BIN)" in message
    assert f"they are in {tmp_path / 'bin'}: name that folder" in message
    assert "KUBE_RUNTIME_REAL_BIN must name the bin/ folder holding etcd, kube-apiserver" in message
    assert "scripts/real-apiserver.sh" in message


def test_the_default_directory_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBE_RUNTIME_REAL_BIN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    message = missing_binaries_message()
    assert message is not None
    default = tmp_path / ".cache" / "kube-runtime" / "k8s-1.20" / "bin"
    assert f"in {default} (the build cache; set $KUBE_RUNTIME_REAL_BIN for another)" in message
    assert "name that folder" not in message


def test_one_missing_binary_is_named_alone(tmp_path: Path) -> None:
    install(tmp_path, ("etcd", "kube-apiserver"))
    message = missing_binaries_message(tmp_path)
    assert message is not None
    assert message.startswith(
        f"real backend: missing kube-controller-manager in {tmp_path} (given)"
    )


def test_real_cluster_refuses_with_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBE_RUNTIME_REAL_BIN", str(tmp_path))
    with pytest.raises(RealClusterError, match=r"from \$KUBE_RUNTIME_REAL_BIN.*bin/ folder"):
        RealCluster()
