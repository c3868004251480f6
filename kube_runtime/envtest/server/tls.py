"""Serving certificates for the embedded cluster.

kubectl (client-go) never sends a bearer token over plain HTTP, so an authenticated cluster
is served over TLS: a throwaway CA signs a server certificate for 127.0.0.1 and localhost.
The kubeconfig carries the CA, so clients verify the server as they would a real one.
"""

from __future__ import annotations

import atexit
import datetime as _dt
import ipaddress
import shutil
import ssl
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kube_runtime.envtest.secretfiles import write_private


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


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


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
    now = _dt.datetime.now(_dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kube-runtime-ca"))
        .issuer_name(_name("kube-runtime-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _dt.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("kube-apiserver"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _dt.timedelta(days=365))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    *(x509.DNSName(name) for name in dns_names),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    certs = ServingCerts(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        directory=target,
        owned=owned,
    )
    (target / "ca.crt").write_bytes(certs.ca_pem)
    (target / "server.crt").write_bytes(certs.cert_pem)
    write_private(target / "server.key", certs.key_pem)
    return certs
