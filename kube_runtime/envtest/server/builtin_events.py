"""``events.k8s.io`` Event as kube-apiserver serves it: a view of the core ``v1`` Events.

kube-apiserver keeps one storage for both groups (cohabiting resources, encoded as core
``v1``): an Event written through either group is read and watched through both. The
``events.k8s.io`` resource (``v1`` and ``v1beta1``, what 1.20 serves) is therefore a view
(:attr:`~.resources.ResourceInfo.stored_as`) whose converter, :func:`convert_events`, renames
the fields as upstream's ``Convert_v1_Event_To_core_Event`` and its inverse do:
``regarding`` / ``involvedObject``, ``note`` / ``message``, ``reportingController`` /
``reportingComponent``, ``deprecatedSource`` / ``source``, ``deprecatedFirstTimestamp`` /
``firstTimestamp``, ``deprecatedLastTimestamp`` / ``lastTimestamp``, ``deprecatedCount`` /
``count``; the rest (``eventTime``, ``series``, ``action``, ``reason``, ``related``,
``type``, ``reportingInstance``) keeps its name. Each form is written as Go encodes its
struct (zero timestamps as ``null``, ``omitempty`` strings dropped).

Validation is upstream's ``ValidateEventCreate`` / ``ValidateEventUpdate`` of 1.20: every
write passes :func:`check_legacy` (``legacyValidateEvent``, whatever the group); a create
through ``events.k8s.io/v1`` also passes :func:`check_strict` (``v1beta1`` does not). Field
paths are the internal (core) names, as kube-apiserver reports them. Field selectors of the
view use its own labels (``regarding.name``, ``reportingController``...), converted to the
core Event's fields by :func:`kube_runtime.selectors.convert_field_labels`.

The table printer is core's (upstream prints both through ``printEvent``): the view shares
the storage key, so :func:`.tables.columns_for` finds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.validation import is_dns1123_subdomain, qualified_name_errors

__all__ = [
    "GROUP",
    "KEY",
    "check_legacy",
    "check_strict",
    "convert_events",
    "encode_core",
    "request_version",
]

GROUP: Final = "events.k8s.io"
#: The view's (group, plural), as the registry and :data:`.builtin_groups.CONVERTERS` key it.
KEY: Final = (GROUP, "events")

#: core v1 name -> events.k8s.io name (fields that keep their name are not listed).
_RENAMED: Final = {
    "involvedObject": "regarding",
    "message": "note",
    "reportingComponent": "reportingController",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
}
_BACK: Final = {new: old for old, new in _RENAMED.items()}

#: Go's encoding of each form: fields always written (zero: ``null`` for timestamps,
#: ``{}`` for structs, ``""`` for untagged strings) and ``omitempty`` scalars dropped when zero.
_CORE_ALWAYS: Final = (
    ("involvedObject", dict),
    ("source", dict),
    ("firstTimestamp", None),
    ("lastTimestamp", None),
    ("eventTime", None),
    ("reportingComponent", ""),
    ("reportingInstance", ""),
)
_CORE_OMITTED: Final = ("reason", "message", "count", "type", "action")
_VIEW_ALWAYS: Final = (
    ("eventTime", None),
    ("regarding", dict),
    ("deprecatedSource", dict),
    ("deprecatedFirstTimestamp", None),
    ("deprecatedLastTimestamp", None),
)
_VIEW_OMITTED: Final = (
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "note",
    "type",
    "deprecatedCount",
)

#: A new-style event's required fields, each with its length limit, in upstream's order.
_REQUIRED_WITHIN: Final = (("reportingInstance", 128), ("action", 128), ("reason", 128))
_NOTE_LIMIT: Final = 1024


def _encode(
    obj: dict[str, Any], always: tuple[tuple[str, Any], ...], omitted: tuple[str, ...]
) -> dict[str, Any]:
    for name, zero in always:
        if obj.get(name) is None:
            obj[name] = zero() if callable(zero) else zero
    for name in omitted:
        if name in obj and obj[name] in ("", 0, None):
            del obj[name]
    return obj


def encode_core(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """A core Event about to be stored, as Go encodes it (``eventTime``, unset timestamps:
    ``null``; ``involvedObject``, ``source``: ``{}``; the reporting strings: ``""``)."""
    _encode(obj, _CORE_ALWAYS, ())


def _to_core(obj: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1"}
    for name, value in obj.items():
        if name != "apiVersion":
            out[_BACK.get(name, name)] = value
    return _encode(out, _CORE_ALWAYS, _CORE_OMITTED)


def _to_view(obj: Mapping[str, Any], api_version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": api_version}
    for name, value in obj.items():
        if name != "apiVersion":
            out[_RENAMED.get(name, name)] = value
    series = out.get("series")
    if isinstance(series, dict) and "state" in series:  # core's deprecated field, not the view's
        out["series"] = {k: v for k, v in series.items() if k != "state"}
    return _encode(out, _VIEW_ALWAYS, _VIEW_OMITTED)


def convert_events(objects: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """Events (core ``v1`` or ``events.k8s.io``) as ``events.k8s.io/<version>``; ``version``
    ``""``: as core ``v1``, the stored form."""
    target = f"{GROUP}/{version}" if version else "v1"
    out = []
    for obj in objects:
        current = str(obj.get("apiVersion") or "")
        if current == target:
            out.append(obj)
        elif not version:
            out.append(_to_core(obj) if current.startswith(GROUP + "/") else dict(obj))
        elif current.startswith(GROUP + "/"):
            out.append({**obj, "apiVersion": target})
        else:
            out.append(_to_view(obj, target))
    return out


# ------------------------------------------------------------------------------ validation


def request_version() -> str | None:
    """The version of the ``events.k8s.io`` request being served (None: another or none);
    every write through a converted kind runs in :mod:`.webhooks`' request context."""
    from kube_runtime.envtest.server import webhooks  # webhooks -> storage -> strategy -> here

    context = webhooks.current()
    if context is None or context.route.info.group != GROUP:
        return None
    return context.route.version


