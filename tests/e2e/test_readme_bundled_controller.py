"""The README's "a bundled controller in your own manager" block, run as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- readme:bundled-in-your-manager -->\n```python\n"


def test_the_readme_block_runs(client: Any, namespace: str, wait_for: Any) -> None:
    block = README.read_text().split(MARKER, 1)[1].split("```", 1)[0]
    scope: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec"), scope)
    scope["test_my_operator_next_to_the_bundled_statefulset"](client, namespace, wait_for)
