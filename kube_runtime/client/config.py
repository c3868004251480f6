"""Where the client's connection settings come from, and the HTTP transport they make.

Configuration is the ``kubernetes`` package's: :func:`load_kubeconfig` and
:func:`load_in_cluster` fill a ``kubernetes.client.Configuration`` with its loaders (exec
plugins, OIDC, client certificates, token files and their refresh hooks all keep working).
A kubeconfig that needs none of that (a server, its CA, a bearer token, basic auth or a client
certificate: what ``kube-runtime cluster`` and test clusters write) is read without importing
the package (~0.5 s of CPU per process): :func:`load_kubeconfig` then returns
:class:`Settings`, which has the Configuration attributes the client reads.
:func:`pool_manager` turns a Configuration into one urllib3 pool for TLS, client certs, SNI
and proxies (the same choices as the package's ``rest.RESTClientObject``), and
:class:`Credentials` produces the ``Authorization`` header for each request.
"""

from __future__ import annotations

import atexit
import base64
import os
import socket
import ssl
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import urllib3

__all__ = [
    "Credentials",
    "Settings",
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


class Settings:
    """Connection settings with the attributes (and defaults) of a
    ``kubernetes.client.Configuration`` that :class:`~kube_runtime.client.Client`,
    :func:`pool_manager` and :class:`Credentials` read, built without importing the package.

    ``api_key`` / ``api_key_prefix`` work as the Configuration's (``get_api_key_with_prefix``);
    any other attribute is read from the Configuration ``fallback()`` returns, built on first
    use (None: such an attribute is an AttributeError). Attributes may be set as on a
    Configuration.
    """

    verify_ssl: bool = True
    ssl_ca_cert: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    ca_cert_data: str | None = None
    assert_hostname: str | None = None
    tls_server_name: str | None = None
    proxy: str | None = None
    proxy_headers: dict[str, str] | None = None
    no_proxy: str | None = None
    proxy_ssl_context: Any = None
    socket_options: Any = None
    retries: Any = None
    username: str | None = None
    password: str | None = None
    refresh_api_key_hook: Callable[[Any], None] | None = None

    def __init__(
        self,
        host: str = "http://localhost",
        *,
        api_key: dict[str, str] | None = None,
        fallback: Callable[[], Any] | None = None,
        **settings: Any,
    ) -> None:
        self.host = host
        self.api_key: dict[str, str] = dict(api_key or {})
        self.api_key_prefix: dict[str, str] = {}
        self.connection_pool_maxsize = (os.cpu_count() or 1) * 5  # the package's default
        for name, value in settings.items():
            if not hasattr(type(self), name):
                raise TypeError(f"Settings has no attribute {name!r}")
            setattr(self, name, value)
        self._fallback = fallback
        self._real: Any = None
        self._lock = threading.Lock()

    def get_api_key_with_prefix(self, identifier: str, alias: str | None = None) -> str | None:
        """The key for ``identifier`` (else ``alias``) with its prefix, after the refresh
        hook if one is set: as ``Configuration.get_api_key_with_prefix``."""
        if self.refresh_api_key_hook is not None:
            self.refresh_api_key_hook(self)
        key = self.api_key.get(identifier)
        if key is None and alias is not None:
            key = self.api_key.get(alias)
        if not key:
            return None
        prefix = self.api_key_prefix.get(identifier)
        return f"{prefix} {key}" if prefix else key

    def get_basic_auth_token(self) -> str | None:
        """The ``Authorization`` value for ``username``/``password``, as the Configuration's."""
        headers = urllib3.util.make_headers(
            basic_auth=f"{self.username or ''}:{self.password or ''}"
        )
        return headers.get("authorization")

    def __getattr__(self, name: str) -> Any:
        fallback = self.__dict__.get("_fallback")
        if name.startswith("_") or fallback is None:
            raise AttributeError(name)
        with self._lock:
            if self._real is None:
                self._real = fallback()
        return getattr(self._real, name)


def load_kubeconfig(path: str | os.PathLike[str] | None = None, context: str | None = None) -> Any:
    """A Configuration from a kubeconfig (see :func:`kubeconfig_path`) and ``context``
    (None: the file's current-context). Raises ``kubernetes.config.ConfigException``.

    A single file whose context's user has only a token, basic auth or a client certificate,
    and whose cluster only a server, CA, ``insecure-skip-tls-verify``, ``tls-server-name``
    and ``proxy-url``, gives :class:`Settings` with the values the package's loader sets
    (certificate data written to temporary files, as it does; any other Configuration
    attribute is read from the loader's Configuration, built on first use). Anything else
    (exec plugins, auth providers, token files, merged files, errors) goes to the loader.
    """
    file = kubeconfig_path(path)
    try:
        settings = _simple_kubeconfig(file, context)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        settings = None
    if settings is not None:
        settings._fallback = lambda: _package_kubeconfig(file, context)
        return settings
    return _package_kubeconfig(file, context)


def _package_kubeconfig(file: str, context: str | None) -> Any:
    # The kubernetes package costs ~0.5 s to import: only processes that need it pay it.
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    cfg = k8s_client.Configuration()
    k8s_config.load_kube_config(
        config_file=file,
        context=context,
        client_configuration=cfg,
        persist_config=False,
    )
    return cfg


_USER_KEYS = frozenset(
    {"token", "username", "password", "client-certificate", "client-certificate-data",
     "client-key", "client-key-data"}
)  # fmt: skip
_CLUSTER_KEYS = frozenset(
    {"server", "certificate-authority", "certificate-authority-data",
     "insecure-skip-tls-verify", "tls-server-name", "proxy-url"}
)  # fmt: skip


def _named(entries: Any, name: Any, key: str) -> dict[str, Any] | None:
    """``entries``' (a kubeconfig list) item ``name``'s ``key`` mapping; None if absent or
    named twice (the loader's error)."""
    found = [entry for entry in entries or () if entry["name"] == name]
    if len(found) != 1:
        return None
    value = found[0][key]
    return value if isinstance(value, dict) else None


def _simple_kubeconfig(file: str, context: str | None) -> Settings | None:
    """:class:`Settings` for a kubeconfig the package's loader would read to the same values
    without running anything (see :func:`load_kubeconfig`); None when it is not one."""
    if os.pathsep in file:
        return None  # a list to merge
    import yaml

    with open(file, encoding="utf-8") as f:
        config = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(config, dict):
        return None
    ctx = _named(config.get("contexts"), context or config["current-context"], "context")
    if ctx is None:
        return None
    cluster = _named(config.get("clusters"), ctx["cluster"], "cluster")
    user: dict[str, Any] | None = {}
    if ctx.get("user") and config.get("users"):
        user = _named(config["users"], ctx["user"], "user")
    if cluster is None or user is None or "server" not in cluster:
        return None
    if not set(user) <= _USER_KEYS or not set(cluster) <= _CLUSTER_KEYS:
        return None
    base = os.path.abspath(os.path.dirname(file))
    settings = Settings(str(cluster["server"]).rstrip("/"))
    # the loader's order: a token, else username and password (as a basic-auth header)
    if user.get("token"):
        settings.api_key["BearerToken"] = f"Bearer {user['token']}"
    elif "username" in user and "password" in user:
        basic = urllib3.util.make_headers(basic_auth=f"{user['username']}:{user['password']}")
        settings.api_key["BearerToken"] = basic["authorization"]
    if settings.host.startswith("https"):
        settings.ssl_ca_cert = _as_file(cluster, "certificate-authority", base)
        settings.cert_file = _as_file(user, "client-certificate", base)
        settings.key_file = _as_file(user, "client-key", base)
    if "insecure-skip-tls-verify" in cluster:
        settings.verify_ssl = not cluster["insecure-skip-tls-verify"]
    if "tls-server-name" in cluster:
        settings.tls_server_name = cluster["tls-server-name"]
    if "proxy-url" in cluster:
        settings.proxy = cluster["proxy-url"]
    return settings


def _as_file(entry: dict[str, Any], key: str, base: str) -> str | None:
    """The file ``entry[key]`` names (relative to ``base``), or one holding the base64-decoded
    ``entry[key + "-data"]`` (preferred when present, as the loader does)."""
    data = entry.get(f"{key}-data")
    if f"{key}-data" in entry:
        return _temp_file(base64.standard_b64decode(str(data).encode())) if data else None
    if key not in entry:
        return None
    name = os.path.normpath(os.path.join(base, entry[key]))
    if not os.path.isfile(name):
        raise ValueError(f"File does not exist: {name}")  # the loader's error, from it
    return name


_TEMP_FILES: dict[bytes, str] = {}
_TEMP_LOCK = threading.Lock()


def _temp_file(content: bytes) -> str:
    """A private temporary file holding ``content`` (one per content and process), removed
    when the process exits."""
    with _TEMP_LOCK:
        name = _TEMP_FILES.get(content)
        if name is not None and os.path.isfile(name):
            return name
        if not _TEMP_FILES:
            atexit.register(_remove_temp_files)
        fd, name = tempfile.mkstemp()
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        _TEMP_FILES[content] = name
        return name


def _remove_temp_files() -> None:
    for name in _TEMP_FILES.values():
        try:
            os.unlink(name)
        except OSError:
            pass
    _TEMP_FILES.clear()


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
