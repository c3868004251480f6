"""Each Greeting keeps one ConfigMap with its message; ``status.observed`` says what it holds."""

from kube_runtime import Builder, Manager, kinds
from kube_runtime.client.interfaces import Client
from kube_runtime.controllerutil import create_or_patch, patch_status, set_controller_reference

from .models import Greeting, GreetingStatus


def sync(client: Client, greeting: Greeting) -> None:
    def configure(cm: dict) -> None:
        cm["data"] = {"message": greeting.spec.message}
        set_controller_reference(greeting, cm)

    meta = {"name": greeting.metadata.name, "namespace": greeting.metadata.namespace}
    create_or_patch(client, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}, configure)
    patch_status(client, greeting, GreetingStatus(observed=greeting.spec.message))


def setup(manager: Manager, *, max_concurrent_reconciles: int = 1) -> None:
    Builder(manager).for_(Greeting).owns(kinds.ConfigMap).with_options(
        max_concurrent_reconciles=max_concurrent_reconciles
    ).complete_objects(lambda greeting: sync(manager.client, greeting))
