"""CRD conversion through a webhook (``spec.conversion.strategy: Webhook``).

Objects of a custom resource are stored in the CRD's storage version at the time of the
write. With the ``None`` strategy a version is served by rewriting ``apiVersion`` (as
before); with ``Webhook`` every object whose ``apiVersion`` is not the one asked for is sent
to the webhook in a ``ConversionReview`` (the first of ``conversionReviewVersions`` this
server speaks, ``v1`` or ``v1beta1``; one review per object or list, objects already in the
right version left out; 30 seconds, kube-apiserver's fixed timeout): on reads (get, list,
watch, the answer of a write) to the requested version, and on writes (create, update,
patch) to the storage version. As upstream, a converted object keeps its metadata but for
``labels`` and ``annotations``, and a failure answers ``500`` (no reason: kube-apiserver's
answer for an error that is no Status) with ``conversion webhook for GROUP/VERSION,
Kind=KIND failed: ...``, the webhook's message when it answered a failure.

The calls go over the network; requests that may make them are served off the HTTP loop
(:mod:`.api`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import orjson

from kube_runtime.envtest.server import builtin_groups, errors
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import Obj, Store
from kube_runtime.envtest.server.webhookclient import CallError, post

__all__ = ["Conversions", "Converter"]

#: ``convert(objects, version)``: the objects in ``version`` of their resource.
Converter = Callable[[list[Obj], str], list[Obj]]

#: kube-apiserver's timeout of a conversion webhook call.
TIMEOUT_SECONDS = 30
_REVIEW_VERSIONS = ("v1", "v1beta1")


def _failure(message: str) -> ApiError:
    """kube-apiserver's answer for an error that is no Status: 500, no reason."""
    return errors.internal_failure(message)


class Conversions:
    """Converters of the custom resources whose CRD converts through a webhook."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def converter(self, info: ResourceInfo) -> Converter | None:
        """``info``'s converter; None when its CRD does not convert through a webhook (a
        built-in kind: when its versions differ only in ``apiVersion``)."""
        if not info.custom:
            return builtin_groups.CONVERTERS.get((info.group, info.plural))
        if info.conversion_webhook is None:
            return None
        return lambda objects, version: self.convert(info, objects, version)

    def convert(self, info: ResourceInfo, objects: list[Obj], version: str) -> list[Obj]:
        """``objects`` in ``version``: those in another version converted by the webhook."""
        desired = info.api_version(version)
        todo = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != desired]
        if not todo:
            return objects
        webhook = info.conversion_webhook or {}
        gvk = f"{objects[todo[0]].get('apiVersion')}, Kind={info.kind}"
        offered = webhook.get("conversionReviewVersions") or []
        review_version = next((v for v in offered if v in _REVIEW_VERSIONS), None)
        if review_version is None:
            raise _failure(
                f"conversion webhook for {gvk} failed: webhook does not accept known "
                f"ConversionReview versions {offered}"
            )
        review_api = f"apiextensions.k8s.io/{review_version}"
        uid = str(uuid.uuid4())
        sent = [objects[i] for i in todo]
        body = orjson.dumps(
            {
                "apiVersion": review_api,
                "kind": "ConversionReview",
                "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent},
            }
        )
        try:
            answer = post(self.store, webhook.get("clientConfig") or {}, body, TIMEOUT_SECONDS)
        except CallError as e:
            raise _failure(f"conversion webhook for {gvk} failed: {e}") from None
        converted = self._verify(answer, gvk, review_api, uid, len(sent), desired)
        out = list(objects)
        for i, original, new in zip(todo, sent, converted, strict=True):
            out[i] = _keep_metadata(original, new)
        return out

    @staticmethod
    def _verify(
        answer: Any, gvk: str, review_api: str, uid: str, count: int, desired: str
    ) -> list[Obj]:
        response = answer.get("response") if isinstance(answer, dict) else None
        if not isinstance(response, dict):
            raise _failure(f"conversion webhook for {gvk} failed: no response provided")
        if response.get("uid") != uid:
            raise _failure(
                f"conversion webhook for {gvk} failed: expected response.uid={uid!r}, "
                f"got {response.get('uid')!r}".replace("'", '"')
            )
        result = response.get("result") or {}
        if result.get("status") != "Success":
            raise _failure(f"conversion webhook for {gvk} failed: {result.get('message', '')}")
        converted = response.get("convertedObjects")
        if not isinstance(converted, list) or len(converted) != count:
            got = len(converted) if isinstance(converted, list) else 0
            raise _failure(f"conversion webhook for {gvk} returned {got} objects, expected {count}")
        for index, obj in enumerate(converted):
            if not isinstance(obj, dict) or obj.get("apiVersion") != desired:
                shown = obj.get("apiVersion") if isinstance(obj, dict) else None
                raise _failure(
                    f"conversion webhook for {gvk} returned invalid converted object at index "
                    f'{index}: invalid apiVersion "{shown}", expected "{desired}"'
                )
        return converted


def _keep_metadata(original: Obj, converted: Obj) -> Obj:
    """``converted`` with ``original``'s metadata, but for its labels and annotations."""
    meta = dict(original.get("metadata") or {})
    new_meta = converted.get("metadata") or {}
    for key in ("labels", "annotations"):
        if key in new_meta:
            meta[key] = new_meta[key]
        else:
            meta.pop(key, None)
    return {**converted, "metadata": meta}
