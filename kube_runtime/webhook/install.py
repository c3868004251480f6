"""The manager installs its own webhooks (OpenKruise's webhook controller,
``pkg/webhook/util/controller``): a self-signed serving certificate kept in a Secret, and
webhook configurations carrying its CA.

OpenKruise's manager never runs without its webhooks because it provisions them itself; this
module does the same for a :class:`~kube_runtime.webhook._server.Server`:

1. **Certificates** (:class:`SecretCertStore`, Kruise's ``writer/secret.go`` and
   ``certwriter.go``): a CA and a serving certificate for the names the API server dials
   (:func:`hosts_of`: the Service's ``NAME.NAMESPACE.svc`` names, or the URL's host), kept in
   one Secret of the manager's namespace so every replica serves the same certificate. The
   Secret is read first; when absent it is created (two replicas starting at once: the
   second create meets ``AlreadyExists``, reads the winner's Secret and uses it); when its
   certificate does not cover the hosts, does not match its key or its CA, or expires within
   ``renew_before``, a new one is written with the Secret's ``resourceVersion`` (a
   ``Conflict`` -- another replica rotated first -- re-reads and re-checks). The CA is kept
   while it outlives the certificate it signs, so a rotation of the serving certificate
   leaves the CA bundle unchanged. Keys are Kruise's (``ca-cert.pem``, ``ca-key.pem``,
   ``cert.pem``, ``key.pem``, ``tls.crt``, ``tls.key``).
2. **Files** (:func:`write_cert_dir`): ``tls.crt`` / ``tls.key`` in the server's
   ``cert_dir``, replaced atomically (the server's
   :class:`~kube_runtime.webhook._certwatcher.CertWatcher` loads the new pair).
3. **Configurations** (:func:`ensure_webhook_configurations`, Kruise's
   ``configuration.Ensure``): a Mutating and a Validating WebhookConfiguration with one
   webhook per registration (:func:`~kube_runtime.webhook._manifests.webhook_configurations`)
   and the CA bundle, created when missing and updated when they differ (a
   ``namespaceSelector`` / ``objectSelector`` set on a webhook by hand is kept, as Kruise
   keeps them; a ``caBundle`` is kept when none is managed here, e.g. cert-manager's).
4. **CRD conversions** (:func:`ensure_crd_conversions`, Kruise's ``crd.Ensure``): the
   ``spec.conversion`` of each CRD the server converts, with the CA bundle.

:class:`WebhookInstaller` runs the four: :meth:`~WebhookInstaller.ensure_certificates` once
before the server starts (it needs the files), then, as a manager runnable on every replica
(``need_leader_election = False``: a replica must serve with the Secret's certificate whether
or not it leads), :meth:`~WebhookInstaller.sync` once the server serves and every
``resync_period`` seconds after (Kruise: a minute), which also rotates the certificate before
it expires. With ``manage_certs=False`` (cert-manager issues the certificate into
``cert_dir``) no Secret or file is written and the configurations carry cert-manager's
``cert-manager.io/inject-ca-from`` annotation instead of a CA bundle.

The API server's permissions this needs: Secrets (get, create, update) in the Secret's
namespace; mutating/validatingwebhookconfigurations (get, create, update); and, for
conversions, customresourcedefinitions (get, patch).
"""

from __future__ import annotations

import base64
import copy
import datetime as _dt
import functools
import ipaddress
import logging
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kube_runtime.client.errors import AlreadyExists, Conflict, NotFound
from kube_runtime.retry import Backoff, create_or_update_with
from kube_runtime.webhook._manifests import (
    CERT_MANAGER_ANNOTATION,
    ClientConfig,
    crd_conversion,
    webhook_configurations,
)
from kube_runtime.webhook._registration import Registration
from kube_runtime.webhook._server import Server

__all__ = [
    "CA_CERT_KEY",
    "CA_KEY_KEY",
    "DEFAULT_CA_VALIDITY",
    "DEFAULT_CERT_VALIDITY",
    "DEFAULT_RENEW_BEFORE",
    "DEFAULT_RESYNC_PERIOD",
    "DEFAULT_SECRET_NAME",
    "Certificates",
    "SecretCertStore",
    "WebhookInstaller",
    "certificates_problem",
    "default_namespace",
    "ensure_crd_conversions",
    "ensure_webhook_configurations",
    "generate_certificates",
    "hosts_of",
    "write_cert_dir",
]

log = logging.getLogger(__name__)

