"""Object validation for the embedded API server (pure Python, no I/O).

Contracts
---------
* Every function returns a list of :class:`Cause` (empty when valid) and never raises
  for bad input: wrong types become causes too. A cause carries the JSON field path
  (``spec.template.spec.containers[0].image``), one of upstream's ``StatusCause``
  reasons, and upstream's message text without the field (``Required value``,
  ``Invalid value: "Foo": a lowercase RFC 1123 subdomain must consist of ...``,
  ``Unsupported value: "x": supported values: "a", "b"``, ``Forbidden: ...``).
  Rejected values are rendered like Go's ``%#v``/``%q`` for strings, numbers, string
  slices and string maps, and as compact JSON for anything else.
* :func:`validate` runs the object-meta checks with the kind's name rule and
  namespaced-ness, then the kind's own checks (``old`` given means update, which adds
  the immutability rules). Unknown ``(group, kind)`` pairs get the metadata checks only;
  their namespaced-ness comes from the ``namespaced`` keyword (``None``: the namespace
  is checked when present but neither required nor forbidden).
* Objects are validated as sent, before or after defaulting: a missing field that
  upstream defaults (``restartPolicy``, ``podManagementPolicy``, ``updateStrategy``,
  protocols, ...) is treated as its default; an empty string counts as missing, as it
  does for Go's value fields. On update both objects should be in the same defaulting
  state, since unchanged-ness is judged by semantic equality (``null``, ``""``, ``[]``
  and ``{}`` equal a missing field; quantities compare by value where upstream does).
* The rules, messages and paths follow ``k8s.io/apimachinery`` (``util/validation``,
  ``api/validation``) and ``pkg/apis/{core,apps}/validation`` and the apiextensions
  validation; deviations are noted where they occur.

The ``is_*`` helpers return upstream's error strings as a tuple, ``()`` for valid input;
the string checks are memoized (bounded LRU caches, so callers must not mutate what they
get), since keys, names and port names repeat across objects. Regexes are precompiled,
the common (valid) path builds no messages, and a typical pod validates in a few
microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final, TypeGuard

from kube_runtime import selectors
from kube_runtime.client import _apifacts as facts
from kube_runtime.client._apifacts import (  # the causes' reasons, re-exported
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_FOUND,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    go_quote,
    go_value,
)
from kube_runtime.envtest.server import celrules, webhookconfig
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.memo import Memo, json_key
from kube_runtime.envtest.server.resources import SERVED_BUILTINS
from kube_runtime.validation import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    VALIDATOR_CACHE_SIZE,
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    max_len_error,
    qualified_name_errors,
    regex_error,
)
from kube_runtime.workloads.quantity import parse_quantity

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_FOUND",
    "NOT_SUPPORTED",
    "REQUIRED",
    "TOO_LONG",
    "Cause",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_percent",
    "is_valid_port_name",
    "is_valid_port_num",
    "validate",
    "validate_object_meta",
    "validate_pod_create",
]


# --------------------------------------------------------------------------------------
# Value rendering and cause constructors (upstream field.Error bodies)
# --------------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    """Render a rejected value as Go's ``field.Error`` does for a built-in kind's field."""
    return go_value(value, typed=True)


def _required(path: str, detail: str = "") -> Cause:
    return Cause(path, REQUIRED, f"Required value: {detail}" if detail else "Required value")


def _invalid(path: str, value: Any, detail: str) -> Cause:
    body = f"Invalid value: {_fmt(value)}"
    return Cause(path, INVALID, f"{body}: {detail}" if detail else body)


def _not_supported(path: str, value: Any, valid: Sequence[str]) -> Cause:
    body = f"Unsupported value: {_fmt(value)}"
    if valid:
        body += ": supported values: " + ", ".join(go_quote(v) for v in valid)
    return Cause(path, NOT_SUPPORTED, body)


def _not_found(path: str, value: Any) -> Cause:
    return Cause(path, NOT_FOUND, f"Not found: {_fmt(value)}")


def _duplicate(path: str, value: Any) -> Cause:
    return Cause(path, DUPLICATE, f"Duplicate value: {_fmt(value)}")


def _forbidden(path: str, detail: str) -> Cause:
    return Cause(path, FORBIDDEN, f"Forbidden: {detail}" if detail else "Forbidden")


def _too_long(path: str, max_bytes: int) -> Cause:
    return Cause(path, TOO_LONG, f"Too long: must have at most {max_bytes} bytes")


# --------------------------------------------------------------------------------------
# String validators
# --------------------------------------------------------------------------------------


def is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    """Upstream ``IsDNS1123Subdomain``: <= 253 chars of dot-separated DNS-1123 labels."""
    return dns1123_subdomain_errors(value)


def is_dns1123_label(value: str) -> tuple[str, ...]:
    """Upstream ``IsDNS1123Label``: <= 63 lowercase alphanumerics or '-', alnum at both ends."""
    return dns1123_label_errors(value)


def is_qualified_name(value: str) -> tuple[str, ...]:
    """Upstream ``IsQualifiedName``: ``[prefix/]name`` as used by label and annotation keys."""
    return qualified_name_errors(value)


def is_valid_label_value(value: str) -> tuple[str, ...]:
    """Upstream ``IsValidLabelValue``: empty, or <= 63 chars of ``[-A-Za-z0-9_.]``, alnum ends."""
    return label_value_errors(value)


_CONFIG_KEY_FMT: Final = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE: Final = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_MSG: Final = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
)
_PORT_NAME_CHARSET_RE: Final = re.compile(r"[-a-z0-9]+")
_PORT_NAME_LETTER_RE: Final = re.compile(r"[a-z]")
_PERCENT_FMT: Final = "[0-9]+%"
_PERCENT_RE: Final = re.compile(r"[0-9]+%")
_PERCENT_MSG: Final = "a valid percent string must be a numeric string followed by an ending '%'"

_MAX_INT32: Final = 2**31 - 1
_NEGATIVE_MSG: Final = "must be greater than or equal to 0"
_NOT_INTEGER_MSG: Final = "must be an integer"
_IMMUTABLE_MSG: Final = "field is immutable"
_TOTAL_ANNOTATION_SIZE: Final = 256 * 1024
_MAX_SECRET_SIZE: Final = 1024 * 1024


_NO_ERRORS: Final[tuple[str, ...]] = ()
_NOT_A_STRING: Final = ("must be a string",)


#: Upstream ``IsDNS1035Label`` (starts with a letter; Service names, CRD plurals): the
#: framework's memoized validator (:func:`kube_runtime.validation.dns1035_label_errors`).
is_dns1035_label = dns1035_label_errors


def _chdir_prefix_errors(value: str) -> tuple[str, ...]:
    if value == ".":
        return ("must not be '.'",)
    if value == "..":
        return ("must not be '..'",)
    if value.startswith(".."):
        return ("must not start with '..'",)
    return _NO_ERRORS


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def is_config_map_key(value: str) -> tuple[str, ...]:
    """Upstream ``IsConfigMapKey`` (ConfigMap and Secret data keys)."""
    if len(value) <= 253 and _CONFIG_KEY_RE.fullmatch(value) and not value.startswith("."):
        return _NO_ERRORS
    errs: list[str] = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not _CONFIG_KEY_RE.fullmatch(value):
        errs.append(
            regex_error(_CONFIG_KEY_MSG, _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
        )
    errs.extend(_chdir_prefix_errors(value))
    return tuple(errs)


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def is_valid_port_name(value: str) -> tuple[str, ...]:
    """Upstream ``IsValidPortName`` (IANA_SVC_NAME: <= 15 chars, a letter, no ``--``)."""
    errs: list[str] = []
    if len(value) > 15:
        errs.append(max_len_error(15))
    if not _PORT_NAME_CHARSET_RE.fullmatch(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER_RE.search(value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value and (value[0] == "-" or value[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return tuple(errs)


def _range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def is_valid_port_num(port: int) -> tuple[str, ...]:
    """Upstream ``IsValidPortNum``: 1-65535."""
    return _NO_ERRORS if 1 <= port <= 65535 else (_range_error(1, 65535),)


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def is_valid_percent(value: str) -> tuple[str, ...]:
    """Upstream ``IsValidPercent``: digits followed by ``%``."""
    if _PERCENT_RE.fullmatch(value):
        return _NO_ERRORS
    return (regex_error(_PERCENT_MSG, _PERCENT_FMT, "1%", "93%"),)


_NameFn = Callable[[str, bool], Sequence[str]]


def _name_fn(rule: str) -> _NameFn:
    """The check of names under ``rule`` (kube_runtime.client._apifacts's, shared with the fake
    client): ``(name, is_prefix) -> messages``."""
    return lambda name, prefix: facts.name_errors(rule, name, prefix=prefix)


_NAME_FNS: Final[dict[str, _NameFn]] = {
    rule: _name_fn(rule) for rule in ("subdomain", "label", "dns1035-label", "path-segment")
}
_SUBDOMAIN_NAME: Final = _NAME_FNS["subdomain"]
#: What a DNS-1123 subdomain is made of, and its longest length (for :func:`_validate_meta`'s
#: check without the regular expression).
_SUBDOMAIN_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")
_SUBDOMAIN_MAX: Final = DNS1123_SUBDOMAIN_MAX_LENGTH


# --------------------------------------------------------------------------------------
# Small accessors
# --------------------------------------------------------------------------------------

_EMPTY: Final[Mapping[str, Any]] = {}


def _map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict or isinstance(value, Mapping):
        return value
    return _EMPTY


def _list(value: Any) -> Sequence[Any]:
    if type(value) is list or isinstance(value, tuple):
        return value
    return ()


def _is_int(value: Any) -> TypeGuard[int]:
    return type(value) is int


def _int_field(out: list[Cause], path: str, value: Any) -> int | None:
    """The int at ``path``; ``None`` when absent; a cause when of the wrong type."""
    if value is None:
        return None
    if type(value) is int:
        return value
    out.append(_invalid(path, value, _NOT_INTEGER_MSG))
    return None


def _nonnegative(out: list[Cause], path: str, value: Any) -> None:
    number = _int_field(out, path, value)
    if number is not None and number < 0:
        out.append(_invalid(path, number, _NEGATIVE_MSG))


def _nonnegative_fields(out: list[Cause], path: str, obj: Mapping[str, Any], *keys: str) -> None:
    """:func:`_nonnegative` for each of ``obj``'s ``keys`` (``obj`` stands at ``path``)."""
    for key in keys:
        _nonnegative(out, f"{path}.{key}", obj.get(key))


