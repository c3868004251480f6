"""Configuration -> transport and credentials, without a server."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import urllib3
from kubernetes.client import Configuration

from kube_runtime.client.config import (
    Credentials,
    in_cluster_available,
    keepalive_socket_options,
    kubeconfig_path,
    pool_manager,
)


def test_kubeconfig_path_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUBECONFIG", "/a:/b")
    assert kubeconfig_path(tmp_path / "x") == str(tmp_path / "x")
    assert kubeconfig_path() == "/a:/b"  # the loader merges the list
    monkeypatch.setenv("KUBECONFIG", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert kubeconfig_path() == str(tmp_path / ".kube" / "config")


def test_in_cluster_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert not in_cluster_available()
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert in_cluster_available()


def _cfg(host: str = "https://api.example:6443") -> Configuration:
    cfg = Configuration()
    cfg.host = host
    cfg.proxy = None
    return cfg


def test_pool_tls_and_keepalive() -> None:
    cfg = _cfg()
    cfg.verify_ssl = True
    cfg.ssl_ca_cert = "/ca.pem"
    cfg.tls_server_name = "kubernetes"
    pool = pool_manager(cfg)
    assert type(pool) is urllib3.PoolManager
    kw = pool.connection_pool_kw
    assert kw["ca_certs"] == "/ca.pem" and kw["server_hostname"] == "kubernetes"
    assert (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1) in kw["socket_options"]
    assert (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1) in keepalive_socket_options()


@pytest.mark.parametrize(
    ("no_proxy", "proxied"),
    [("", True), ("other.io", True), ("xample", True), ("example", False), ("*", False),
     ("api.example", False), (".example", False), ("x, api.example:6443", False)],
)  # fmt: skip
def test_proxy_and_no_proxy(no_proxy: str, proxied: bool) -> None:
    cfg = _cfg()
    cfg.proxy = "http://proxy:3128"
    cfg.no_proxy = no_proxy
    assert isinstance(pool_manager(cfg), urllib3.ProxyManager) is proxied


def test_credentials_bearer_basic_and_refresh() -> None:
    cfg = _cfg()
    assert Credentials(cfg).header() is None
    cfg.api_key = {"authorization": "Bearer t1"}
    assert Credentials(cfg).header() == "Bearer t1"

    calls = []

    def hook(c: Configuration) -> None:
        calls.append(1)
        c.api_key = {"BearerToken": f"Bearer t{len(calls)}"}

    cfg.refresh_api_key_hook = hook
    creds = Credentials(cfg, refresh_interval=3600)
    assert creds.header() == "Bearer t1"
    assert creds.header() == "Bearer t1" and len(calls) == 1  # throttled
    creds.invalidate()  # after a 401
    assert creds.header() == "Bearer t2"

    basic = _cfg()
    basic.username, basic.password = "u", "p"
    assert Credentials(basic).header() == "Basic dTpw"