def check_legacy(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``legacyValidateEvent`` (every Event, through either group): the involved
    object's namespace agrees with the event's; a new-style event (``eventTime`` set) has its
    reporting controller and instance, action and reason, within their lengths."""
    involved = fe.as_map(obj.get("involvedObject"))
    involved_ns = str(involved.get("namespace") or "")
    namespace = str(fe.as_map(obj.get("metadata")).get("namespace") or "")
    mismatch = fe.invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not obj.get("eventTime"):
        agrees = namespace == involved_ns if involved_ns else namespace in ("", "default")
        if not agrees:
            out.append(mismatch)
    else:
        if not involved_ns and namespace != "kube-system":
            out.append(mismatch)
        controller = str(obj.get("reportingComponent") or "")
        if not controller:
            out.append(fe.required("reportingController"))
        for msg in qualified_name_errors(controller):
            out.append(fe.invalid("reportingController", controller, msg))
        for field, limit in _REQUIRED_WITHIN:
            value = str(obj.get(field) or "")
            if not value:
                out.append(fe.required(field))
            if len(value) > limit:
                out.append(_too_long(field, limit))
        if len(str(obj.get("message") or "")) > _NOTE_LIMIT:
            out.append(_too_long("message", _NOTE_LIMIT))
    if namespace:
        for msg in is_dns1123_subdomain(namespace):
            out.append(fe.invalid("namespace", namespace, msg))


def _too_long(path: str, limit: int) -> Cause:
    return fe.invalid(path, "", f"can have at most {limit} characters")


def _series(out: list[Cause], obj: Mapping[str, Any]) -> None:
    series = obj.get("series")
    if isinstance(series, dict):
        count = series.get("count")
        if not isinstance(count, int) or count < 2:
            out.append(fe.invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            out.append(fe.required("series.lastObservedTime"))


def check_strict(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream's strict rules for a create through ``events.k8s.io/v1`` (``obj`` in the core
    form; nothing for ``v1beta1``): a series of at least 2 with its last observed time,
    ``eventTime`` set, type ``Normal`` or ``Warning``, none of the deprecated fields set.

    Updates get none: 1.20's ``ValidateEventUpdate`` compares the new event with itself (its
    strategy passes the new object as the old one), so its immutability rules never fire.
    """
    if old is not None or request_version() != "v1":
        return
    _series(out, obj)
    if not obj.get("eventTime"):
        out.append(fe.required("eventTime"))
    kind = obj.get("type")
    if kind not in ("Normal", "Warning"):
        out.append(fe.invalid("type", "", f"has invalid value: {kind or ''}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if obj.get(name):
            out.append(fe.invalid(name, "", "needs to be unset"))
    source = fe.as_map(obj.get("source"))
    if source.get("component") or source.get("host"):
        out.append(fe.invalid("source", "", "needs to be unset"))