def _mapping_field(out: list[Cause], path: str, value: Any) -> Mapping[str, Any]:
    if type(value) is dict:
        return value or _EMPTY
    if value is None or isinstance(value, Mapping):
        return value or _EMPTY
    out.append(_invalid(path, value, "must be an object"))
    return _EMPTY


def _list_field(out: list[Cause], path: str, value: Any) -> Sequence[Any]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return value
    out.append(_invalid(path, value, "must be a list"))
    return ()


# --------------------------------------------------------------------------------------
# Semantic equality and diffs (apiequality.Semantic: missing == null == empty)
# --------------------------------------------------------------------------------------


def _norm(value: Any) -> Any:
    """A deep copy without ``None``/``""``/``[]``/``{}`` members of mappings."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            nv = _norm(v)
            if nv is None or nv == "" or (isinstance(nv, (dict, list)) and not nv):
                continue
            out[k] = nv
        return out
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


_ABSENT: Final[Any] = object()


def _diff(old: Any, new: Any, path: str, lines: list[str], limit: int = 8) -> None:
    """Append ``path: old -> new`` lines for the leaves that differ (at most ``limit``)."""
    if len(lines) >= limit or old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            _diff(old.get(key, _ABSENT), new.get(key, _ABSENT), f"{path}.{key}", lines, limit)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}[{i}]", lines, limit)
        return
    before = "<absent>" if old is _ABSENT else _fmt(old)
    after = "<absent>" if new is _ABSENT else _fmt(new)
    lines.append(f"  {path}: {before} -> {after}")


def _diff_text(old: Any, new: Any, path: str) -> str:
    lines: list[str] = []
    _diff(old, new, path, lines)
    return "\n" + "\n".join(lines) if lines else ""


# --------------------------------------------------------------------------------------
# Object metadata
# --------------------------------------------------------------------------------------


def _string_map(
    out: list[Cause],
    path: str,
    value: Any,
    key_errors: Callable[[str], Sequence[str]],
    value_errors: Callable[[str], Sequence[str]] | None = None,
) -> int:
    """Check a ``map[string]string`` field at ``path``: a map, whose keys and values are
    strings without ``key_errors`` / ``value_errors`` (None: any string). Returns the
    characters of its string keys and values."""
    chars = 0
    if not value:
        return chars
    if type(value) is not dict and not isinstance(value, Mapping):
        out.append(_invalid(path, value, "must be a map of strings"))
        return chars
    for key, item in value.items():
        if (
            type(key) is str
            and type(item) is str
            and not key_errors(key)
            and (value_errors is None or not value_errors(item))
        ):
            chars += len(key) + len(item)
            continue
        if not isinstance(key, str):
            out.append(_invalid(path, key, "must be a string"))
            continue
        for msg in key_errors(key):
            out.append(_invalid(path, key, msg))
        if not isinstance(item, str):
            out.append(_invalid(path, item, "must be a string"))
            continue
        chars += len(key) + len(item)
        for msg in value_errors(item) if value_errors is not None else ():
            out.append(_invalid(path, item, msg))
    return chars


def _validate_labels(out: list[Cause], path: str, labels: Any) -> None:
    """Upstream ``ValidateLabels``: keys are qualified names, values label values."""
    _string_map(out, path, labels, qualified_name_errors, label_value_errors)


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def _annotation_key_errors(key: str) -> tuple[str, ...]:
    # Annotation keys are qualified names in any case.
    return qualified_name_errors(key.lower())


def _validate_annotations(out: list[Cause], path: str, annotations: Any) -> None:
    """Upstream ``ValidateAnnotations``: qualified keys (any case), <= 256 KiB in total."""
    chars = _string_map(out, path, annotations, _annotation_key_errors)
    # Sizes are in UTF-8 bytes; only encode when the character count cannot decide.
    if chars * 4 > _TOTAL_ANNOTATION_SIZE:
        size = chars
        if chars <= _TOTAL_ANNOTATION_SIZE:
            size = sum(
                len(k.encode()) + len(v.encode())
                for k, v in annotations.items()
                if isinstance(k, str) and isinstance(v, str)
            )
        if size > _TOTAL_ANNOTATION_SIZE:
            out.append(_too_long(path, _TOTAL_ANNOTATION_SIZE))


def _validate_owner_references(out: list[Cause], path: str, refs: Any) -> None:
    """Upstream ``ValidateOwnerReferences`` (paths are not indexed, as upstream)."""
    first_controller = ""
    for raw in _list_field(out, path, refs or None):
        ref = _map(raw)
        api_version = ref.get("apiVersion") or ""
        kind = ref.get("kind") or ""
        name = ref.get("name") or ""
        group, version = "", ""
        if isinstance(api_version, str):
            parts = api_version.split("/")
            if len(parts) == 1:
                version = parts[0]
            elif len(parts) == 2:
                group, version = parts
        if not version:
            out.append(_invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            out.append(_invalid(f"{path}.kind", kind, "must not be empty"))
        if not name:
            out.append(_invalid(f"{path}.name", name, "must not be empty"))
        if not ref.get("uid"):
            out.append(_invalid(f"{path}.uid", ref.get("uid") or "", "must not be empty"))
        if group == "" and version == "v1" and kind == "Event":
            out.append(_invalid(path, raw, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                out.append(
                    _invalid(
                        path,
                        refs,
                        "Only one reference can have Controller set to true. Found "
                        f'"true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current


def _validate_finalizers(out: list[Cause], path: str, finalizers: Any) -> None:
    for finalizer in _list_field(out, path, finalizers or None):
        if not isinstance(finalizer, str):
            out.append(_invalid(path, finalizer, "must be a string"))
            continue
        for msg in qualified_name_errors(finalizer):
            out.append(_invalid(path, finalizer, msg))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        out.append(
            _invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set")
        )


def _validate_meta(
    out: list[Cause],
    meta: Any,
    namespaced: bool | None,
    name_fn: _NameFn,
    path: str = "metadata",
) -> None:
    meta = _mapping_field(out, path, meta)
    name = meta.get("name")
    generate_name = meta.get("generateName")
    if generate_name:
        if isinstance(generate_name, str):
            for msg in name_fn(generate_name, True):
                out.append(_invalid(f"{path}.generateName", generate_name, msg))
        else:
            out.append(_invalid(f"{path}.generateName", generate_name, "must be a string"))
    if not name:
        if not generate_name:
            out.append(_required(f"{path}.name", "name or generateName is required"))
    elif isinstance(name, str):
        # Most names are plain DNS-1123 subdomains: said without the regular expression (the
        # conditions below are the subdomain pattern's, spelled out); others go to name_fn.
        if not (
            name_fn is _SUBDOMAIN_NAME
            and len(name) <= _SUBDOMAIN_MAX
            and _SUBDOMAIN_CHARS.issuperset(name)
            and name[0] not in "-."
            and name[-1] not in "-."
            and ".." not in name
            and ".-" not in name
            and "-." not in name
        ):
            for msg in name_fn(name, False):
                out.append(_invalid(f"{path}.name", name, msg))
    else:
        out.append(_invalid(f"{path}.name", name, "must be a string"))

    namespace = meta.get("namespace")
    if namespaced is False:
        if namespace:
            out.append(_forbidden(f"{path}.namespace", "not allowed on this type"))
    elif not namespace:
        if namespaced:
            out.append(_required(f"{path}.namespace"))
    elif isinstance(namespace, str):
        for msg in dns1123_label_errors(namespace):
            out.append(_invalid(f"{path}.namespace", namespace, msg))
    else:
        out.append(_invalid(f"{path}.namespace", namespace, "must be a string"))

    if "generation" in meta:
        _nonnegative(out, f"{path}.generation", meta["generation"])
    # Each check below ignores an empty field: skip building its path then.
    labels = meta.get("labels") or None
    annotations = meta.get("annotations") or None
    if labels is not None or annotations is not None:
        _validate_meta_maps(out, path, labels, annotations)
    if refs := meta.get("ownerReferences"):
        _validate_owner_references(out, f"{path}.ownerReferences", refs)
    if finalizers := meta.get("finalizers"):
        _validate_finalizers(out, f"{path}.finalizers", finalizers)


_LABEL_CAUSES: Final[Memo[tuple[Cause, ...]]] = Memo()
_ANNOTATION_CAUSES: Final[Memo[tuple[Cause, ...]]] = Memo()
#: (path, the encoding of [labels, annotations]) -> their causes, labels' first.
_META_MAP_CAUSES: Final[Memo[tuple[Cause, ...]]] = Memo()


def _validate_meta_maps(out: list[Cause], path: str, labels: Any, annotations: Any) -> None:
    """The checks of a metadata's labels and annotations (None: empty, not checked), in that
    order. Both maps repeat across pods of one template: when both are plain JSON maps (or
    None), their causes are memoized under one encoding of the pair (one encoding and one
    look-up where each map had its own); otherwise each goes through its own memo."""
    key = None
    if (labels is None or type(labels) is dict) and (
        annotations is None or type(annotations) is dict
    ):
        encoded = json_key((labels, annotations))  # [labels, annotations], null for None
        if encoded is not None:
            key = (path, encoded)
            causes = _META_MAP_CAUSES.get(key)
            if causes is not None:
                out += causes
                return
    found: list[Cause] = [] if key is not None else out
    if labels is not None:
        _memoized(_validate_labels, _LABEL_CAUSES, found, f"{path}.labels", labels)
    if annotations is not None:
        _memoized(
            _validate_annotations, _ANNOTATION_CAUSES, found, f"{path}.annotations", annotations
        )
    if key is not None:
        causes = tuple(found)
        _META_MAP_CAUSES.put(key, causes)
        out += causes


def _memoized(
    check: Callable[[list[Cause], str, Any], None],
    memo: Memo[tuple[Cause, ...]],
    out: list[Cause],
    path: str,
    value: Any,
) -> None:
    """``check(out, path, value)``, a pure function of ``path`` and ``value``, through
    ``memo`` (``value`` keyed by its JSON encoding; computed directly when it is not
    plain JSON)."""
    encoded = json_key(value) if type(value) is dict else None
    if encoded is None:
        check(out, path, value)
        return
    out += _memoized_causes(check, memo, path, value, encoded)


def _memoized_causes(
    check: Callable[[list[Cause], str, Any], None],
    memo: Memo[tuple[Cause, ...]],
    path: str,
    value: Any,
    encoded: bytes,
) -> tuple[Cause, ...]:
    """:func:`_memoized`'s causes of ``value``, whose :func:`~.memo.json_key` is ``encoded``
    (a caller that knows the encoding skips encoding it again)."""
    key = (path, encoded)  # a known encoding's hash is cached: not hashed again
    causes = memo.get(key)
    if causes is None:
        found: list[Cause] = []
        check(found, path, value)
        causes = tuple(found)
        memo.put(key, causes)
    return causes


def validate_object_meta(
    meta: Mapping[str, Any], *, namespaced: bool, name_rule: str = "subdomain"
) -> list[Cause]:
    """Upstream ``ValidateObjectMeta`` for a ``metadata`` mapping.

    * ``name`` or ``generateName`` is required; ``name`` must follow ``name_rule``:
      ``"subdomain"`` (DNS-1123 subdomain), ``"label"`` (DNS-1123 label),
      ``"dns1035-label"`` (starts with a letter, as Service names) or ``"path-segment"``
      (only ``/``, ``%``, ``.`` and ``..`` are refused, as RBAC names); a
      ``generateName`` is checked as a prefix of such a name.
    * ``namespace`` is required (and a DNS-1123 label) when ``namespaced``, forbidden
      otherwise.
    * label keys/values, annotation keys and total size (256 KiB), owner references
      (``apiVersion``, ``kind``, ``name``, ``uid``, at most one ``controller: true``),
      finalizer names and a non-negative ``generation``.
    """
    try:
        name_fn = _NAME_FNS[name_rule]
    except KeyError:
        raise ValueError(f"unknown name rule {name_rule!r}; one of {sorted(_NAME_FNS)}") from None
    out: list[Cause] = []
    _validate_meta(out, meta, namespaced, name_fn)
    return out


# --------------------------------------------------------------------------------------
# Pods and pod templates (core)
# --------------------------------------------------------------------------------------

_RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
_PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_UPDATABLE_POD_FIELDS: Final = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )
)


def _validate_port_number(out: list[Cause], path: str, value: Any) -> None:
    number = _int_field(out, path, value)
    if number is not None and not 1 <= number <= 65535:
        out.append(_invalid(path, number, _range_error(1, 65535)))


def _valid_port_number(value: Any) -> bool:
    return type(value) is int and 1 <= value <= 65535


def _validate_container_ports(out: list[Cause], container_path: str, ports: Any) -> None:
    """The ``ports`` of the container at ``container_path`` (paths are built only for causes)."""
    if ports is None:
        return
    if not isinstance(ports, (list, tuple)):
        out.append(_invalid(f"{container_path}.ports", ports, "must be a list"))
        return
    names: set[str] = set()
    for j, raw in enumerate(ports):
        get = (raw if type(raw) is dict else _map(raw)).get
        name = get("name")
        if name:
            msgs = is_valid_port_name(name) if isinstance(name, str) else _NOT_A_STRING
            if msgs:
                for msg in msgs:
                    out.append(_invalid(f"{container_path}.ports[{j}].name", name, msg))
            elif name in names:
                out.append(_duplicate(f"{container_path}.ports[{j}].name", name))
            else:
                names.add(name)
        container_port = get("containerPort")
        if not container_port:
            out.append(_required(f"{container_path}.ports[{j}].containerPort"))
        elif not _valid_port_number(container_port):
            _validate_port_number(out, f"{container_path}.ports[{j}].containerPort", container_port)
        host_port = get("hostPort")
        if host_port and not _valid_port_number(host_port):
            _validate_port_number(out, f"{container_path}.ports[{j}].hostPort", host_port)
        protocol = get("protocol")
        if protocol and protocol not in _PROTOCOLS:
            out.append(
                _not_supported(f"{container_path}.ports[{j}].protocol", protocol, _PROTOCOLS)
            )


def _validate_container(
    out: list[Cause], path: str, raw: Any, is_pod: bool, volumes: set[str]
) -> str:
    """Checks common to containers and init containers (``volumes``: the pod's volume
    names); returns the name (or "")."""
    container = raw if type(raw) is dict else _map(raw)
    get = container.get
    name = get("name")
    if not name:
        out.append(_required(f"{path}.name"))
        name = ""
    elif not isinstance(name, str):
        out.append(_invalid(f"{path}.name", name, "must be a string"))
        name = ""
    else:
        for msg in dns1123_label_errors(name):
            out.append(_invalid(f"{path}.name", name, msg))
    image = get("image")
    if not image:
        out.append(_required(f"{path}.image"))
    elif not isinstance(image, str):
        out.append(_invalid(f"{path}.image", image, "must be a string"))
    elif is_pod and image != image.strip():
        out.append(_invalid(f"{path}.image", image, "must not have leading or trailing whitespace"))
    pull_policy = get("imagePullPolicy")
    if pull_policy and pull_policy not in _PULL_POLICIES:
        out.append(_not_supported(f"{path}.imagePullPolicy", pull_policy, _PULL_POLICIES))
    if "ports" in container:
        _validate_container_ports(out, path, container["ports"])
    mounts = get("volumeMounts")
    if mounts:
        _validate_volume_mounts(out, f"{path}.volumeMounts", mounts, volumes)
    return name


def _volume_names(out: list[Cause], path: str, raw: Any) -> set[str]:
    """Upstream ``ValidateVolumes``, its name rules: each volume's name, a unique DNS label."""
    names: set[str] = set()
    for i, volume in enumerate(_list_field(out, path, raw)):
        name = _map(volume).get("name")
        if not name:
            out.append(_required(f"{path}[{i}].name"))
        elif not isinstance(name, str):
            out.append(_invalid(f"{path}[{i}].name", name, "must be a string"))
        elif name in names:
            out.append(_duplicate(f"{path}[{i}].name", name))
        else:
            for msg in dns1123_label_errors(name):
                out.append(_invalid(f"{path}[{i}].name", name, msg))
            names.add(name)
    return names


