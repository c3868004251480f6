"""Where CRDs come from: manifest files (YAML, multi-document, or JSON) or a live cluster.

A :class:`Source` keeps the raw bytes (hashed into the generated header), a label for the
header (a file's base name, so the output does not depend on the working directory) and the
CustomResourceDefinition documents it holds. Other documents in a file are ignored. Files are
read as YAML 1.2 (``yes``, ``on``, ``=`` are strings), as kubectl and kube-apiserver read them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.yaml12 import YamlError, load_all

__all__ = ["CrdError", "Source", "from_cluster", "from_file", "from_text"]


class CrdError(ValueError):
    """The input holds no usable CustomResourceDefinition (message says why)."""


@dataclass(frozen=True)
class Source:
    label: str
    data: bytes
    crds: tuple[dict[str, Any], ...]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def from_text(label: str, data: bytes) -> Source:
    """Parse a manifest (YAML documents or one JSON object / List) into a Source.

    YAML is read as YAML 1.2, as Kubernetes reads it (:mod:`codegen.yaml12`)."""
    try:
        documents = load_all(data)
    except YamlError as err:
        raise CrdError(f"{label}: not YAML/JSON: {err}") from None
    crds = tuple(_crds(documents))
    if not crds:
        raise CrdError(f"{label}: no apiextensions.k8s.io/v1 CustomResourceDefinition found")
    return Source(label, data, crds)


def from_file(path: str | Path) -> Source:
    path = Path(path)
    return from_text(path.name, path.read_bytes())


def from_cluster(name: str, kubeconfig: str | None = None, context: str | None = None) -> Source:
    """Read CRD ``name`` (e.g. ``clonesets.apps.kruise.io``) through the framework's client.

    The hash covers the CRD's ``spec`` only (canonical JSON), so server-side metadata
    (resourceVersion, managedFields) does not make a generated module stale.
    """
    from kube_runtime import kinds
    from kube_runtime.client import ApiConnectionError, ApiError, Client, NotFound

    try:
        client = Client.from_kubeconfig(kubeconfig, context)
    except Exception as err:  # the kubernetes package's ConfigException, a missing file, ...
        where = kubeconfig or "$KUBECONFIG or ~/.kube/config"
        raise CrdError(f"cannot use the kubeconfig ({where}): {err}") from None
    try:
        with client:
            crd = client.get(kinds.CustomResourceDefinition, name)
    except NotFound:
        raise CrdError(
            f"CRD {name} not found in the cluster (the name is <plural>.<group>, as "
            "`kubectl get crd` lists it)"
        ) from None
    except (ApiError, ApiConnectionError) as err:
        raise CrdError(f"cannot read CRD {name} from the cluster: {err}") from None
    data = json.dumps(crd.get("spec"), sort_keys=True, separators=(",", ":")).encode()
    return Source(f"cluster:{name}", data, tuple(_crds([crd])))


def _crds(documents: list[Any]) -> Iterator[dict[str, Any]]:
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List"):
            items = doc.get("items")
            yield from _crds(list(items) if isinstance(items, list) else [])
        elif kind == "CustomResourceDefinition":
            if doc.get("apiVersion") != "apiextensions.k8s.io/v1":
                meta = doc.get("metadata")
                name = meta.get("name") if isinstance(meta, dict) else None
                raise CrdError(
                    f"{name}: apiVersion {doc.get('apiVersion')}"
                    " is not supported (convert to apiextensions.k8s.io/v1)"
                )
            yield doc
