"""``python -m bench [--quick] [--markdown PATH] [--profile] [scenario ...]``."""

from __future__ import annotations

from bench.embedded_server import main

if __name__ == "__main__":
    raise SystemExit(main())