def _validate_volume_mounts(out: list[Cause], path: str, raw: Any, volumes: set[str]) -> None:
    """Upstream ``ValidateVolumeMounts``: each mount names a volume of the pod and has a
    unique ``mountPath``."""
    paths: set[str] = set()
    for i, mount in enumerate(_list_field(out, path, raw)):
        mount = _map(mount)
        name, mount_path = mount.get("name"), mount.get("mountPath")
        if not name:
            out.append(_required(f"{path}[{i}].name"))
        elif name not in volumes:
            out.append(_not_found(f"{path}[{i}].name", name))
        if not mount_path:
            out.append(_required(f"{path}[{i}].mountPath"))
        elif mount_path in paths:
            out.append(_invalid(f"{path}[{i}].mountPath", mount_path, "must be unique"))
        elif isinstance(mount_path, str):
            paths.add(mount_path)


#: The pod spec's name fields and the rule each follows (in the order upstream checks them).
_POD_SPEC_NAMES: Final[tuple[tuple[str, Callable[[str], tuple[str, ...]]], ...]] = (
    ("nodeName", dns1123_subdomain_errors),
    ("serviceAccountName", dns1123_subdomain_errors),
    ("hostname", dns1123_label_errors),
    ("subdomain", dns1123_label_errors),
)


