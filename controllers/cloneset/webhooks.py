"""The CloneSet's webhooks. The validating one (issue 17 part 3) refuses the specs the
controller cannot act on (:func:`~controllers.cloneset.core.validate`: template and
claim-template shapes, selectors, negative counts, malformed int-or-percent values, unknown
strategies, InPlaceOnly with maxSurge) and selector changes, as OpenKruise's CloneSet webhook
does. The defaulting one sets what OpenKruise's mutating webhook sets
(:func:`set_defaults`). ``kube-runtime run cloneset --webhook-port N`` serves both
(:func:`setup_webhooks`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from controllers.cloneset.core import (
    CLONESET,
    DEFAULT_MAX_UNAVAILABLE,
    IN_PLACE_IF_POSSIBLE,
    IN_PLACE_ONLY,
    RECREATE,
    SpecError,
    validate,
)
from kube_runtime import meta, webhook
from kube_runtime.client.mapping import Resource
from kube_runtime.manager import Manager

__all__ = ["RESOURCE", "CloneSetValidator", "set_defaults", "setup_webhooks"]

RESOURCE = Resource(
    group=CLONESET.group,
    version=CLONESET.version,
    kind=CLONESET.kind,
    plural="clonesets",
    namespaced=True,
)
"""The CloneSet's resource, for the webhook configuration."""


def _check(obj: Any) -> None:
    try:
        validate(dict(obj) if isinstance(obj, dict) else obj)
    except SpecError as err:
        raise webhook.Denied(f"invalid CloneSet spec: {err}") from None


class CloneSetValidator(webhook.Validator):
    """Refuses what :func:`~controllers.cloneset.core.validate` refuses, and selector changes."""

    def validate_create(self, obj: Any, request: webhook.AdmissionRequest) -> None:
        _check(obj)

    def validate_update(self, old: Any, new: Any, request: webhook.AdmissionRequest) -> None:
        if meta.spec(new).get("selector") != meta.spec(old).get("selector"):
            raise webhook.Invalid(
                errors=[
                    webhook.FieldError.forbidden(
                        "spec.selector", "selector is immutable in a CloneSet"
                    )
                ]
            )
        _check(new)


def set_defaults(obj: Mapping[str, Any], request: Any = None) -> dict[str, Any]:
    """A copy of CloneSet ``obj`` with OpenKruise's defaults (``SetDefaultsCloneSet`` in
    ``apis/apps/defaults``): ``replicas`` 1, ``revisionHistoryLimit`` 10,
    ``updateStrategy.type`` ReCreate (an in-place type gets an empty
    ``inPlaceUpdateStrategy``), ``partition`` 0, ``maxUnavailable`` 20%, ``maxSurge`` 0. The pod
    template's defaults (Kruise's ``SetDefaultPodSpec``) are left to the API server, which
    sets them on the pods. ``request`` is the admission request (unused)."""
    result = copy.deepcopy(dict(obj))
    spec = result.setdefault("spec", {})
    if not isinstance(spec, dict):
        return result
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    strategy = spec.get("updateStrategy")
    if strategy is None:
        strategy = spec["updateStrategy"] = {}
    if not isinstance(strategy, dict):
        return result
    if not strategy.get("type"):
        strategy["type"] = RECREATE
    elif (
        strategy["type"] in (IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)
        and strategy.get("inPlaceUpdateStrategy") is None
    ):
        strategy["inPlaceUpdateStrategy"] = {}
    for key, value in (
        ("partition", 0),
        ("maxUnavailable", DEFAULT_MAX_UNAVAILABLE),
        ("maxSurge", 0),
    ):
        if strategy.get(key) is None:
            strategy[key] = value
    return result


def setup_webhooks(manager: Manager) -> None:
    """Serve :func:`set_defaults` and :class:`CloneSetValidator` from ``manager``'s webhook
    server."""
    (
        webhook.for_kind(manager, CLONESET, resource=RESOURCE)
        .defaulter(set_defaults)
        .validator(CloneSetValidator())
    )
