"""kube-apiserver's facts, in one place: what the fake client and the embedded server both say.

The :class:`~kube_runtime.client.fake.FakeClient` and the embedded API server of
:mod:`kube_runtime.envtest` answer the same failing call with the same ``meta/v1 Status`` and
give a created object the same server-set fields, because both take them from here (and
``tests/unit/framework/test_apiserver_facts.py`` checks that they agree):

* **Errors** (:func:`api_error` and the constructors named after Status reasons): the typed
  errors of :mod:`kube_runtime.client.errors` carrying the Status kube-apiserver answers with,
  worded as it words them (``pods "x" not found``, ``StatefulSet.apps "web" is invalid: ...``),
  with the ``details`` (``name``, ``group``, ``kind``, ``causes``) it fills in;
  :data:`STALE_MESSAGE` and the precondition messages of a conflict.
* **Per-kind tables**, keyed by ``(group, plural)`` (names: ``(group, kind)``): the rule a
  kind's names follow (:data:`NAME_RULES`, :func:`name_errors`), which built-in resources set
  and bump ``metadata.generation`` (:data:`TRACKS_GENERATION`; set only:
  :data:`GENERATION_ON_CREATE_ONLY`), which answer a DELETE with the deleted object
  (:data:`RETURN_DELETED_OBJECT`), and the status a created object starts with
  (:func:`initial_status`; a Pod's ``phase: Pending`` with its ``qosClass``,
  :func:`pod_qos_class`, which compares resource quantities by value, :func:`parse_quantity`).
  Kinds a subresource table holds (``status``, ``scale``) are
  :data:`~kube_runtime.client.mapping.BUILTIN_RESOURCES`' business.
* **Go value rendering** as field errors print a rejected value: :func:`go_quote` (``%q``),
  :func:`go_float` (``%v`` of a float64), :func:`go_json` (``encoding/json``) and
  :func:`go_value` (``field.Error``'s body: typed values of built-in kinds, or the decoded JSON
  of a custom resource); :func:`go_sprint` and :func:`go_type` (``%v`` and ``%T`` of decoded
  JSON, as unstructured accessors' errors print them).

A private module of the framework (the layer of the REST client), so that the fake client
and the test cluster may both import it; nothing here is part of the public API.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from kube_runtime.client.errors import STATUS_REASONS, ApiError, error_from_status
from kube_runtime.patch import json_kind
from kube_runtime.validation import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    path_segment_errors,
)

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "GENERATION_ON_CREATE_ONLY",
    "INVALID",
    "NAME_RULES",
    "NOT_FOUND",
    "NOT_SUPPORTED",
    "QUANTITY_RE",
    "REQUIRED",
    "RETURN_DELETED_OBJECT",
    "STALE_MESSAGE",
    "TOO_LONG",
    "TOO_MANY",
    "TRACKS_GENERATION",
    "TYPE_INVALID",
    "Cause",
    "already_exists",
    "api_error",
    "bad_request",
    "conflict",
    "decodes_as_int64",
    "delete_precondition_failed",
    "go_float",
    "go_json",
    "go_quote",
    "go_sprint",
    "go_type",
    "go_value",
    "gone",
    "initial_status",
    "internal_error",
    "internal_failure",
    "invalid",
    "method_not_allowed",
    "name_errors",
    "name_rule",
    "not_found",
    "parse_quantity",
    "patched_metadata_error",
    "pod_qos_class",
    "qualified_kind",
    "resource_name",
    "resource_version_required",
    "route_not_found",
    "status_error",
    "storage_key",
    "uid_precondition_failed",
    "unsupported_media_type",
]

# ------------------------------------------------------------------------------ errors

#: kube-apiserver's message for a write with a stale resourceVersion (the optimistic
#: concurrency conflict), after ``Operation cannot be fulfilled on <resource> "<name>": ``.
STALE_MESSAGE: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)

#: The reason a Status gets when the raiser names none: client-go's, but a 410 is ``Expired`` (a
#: watch from a compacted resourceVersion), plus the codes only the server answers with.
_REASONS: Final[Mapping[int, str]] = {
    **STATUS_REASONS,
    406: "NotAcceptable",
    410: "Expired",
    415: "UnsupportedMediaType",
}


# The ``reason`` of a Status cause naming a field error (apimachinery's ``field.ErrorType``).
NOT_FOUND: Final = "FieldValueNotFound"
REQUIRED: Final = "FieldValueRequired"
DUPLICATE: Final = "FieldValueDuplicate"
INVALID: Final = "FieldValueInvalid"
NOT_SUPPORTED: Final = "FieldValueNotSupported"
FORBIDDEN: Final = "FieldValueForbidden"
TOO_LONG: Final = "FieldValueTooLong"
TOO_MANY: Final = "FieldValueTooMany"
TYPE_INVALID: Final = "FieldValueTypeInvalid"


@dataclass(frozen=True, slots=True)
class Cause:
    """One field error, shaped like a ``metav1.StatusCause`` (``field``: the JSON path,
    ``reason``: ``FieldValueInvalid`` and friends, ``message``: the error's body)."""

    field: str
    reason: str
    message: str


def resource_name(plural: str, group: str) -> str:
    """How a message names a resource: ``pods``, ``statefulsets.apps``."""
    return f"{plural}.{group}" if group else plural


def qualified_kind(kind: str, group: str) -> str:
    """How validation and delete-precondition messages name a kind: ``Pod``,
    ``StatefulSet.apps``."""
    return f"{kind}.{group}" if group else kind


def status_error(
    code: int, message: str, reason: str = "", details: dict[str, Any] | None = None
) -> ApiError:
    """The typed error answering HTTP ``code`` with a Failure Status of exactly these
    fields: no ``reason`` when it is empty, no ``details`` when None."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        status["reason"] = reason
    status["code"] = code
    if details is not None:
        status["details"] = details
    return error_from_status(status)


def api_error(
    code: int, message: str, reason: str | None = None, details: dict[str, Any] | None = None
) -> ApiError:
    """The typed error answering HTTP ``code`` with a Failure Status: ``reason`` (by default
    the code's, e.g. ``NotFound`` for 404), ``details`` when given (a Status without them has
    none)."""
    return status_error(code, message, reason or _REASONS.get(code, "Unknown"), details)


def internal_error(message: str) -> ApiError:
    """kube-apiserver's 500 for a failure inside the server (apimachinery's
    ``NewInternalError``): ``Internal error occurred: <message>``, reason ``InternalError``,
    the message again as the one cause."""
    return api_error(
        500,
        f"Internal error occurred: {message}",
        "InternalError",
        {"causes": [{"message": message}]},
    )


def internal_failure(message: str) -> ApiError:
    """kube-apiserver's answer for an error that is no Status (a conversion webhook's
    failure, a typed-patch error of server-side apply): code 500, no reason."""
    return status_error(500, message)


def _details(group: str, kind: str, name: str | None) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": kind}
    if name is not None:
        d["name"] = name
    if group:
        d["group"] = group
    return d


def _about(code: int, reason: str, message: str, resource: str, group: str, name: str) -> ApiError:
    """An error about one object; ``resource`` is the plural, plus ``.group`` outside core
    (``details.kind`` is the part before the first dot, as kube-apiserver's)."""
    return api_error(code, message, reason, _details(group, resource.split(".")[0], name))


def not_found(resource: str, group: str, name: str) -> ApiError:
    """404 NotFound: ``pods "x" not found`` (``resource``: :func:`resource_name`'s form)."""
    return _about(404, "NotFound", f'{resource} "{name}" not found', resource, group, name)


def already_exists(resource: str, group: str, name: str) -> ApiError:
    """409 AlreadyExists for a create of a taken name: ``pods "x" already exists``."""
    message = f'{resource} "{name}" already exists'
    return _about(409, "AlreadyExists", message, resource, group, name)


def conflict(resource: str, group: str, name: str, why: str = STALE_MESSAGE) -> ApiError:
    """409 Conflict: ``Operation cannot be fulfilled on <resource> "<name>": <why>`` (by default
    a stale resourceVersion, :data:`STALE_MESSAGE`). A failed delete precondition names the
    kind (:func:`qualified_kind`) where others name the resource."""
    message = f'Operation cannot be fulfilled on {resource} "{name}": {why}'
    return _about(409, "Conflict", message, resource, group, name)


#: etcd key prefixes of kube-apiserver's storage that are not the plural (its
#: ``specialDefaultResourcePrefixes``, and the CRDs' own apiextensions storage).
_STORAGE_PREFIXES: Final[Mapping[tuple[str, str], str]] = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("networking.k8s.io", "ingresses"): "ingress",
    ("extensions", "ingresses"): "ingress",
    ("policy", "podsecuritypolicies"): "podsecuritypolicy",
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        "apiextensions.k8s.io/customresourcedefinitions"
    ),
}


