"""Installing a CustomResourceDefinition from a manifest and waiting until it is served."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kube_runtime.client.errors import (
    ApiConnectionError,
    is_already_exists,
    is_conflict,
    is_server_error,
    is_server_timeout,
    is_too_many_requests,
    suggests_client_delay,
)
from kube_runtime.kinds import CustomResourceDefinition

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client

log = logging.getLogger(__name__)


def is_established(crd: dict[str, Any]) -> bool:
    """The CRD's ``Established`` condition is True (its kinds are served)."""
    conditions = (crd.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def _transient(err: BaseException) -> bool:
    """An error a retry may cure: 409 (a racing writer), 429, 5xx, a timeout, no connection."""
    return (
        is_conflict(err)
        or is_too_many_requests(err)
        or is_server_error(err)
        or is_server_timeout(err)
        or isinstance(err, ApiConnectionError)
    )


def install_crd(client: Client, manifest: Path | dict[str, Any], *, timeout: float = 30.0) -> str:
    """Create the CRD in ``manifest`` (a YAML file's first document, or the object) unless one
    of that name exists, then wait until it is Established; returns its name.

    An existing CRD is left as it is (not updated). Transient API errors (409, 429, 5xx,
    timeouts, a refused connection) are retried with a growing delay, or the delay the server
    asks for, until ``timeout``: a manager starting while the API server is busy or restarting
    waits instead of exiting. Raises ``TimeoutError`` when the CRD is not Established within
    ``timeout`` seconds, the last transient error when it lasted that long, and any other
    client error at once.
    """
    if isinstance(manifest, Path):
        crd = next(d for d in yaml.safe_load_all(manifest.read_text()) if d)
    else:
        crd = manifest
    name = str(crd["metadata"]["name"])
    deadline = time.monotonic() + timeout
    delay = 0.05

    def retry_later(err: BaseException) -> None:
        nonlocal delay
        if not _transient(err) or time.monotonic() > deadline:
            raise err
        pause = suggests_client_delay(err) or delay
        log.info("installing CRD %s: %s; retrying in %.2fs", name, err, pause)
        time.sleep(min(pause, max(deadline - time.monotonic(), 0.0)))
        delay = min(delay * 2, 1.0)

    while True:
        try:
            client.create(crd)
            log.info("installed CRD %s", name)
            break
        except Exception as err:
            if is_already_exists(err):
                break
            retry_later(err)
    while True:
        try:
            if is_established(client.get(CustomResourceDefinition, name)):
                return name
        except Exception as err:
            retry_later(err)
            continue
        if time.monotonic() > deadline:
            raise TimeoutError(f"CRD {name} not Established after {timeout}s")
        time.sleep(0.05)