CA_CERT_KEY = "ca-cert.pem"
"""The Secret's key of the CA certificate (PEM), Kruise's ``CACertName``."""
CA_KEY_KEY = "ca-key.pem"
"""The Secret's key of the CA's private key (PEM), Kruise's ``CAKeyName``."""
_CERT_KEYS = ("cert.pem", "tls.crt")
_KEY_KEYS = ("key.pem", "tls.key")

DEFAULT_SECRET_NAME = "kube-runtime-webhook-certs"
"""The Secret the certificates are kept in (Kruise's is ``kruise-webhook-certs``)."""
DEFAULT_CERT_VALIDITY = _dt.timedelta(days=365)
"""How long a serving certificate is valid."""
DEFAULT_RENEW_BEFORE = _dt.timedelta(days=30)
"""A serving certificate is replaced once it expires within this."""
DEFAULT_CA_VALIDITY = _dt.timedelta(days=3650)
"""How long a new CA is valid; it is replaced once it would expire before a certificate it
signs now."""
DEFAULT_RESYNC_PERIOD = 60.0
"""Seconds between two syncs of the certificates and configurations (Kruise: a minute)."""
MUTATING_KIND = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
VALIDATING_KIND = "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"
_SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
_ATTEMPTS = 5
_RACES = Backoff(steps=_ATTEMPTS, duration=0.0, factor=1.0, jitter=0.0)
"""Lost races a configuration write retries at once (another replica wrote meanwhile)."""


def default_namespace() -> str:
    """The manager's namespace: ``$POD_NAMESPACE``, else the pod's service-account namespace,
    else ``default`` (a process outside a cluster)."""
    env = os.environ.get("POD_NAMESPACE")
    if env:
        return env
    try:
        return Path(_SA_NAMESPACE_FILE).read_text().strip() or "default"
    except OSError:
        return "default"


@dataclass(frozen=True)
class Certificates:
    """A CA and a serving certificate it signed, PEM; ``resource_version``: that of the Secret
    they were read from or written to (None: not stored)."""

    ca_cert: bytes
    ca_key: bytes
    cert: bytes
    key: bytes
    resource_version: str | None = None

    def secret_data(self) -> dict[str, str]:
        """The Secret's ``data`` (base64 values) under Kruise's keys."""
        raw = {CA_CERT_KEY: self.ca_cert, CA_KEY_KEY: self.ca_key}
        raw.update(dict.fromkeys(_CERT_KEYS, self.cert))
        raw.update(dict.fromkeys(_KEY_KEYS, self.key))
        return {k: base64.b64encode(v).decode() for k, v in raw.items()}

    @classmethod
    def from_secret(cls, secret: Mapping[str, Any]) -> Certificates | None:
        """The certificates a Secret holds; None when a key is missing or not base64."""
        data = secret.get("data") or {}
        try:
            values = {
                k: base64.b64decode(data[k], validate=True)
                for k in (CA_CERT_KEY, CA_KEY_KEY, _CERT_KEYS[0], _KEY_KEYS[0])
            }
        except (KeyError, ValueError, TypeError):
            return None
        return cls(
            ca_cert=values[CA_CERT_KEY],
            ca_key=values[CA_KEY_KEY],
            cert=values[_CERT_KEYS[0]],
            key=values[_KEY_KEYS[0]],
            resource_version=(secret.get("metadata") or {}).get("resourceVersion"),
        )