def storage_key(group: str, plural: str, namespace: str, name: str, *, custom: bool) -> str:
    """Where kube-apiserver keeps an object in etcd (``/registry/configmaps/ns/a``,
    ``/registry/minions/n1``, ``/registry/example.com/widgets/ns/w`` for a custom resource), as
    its storage errors name it; ``namespace`` is "" for a cluster-scoped kind."""
    prefix = f"{group}/{plural}" if custom else _STORAGE_PREFIXES.get((group, plural), plural)
    return "/registry/" + "/".join(part for part in (prefix, namespace, name) if part)


def uid_precondition_failed(
    resource: str, group: str, name: str, uid: str, actual: Any, *, key: str
) -> ApiError:
    """409 for an update whose ``metadata.uid`` (a precondition) names another object: the
    storage layer's error about ``key`` (:func:`storage_key`), as kube-apiserver words it."""
    why = (
        f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
        f"AdditionalErrorMsg: Precondition failed: UID in precondition: {uid}, "
        f"UID in object meta: {actual}"
    )
    return conflict(resource, group, name, why)


def delete_precondition_failed(
    kind: str,
    group: str,
    name: str,
    *,
    uid: tuple[str, Any] | None = None,
    resource_version: tuple[str, Any] | None = None,
) -> ApiError:
    """409 for a DELETE whose precondition fails: ``uid`` or ``resource_version`` is
    ``(asked, in record)``; the message names the kind (``StatefulSet.apps``)."""
    if uid is not None:
        why = (
            f"the UID in the precondition ({uid[0]}) does not match the UID in record "
            f"({uid[1]}). The object might have been deleted and then recreated"
        )
    elif resource_version is not None:
        why = (
            f"the ResourceVersion in the precondition ({resource_version[0]}) does not match "
            f"the ResourceVersion in record ({resource_version[1]}). "
            "The object might have been modified"
        )
    else:
        raise ValueError("a failed delete precondition names uid or resource_version")
    return conflict(qualified_kind(kind, group), group, name, why)


