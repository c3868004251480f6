"""Image digests of the simulated kubelet: what ``imageID`` a container reports, and the
declarations (``kube-runtime cluster --image-digest IMAGE=DIGEST`` / ``--image-digests FILE``)
that say which tags are one image.

With no declaration a container reports a digest derived from its image reference, so two tags
are two images. A registry, though, often holds one image under several tags
(``nginx:alpine`` and ``nginx:mainline-alpine``), and a kubelet then reports the same
``imageID`` for both; Kruise's in-place update accepts such an update as done when the
container runs the spec's image with its old imageID. :data:`KubeletSettings.image_digests
<kube_runtime.envtest.kubelet.simulator.KubeletSettings>` declares it: image -> digest
(``sha256:<64 hex digits>``; the container reports ``docker-pullable://<repository>@<digest>``,
as a Docker-runtime kubelet does, so two tags of one repository with one digest report one
imageID) or image -> another image (it reports that image's imageID).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "ImageDigestError",
    "add_arguments",
    "declared_image_id",
    "from_arguments",
    "image_id",
    "is_digest",
    "load_image_digests",
    "parse_image_digest",
    "repository",
]

# OCI image-spec digests: algorithm ":" encoded; the registered algorithms' hex lengths.
_DIGEST = re.compile(r"^(?P<algorithm>[a-z0-9]+(?:[+._-][a-z0-9]+)*):(?P<encoded>[a-zA-Z0-9=_-]+)$")
_HEX_LENGTHS = {"sha256": 64, "sha512": 128}
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")


class ImageDigestError(ValueError):
    """A malformed image-digest declaration (the message says which and why)."""


def image_id(image: str) -> str:
    """The ``imageID`` reported for ``image`` when nothing is declared: a digest derived from
    the image reference (an image given by digest reports that digest)."""
    if "@sha256:" in image:
        return f"docker-pullable://{image}"
    return f"docker-pullable://{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def repository(image: str) -> str:
    """``image`` without its tag and digest (``registry:5000/ns/nginx:1.25`` ->
    ``registry:5000/ns/nginx``)."""
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def is_digest(value: str) -> bool:
    """``value`` is an image digest (``sha256:`` and 64 hex digits, ``sha512:`` and 128, or
    another OCI algorithm's ``name:encoded``)."""
    match = _DIGEST.match(value)
    if match is None:
        return False
    length = _HEX_LENGTHS.get(match["algorithm"])
    if length is None:
        return len(match["encoded"]) >= 32
    return len(match["encoded"]) == length and all(
        c in "0123456789abcdef" for c in match["encoded"]
    )


def declared_image_id(image: str, digests: Mapping[str, str]) -> str | None:
    """The ``imageID`` ``digests`` declares for ``image`` (see the module), or None when it
    declares nothing for it. An image mapped to another image reports what that image
    reports (declared or derived); a cycle of such mappings declares nothing."""
    seen = {image}
    current = image
    while True:
        value = digests.get(current)
        if value is None:
            return None if current == image else image_id(current)
        if is_digest(value):
            return f"docker-pullable://{repository(current)}@{value}"
        if value in seen:
            return None
        seen.add(value)
        current = value


def _check(image: object, digest: object, where: str) -> tuple[str, str]:
    if not isinstance(image, str) or not image.strip():
        raise ImageDigestError(f"{where}: the image must be a non-empty string, got {image!r}")
    if not isinstance(digest, str) or not digest:
        raise ImageDigestError(
            f"{where}: the digest of {image!r} must be a string like sha256:<64 hex digits>, "
            f"got {digest!r}"
        )
    if not _IMAGE.match(image):
        raise ImageDigestError(f"{where}: {image!r} is not an image reference")
    if not is_digest(digest):
        raise ImageDigestError(
            f"{where}: {digest!r} is not a digest (expected sha256: and 64 lowercase hex "
            f"digits, e.g. sha256:{'0' * 64})"
        )
    return image, digest


def parse_image_digest(text: str) -> tuple[str, str]:
    """``IMAGE=DIGEST`` -> ``(image, digest)``; :class:`ImageDigestError` when it is not of that
    form, the image is not an image reference or the digest not a digest."""
    image, sep, digest = text.partition("=")
    if not sep:
        raise ImageDigestError(
            f"--image-digest {text!r}: expected IMAGE=DIGEST, e.g. nginx:alpine=sha256:<64 hex>"
        )
    return _check(image.strip(), digest.strip(), f"--image-digest {text!r}")


def load_image_digests(path: str | Path) -> dict[str, str]:
    """The ``image: digest`` mapping in the YAML or JSON file at ``path``;
    :class:`ImageDigestError` when the file cannot be read or parsed, is not a mapping, or
    holds a malformed entry."""
    where = f"--image-digests {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ImageDigestError(f"{where}: cannot read it: {e.strerror or e}") from e
    import yaml  # here: the simulated kubelet of every embedded cluster imports this module

    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ImageDigestError(f"{where}: not YAML or JSON: {e}") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ImageDigestError(
            f"{where}: expected a mapping of image to digest, got {type(data).__name__}"
        )
    return dict(_check(k, v, f"{where}: key {json.dumps(str(k))}") for k, v in data.items())


def _flag(text: str) -> tuple[str, str]:
    try:
        return parse_image_digest(text)
    except ImageDigestError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--image-digest {text!r}: ")) from e


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--image-digest IMAGE=DIGEST`` (repeatable) and ``--image-digests FILE``
    (repeatable) to ``parser``; read them back with :func:`from_arguments`."""
    parser.add_argument(
        "--image-digest",
        dest="image_digest",
        action="append",
        type=_flag,
        default=[],
        metavar="IMAGE=DIGEST",
        help="the simulated kubelet reports imageID <repository>@DIGEST for IMAGE "
        "(e.g. nginx:alpine=sha256:<64 hex>; give two tags one digest to make them one "
        "image); repeatable, and it wins over --image-digests",
    )
    parser.add_argument(
        "--image-digests",
        dest="image_digests_files",
        action="append",
        default=[],
        metavar="FILE",
        help="a YAML or JSON mapping of image to digest, as --image-digest; repeatable",
    )


def from_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """The digests ``args`` declare (files in order, then the flags); a malformed file ends
    the program through ``parser.error`` (exit code 2), as a malformed flag does."""
    result: dict[str, str] = {}
    for path in args.image_digests_files:
        try:
            result.update(load_image_digests(path))
        except ImageDigestError as e:
            parser.error(str(e))
    result.update(args.image_digest)
    return result
