"""``networking.k8s.io/v1`` Ingress, IngressClass and NetworkPolicy as kube-apiserver serves
them.

Validation follows upstream's ``pkg/apis/networking/validation`` for the checks users meet
(Ingress paths, path types and backends; an IngressClass's controller and parameters; a
NetworkPolicy's selector, ports and policy types), the table printers
``printIngress`` / ``printIngressClass`` / ``printNetworkPolicy`` as kube-apiserver 1.20
renders them. NetworkPolicy and IngressClass defaults are :mod:`.defaults`'; a created Ingress
reads back with ``status.loadBalancer: {}`` as kube-apiserver writes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _get, _list, _str
from kube_runtime.envtest.server.validation import (
    INVALID,
    _validate_label_selector,
    is_dns1123_subdomain,
    is_valid_port_name,
)
from kube_runtime.selectors import format_label_selector
from kube_runtime.validation import path_segment_errors

__all__ = [
    "GROUP",
    "INGRESS_CLASS_COLUMNS",
    "INGRESS_COLUMNS",
    "NETWORK_POLICY_COLUMNS",
    "check_ingress",
    "check_ingress_class",
    "check_network_policy",
    "initial_ingress_status",
]

GROUP: Final = "networking.k8s.io"

_PATH_TYPES: Final = ("Exact", "ImplementationSpecific", "Prefix")
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")
_POLICY_TYPES: Final = ("Ingress", "Egress")
_CONTROLLER_MAX: Final = 250
_DOMAIN_PATH_RE: Final = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def initial_ingress_status() -> dict[str, Any]:
    """The status a created Ingress reads back with."""
    return {"loadBalancer": {}}


# ------------------------------------------------------------------------------ Ingress


def _check_backend(out: list[Cause], path: str, backend: Mapping[str, Any]) -> None:
    service = backend.get("service")
    resource = backend.get("resource")
    if service is not None and resource is not None:
        out.append(fe.invalid(path, "", "cannot set both resource and service backends"))
        return
    if service is None and resource is None:
        out.append(fe.invalid(path, "", "resource or service backend is required"))
        return
    if service is None:
        return
    svc = fe.as_map(service)
    name = _str(svc.get("name"))
    if not name:
        out.append(fe.required(f"{path}.service.name"))
    port = fe.as_map(svc.get("port"))
    port_name, number = port.get("name"), port.get("number")
    if port_name and number:
        out.append(
            fe.invalid(
                f"{path}.service.port", dict(port), "cannot set both port name & port number"
            )
        )
    elif port_name:
        for msg in is_valid_port_name(str(port_name)):
            out.append(fe.invalid(f"{path}.service.port.name", port_name, msg))
    elif isinstance(number, int) and number:
        if not 1 <= number <= 65535:
            out.append(
                fe.invalid(
                    f"{path}.service.port.number", number, "must be between 1 and 65535, inclusive"
                )
            )
    else:
        out.append(fe.required(path, "port name or number is required"))


def check_ingress(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateIngressSpec`` (v1): a default backend or rules; each HTTP path with
    a supported ``pathType`` (absolute for Exact and Prefix) and a valid backend."""
    spec = fe.as_map(obj.get("spec"))
    raw_rules = spec.get("rules")
    rules: list[Any] = raw_rules if isinstance(raw_rules, list) else []
    default = spec.get("defaultBackend")
    if not rules and default is None:
        out.append(
            Cause(
                "spec",
                INVALID,
                "Invalid value: []networking.IngressRule(nil): "
                "either `defaultBackend` or `rules` must be specified",
            )
        )
    if default is not None:
        _check_backend(out, "spec.defaultBackend", fe.as_map(default))
    for i, raw in enumerate(rules):
        rule = fe.as_map(raw)
        host = _str(rule.get("host"))
        if host:
            bare = host[2:] if host.startswith("*.") else host
            for msg in is_dns1123_subdomain(bare):
                out.append(fe.invalid(f"spec.rules[{i}].host", host, msg))
        http = rule.get("http")
        if http is None:
            continue
        paths = fe.as_map(http).get("paths") or []
        base = f"spec.rules[{i}].http"
        if not paths:
            out.append(fe.required(f"{base}.paths"))
        for j, raw_path in enumerate(paths):
            item = fe.as_map(raw_path)
            where = f"{base}.paths[{j}]"
            path_type = item.get("pathType")
            text = _str(item.get("path"))
            if not path_type:
                out.append(fe.required(f"{where}.pathType", "pathType must be specified"))
            elif path_type not in _PATH_TYPES:
                out.append(fe.not_supported(f"{where}.pathType", path_type, _PATH_TYPES))
            elif path_type in ("Exact", "Prefix") and not text.startswith("/"):
                out.append(fe.invalid(f"{where}.path", text, "must be an absolute path"))
            _check_backend(out, f"{where}.backend", fe.as_map(item.get("backend")))
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str):
        for msg in is_dns1123_subdomain(class_name):
            out.append(fe.invalid("spec.ingressClassName", class_name, msg))


def _hosts(obj: Mapping[str, Any]) -> str:
    """Upstream ``formatHosts``: up to three hosts, ``*`` for none."""
    rules = _list(_get(obj, "spec", "rules"))
    hosts = [_str(r.get("host")) for r in rules[:3] if _str(r.get("host"))]
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if len(rules) > 3 else text


def _address(obj: Mapping[str, Any]) -> str:
    found = set()
    for ingress in _list(_get(obj, "status", "loadBalancer", "ingress")):
        value = _str(ingress.get("ip")) or _str(ingress.get("hostname"))
        if value:
            found.add(value)
    return ",".join(sorted(found))


