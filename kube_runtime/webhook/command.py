"""``kube-runtime webhook-config``: print the webhook configurations of controllers (YAML).

::

    kube-runtime webhook-config TARGET... (--service NAMESPACE/NAME [--service-port 443]
        | --url https://HOST:PORT) [--ca-bundle FILE] [--cert-manager NAMESPACE/CERTIFICATE]
        [--name NAME]

A ``TARGET`` is a controller registered in the ``kube_runtime.controllers`` entry-point group
(its ``setup(manager, ...)`` registers webhooks with :func:`kube_runtime.webhook.for_kind`)
or ``module:function``, a function of a manager doing the same. Each runs against a manager
over an in-memory client, never started: no cluster is needed. The output is the
Mutating/ValidatingWebhookConfiguration and a conversion merge patch per converted CRD
(:func:`kube_runtime.webhook.manifests.manifests`).

This module is the webhook package's only link to :mod:`kube_runtime.cli` (a command is a
:class:`~kube_runtime.cli.Command`); pyproject's import contract names it as the exception.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml

from kube_runtime.cli import Command, load_controller
from kube_runtime.client.fake import FakeClient
from kube_runtime.manager import Manager
from kube_runtime.webhook.builder import server_of
from kube_runtime.webhook.manifests import ClientConfig, manifests

if TYPE_CHECKING:
    from kube_runtime.client import Client

__all__ = ["WEBHOOK_CONFIG", "main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kube-runtime webhook-config",
        description="Print the webhook configurations (and CRD conversion patches) of "
        "controllers that register webhooks.",
    )
    p.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="a registered controller name, or module:function taking a manager",
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--service", metavar="NAMESPACE/NAME", help="the webhook Service")
    where.add_argument("--url", help="https://HOST:PORT of a server outside the cluster")
    p.add_argument("--service-port", type=int, default=443, help="the Service's port")
    p.add_argument("--ca-bundle", metavar="FILE", help="PEM CA that signed the certificate")
    p.add_argument(
        "--cert-manager",
        metavar="NAMESPACE/CERTIFICATE",
        help="annotate for cert-manager's CA injection instead of --ca-bundle",
    )
    p.add_argument("--name", default="kube-runtime-webhook", help="the configurations' name")
    return p


def _run_target(target: str, manager: Manager) -> None:
    if ":" in target:
        module_name, _, attr = target.partition(":")
        fn: Any = getattr(importlib.import_module(module_name), attr)
        if not callable(fn):
            raise TypeError(f"{target} is not a function of a manager")
        fn(manager)
        return
    entry = load_controller(target)
    setup_webhooks = getattr(entry, "setup_webhooks", None)
    if callable(setup_webhooks):  # its webhooks, without its controller
        setup_webhooks(manager)
    else:
        entry.setup(manager, max_concurrent_reconciles=1)


def main(argv: Sequence[str]) -> int:
    """Run the command; 0 on success, 2 on a usage or registration error."""
    args = _parser().parse_args(list(argv))
    try:
        ca_bundle = Path(args.ca_bundle).read_bytes() if args.ca_bundle else None
        if args.service:
            namespace, sep, name = args.service.partition("/")
            if not sep or not namespace or not name:
                raise ValueError(f"--service {args.service!r}: expected NAMESPACE/NAME")
            client = ClientConfig(
                service_name=name,
                service_namespace=namespace,
                service_port=args.service_port,
                ca_bundle=ca_bundle,
            )
        else:
            client = ClientConfig(url=args.url, ca_bundle=ca_bundle)
        # Never started: it only collects what the targets register (their own server
        # options included), so an in-memory client stands in for a cluster.
        manager = Manager(
            cast("Client", FakeClient()),
            metrics_bind_address="0",
            health_probe_bind_address="0",
        )
        for target in args.targets:
            _run_target(target, manager)
        server = server_of(manager)
        objects = (
            manifests(server, client, name=args.name, cert_manager=args.cert_manager)
            if server is not None
            else []
        )
    except (OSError, ValueError, TypeError, KeyError, ImportError, AttributeError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"error: {message}", file=sys.stderr)
        return 2
    if not objects:
        print("error: the targets register no webhooks", file=sys.stderr)
        return 2
    header = f"# Generated by `kube-runtime webhook-config {' '.join(args.targets)}`.\n"
    sys.stdout.write(header + yaml.safe_dump_all(objects, sort_keys=False))
    return 0


WEBHOOK_CONFIG = Command(help="print the webhook configurations of controllers (YAML)", main=main)
"""The ``webhook-config`` command."""
