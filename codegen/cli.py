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
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from codegen.cmdline import ArgumentParser, os_error
from codegen.generator import generate
from codegen.sources import CrdError, Source, from_cluster, from_file
from kube_runtime.cli import Command

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
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if OUTPUT differs from what would be generated",
    )
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
        if args.output is None:
            sys.stdout.write(text)
            return 0
        out = Path(args.output)
        if args.check:
            current = out.read_text(encoding="utf-8") if out.exists() else None
            if current == text:
                return 0
            state = "is missing" if current is None else "is stale"
            command = " ".join(
                shlex.quote(a) for a in [*prog.split(), *_regenerate_args(argv, sys.argv[1:])]
            )
            print(f"{out} {state}; regenerate it with:\n  {command}", file=sys.stderr)
            return 1
        out.write_text(text, encoding="utf-8")
    except CrdError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{prog}: error: {os_error(err)}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as err:
        print(f"{prog}: error: {args.output}: not UTF-8 text (byte {err.start})", file=sys.stderr)
        return 2
    return 0


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


def _regenerate_args(argv: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    return [a for a in (default if argv is None else argv) if a != "--check"]


def _command_main(argv: Sequence[str]) -> int:
    return main(argv, prog="kube-runtime codegen")


COMMAND = Command(
    help="typed pydantic models from CRD manifests (kube-runtime codegen --help)",
    main=_command_main,
)
"""``kube-runtime codegen`` (entry point in the ``kube_runtime.commands`` group)."""