def _now(now: _dt.datetime | None) -> _dt.datetime:
    return now if now is not None else _dt.datetime.now(_dt.timezone.utc)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _usable_ca(
    certs: Certificates | None, until: _dt.datetime
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    """The CA of ``certs`` when its key matches and it is valid until ``until``."""
    if certs is None:
        return None
    try:
        ca = x509.load_pem_x509_certificate(certs.ca_cert)
        key = serialization.load_pem_private_key(certs.ca_key, password=None)
    except ValueError:
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if _public(key.public_key()) != _public(ca.public_key()):
        return None
    if ca.not_valid_after_utc < until:
        return None
    return ca, key


def _public(key: Any) -> bytes:
    data: bytes = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return data


def generate_certificates(
    hosts: Sequence[str],
    *,
    ca: Certificates | None = None,
    now: _dt.datetime | None = None,
    cert_validity: _dt.timedelta = DEFAULT_CERT_VALIDITY,
    ca_validity: _dt.timedelta = DEFAULT_CA_VALIDITY,
) -> Certificates:
    """A serving certificate for ``hosts`` (DNS names or IP addresses, the first its common
    name; ``localhost`` is added), valid ``cert_validity`` from ``now``, signed by ``ca``'s
    CA when that is usable and outlives the certificate, else by a new CA valid
    ``ca_validity``. ValueError when ``hosts`` is empty."""
    if not hosts:
        raise ValueError("a serving certificate needs at least one host name")
    start = _now(now)
    expires = start + cert_validity
    usable = _usable_ca(ca, expires)
    if usable is not None:
        ca_cert, ca_key = usable
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(_name("kube-runtime-webhook-ca"))
            .issuer_name(_name("kube-runtime-webhook-ca"))
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start - _dt.timedelta(minutes=5))
            .not_valid_after(start + max(ca_validity, cert_validity))
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
    names = list(dict.fromkeys([*hosts, "localhost"]))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - _dt.timedelta(minutes=5))
        .not_valid_after(expires)
        .add_extension(x509.SubjectAlternativeName([_san(h) for h in names]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return Certificates(
        ca_cert=ca_cert.public_bytes(serialization.Encoding.PEM),
        ca_key=_pem_key(ca_key),
        cert=cert.public_bytes(serialization.Encoding.PEM),
        key=_pem_key(key),
    )


def certificates_problem(
    certs: Certificates,
    hosts: Iterable[str],
    *,
    now: _dt.datetime | None = None,
    renew_before: _dt.timedelta = DEFAULT_RENEW_BEFORE,
) -> str | None:
    """Why ``certs`` cannot serve ``hosts`` until ``renew_before`` from ``now`` (Kruise's
    ``validCert``): unreadable, a key that is not the certificate's, a certificate its CA did
    not sign, a host it does not name, not yet valid, or expiring; None when they can."""
    try:
        cert = x509.load_pem_x509_certificate(certs.cert)
        ca = x509.load_pem_x509_certificate(certs.ca_cert)
        key = serialization.load_pem_private_key(certs.key, password=None)
    except ValueError as err:
        return f"unreadable: {err}"
    if _public(key.public_key()) != _public(cert.public_key()):
        return "the key is not the certificate's"
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return "the certificate is not signed by the CA"
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return "the certificate names no host"
    dns = set(san.get_values_for_type(x509.DNSName))
    ips = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    for host in hosts:
        try:
            named = str(ipaddress.ip_address(host)) in ips
        except ValueError:
            named = host in dns
        if not named:
            return f"the certificate does not name {host}"
    moment = _now(now)
    if cert.not_valid_before_utc > moment:
        return "the certificate is not valid yet"
    deadline = moment + renew_before
    for what, which in (("certificate", cert), ("CA", ca)):
        if which.not_valid_after_utc <= deadline:
            return f"the {what} expires at {which.not_valid_after_utc.isoformat()}"
    return None


def hosts_of(config: ClientConfig) -> list[str]:
    """The names the API server verifies the serving certificate for: a Service's
    ``NAME.NAMESPACE.svc`` (and its ``.cluster.local`` form), or the URL's host."""
    if config.url:
        host = urlsplit(config.url).hostname
        if not host:
            raise ValueError(f"webhook url {config.url!r} has no host")
        return [host]
    return [
        f"{config.service_name}.{config.service_namespace}.svc",
        f"{config.service_name}.{config.service_namespace}.svc.cluster.local",
    ]


@dataclass(eq=False)
class SecretCertStore:
    """The certificates in the Secret ``namespace/name`` (see the module docstring, 1).

    ValueError if ``renew_before`` is not shorter than ``cert_validity``.
    """

    client: Any
    namespace: str
    name: str = DEFAULT_SECRET_NAME
    _: KW_ONLY
    cert_validity: _dt.timedelta = DEFAULT_CERT_VALIDITY
    renew_before: _dt.timedelta = DEFAULT_RENEW_BEFORE
    ca_validity: _dt.timedelta = DEFAULT_CA_VALIDITY

    def __post_init__(self) -> None:
        if self.renew_before >= self.cert_validity:
            raise ValueError("renew_before must be shorter than cert_validity")

    def _read(self) -> tuple[dict[str, Any] | None, Certificates | None]:
        try:
            secret: dict[str, Any] = self.client.get("v1/Secret", self.name, self.namespace)
        except NotFound:
            return None, None
        return secret, Certificates.from_secret(secret)

    def _secret(self, certs: Certificates, resource_version: str | None) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "labels": {"app.kubernetes.io/managed-by": "kube-runtime"},
        }
        if resource_version is not None:
            metadata["resourceVersion"] = resource_version
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata,
            "type": "Opaque",
            "data": certs.secret_data(),
        }

    def ensure(
        self, hosts: Sequence[str], *, now: _dt.datetime | None = None
    ) -> tuple[Certificates, bool]:
        """The certificates for ``hosts`` and whether this call wrote them: the Secret's when
        they serve ``hosts`` beyond ``renew_before``, else new ones (created or written over
        the Secret, conditional on its ``resourceVersion``). RuntimeError after
        :data:`_ATTEMPTS` lost races; other API errors propagate."""
        for _ in range(_ATTEMPTS):
            secret, stored = self._read()
            if secret is None:
                fresh = self._generate(hosts, None, now)
                try:
                    created = self.client.create(self._secret(fresh, None))
                except AlreadyExists:  # another replica won: use its certificate
                    log.info("webhook certificate Secret %s created meanwhile", self.name)
                    continue
                log.info("created the webhook certificate Secret %s/%s", self.namespace, self.name)
                return replace(fresh, resource_version=_rv(created)), True
            problem = (
                "incomplete"
                if stored is None
                else certificates_problem(stored, hosts, now=now, renew_before=self.renew_before)
            )
            if stored is not None and problem is None:
                return stored, False
            fresh = self._generate(hosts, stored, now)
            try:
                updated = self.client.update(self._secret(fresh, _rv(secret)))
            except Conflict:  # another replica rotated first: check its certificate
                continue
            log.info(
                "rotated the webhook certificate in Secret %s/%s (%s)",
                self.namespace,
                self.name,
                problem,
            )
            return replace(fresh, resource_version=_rv(updated)), True
        raise RuntimeError(
            f"webhook certificate Secret {self.namespace}/{self.name}: still changing after "
            f"{_ATTEMPTS} attempts"
        )

    def _generate(
        self, hosts: Sequence[str], previous: Certificates | None, now: _dt.datetime | None
    ) -> Certificates:
        return generate_certificates(
            hosts,
            ca=previous,
            now=now,
            cert_validity=self.cert_validity,
            ca_validity=self.ca_validity,
        )


