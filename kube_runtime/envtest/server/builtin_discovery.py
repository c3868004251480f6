"""``discovery.k8s.io`` EndpointSlice as kube-apiserver serves it: ``v1`` (stored) and
``v1beta1`` (what 1.20 serves), converted as upstream (:func:`convert_endpoint_slices`:
v1beta1's ``topology`` map against v1's ``nodeName``, ``zone`` and ``deprecatedTopology``).

Validation follows upstream's ``ValidateEndpointSlice`` for the checks users meet (address
type, each endpoint's addresses for that type, ports), the printer ``printEndpointSlice``
(``formatDiscoveryPorts`` / ``formatDiscoveryEndpoints``: three items, then ``+ N more...``;
``<unset>`` for none). Port defaults are :mod:`.defaults`'; :func:`default_endpoint_conditions`
adds the ``conditions: {}`` Go writes for each endpoint.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _list, _str
from kube_runtime.envtest.server.validation import is_dns1123_subdomain

__all__ = [
    "ENDPOINT_SLICE_COLUMNS",
    "GROUP",
    "check_endpoint_slice",
    "convert_endpoint_slices",
    "default_endpoint_conditions",
]

GROUP: Final = "discovery.k8s.io"

_ADDRESS_TYPES: Final = ("FQDN", "IPv4", "IPv6")
_MAX_ADDRESSES: Final = 100
_MAX_ENDPOINTS: Final = 1000
_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")


def default_endpoint_conditions(obj: dict[str, Any]) -> None:
    """Each endpoint reads back with ``conditions`` (``{}`` when none was sent)."""
    endpoints = obj.get("endpoints")
    for endpoint in endpoints if isinstance(endpoints, list) else ():
        if isinstance(endpoint, dict) and endpoint.get("conditions") is None:
            endpoint["conditions"] = {}


def _address_errors(kind: str, address: str) -> list[str]:
    if kind == "FQDN":
        return list(is_dns1123_subdomain(address))
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        parsed = None
    if kind == "IPv4" and not isinstance(parsed, ipaddress.IPv4Address):
        return ["must be a valid IPv4 address"]
    if kind == "IPv6" and not isinstance(parsed, ipaddress.IPv6Address):
        return ["must be a valid IPv6 address"]
    return []


def check_endpoint_slice(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateEndpointSlice``: a supported address type (immutable), 1-100
    addresses per endpoint valid for that type, ports with supported protocols."""
    kind = obj.get("addressType")
    if not kind:
        out.append(fe.required("addressType"))
    elif kind not in _ADDRESS_TYPES:
        out.append(fe.not_supported("addressType", kind, _ADDRESS_TYPES))
    endpoints = obj.get("endpoints")
    endpoints = endpoints if isinstance(endpoints, list) else []
    if len(endpoints) > _MAX_ENDPOINTS:
        out.append(
            fe.invalid("endpoints", len(endpoints), f"must have at most {_MAX_ENDPOINTS} items")
        )
    for i, raw in enumerate(endpoints):
        addresses = fe.as_map(raw).get("addresses")
        addresses = addresses if isinstance(addresses, list) else []
        path = f"endpoints[{i}].addresses"
        if not addresses:
            out.append(fe.required(path, "must contain at least 1 address"))
        elif len(addresses) > _MAX_ADDRESSES:
            out.append(
                fe.invalid(path, len(addresses), f"must have at most {_MAX_ADDRESSES} items")
            )
        for j, address in enumerate(addresses):
            if kind in _ADDRESS_TYPES:
                for msg in _address_errors(str(kind), str(address)):
                    out.append(fe.invalid(f"{path}[{j}]", address, msg))
    ports = obj.get("ports")
    for i, raw in enumerate(ports if isinstance(ports, list) else ()):
        protocol = fe.as_map(raw).get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            out.append(fe.not_supported(f"ports[{i}].protocol", protocol, _PROTOCOLS))
    if old is not None and old.get("addressType") != kind:
        out.append(fe.invalid("addressType", kind, "field is immutable"))


def _more(items: list[str], count: int) -> str:
    text = ",".join(items)
    if count > len(items):
        return f"{text} + {count - len(items)} more..."
    return text or "<unset>"


def _ports(obj: Mapping[str, Any]) -> str:
    ports = _list(obj.get("ports"))
    shown = []
    for port in ports[:3]:
        number = port.get("port")
        shown.append(str(number) if isinstance(number, int) else _str(port.get("name")) or "*")
    return _more(shown, len(ports))


def _endpoints(obj: Mapping[str, Any]) -> str:
    addresses = [str(a) for e in _list(obj.get("endpoints")) for a in e.get("addresses") or ()]
    return _more(addresses[:3], len(addresses))


ENDPOINT_SLICE_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("AddressType", lambda o: _str(o.get("addressType"))),
    _col("Ports", _ports),
    _col("Endpoints", _endpoints),
    AGE,
]


# ------------------------------------------------------------------------------ conversion

_HOSTNAME: Final = "kubernetes.io/hostname"
_ZONE: Final = "topology.kubernetes.io/zone"


def _endpoint_to_v1(endpoint: dict[str, Any]) -> dict[str, Any]:
    """A v1beta1 endpoint as v1: ``topology`` becomes ``deprecatedTopology`` without the
    zone (its own field) and without the hostname when it equals ``nodeName``."""
    out = {k: v for k, v in endpoint.items() if k != "topology"}
    topology = endpoint.get("topology")
    if isinstance(topology, dict):
        rest = dict(topology)
        if _ZONE in rest:
            out["zone"] = rest.pop(_ZONE)
        if _HOSTNAME in rest and rest[_HOSTNAME] == endpoint.get("nodeName"):
            del rest[_HOSTNAME]
        if rest:
            out["deprecatedTopology"] = rest
    return out


def _endpoint_to_v1beta1(endpoint: dict[str, Any]) -> dict[str, Any]:
    """A v1 endpoint as v1beta1: ``deprecatedTopology``, ``zone`` and ``nodeName`` (as the
    hostname, unless already there) make ``topology``."""
    out = {k: v for k, v in endpoint.items() if k not in ("deprecatedTopology", "zone")}
    old = endpoint.get("deprecatedTopology")
    zone, node = endpoint.get("zone"), endpoint.get("nodeName")
    if old is None and zone is None and node is None:
        return out
    topology = dict(old) if isinstance(old, dict) else {}
    if zone is not None:
        topology[_ZONE] = zone
    if node is not None:
        topology.setdefault(_HOSTNAME, node)
    out["topology"] = topology
    return out


def convert_endpoint_slices(objects: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """EndpointSlices in ``version`` (``v1`` or ``v1beta1``), as upstream's conversions."""
    target = f"{GROUP}/{version}"
    step = _endpoint_to_v1 if version == "v1" else _endpoint_to_v1beta1
    out = []
    for obj in objects:
        if obj.get("apiVersion") == target:
            out.append(obj)
            continue
        converted = dict(obj)
        converted["apiVersion"] = target
        endpoints = obj.get("endpoints")
        if isinstance(endpoints, list):
            converted["endpoints"] = [step(e) if isinstance(e, dict) else e for e in endpoints]
        out.append(converted)
    return out
