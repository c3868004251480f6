"""The README's model examples type-check as users will use them.

A default given to pydantic's ``Field`` positionally (``Field(1, ge=0)``) is invisible to type
checkers: they read field specifiers by PEP 681, which takes only ``default=``, so mypy
reports every such field as a required constructor argument. Codegen writes
``Field(default=..., ...)``; the documentation's examples must too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> list[str]:
    """The ```python fenced blocks of a Markdown file that parse as Python."""
    blocks = []
    for match in _BLOCK.finditer(path.read_text()):
        try:
            ast.parse(match.group(1))
        except SyntaxError:
            continue
        blocks.append(match.group(1))
    return blocks


def positional_field_defaults(source: str) -> list[int]:
    """Line numbers of ``Field(<positional>, ...)`` calls in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "Field"
            and node.args
        ):
            lines.append(node.lineno)
    return lines


def crd_generate_block() -> str:
    """The README's model-first example (the block that defines ``class Cache``)."""
    (block,) = [b for b in python_blocks(REPO / "README.md") if "class Cache(KubeModel)" in b]
    return block


def test_positional_field_defaults_are_found() -> None:
    assert positional_field_defaults("x: int = Field(1, ge=0)\ny: int = Field(default=1)\n") == [1]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_documented_models_give_field_defaults_by_keyword(path: Path) -> None:
    found = {
        i: lines
        for i, block in enumerate(python_blocks(path))
        if (lines := positional_field_defaults(block))
    }
    assert not found, f"{path.name}: Field(<default>, ...) in python blocks {found}: use default="


def test_readme_model_example_runs_with_its_defaults() -> None:
    namespace: dict[str, object] = {}
    exec(compile(crd_generate_block(), "README.md", "exec", dont_inherit=True), namespace)
    spec = namespace["CacheSpec"](size=1)  # type: ignore[operator]
    assert spec.replicas == 1  # type: ignore[attr-defined]
    assert namespace["Eviction"]().max == 100  # type: ignore[operator]


@pytest.mark.slow  # mypy: ~20 s without the cache `make typecheck` leaves, ~1 s with it
def test_readme_model_example_passes_mypy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api")
    use = tmp_path / "readme_cache.py"
    use.write_text(
        crd_generate_block()
        + "\n\nspec = CacheSpec(size=1)  # the defaulted fields are optional arguments\n"
        "eviction = Eviction()\n"
        "cache = Cache(metadata=ObjectMeta(name='c'), spec=spec)\n"
        "replicas: int = cache.spec.replicas\n"
    )
    # In this process (no interpreter to start), with the project's settings: its cache from
    # `make typecheck` serves.
    monkeypatch.chdir(REPO)
    stdout, stderr, status = api.run([str(use)])
    assert status == 0, stdout + stderr
