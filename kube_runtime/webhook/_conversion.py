"""CRD conversion: ``apiextensions.k8s.io/v1`` ConversionReview through registered converters
(controller-runtime ``pkg/webhook/conversion``).

A converter turns one object of a kind from one version into another: ``fn(obj) -> obj``.
``obj`` is a dict, or a model when the version was registered with its model class; the
result may be either. :class:`Conversions` keeps them per group and kind:

* a direct converter ``from -> to`` is used when there is one;
* otherwise, with a hub version set (controller-runtime's ``Hub``/``Convertible``), the object
  goes ``from -> hub -> to``;
* an object already in the desired version is returned as it is.

The result gets the desired ``apiVersion`` and the source ``kind`` (and the source's
``metadata`` when the converter returned none). One object that cannot be converted fails the
whole review: ``result.status: Failure`` with the message, as controller-runtime answers
(``errored``); the API server then fails the request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from kube_runtime.webhook._objects import DecodeError, decode, encode

__all__ = [
    "CONVERSION_API_VERSIONS",
    "ConversionError",
    "Conversions",
    "ConvertFn",
    "failure_review",
]

log = logging.getLogger(__name__)

CONVERSION_API_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
"""The ConversionReview versions served; the answer is in the version of the request."""

ConvertFn = Callable[[Any], Any]
"""``fn(obj) -> obj``: one object converted to another version."""


class ConversionError(ValueError):
    """An object cannot be converted (raise it from a converter to fail with a message)."""


@dataclass(frozen=True)
class _Step:
    fn: ConvertFn
    source_model: type[BaseModel] | None
    target_model: type[BaseModel] | None


class Conversions:
    """The converters of every kind a server converts (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (group, kind) -> (from version, to version) -> step
        self._steps: dict[tuple[str, str], dict[tuple[str, str], _Step]] = {}
        self._hubs: dict[tuple[str, str], str] = {}
        self._plurals: dict[tuple[str, str], str] = {}

    def register(
        self,
        group: str,
        kind: str,
        from_version: str,
        to_version: str,
        fn: ConvertFn,
        *,
        source_model: type[BaseModel] | None = None,
        target_model: type[BaseModel] | None = None,
        plural: str | None = None,
    ) -> None:
        """Convert ``group``/``kind`` objects from ``from_version`` to ``to_version`` with
        ``fn``; a ``source_model`` decodes what ``fn`` receives, a ``target_model`` checks
        what it returns; ``plural`` names the CRD (``plural.group``)."""
        if from_version == to_version:
            raise ValueError(f"{kind}: a converter needs two different versions")
        with self._lock:
            steps = self._steps.setdefault((group, kind), {})
            if (from_version, to_version) in steps:
                raise ValueError(f"{kind}.{group}: {from_version} -> {to_version} is registered")
            steps[(from_version, to_version)] = _Step(fn, source_model, target_model)
            if plural:
                self._plurals[(group, kind)] = plural

    def set_hub(self, group: str, kind: str, version: str, *, plural: str | None = None) -> None:
        """Convert between versions without a direct converter through ``version``."""
        with self._lock:
            self._hubs[(group, kind)] = version
            if plural:
                self._plurals[(group, kind)] = plural

    def crd_names(self) -> list[str]:
        """The names (``plural.group``) of the CRDs converted here; a plural not given at
        registration is guessed as the lower-case kind plus ``s``."""
        with self._lock:
            kinds = sorted(set(self._steps) | set(self._hubs))
            return [f"{self._plurals.get(k) or k[1].lower() + 's'}.{k[0]}" for k in kinds]

    def kinds(self) -> list[tuple[str, str]]:
        """The (group, kind) pairs with converters, sorted."""
        with self._lock:
            return sorted(set(self._steps) | set(self._hubs))

    def convert(self, obj: Mapping[str, Any], desired_api_version: str) -> dict[str, Any]:
        """``obj`` in ``desired_api_version``; :class:`ConversionError` when impossible."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
            raise ConversionError("an object to convert has no apiVersion or kind")
        group, _, version = api_version.rpartition("/")
        desired_group, _, desired_version = desired_api_version.rpartition("/")
        if group != desired_group:
            raise ConversionError(
                f"{kind} of {api_version} and {desired_api_version} are not in the same API group"
            )
        if version == desired_version:
            return dict(obj)
        with self._lock:
            steps = dict(self._steps.get((group, kind), {}))
            hub = self._hubs.get((group, kind))
        legs = [(version, desired_version)]
        if (version, desired_version) not in steps and hub is not None:
            legs = [(a, b) for a, b in [(version, hub), (hub, desired_version)] if a != b]
        if not all(leg in steps for leg in legs):
            raise ConversionError(
                f"{kind}.{group} {version} is not convertible to {desired_version}: "
                "no converter registered"
            )
        current: dict[str, Any] = dict(obj)
        for leg in legs:
            step = steps[leg]
            try:
                source = decode(current, step.source_model)
            except DecodeError as e:
                raise ConversionError(str(e)) from e
            converted = encode(step.fn(source))
            converted.setdefault("metadata", current.get("metadata", {}))
            converted["apiVersion"] = f"{group}/{leg[1]}" if group else leg[1]
            converted["kind"] = kind
            if step.target_model is not None:  # a converter's result must be a valid target
                try:
                    decode(converted, step.target_model)
                except DecodeError as e:
                    raise ConversionError(str(e)) from e
            current = converted
        return current

    def review(self, review: Any) -> tuple[int, dict[str, Any]]:
        """Answer a decoded ConversionReview: (HTTP status, review). A body that is not a
        review with a request gets 400 and a review whose result says why."""
        if not isinstance(review, Mapping):
            return 400, failure_review(
                "", CONVERSION_API_VERSIONS[0], "the body is not a JSON object"
            )
        api_version = str(review.get("apiVersion") or CONVERSION_API_VERSIONS[0])
        request = review.get("request")
        if api_version not in CONVERSION_API_VERSIONS or review.get("kind") not in (
            None,
            "ConversionReview",
        ):
            message = f"expected a ConversionReview of {' or '.join(CONVERSION_API_VERSIONS)}"
            return 400, failure_review("", CONVERSION_API_VERSIONS[0], message)
        if not isinstance(request, Mapping):
            return 400, failure_review("", api_version, "conversion request is nil")
        uid = str(request.get("uid") or "")
        desired = request.get("desiredAPIVersion")
        objects = request.get("objects") or []
        if not isinstance(desired, str) or not desired or not isinstance(objects, list):
            message = "conversion request needs desiredAPIVersion and a list of objects"
            return 400, failure_review(uid, api_version, message)
        converted = []
        for obj in objects:
            try:
                if not isinstance(obj, Mapping):
                    raise ConversionError("an object to convert is not a JSON object")
                converted.append(self.convert(obj, desired))
            except Exception as e:
                if not isinstance(e, ConversionError):
                    log.error("converting to %s failed (uid %s)", desired, uid, exc_info=e)
                return 200, failure_review(uid, api_version, str(e) or type(e).__name__)
        response = {
            "uid": uid,
            "convertedObjects": converted,
            "result": {"metadata": {}, "status": "Success"},
        }
        return 200, {"apiVersion": api_version, "kind": "ConversionReview", "response": response}


def failure_review(uid: str, api_version: str, message: str) -> dict[str, Any]:
    """A ConversionReview answering ``uid`` with ``result.status: Failure`` and ``message``."""
    response = {
        "uid": uid,
        "convertedObjects": None,
        "result": {"metadata": {}, "status": "Failure", "message": message},
    }
    return {"apiVersion": api_version, "kind": "ConversionReview", "response": response}