def invalid(kind: str, group: str, name: str, causes: Iterable[Cause]) -> ApiError:
    """422 Invalid naming each cause's field in the message and in ``details.causes``:
    ``Pod "x" is invalid: <field>: <message>``, several distinct ones in brackets, joined by
    ``, `` (apimachinery's aggregate)."""
    cause_list = [{"reason": c.reason, "message": c.message, "field": c.field} for c in causes]
    lines = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in cause_list))
    summary = lines[0] if len(lines) == 1 else "[" + ", ".join(lines) + "]"
    details = _details(group, kind, name)
    details["causes"] = cause_list
    message = f'{qualified_kind(kind, group)} "{name}" is invalid: {summary}'
    return api_error(422, message, "Invalid", details)


def patched_metadata_error(
    kind: str, group: str, plural: str, name: str, current: Mapping[str, Any], patched: Any
) -> ApiError | None:
    """What kube-apiserver answers a patch whose result (``patched``: its ``metadata``) changes
    what a patch cannot change in the stored object's metadata (``current``): another
    ``resourceVersion`` is a failed precondition (409, :data:`STALE_MESSAGE`), another ``uid``
    is invalid (422: the uid is immutable; a patch gives no uid precondition), another
    ``name`` a 400; None when the patch changes none of them (or holds no metadata)."""
    if not isinstance(patched, Mapping):
        return None
    rv = patched.get("resourceVersion")
    if rv and str(rv) != current.get("resourceVersion"):
        return conflict(resource_name(plural, group), group, name)
    uid = patched.get("uid")
    if uid and uid != current.get("uid"):
        message = f'Invalid value: "{uid}": field is immutable'
        return invalid(kind, group, name, [Cause("metadata.uid", INVALID, message)])
    if patched.get("name", name) != name:
        return bad_request(
            f"the name of the object ({patched.get('name')}) does not match the name on the "
            f"URL ({name})"
        )
    return None


