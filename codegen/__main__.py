"""``python -m codegen``: see :mod:`codegen.cli`."""

from codegen.cli import main

raise SystemExit(main(prog="python -m codegen"))
