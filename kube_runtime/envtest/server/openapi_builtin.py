"""The OpenAPI definitions of the built-in kinds, from Kubernetes' own published spec.

Source: the ``kubernetes-validate`` package (PyPI), which ships, for every Kubernetes minor
release, the definitions of kube-apiserver's OpenAPI document converted to JSON Schema
(``kubernetes-json-schema/v1.N.0-local/_definitions.json``). It is regenerated from
Kubernetes' ``api/openapi-spec`` for each release, so descriptions, required fields,
formats, the ``x-kubernetes-group-version-kind`` of each kind and the strategic-merge
metadata (``x-kubernetes-patch-strategy`` / ``-patch-merge-key``, list types) stay in step
with Kubernetes; nothing here is written by hand. The ``kubernetes`` client's models were the
other candidate, but they carry no patch strategies, merge keys, list types or required
fields, and kubectl computes ``apply`` patches from exactly those.

The release read is the one :data:`~.discovery.SERVER_VERSION` reports (the newest shipped
when the package has no such release); API versions it no longer publishes but this server
serves as kube-apiserver 1.20 does (``flowcontrol.apiserver.k8s.io/v1beta1``,
``autoscaling/v2beta2``) come from the newest older release that has them. The package starts
at 1.25, so ``events.k8s.io/v1beta1`` (gone in 1.25) has no definition. :func:`definitions` undoes the JSON Schema
conversion to give OpenAPI v2 schema objects (a single type instead of ``[T, "null"]``,
references under ``#/definitions/``, ``int-or-string`` and ``Quantity`` as kube-apiserver
writes them), loaded once per process.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from kube_runtime.envtest.server.discovery import SERVER_VERSION

__all__ = ["V2_PREFIX", "definitions", "kind_definitions", "referenced", "spec_release"]

#: Where an OpenAPI v2 reference points.
V2_PREFIX = "#/definitions/"
_SOURCE_PREFIX = "#/$defs/"
_SCHEMA_ROOT = "kubernetes-json-schema"

#: Definitions kube-apiserver publishes as plain strings (JSON Schema writes them as oneOf).
_STRING_TYPES = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "",
}


def _release_dirs() -> dict[tuple[int, int], Any]:
    # Located without importing the package (its import loads jsonschema: ~0.2 s of CPU,
    # which a cluster's first write of a built-in kind would pay).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("kubernetes_validate (the built-in kinds' schemas) is missing")
    root = Path(next(iter(spec.submodule_search_locations))) / _SCHEMA_ROOT
    found: dict[tuple[int, int], Any] = {}
    for entry in root.iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local", entry.name)
        if m:
            found[(int(m.group(1)), int(m.group(2)))] = entry
    return found


@functools.cache
def spec_release() -> str:
    """The directory name of the Kubernetes release the definitions come from."""
    found = _release_dirs()
    wanted = (int(SERVER_VERSION["major"]), int(str(SERVER_VERSION["minor"]).rstrip("+")))
    chosen = found.get(wanted) or found[max(found)]
    return str(chosen.name)


def _convert(node: Any, *, top_level_kind: bool = False) -> Any:
    """One JSON Schema node as an OpenAPI v2 schema (enums kept: v3 publishes them)."""
    if isinstance(node, list):
        return [_convert(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$ref":
            out[key] = V2_PREFIX + str(value).removeprefix(_SOURCE_PREFIX)
        elif key == "type" and isinstance(value, list):
            kept = [t for t in value if t != "null"]
            if kept:
                out[key] = kept[0]
        elif key == "properties":
            props = {}
            for name, prop in value.items():
                converted = _convert(prop)
                if top_level_kind and name in ("apiVersion", "kind"):
                    converted.pop("enum", None)  # added by the JSON Schema conversion
                props[name] = converted
            out[key] = props
        elif key in ("$schema", "$id"):
            continue
        else:
            out[key] = _convert(value)
    return out


class _Definitions(Mapping[str, dict[str, Any]]):
    """The built-in definitions by OpenAPI name, each converted to the v2 form the first
    time it is read (a process validating writes of a few kinds reads a few dozen of the
    ~800). Those of the chosen release are parsed at once, those of retired API versions
    (:func:`_retired`: older releases' files) only when a name or kind is not among them.
    Together that was ~0.1 s of CPU at a cluster's first write. A name reads as the same
    object every time (callers memoize by identity)."""

    def __init__(self, found: dict[tuple[int, int], Any], chosen: Any) -> None:
        self._found = found
        self._chosen = chosen
        self._raw: dict[str, dict[str, Any]] = orjson.loads(
            (chosen / "_definitions.json").read_bytes()
        )["$defs"]
        self._retired_raw: dict[str, dict[str, Any]] | None = None
        self._converted: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def retired(self) -> dict[str, dict[str, Any]]:
        """The retired API versions' definitions (raw), read on first use."""
        if self._retired_raw is None:
            with self._lock:
                if self._retired_raw is None:
                    self._retired_raw = _retired(self._found, self._chosen.name, self._raw)
        return self._retired_raw

    def __getitem__(self, name: str) -> dict[str, Any]:
        got = self._converted.get(name)
        if got is None:
            schema = self._raw.get(name)
            if schema is None:
                schema = self.retired()[name]
            got = _definition_v2(name, schema)
            with self._lock:
                got = self._converted.setdefault(name, got)
        return got

    def __contains__(self, name: object) -> bool:
        return name in self._raw or name in self.retired()

    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self._raw, self.retired())

    def __len__(self) -> int:
        return len(self._raw) + len(self.retired())

    def gvks(self, *, retired: bool) -> Iterator[tuple[str, dict[str, str]]]:
        """(name, group/version/kind) of each definition of a kind, the chosen release's or
        the retired versions', without converting it."""
        for name, schema in (self.retired() if retired else self._raw).items():
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                yield name, gvk


