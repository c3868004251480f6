"""The tutorial's operator, end to end on the embedded cluster (and on kube-apiserver with
``--backend real``), plus its size: the goal is a controller as short as a kopf handler."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codegen.cli import main as codegen
from kube_runtime import Manager, kinds
from kube_runtime.client import Client
from kube_runtime.crds import install_crd
from kube_runtime.envtest import running

from .models import Greeting
from .operator import setup

HERE = Path(__file__).resolve().parent


def _logical_lines(path: Path) -> int:
    """Statements, as Python counts them (NEWLINE tokens), less the module docstring."""
    tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
    newlines = sum(1 for t in tokens if t.type == tokenize.NEWLINE)
    first = next(t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL))
    return newlines - (1 if first.type == tokenize.STRING else 0)


def test_the_operator_takes_at_most_16_logical_lines() -> None:
    assert _logical_lines(HERE / "operator.py") <= 16


def test_models_are_what_codegen_makes_of_the_crd() -> None:
    assert codegen([str(HERE / "crd.yaml"), "-o", str(HERE / "models.py"), "--check"]) == 0


def _greeting(name: str, namespace: str, message: str) -> dict:
    return {
        "apiVersion": "examples.kube-runtime.io/v1",
        "kind": "Greeting",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"message": message},
    }


def test_a_greeting_keeps_its_configmap_and_reports_it(
    client: Client, namespace: str, wait_for: Callable[..., Any]
) -> None:
    install_crd(client, HERE / "crd.yaml")
    manager = Manager(client, namespace=namespace, metrics_bind_address="0")
    setup(manager)
    with running(manager):
        greeting = client.create(_greeting("hello", namespace, "hi"))

        def configmap_says(message: str) -> bool:
            cm = client.get(kinds.ConfigMap, "hello", namespace)
            refs = cm["metadata"].get("ownerReferences") or []
            owned = [r["uid"] for r in refs if r.get("controller")] == [greeting["metadata"]["uid"]]
            return owned and cm.get("data") == {"message": message}

        def observed() -> str | None:
            status = client.get(Greeting, "hello", namespace).status
            return status.observed if status else None

        wait_for(lambda: configmap_says("hi"), timeout=10, message="the ConfigMap is made")
        wait_for(lambda: observed() == "hi", timeout=10, message="status.observed is written")

        client.patch(Greeting, "hello", {"spec": {"message": "bye"}}, namespace=namespace)
        wait_for(lambda: configmap_says("bye"), timeout=10, message="the ConfigMap follows")
        wait_for(lambda: observed() == "bye", timeout=10, message="status follows")

        client.delete(kinds.ConfigMap, "hello", namespace)  # level-triggered: it comes back
        wait_for(lambda: configmap_says("bye"), timeout=10, message="the ConfigMap is remade")


def test_sync_on_the_fake_client_creates_patches_and_then_writes_nothing() -> None:
    from kube_runtime.client.fake import FakeClient

    from .operator import sync

    fake = FakeClient().register(Greeting)
    fake.create(Greeting.model_validate(_greeting("hello", "ns", "hi")))
    greeting = fake.get(Greeting, "hello", "ns")

    sync(fake, greeting)
    cm = fake.get(kinds.ConfigMap, "hello", "ns")
    assert cm["data"] == {"message": "hi"}
    assert cm["metadata"]["ownerReferences"][0]["uid"] == greeting.metadata.uid
    status = fake.get(Greeting, "hello", "ns").status
    assert status is not None and status.observed == "hi"

    fake.patch(Greeting, "hello", {"spec": {"message": "bye"}}, namespace="ns")
    sync(fake, fake.get(Greeting, "hello", "ns"))
    assert fake.get(kinds.ConfigMap, "hello", "ns")["data"] == {"message": "bye"}

    fake.clear_actions()
    sync(fake, fake.get(Greeting, "hello", "ns"))  # converged: reads only
    assert {a.verb for a in fake.actions} == {"get"}