def _rv(obj: Mapping[str, Any]) -> str | None:
    value = (obj.get("metadata") or {}).get("resourceVersion")
    return str(value) if value is not None else None


def _write_atomic(path: Path, content: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_cert_dir(
    directory: str | os.PathLike[str],
    certs: Certificates,
    *,
    cert_name: str = "tls.crt",
    key_name: str = "tls.key",
) -> bool:
    """Write the serving certificate and key to ``directory`` (made when absent; the key
    mode 0600), each file replaced atomically; False when both held these contents already."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    changed = False
    for name, content, mode in ((key_name, certs.key, 0o600), (cert_name, certs.cert, 0o644)):
        path = target / name
        try:
            if path.read_bytes() == content:
                continue
        except OSError:
            pass
        _write_atomic(path, content, mode)
        changed = True
    return changed


def _covers(actual: Any, desired: Any) -> bool:
    """Whether ``actual`` holds everything ``desired`` says (maps: every key of ``desired``,
    recursively; lists: the same length, item by item; else equal): the API server's own
    defaults in ``actual`` do not count as a difference."""
    if isinstance(desired, Mapping):
        return isinstance(actual, Mapping) and all(
            k in actual and _covers(actual[k], v) for k, v in desired.items()
        )
    if isinstance(desired, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(desired)
            and all(_covers(a, d) for a, d in zip(actual, desired, strict=True))
        )
    return bool(actual == desired)


_KEPT = ("namespaceSelector", "objectSelector")


def _merge_webhooks(
    existing: Sequence[Mapping[str, Any]], desired: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``desired``'s webhooks with what a hand (or cert-manager) set on the same-named
    existing ones and ``desired`` does not say: selectors, and the ``caBundle`` when
    ``desired`` has none."""
    by_name = {hook.get("name"): hook for hook in existing if isinstance(hook, Mapping)}
    merged = []
    for hook in desired:
        hook = copy.deepcopy(hook)
        old = by_name.get(hook["name"])
        if old is not None:
            for key in _KEPT:
                if key not in hook and old.get(key) is not None:
                    hook[key] = copy.deepcopy(old[key])
            old_bundle = (old.get("clientConfig") or {}).get("caBundle")
            if old_bundle and "caBundle" not in hook["clientConfig"]:
                hook["clientConfig"]["caBundle"] = old_bundle
        merged.append(hook)
    return merged


def ensure_webhook_configurations(
    client: Any,
    registrations: list[Registration],
    config: ClientConfig,
    *,
    name: str,
    namespace_selector: Mapping[str, Any] | None = None,
    cert_manager: str | None = None,
) -> list[str]:
    """Create or update the Mutating/ValidatingWebhookConfiguration ``name`` for
    ``registrations`` reached through ``config`` (see the module docstring, 3); with
    ``namespace_selector`` every webhook gets it. Returns the kinds written (empty: both were
    up to date). A kind of configuration with no webhook is left alone."""
    written: list[str] = []
    for desired in webhook_configurations(
        registrations, config, name=name, cert_manager=cert_manager
    ):
        if namespace_selector is not None:
            for hook in desired["webhooks"]:
                hook["namespaceSelector"] = copy.deepcopy(dict(namespace_selector))
        kind = f"{desired['apiVersion']}/{desired['kind']}"

        def change(current: dict[str, Any], desired: dict[str, Any] = desired) -> Any:
            wanted = copy.deepcopy(current)
            wanted["webhooks"] = _merge_webhooks(current.get("webhooks") or [], desired["webhooks"])
            annotations = desired["metadata"].get("annotations")
            if annotations:
                wanted.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
            return None if _covers(current, wanted) else wanted

        try:
            _, outcome = create_or_update_with(
                functools.partial(client.get, kind, name),
                functools.partial(client.create, desired),
                change,
                client.update,
                _RACES,
            )
        except (AlreadyExists, Conflict) as err:
            raise RuntimeError(
                f"{desired['kind']} {name}: still changing after {_ATTEMPTS} tries"
            ) from err
        if outcome != "unchanged":
            log.info("%s %s %s", outcome, desired["kind"], name)
            written.append(desired["kind"])
    return written


def ensure_crd_conversions(
    client: Any, crds: Iterable[str], config: ClientConfig, *, cert_manager: str | None = None
) -> list[str]:
    """Point each CRD named in ``crds`` (``plural.group``) at the conversion webhook through
    ``config`` (merge patch of ``spec.conversion``, and the cert-manager annotation when
    given) unless it says so already; the names patched. A CRD not found is skipped
    (logged): it is installed later, and the next sync patches it."""
    patched: list[str] = []
    desired = crd_conversion(config)
    for crd_name in crds:
        try:
            crd = client.get("apiextensions.k8s.io/v1/CustomResourceDefinition", crd_name)
        except NotFound:
            log.info("CRD %s not found: its conversion webhook is set once it is", crd_name)
            continue
        annotations = (crd.get("metadata") or {}).get("annotations") or {}
        annotated = cert_manager is None or annotations.get(CERT_MANAGER_ANNOTATION) == cert_manager
        if _covers((crd.get("spec") or {}).get("conversion"), desired) and annotated:
            continue
        patch: dict[str, Any] = {"spec": {"conversion": desired}}
        if cert_manager:
            patch["metadata"] = {"annotations": {CERT_MANAGER_ANNOTATION: cert_manager}}
        client.patch(
            "apiextensions.k8s.io/v1/CustomResourceDefinition", crd_name, patch, patch_type="merge"
        )
        log.info("set the conversion webhook of CRD %s", crd_name)
        patched.append(crd_name)
    return patched


class WebhookInstaller:
    """Provisions ``server``'s certificate and configurations (see the module docstring).

    ``config`` says how the API server reaches the server (its ``ca_bundle`` is ignored:
    the CA is the Secret's, or cert-manager's); ``secret_namespace``/``secret_name`` is the
    Secret shared by the replicas; ``name`` the configurations' name. ``namespace_selector``
    scopes every webhook (None: keep what the configuration has). ``manage_certs=False``
    leaves the certificate to cert-manager: ``cert_manager`` (``NAMESPACE/CERTIFICATE``) is
    then required, and written as the CA injection annotation. ``remove_on_stop`` deletes the
    configurations when the installer stops, if they still point at this server's URL (a
    manager reached by URL on a developer's machine: once it is gone nothing answers them, and
    ``failurePolicy: Fail`` would refuse every write of their kinds); replicas behind a Service
    keep them, as Kruise's do.
    """

    need_leader_election = False

    def __init__(
        self,
        client: Any,
        server: Server,
        config: ClientConfig,
        *,
        secret_namespace: str,
        secret_name: str = DEFAULT_SECRET_NAME,
        name: str = "kube-runtime-webhook",
        namespace_selector: Mapping[str, Any] | None = None,
        manage_certs: bool = True,
        cert_manager: str | None = None,
        resync_period: float = DEFAULT_RESYNC_PERIOD,
        cert_validity: _dt.timedelta = DEFAULT_CERT_VALIDITY,
        renew_before: _dt.timedelta = DEFAULT_RENEW_BEFORE,
        start_timeout: float = 60.0,
        remove_on_stop: bool = False,
    ) -> None:
        if not manage_certs and not cert_manager:
            raise ValueError(
                "without managed certificates give cert_manager (NAMESPACE/CERTIFICATE): "
                "nothing else would put a CA bundle in the configurations"
            )
        self.client = client
        self.server = server
        self.config = replace(config, ca_bundle=None)
        self.hosts = hosts_of(config)
        self.name = name
        self.namespace_selector = namespace_selector
        self.manage_certs = manage_certs
        self.cert_manager = None if manage_certs else cert_manager
        self.resync_period = resync_period
        self.start_timeout = start_timeout
        self.remove_on_stop = remove_on_stop
        self.store = SecretCertStore(
            client,
            secret_namespace,
            secret_name,
            cert_validity=cert_validity,
            renew_before=renew_before,
        )
        self.certificates: Certificates | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"WebhookInstaller({self.name!r}, hosts={self.hosts})"

    def ensure_certificates(self, *, now: _dt.datetime | None = None) -> Certificates | None:
        """The Secret's certificates (made or rotated as needed) written to the server's
        ``cert_dir``; None (nothing done) when cert-manager provides them."""
        if not self.manage_certs:
            return None
        with self._lock:
            certs, _ = self.store.ensure(self.hosts, now=now)
            write_cert_dir(
                self.server.cert_dir,
                certs,
                cert_name=self.server.cert_name,
                key_name=self.server.key_name,
            )
            self.certificates = certs
            return certs

    def sync(self, *, now: _dt.datetime | None = None) -> None:
        """One pass: the certificates (:meth:`ensure_certificates`), then the webhook
        configurations and the CRD conversions with the CA bundle."""
        certs = self.ensure_certificates(now=now)
        config = replace(self.config, ca_bundle=certs.ca_cert if certs is not None else None)
        ensure_webhook_configurations(
            self.client,
            self.server.registrations,
            config,
            name=self.name,
            namespace_selector=self.namespace_selector,
            cert_manager=self.cert_manager,
        )
        ensure_crd_conversions(
            self.client,
            self.server.conversions.crd_names(),
            config,
            cert_manager=self.cert_manager,
        )

    def start(self, stop: threading.Event) -> None:
        """Once the server serves, :meth:`sync`, then again every ``resync_period`` seconds
        until ``stop`` is set (a failed pass is logged and retried at the next one).
        RuntimeError when the server has not started within ``start_timeout`` seconds."""
        waited = 0.0
        while not self.server.wait_started(0.1):
            if stop.is_set():
                return
            waited += 0.1
            if waited >= self.start_timeout:
                raise RuntimeError("webhook installer: the webhook server did not start")
        while True:
            try:
                self.sync()
            except Exception:
                log.exception("webhook installer: sync failed (retried in %ss)", self.resync_period)
            if stop.wait(self.resync_period):
                break
        if self.remove_on_stop:
            self.remove()

    def remove(self) -> list[str]:
        """Delete the configurations named ``name`` whose webhooks call this installer's URL
        (another server's are left); the kinds deleted. Errors are logged, not raised."""
        removed: list[str] = []
        if not self.config.url:
            return removed
        prefix = self.config.url.rstrip("/") + "/"
        for kind in (MUTATING_KIND, VALIDATING_KIND):
            try:
                current = self.client.get(kind, self.name)
                urls = [
                    (hook.get("clientConfig") or {}).get("url") or ""
                    for hook in current.get("webhooks") or []
                ]
                if urls and all(url.startswith(prefix) for url in urls):
                    self.client.delete(kind, self.name)
                    removed.append(kind.rpartition("/")[2])
            except NotFound:
                pass
            except Exception as err:
                log.warning("webhook installer: cannot remove %s %s: %s", kind, self.name, err)
        if removed:
            log.info("removed %s %s (its server stops)", " and ".join(removed), self.name)
        return removed