INGRESS_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Class", lambda o: _str(_get(o, "spec", "ingressClassName")) or "<none>"),
    _col("Hosts", _hosts),
    _col("Address", _address),
    _col("Ports", lambda o: "80, 443" if _list(_get(o, "spec", "tls")) else "80"),
    AGE,
]


# ------------------------------------------------------------------------------ IngressClass


def _check_controller(out: list[Cause], controller: str) -> None:
    """Upstream ``IsDomainPrefixedPath`` plus the 250-character limit."""
    path = "spec.controller"
    if len(controller) > _CONTROLLER_MAX:
        out.append(fe.too_long(path, _CONTROLLER_MAX))
    if not controller:
        out.append(fe.required(path))
        return
    host, sep, rest = controller.partition("/")
    if not sep or not rest:
        out.append(
            fe.invalid(path, controller, 'must be a domain-prefixed path (such as "acme.io/foo")')
        )
        return
    for msg in is_dns1123_subdomain(host):
        out.append(fe.invalid(path, host, msg))
    if not _DOMAIN_PATH_RE.fullmatch(rest):
        out.append(fe.invalid(path, rest, "Invalid path"))


def check_ingress_class(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateIngressClass``: a domain-prefixed controller (immutable) and a
    parameters reference with a kind and a name."""
    spec = fe.as_map(obj.get("spec"))
    controller = _str(spec.get("controller"))
    _check_controller(out, controller)
    params = spec.get("parameters")
    if params is not None:
        ref = fe.as_map(params)
        group = ref.get("apiGroup")
        if isinstance(group, str):
            for msg in is_dns1123_subdomain(group):
                out.append(fe.invalid("spec.parameters.apiGroup", group, msg))
        for key in ("kind", "name"):
            value = _str(ref.get(key))
            if not value:
                out.append(fe.required(f"spec.parameters.{key}", f"{key} is required"))
            for msg in path_segment_errors(value):
                out.append(fe.invalid(f"spec.parameters.{key}", value, msg))
    if old is not None and _str(fe.as_map(old.get("spec")).get("controller")) != controller:
        out.append(fe.invalid("spec.controller", controller, fe.IMMUTABLE))


def _parameters(obj: Mapping[str, Any]) -> str:
    params = _get(obj, "spec", "parameters")
    if not isinstance(params, Mapping):
        return "<none>"
    text = _str(params.get("kind"))
    if isinstance(params.get("apiGroup"), str):
        text += "." + params["apiGroup"]
    return f"{text}/{_str(params.get('name'))}"


INGRESS_CLASS_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Controller", lambda o: _str(_get(o, "spec", "controller"))),
    _col("Parameters", _parameters),
    AGE,
]


# ------------------------------------------------------------------------------ NetworkPolicy


def _check_ports(out: list[Cause], path: str, ports: Any) -> None:
    for i, raw in enumerate(ports if isinstance(ports, list) else ()):
        port = fe.as_map(raw)
        where = f"{path}.ports[{i}]"
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            out.append(fe.not_supported(f"{where}.protocol", protocol, _PROTOCOLS))
        value = port.get("port")
        if isinstance(value, int) and not isinstance(value, bool):
            if not 1 <= value <= 65535:
                out.append(
                    fe.invalid(f"{where}.port", value, "must be between 1 and 65535, inclusive")
                )
        elif isinstance(value, str):
            for msg in is_valid_port_name(value):
                out.append(fe.invalid(f"{where}.port", value, msg))


def _check_peers(out: list[Cause], path: str, peers: Any) -> None:
    for i, raw in enumerate(peers if isinstance(peers, list) else ()):
        peer = fe.as_map(raw)
        where = f"{path}[{i}]"
        set_fields = [k for k in ("podSelector", "namespaceSelector") if peer.get(k) is not None]
        if peer.get("ipBlock") is not None:
            if set_fields:
                out.append(fe.forbidden(where, "may not specify both ipBlock and another peer"))
            cidr = _str(fe.as_map(peer.get("ipBlock")).get("cidr"))
            if not cidr:
                out.append(fe.required(f"{where}.ipBlock.cidr"))
        elif not set_fields:
            out.append(fe.required(where, "must specify a peer"))
        for key in set_fields:
            _validate_label_selector(out, f"{where}.{key}", fe.as_map(peer.get(key)))


def check_network_policy(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateNetworkPolicySpec``: the pod selector, each rule's ports and peers,
    and at most two supported ``policyTypes``."""
    spec = fe.as_map(obj.get("spec"))
    _validate_label_selector(out, "spec.podSelector", fe.as_map(spec.get("podSelector")))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        rules = spec.get(direction)
        for i, raw in enumerate(rules if isinstance(rules, list) else ()):
            rule = fe.as_map(raw)
            _check_ports(out, f"spec.{direction}[{i}]", rule.get("ports"))
            _check_peers(out, f"spec.{direction}[{i}].{peers}", rule.get(peers))
    types = spec.get("policyTypes")
    if isinstance(types, list):
        if len(types) > len(_POLICY_TYPES):
            out.append(
                fe.invalid("spec.policyTypes", types, "may not specify more than two policyTypes")
            )
            return
        for i, value in enumerate(types):
            if value not in _POLICY_TYPES:
                out.append(fe.not_supported(f"spec.policyTypes[{i}]", value, _POLICY_TYPES))


NETWORK_POLICY_COLUMNS: Final[list[Column]] = [
    NAME,
    _col(
        "Pod-Selector", lambda o: format_label_selector(fe.as_map(_get(o, "spec", "podSelector")))
    ),
    AGE,
]
