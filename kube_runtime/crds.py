"""Installing a CustomResourceDefinition from a manifest and waiting until it is served."""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import yaml

from kube_runtime import clock
from kube_runtime._bounded import remember
from kube_runtime.client.errors import (
    AlreadyExists,
    ApiConnectionError,
    NotFound,
    is_conflict,
    is_server_error,
    is_server_timeout,
    is_too_many_requests,
    suggests_client_delay,
)
from kube_runtime.kinds import CustomResourceDefinition

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client

__all__ = [
    "VALIDATION_RULES_SINCE",
    "for_server_version",
    "install_crd",
    "is_established",
    "schema_nodes",
    "server_version",
]

log = logging.getLogger(__name__)

_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (same constructor as ``yaml.safe_load``): a
bundled CRD of ~30 kB parses in milliseconds instead of ~150 ms of pure Python."""


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


VALIDATION_RULES_SINCE: dict[str, tuple[int, int]] = {
    "x-kubernetes-validations": (1, 25),
    "messageExpression": (1, 26),
    "reason": (1, 28),
    "fieldPath": (1, 28),
    "optionalOldSelf": (1, 30),
}
"""The first Kubernetes release whose ``apiextensions.k8s.io/v1`` schema declares each part of
CEL validation rules (``x-kubernetes-validations`` itself, then fields of one rule) on by
default. An older kube-apiserver refuses a CRD carrying them under server-side apply (field not
declared in schema) and drops them silently on create."""


def schema_nodes(crd: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every schema node of every version of ``crd`` (properties, items, additionalProperties,
    allOf/anyOf/oneOf/not), depth first."""

    def walk(node: Any) -> Iterator[dict[str, Any]]:
        if not isinstance(node, dict):
            return
        yield node
        for child in (node.get("properties") or {}).values():
            yield from walk(child)
        for key in ("items", "additionalProperties", "not"):
            yield from walk(node.get(key))
        for key in ("allOf", "anyOf", "oneOf"):
            for child in node.get(key) or ():
                yield from walk(child)

    for version in (crd.get("spec") or {}).get("versions") or ():
        yield from walk(((version or {}).get("schema") or {}).get("openAPIV3Schema"))


def for_server_version(crd: dict[str, Any], version: tuple[int, int]) -> tuple[dict[str, Any], int]:
    """``crd`` as a kube-apiserver of ``version`` (``(major, minor)``) accepts it, and how many
    CEL rules (or parts of rules) were taken out: ``x-kubernetes-validations`` before 1.25,
    then the rule fields that release does not know yet (:data:`VALIDATION_RULES_SINCE`). The
    schema's other checks (types, enums, minimums, patterns) stay. ``crd`` is not changed; a
    CRD with nothing to strip is returned as it is."""
    if version >= max(VALIDATION_RULES_SINCE.values()):
        return crd, 0
    out = copy.deepcopy(crd)
    removed = 0
    for node in schema_nodes(out):
        rules = node.get("x-kubernetes-validations")
        if rules is None:
            continue
        if version < VALIDATION_RULES_SINCE["x-kubernetes-validations"]:
            removed += len(rules)
            del node["x-kubernetes-validations"]
            continue
        for rule in rules:
            for field, since in VALIDATION_RULES_SINCE.items():
                if version < since and isinstance(rule, dict) and field in rule:
                    del rule[field]
                    removed += 1
    return (out, removed) if removed else (crd, 0)


def server_version(client: Any) -> tuple[int, int] | None:
    """``(major, minor)`` from the server's ``/version`` (a minor such as ``"20+"`` counts as
    20), or None when ``client`` cannot read paths (a fake client) or the answer has none."""
    get_path = getattr(client, "get_path", None)
    if not callable(get_path):
        return None
    info = get_path("/version")
    try:
        major, minor = (
            int(re.match(r"\d+", str(info[key])).group())  # type: ignore[union-attr]
            for key in ("major", "minor")
        )
    except (KeyError, TypeError, AttributeError):
        return None
    return major, minor


_MANIFESTS: dict[tuple[str, int, int], bytes] = {}
_MANIFESTS_MAX = 64


