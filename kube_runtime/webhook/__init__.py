"""Admission and conversion webhooks served by the manager (controller-runtime ``pkg/webhook``).

::

    from kube_runtime import webhook

    def set_defaults(greeting: Greeting, request: webhook.AdmissionRequest) -> None:
        greeting.spec.message = greeting.spec.message or "hello"

    class GreetingValidator(webhook.Validator):
        def validate_create(self, greeting, request):
            if len(greeting.spec.message) > 100:
                raise webhook.Invalid("spec.message", "at most 100 characters",
                                      value=greeting.spec.message)

    webhook.server_for(manager, port=9443, cert_dir="/tmp/k8s-webhook-server/serving-certs")
    webhook.for_kind(manager, Greeting).defaulter(set_defaults).validator(GreetingValidator())

Modules, one concern each:

- :mod:`.builder`: :func:`for_kind` / :func:`server_for`, the registration API;
- :mod:`.defaulting`, :mod:`.validating`: the admission handlers and what user code provides;
- :mod:`.conversion`: CRD conversion (ConversionReview) through registered converters;
- :mod:`.review`: the AdmissionReview request and response; :mod:`.errors`: refusals;
- :mod:`.objects`: objects as dicts or models; :mod:`.handler`: the handler protocol;
- :mod:`.endpoint`: one path over HTTP (bytes in, reply out);
- :mod:`.server`: the HTTPS server, a manager runnable; :mod:`.certwatcher`: its certificate;
- :mod:`.registration`: paths and what a configuration is made from;
- :mod:`.manifests`: Validating/MutatingWebhookConfigurations and the CRD conversion stanza;
- :mod:`.install`: the manager provisions its own webhooks (a self-signed certificate kept in
  a Secret and rotated, the configurations with its CA bundle), as OpenKruise's manager does;
  ``kube-runtime run --install-webhooks`` uses it (imported on demand: it loads
  ``cryptography``);
- :mod:`.command`: ``kube-runtime webhook-config``.

README.md ("Admission webhooks") shows registration and the generated configuration.
"""

from kube_runtime.webhook._builder import WebhookBuilder, for_kind, server_for, server_of
from kube_runtime.webhook._certwatcher import CertWatcher
from kube_runtime.webhook._conversion import ConversionError, Conversions
from kube_runtime.webhook._defaulting import Defaulter, DefaultingHandler
from kube_runtime.webhook._errors import (
    OMIT,
    AdmissionError,
    Denied,
    FieldError,
    Invalid,
    field_errors_of,
)
from kube_runtime.webhook._manifests import (
    ClientConfig,
    crd_conversion,
    crd_conversion_patches,
    manifests,
    webhook_configurations,
)
from kube_runtime.webhook._registration import (
    CONVERT_PATH,
    Registration,
    RegistrationOptions,
    mutate_path,
    validate_path,
)
from kube_runtime.webhook._review import AdmissionRequest, AdmissionResponse
from kube_runtime.webhook._server import Server
from kube_runtime.webhook._validating import ValidatingHandler, Validator

__all__ = [
    "CONVERT_PATH",
    "OMIT",
    "AdmissionError",
    "AdmissionRequest",
    "AdmissionResponse",
    "CertWatcher",
    "ClientConfig",
    "ConversionError",
    "Conversions",
    "Defaulter",
    "DefaultingHandler",
    "Denied",
    "FieldError",
    "Invalid",
    "Registration",
    "RegistrationOptions",
    "Server",
    "ValidatingHandler",
    "Validator",
    "WebhookBuilder",
    "crd_conversion",
    "crd_conversion_patches",
    "field_errors_of",
    "for_kind",
    "manifests",
    "mutate_path",
    "server_for",
    "server_of",
    "validate_path",
    "webhook_configurations",
]