def _validate_pod_spec(out: list[Cause], path: str, spec: Mapping[str, Any], is_pod: bool) -> None:
    """Upstream ``ValidatePodSpec``, restricted to the rules listed in the module doc."""
    get = spec.get
    volumes = _volume_names(out, f"{path}.volumes", get("volumes")) if get("volumes") else set()
    containers = get("containers")
    if type(containers) is not list:
        containers = _list_field(out, f"{path}.containers", containers)
    names: set[str] = set()
    if not containers:
        out.append(_required(f"{path}.containers"))
    for i, raw in enumerate(containers):
        name = _validate_container(out, f"{path}.containers[{i}]", raw, is_pod, volumes)
        if name in names:
            out.append(_duplicate(f"{path}.containers[{i}].name", name))
        else:
            names.add(name)
    init_containers = get("initContainers")
    if init_containers:
        for i, raw in enumerate(_list_field(out, f"{path}.initContainers", init_containers)):
            name = _validate_container(out, f"{path}.initContainers[{i}]", raw, is_pod, volumes)
            if name in names:
                out.append(_duplicate(f"{path}.initContainers[{i}].name", name))
            elif name:
                names.add(name)

    restart_policy = get("restartPolicy")
    if restart_policy and restart_policy not in _RESTART_POLICIES:
        out.append(_not_supported(f"{path}.restartPolicy", restart_policy, _RESTART_POLICIES))
    deadline = get("activeDeadlineSeconds")
    if deadline is not None:
        deadline = _int_field(out, f"{path}.activeDeadlineSeconds", deadline)
        if deadline is not None and not 1 <= deadline <= _MAX_INT32:
            out.append(
                _invalid(f"{path}.activeDeadlineSeconds", deadline, _range_error(1, _MAX_INT32))
            )
    for key, name_errors in _POD_SPEC_NAMES:
        value = get(key)
        if value:
            msgs = name_errors(value) if isinstance(value, str) else _NOT_A_STRING
            for msg in msgs:
                out.append(_invalid(f"{path}.{key}", value, msg))


def _tolerations_equal(old: Any, new: Any) -> bool:
    a = _norm(old) if isinstance(old, Mapping) else old
    b = _norm(new) if isinstance(new, Mapping) else new
    if isinstance(a, dict) and isinstance(b, dict):
        a = {k: v for k, v in a.items() if k != "tolerationSeconds"}
        b = {k: v for k, v in b.items() if k != "tolerationSeconds"}
    return bool(a == b)


_POD_MUTABLE_KEYS: Final = frozenset(
    {"containers", "initContainers", "activeDeadlineSeconds", "schedulingGates", "tolerations"}
)


