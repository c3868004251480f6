"""Mutating/ValidatingWebhookConfiguration (``admissionregistration.k8s.io/v1``) as stored.

kube-apiserver's v1 defaults, applied on every write: each webhook gets ``failurePolicy:
Fail``, ``matchPolicy: Equivalent``, empty ``namespaceSelector`` and ``objectSelector``,
``timeoutSeconds: 10`` (and ``reinvocationPolicy: Never`` when mutating); each rule
``scope: "*"``; a service reference ``port: 443``.

:func:`check_mutating` / :func:`check_validating` report what kube-apiserver's validation
refuses most often (names, rules, policies, ``sideEffects``, ``admissionReviewVersions``,
``timeoutSeconds``, ``clientConfig``), with its field paths and wording.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kube_runtime.client._apifacts import go_value
from kube_runtime.envtest.server.errors import Cause

GROUP = "admissionregistration.k8s.io"
MUTATING_KIND = "MutatingWebhookConfiguration"
VALIDATING_KIND = "ValidatingWebhookConfiguration"


def default_configuration(obj: dict[str, Any], *, mutating: bool) -> None:
    """Fill in the v1 defaults of every webhook of ``obj`` in place (malformed parts skipped)."""
    webhooks = obj.get("webhooks")
    if not isinstance(webhooks, list):
        return
    for hook in webhooks:
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        if hook.get("namespaceSelector") is None:
            hook["namespaceSelector"] = {}
        if hook.get("objectSelector") is None:
            hook["objectSelector"] = {}
        hook.setdefault("timeoutSeconds", 10)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def default_mutating(obj: dict[str, Any]) -> None:
    """Defaults of a MutatingWebhookConfiguration."""
    default_configuration(obj, mutating=True)


def default_validating(obj: dict[str, Any]) -> None:
    """Defaults of a ValidatingWebhookConfiguration."""
    default_configuration(obj, mutating=False)


# ------------------------------------------------------------------------------ validation

_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_REVIEW_VERSIONS = ("v1", "v1beta1")
_FAILURE_POLICIES = ("Fail", "Ignore")
_MATCH_POLICIES = ("Exact", "Equivalent")
_REINVOCATION_POLICIES = ("Never", "IfNeeded")
_SCOPES = ("Cluster", "Namespaced", "*")
_OPERATIONS = ("*", "CREATE", "UPDATE", "DELETE", "CONNECT")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _shown(value: Any) -> str:
    return go_value(value, typed=True)


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def _unsupported(path: str, value: Any, supported: tuple[str, ...]) -> Cause:
    return Cause(
        path,
        "FieldValueNotSupported",
        f"Unsupported value: {_shown(value)}: supported values: {_quoted(supported)}",
    )


def _invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause(path, "FieldValueInvalid", f"Invalid value: {_shown(value)}: {detail}")


def _required(path: str, detail: str) -> Cause:
    return Cause(path, "FieldValueRequired", f"Required value: {detail}")


def _check_client_config(out: list[Cause], path: str, config: Any) -> None:
    config = config if isinstance(config, dict) else {}
    url, service = config.get("url"), config.get("service")
    if bool(url) == bool(service):
        out.append(_required(path, "exactly one of url or service is required"))
        return
    if url:
        parts = urlsplit(str(url))
        if parts.scheme != "https":
            out.append(_invalid(f"{path}.url", url, "'https' is the only allowed URL scheme"))
        elif not parts.hostname:
            out.append(_invalid(f"{path}.url", url, "host must be specified"))
        elif parts.query or parts.fragment:
            out.append(_invalid(f"{path}.url", url, "query parameters are not allowed"))
        return
    if not isinstance(service, dict):
        return
    for key in ("name", "namespace"):
        if not service.get(key):
            out.append(_required(f"{path}.service.{key}", f"service {key} is required"))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        out.append(
            _invalid(f"{path}.service.port", port, "port is not valid: must be between 1 and 65535")
        )


def _check_rules(out: list[Cause], path: str, rules: Any) -> None:
    for j, rule in enumerate(rules if isinstance(rules, list) else ()):
        at = f"{path}[{j}]"
        rule = rule if isinstance(rule, dict) else {}
        operations = rule.get("operations") or []
        if not operations:
            out.append(_required(f"{at}.operations", ""))
        for k, op in enumerate(operations):
            if op not in _OPERATIONS:
                out.append(_unsupported(f"{at}.operations[{k}]", op, _OPERATIONS))
        for key in ("apiGroups", "apiVersions", "resources"):
            if not rule.get(key):
                out.append(_required(f"{at}.{key}", ""))
        scope = rule.get("scope", "*")
        if scope not in _SCOPES:
            out.append(_unsupported(f"{at}.scope", scope, _SCOPES))


def _check(out: list[Cause], obj: Mapping[str, Any], *, mutating: bool) -> None:
    seen: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or ()):
        at = f"webhooks[{i}]"
        hook = hook if isinstance(hook, dict) else {}
        name = hook.get("name")
        if not name:
            out.append(_required(f"{at}.name", ""))
        elif len(str(name).split(".")) < 3 or not all(
            _DNS_LABEL.fullmatch(part) for part in str(name).split(".")
        ):
            out.append(
                _invalid(
                    f"{at}.name",
                    name,
                    "should be a domain with at least three segments separated by dots",
                )
            )
        elif name in seen:
            out.append(
                Cause(f"{at}.name", "FieldValueDuplicate", f"Duplicate value: {_shown(name)}")
            )
        else:
            seen.add(str(name))
        _check_rules(out, f"{at}.rules", hook.get("rules"))
        for key, allowed in (
            ("failurePolicy", _FAILURE_POLICIES),
            ("matchPolicy", _MATCH_POLICIES),
            *((("reinvocationPolicy", _REINVOCATION_POLICIES),) if mutating else ()),
        ):
            if key in hook and hook[key] not in allowed:
                out.append(_unsupported(f"{at}.{key}", hook[key], allowed))
        effects = hook.get("sideEffects")
        if effects is None:
            out.append(
                _required(f"{at}.sideEffects", f"must specify one of {_quoted(_SIDE_EFFECTS)}")
            )
        elif effects not in _SIDE_EFFECTS:
            out.append(_unsupported(f"{at}.sideEffects", effects, _SIDE_EFFECTS))
        versions = hook.get("admissionReviewVersions")
        if not versions:
            out.append(
                _required(
                    f"{at}.admissionReviewVersions",
                    f"must specify one of {', '.join(_REVIEW_VERSIONS)}",
                )
            )
        elif not any(v in _REVIEW_VERSIONS for v in versions):
            out.append(
                _invalid(
                    f"{at}.admissionReviewVersions",
                    versions,
                    f"must include at least one of {', '.join(_REVIEW_VERSIONS)}",
                )
            )
        timeout = hook.get("timeoutSeconds", 10)
        if not isinstance(timeout, int) or not 1 <= timeout <= 30:
            out.append(
                _invalid(
                    f"{at}.timeoutSeconds",
                    timeout,
                    "the timeout value must be between 1 and 30 seconds",
                )
            )
        _check_client_config(out, f"{at}.clientConfig", hook.get("clientConfig"))


def check_mutating(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Field errors of a MutatingWebhookConfiguration (a subset of kube-apiserver's)."""
    _check(out, obj, mutating=True)


def check_validating(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Field errors of a ValidatingWebhookConfiguration (a subset of kube-apiserver's)."""
    _check(out, obj, mutating=False)