def resource_version_required(kind: str, group: str, name: str) -> ApiError:
    """422 for an update without ``metadata.resourceVersion`` where the kind requires one
    (custom resources: their update is never unconditional)."""
    cause = Cause(
        "metadata.resourceVersion",
        INVALID,
        "Invalid value: 0x0: must be specified for an update",
    )
    return invalid(kind, group, name, [cause])


def bad_request(message: str) -> ApiError:
    """400 BadRequest with ``message`` and no details."""
    return api_error(400, message, "BadRequest")


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
    details: dict[str, Any] | None = None,
) -> ApiError:
    """405 MethodNotAllowed (by default with client-go's generic message)."""
    return api_error(405, message, "MethodNotAllowed", details)


def gone(message: str) -> ApiError:
    """410 Expired (a resourceVersion too old to serve)."""
    return api_error(410, message, "Expired")


def route_not_found() -> ApiError:
    """404 for a path nothing serves (a subresource the kind does not have)."""
    return api_error(404, "the server could not find the requested resource", "NotFound")


_PATCH_MEDIA_TYPES: Final = (
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


def unsupported_media_type(accepted: str = _PATCH_MEDIA_TYPES) -> ApiError:
    """415 for a body in a format the endpoint does not take, naming the ``accepted`` media
    types (by default a custom resource's patch types: a strategic merge patch has no Go
    struct to merge by)."""
    message = f"the body of the request was in an unknown format - accepted media types include: {accepted}"
    return api_error(415, message, "UnsupportedMediaType")


# ------------------------------------------------------------------------------ per-kind tables

#: Built-in resources, by ``(group, plural)``, whose registry sets ``metadata.generation`` to 1
#: on create and bumps it when anything outside metadata and status changes (custom resources
#: always do).
TRACKS_GENERATION: Final = frozenset(
    {
        ("", "replicationcontrollers"),
        ("apps", "statefulsets"),
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("discovery.k8s.io", "endpointslices"),
        ("policy", "poddisruptionbudgets"),
        ("networking.k8s.io", "ingresses"),
        ("networking.k8s.io", "networkpolicies"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
        ("flowcontrol.apiserver.k8s.io", "flowschemas"),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
    }
)

#: Built-in resources whose create strategy sets ``metadata.generation`` to 1 though no update
#: bumps it (PriorityClass's), by ``(group, plural)``.
GENERATION_ON_CREATE_ONLY: Final = frozenset({("scheduling.k8s.io", "priorityclasses")})

#: Built-in resources whose DELETE answers with the object even when it is gone at once (their
#: kube-apiserver storage sets ``ReturnDeletedObject``), by ``(group, plural)``; the others
#: answer a Success Status.
RETURN_DELETED_OBJECT: Final = frozenset(
    {
        ("", "pods"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("", "namespaces"),
        ("", "services"),
        ("", "serviceaccounts"),
        ("", "resourcequotas"),
        ("", "podtemplates"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "volumeattachments"),
        ("policy", "podsecuritypolicies"),
    }
)

#: The rule a built-in kind's ``metadata.name`` follows where it is not a DNS-1123 subdomain, by
#: ``(group, kind)`` (:func:`name_errors` checks one).
NAME_RULES: Final[Mapping[tuple[str, str], str]] = {
    ("", "Namespace"): "label",
    ("", "Service"): "dns1035-label",
    ("apps", "StatefulSet"): "label",
    # RBAC objects and APIServices: any name usable as one path segment.
    **dict.fromkeys(
        [("apiregistration.k8s.io", "APIService")]
        + [
            ("rbac.authorization.k8s.io", kind)
            for kind in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
        ],
        "path-segment",
    ),
}


def name_rule(group: str, kind: str) -> str:
    """The rule names of built-in kind ``group``/``kind`` follow (:data:`NAME_RULES`;
    ``subdomain`` for the others and for custom resources)."""
    return NAME_RULES.get((group, kind), "subdomain")


def _mask_trailing_dash(name: str) -> str:
    # A generateName prefix may end with "-": the generated suffix follows it.
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


_NAME_CHECKS: Final[Mapping[str, Callable[[str], tuple[str, ...]]]] = {
    "subdomain": dns1123_subdomain_errors,
    "label": dns1123_label_errors,
    "dns1035-label": dns1035_label_errors,
}


def name_errors(rule: str, name: str, *, prefix: bool = False) -> tuple[str, ...]:
    """kube-apiserver's messages for ``name`` under ``rule`` (``subdomain``: a DNS-1123
    subdomain, ``label``: a DNS-1123 label, ``dns1035-label``: one starting with a letter,
    ``path-segment``: anything but ``.``, ``..``, ``/`` and ``%``); ``()`` when it is valid.
    ``prefix``: ``name`` is a ``generateName`` (it may end with ``-``). ``ValueError`` for an
    unknown rule."""
    if rule == "path-segment":
        return path_segment_errors(name, prefix=prefix)
    try:
        check = _NAME_CHECKS[rule]
    except KeyError:
        rules = sorted([*_NAME_CHECKS, "path-segment"])
        raise ValueError(f"unknown name rule {rule!r}; one of {rules}") from None
    return check(_mask_trailing_dash(name) if prefix else name)


#: The status a created object of these resources starts with, whatever the request sent.
_INITIAL_STATUS: Final[Mapping[tuple[str, str], Mapping[str, Any]]] = {
    ("", "persistentvolumeclaims"): {"phase": "Pending"},
    ("apps", "statefulsets"): {"replicas": 0, "availableReplicas": 0},
    ("apps", "deployments"): {},
    ("apps", "replicasets"): {},
}
_POD: Final = ("", "pods")


def initial_status(group: str, plural: str, obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status kube-apiserver's create strategy gives a new object of ``(group, plural)``
    (``obj``: the object as created, whose spec a Pod's QoS class comes from), or None
    where this table has none (the status is as sent, or dropped where the kind has a status
    subresource). A Pod: ``{"phase": "Pending", "qosClass": pod_qos_class(obj)}``."""
    if (group, plural) == _POD:
        return {"phase": "Pending", "qosClass": pod_qos_class(obj)}
    initial = _INITIAL_STATUS.get((group, plural))
    return None if initial is None else dict(initial)


#: The resources a Pod's QoS class is decided by (upstream's supported QoS compute resources).
_QOS_RESOURCES: Final = ("cpu", "memory")


def _qos_amounts(resources: Any, key: str, unset: str = "") -> dict[str, Decimal]:
    """The positive cpu and memory amounts of a container's ``requests`` or ``limits``; with
    ``unset``, an amount ``key`` does not list is ``unset``'s (a request defaults to the limit)."""
    if not isinstance(resources, Mapping):
        return {}
    listed, other = resources.get(key), resources.get(unset) if unset else None
    listed = listed if isinstance(listed, Mapping) else {}
    other = other if isinstance(other, Mapping) else {}
    out: dict[str, Decimal] = {}
    for name in _QOS_RESOURCES:
        amount = parse_quantity(listed[name] if name in listed else other.get(name))
        if amount is not None and amount > 0:
            out[name] = amount
    return out


def pod_qos_class(pod: Mapping[str, Any]) -> str:
    """A Pod's ``status.qosClass`` (upstream's ``GetPodQOS``) from the cpu and memory of its
    containers and init containers (other resources and zero amounts do not count; a
    container's unset request is its limit, as defaulting makes it): ``BestEffort`` when none
    asks for any, ``Guaranteed`` when every container limits both and the pod's requests
    equal its limits (by value: ``1`` is ``1000m``), else ``Burstable``. What is not a list or
    an object where one belongs below ``spec`` counts for nothing; ``spec`` itself is an object or absent
    (the server's shape check refuses other bodies before this runs)."""
    spec = pod.get("spec") or {}
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    listed = [spec.get("containers"), spec.get("initContainers")]
    for c in [c for group in listed if isinstance(group, list) for c in group]:
        resources = c.get("resources") if isinstance(c, Mapping) else None
        limited = _qos_amounts(resources, "limits")
        for name, amount in _qos_amounts(resources, "requests", "limits").items():
            requests[name] = requests.get(name, Decimal(0)) + amount
        for name, amount in limited.items():
            limits[name] = limits.get(name, Decimal(0)) + amount
        guaranteed = guaranteed and len(limited) == len(_QOS_RESOURCES)
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


# ------------------------------------------------------------------------------ quantities

#: A quantity's text: the number (group 1) and its suffix, binary, decimal or an exponent
#: (group 2; absent for none). Match it whole (``fullmatch``); it allows no white space.
QUANTITY_RE: Final = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?"
)
#: Multiplier per suffix: binary (``Ki`` = 2**10 ... ``Ei`` = 2**60), decimal (``m`` = 10**-3
#: ... ``n`` = 10**-9, ``k`` = 10**3 ... ``E`` = 10**18); no suffix is 1.
_SUFFIX: Final[dict[str, Decimal]] = {
    "": Decimal(1),
    **{s: Decimal(2) ** (10 * i) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), 1)},
    **{s: Decimal(10) ** (-3 * i) for i, s in enumerate(("m", "u", "n"), 1)},
    **{s: Decimal(10) ** (3 * i) for i, s in enumerate(("k", "M", "G", "T", "P", "E"), 1)},
}


def parse_quantity(value: object) -> Decimal | None:
    """The value of a resource quantity (``"1Gi"``, ``"500m"``, ``2``; apimachinery's
    ``resource.Quantity``, compared by value as its ``Cmp``), or None when ``value`` is not
    one (surrounding white space is allowed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = QUANTITY_RE.fullmatch(value.strip())
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix in _SUFFIX:  # before the exponent: "E" and "Ei" are suffixes, not exponents
            return Decimal(number) * _SUFFIX[suffix]
        return Decimal(number) * (Decimal(10) ** int(suffix[1:]))
    except (InvalidOperation, ValueError):
        return None


# ------------------------------------------------------------------------------ Go values

_GO_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``): double quotes, backslash escapes for quotes,
    backslashes, control and non-printable characters."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            o = ord(ch)
            if o < 0x80:
                out.append(f"\\x{o:02x}")
            elif o < 0x10000:
                out.append(f"\\u{o:04x}")
            else:
                out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip significant digits of abs(f) (finite, non-zero) and the decimal
    point position."""
    t = Decimal(repr(abs(f))).as_tuple()
    digits = "".join(map(str, t.digits))
    dp = len(digits) + int(t.exponent)
    return digits.rstrip("0") or "0", dp


def _float_text(f: float, e_format: bool, pad_exponent: bool) -> str:
    digits, dp = _shortest_digits(f)
    sign = "-" if f < 0 else ""
    if e_format:
        exp = dp - 1
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        width = 2 if pad_exponent else 1
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):0{width}d}"
    if dp <= 0:
        return f"{sign}0.{'0' * -dp}{digits}"
    if dp >= len(digits):
        return sign + digits + "0" * (dp - len(digits))
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def go_float(f: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``): shortest
    round-trip digits, exponent form (``1e+06``, ``1e-05``) outside [1e-4, 1e6)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    exp = _shortest_digits(f)[1] - 1
    return _float_text(f, exp < -4 or exp >= 6, True)


