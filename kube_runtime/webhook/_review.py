"""``admission.k8s.io/v1`` AdmissionReview: the request a handler reads, the response it writes.

:class:`AdmissionRequest` is the review's ``request`` with snake_case names; its ``object`` /
``old_object`` are the raw JSON objects (handlers decode them into dicts or models).
:class:`AdmissionResponse` is what a handler decides; :meth:`AdmissionResponse.review`
completes it as controller-runtime's ``Response.Complete`` does (the request's ``uid``, a
result code of 200 when none was set, the JSON patch base64-encoded with
``patchType: JSONPatch``) and wraps it in a review of the request's ``apiVersion``.

The constructors follow controller-runtime's ``admission`` package: :func:`allowed`,
:func:`denied` (403 ``Forbidden``), :func:`errored` (a code and a message), :func:`from_status`
(any Status) and :func:`patched`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "ADMISSION_API_VERSIONS",
    "AdmissionRequest",
    "AdmissionResponse",
    "ReviewError",
    "allowed",
    "denied",
    "errored",
    "from_status",
    "patched",
]

ADMISSION_API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
"""The review versions served; the answer is in the version of the request."""


class ReviewError(ValueError):
    """The body is not an AdmissionReview with a request (answered 400)."""


@dataclass
class AdmissionRequest:
    """One admission request (``AdmissionReview.request``), handed to defaulters and
    validators with the object.

    ``operation`` is ``CREATE``, ``UPDATE``, ``DELETE`` or ``CONNECT``; ``kind`` and
    ``resource`` are ``{"group", "version", "kind"|"resource"}`` mappings; ``dry_run`` says
    that nothing will be persisted (a webhook with side effects must not make them then).
    :meth:`warn` adds a warning to the response (kubectl prints it).
    """

    uid: str
    operation: str
    kind: dict[str, str]
    resource: dict[str, str]
    name: str = ""
    namespace: str = ""
    sub_resource: str = ""
    request_kind: dict[str, str] | None = None
    request_resource: dict[str, str] | None = None
    request_sub_resource: str = ""
    user_info: dict[str, Any] = field(default_factory=dict)
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    options: dict[str, Any] | None = None
    api_version: str = ADMISSION_API_VERSIONS[0]
    warnings: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        """Add a warning to the response."""
        self.warnings.append(message)

    @property
    def group(self) -> str:
        """The API group of the object's kind (``""`` for the core group)."""
        return str(self.kind.get("group", ""))

    @property
    def kind_name(self) -> str:
        """The object's kind, e.g. ``"Pod"``."""
        return str(self.kind.get("kind", ""))

    @property
    def object_name(self) -> str:
        """The object's name: the request's, else the object's (a create with
        ``generateName`` has none yet)."""
        if self.name:
            return self.name
        for obj in (self.object, self.old_object):
            meta = obj.get("metadata") if isinstance(obj, Mapping) else None
            if isinstance(meta, Mapping) and meta.get("name"):
                return str(meta["name"])
        return ""

    @classmethod
    def from_review(cls, review: Any) -> AdmissionRequest:
        """Read a decoded AdmissionReview; :class:`ReviewError` when it is not one."""
        if not isinstance(review, Mapping):
            raise ReviewError("the body is not a JSON object")
        api_version = review.get("apiVersion") or ADMISSION_API_VERSIONS[0]
        if api_version not in ADMISSION_API_VERSIONS or review.get("kind", "AdmissionReview") != (
            "AdmissionReview"
        ):
            raise ReviewError(
                f"expected an AdmissionReview of {' or '.join(ADMISSION_API_VERSIONS)}, "
                f"got kind {review.get('kind')!r} of {api_version!r}"
            )
        req = review.get("request")
        if not isinstance(req, Mapping):
            raise ReviewError("the AdmissionReview has no request")
        uid, operation = req.get("uid"), req.get("operation")
        if not isinstance(uid, str) or not uid:
            raise ReviewError("the AdmissionReview request has no uid")
        if not isinstance(operation, str) or not operation:
            raise ReviewError("the AdmissionReview request has no operation")
        return cls(
            uid=uid,
            operation=operation,
            kind=_gvk(req.get("kind")),
            resource=_gvk(req.get("resource")),
            name=str(req.get("name") or ""),
            namespace=str(req.get("namespace") or ""),
            sub_resource=str(req.get("subResource") or ""),
            request_kind=_gvk(req["requestKind"]) if req.get("requestKind") else None,
            request_resource=_gvk(req["requestResource"]) if req.get("requestResource") else None,
            request_sub_resource=str(req.get("requestSubResource") or ""),
            user_info=dict(req.get("userInfo") or {}),
            object=_object(req.get("object")),
            old_object=_object(req.get("oldObject")),
            dry_run=bool(req.get("dryRun")),
            options=dict(req["options"]) if isinstance(req.get("options"), Mapping) else None,
            api_version=str(api_version),
        )


def _gvk(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _object(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) else None


@dataclass
class AdmissionResponse:
    """A handler's decision: ``allowed``, a ``meta/v1 Status`` (``status``), JSON patch
    operations (``patch``) and ``warnings``."""

    allowed: bool
    status: dict[str, Any] | None = None
    patch: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def with_warnings(self, warnings: list[str] | tuple[str, ...]) -> AdmissionResponse:
        """Add ``warnings`` (controller-runtime ``WithWarnings``); returns self."""
        self.warnings.extend(warnings)
        return self

    def review(self, uid: str, api_version: str = ADMISSION_API_VERSIONS[0]) -> dict[str, Any]:
        """The AdmissionReview answering request ``uid`` (``Response.Complete``)."""
        status = dict(self.status or {})
        status.setdefault("metadata", {})
        if not status.get("code"):
            status["code"] = 200
        response: dict[str, Any] = {"uid": uid, "allowed": self.allowed, "status": status}
        if self.patch:
            response["patch"] = base64.b64encode(orjson.dumps(self.patch)).decode()
            response["patchType"] = "JSONPatch"
        if self.warnings:
            response["warnings"] = list(self.warnings)
        return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def allowed(message: str = "") -> AdmissionResponse:
    """Allow the request (code 200)."""
    status: dict[str, Any] = {"metadata": {}, "code": 200}
    if message:
        status["message"] = message
    return AdmissionResponse(True, status)


def denied(message: str = "") -> AdmissionResponse:
    """Refuse the request: code 403, reason ``Forbidden``."""
    status: dict[str, Any] = {"metadata": {}, "code": 403, "reason": "Forbidden"}
    if message:
        status["message"] = message
    return AdmissionResponse(False, status)


def errored(code: int, message: str) -> AdmissionResponse:
    """Refuse the request because it could not be handled (a bad request, a webhook bug)."""
    return AdmissionResponse(False, {"metadata": {}, "code": code, "message": message})


def from_status(allowed: bool, status: Mapping[str, Any]) -> AdmissionResponse:
    """Answer with ``status`` as it is (``validationResponseFromStatus``); the Status's own
    ``kind``/``apiVersion`` are dropped (a response's Status carries none)."""
    body = {k: v for k, v in status.items() if k not in ("kind", "apiVersion")}
    body.setdefault("metadata", {})
    return AdmissionResponse(allowed, body)


def patched(operations: list[dict[str, Any]], message: str = "") -> AdmissionResponse:
    """Allow the request with JSON patch ``operations`` applied to the object."""
    response = allowed(message)
    response.patch = list(operations)
    return response
