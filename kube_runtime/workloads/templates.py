"""The shape of a workload's pod template and volume claim templates, checked before use.

A typed API (apps/v1) rejects a StatefulSet whose ``template`` is a string; a CRD whose schema
leaves these fields open (``x-kubernetes-preserve-unknown-fields``, as OpenKruise's do) lets
such a spec through to the controller. :func:`template_problems` lists what a controller
could not build pods, revisions or claims from, each with its field path, so that the
controller reports the spec (a Warning event and a condition) instead of failing on it.

Only the shape is checked here: what the API then says of a pod or a claim made from a
well-shaped template (a container without an image, ...) stays the API's to say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kube_runtime.patch import json_kind
from kube_runtime.validation import dns1123_label_errors

__all__ = ["template_problems"]


_NAMED = {"object": "an object", "array": "a list", "string": "a string"}


def _kind_of(value: Any) -> str:
    return _NAMED.get(json_kind(value), type(value).__name__)


def _string_map_problem(path: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"{path}: must be an object of strings, not {_kind_of(value)}"
    for key, item in value.items():
        if not isinstance(item, str):
            return f"{path}[{key}]: must be a string, not {_kind_of(item)}"
    return None


def _metadata_problems(path: str, metadata: Any) -> list[str]:
    if metadata is None:
        return []
    if not isinstance(metadata, Mapping):
        return [f"{path}: must be an object, not {_kind_of(metadata)}"]
    found = (
        _string_map_problem(f"{path}.{field}", metadata.get(field))
        for field in ("labels", "annotations")
    )
    return [p for p in found if p is not None]


def _claim_template_problems(path: str, claim: Any, seen: set[str]) -> list[str]:
    if not isinstance(claim, Mapping):
        return [f"{path}: must be an object, not {_kind_of(claim)}"]
    metadata = claim.get("metadata")
    problems = _metadata_problems(f"{path}.metadata", metadata)
    if problems:
        return problems
    name = (metadata or {}).get("name")
    if not name:
        problems.append(f"{path}.metadata.name: Required value")
    elif not isinstance(name, str):
        problems.append(f"{path}.metadata.name: must be a string, not {_kind_of(name)}")
    elif errors := dns1123_label_errors(name):
        problems.append(f"{path}.metadata.name: Invalid value: {name!r}: {'; '.join(errors)}")
    elif name in seen:
        problems.append(f"{path}.metadata.name: Duplicate value: {name!r}")
    else:
        seen.add(name)
    spec = claim.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        problems.append(f"{path}.spec: must be an object, not {_kind_of(spec)}")
    return problems


def template_problems(spec: Mapping[str, Any]) -> list[str]:
    """What is wrong with the shape of ``spec.template`` and ``spec.volumeClaimTemplates``
    (``spec`` being a workload's spec), one message per problem with its field path; empty
    when pods and claims can be built from them. ``template`` may be absent (nothing to
    build: the caller decides whether that is an error)."""
    problems: list[str] = []
    template = spec.get("template")
    if template is not None:
        if not isinstance(template, Mapping):
            problems.append(f"spec.template: must be an object, not {_kind_of(template)}")
        else:
            problems += _metadata_problems("spec.template.metadata", template.get("metadata"))
            pod_spec = template.get("spec")
            if pod_spec is not None and not isinstance(pod_spec, Mapping):
                problems.append(f"spec.template.spec: must be an object, not {_kind_of(pod_spec)}")
    claims = spec.get("volumeClaimTemplates")
    if claims is not None:
        if not isinstance(claims, list):
            problems.append(f"spec.volumeClaimTemplates: must be a list, not {_kind_of(claims)}")
        else:
            seen: set[str] = set()
            for i, claim in enumerate(claims):
                problems += _claim_template_problems(f"spec.volumeClaimTemplates[{i}]", claim, seen)
    return problems
