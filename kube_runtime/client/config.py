"""Where the client's connection settings come from, and the HTTP transport they make.

Configuration is the ``kubernetes`` package's: :func:`load_kubeconfig` and
:func:`load_in_cluster` fill a ``kubernetes.client.Configuration`` with its loaders (exec
plugins, OIDC, client certificates, token files and their refresh hooks all keep working).
:func:`pool_manager` turns a Configuration into one urllib3 pool for TLS, client certs, SNI
and proxies (the same choices as the package's ``rest.RESTClientObject``), and
:class:`Credentials` produces the ``Authorization`` header for each request.
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import urllib3

__all__ = [
    "Credentials",
    "in_cluster_available",
    "keepalive_socket_options",
    "kubeconfig_path",
    "load_in_cluster",
    "load_kubeconfig",
    "pool_manager",
]

DEFAULT_KUBECONFIG = "~/.kube/config"


def kubeconfig_path(path: str | os.PathLike[str] | None = None) -> str:
    """The kubeconfig to read: ``path``, else ``$KUBECONFIG`` (a ``:``-separated list the
    loader merges, first file winning per entry), else ``~/.kube/config``."""
    if path is not None:
        return os.fspath(path)
    env = os.environ.get("KUBECONFIG", "")
    if env.strip(os.pathsep):
        return env
    return str(Path(DEFAULT_KUBECONFIG).expanduser())


def load_kubeconfig(path: str | os.PathLike[str] | None = None, context: str | None = None) -> Any:
    """A Configuration from a kubeconfig (see :func:`kubeconfig_path`) and ``context``
    (None: the file's current-context). Raises ``kubernetes.config.ConfigException``."""
    # The kubernetes package costs ~0.5 s to import: only processes that load a config pay it.
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    cfg = k8s_client.Configuration()
    k8s_config.load_kube_config(
        config_file=kubeconfig_path(path),
        context=context,
        client_configuration=cfg,
        persist_config=False,
    )
    return cfg


def in_cluster_available() -> bool:
    """True inside a pod (``KUBERNETES_SERVICE_HOST`` is set)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


#: Where a pod's ServiceAccount token and the cluster CA are mounted.
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def load_in_cluster(token_path: str | None = None, ca_path: str | None = None) -> Any:
    """A Configuration from the pod's service account: ``$KUBERNETES_SERVICE_HOST`` and
    ``_PORT``, the token (re-read as it rotates) and the CA in :data:`SERVICE_ACCOUNT_DIR`
    (``token_path`` / ``ca_path`` point elsewhere, e.g. in a test)."""
    from kubernetes import client as k8s_client
    from kubernetes.config.incluster_config import InClusterConfigLoader

    cfg = k8s_client.Configuration()
    InClusterConfigLoader(
        token_filename=token_path or f"{SERVICE_ACCOUNT_DIR}/token",
        cert_filename=ca_path or f"{SERVICE_ACCOUNT_DIR}/ca.crt",
    ).load_and_set(cfg)
    return cfg


def keepalive_socket_options(idle: int = 30, interval: int = 15, count: int = 9) -> list[Any]:
    """urllib3's default socket options plus TCP keep-alive probing, as client-go's dialer
    (30 s idle; the kernel options a platform lacks are left out)."""
    options: list[Any] = list(urllib3.connection.HTTPConnection.default_socket_options)
    options.append((socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1))
    for name, value in (
        ("TCP_KEEPIDLE", idle),
        ("TCP_KEEPINTVL", interval),
        ("TCP_KEEPCNT", count),
    ):
        if hasattr(socket, name):
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    return options


def _bypasses_proxy(host: str, no_proxy: str) -> bool:
    """``no_proxy`` rules: ``*``, a host name or domain suffix, or ``host:port``."""
    url = urllib.parse.urlparse(host)
    hostname, netloc = (url.hostname or "").lower(), url.netloc.lower()
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        entry = entry.lstrip(".")
        if entry and (hostname == entry or hostname.endswith("." + entry) or netloc == entry):
            return True
    return False


DEFAULT_POOL_SIZE = 64
"""Connections kept per host at least (idle ones beyond it are closed, never blocked on)."""


def pool_manager(cfg: Any, *, maxsize: int | None = None) -> urllib3.PoolManager:
    """One urllib3 pool for ``cfg``'s host: TLS verification, CA, client certificate,
    hostname checks/SNI, keep-alive sockets, HTTP(S)/SOCKS proxy (honouring ``no_proxy``)."""
    args: dict[str, Any] = {
        "cert_reqs": ssl.CERT_REQUIRED if cfg.verify_ssl else ssl.CERT_NONE,
        "ca_certs": cfg.ssl_ca_cert,
        "ca_cert_data": getattr(cfg, "ca_cert_data", None),
        "cert_file": cfg.cert_file,
        "key_file": cfg.key_file,
        # One client serves every informer's watch (a socket each, held open) plus the
        # workers and recorders: the official client's default (5 x CPUs) overflows.
        "maxsize": maxsize
        or max(DEFAULT_POOL_SIZE, getattr(cfg, "connection_pool_maxsize", 0) or 0),
        # Watches and long lists need sockets that notice a dead peer (as client-go's dialer).
        "socket_options": cfg.socket_options
        if getattr(cfg, "socket_options", None) is not None
        else keepalive_socket_options(),
    }
    if cfg.assert_hostname is not None:
        args["assert_hostname"] = cfg.assert_hostname
    if getattr(cfg, "tls_server_name", None):
        args["server_hostname"] = cfg.tls_server_name
    proxy = cfg.proxy
    if proxy and not _bypasses_proxy(cfg.host, getattr(cfg, "no_proxy", None) or ""):
        if proxy.split("://", 1)[0].lower() in ("socks4", "socks4a", "socks5", "socks5h"):
            from urllib3.contrib.socks import SOCKSProxyManager

            return SOCKSProxyManager(proxy, headers=cfg.proxy_headers, **args)
        if cfg.proxy_headers:
            args["proxy_headers"] = cfg.proxy_headers
        if getattr(cfg, "proxy_ssl_context", None) is not None:
            args["proxy_ssl_context"] = cfg.proxy_ssl_context
        return urllib3.ProxyManager(proxy, **args)
    return urllib3.PoolManager(**args)


class Credentials:
    """The ``Authorization`` header for a Configuration, refreshed as its loader requires.

    ``Configuration.get_api_key_with_prefix`` runs the loader's ``refresh_api_key_hook``
    (exec plugins, expiring OIDC tokens, rotated service-account tokens). The hook rewrites
    several Configuration fields and costs tens of microseconds, so it runs at most once per
    ``refresh_interval`` seconds (serialized; the header is reused in between) and again right
    after :meth:`invalidate` (the client calls it on a 401). Basic auth is used when
    configured and no token is.
    """

    def __init__(self, cfg: Any, refresh_interval: float = 1.0) -> None:
        self._cfg = cfg
        self._lock = threading.Lock()
        self._interval = refresh_interval
        self._header: str | None = None
        self._fetched_at: float | None = None

    def header(self) -> str | None:
        fetched = self._fetched_at
        if fetched is not None and time.monotonic() - fetched < self._interval:
            return self._header
        with self._lock:
            cfg = self._cfg
            token = cfg.get_api_key_with_prefix("BearerToken", alias="authorization")
            if token:
                self._header = str(token)
            elif cfg.username or cfg.password:
                self._header = str(cfg.get_basic_auth_token())
            else:
                self._header = None
            # Without a hook the credentials cannot change by themselves: keep them.
            self._fetched_at = (
                time.monotonic() if cfg.refresh_api_key_hook is not None else float("inf")
            )
            return self._header

    def invalidate(self) -> None:
        """Refresh on the next request (the server rejected the current credentials)."""
        self._fetched_at = None