def _definition_v2(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One definition (JSON Schema, as kubernetes_validate ships it) in v2 form."""
    if name in _STRING_TYPES:
        converted: dict[str, Any] = {"type": "string"}
        if _STRING_TYPES[name]:
            converted["format"] = _STRING_TYPES[name]
        if "description" in schema:
            converted["description"] = schema["description"]
        return converted
    return _convert(schema, top_level_kind="x-kubernetes-group-version-kind" in schema)


@functools.cache
def definitions() -> Mapping[str, dict[str, Any]]:
    """Every built-in definition by its OpenAPI name (``io.k8s.api.core.v1.Pod``), v2 form
    (each converted when first read).

    Shared by every caller: never mutate what it returns.
    """
    found = _release_dirs()
    entry = next(e for e in found.values() if e.name == spec_release())
    return _Definitions(found, entry)


def _package(name: str) -> str:
    """``io.k8s.api.flowcontrol.v1beta1`` of ``io.k8s.api.flowcontrol.v1beta1.FlowSchema``."""
    return name.rpartition(".")[0]


def _retired(found: dict[tuple[int, int], Any], chosen: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Definitions of API versions the chosen release no longer publishes (kube-apiserver
    1.20 serves ``flowcontrol.apiserver.k8s.io/v1beta1``, gone since 1.26), from the newest
    older release of the package that does; their references resolve to the chosen
    release's shared definitions (``ObjectMeta``...)."""
    known = {_package(name) for name in raw}
    extra: dict[str, Any] = {}
    current = next(v for v, e in found.items() if e.name == chosen)
    for version in sorted((v for v in found if v < current), reverse=True):
        defs = orjson.loads((found[version] / "_definitions.json").read_bytes())["$defs"]
        for name, schema in defs.items():
            if name.startswith("io.k8s.api.") and _package(name) not in known:
                extra.setdefault(name, schema)
    return extra


@functools.cache
def _by_gvk(retired: bool) -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    defs = definitions()
    assert isinstance(defs, _Definitions)
    for name, gvk in defs.gvks(retired=retired):
        index.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return index


def kind_definitions(group: str, version: str, kind: str) -> str | None:
    """The definition name of a built-in kind (``apps``, ``v1``, ``StatefulSet``), or None:
    the chosen release's, else a retired version's."""
    key = (group, version, kind)
    return _by_gvk(False).get(key) or _by_gvk(True).get(key)


def _refs(node: Any, into: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(V2_PREFIX):
            into.add(ref[len(V2_PREFIX) :])
        for value in node.values():
            _refs(value, into)
    elif isinstance(node, list):
        for value in node:
            _refs(value, into)


def referenced(roots: Iterable[str], extra: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Built-in definition names reachable from ``roots`` and from references in ``extra``."""
    defs = definitions()
    todo: set[str] = set(roots)
    for node in extra:
        _refs(node, todo)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        found: set[str] = set()
        _refs(defs[name], found)
        todo |= found - seen
    return sorted(seen)
