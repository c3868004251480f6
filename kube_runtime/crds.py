"""Installing a CustomResourceDefinition from a manifest and waiting until it is served."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kube_runtime.client.errors import is_already_exists
from kube_runtime.kinds import CustomResourceDefinition

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client

log = logging.getLogger(__name__)


def is_established(crd: dict[str, Any]) -> bool:
    """The CRD's ``Established`` condition is True (its kinds are served)."""
    conditions = (crd.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def install_crd(client: Client, manifest: Path | dict[str, Any], *, timeout: float = 30.0) -> str:
    """Create the CRD in ``manifest`` (a YAML file's first document, or the object) unless one
    of that name exists, then wait until it is Established; returns its name.

    An existing CRD is left as it is (not updated). Raises ``TimeoutError`` when the CRD is
    not Established within ``timeout`` seconds, and the client's errors otherwise.
    """
    if isinstance(manifest, Path):
        crd = next(d for d in yaml.safe_load_all(manifest.read_text()) if d)
    else:
        crd = manifest
    name = str(crd["metadata"]["name"])
    try:
        client.create(crd)
        log.info("installed CRD %s", name)
    except Exception as err:
        if not is_already_exists(err):
            raise
    deadline = time.monotonic() + timeout
    while not is_established(client.get(CustomResourceDefinition, name)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"CRD {name} not Established after {timeout}s")
        time.sleep(0.05)
    return name