def _manifest_crd(path: Path) -> dict[str, Any]:
    """The first document of the YAML file ``path``, a fresh object on every call: a file
    seen before (same path, size and modification time) is not parsed again (a large CRD's
    YAML takes tens of milliseconds; tests and managers install the same files often)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    encoded = _MANIFESTS.get(key)
    if encoded is not None:
        crd: dict[str, Any] = orjson.loads(encoded)
        return crd
    crd = next(d for d in yaml.load_all(path.read_text(), Loader=_YAML_LOADER) if d)
    try:
        encoded = orjson.dumps(crd)
    except TypeError:  # a value JSON cannot hold (a YAML timestamp): not remembered
        return crd
    remember(_MANIFESTS, key, encoded, _MANIFESTS_MAX)
    return crd


def install_crd(client: Client, manifest: Path | dict[str, Any], *, timeout: float = 30.0) -> str:
    """Create the CRD in ``manifest`` (a YAML file's first document, or the object) unless one
    of that name exists, then wait until it is Established; returns its name.

    The server's version is read first (``/version``): CEL validation rules the server does
    not know (:func:`for_server_version`: all of them before Kubernetes 1.25) are taken out,
    and a log line at info says how many, so one manifest installs on old and new clusters.

    An existing CRD is left as it is (not updated). Transient API errors (409, 429, 5xx,
    timeouts, a refused connection) are retried with a growing delay, or the delay the server
    asks for, until ``timeout``: a manager starting while the API server is busy or restarting
    waits instead of exiting. Raises ``TimeoutError`` when the CRD is not Established within
    ``timeout`` seconds, the last transient error when it lasted that long, and any other
    client error at once. Returns once discovery lists the resource in every served version
    (kube-apiserver publishes it a moment after Established), so a REST mapping made next
    finds the kind. Its waits and timeout run on :func:`kube_runtime.clock.current` (virtual
    seconds on a simulated clock).
    """
    if isinstance(manifest, Path):
        crd = _manifest_crd(manifest)
    else:
        crd = manifest
    name = str(crd["metadata"]["name"])
    clk = clock.current()  # its waits are virtual on a simulated clock
    deadline = clk.monotonic() + timeout
    delay = 0.05
    version: tuple[int, int] | None = None

    def retry_later(err: BaseException) -> None:
        nonlocal delay
        if not _transient(err) or clk.monotonic() > deadline:
            raise err
        pause = suggests_client_delay(err) or delay
        log.info("installing CRD %s: %s; retrying in %.2fs", name, err, pause)
        clk.sleep(min(pause, max(deadline - clk.monotonic(), 0.0)))
        delay = min(delay * 2, 1.0)

    while version is None:
        try:
            version = server_version(client) or max(VALIDATION_RULES_SINCE.values())
        except Exception as err:
            retry_later(err)
    crd, stripped = for_server_version(crd, version)
    if stripped:
        log.info(
            "installing CRD %s: Kubernetes %d.%d does not know %d CEL validation rule part(s) "
            "(x-kubernetes-validations before 1.25, newer rule fields later): left out; the "
            "schema's other checks stay",
            name,
            *version,
            stripped,
        )
    while True:
        try:
            client.create(crd)
            log.info("installed CRD %s", name)
            break
        except AlreadyExists:
            break
        except Exception as err:
            retry_later(err)
    while True:
        try:
            if is_established(client.get(CustomResourceDefinition, name)):
                break
        except Exception as err:
            retry_later(err)
            continue
        if clk.monotonic() > deadline:
            raise TimeoutError(f"CRD {name} not Established after {timeout}s")
        clk.sleep(0.05)
    # Established is not yet served: kube-apiserver publishes a new group's discovery a
    # moment later, and a REST mapping made in between misses the kind (envtest's
    # WaitForCRDs waits for discovery too).
    for path in _served_paths(crd):
        while not _discovered(client, path, crd["spec"]["names"]["plural"]):
            if clk.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} not in discovery ({path}) after {timeout}s")
            clk.sleep(0.05)
    return name


def _served_paths(crd: dict[str, Any]) -> list[str]:
    """The discovery path of each served version of ``crd``."""
    group = crd["spec"]["group"]
    return [
        f"/apis/{group}/{v['name']}"
        for v in crd["spec"].get("versions") or ()
        if v.get("served", True)
    ]


def _discovered(client: Any, path: str, plural: str) -> bool:
    """Whether discovery at ``path`` lists ``plural``. Not yet: a 404 (the group is not
    published yet) or a transient error. True for a client that cannot read discovery (a
    fake one, another error): nothing to wait for there."""
    get_path = getattr(client, "get_path", None)
    if not callable(get_path):
        return True
    try:
        answer = get_path(path)
    except NotFound:
        return False
    except Exception as err:
        return not _transient(err)
    resources = answer.get("resources") if isinstance(answer, dict) else None
    return any(isinstance(r, dict) and r.get("name") == plural for r in resources or ())
