"""Helpers for the code generator's tests: the public CRDs kept in ``tests/crds/``, every CRD
of the repository, importing generated code, and comparing schemas."""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from codegen import CrdError, from_file
from codegen.shared import shared_type

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "tests" / "crds"
CRD_FILES = {
    "cloneset": "apps.kruise.io_clonesets.yaml",
    "asts": "apps.kruise.io_statefulsets.yaml",
    "certificate": "cert-manager.io_certificates.yaml",
    "servicemonitor": "monitoring.coreos.com_servicemonitors.yaml",
    "httproute": "gateway.networking.k8s.io_httproutes.yaml",
    "scaledobject": "keda.sh_scaledobjects.yaml",
}
BIN = Path(sys.executable).parent
_counter = itertools.count()


def repository_crds() -> list[Path]:
    """Every manifest holding a CRD under the repository's deploy/, controllers/, examples/
    and tests/ directories (the public fixtures in tests/crds included)."""
    found = []
    for top in ("deploy", "controllers", "examples", "tests"):
        for path in sorted((REPO / top).rglob("*.y*ml")):
            try:
                from_file(path)
            except CrdError:
                continue
            found.append(path)
    return found


#: PyYAML's safe loader on libyaml's parser when PyYAML was built with it: the same
#: documents as ``yaml.SafeLoader`` (the same constructor and resolver), ~10x faster on the
#: big CRDs (the pure-Python parser took ~2 s for the HTTPRoute CRD's documents).
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load_all(text: str) -> list[Any]:
    """The documents of ``text``, as ``list(yaml.safe_load_all(text))`` gives them."""
    return list(yaml.load_all(text, Loader=SAFE_LOADER))


def load_module(text: str, directory: Path, stem: str = "generated") -> ModuleType:
    """Write ``text`` to ``directory`` and import it under a unique module name."""
    name = f"_codegen_{stem}_{next(_counter)}"
    path = directory / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def extras(model: Any, path: str = "") -> list[str]:
    """Paths of every undeclared key kept on ``model`` and its children."""
    out: list[str] = []
    if isinstance(model, BaseModel):
        out += [f"{path}.{k}" for k in model.__pydantic_extra__ or {}]
        for name in model.model_fields_set:
            if name in type(model).model_fields:
                out += extras(getattr(model, name), f"{path}.{name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            out += extras(item, f"{path}[{i}]")
    elif isinstance(model, dict):
        for key, value in model.items():
            out += extras(value, f"{path}.{key}")
    return out


def wire(model: BaseModel) -> dict[str, Any]:
    """The model as it goes on the wire (JSON names, only fields that were set)."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def ruff_clean(text: str) -> None:
    """``ruff format`` leaves ``text`` unchanged and ``ruff check`` passes (project config;
    the stdin filename places the module inside the project for import sorting)."""
    ruff = BIN / "ruff"
    if not ruff.exists():
        pytest.skip("ruff not installed")
    stdin_name = str(REPO / "codegen" / "_generated_check.py")
    formatted = subprocess.run(
        [ruff, "format", "--stdin-filename", stdin_name, "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    assert formatted == text, "generated code is not ruff-formatted"
    lint = subprocess.run(
        [ruff, "check", "--stdin-filename", stdin_name, "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


def _normalized(node: Any) -> Any:
    """Order-free form (required lists sorted), without descriptions and what codegen does
    not carry because it changes nothing: int32/int64 formats (Python ints are unbounded; the
    API server does not check them) and ``x-kubernetes-list-type: atomic`` (the default)."""
    if isinstance(node, dict):
        return {
            k: sorted(v) if k == "required" else _normalized(v)
            for k, v in node.items()
            if k != "description"
            and not (k == "format" and v in ("int32", "int64"))
            and not (k == "x-kubernetes-list-type" and v == "atomic")
        }
    if isinstance(node, list):
        return [_normalized(v) for v in node]
    return node


def _descriptions(node: Any, path: str = "") -> dict[str, str]:
    """Every description by path, except inside core types (kube_runtime.models' own apply there)."""
    out = {path: node["description"]} if "description" in node else {}
    if shared_type(node) is not None:
        return out
    for key, child in (node.get("properties") or {}).items():
        out |= _descriptions(child, f"{path}.{key}")
    for key, suffix in (("items", "[]"), ("additionalProperties", "{}")):
        if isinstance(node.get(key), dict):
            out |= _descriptions(node[key], path + suffix)
    return out


def assert_same_schema(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Same structure and validation, same descriptions (outside core types)."""
    assert _normalized(got) == _normalized(want)
    assert _descriptions(got) == _descriptions(want)