def _only_mutable_pod_fields_differ(spec: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Fast raw-equality check that only updatable pod fields changed (the common case).

    ``False`` means "not sure": the caller then compares semantically.
    """
    for key, value in spec.items():
        if key not in _POD_MUTABLE_KEYS and old.get(key) != value:
            return False
    for key in old:
        if key not in spec and key not in _POD_MUTABLE_KEYS:
            return False
    for key in ("containers", "initContainers"):
        new_list, old_list = _list(spec.get(key)), _list(old.get(key))
        for new_c, old_c in zip(new_list, old_list, strict=True):
            if new_c == old_c:
                continue
            if not isinstance(new_c, Mapping) or not isinstance(old_c, Mapping):
                return False
            if new_c.keys() != old_c.keys():
                return False
            for k, v in new_c.items():
                if k != "image" and old_c[k] != v:
                    return False
    return True


def _validate_pod_update(out: list[Cause], spec: Mapping[str, Any], old: Mapping[str, Any]) -> None:
    """Upstream ``ValidatePodUpdate``: the spec is immutable but for a few fields."""
    for key in ("containers", "initContainers"):
        new_list, old_list = _list(spec.get(key)), _list(old.get(key))
        if len(new_list) != len(old_list):
            out.append(_forbidden(f"spec.{key}", "pod updates may not add or remove containers"))
            return

    new_deadline = spec.get("activeDeadlineSeconds")
    old_deadline = old.get("activeDeadlineSeconds")
    if _is_int(new_deadline):
        if not 0 <= new_deadline <= _MAX_INT32:
            out.append(
                _invalid("spec.activeDeadlineSeconds", new_deadline, _range_error(0, _MAX_INT32))
            )
            return
        if _is_int(old_deadline) and old_deadline < new_deadline:
            out.append(
                _invalid(
                    "spec.activeDeadlineSeconds",
                    new_deadline,
                    "must be less than or equal to previous value",
                )
            )
            return
    elif new_deadline is None and old_deadline is not None:
        out.append(
            _invalid(
                "spec.activeDeadlineSeconds",
                None,
                "must not update from a positive integer to nil value",
            )
        )

    new_tolerations = _list(spec.get("tolerations"))
    for old_toleration in _list(old.get("tolerations")):
        if not any(_tolerations_equal(old_toleration, t) for t in new_tolerations):
            out.append(
                _forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            )
            break

    old_gates = {_map(g).get("name") for g in _list(old.get("schedulingGates"))}
    for i, gate in enumerate(_list(spec.get("schedulingGates"))):
        gate_name = _map(gate).get("name")
        if gate_name not in old_gates:
            out.append(
                _forbidden(
                    f"spec.schedulingGates[{i}].name",
                    f"only deletion is allowed, but found new scheduling gate '{gate_name}'",
                )
            )

    if _only_mutable_pod_fields_differ(spec, old):
        return
    new_norm, old_norm = _norm(spec), _norm(old)
    if new_norm == old_norm:
        return
    for key in ("containers", "initContainers"):
        old_containers = old_norm.get(key, [])
        for i, container in enumerate(new_norm.get(key, [])):
            if isinstance(container, dict) and isinstance(old_containers[i], dict):
                container.pop("image", None)
                if "image" in old_containers[i]:
                    container["image"] = old_containers[i]["image"]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        new_norm.pop(key, None)
        if key in old_norm:
            new_norm[key] = old_norm[key]
    grace_old = old_norm.get("terminationGracePeriodSeconds")
    if _is_int(grace_old) and grace_old < 0 and new_norm.get("terminationGracePeriodSeconds") == 1:
        new_norm["terminationGracePeriodSeconds"] = grace_old
    if new_norm != old_norm:
        out.append(
            _forbidden(
                "spec",
                f"pod updates may not change fields other than {_UPDATABLE_POD_FIELDS}"
                + _diff_text(old_norm, new_norm, "spec"),
            )
        )


#: A pod spec's encoding -> the causes :func:`_validate_pod_spec` finds in it (a pure function
#: of the spec; pods written from one template repeat their spec byte for byte).
_POD_SPEC_CAUSES: Final[Memo[tuple[Cause, ...]]] = Memo()


def _validate_pod_spec_of_pod(out: list[Cause], path: str, spec: Any) -> None:
    _validate_pod_spec(out, path, spec, is_pod=True)


def _pod(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    spec = _mapping_field(out, "spec", obj.get("spec"))
    _memoized(_validate_pod_spec_of_pod, _POD_SPEC_CAUSES, out, "spec", spec)
    if old is not None:
        _validate_pod_update(out, spec, _map(old.get("spec")))


def _validate_pod_template(
    out: list[Cause], path: str, template: Mapping[str, Any], owner: str
) -> None:
    """Upstream ``ValidatePodTemplateSpec`` plus the workload rules (``Always``, no
    ``activeDeadlineSeconds``). Label and annotation paths omit ``metadata`` as upstream."""
    meta = _mapping_field(out, f"{path}.metadata", template.get("metadata"))
    _validate_labels(out, f"{path}.labels", meta.get("labels"))
    _validate_annotations(out, f"{path}.annotations", meta.get("annotations"))
    spec = _mapping_field(out, f"{path}.spec", template.get("spec"))
    _validate_pod_spec(out, f"{path}.spec", spec, is_pod=False)
    _template_restart_rules(out, path, spec, owner)


def _template_restart_rules(
    out: list[Cause], path: str, spec: Mapping[str, Any], owner: str
) -> None:
    restart_policy = spec.get("restartPolicy") or "Always"
    if restart_policy != "Always":
        out.append(_not_supported(f"{path}.spec.restartPolicy", restart_policy, ("Always",)))
    if spec.get("activeDeadlineSeconds") is not None:
        out.append(
            _forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {owner} is not Supported",
            )
        )


# --------------------------------------------------------------------------------------
# Label selectors inside objects (metav1 validation)
# --------------------------------------------------------------------------------------

_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


def _validate_label_selector(out: list[Cause], path: str, sel: Mapping[str, Any]) -> None:
    """Upstream ``ValidateLabelSelector`` (strict label values)."""
    _validate_labels(out, f"{path}.matchLabels", sel.get("matchLabels"))
    expressions = _list_field(out, f"{path}.matchExpressions", sel.get("matchExpressions"))
    for i, raw in enumerate(expressions):
        expr = _map(raw)
        base = f"{path}.matchExpressions[{i}]"
        key = expr.get("key") or ""
        if isinstance(key, str):
            for msg in qualified_name_errors(key):
                out.append(_invalid(f"{base}.key", key, msg))
        else:
            out.append(_invalid(f"{base}.key", key, "must be a string"))
        operator = expr.get("operator")
        values = _list(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                out.append(
                    _required(
                        f"{base}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                out.append(
                    _forbidden(
                        f"{base}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            out.append(_not_supported(f"{base}.operator", operator, _SELECTOR_OPERATORS))
        for j, value in enumerate(values):
            msgs = label_value_errors(value) if isinstance(value, str) else _NOT_A_STRING
            for msg in msgs:
                out.append(_invalid(f"{base}.values[{j}]", value, msg))


def _strategy(
    out: list[Cause], spec: Mapping[str, Any], key: str
) -> tuple[Mapping[str, Any], str, Any]:
    """A workload's ``spec.<key>`` update strategy: the map, its type (``RollingUpdate`` when
    unset) and its ``rollingUpdate``."""
    strategy = _mapping_field(out, f"spec.{key}", spec.get(key))
    return strategy, strategy.get("type") or "RollingUpdate", strategy.get("rollingUpdate")


def _validate_workload_selector(
    out: list[Cause],
    spec: Mapping[str, Any],
    workload: str,
    *,
    required: bool,
    convert_msg: str = "invalid label selector",
) -> None:
    """Selector checks shared by StatefulSet, Deployment, ReplicaSet and DaemonSet (an empty
    selector "is invalid for ``workload``"; ReplicaSets say "deployment", as upstream).

    Mirrors upstream: a missing selector converts to "nothing", so a workload without
    one also reports that the selector does not match the template labels.
    """
    raw = spec.get("selector")
    if raw is None:
        if required:
            out.append(_required("spec.selector"))
    elif not isinstance(raw, Mapping):
        out.append(_invalid("spec.selector", raw, "must be an object"))
        return
    else:
        _validate_label_selector(out, "spec.selector", raw)
        if not raw.get("matchLabels") and not raw.get("matchExpressions"):
            out.append(_invalid("spec.selector", raw, f"empty selector is invalid for {workload}"))
    try:
        selector = selectors.label_selector_from_dict(raw)
    except selectors.SelectorError:
        out.append(_invalid("spec.selector", raw, convert_msg))
        return
    if selector.is_empty():
        return
    template_meta = _map(_map(spec.get("template")).get("metadata"))
    labels = template_meta.get("labels")
    if not selector.matches(labels if isinstance(labels, Mapping) else None):
        out.append(
            _invalid(
                "spec.template.metadata.labels",
                labels if labels is not None else {},
                "`selector` does not match template `labels`",
            )
        )


def _int_or_percent(out: list[Cause], path: str, value: Any) -> int | None:
    """Upstream ``ValidatePositiveIntOrPercent``; returns the number or percentage."""
    if isinstance(value, str):
        msgs = is_valid_percent(value)
        for msg in msgs:
            out.append(_invalid(path, value, msg))
        return None if msgs else int(value[:-1])
    if _is_int(value):
        if value < 0:
            out.append(_invalid(path, value, _NEGATIVE_MSG))
        return int(value)
    out.append(_invalid(path, value, "must be an integer or percentage (e.g '5%')"))
    return None


def _not_over_100_percent(out: list[Cause], path: str, value: Any) -> None:
    if isinstance(value, str) and not is_valid_percent(value) and int(value[:-1]) > 100:
        out.append(_invalid(path, value, "must not be greater than 100%"))


def _selector_immutable(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """apps/v1 registries: ``spec.selector`` cannot change after creation."""
    if old is None:
        return
    new_sel = _map(obj.get("spec")).get("selector")
    old_sel = _map(old.get("spec")).get("selector")
    if _norm(new_sel) != _norm(old_sel):
        out.append(_invalid("spec.selector", new_sel, _IMMUTABLE_MSG))


# --------------------------------------------------------------------------------------
# apps: StatefulSet, Deployment, ReplicaSet, DaemonSet, ControllerRevision
# --------------------------------------------------------------------------------------

_STS_UPDATABLE: Final = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
_STS_UPDATE_MSG: Final = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)
_RETENTION_POLICIES: Final = ("Retain", "Delete")


def _statefulset(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    spec = _mapping_field(out, "spec", obj.get("spec"))

    policy = spec.get("podManagementPolicy")
    if policy and policy not in ("OrderedReady", "Parallel"):
        out.append(
            _invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )

    strategy, strategy_type, rolling = _strategy(out, spec, "updateStrategy")
    if strategy_type == "OnDelete":
        if rolling is not None:
            out.append(
                _invalid(
                    "spec.updateStrategy.rollingUpdate",
                    rolling,
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif strategy_type == "RollingUpdate":
        rolling_map = _mapping_field(out, "spec.updateStrategy.rollingUpdate", rolling)
        base = "spec.updateStrategy.rollingUpdate"
        _nonnegative(out, f"{base}.partition", rolling_map.get("partition"))
        max_unavailable = rolling_map.get("maxUnavailable")
        if max_unavailable is not None:
            number = _int_or_percent(out, f"{base}.maxUnavailable", max_unavailable)
            if number == 0:
                out.append(_invalid(f"{base}.maxUnavailable", max_unavailable, "cannot be 0"))
            _not_over_100_percent(out, f"{base}.maxUnavailable", max_unavailable)
    else:
        out.append(
            _invalid("spec.updateStrategy", strategy, "must be 'RollingUpdate' or 'OnDelete'")
        )

    retention = _mapping_field(
        out,
        "spec.persistentVolumeClaimRetentionPolicy",
        spec.get("persistentVolumeClaimRetentionPolicy"),
    )
    for key in ("whenDeleted", "whenScaled"):
        value = retention.get(key)
        if value and value not in _RETENTION_POLICIES:
            out.append(
                _not_supported(
                    f"spec.persistentVolumeClaimRetentionPolicy.{key}", value, _RETENTION_POLICIES
                )
            )

    _nonnegative_fields(out, "spec", spec, "replicas", "minReadySeconds", "revisionHistoryLimit")
    ordinals = _mapping_field(out, "spec.ordinals", spec.get("ordinals"))
    _nonnegative(out, "spec.ordinals.start", ordinals.get("start"))

    _validate_workload_selector(out, spec, "statefulset", required=True, convert_msg="")
    # As upstream, the StatefulSet template's pod spec is not validated beyond these rules.
    template = _mapping_field(out, "spec.template", spec.get("template"))
    template_meta = _mapping_field(out, "spec.template.metadata", template.get("metadata"))
    _validate_labels(out, "spec.template.labels", template_meta.get("labels"))
    _validate_annotations(out, "spec.template.annotations", template_meta.get("annotations"))
    _template_restart_rules(out, "spec.template", _map(template.get("spec")), "StatefulSet")

    if old is not None:
        new_rest = {k: v for k, v in _norm(spec).items() if k not in _STS_UPDATABLE}
        old_spec = _norm(_map(old.get("spec")))
        old_rest = {k: v for k, v in old_spec.items() if k not in _STS_UPDATABLE}
        for rest in (new_rest, old_rest):
            if rest.get("podManagementPolicy") == "OrderedReady":
                del rest["podManagementPolicy"]
        if new_rest != old_rest:
            out.append(_forbidden("spec", _STS_UPDATE_MSG + _diff_text(old_rest, new_rest, "spec")))


def _replica_set_like(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None, owner: str
) -> Mapping[str, Any]:
    spec = _mapping_field(out, "spec", obj.get("spec"))
    _nonnegative_fields(out, "spec", spec, "replicas", "minReadySeconds")
    _validate_workload_selector(out, spec, "deployment", required=True)
    template = _mapping_field(out, "spec.template", spec.get("template"))
    _validate_pod_template(out, "spec.template", template, owner)
    _selector_immutable(out, obj, old)
    return spec


def _replicaset(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    _replica_set_like(out, obj, old, "ReplicaSet")


def _deployment(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    # Upstream shares the ReplicaSet template check, hence "in ReplicaSet" in its message.
    spec = _replica_set_like(out, obj, old, "ReplicaSet")
    strategy, strategy_type, rolling = _strategy(out, spec, "strategy")
    if strategy_type == "Recreate":
        if rolling is not None:
            out.append(
                _forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            )
    elif strategy_type == "RollingUpdate":
        rolling_map = _mapping_field(out, "spec.strategy.rollingUpdate", rolling)
        base = "spec.strategy.rollingUpdate"
        max_unavailable = rolling_map.get("maxUnavailable", "25%")
        max_surge = rolling_map.get("maxSurge", "25%")
        unavailable = _int_or_percent(out, f"{base}.maxUnavailable", max_unavailable)
        surge = _int_or_percent(out, f"{base}.maxSurge", max_surge)
        if unavailable == 0 and surge == 0:
            out.append(
                _invalid(
                    f"{base}.maxUnavailable", max_unavailable, "may not be 0 when `maxSurge` is 0"
                )
            )
        _not_over_100_percent(out, f"{base}.maxUnavailable", max_unavailable)
    else:
        out.append(_not_supported("spec.strategy", strategy, ("Recreate", "RollingUpdate")))
    _nonnegative(out, "spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    deadline = _int_field(out, "spec.progressDeadlineSeconds", spec.get("progressDeadlineSeconds"))
    if deadline is not None:
        if deadline < 0:
            out.append(_invalid("spec.progressDeadlineSeconds", deadline, _NEGATIVE_MSG))
        min_ready = spec.get("minReadySeconds")
        if deadline <= (min_ready if _is_int(min_ready) else 0):
            out.append(
                _invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )


def _daemonset(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    spec = _mapping_field(out, "spec", obj.get("spec"))
    _validate_workload_selector(out, spec, "daemonset", required=False)
    template = _mapping_field(out, "spec.template", spec.get("template"))
    _validate_pod_template(out, "spec.template", template, "DaemonSet")
    _nonnegative_fields(out, "spec", spec, "minReadySeconds", "revisionHistoryLimit")
    strategy, strategy_type, _ = _strategy(out, spec, "updateStrategy")
    if strategy_type not in ("RollingUpdate", "OnDelete"):
        out.append(_not_supported("spec.updateStrategy", strategy, ("RollingUpdate", "OnDelete")))
    _selector_immutable(out, obj, old)


def _controllerrevision(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    if obj.get("data") is None:
        out.append(_required("data", "data is mandatory"))
    _nonnegative(out, "revision", obj.get("revision"))
    if old is not None and _norm(obj.get("data")) != _norm(old.get("data")):
        out.append(_invalid("data", obj.get("data"), _IMMUTABLE_MSG))


# --------------------------------------------------------------------------------------
# core: Service, ConfigMap, Secret, PersistentVolumeClaim
# --------------------------------------------------------------------------------------

_SERVICE_TYPES: Final = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


def _service(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    spec = _mapping_field(out, "spec", obj.get("spec"))
    service_type = spec.get("type") or "ClusterIP"
    if service_type not in _SERVICE_TYPES:
        out.append(_not_supported("spec.type", service_type, _SERVICE_TYPES))
    headless = spec.get("clusterIP") == "None"
    ports = _list_field(out, "spec.ports", spec.get("ports"))
    if not ports and not headless and service_type != "ExternalName":
        out.append(_required("spec.ports"))
    names: set[str] = set()
    require_name = len(ports) > 1
    for i, raw in enumerate(ports):
        port = _map(raw)
        base = f"spec.ports[{i}]"
        name = port.get("name")
        if not name:
            if require_name:
                out.append(_required(f"{base}.name"))
        elif not isinstance(name, str):
            out.append(_invalid(f"{base}.name", name, "must be a string"))
        else:
            for msg in dns1123_label_errors(name):
                out.append(_invalid(f"{base}.name", name, msg))
            if name in names:
                out.append(_duplicate(f"{base}.name", name))
            else:
                names.add(name)
        number = _int_field(out, f"{base}.port", port.get("port", 0))
        if number is not None:
            for msg in is_valid_port_num(number):
                out.append(_invalid(f"{base}.port", number, msg))
        protocol = port.get("protocol")
        if protocol and protocol not in _PROTOCOLS:
            out.append(_not_supported(f"{base}.protocol", protocol, _PROTOCOLS))
        target = port.get("targetPort")
        if isinstance(target, str) and target:
            for msg in is_valid_port_name(target):
                out.append(_invalid(f"{base}.targetPort", target, msg))
        elif target:  # 0 / missing is defaulted to ``port``
            _validate_port_number(out, f"{base}.targetPort", target)
    if service_type != "ExternalName":
        _validate_labels(out, "spec.selector", spec.get("selector"))
    if old is not None:
        _cluster_ips_unchanged(out, spec, _map(old.get("spec")))


def _cluster_ips_unchanged(
    out: list[Cause], spec: Mapping[str, Any], old: Mapping[str, Any]
) -> None:
    """Allocated cluster IPs may not change (unless to or from ExternalName, or between
    headless forms); a list that only grows or shrinks is a dual-stack up/downgrade."""
    if "ExternalName" in (spec.get("type"), old.get("type")):
        return
    if spec.get("clusterIP") == "None" and old.get("clusterIP") == "None":
        return
    new_ips, old_ips = _list(spec.get("clusterIPs")), _list(old.get("clusterIPs"))
    for i, (was, now) in enumerate(zip(old_ips, new_ips, strict=False)):
        if was != now:
            out.append(_invalid(f"spec.clusterIPs[{i}]", new_ips, "may not change once set"))


def _validate_data_keys(
    out: list[Cause], data: Mapping[str, Any], path: str, other: Mapping[str, Any], other_name: str
) -> None:
    for key in data:
        msgs = is_config_map_key(key) if isinstance(key, str) else _NOT_A_STRING
        for msg in msgs:
            out.append(_invalid(f"{path}[{key}]", key, msg))
        if key in other:
            out.append(_invalid(f"{path}[{key}]", key, f"duplicate of key present in {other_name}"))


def _immutable_data(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None, keys: Iterable[str]
) -> None:
    """``immutable: true`` ConfigMaps/Secrets: neither the flag nor the data may change."""
    if old is None or old.get("immutable") is not True:
        return
    msg = "field is immutable when `immutable` is set"
    if obj.get("immutable") is not True:
        out.append(_forbidden("immutable", msg))
    for key in keys:
        if _norm(obj.get(key)) != _norm(old.get(key)):
            out.append(_forbidden(key, msg))


def _configmap(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    data = _mapping_field(out, "data", obj.get("data"))
    binary = _mapping_field(out, "binaryData", obj.get("binaryData"))
    _validate_data_keys(out, data, "data", binary, "binaryData")
    _validate_data_keys(out, binary, "binaryData", data, "data")
    size = sum(len(v) for v in data.values() if isinstance(v, str))
    size += sum(len(v) * 3 // 4 for v in binary.values() if isinstance(v, str))
    if size > _MAX_SECRET_SIZE:
        out.append(_too_long("data", _MAX_SECRET_SIZE))
    _immutable_data(out, obj, old, ("data", "binaryData"))


def _secret(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    data = _mapping_field(out, "data", obj.get("data"))
    string_data = _mapping_field(out, "stringData", obj.get("stringData"))
    # stringData is merged into data before upstream validates, hence the "data" path.
    _validate_data_keys(out, data, "data", _EMPTY, "")
    _validate_data_keys(
        out, {k: v for k, v in string_data.items() if k not in data}, "data", _EMPTY, ""
    )
    size = sum(len(v) * 3 // 4 for v in data.values() if isinstance(v, str))
    size += sum(len(v) for v in string_data.values() if isinstance(v, str))
    if size > _MAX_SECRET_SIZE:
        out.append(_too_long("data", _MAX_SECRET_SIZE))
    if old is not None:
        new_type = obj.get("type") or "Opaque"
        old_type = old.get("type") or "Opaque"
        if new_type != old_type:
            out.append(_invalid("type", new_type, _IMMUTABLE_MSG))
    _immutable_data(out, obj, old, ("data",))


_QUANTITY_MSG: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def _quantity(value: Any) -> Decimal | None:
    """The value of a resource quantity (``"1Gi"``, ``"500m"``, ``2``), ``None`` if bad.

    Unlike :func:`~kube_runtime.workloads.quantity.parse_quantity`, surrounding white space
    makes a string no quantity here.
    """
    if isinstance(value, str) and value != value.strip():
        return None
    return parse_quantity(value)


def _with_quantities(spec: dict[str, Any]) -> dict[str, Any]:
    """Replace ``resources`` quantities by their values for semantic comparison."""
    resources = spec.get("resources")
    if isinstance(resources, dict):
        for key in ("requests", "limits"):
            values = resources.get(key)
            if isinstance(values, dict):
                for name, raw in values.items():
                    parsed = _quantity(raw)
                    if parsed is not None:
                        values[name] = parsed
    return spec


_ACCESS_MODES: Final = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_PVC_UPDATE_MSG: Final = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)


def _pvc(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    spec = _mapping_field(out, "spec", obj.get("spec"))
    modes = _list_field(out, "spec.accessModes", spec.get("accessModes"))
    if not modes:
        out.append(_required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            out.append(_not_supported("spec.accessModes", mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" for m in modes):
        out.append(
            _forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes")
        )
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        _validate_label_selector(out, "spec.selector", selector)
    resources = _mapping_field(out, "spec.resources", spec.get("resources"))
    requests = _mapping_field(out, "spec.resources.requests", resources.get("requests"))
    # Upstream's path is spec.resources[storage] (a Key() on the resources path).
    if "storage" not in requests:
        out.append(_required("spec.resources[storage]"))
    else:
        storage = requests["storage"]
        size = _quantity(storage)
        if size is None:
            out.append(_invalid("spec.resources[storage]", storage, _QUANTITY_MSG))
        elif size <= 0:
            out.append(_invalid("spec.resources[storage]", storage, "must be greater than zero"))
    class_name = spec.get("storageClassName")
    if class_name and isinstance(class_name, str):
        for msg in dns1123_subdomain_errors(class_name):
            out.append(_invalid("spec.storageClassName", class_name, msg))
    volume_mode = spec.get("volumeMode")
    if volume_mode and volume_mode not in ("Block", "Filesystem"):
        out.append(_not_supported("spec.volumeMode", volume_mode, ("Block", "Filesystem")))

    if old is None:
        return
    old_spec_raw = _map(old.get("spec"))
    new_spec = _with_quantities(_norm(spec))
    old_spec = _with_quantities(_norm(old_spec_raw))
    if not old_spec.get("volumeName"):
        old_spec.pop("volumeName", None)
        if "volumeName" in new_spec:
            old_spec["volumeName"] = new_spec["volumeName"]  # may be set once (binding)
    phase = _map(obj.get("status")).get("phase") or _map(old.get("status")).get("phase")
    new_requests = new_spec.get("resources", {}).get("requests")
    if phase == "Bound" and isinstance(new_requests, dict):
        old_storage = old_spec.get("resources", {}).get("requests", {}).get("storage")
        new_requests.pop("storage", None)
        if old_storage is not None:
            new_requests["storage"] = old_storage
    new_spec.pop("volumeAttributesClassName", None)
    if "volumeAttributesClassName" in old_spec:
        new_spec["volumeAttributesClassName"] = old_spec["volumeAttributesClassName"]
    for s in (new_spec, old_spec):
        if s.get("volumeMode") == "Filesystem":
            del s["volumeMode"]
    if new_spec != old_spec:
        out.append(_forbidden("spec", _PVC_UPDATE_MSG + _diff_text(old_spec, new_spec, "spec")))
    new_size = _quantity(_map(resources.get("requests")).get("storage"))
    old_size = _quantity(_map(_map(old_spec_raw.get("resources")).get("requests")).get("storage"))
    if new_size is not None and old_size is not None and new_size < old_size:
        out.append(
            _forbidden(
                "spec.resources.requests.storage", "field can not be less than previous value"
            )
        )


# --------------------------------------------------------------------------------------
# apiextensions: CustomResourceDefinition
# --------------------------------------------------------------------------------------


def _crd_schema(out: list[Cause], path: str, schema: Mapping[str, Any]) -> None:
    schema_type = schema.get("type")
    if not schema_type:
        out.append(_required(f"{path}.type", "must not be empty at the root"))
    elif schema_type != "object":
        out.append(_invalid(f"{path}.type", schema_type, "must be object at the root"))
    _structural_types(out, path, schema)


def _structural_types(out: list[Cause], path: str, schema: Mapping[str, Any]) -> None:
    """A structural schema gives every specified field and array item a type (unless it is
    int-or-string or preserves unknown fields; an embedded resource must be an object), as
    kube-apiserver requires of v1 CRDs; its CEL rules compile."""
    for field_path, message in celrules.rule_compile_errors(path, schema):
        reason = REQUIRED if message == "Required value" else INVALID
        out.append(Cause(field_path, reason, message))
    children: list[tuple[str, Any, str]] = [
        (f"{path}.properties[{name}]", sub, "object fields")
        for name, sub in _map(schema.get("properties")).items()
    ]
    if isinstance(schema.get("items"), Mapping):
        children.append((f"{path}.items", schema["items"], "array items"))
    if isinstance(schema.get("additionalProperties"), Mapping):
        children.append(
            (f"{path}.additionalProperties", schema["additionalProperties"], "object fields")
        )
    for child_path, raw, what in children:
        child = _map(raw)
        child_type = child.get("type")
        if child.get("x-kubernetes-embedded-resource") is True:
            if child_type != "object":
                detail = "must be object if x-kubernetes-embedded-resource is true"
                out.append(
                    _invalid(f"{child_path}.type", child_type, detail)
                    if child_type
                    else _required(f"{child_path}.type", detail)
                )
        elif not child_type and not (
            child.get("x-kubernetes-int-or-string") is True
            or child.get("x-kubernetes-preserve-unknown-fields") is True
        ):
            out.append(_required(f"{child_path}.type", f"must not be empty for specified {what}"))
        _structural_types(out, child_path, child)


def _stored_versions(out: list[Cause], versions: Sequence[Any]) -> None:
    """A new CRD stores its storage version: without one (or with a second) the stored
    versions kube-apiserver records do not hold."""
    storage = [_map(v).get("name") for v in versions if _map(v).get("storage") is True]
    if not storage:
        out.append(_invalid("status.storedVersions", [], "must have at least one stored version"))
        return
    for other in storage[1:]:
        out.append(
            _invalid("status.storedVersions", storage[:1], f"must have the storage version {other}")
        )


def _crd(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    spec = _mapping_field(out, "spec", obj.get("spec"))
    group = spec.get("group")
    names = _mapping_field(out, "spec.names", spec.get("names"))
    plural = names.get("plural")

    name = _map(obj.get("metadata")).get("name")
    if name and isinstance(name, str) and name != f"{plural or ''}.{group or ''}":
        out.append(_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))

    if not group:
        out.append(_required("spec.group"))
    elif not isinstance(group, str):
        out.append(_invalid("spec.group", group, "must be a string"))
    elif msgs := dns1123_subdomain_errors(group):
        out.append(_invalid("spec.group", group, ",".join(msgs)))
    elif "." not in group:
        out.append(_invalid("spec.group", group, "should be a domain with at least one dot"))

    scope = spec.get("scope")
    if not scope:
        out.append(_required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        out.append(_not_supported("spec.scope", scope, ("Cluster", "Namespaced")))

    if not plural:
        out.append(_required("spec.names.plural"))
    if not names.get("kind"):
        out.append(_required("spec.names.kind"))
    for key in ("plural", "singular"):
        value = names.get(key)
        if value and isinstance(value, str) and (msgs := is_dns1035_label(value)):
            out.append(_invalid(f"spec.names.{key}", value, ",".join(msgs)))
    for key in ("kind", "listKind"):
        value = names.get(key)
        if value and isinstance(value, str) and (msgs := is_dns1035_label(value.lower())):
            out.append(
                _invalid(
                    f"spec.names.{key}",
                    value,
                    "may have mixed case, but should otherwise match: " + ",".join(msgs),
                )
            )
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        out.append(
            _invalid(
                "spec.names.listKind",
                names.get("listKind"),
                "kind and listKind may not be the same",
            )
        )
    for key in ("shortNames", "categories"):
        for i, value in enumerate(_list(names.get(key))):
            msgs = is_dns1035_label(value) if isinstance(value, str) else _NOT_A_STRING
            if msgs:
                out.append(_invalid(f"spec.names.{key}[{i}]", value, ",".join(msgs)))

    versions = _list_field(out, "spec.versions", spec.get("versions"))
    top_schema = _map(_map(spec.get("validation")).get("openAPIV3Schema"))
    # kube-apiserver validates the internal form, in which one schema shared by every
    # version becomes spec.validation: its errors are reported there
    schemas = [_map(_map(_map(v).get("schema")).get("openAPIV3Schema")) for v in versions]
    shared_schema = bool(schemas) and all(schemas) and all(x == schemas[0] for x in schemas)
    if shared_schema and not top_schema:
        top_schema = schemas[0]
    if not versions:
        out.append(_required("spec.versions", "must have at least one version"))
    else:
        seen: set[Any] = set()
        unique = True
        storage = served = 0
        for i, raw in enumerate(versions):
            version = _map(raw)
            version_name = version.get("name")
            seen_key = version_name if isinstance(version_name, str) else repr(version_name)
            if seen_key in seen:
                unique = False
            seen.add(seen_key)
            if version.get("storage") is True:
                storage += 1
            if version.get("served") is True:
                served += 1
            msgs = (
                is_dns1035_label(version_name) if isinstance(version_name, str) else _NOT_A_STRING
            )
            if msgs:
                out.append(_invalid(f"spec.versions[{i}].name", version_name, ",".join(msgs)))
            schema = _map(_map(version.get("schema")).get("openAPIV3Schema"))
            if schema and not shared_schema:
                _crd_schema(out, f"spec.versions[{i}].schema.openAPIV3Schema", schema)
            elif not schema and not top_schema:
                out.append(
                    _required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required")
                )
        if not unique:
            out.append(_invalid("spec.versions", versions, "must contain unique version names"))
        if storage != 1:
            out.append(
                _invalid(
                    "spec.versions",
                    versions,
                    "must have exactly one version marked as storage version",
                )
            )
        if not served:
            # Not an upstream rule: a CRD serving nothing is useless to the embedded server.
            out.append(_invalid("spec.versions", versions, "must have at least one served version"))
        if old is None:
            _stored_versions(out, versions)
    if top_schema:
        _crd_schema(out, "spec.validation.openAPIV3Schema", top_schema)

    if old is not None:
        old_spec = _map(old.get("spec"))
        old_names = _map(old_spec.get("names"))
        if group != old_spec.get("group"):
            out.append(_invalid("spec.group", group, _IMMUTABLE_MSG))
        if plural != old_names.get("plural"):
            out.append(_invalid("spec.names.plural", plural, _IMMUTABLE_MSG))
        conditions = _list(_map(old.get("status")).get("conditions"))
        established = any(
            _map(c).get("type") == "Established" and _map(c).get("status") == "True"
            for c in conditions
        )
        if established:
            if scope != old_spec.get("scope"):
                out.append(_invalid("spec.scope", scope, _IMMUTABLE_MSG))
            if names.get("kind") != old_names.get("kind"):
                out.append(_invalid("spec.names.kind", names.get("kind"), _IMMUTABLE_MSG))


# --------------------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------------------

_Validator = Callable[[list[Cause], Mapping[str, Any], Mapping[str, Any] | None], None]


#: The built-in kinds' own checks past the object-meta ones, by (group, kind). A built-in
#: kind's scope is its served resource's (:data:`.resources.SERVED_BUILTINS`), its name rule
#: ``_apifacts.name_rule``'s.
_CHECKS: Final[dict[tuple[str, str], _Validator]] = {
    ("", "Pod"): _pod,
    ("", "Service"): _service,
    ("", "ConfigMap"): _configmap,
    ("", "Secret"): _secret,
    ("", "PersistentVolumeClaim"): _pvc,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replicaset,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "ControllerRevision"): _controllerrevision,
    (webhookconfig.GROUP, "ValidatingWebhookConfiguration"): webhookconfig.check_validating,
    (webhookconfig.GROUP, "MutatingWebhookConfiguration"): webhookconfig.check_mutating,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _crd,
}
# (the other kinds' own checks are builtin_groups.CHECKS, run by the strategy after these)
_NAMESPACED: Final[dict[tuple[str, str], bool]] = {
    (r.group, r.kind): r.namespaced for r in SERVED_BUILTINS
}
#: A built-in kind's scope and the check of its names (``_apifacts.name_rule``'s rule).
_BUILTIN_META: Final[dict[tuple[str, str], tuple[bool, _NameFn]]] = {
    (r.group, r.kind): (r.namespaced, _NAME_FNS[facts.name_rule(r.group, r.kind)])
    for r in SERVED_BUILTINS
}


def validate(
    group: str,
    kind: str,
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    namespaced: bool | None = None,
) -> list[Cause]:
    """Validate ``obj`` of ``group``/``kind`` for create (``old is None``) or update.

    Built-in kinds use their upstream name rule and scope (``namespaced`` is ignored for
    them); other kinds get only the metadata checks, with ``namespaced`` as given.
    Identical causes are reported once.
    """
    out: list[Cause] = []
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return [_invalid("", obj, "must be an object")]
    old_map = old if old is None or type(old) is dict or isinstance(old, Mapping) else None
    builtin = _BUILTIN_META.get((group, kind))
    if builtin is None:
        _validate_meta(out, obj.get("metadata"), namespaced, _SUBDOMAIN_NAME)
        return out
    _validate_meta(out, obj.get("metadata"), *builtin)
    check = _CHECKS.get((group, kind))
    if check is not None:
        check(out, obj, old_map)
    if len(out) > 1:
        out = list(dict.fromkeys(out))
    return out


_POD_META: Final = _BUILTIN_META[("", "Pod")]


def validate_pod_create(pod: dict[str, Any], spec_key: bytes) -> list[Cause]:
    """``validate("", "Pod", pod)`` (a create) for a pod whose ``spec`` is a non-empty
    ``dict`` of :func:`~.memo.json_key` ``spec_key`` (a spec the write path prepared from its
    memo, whose encoding it knows): the metadata checks, then the spec's memoized causes,
    without the general dispatch."""
    out: list[Cause] = []
    _validate_meta(out, pod.get("metadata"), *_POD_META)
    out += _memoized_causes(
        _validate_pod_spec_of_pod, _POD_SPEC_CAUSES, "spec", pod["spec"], spec_key
    )
    if len(out) > 1:
        out = list(dict.fromkeys(out))
    return out
