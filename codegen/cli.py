"""``kube-runtime codegen`` / ``python -m codegen``: CRD manifests -> a module of models.

Usage::

    kube-runtime codegen crd.yaml [more.yaml ...] -o models.py [--version v1beta1]
    kube-runtime codegen --from-cluster clonesets.apps.kruise.io [--kubeconfig F --context C] -o m.py
    kube-runtime codegen crd.yaml -o models.py --check   # exit 1 when models.py is stale

Without ``-o`` the module goes to standard output. Exit codes: 0 ok, 1 stale (``--check``),
2 a mistake in the command or its input, reported as one line ``PROG: error: ...`` (a file
that cannot be read, no CRD in it, a malformed CRD, an unknown version, a CRD missing from
the cluster, an output that cannot be written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from codegen.cmdline import ArgumentParser, add_check_argument, file_error, os_error, write_or_check
from codegen.generator import generate
from codegen.sources import CrdError, Source, from_cluster, from_file
from kube_runtime.entrypoints import Command

__all__ = ["COMMAND", "ArgumentParser", "build_parser", "main", "os_error"]


def build_parser(prog: str = "kube-runtime codegen") -> argparse.ArgumentParser:
    """The command's parser."""
    parser = ArgumentParser(
        prog=prog, description="Generate typed pydantic v2 models from CRD manifests."
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="CRD manifests (YAML or JSON)")
    parser.add_argument("-o", "--output", help="module to write (default: standard output)")
    parser.add_argument(
        "--version",
        action="append",
        dest="versions",
        metavar="VERSION",
        help="generate only this version (repeatable; default: every served version)",
    )
    parser.add_argument(
        "--from-cluster",
        action="append",
        default=[],
        metavar="NAME",
        help="read CRD NAME (e.g. clonesets.apps.kruise.io) from the cluster (repeatable)",
    )
    parser.add_argument("--kubeconfig", help="kubeconfig for --from-cluster")
    parser.add_argument("--context", help="kubeconfig context for --from-cluster")
    add_check_argument(parser)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "kube-runtime codegen") -> int:
    """Run the command; returns the exit code."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if not args.files and not args.from_cluster:
        parser.error("give at least one FILE or --from-cluster NAME")
    if args.check and not args.output:
        parser.error("--check needs -o OUTPUT")
    try:
        sources: list[Source] = [from_file(f) for f in args.files]
        sources += [from_cluster(n, args.kubeconfig, args.context) for n in args.from_cluster]
        text = _generate(sources, args.versions)
        return write_or_check(text, args.output, check=args.check, prog=prog, argv=argv)
    except CrdError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
    except (OSError, UnicodeDecodeError) as err:
        print(f"{prog}: error: {file_error(err, args.output)}", file=sys.stderr)
    return 2


def _generate(sources: Sequence[Source], versions: Sequence[str] | None) -> str:
    """:func:`generate`, a malformed schema reported as :class:`CrdError` naming its source."""
    try:
        return generate(sources, versions)
    except CrdError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        for source in sources:  # find the culprit for the message
            try:
                generate([source], versions)
            except CrdError:
                continue
            except (AttributeError, KeyError, TypeError, ValueError):
                raise CrdError(
                    f"{source.label}: malformed CRD ({type(err).__name__}: {err}); "
                    "check it with kubectl apply --dry-run=server"
                ) from None
        raise CrdError(f"malformed CRD ({type(err).__name__}: {err})") from None


def _command_main(argv: Sequence[str]) -> int:
    return main(argv, prog="kube-runtime codegen")


COMMAND = Command(
    help="typed pydantic models from CRD manifests (kube-runtime codegen --help)",
    main=_command_main,
)
"""``kube-runtime codegen`` (entry point in the ``kube_runtime.commands`` group)."""
