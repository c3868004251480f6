"""Posting a review to a webhook as kube-apiserver's webhook client does.

Used for admission (:mod:`.webhooks`) and CRD conversion (:mod:`.conversion`). A
``clientConfig`` names a ``url`` or a ``service``; the server is verified with ``caBundle``
(or the system roots). ``?timeout=Ns`` is appended to the path, as kube-apiserver's REST
client does. A service reference is resolved to ``127.0.0.1`` and the numeric ``targetPort``
of the Service's port whose ``port`` is the reference's (the reference's port when there is
no such Service or target port: nothing in the embedded cluster listens on a cluster IP),
and the certificate is verified for ``NAME.NAMESPACE.svc``.

:class:`CallError` carries what went wrong in kube-apiserver's words (Go's ``Post "URL":
dial tcp ...: connect: connection refused``, ``context deadline exceeded``, ``x509: ...``).
"""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

from kube_runtime.envtest.server.storage import Store

__all__ = ["CallError", "post"]


class CallError(Exception):
    """A webhook could not be called or answered badly."""


def _go_duration(seconds: int) -> str:
    minutes, secs = divmod(seconds, 60)
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


class _Connection(http.client.HTTPSConnection):
    """HTTPS to ``address`` verifying the certificate for ``server_name`` (a service)."""

    def __init__(
        self, address: tuple[str, int], server_name: str, context: ssl.SSLContext, timeout: float
    ) -> None:
        super().__init__(server_name, address[1], context=context, timeout=timeout)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection(self._address, self.timeout)
        # TCP_NODELAY, as Go's net.Dial sets by default (kube-apiserver's webhook client):
        # http.client sends the headers and the body in two writes, and with Nagle's
        # algorithm the body waited for the webhook server's delayed ACK, ~40 ms a call
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def _target_port(store: Store, namespace: str, name: str, port: int) -> int:
    info = store.registry.by_key("", "services")
    service = store.try_get(info, namespace, name) if info is not None else None
    if service is None:
        return port
    for entry in (service.obj.get("spec") or {}).get("ports") or ():
        if isinstance(entry, dict) and entry.get("port") == port:
            target = entry.get("targetPort")
            if isinstance(target, int):
                return target
    return port


def _target(
    store: Store, config: Mapping[str, Any], timeout: int
) -> tuple[str, tuple[str, int], str, str]:
    """(URL as shown in errors, address to connect to, TLS server name, request path)."""
    query = f"?timeout={_go_duration(timeout)}"
    url = config.get("url")
    if url:
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        port = parts.port or 443
        path = (parts.path or "/") + query
        return str(url) + query, (host, port), host, path
    service = config.get("service") or {}
    name, namespace = str(service.get("name") or ""), str(service.get("namespace") or "")
    port = int(service.get("port") or 443)
    server_name = f"{name}.{namespace}.svc"
    path = str(service.get("path") or "/") + query
    shown = f"https://{server_name}:{port}{path}"
    return shown, ("127.0.0.1", _target_port(store, namespace, name, port)), server_name, path


def _tls(config: Mapping[str, Any]) -> ssl.SSLContext:
    bundle = config.get("caBundle")
    if not bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(bundle).decode()
        return ssl.create_default_context(cadata=pem)
    except (ValueError, ssl.SSLError) as e:
        raise CallError(
            f"could not get REST client: unable to load root certificates: {e}"
        ) from None


def post(store: Store, config: Mapping[str, Any], body: bytes, timeout: int) -> Any:
    """POST ``body`` to the webhook ``config`` names within ``timeout`` seconds; the JSON
    answered, or :class:`CallError`."""
    context = _tls(config)
    url, address, server_name, path = _target(store, config, timeout)
    deadline = time.monotonic() + timeout
    conn = _Connection(address, server_name, context, timeout)
    try:
        conn.request(
            "POST",
            path,
            body,
            {"Content-Type": "application/json", "Accept": "application/json, */*"},
        )
        if time.monotonic() > deadline:
            raise TimeoutError
        response = conn.getresponse()
        data = response.read()
    except TimeoutError:
        raise CallError(f'Post "{url}": context deadline exceeded') from None
    except ConnectionRefusedError:
        raise CallError(
            f'Post "{url}": dial tcp {address[0]}:{address[1]}: connect: connection refused'
        ) from None
    except ssl.SSLCertVerificationError as e:
        message = str(e.verify_message)
        reason = (
            f"x509: certificate is not valid for {server_name}"
            if "mismatch" in message
            else "x509: certificate signed by unknown authority"
        )
        raise CallError(f'Post "{url}": {reason}') from None
    except (OSError, http.client.HTTPException) as e:
        raise CallError(f'Post "{url}": {e}') from None
    finally:
        conn.close()
    if not 200 <= response.status < 300:
        raise CallError(
            f"the server responded with the status code {response.status} but did not "
            "return more information"
        )
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise CallError(f"received invalid webhook response: {e}") from None