def _json_float(f: float) -> str:
    """encoding/json's rendering of a float64."""
    if f == 0 or not math.isfinite(f):
        return "0" if f == 0 else "null"
    a = abs(f)
    return _float_text(f, a < 1e-6 or a >= 1e21, False)


def _json_str(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch < " ":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_json(v: Any) -> str:
    """Compact JSON as Go's ``encoding/json`` writes decoded JSON: map keys sorted, floats in
    Go's form (``1`` for 1.0, ``1e+21``), anything else as its ``str`` in quotes."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return _json_str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _json_float(v)
    if isinstance(v, Mapping):
        return "{" + ",".join(f"{_json_str(str(k))}:{go_json(v[k])}" for k in sorted(v)) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(go_json(x) for x in v) + "]"
    return _json_str(str(v))


def go_value(v: Any, *, typed: bool = False) -> str:
    """How ``field.Error`` prints a rejected value: strings as ``%q``, floats as ``%v``,
    ``null``/``true``/``false``, integers in decimal; the rest as JSON (:func:`go_json`), as
    for a custom resource's decoded JSON. ``typed``: the value is a built-in kind's Go field,
    printed with ``%#v`` where its type is known from the JSON: a list of strings as
    ``[]string{"a", "b"}``, a map of strings as ``map[string]string{"k":"v"}`` (keys sorted),
    a :class:`~decimal.Decimal` (a quantity) in decimal."""
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, float):
        return go_float(v)
    if typed:
        if isinstance(v, Decimal):
            return str(v)
        if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
            return "[]string{" + ", ".join(go_quote(x) for x in v) + "}"
        if isinstance(v, Mapping) and all(
            isinstance(k, str) and isinstance(x, str) for k, x in v.items()
        ):
            items = ", ".join(f"{go_quote(k)}:{go_quote(v[k])}" for k in sorted(v))
            return "map[string]string{" + items + "}"
    return go_json(v)


_INT64_RANGE: Final = range(-(2**63), 2**63)


def decodes_as_int64(value: Any) -> bool:
    """Whether Go's JSON decoding into ``interface{}`` keeps ``value`` an ``int64`` (an integral
    literal within range; ``2.0`` and larger integers become ``float64``)."""
    return type(value) is int and value in _INT64_RANGE


#: Go's type of a JSON value decoded into ``interface{}``, by its JSON kind (numbers aside).
_GO_TYPES: Final[Mapping[str, str]] = {
    "null": "<nil>",
    "boolean": "bool",
    "string": "string",
    "object": "map[string]interface {}",
    "array": "[]interface {}",
}


def go_type(value: Any) -> str:
    """Go's ``%T`` of a JSON value decoded into ``interface{}`` (``string``, ``int64``,
    ``float64``, ``map[string]interface {}``, ``<nil>``, ...)."""
    found = _GO_TYPES.get(json_kind(value))
    if found is not None:
        return found
    return "int64" if decodes_as_int64(value) else "float64"


def go_sprint(value: Any) -> str:
    """Go's ``%v`` of a JSON value decoded into ``interface{}``: strings bare, ``<nil>``,
    ``map[a:1 b:[x y]]`` (keys sorted), numbers as int64 or float64 print."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_sprint(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(v) for v in value) + "]"
    if decodes_as_int64(value):
        return str(value)
    return go_float(float(value))
