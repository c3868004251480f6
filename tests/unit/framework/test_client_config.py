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


# ------------------------------------------------------------------ kubeconfig -> settings

_CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
_READ = (
    "host", "verify_ssl", "ca_cert_data", "assert_hostname",
    "tls_server_name", "proxy", "proxy_headers", "no_proxy", "proxy_ssl_context",
    "socket_options", "retries", "username", "password", "connection_pool_maxsize",
)  # fmt: skip


def _write(tmp_path: Path, cluster: dict[str, object], user: dict[str, object] | None) -> Path:
    import yaml

    context: dict[str, object] = {"cluster": "c"}
    if user is not None:
        context["user"] = "u"
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user or {}}],
                "contexts": [
                    {"name": "other", "context": {"cluster": "missing"}},
                    {"name": "ctx", "context": context},
                ],
                "current-context": "ctx",
            }
        )
    )
    return path


def _package(path: Path, context: str | None = None) -> Configuration:
    from kubernetes import config as k8s_config

    cfg = Configuration()
    k8s_config.load_kube_config(
        config_file=str(path), context=context, client_configuration=cfg, persist_config=False
    )
    return cfg


def _content(name: str | None) -> bytes | None:
    return Path(name).read_bytes() if name else None


@pytest.mark.parametrize(
    ("cluster", "user"),
    [
        ({"server": "https://h:6443/", "certificate-authority-data": "CA"}, {"token": "t"}),
        ({"server": "http://127.0.0.1:1"}, {"token": "t"}),
        ({"server": "http://127.0.0.1:1"}, None),
        ({"server": "https://h", "certificate-authority": "ca.pem"}, {"username": "a", "password": "b"}),
        ({"server": "https://h", "insecure-skip-tls-verify": True, "tls-server-name": "k"},
         {"token": "", "username": "a", "password": "b"}),
        ({"server": "https://h", "proxy-url": "http://proxy:3128"},
         {"client-certificate": "ca.pem", "client-key-data": "CA"}),
        ({"server": "http://h", "certificate-authority": "absent.pem"},
         {"client-certificate-data": "CA"}),
    ],
)  # fmt: skip
def test_a_simple_kubeconfig_is_read_as_the_package_reads_it(
    tmp_path: Path, cluster: dict[str, object], user: dict[str, object] | None
) -> None:
    import base64

    from kube_runtime.client.config import Settings, load_kubeconfig

    (tmp_path / "ca.pem").write_bytes(_CA_PEM)
    encoded = base64.b64encode(_CA_PEM).decode()
    cluster = {k: encoded if v == "CA" else v for k, v in cluster.items()}
    user = {k: encoded if v == "CA" else v for k, v in user.items()} if user else user
    path = _write(tmp_path, cluster, user)
    light, real = load_kubeconfig(path), _package(path)
    assert type(light) is Settings
    for name in _READ:
        assert getattr(light, name) == getattr(real, name), name
    for name in ("ssl_ca_cert", "cert_file", "key_file"):
        assert _content(getattr(light, name)) == _content(getattr(real, name)), name
    for identifier, alias in (("BearerToken", "authorization"), ("authorization", None)):
        assert light.get_api_key_with_prefix(identifier, alias) == (
            real.get_api_key_with_prefix(identifier, alias)
        )
    assert light.get_basic_auth_token() == real.get_basic_auth_token()
    assert Credentials(light).header() == Credentials(real).header()
    assert pool_manager(light).connection_pool_kw.keys() == (
        pool_manager(real).connection_pool_kw.keys()
    )
    # Anything else is the package's Configuration's, loaded when first asked for.
    assert light.auth_settings() == real.auth_settings()


@pytest.mark.parametrize(
    ("cluster", "user"),
    [
        ({"server": "https://h"}, {"exec": {"apiVersion": "x", "command": "true"}}),
        ({"server": "https://h"}, {"tokenFile": "token"}),
        ({"server": "https://h", "extensions": []}, {"token": "t"}),
    ],
)
def test_any_other_kubeconfig_is_the_packages_configuration(
    tmp_path: Path, cluster: dict[str, object], user: dict[str, object]
) -> None:
    from kube_runtime.client.config import load_kubeconfig

    (tmp_path / "token").write_text("from-file")
    path = _write(tmp_path, cluster, user)
    assert type(load_kubeconfig(path)) is Configuration


def test_kubeconfig_errors_are_the_packages(tmp_path: Path) -> None:
    from kubernetes.config import ConfigException

    from kube_runtime.client.config import load_kubeconfig

    path = _write(tmp_path, {"server": "https://h", "certificate-authority": "absent.pem"}, None)
    with pytest.raises(ConfigException, match=r"absent\.pem"):
        load_kubeconfig(path)
    with pytest.raises(ConfigException):
        load_kubeconfig(path, context="other")  # its cluster is not in the file
    with pytest.raises(ConfigException):
        load_kubeconfig(path, context="nope")
    with pytest.raises(ConfigException):
        load_kubeconfig(tmp_path / "missing")
