"""The API objects that point kube-apiserver at a server's webhooks.

:func:`webhook_configurations` gives a ``MutatingWebhookConfiguration`` and a
``ValidatingWebhookConfiguration`` (``admissionregistration.k8s.io/v1``) with one webhook per
registration, as kubebuilder's ``+kubebuilder:webhook`` markers generate them: rules from the
registration (group, version, resource, operations, scope), ``sideEffects: None``,
``admissionReviewVersions: [v1]``, ``failurePolicy: Fail`` unless registered otherwise.
:func:`crd_conversion` gives the ``spec.conversion`` stanza of a CRD served by ``/convert``
(``strategy: Webhook``, ``conversionReviewVersions: [v1]``) and :func:`crd_conversion_patches`
one merge patch per CRD the server converts.

Where the API server reaches the server is a :class:`ClientConfig`: a Service (namespace, name,
port; the usual in-cluster setup) or a URL (a server outside the cluster, or a local one during
development), with the CA bundle that signed the serving certificate -- or, with cert-manager,
none and the ``cert-manager.io/inject-ca-from`` annotation instead.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from kube_runtime.webhook._registration import CONVERT_PATH, Registration
from kube_runtime.webhook._server import Server

__all__ = [
    "CERT_MANAGER_ANNOTATION",
    "ClientConfig",
    "crd_conversion",
    "crd_conversion_patches",
    "manifests",
    "webhook_configurations",
]

CERT_MANAGER_ANNOTATION = "cert-manager.io/inject-ca-from"
"""cert-manager's cainjector fills ``caBundle`` from the Certificate this names."""

ADMISSIONREGISTRATION = "admissionregistration.k8s.io/v1"


@dataclass(frozen=True)
class ClientConfig:
    """How kube-apiserver reaches the webhooks: ``service_name``/``service_namespace``
    (and ``service_port``, default 443) or ``url`` (``https://host:port``, paths appended),
    plus the PEM ``ca_bundle`` that verifies the server (None: left to cert-manager)."""

    service_name: str | None = None
    service_namespace: str | None = None
    service_port: int = 443
    url: str | None = None
    ca_bundle: bytes | None = None

    def __post_init__(self) -> None:
        has_service = bool(self.service_name or self.service_namespace)
        if has_service == bool(self.url):
            raise ValueError("give either a service (name and namespace) or a url")
        if has_service and not (self.service_name and self.service_namespace):
            raise ValueError("a service needs both a name and a namespace")
        if self.url and not self.url.startswith("https://"):
            raise ValueError(f"webhook url {self.url!r} must start with https://")

    def for_path(self, path: str) -> dict[str, Any]:
        """The ``clientConfig`` of a webhook served at ``path``."""
        config: dict[str, Any]
        if self.url:
            config = {"url": self.url.rstrip("/") + path}
        else:
            config = {
                "service": {
                    "namespace": self.service_namespace,
                    "name": self.service_name,
                    "path": path,
                    "port": self.service_port,
                }
            }
        if self.ca_bundle:
            config["caBundle"] = base64.b64encode(self.ca_bundle).decode()
        return config


def _metadata(name: str, cert_manager: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if cert_manager:
        meta["annotations"] = {CERT_MANAGER_ANNOTATION: cert_manager}
    return meta


def _webhook(registration: Registration, client: ClientConfig) -> dict[str, Any]:
    resource = registration.resource
    if resource is None:
        raise ValueError(
            f"cannot tell the resource (plural, scope) of {registration.kind}: register it "
            "with a model class, or for_kind(..., resource=Resource(...))"
        )
    hook: dict[str, Any] = {
        "name": registration.webhook_name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": client.for_path(registration.path),
        "failurePolicy": registration.failure_policy,
        "sideEffects": registration.side_effects,
        "rules": [
            {
                "apiGroups": [registration.kind.group],
                "apiVersions": [registration.kind.version],
                "operations": list(registration.operations),
                "resources": [resource.plural],
                "scope": "Namespaced" if resource.namespaced else "Cluster",
            }
        ],
    }
    if registration.timeout_seconds is not None:
        hook["timeoutSeconds"] = registration.timeout_seconds
    return hook


def webhook_configurations(
    registrations: list[Registration],
    client: ClientConfig,
    *,
    name: str = "kube-runtime-webhook",
    cert_manager: str | None = None,
) -> list[dict[str, Any]]:
    """The Mutating then Validating WebhookConfiguration named ``name`` for
    ``registrations`` (a kind of configuration with no webhook is left out);
    ``cert_manager`` (``namespace/certificate``) adds the CA injection annotation."""
    objects = []
    for kind, mutating in (
        ("MutatingWebhookConfiguration", True),
        ("ValidatingWebhookConfiguration", False),
    ):
        hooks = [_webhook(r, client) for r in registrations if r.mutating == mutating]
        if hooks:
            objects.append(
                {
                    "apiVersion": ADMISSIONREGISTRATION,
                    "kind": kind,
                    "metadata": _metadata(name, cert_manager),
                    "webhooks": hooks,
                }
            )
    return objects


def crd_conversion(client: ClientConfig, path: str = CONVERT_PATH) -> dict[str, Any]:
    """A CRD's ``spec.conversion`` for conversion through the webhook at ``path``."""
    return {
        "strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client.for_path(path)},
    }


def crd_conversion_patches(
    crds: list[str], client: ClientConfig, *, cert_manager: str | None = None
) -> list[dict[str, Any]]:
    """For each CRD name (``plural.group``), a merge patch setting its conversion stanza
    (``kubectl patch crd NAME --type merge --patch-file ...``)."""
    patches = []
    for crd in crds:
        meta: dict[str, Any] = {"name": crd}
        if cert_manager:
            meta["annotations"] = {CERT_MANAGER_ANNOTATION: cert_manager}
        patches.append(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": meta,
                "spec": {"conversion": crd_conversion(client)},
            }
        )
    return patches


def manifests(
    server: Server,
    client: ClientConfig,
    *,
    name: str = "kube-runtime-webhook",
    cert_manager: str | None = None,
) -> list[dict[str, Any]]:
    """Everything for ``server``: its webhook configurations, then a conversion patch per
    CRD it converts."""
    objects = webhook_configurations(
        server.registrations, client, name=name, cert_manager=cert_manager
    )
    crds = server.conversions.crd_names()
    return objects + crd_conversion_patches(crds, client, cert_manager=cert_manager)
