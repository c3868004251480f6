"""String validators of apimachinery's ``util/validation``, with upstream's error messages.

Each ``*_errors`` function returns the messages kube-apiserver gives for ``value`` as a tuple,
``()`` when it is valid: DNS-1123 labels and subdomains (object names), qualified names (label
and annotation keys, finalizers) and label values. They are pure and memoized (a bounded LRU
cache of :data:`VALIDATOR_CACHE_SIZE` strings): keys, names and prefixes repeat across almost
every object, so each distinct string is checked once. :func:`regex_error` and
:func:`max_len_error` word further validators the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Final

__all__ = [
    "DNS1123_LABEL_FMT",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_FMT",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "LABEL_VALUE_FMT",
    "LABEL_VALUE_MAX_LENGTH",
    "QUALIFIED_NAME_FMT",
    "QUALIFIED_NAME_MAX_LENGTH",
    "VALIDATOR_CACHE_SIZE",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "max_len_error",
    "no_new_finalizers_message",
    "path_segment_errors",
    "qualified_name_errors",
    "regex_error",
]


DNS1123_LABEL_MAX_LENGTH: Final = 63
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
QUALIFIED_NAME_MAX_LENGTH: Final = 63
LABEL_VALUE_MAX_LENGTH: Final = 63

DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT: Final = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT: Final = "(" + QUALIFIED_NAME_FMT + ")?"

_DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
    "'-', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', "
    "'_' or '.', and must start and end with an alphanumeric character"
)

# Non-capturing, anchored by fullmatch (Python's ``$`` would accept a trailing newline).
_DNS1123_LABEL_RE: Final = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN_RE: Final = re.compile(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
)
_QUALIFIED_NAME_RE: Final = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE_RE: Final = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

# Bound of each string validator's memo: distinct keys/names kept, least recently used first out.
VALIDATOR_CACHE_SIZE: Final = 16_384
_NO_ERRORS: Final[tuple[str, ...]] = ()


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream ``RegexError``: the message, its examples and the regex used."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            out += " or "
        out += f"'{example}', "
    return out + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """Upstream ``MaxLenError``."""
    return f"must be no more than {length} characters"


def _bounded_pattern_errors(
    value: str, max_length: int, pattern: re.Pattern[str], pattern_error: Callable[[str], str]
) -> tuple[str, ...]:
    """Upstream's usual pair of checks: at most ``max_length`` characters, and a full match of
    ``pattern`` (``pattern_error(value)`` is the message when it does not match)."""
    if len(value) <= max_length and pattern.fullmatch(value):
        return _NO_ERRORS
    errs: list[str] = []
    if len(value) > max_length:
        errs.append(max_len_error(max_length))
    if not pattern.fullmatch(value):
        errs.append(pattern_error(value))
    return tuple(errs)


def _dns1123_label_pattern_error(value: str) -> str:
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        return "must not contain dots"
    return regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc")


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def dns1123_label_errors(value: str) -> tuple[str, ...]:
    """Upstream ``IsDNS1123Label``: ``()`` when ``value`` is a valid RFC 1123 label."""
    return _bounded_pattern_errors(
        value, DNS1123_LABEL_MAX_LENGTH, _DNS1123_LABEL_RE, _dns1123_label_pattern_error
    )


def _dns1123_subdomain_pattern_error(_: str) -> str:
    return regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com")


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def dns1123_subdomain_errors(value: str) -> tuple[str, ...]:
    """Upstream ``IsDNS1123Subdomain``: ``()`` when ``value`` is a valid RFC 1123 subdomain."""
    return _bounded_pattern_errors(
        value, DNS1123_SUBDOMAIN_MAX_LENGTH, _DNS1123_SUBDOMAIN_RE, _dns1123_subdomain_pattern_error
    )


_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE: Final = re.compile(_DNS1035_LABEL_FMT)
_DNS1035_LABEL_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
    "with an alphabetic character, and end with an alphanumeric character"
)


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def dns1035_label_errors(value: str) -> tuple[str, ...]:
    """Upstream ``IsDNS1035Label``: ``()`` when ``value`` is a valid RFC 1035 label (a DNS-1123
    label that starts with a letter: Service names, CRD plurals)."""
    errs: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return tuple(errs)


def path_segment_errors(value: str, *, prefix: bool = False) -> tuple[str, ...]:
    """Upstream ``IsValidPathSegmentName`` (``ValidatePathSegmentName``): ``()`` unless
    ``value`` is ``.`` or ``..`` (not checked for a ``prefix``) or contains ``/`` or ``%``
    (RBAC object names)."""
    if not prefix and value in (".", ".."):
        return (f"may not be '{value}'",)
    return tuple(f"may not contain '{c}'" for c in ("/", "%") if c in value)


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def qualified_name_errors(value: str) -> tuple[str, ...]:
    """Upstream ``IsQualifiedName`` (label keys, annotation keys, finalizers).

    A qualified name is an optional DNS-subdomain prefix and ``/``, then a name of at
    most 63 characters of ``[-A-Za-z0-9_.]`` starting and ending alphanumeric.
    """
    if "/" not in value:
        if len(value) <= QUALIFIED_NAME_MAX_LENGTH and _QUALIFIED_NAME_RE.fullmatch(value):
            return _NO_ERRORS
        name = value
        errs: list[str] = []
    else:
        parts = value.split("/")
        if len(parts) != 2:
            return (
                "a qualified name "
                + regex_error(
                    _QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
                )
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            )
        prefix, name = parts
        errs = []
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(errs)


def _label_value_pattern_error(_: str) -> str:
    return regex_error(_LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345")


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def label_value_errors(value: str) -> tuple[str, ...]:
    """Upstream ``IsValidLabelValue``: empty, or a qualified-name-like string of <= 63 chars."""
    return _bounded_pattern_errors(
        value, LABEL_VALUE_MAX_LENGTH, _LABEL_VALUE_RE, _label_value_pattern_error
    )


def no_new_finalizers_message(added: Iterable[str]) -> str:
    """kube-apiserver's cause message when an update adds finalizers to an object that is
    being deleted (``ValidateObjectMetaUpdate``): the new ones sorted, as Go's ``%#v``."""
    quoted = ", ".join(json.dumps(name) for name in sorted(added))
    return (
        "Forbidden: no new finalizers can be added if the object is being deleted, "
        f"found new finalizers []string{{{quoted}}}"
    )
