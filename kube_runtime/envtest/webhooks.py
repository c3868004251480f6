"""Serving a manager's webhooks to the test API server in one line (both backends).

::

    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    setup_webhooks(manager)                      # webhook.for_kind(...).defaulter(...)...
    with serving_webhooks(manager, namespace):   # or the ``serve_webhooks`` fixture
        client.create(...)                       # defaulted and validated by them

:func:`serving_webhooks` does what ``kube-runtime run --install-webhooks`` does for a manager
(:class:`~kube_runtime.webhook.install.WebhookInstaller`: a self-signed certificate kept in a
Secret, written to the server's directory, and Mutating/ValidatingWebhookConfigurations with
its CA bundle), scoped to one namespace for a test:

* the manager's webhook server (:func:`kube_runtime.webhook.server_for`, before the manager
  starts) is moved to a free port on ``127.0.0.1`` and a temporary certificate directory,
  and reached by URL;
* the configurations are named after a random label, and every webhook gets a
  ``namespaceSelector`` of that label, which the namespace is given: other namespaces (and
  concurrent tests) are not called;
* the manager runs for the block (:func:`~kube_runtime.envtest.running`), and the block
  starts only once the API server calls the webhooks: kube-apiserver loads new
  configurations a moment after they are written. A probe pair of webhooks (ConfigMaps with
  a probe label only, created after the manager's configurations, so loaded after them) is
  asked with dry-run creates until both answer;
* on the way out the manager stops and the configurations, the probe and the label are
  removed.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kube_runtime import kinds
from kube_runtime.client.errors import ApiError, NotFound
from kube_runtime.client.mapping import Resource
from kube_runtime.envtest.managers import running
from kube_runtime.manager import Manager
from kube_runtime.webhook import ClientConfig, Invalid, server_of, webhook_configurations
from kube_runtime.webhook._defaulting import DefaultingHandler
from kube_runtime.webhook._endpoint import AdmissionEndpoint
from kube_runtime.webhook._registration import Registration
from kube_runtime.webhook._review import AdmissionRequest
from kube_runtime.webhook._validating import ValidatingHandler
from kube_runtime.webhook.install import MUTATING_KIND, VALIDATING_KIND, WebhookInstaller

__all__ = ["serving_webhooks"]

_CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps", True)
_PROBE_ANNOTATION = "kube-runtime.io/webhook-probe"


def _probe_webhooks(server: Any, label: str) -> list[Registration]:
    """Register the probe's two endpoints on ``server`` (served, not in its registrations:
    the manager's own configurations do not list them); their registrations."""

    def mutate(obj: dict[str, Any], request: AdmissionRequest) -> None:
        obj.setdefault("metadata", {}).setdefault("annotations", {})[_PROBE_ANNOTATION] = "1"

    def validate(obj: dict[str, Any], request: AdmissionRequest) -> None:
        mutated = (obj.get("metadata") or {}).get("annotations", {}).get(_PROBE_ANNOTATION)
        raise Invalid("metadata.labels", f"{label} probe: mutated={mutated == '1'}")

    registrations = []
    for mutating, handler in (
        (True, DefaultingHandler(mutate, None)),
        (False, ValidatingHandler(validate, None)),
    ):
        path = f"/kube-runtime-probe-{label}/{'mutate' if mutating else 'validate'}"
        server.register(path, AdmissionEndpoint(handler))
        registrations.append(
            Registration(
                kind=kinds.ConfigMap,
                path=path,
                mutating=mutating,
                operations=("CREATE",),
                resource=_CONFIGMAPS,
                name=f"{'m' if mutating else 'v'}.{label}.probe.kube-runtime.io",
                failure_policy="Ignore",  # a probe must never refuse anything else
            )
        )
    return registrations


def _probe(client: Any, namespace: str, label: str) -> bool:
    """One dry-run create of a probe ConfigMap: True when both probe webhooks answered."""
    probe = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "generateName": "webhook-probe-",
            "namespace": namespace,
            "labels": {f"{label}-probe": "on"},
        },
    }
    try:
        client.create(probe, dry_run=True)
    except ApiError as err:
        return f"{label} probe: mutated=True" in str(err.message)
    return False  # the validating probe is not called yet


def _delete(client: Any, kind: str, name: str) -> None:
    try:
        client.delete(kind, name)
    except NotFound:
        pass


@contextlib.contextmanager
def serving_webhooks(
    manager: Manager,
    namespace: str,
    *,
    client: Any = None,
    timeout: float = 30.0,
) -> Iterator[WebhookInstaller]:
    """Run ``manager`` with its webhooks called by the API server for ``namespace`` (see the
    module docstring); yields the installer (its ``name`` is the configurations' name and
    the namespace label).

    ``manager`` has registered its webhooks (a server from
    :func:`~kube_runtime.webhook.server_for`) and is not started; ``client`` writes the
    configurations and the namespace label (default ``manager.api_reader``: it must be
    allowed to, e.g. the session ``client`` fixture). ``ValueError`` when the manager has no
    webhooks or its server is bound already; ``TimeoutError`` when the API server does not
    call them within ``timeout`` seconds."""
    server = server_of(manager)
    if server is None or not (server.registrations or server.conversions.crd_names()):
        raise ValueError(
            "the manager registers no webhooks: call webhook.for_kind(manager, ...) (or the "
            "operator's setup_webhooks) before serving_webhooks()"
        )
    if server.started:
        raise ValueError("the manager's webhook server runs already: serve it before starting")
    client = client if client is not None else manager.api_reader
    label = f"kube-runtime-test-{uuid.uuid4().hex[:8]}"
    cert_dir = tempfile.mkdtemp(prefix="kube-runtime-webhook-")
    server.host, server.port, server.cert_dir = "127.0.0.1", 0, Path(cert_dir)
    server.cert_name, server.key_name = "tls.crt", "tls.key"
    host, port = server.bind()
    url = f"https://{host}:{port}"
    probes = _probe_webhooks(server, label)
    installer = WebhookInstaller(
        client,
        server,
        ClientConfig(url=url),
        secret_namespace=namespace,
        secret_name=label,
        name=label,
        namespace_selector={"matchLabels": {label: "on"}},
        remove_on_stop=True,
    )
    selector = {"matchLabels": {label: "on"}}
    client.patch(kinds.Namespace, namespace, {"metadata": {"labels": {label: "on"}}})
    probe_name = f"{label}-probe"
    try:
        certs = installer.ensure_certificates()
        manager.add(installer)
        with running(manager):
            if not server.wait_started(timeout):
                raise TimeoutError(f"the webhook server did not start within {timeout}s")
            installer.sync()  # now, not when the installer's own loop gets to it
            ca = certs.ca_cert if certs is not None else None
            for config in webhook_configurations(
                probes, ClientConfig(url=url, ca_bundle=ca), name=probe_name
            ):
                for hook in config["webhooks"]:
                    hook["namespaceSelector"] = selector
                    hook["objectSelector"] = {"matchLabels": {f"{label}-probe": "on"}}
                client.create(config)
            deadline = time.monotonic() + timeout
            while not _probe(client, namespace, label):
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"the API server did not call the webhooks of {label} within {timeout}s"
                    )
                time.sleep(0.1)
            yield installer
    finally:
        for kind in (MUTATING_KIND, VALIDATING_KIND):
            _delete(client, kind, probe_name)
            _delete(client, kind, label)  # also removed as the installer stops
        with contextlib.suppress(Exception):
            client.patch(kinds.Namespace, namespace, {"metadata": {"labels": {label: None}}})
        shutil.rmtree(cert_dir, ignore_errors=True)
