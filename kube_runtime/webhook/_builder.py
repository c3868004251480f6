"""Registering webhooks for a kind (controller-runtime ``builder.WebhookBuilder``).

::

    from kube_runtime import webhook

    webhook.for_kind(manager, Greeting).defaulter(set_defaults).validator(GreetingValidator())

* :func:`for_kind` takes a :class:`~kube_runtime.manager.Manager` (its webhook server is
  :func:`server_for`, made on first use and added to the manager) or a
  :class:`~kube_runtime.webhook._server.Server`, and a kind: a
  :class:`~kube_runtime.kinds.Kind`, ``"group/version/Kind"`` or a resource model class, in
  which case the objects handed to the user's functions are instances of it.
* :meth:`WebhookBuilder.defaulter` serves ``/mutate-...`` and :meth:`WebhookBuilder.validator`
  ``/validate-...`` (see :mod:`~kube_runtime.webhook._defaulting` and
  :mod:`~kube_runtime.webhook._validating` for what they accept);
  :meth:`WebhookBuilder.converter` and :meth:`WebhookBuilder.hub` add CRD conversions served
  at ``/convert``.

Each call registers at once. The registrations (kind, resource, operations) are what
:mod:`~kube_runtime.webhook._manifests` turns into Validating/MutatingWebhookConfigurations.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Unpack

from pydantic import BaseModel

from kube_runtime.client.mapping import Resource, RestMapper, model_class
from kube_runtime.kinds import KindLike, as_kind
from kube_runtime.webhook._conversion import ConvertFn
from kube_runtime.webhook._defaulting import Defaulter, DefaultFn, DefaultingHandler
from kube_runtime.webhook._endpoint import AdmissionEndpoint
from kube_runtime.webhook._registration import (
    Registration,
    RegistrationOptions,
    mutate_path,
    validate_path,
)
from kube_runtime.webhook._server import Server
from kube_runtime.webhook._validating import ValidatingHandler, operations_of

if TYPE_CHECKING:
    from kube_runtime.manager import Manager

__all__ = ["WebhookBuilder", "for_kind", "server_for", "server_of"]

_servers: weakref.WeakKeyDictionary[Any, Server] = weakref.WeakKeyDictionary()
_servers_lock = threading.Lock()
_BUILTINS = RestMapper(None)


def server_for(manager: Manager, **options: Any) -> Server:
    """The webhook server of ``manager``: made with ``options`` (see
    :class:`~kube_runtime.webhook._server.Server`) and added to the manager on the first
    call, the same one afterwards (options then are a ValueError: they would be ignored).
    The manager's ``/readyz`` gets a ``webhook`` check, failing until the server serves:
    a replica takes admission traffic only once it can answer it."""
    with _servers_lock:
        server = _servers.get(manager)
        if server is not None:
            if options:
                raise ValueError(
                    "this manager's webhook server exists already: pass its options to the "
                    "first server_for() call, before any for_kind()"
                )
            return server
        server = Server(**options)
        _servers[manager] = server
    manager.add(server)
    manager.add_readyz_check("webhook", server.started_check)
    return server


def server_of(manager: Manager) -> Server | None:
    """The webhook server of ``manager`` if :func:`server_for` made one, else None."""
    with _servers_lock:
        return _servers.get(manager)


def _resource(target: Any, kind: KindLike) -> Resource | None:
    own = getattr(kind, "__kube_resource__", None)
    if isinstance(own, Resource):
        return own
    mapper = getattr(getattr(target, "api_reader", None), "mapper", None)
    for candidate in (mapper, _BUILTINS):
        if candidate is None:
            continue
        try:
            found: Resource = candidate.resource_for(kind)
            return found
        except Exception:  # unknown kind, discovery failed: rules need resource= then
            continue
    return None


def for_kind(
    target: Manager | Server, kind: KindLike, *, resource: Resource | None = None
) -> WebhookBuilder:
    """Webhooks for ``kind`` on ``target`` (a manager's :func:`server_for`, or a server).

    ``resource`` gives the plural and scope for the generated configuration when they cannot
    be found (a kind that is neither built in, a model class, nor known to the manager's
    client)."""
    server = target if isinstance(target, Server) else server_for(target)
    return WebhookBuilder(server, kind, resource or _resource(target, kind))


class WebhookBuilder:
    """Registers one kind's webhooks on a server; every method returns the builder."""

    def __init__(self, server: Server, kind: KindLike, resource: Resource | None) -> None:
        self.server = server
        self.kind = as_kind(kind)
        self.model: type[BaseModel] | None = model_class(kind)
        self.resource = resource

    def _register(
        self,
        handler: Any,
        path: str,
        mutating: bool,
        operations: tuple[str, ...],
        options: RegistrationOptions,
    ) -> None:
        """Serve ``handler`` at ``path`` as this builder's kind's webhook."""
        registration = Registration(self.kind, path, mutating, operations, self.resource, **options)
        self.server.register(path, AdmissionEndpoint(handler), registration)

    def defaulter(
        self,
        defaulter: Defaulter | DefaultFn,
        *,
        operations: tuple[str, ...] = ("CREATE", "UPDATE"),
        path: str | None = None,
        **options: Unpack[RegistrationOptions],
    ) -> WebhookBuilder:
        """Serve ``defaulter`` (``fn(obj, request)`` or an object with ``default``) at
        ``/mutate-...``; ``operations`` and the rest (``name``, ``failure_policy``,
        ``side_effects``, ``timeout_seconds``: :class:`RegistrationOptions`) go into the
        configuration."""
        handler = DefaultingHandler(defaulter, self.model)
        path = path or mutate_path(self.kind)
        self._register(handler, path, True, tuple(operations), options)
        return self

    def validator(
        self,
        validator: object,
        *,
        operations: tuple[str, ...] | None = None,
        path: str | None = None,
        **options: Unpack[RegistrationOptions],
    ) -> WebhookBuilder:
        """Serve ``validator`` (a :class:`~kube_runtime.webhook._validating.Validator` or
        ``fn(obj, request)``) at ``/validate-...``; ``operations`` default to those it has a
        method for; the rest as for :meth:`defaulter`."""
        handler = ValidatingHandler(validator, self.model)
        path = path or validate_path(self.kind)
        chosen = tuple(operations) if operations is not None else operations_of(validator)
        self._register(handler, path, False, chosen, options)
        return self

    def _version(self, version: str | type) -> tuple[str, type[BaseModel] | None]:
        if isinstance(version, str):
            return version.rpartition("/")[2], None
        ref = as_kind(version)
        if ref.group != self.kind.group or ref.kind != self.kind.kind:
            raise ValueError(f"{version.__name__} is not a version of {self.kind}")
        return ref.version, model_class(version)

    def converter(self, source: str | type, target: str | type, fn: ConvertFn) -> WebhookBuilder:
        """Convert objects of the kind from version ``source`` to ``target`` with ``fn(obj)``.
        Versions are names (``"v1"``) or model classes of the kind (``fn`` then receives an
        instance of ``source``'s model)."""
        from_version, from_model = self._version(source)
        to_version, to_model = self._version(target)
        self.server.serve_conversions().register(
            self.kind.group,
            self.kind.kind,
            from_version,
            to_version,
            fn,
            source_model=from_model,
            target_model=to_model,
            plural=self.resource.plural if self.resource is not None else None,
        )
        return self

    def hub(self, version: str | type) -> WebhookBuilder:
        """Convert between versions without a direct converter through ``version``."""
        hub_version, _ = self._version(version)
        plural = self.resource.plural if self.resource is not None else None
        conversions = self.server.serve_conversions()
        conversions.set_hub(self.kind.group, self.kind.kind, hub_version, plural=plural)
        return self
