"""The ``kube-runtime`` command: a host for controllers and commands found by entry point.

* ``kube-runtime run NAME... [--leader-elect] [--metrics-port N] ...`` runs controllers in one
  :class:`~kube_runtime.manager.Manager` against any cluster. A controller is anything
  registered in the entry-point group ``kube_runtime.controllers`` (:data:`CONTROLLERS_GROUP`):
  the bundled ``statefulset`` and ``cloneset`` register there, and so can a user's package::

      # pyproject.toml of a user's package
      [project.entry-points."kube_runtime.controllers"]
      my-controller = "my_operator.controller"

  The entry point names an object with ``setup(manager, *, max_concurrent_reconciles)``
  (a module or a class instance) and, optionally, ``install_crd(client)`` (called for
  ``--install-crds``) and ``setup_webhooks(manager)`` (called when the manager serves
  webhooks): see :class:`ControllerEntry`.
* ``kube-runtime run NAME... --install-webhooks`` (on by default with ``--install-crds``;
  ``--no-install-webhooks`` turns it off) serves the controllers' webhooks and installs them
  as OpenKruise's manager does (:mod:`kube_runtime.webhook.install`): a self-signed serving
  certificate kept in the Secret ``--webhook-secret`` of ``--webhook-namespace`` (shared by
  the replicas, rotated before it expires) and written to ``--webhook-cert-dir``, and the
  Mutating/ValidatingWebhookConfigurations ``--webhook-config-name`` with its CA bundle. The
  API server calls them at ``--webhook-url`` (default outside a cluster
  ``https://127.0.0.1:PORT``) or through ``--webhook-service NAMESPACE/NAME`` (in a cluster);
  ``--webhook-cert-manager NAMESPACE/CERTIFICATE`` leaves the certificate to cert-manager.
  Without it, ``--webhook-port N`` serves them with ``tls.crt``/``tls.key`` read from
  ``--webhook-cert-dir`` and registering them is up to you (``kube-runtime webhook-config``).
  :func:`manager_for` builds that manager without starting it (tests run it in-process).
* ``kube-runtime run NAME... --feature-gates Name=true,...`` turns the controllers' feature
  gates on or off (Kruise's ``--feature-gates`` syntax; a controller declares its gates as
  ``FEATURE_GATES``); an unknown gate is an error (exit 2).
* ``kube-runtime run NAME... --shards N|auto`` runs this process as one shard of the ring
  ``--shard-ring`` (:mod:`kube_runtime.sharding`): run several replicas and each reconciles
  its share of the objects. ``auto`` assigns as soon as one shard is ready; ``N`` holds the
  first assignment back until N are (for at most one lease duration).
* ``NAME`` may also be ``module:function`` (``run`` and ``rbac``): a setup function of a
  manager in a module importable from the current directory, for an operator that is not an
  installed package (``kube-runtime run site_operator.operator:setup``); ``module:object``
  names an object with ``setup`` (and ``install_crd``, ``setup_webhooks`` as above).
* ``kube-runtime rbac NAME...`` prints the ClusterRole, Role and bindings those controllers
  need (:mod:`kube_runtime.rbac`: the rules their ``setup`` declares, plus events and the
  leader-election Lease); ``--shards`` adds what sharding needs
  (:mod:`kube_runtime.sharding._permissions`).
* Every other sub-command comes from the group ``kube_runtime.commands``
  (:data:`COMMANDS_GROUP`): an entry point names a :class:`Command` (its help line and a
  ``main(argv) -> exit code``). This distribution registers ``cluster`` and ``kubelet`` (the
  test cluster, :mod:`kube_runtime.envtest`), ``codegen`` (:mod:`codegen`), ``demo`` and
  ``webhook-config`` (:mod:`kube_runtime.webhook._command`).

The framework imports neither the test cluster, nor a controller, nor the code generator:
they are loaded only when their command runs.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kube_runtime import entrypoints, featuregates

# The noqa names are only re-exported (every name of entrypoints.__all__ is, below).
from kube_runtime.entrypoints import (
    COMMANDS_GROUP,
    CONTROLLERS_GROUP,  # noqa: F401
    Command,
    ControllerEntry,  # noqa: F401
    ControllerNotFound,  # noqa: F401
    controller_entries,
    entry_point_group,
    load_controller,
)

if TYPE_CHECKING:
    from kube_runtime.client import Client
    from kube_runtime.manager import Manager

__all__ = ["RunError", "build_parser", "main", "manager_for", "parse_feature_gates"]
# The entry-point names stay importable from here, where they were first defined.
__all__ += entrypoints.__all__


def _commands() -> dict[str, EntryPoint]:
    return entry_point_group(COMMANDS_GROUP)


DEFAULT_WEBHOOK_PORT = 9443
"""The webhook port of ``kube-runtime run --install-webhooks`` without ``--webhook-port``
(controller-runtime's default)."""
DEFAULT_WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
"""Where ``kube-runtime run --webhook-port`` reads ``tls.crt``/``tls.key`` by default (as
controller-runtime's webhook server)."""


def _webhook_certs_present(cert_dir: str) -> bool:
    directory = Path(cert_dir)
    return (directory / "tls.crt").is_file() and (directory / "tls.key").is_file()


class RunError(Exception):
    """``kube-runtime run`` cannot start: ``message`` for the user, ``code`` the exit code
    (2: the command line, 1: the cluster refused or failed)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _serve_webhooks(manager: Any, entries: Sequence[Any], options: dict[str, Any]) -> Any:
    """The manager's webhook server (``options`` for :class:`kube_runtime.webhook.Server`) with
    each controller's ``setup_webhooks`` (if any) registered on it."""
    from kube_runtime import webhook

    server = webhook.server_for(manager, **options)
    for entry in entries:
        setup = getattr(entry, "setup_webhooks", None)
        if callable(setup):
            setup(manager)
    return server


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def _loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def _matching_labels(text: str) -> dict[str, Any]:
    """``--webhook-namespace-selector k=v,k2=v2`` as a ``matchLabels`` selector."""
    labels: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise RunError(
                f"--webhook-namespace-selector {text!r}: expected KEY=VALUE[,KEY=VALUE...]"
            )
        labels[key.strip()] = value.strip()
    return {"matchLabels": labels}


def _install_webhooks(manager: Any, client: Client, server: Any, args: argparse.Namespace) -> Any:
    """The :class:`~kube_runtime.webhook.install.WebhookInstaller` of ``server``: its
    certificate provisioned now (the server loads it at start), the configurations written
    once it serves and kept up to date (a manager runnable)."""
    from kube_runtime.webhook._manifests import ClientConfig
    from kube_runtime.webhook.install import WebhookInstaller, default_namespace

    if args.webhook_service:
        namespace, sep, name = args.webhook_service.partition("/")
        if not sep or not namespace or not name:
            raise RunError(f"--webhook-service {args.webhook_service!r}: expected NAMESPACE/NAME")
        config = ClientConfig(
            service_name=name, service_namespace=namespace, service_port=args.webhook_service_port
        )
    else:
        url = args.webhook_url
        if url is None:
            if _in_cluster():
                raise RunError(
                    "--install-webhooks in a cluster needs --webhook-service NAMESPACE/NAME "
                    "(the Service in front of the manager's webhook port), or --webhook-url"
                )
            url = f"https://127.0.0.1:{server.bind()[1]}"
        try:
            config = ClientConfig(url=url)
        except ValueError as e:
            raise RunError(f"--webhook-url: {e}") from None
    cert_manager = args.webhook_cert_manager
    if cert_manager and "/" not in cert_manager:
        raise RunError(f"--webhook-cert-manager {cert_manager!r}: expected NAMESPACE/CERTIFICATE")
    selector = (
        _matching_labels(args.webhook_namespace_selector)
        if args.webhook_namespace_selector
        else None
    )
    installer = WebhookInstaller(
        client,
        server,
        config,
        secret_namespace=args.webhook_namespace or default_namespace(),
        secret_name=args.webhook_secret,
        name=args.webhook_config_name,
        namespace_selector=selector,
        manage_certs=not cert_manager,
        cert_manager=cert_manager,
        # reached on this machine: nothing answers once it stops, so take them away then
        remove_on_stop=config.url is not None and _loopback(config.url),
    )
    try:
        installer.ensure_certificates()
    except Exception as e:
        raise RunError(f"cannot provision the webhook certificate: {e}", code=1) from e
    manager.add(installer)
    return installer


def parse_feature_gates(text: str, known: Mapping[str, bool]) -> dict[str, bool]:
    """``--feature-gates`` in Kruise's (component-base's) syntax for the gates ``known``
    (:func:`kube_runtime.featuregates.parse_feature_gates`, which it calls)."""
    return featuregates.parse_feature_gates(text, known)


def _feature_gates(entries: Sequence[Any], text: str | None) -> list[dict[str, bool]] | str:
    """Per entry, the ``--feature-gates`` ``text`` it declares (``FEATURE_GATES``), or the
    error to print."""
    if text is None:
        return [{} for _ in entries]
    known: dict[str, bool] = {}
    for entry in entries:
        known.update(getattr(entry, "FEATURE_GATES", None) or {})
    try:
        gates = parse_feature_gates(text, known)
    except ValueError as e:
        names = ", ".join(sorted(known)) or "none"
        return (
            f'invalid argument "{text}" for "--feature-gates" flag: {e} '
            f"(the gates of the controllers run: {names})"
        )
    return [
        {k: v for k, v in gates.items() if k in (getattr(e, "FEATURE_GATES", None) or {})}
        for e in entries
    ]


def _installing_webhooks(args: argparse.Namespace) -> bool:
    """``--install-webhooks``, which ``--install-crds`` turns on unless
    ``--no-install-webhooks`` is given."""
    return bool(args.install_crds if args.install_webhooks is None else args.install_webhooks)


def namespaces_of(values: Sequence[str] | None) -> list[str] | None:
    """The namespaces of ``--namespace`` flags (each one name or a comma list), in order and
    without repeats; None when none was given (every namespace). :class:`RunError` for an
    empty name."""
    if not values:
        return None
    names: list[str] = []
    for value in values:
        for name in value.split(","):
            name = name.strip()
            if not name:
                raise RunError(f"--namespace {value!r}: an empty namespace name")
            if name not in names:
                names.append(name)
    return names


def manager_for(args: argparse.Namespace) -> Manager:
    """The manager ``kube-runtime run`` starts for ``args`` (parsed by :func:`build_parser`),
    not started: CRDs installed (``--install-crds``), controllers set up, the webhook server
    made and, with ``--install-webhooks``, its certificate provisioned and its installer added
    (:mod:`kube_runtime.webhook.install`). :class:`RunError` when it cannot be built."""
    from kube_runtime.client import Client
    from kube_runtime.manager import Manager

    try:
        entries = [load_controller(name) for name in args.controllers]
    except (KeyError, TypeError) as e:
        raise RunError(str(e.args[0])) from None
    gates = _feature_gates(entries, args.feature_gates)
    if isinstance(gates, str):
        raise RunError(gates)
    install_webhooks = _installing_webhooks(args)
    serve_webhooks = install_webhooks or bool(args.webhook_port)
    self_signed = install_webhooks and not args.webhook_cert_manager
    if serve_webhooks and not self_signed and not _webhook_certs_present(args.webhook_cert_dir):
        flag = "--webhook-cert-manager" if install_webhooks else "--webhook-port"
        raise RunError(
            f"{flag} needs a serving certificate: no tls.crt and tls.key in "
            f"{args.webhook_cert_dir} (give --webhook-cert-dir"
            + (", or --install-webhooks without --webhook-cert-manager" if install_webhooks
               else ", or --install-webhooks to make one, or leave --webhook-port out")
            + ")"
        )  # fmt: skip
    for flag in ("webhook_url", "webhook_service", "webhook_cert_manager"):
        if getattr(args, flag) and not install_webhooks:
            raise RunError(f"--{flag.replace('_', '-')} needs --install-webhooks")
    if args.webhook_url and args.webhook_service:
        raise RunError("--webhook-url and --webhook-service exclude each other")
    sharding = None
    if args.shards:
        from kube_runtime.sharding import Sharding

        if args.shards != "auto" and not (args.shards.isdigit() and int(args.shards) >= 1):
            raise RunError(f"--shards takes a number of replicas or 'auto', not {args.shards!r}")
        if args.leader_elect:
            logging.getLogger(__name__).warning(
                "--leader-elect is ignored with --shards: every replica runs its shard "
                "(the sharder elects its own leader)"
            )
        if args.sharder_only and args.no_sharder:
            raise RunError("--sharder-only and --no-sharder exclude each other")
        sharding = Sharding(
            ring=args.shard_ring,
            lease_namespace=args.leader_election_namespace,
            min_shards=1 if args.shards == "auto" else int(args.shards),
            run_sharder=not args.no_sharder,
            run_shard=not args.sharder_only,
        )
    elif args.sharder_only or args.no_sharder:
        raise RunError("--sharder-only and --no-sharder need --shards")
    namespaces = namespaces_of(args.namespace)
    if sharding is not None and namespaces is not None and len(namespaces) > 1:
        raise RunError("--shards takes one --namespace or none (every namespace)")
    client: Client
    if args.kubeconfig or args.context:
        client = Client.from_kubeconfig(args.kubeconfig, args.context)
    else:
        client = Client.from_env()
    manager = Manager(
        client,
        namespaces=namespaces,
        leader_election=args.leader_elect and sharding is None,
        leader_election_id=args.leader_election_id,
        leader_election_namespace=args.leader_election_namespace,
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        metrics_bind_address=f":{args.metrics_port}" if args.metrics_port else "0",
        health_probe_bind_address=f":{args.health_port}" if args.health_port else "0",
        sharding=sharding,
        identity=args.identity,
    )
    for entry, entry_gates in zip(entries, gates, strict=True):
        install = getattr(entry, "install_crd", None)
        if args.install_crds and callable(install):
            install(client)
        if entry_gates:
            entry.setup(  # type: ignore[call-arg]
                manager, max_concurrent_reconciles=args.workers, feature_gates=entry_gates
            )
        else:
            entry.setup(manager, max_concurrent_reconciles=args.workers)
    if serve_webhooks:
        port = args.webhook_port if args.webhook_port is not None else DEFAULT_WEBHOOK_PORT
        options: dict[str, Any] = {"port": port, "cert_dir": args.webhook_cert_dir}
        host = args.webhook_host
        if host is None and install_webhooks and not args.webhook_service and not _in_cluster():
            host = "127.0.0.1"  # reached by URL on this machine: not on other interfaces
        if host:
            options["host"] = host
        server = _serve_webhooks(manager, entries, options)
        if install_webhooks:
            _install_webhooks(manager, client, server, args)
    return manager


def cmd_run(args: argparse.Namespace) -> int:
    """``kube-runtime run``: the named controllers in one manager until a signal."""
    from kube_runtime import logs
    from kube_runtime.manager import LeaderElectionLost

    logs.setup(logging.DEBUG if args.verbose else logging.INFO)
    try:
        manager = manager_for(args)
    except RunError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return e.code
    try:
        manager.start()
    except LeaderElectionLost as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_rbac(args: argparse.Namespace) -> int:
    """``kube-runtime rbac``: the RBAC objects the named controllers need, as YAML."""
    import yaml

    from kube_runtime import rbac

    rules: list[rbac.Rule] = []
    entries = []
    for name in args.controllers:
        try:
            entry = load_controller(name)
            entries.append(entry)
        except (KeyError, TypeError) as e:
            print(f"error: {e.args[0]}", file=sys.stderr)
            return 2
        try:
            rules.extend(rbac.rules_of(entry))
        except rbac.NoRulesDeclared as e:
            print(f"error: controller {name!r}: {e}", file=sys.stderr)
            return 2
    sharding = None
    if args.shards or args.only_sharding:
        from kube_runtime.sharding import _permissions as permissions

        found = permissions.sharding_rules(permissions.ring_resources(entries))
        sharding = (found.cluster, found.namespace)
    objects = rbac.render(
        rules,
        name=args.name,
        namespace=args.namespace,
        service_account=args.service_account,
        leader_election=not args.no_leader_election,
        sharding=sharding,
        only_sharding=args.only_sharding,
    )
    flags = "--only-sharding " if args.only_sharding else "--shards " if args.shards else ""
    header = (
        f"# Generated by `kube-runtime rbac {flags}{' '.join(args.controllers)}`: do not edit.\n"
    )
    sys.stdout.write(header + yaml.safe_dump_all(objects, sort_keys=False))
    return 0


def _controllers_argument(parser: argparse.ArgumentParser, known: str) -> None:
    """The CONTROLLER arguments of ``run`` and ``rbac`` (``known``: the registered names)."""
    parser.add_argument(
        "controllers",
        nargs="+",
        metavar="CONTROLLER",
        help=f"one of: {known}; or module:function, a setup function of a manager",
    )


def build_parser(commands: dict[str, EntryPoint] | None = None) -> argparse.ArgumentParser:
    """The top-level parser: ``run`` plus one passthrough sub-command per registered command."""
    parser = argparse.ArgumentParser(
        prog="kube-runtime", description="Kubernetes controllers in Python: run, test, generate."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at debug level")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, ep in sorted((commands if commands is not None else _commands()).items()):
        sub.add_parser(name, help=_command_help(ep), add_help=False)

    known = ", ".join(sorted(controller_entries())) or "none registered"
    p = sub.add_parser("run", help="run controllers against a cluster")
    _controllers_argument(p, known)
    p.add_argument(
        "--kubeconfig", help="kubeconfig path (default: in-cluster, $KUBECONFIG, ~/.kube/config)"
    )
    p.add_argument("--context", help="kubeconfig context")
    p.add_argument(
        "--namespace",
        action="append",
        metavar="NAMESPACE[,NAMESPACE...]",
        help="only watch and reconcile these namespaces (repeat the flag or give a comma list; "
        "default: every namespace)",
    )
    p.add_argument("--workers", type=int, default=2, help="concurrent reconciles per controller")
    p.add_argument(
        "--install-crds",
        action="store_true",
        help="create the CRDs the controllers serve when missing",
    )
    p.add_argument("--leader-elect", action="store_true", help="campaign for a Lease first")
    p.add_argument("--leader-election-id", default="kube-runtime-controllers")
    p.add_argument("--leader-election-namespace", help="default: the pod's namespace or default")
    p.add_argument(
        "--lease-duration",
        type=float,
        default=15.0,
        help="seconds a follower waits after the last renewal it saw (client-go: 15)",
    )
    p.add_argument(
        "--renew-deadline",
        type=float,
        default=10.0,
        help="seconds the leader keeps retrying a renewal; past it, it stops (client-go: 10)",
    )
    p.add_argument(
        "--retry-period", type=float, default=2.0, help="seconds between attempts (client-go: 2)"
    )
    p.add_argument(
        "--shards",
        metavar="N|auto",
        help="run as one shard of a ring of replicas (off by default); N: wait for N "
        "replicas before the first assignment, auto: assign at once",
    )
    p.add_argument(
        "--shard-ring", default="kube-runtime", help="the ring's name (default %(default)s)"
    )
    p.add_argument(
        "--sharder-only",
        action="store_true",
        help="with --shards: run only the sharder (no shard, no reconciles): the sharder's "
        "watch of every object in a process of its own",
    )
    p.add_argument(
        "--no-sharder",
        action="store_true",
        help="with --shards: be a shard only, never the sharder (pair with a --sharder-only "
        "replica)",
    )
    p.add_argument(
        "--identity",
        help="this replica's identity, its shard id with --shards (default: hostname + random)",
    )
    w = p.add_argument_group(
        "webhooks",
        "The controllers' admission webhooks. --install-crds turns --install-webhooks on "
        "(--no-install-webhooks: off): the manager serves them, makes a self-signed serving "
        "certificate kept in a Secret (shared by the replicas, rotated before it expires) "
        "and writes the Mutating/ValidatingWebhookConfigurations with its CA bundle.",
    )
    w.add_argument(
        "--install-webhooks",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="serve the webhooks and install their certificate and configurations "
        "(default: on with --install-crds)",
    )
    w.add_argument(
        "--webhook-port",
        type=int,
        default=None,
        help="HTTPS port of the webhooks (with --install-webhooks default "
        f"{DEFAULT_WEBHOOK_PORT}, 0: a free one; without it, serving needs a certificate in "
        "--webhook-cert-dir; default: off)",
    )
    w.add_argument(
        "--webhook-host",
        help="address the webhooks listen on (default: 127.0.0.1 when reached by a local "
        "URL, else all)",
    )
    w.add_argument(
        "--webhook-cert-dir",
        default=DEFAULT_WEBHOOK_CERT_DIR,
        help="directory of the serving tls.crt and tls.key: written with --install-webhooks, "
        "else read (default %(default)s)",
    )
    w.add_argument(
        "--webhook-url",
        help="https://HOST:PORT the API server calls (default outside a cluster: "
        "https://127.0.0.1:PORT)",
    )
    w.add_argument(
        "--webhook-service",
        metavar="NAMESPACE/NAME",
        help="the Service the API server calls the webhooks through (in a cluster)",
    )
    w.add_argument("--webhook-service-port", type=int, default=443, help="the Service's port")
    w.add_argument(
        "--webhook-namespace",
        help="namespace of the certificate Secret (default: the pod's, else 'default')",
    )
    w.add_argument(
        "--webhook-secret",
        default="kube-runtime-webhook-certs",
        help="the Secret holding the CA and serving certificate (default %(default)s)",
    )
    w.add_argument(
        "--webhook-config-name",
        default="kube-runtime-webhook",
        help="name of the Mutating/ValidatingWebhookConfiguration (default %(default)s)",
    )
    w.add_argument(
        "--webhook-namespace-selector",
        metavar="KEY=VALUE,...",
        help="call the webhooks only for objects in namespaces with these labels (default: "
        "every namespace, or what the configuration was given by hand)",
    )
    w.add_argument(
        "--webhook-cert-manager",
        metavar="NAMESPACE/CERTIFICATE",
        help="the serving certificate is cert-manager's (mounted in --webhook-cert-dir): no "
        "Secret is written and the configurations get cert-manager's CA injection annotation",
    )
    p.add_argument(
        "--feature-gates",
        metavar="Name=true,...",
        help="turn the controllers' feature gates on or off (Kruise's syntax), e.g. "
        "RecreatePodWhenChangeVCTInCloneSetGate=true for cloneset; wins over "
        "$KUBE_RUNTIME_FEATURE_GATES",
    )
    p.add_argument("--metrics-port", type=int, default=8080, help="0 disables /metrics")
    p.add_argument("--health-port", type=int, default=8081, help="0 disables /healthz, /readyz")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("rbac", help="print the RBAC objects controllers need (YAML)")
    _controllers_argument(p, known)
    p.add_argument("--name", default="kube-runtime-manager", help="ClusterRole/binding name")
    p.add_argument("--namespace", default="kube-runtime-system", help="the manager's namespace")
    p.add_argument("--service-account", default="kube-runtime-manager")
    p.add_argument("--no-leader-election", action="store_true", help="leave out the Lease Role")
    p.add_argument(
        "--shards",
        action="store_true",
        help="add what sharding needs (`run --shards`): a ClusterRole and Role NAME-sharding",
    )
    p.add_argument(
        "--only-sharding", action="store_true", help="print only the NAME-sharding objects"
    )
    p.set_defaults(func=cmd_rbac)
    return parser


def _command_help(ep: EntryPoint) -> str:
    # The help line lives on the Command object; loading it imports only its small module.
    try:
        command = ep.load()
    except Exception as e:  # a broken plugin must not break the whole command line
        return f"(unavailable: {e})"
    return str(getattr(command, "help", ""))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while args_list[:1] and args_list[0] in ("-v", "--verbose"):
        verbose = True
        args_list = args_list[1:]
    commands = _commands()
    if args_list[:1] and args_list[0] in commands:
        command = commands[args_list[0]].load()
        if not isinstance(command, Command):
            print(
                f"error: entry point {args_list[0]!r} is not a kube_runtime.cli.Command",
                file=sys.stderr,
            )
            return 2
        if verbose:  # commands set up their own logging; -v only lowers the level
            logging.basicConfig(level=logging.DEBUG)
        return command.main(args_list[1:])
    # `run` needs no other command: their help lines (which load their modules) only for help.
    listed = {} if args_list[:1] in (["run"], ["rbac"]) else commands
    args = build_parser(listed).parse_args((["-v"] if verbose else []) + args_list)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    # Run the imported module's main: under ``python -m`` this file is ``__main__``, a second
    # copy whose Command class is not the one the command plugins import.
    from kube_runtime.cli import main as _main

    sys.exit(_main())
