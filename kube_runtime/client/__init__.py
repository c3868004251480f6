"""The framework's Kubernetes REST client: JSON dicts, typed errors, kind -> resource mapping.

Usage::

    from kube_runtime import kinds
    from kube_runtime.client import Client, Conflict, NotFound

    client = Client.from_env()  # in-cluster in a pod, else $KUBECONFIG / ~/.kube/config
    cm = client.create({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "demo", "namespace": "default"},
                        "data": {"k": "v"}})
    cm["data"]["k"] = "v2"
    client.update(cm)                          # Conflict if it changed meanwhile
    client.patch(kinds.StatefulSet, "web", {"spec": {"replicas": 3}},
                 namespace="default", subresource="scale")
    listed = client.list(kinds.Pod, "default", label_selector={"app": "web"})
    rv = listed["metadata"]["resourceVersion"]
    with client.watch(kinds.Pod, "default", resource_version=rv) as w:
        for event in w:                        # WatchEvent(type, object); close() from
            ...                                # any thread ends the loop
    try:
        client.get("v1/ConfigMap", "gone", "default")
    except NotFound:
        ...

Kinds are :class:`~kube_runtime.kinds.Kind` values, ``"group/version/Kind"`` strings, or
resource model classes (``__kube_resource__``), which also make reads return models.

Protocols and implementations. Code that needs a client should accept the protocol
:data:`ClientInterface` (defined as :class:`kube_runtime.client.interfaces.Client`), or the
narrower :class:`Reader` / :class:`Writer` / :class:`StatusWriter` /
:class:`SubResourceClient`, or :class:`WithWatch` (a client that also watches and maps
kinds: what a Manager takes), never a concrete class. Three classes implement it:

* :class:`Client` - this REST client (the name is kept: it is what ``Client.from_env()``
  builds);
* :class:`kube_runtime.client.cached.CachedClient` - cache reads, API writes (a manager's
  ``.client``);
* :class:`kube_runtime.client.fake.FakeClient` - in memory with API semantics, for unit
  tests (imported from its module: it is test tooling).

The status subresource is written with ``client.status().update(obj)`` (``update_status``
remains as an alias), other subresources with ``client.subresource("scale")``.
"""

from kube_runtime.client import errors
from kube_runtime.client.client import PATCH_CONTENT_TYPES, Client
from kube_runtime.client.errors import *  # noqa: F403 (the error types and is_* tests)
from kube_runtime.client.interfaces import Client as ClientInterface
from kube_runtime.client.interfaces import (
    Reader,
    StatusWriter,
    SubResourceClient,
    WithWatch,
    Writer,
)
from kube_runtime.client.mapping import NoKindMatchError, Resource, RestMapper
from kube_runtime.client.watch import Watch, WatchEvent

__all__ = [
    "PATCH_CONTENT_TYPES",
    "Client",
    "ClientInterface",
    "NoKindMatchError",
    "Reader",
    "Resource",
    "RestMapper",
    "StatusWriter",
    "SubResourceClient",
    "Watch",
    "WatchEvent",
    "WithWatch",
    "Writer",
    "errors",
]
__all__ += errors.__all__
