"""Serving certificates for the embedded cluster.

kubectl (client-go) never sends a bearer token over plain HTTP, so an authenticated cluster
is served over TLS: a throwaway CA signs a server certificate for 127.0.0.1 and localhost.
The kubeconfig carries the CA, so clients verify the server as they would a real one.
"""

from __future__ import annotations

import atexit
import datetime as _dt
import shutil
import ssl
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kube_runtime.envtest.secretfiles import write_private
from kube_runtime.webhook.install import generate_certificates


@dataclass(frozen=True)
class ServingCerts:
    """A CA and a server certificate and key, also written to ``directory``; ``owned``:
    the directory was made for them (and :meth:`remove` deletes it)."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    directory: Path
    owned: bool = False

    def remove(self) -> None:
        """Delete the directory with the private key if :func:`generate` made it (idempotent)."""
        if self.owned:
            shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.crt"

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.directory / "server.crt", self.directory / "server.key")
        return ctx


def generate(directory: Path | None = None, dns_names: Iterable[str] = ()) -> ServingCerts:
    """A new CA and a server certificate for 127.0.0.1 / ::1 / localhost (and ``dns_names``,
    e.g. a webhook Service's ``NAME.NAMESPACE.svc``), written to
    ``directory`` (the key mode 0600 from the first byte). Without ``directory``, a new
    private one (0700) that :meth:`ServingCerts.remove` deletes, and at the latest the
    interpreter's exit."""
    owned = directory is None
    target = Path(directory or tempfile.mkdtemp(prefix="kube-runtime-tls-"))
    target.mkdir(parents=True, exist_ok=True)
    if owned:
        atexit.register(shutil.rmtree, target, ignore_errors=True)
    made = generate_certificates(
        ["127.0.0.1", "::1", "localhost", *dns_names], cert_validity=_dt.timedelta(days=365)
    )
    certs = ServingCerts(
        ca_pem=made.ca_cert,
        cert_pem=made.cert,
        key_pem=made.key,
        directory=target,
        owned=owned,
    )
    (target / "ca.crt").write_bytes(certs.ca_pem)
    (target / "server.crt").write_bytes(certs.cert_pem)
    write_private(target / "server.key", certs.key_pem)
    return certs
