"""``certificates.k8s.io/v1`` CertificateSigningRequest as kube-apiserver serves it.

The registry strategy (create: ``spec.username``, ``uid`` and ``groups`` of the requester,
the embedded server's one user, and an empty status; approval and status writes: condition
timestamps filled in), the validation users meet (``ValidateCertificateSigningRequest``: a
PEM ``CERTIFICATE REQUEST``, a signer name, supported usages; an issued certificate must be
PEM) and ``printCertificateSigningRequest`` (Condition ``Pending`` / ``Approved`` /
``Denied``, ``,Failed``, ``,Issued``) as kube-apiserver 1.20 renders them. The ``approval``
subresource writes the status as the ``status`` one does.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _get, _list, _str
from kube_runtime.envtest.server.validation import INVALID
from kube_runtime.envtest.server.webhooks import USER_INFO

__all__ = [
    "CSR_COLUMNS",
    "GROUP",
    "KEY",
    "check_csr",
    "prepare_csr",
    "stamp_conditions",
]

GROUP: Final = "certificates.k8s.io"
KEY: Final = (GROUP, "certificatesigningrequests")

_USAGES: Final = (
    "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign",
    "data encipherment", "decipher only", "digital signature", "email protection",
    "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement",
    "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime",
    "server auth", "signing", "timestamping",
)  # fmt: skip
_REQUEST_BEGIN: Final = b"-----BEGIN CERTIFICATE REQUEST-----"
_CERTIFICATE_BEGIN: Final = b"-----BEGIN CERTIFICATE-----"


def prepare_csr(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """On create the requester's identity (the embedded server authenticates one user, an
    administrator). The strategy then stamps the conditions (:func:`stamp_conditions`)."""
    spec = obj.get("spec")
    if old is None and isinstance(spec, dict):
        username = str(USER_INFO["username"])
        spec["username"] = username
        spec["uid"] = username
        spec["groups"] = [*USER_INFO["groups"], "system:authenticated"]
        spec.pop("extra", None)


def stamp_conditions(obj: dict[str, Any], stamp: str) -> None:
    """On every write, ``stamp`` (the server's time, RFC 3339) as the timestamps of the
    conditions that have none."""
    conditions = fe.as_map(obj.get("status")).get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict):
            condition.setdefault("lastUpdateTime", stamp)
            condition.setdefault("lastTransitionTime", stamp)


def _bytes(value: Any) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _go_bytes(data: bytes) -> str:
    """A byte slice as Go's ``%#v`` writes it: ``[]byte{0x6a, 0x75}``."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def check_csr(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateCertificateSigningRequest`` (v1), the checks users meet."""
    spec = fe.as_map(obj.get("spec"))
    request = _bytes(spec.get("request"))
    if request is None:
        out.append(Cause("spec.request", INVALID, "Invalid value: must be base64 data"))
    elif _REQUEST_BEGIN not in request:
        out.append(
            Cause(
                "spec.request",
                INVALID,
                f"Invalid value: {_go_bytes(request)}: PEM block type must be CERTIFICATE REQUEST",
            )
        )
    else:
        from cryptography import x509  # here: its import costs ~25 ms of every cluster's start

        try:
            x509.load_pem_x509_csr(request)
        except ValueError as e:
            out.append(Cause("spec.request", INVALID, f"Invalid value: {_go_bytes(request)}: {e}"))
    if not spec.get("signerName"):
        out.append(fe.required("spec.signerName", "signerName must be provided"))
    usages = spec.get("usages")
    if not usages:
        out.append(fe.required("spec.usages", "usages must be provided"))
    for i, usage in enumerate(usages if isinstance(usages, list) else ()):
        if usage not in _USAGES:
            out.append(fe.not_supported(f"spec.usages[{i}]", usage, _USAGES))
    certificate = fe.as_map(obj.get("status")).get("certificate")
    if certificate:
        data = _bytes(certificate)
        if data is None or _CERTIFICATE_BEGIN not in data:
            out.append(
                Cause(
                    "status.certificate",
                    INVALID,
                    'Invalid value: "<certificate data>": must contain at least one CERTIFICATE '
                    "PEM block",
                )
            )


def _condition(obj: Mapping[str, Any]) -> str:
    """Upstream ``extractCSRStatus``."""
    types = {_str(c.get("type")) for c in _list(_get(obj, "status", "conditions"))}
    if "Denied" in types:
        text = "Denied"
    elif "Approved" in types:
        text = "Approved"
    else:
        text = "Pending"
    if "Failed" in types:
        text += ",Failed"
    if _get(obj, "status", "certificate"):
        text += ",Issued"
    return text


#: ``kubectl get csr`` as kube-apiserver 1.20 prints it (RequestedDuration came in 1.22).
CSR_COLUMNS: Final[list[Column]] = [
    NAME,
    AGE,
    _col("SignerName", lambda o: _str(_get(o, "spec", "signerName"))),
    _col("Requestor", lambda o: _str(_get(o, "spec", "username"))),
    _col("Condition", _condition),
]
