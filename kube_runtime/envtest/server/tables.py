"""Server-side printing: ``meta.k8s.io/v1 Table`` responses for ``kubectl get``.

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints the cells the
server rendered; ``kubectl get -o wide`` also shows the columns with ``priority: 1``.
kube-apiserver always renders every column (its printers run with ``Wide: true``) and kubectl
hides the wide ones itself, so every row here carries all of its kind's cells.

The built-in kinds follow upstream's printers (``pkg/printers/internalversion/printers.go``)
of a current release decision by decision: column names, types (a column may be declared
``string`` while its cells are integers, as upstream does), formats, priorities and cell
contents. Custom resources get their CRD's ``additionalPrinterColumns`` (default: Name and
Age); other kinds the default convertor's Name and Created At.

Ages are measured from the server's time: :func:`table` takes ``now`` (the store's clock, so
that a cluster on a simulated clock prints virtual ages), else the real wall clock.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from decimal import ROUND_UP, Decimal, InvalidOperation
from typing import Any, NamedTuple

from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import Obj, parse_rfc3339
from kube_runtime.selectors import SelectorError, format_label_selector, label_selector_from_dict

#: The time the table being rendered on this thread measures ages from (None: the real clock).
_NOW: ContextVar[float | None] = ContextVar("table_now", default=None)


def _now(now: float | None) -> float:
    """``now``, else the time of the table being rendered, else the real wall clock."""
    if now is not None:
        return now
    rendering = _NOW.get()
    return time.time() if rendering is None else rendering


class Column(NamedTuple):
    """One ``TableColumnDefinition`` and how to render its cell from an object."""

    name: str
    type: str
    format: str
    priority: int
    cell: Callable[[Obj], Any]


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


# ------------------------------------------------------------------------------ helpers


def human_duration(seconds: float) -> str:
    """Upstream ``duration.HumanDuration``: ~2-3 significant figures (45s, 5m10s, 3h5m,
    2d4h, 1y30d...), ``"0s"`` for up to a second in the future, ``"<invalid>"`` beyond."""
    whole = int(seconds)  # Go's int(d.Seconds()) truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return _two_units(minutes, "m", whole % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        return _two_units(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return _two_units(days, "d", hours % 24, "h")
    if days < 365 * 2:
        return f"{days}d"
    if days < 365 * 8:
        return _two_units(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def _two_units(whole: int, unit: str, rest: int, rest_unit: str) -> str:
    """``"5m10s"``, or ``"5m"`` when the rest is zero (as upstream)."""
    return f"{whole}{unit}{rest}{rest_unit}" if rest else f"{whole}{unit}"


def human_age(timestamp: Any, now: float | None = None) -> str:
    """Upstream ``translateTimestampSince``: the age of an RFC 3339 timestamp ("<unknown>"
    when unset or unreadable)."""
    if not timestamp or not isinstance(timestamp, str):
        return "<unknown>"
    try:
        then = parse_rfc3339(timestamp)
    except (ValueError, TypeError):
        return "<unknown>"
    return human_duration(_now(now) - then)


def _get(obj: Any, *path: str) -> Any:
    cur = obj
    for p in path:
        cur = cur.get(p) if isinstance(cur, Mapping) else None
    return cur


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj.get("metadata") or {}
    return meta


def _name(obj: Obj) -> str:
    return _str(_meta(obj).get("name"))


def _age(obj: Obj) -> str:
    return human_age(_meta(obj).get("creationTimestamp"))


def format_labels(labels: Any) -> str:
    """Upstream ``labels.FormatLabels``: ``k=v`` sorted by key, ``"<none>"`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def _selector_string(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(s).String()`` ("" for nil or empty selectors,
    ``"<invalid>"`` when it does not convert), as the Deployment printer writes it."""
    try:
        return str(label_selector_from_dict(selector if isinstance(selector, Mapping) else None))
    except SelectorError:
        return "<invalid>"


def _formatted_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: ``"<none>"`` for nil or empty, ``"<error>"``."""
    return format_label_selector(selector if isinstance(selector, Mapping) else None)


def layout_containers(containers: Any) -> tuple[str, str]:
    """Upstream ``layoutContainerCells``: names and images joined by commas."""
    items = _list(containers)
    return (
        ",".join(_str(c.get("name")) for c in items),
        ",".join(_str(c.get("image")) for c in items),
    )


def _template_containers(obj: Obj) -> Any:
    return _get(obj, "spec", "template", "spec", "containers")


_QUANTITY_RE = re.compile(r"([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)")
_BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIXES.update({"P": 15, "E": 18})
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL_SUFFIXES.items()}


def canonical_quantity(value: Any) -> str:
    """``resource.Quantity.String()``: the canonical form of a quantity ("1024Mi" -> "1Gi",
    "1500m" -> "1500m", "0.5" -> "500m", "1000" -> "1k"), keeping its format (binary SI,
    decimal SI or decimal exponent) and rounding up to milli-units; ``""`` for no value and
    the text itself when it does not parse."""
    if value is None or value == "":
        return ""
    text = str(value).strip()
    match = _QUANTITY_RE.fullmatch(text)
    if match is None:
        return text
    number, suffix = match.group(1), match.group(2)
    try:
        if suffix in _BINARY_SUFFIXES:
            fmt, amount = "binary", Decimal(number) * (Decimal(1024) ** _BINARY_SUFFIXES[suffix])
        elif suffix in _DECIMAL_SUFFIXES:
            fmt, amount = "decimal", Decimal(number).scaleb(_DECIMAL_SUFFIXES[suffix])
        elif suffix[:1] in ("e", "E"):
            fmt, amount = "exponent", Decimal(number).scaleb(int(suffix[1:]))
        else:
            return text
    except (InvalidOperation, ValueError):
        return text
    if not amount.is_finite():
        return text
    milli = int((amount * 1000).to_integral_value(rounding=ROUND_UP))
    if fmt == "binary":
        if -1024 < amount < 1024 or milli % 1000:
            fmt = "decimal"
        else:
            whole, power = milli // 1000, 0
            while whole and whole % 1024 == 0 and power < 6:
                whole //= 1024
                power += 1
            return f"{whole}{['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][power]}"
    mantissa, exponent = milli, -3
    if mantissa == 0:
        return "0"
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == "exponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix_text = _DECIMAL_BY_EXPONENT.get(exponent)
    if suffix_text is None:
        return f"{mantissa}e{exponent}"
    return f"{mantissa}{suffix_text}"


NAME = Column("Name", "string", "name", 0, _name)
AGE = Column("Age", "string", "", 0, _age)


def _col(name: str, cell: Callable[[Obj], Any], type_: str = "string", priority: int = 0) -> Column:
    return Column(name, type_, "", priority, cell)


def _wide(name: str, cell: Callable[[Obj], Any]) -> Column:
    return Column(name, "string", "", 1, cell)


# ------------------------------------------------------------------------------ pods


def _restartable_init(container: Mapping[str, Any] | None) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always``."""
    return bool(container) and _get(container, "restartPolicy") == "Always"


class PodSummary(NamedTuple):
    ready: str
    status: str
    restarts: str


def _finished_at(status: Mapping[str, Any]) -> float | None:
    finished = _get(status, "lastState", "terminated", "finishedAt")
    if isinstance(finished, str) and finished:
        try:
            return parse_rfc3339(finished)
        except (ValueError, TypeError):
            return None
    return None


def _later(current: float | None, candidate: float | None) -> float | None:
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


def _terminated_reason(terminated: Mapping[str, Any], prefix: str = "") -> str:
    reason = _str(terminated.get("reason"))
    if reason:
        return prefix + reason
    signal = _int(terminated.get("signal"))
    if signal:
        return f"{prefix}Signal:{signal}"
    return f"{prefix}ExitCode:{_int(terminated.get('exitCode'))}"


def _condition_true(conditions: Any, type_: str) -> bool:
    return any(c.get("type") == type_ and c.get("status") == "True" for c in _list(conditions))


def pod_summary(pod: Obj, now: float | None = None) -> PodSummary:
    """Upstream ``printPod``'s Ready, Status and Restarts cells."""
    spec: Mapping[str, Any] = pod.get("spec") or {}
    status: Mapping[str, Any] = pod.get("status") or {}
    phase = _str(status.get("phase"))
    reason = _str(status.get("reason")) or phase
    for cond in _list(status.get("conditions")):
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_specs = {_str(c.get("name")): c for c in _list(spec.get("initContainers"))}
    total = len(_list(spec.get("containers"))) + sum(
        1 for c in init_specs.values() if _restartable_init(c)
    )
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: float | None = None
    last_sidecar_restart: float | None = None

    initializing = False
    init_statuses = _list(status.get("initContainerStatuses"))
    for i, cs in enumerate(init_statuses):
        restarts += _int(cs.get("restartCount"))
        finished = _finished_at(cs)
        last_restart = _later(last_restart, finished)
        sidecar = _restartable_init(init_specs.get(_str(cs.get("name"))))
        if sidecar:
            sidecar_restarts += _int(cs.get("restartCount"))
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        state: Mapping[str, Any] = cs.get("state") or {}
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        if isinstance(terminated, Mapping) and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if isinstance(terminated, Mapping):
            reason = _terminated_reason(terminated, "Init:")
        elif (
            isinstance(waiting, Mapping)
            and _str(waiting.get("reason"))
            and waiting.get("reason") != "PodInitializing"
        ):
            reason = "Init:" + _str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(_list(spec.get('initContainers')))}"
        initializing = True
        break

    if not initializing or _condition_true(status.get("conditions"), "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(_list(status.get("containerStatuses"))):
            restarts += _int(cs.get("restartCount"))
            last_restart = _later(last_restart, _finished_at(cs))
            state = cs.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, Mapping) and _str(waiting.get("reason")):
                reason = _str(waiting.get("reason"))
            elif isinstance(terminated, Mapping):
                reason = _terminated_reason(terminated)
            elif cs.get("ready") and isinstance(state.get("running"), Mapping):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status.get("conditions"), "Ready") else "NotReady"

    if _meta(pod).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        ago = human_duration(_now(now) - last_restart)
        restarts_text = f"{restarts} ({ago} ago)"
    return PodSummary(f"{ready}/{total}", reason, restarts_text)


def _pod_ip(pod: Obj) -> str:
    ips = _list(_get(pod, "status", "podIPs"))
    return _str(ips[0].get("ip")) if ips else ""


def _readiness_gates(pod: Obj) -> str:
    gates = _list(_get(pod, "spec", "readinessGates"))
    if not gates:
        return "<none>"
    conditions = _list(_get(pod, "status", "conditions"))
    true = 0
    for gate in gates:
        for cond in conditions:
            if cond.get("type") == gate.get("conditionType"):
                true += cond.get("status") == "True"
                break
    return f"{true}/{len(gates)}"


POD_COLUMNS = [
    NAME,
    _col("Ready", lambda o: pod_summary(o).ready),
    _col("Status", lambda o: pod_summary(o).status),
    _col("Restarts", lambda o: pod_summary(o).restarts),
    AGE,
    _wide("IP", lambda o: _pod_ip(o) or "<none>"),
    _wide("Node", lambda o: _str(_get(o, "spec", "nodeName")) or "<none>"),
    _wide("Nominated Node", lambda o: _str(_get(o, "status", "nominatedNodeName")) or "<none>"),
    _wide("Readiness Gates", _readiness_gates),
]

_POD_ROW_CONDITIONS = {
    "Succeeded": "The pod has completed successfully.",
    "Failed": "The pod failed.",
}


def _pod_row_conditions(pod: Obj) -> list[Obj] | None:
    phase = _get(pod, "status", "phase")
    message = _POD_ROW_CONDITIONS.get(phase) if isinstance(phase, str) else None
    if message is None:
        return None
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


# ------------------------------------------------------------------------------ workloads


def _replicas_ready(obj: Obj) -> str:
    ready = _int(_get(obj, "status", "readyReplicas"))
    return f"{ready}/{_int(_get(obj, 'spec', 'replicas'))}"


#: The wide columns of a workload's pod template: its containers' names and images.
_TEMPLATE_CONTAINER_COLUMNS = (
    _wide("Containers", lambda o: layout_containers(_template_containers(o))[0]),
    _wide("Images", lambda o: layout_containers(_template_containers(o))[1]),
)

DEPLOYMENT_COLUMNS = [
    NAME,
    _col("Ready", _replicas_ready),
    _col("Up-to-date", lambda o: _int(_get(o, "status", "updatedReplicas"))),
    _col("Available", lambda o: _int(_get(o, "status", "availableReplicas"))),
    AGE,
    *_TEMPLATE_CONTAINER_COLUMNS,
    _wide("Selector", lambda o: _selector_string(_get(o, "spec", "selector"))),
]

REPLICASET_COLUMNS = [
    NAME,
    _col("Desired", lambda o: _int(_get(o, "spec", "replicas")), "integer"),
    _col("Current", lambda o: _int(_get(o, "status", "replicas")), "integer"),
    _col("Ready", lambda o: _int(_get(o, "status", "readyReplicas")), "integer"),
    AGE,
    *_TEMPLATE_CONTAINER_COLUMNS,
    _wide("Selector", lambda o: _formatted_selector(_get(o, "spec", "selector"))),
]

STATEFULSET_COLUMNS = [
    NAME,
    _col("Ready", _replicas_ready),
    AGE,
    *_TEMPLATE_CONTAINER_COLUMNS,
]


def _controller_of(obj: Obj) -> str:
    """``metav1.GetControllerOf`` as ``kind.group/name`` (lower-cased group kind)."""
    for ref in _list(_meta(obj).get("ownerReferences")):
        if ref.get("controller") is not True:
            continue
        api_version = _str(ref.get("apiVersion"))
        group = api_version.split("/")[0] if "/" in api_version else ""
        kind = _str(ref.get("kind"))
        if not kind and not group:
            return _str(ref.get("name"))
        group_kind = f"{kind}.{group}" if group else kind
        return f"{group_kind.lower()}/{_str(ref.get('name'))}"
    return "<none>"


CONTROLLERREVISION_COLUMNS = [
    NAME,
    _col("Controller", _controller_of),
    _col("Revision", lambda o: _int(o.get("revision"))),
    AGE,
]


# ------------------------------------------------------------------------------ core kinds


def _node_status(node: Obj) -> str:
    states = [
        "Ready" if c.get("status") == "True" else "NotReady"
        for c in _list(_get(node, "status", "conditions"))
        if c.get("type") == "Ready"
    ][-1:] or ["Unknown"]
    if _get(node, "spec", "unschedulable") is True:
        states.append("SchedulingDisabled")
    return ",".join(states)


def _node_roles(node: Obj) -> str:
    roles: set[str] = set()
    for key, value in (_meta(node).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or "<none>"


def _node_address(node: Obj, type_: str) -> str:
    for address in _list(_get(node, "status", "addresses")):
        if address.get("type") == type_:
            return _str(address.get("address"))
    return "<none>"


def _node_info(field: str) -> Callable[[Obj], str]:
    return lambda o: _str(_get(o, "status", "nodeInfo", field)) or "<unknown>"


NODE_COLUMNS = [
    NAME,
    _col("Status", _node_status),
    _col("Roles", _node_roles),
    AGE,
    _col("Version", lambda o: _str(_get(o, "status", "nodeInfo", "kubeletVersion"))),
    _wide("Internal-IP", lambda o: _node_address(o, "InternalIP")),
    _wide("External-IP", lambda o: _node_address(o, "ExternalIP")),
    _wide("OS-Image", _node_info("osImage")),
    _wide("Kernel-Version", _node_info("kernelVersion")),
    _wide("Container-Runtime", _node_info("containerRuntimeVersion")),
]

_ACCESS_MODE_ABBREVIATIONS = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes(modes: Any) -> str:
    """Upstream ``GetAccessModesAsString``: always in the order RWO,ROX,RWX,RWOP."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _ACCESS_MODE_ABBREVIATIONS if mode in present)


def _claim_phase(claim: Obj) -> str:
    if _meta(claim).get("deletionTimestamp"):
        return "Terminating"
    return _str(_get(claim, "status", "phase"))


def _claim_bound(claim: Obj) -> bool:
    return bool(_str(_get(claim, "spec", "volumeName")))


def _claim_class(claim: Obj) -> str:
    annotations = _meta(claim).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in annotations:
        return _str(annotations["volume.beta.kubernetes.io/storage-class"])
    return _str(_get(claim, "spec", "storageClassName"))


PVC_COLUMNS = [
    NAME,
    _col("Status", _claim_phase),
    _col("Volume", lambda o: _str(_get(o, "spec", "volumeName"))),
    _col(
        "Capacity",
        lambda o: (
            canonical_quantity(_get(o, "status", "capacity", "storage") or "0")
            if _claim_bound(o)
            else ""
        ),
    ),
    _col(
        "Access Modes",
        lambda o: access_modes(_get(o, "status", "accessModes")) if _claim_bound(o) else "",
    ),
    _col("StorageClass", _claim_class),
    _col(
        "VolumeAttributesClass",
        lambda o: _str(_get(o, "spec", "volumeAttributesClassName")) or "<unset>",
    ),
    AGE,
    _wide("VolumeMode", lambda o: _str(_get(o, "spec", "volumeMode")) or "<unset>"),
]


def _event_first_seen(event: Obj) -> str:
    if event.get("firstTimestamp"):
        return human_age(event.get("firstTimestamp"))
    return human_age(event.get("eventTime"))


def _event_last_seen(event: Obj) -> str:
    series = event.get("series")
    if isinstance(series, Mapping):
        return human_age(series.get("lastObservedTime"))
    if event.get("lastTimestamp"):
        return human_age(event.get("lastTimestamp"))
    return _event_first_seen(event)


def _event_count(event: Obj) -> int:
    series = event.get("series")
    if isinstance(series, Mapping):
        return _int(series.get("count"))
    return _int(event.get("count")) or 1


def _event_object(event: Obj) -> str:
    kind = _str(_get(event, "involvedObject", "kind")).lower()
    name = _str(_get(event, "involvedObject", "name"))
    return f"{kind}/{name}" if name else kind


def _event_source(event: Obj) -> str:
    component = _str(_get(event, "source", "component")) or _str(event.get("reportingComponent"))
    instance = _str(_get(event, "source", "host")) or _str(event.get("reportingInstance"))
    return f"{component}, {instance}" if instance else component


EVENT_COLUMNS = [
    _col("Last Seen", _event_last_seen),
    _col("Type", lambda o: _str(o.get("type"))),
    _col("Reason", lambda o: _str(o.get("reason"))),
    _col("Object", _event_object),
    _wide("Subobject", lambda o: _str(_get(o, "involvedObject", "fieldPath"))),
    _wide("Source", _event_source),
    _col("Message", lambda o: _str(o.get("message")).strip()),
    _wide("First Seen", _event_first_seen),
    _wide("Count", _event_count),
    Column("Name", "string", "name", 1, _name),
]


def _load_balancer_ingress(svc: Obj) -> list[str]:
    found = set()
    for ingress in _list(_get(svc, "status", "loadBalancer", "ingress")):
        if _str(ingress.get("ip")):
            found.add(_str(ingress.get("ip")))
        elif _str(ingress.get("hostname")):
            found.add(_str(ingress.get("hostname")))
    return sorted(found)


def service_external_ip(svc: Obj) -> str:
    """Upstream ``getServiceExternalIP`` for wide output (never clipped)."""
    type_ = _get(svc, "spec", "type")
    external = [_str(ip) for ip in _get(svc, "spec", "externalIPs") or [] if ip]
    if type_ in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if type_ == "LoadBalancer":
        lb = _load_balancer_ingress(svc)
        if external:
            return ",".join(lb + external)
        return ",".join(lb) or "<pending>"
    if type_ == "ExternalName":
        return _str(_get(svc, "spec", "externalName"))
    return "<unknown>"


def service_ports(svc: Obj) -> str:
    """Upstream ``makePortString``: ``port/protocol`` or ``port:nodePort/protocol``."""
    pieces = []
    for port in _list(_get(svc, "spec", "ports")):
        protocol = _str(port.get("protocol"))
        node_port = _int(port.get("nodePort"))
        if node_port > 0:
            pieces.append(f"{_int(port.get('port'))}:{node_port}/{protocol}")
        else:
            pieces.append(f"{_int(port.get('port'))}/{protocol}")
    return ",".join(pieces) or "<none>"


def _cluster_ip(svc: Obj) -> str:
    ips = _get(svc, "spec", "clusterIPs")
    return _str(ips[0]) if isinstance(ips, list) and ips else "<none>"


SERVICE_COLUMNS = [
    NAME,
    _col("Type", lambda o: _str(_get(o, "spec", "type"))),
    _col("Cluster-IP", _cluster_ip),
    _col("External-IP", service_external_ip),
    _col("Port(s)", service_ports),
    AGE,
    _wide("Selector", lambda o: format_labels(_get(o, "spec", "selector"))),
]


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def format_endpoints(endpoints: Obj, limit: int = 3) -> str:
    """Upstream ``formatEndpoints``: up to three ``ip:port`` (``ip`` for subsets without
    ports), then ``" + N more..."``; ``"<none>"`` without subsets."""
    subsets = _list(endpoints.get("subsets"))
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    more = False
    for subset in subsets:
        addresses = _list(subset.get("addresses"))
        ports = _list(subset.get("ports"))
        if not ports:
            count += len(addresses)
            for address in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_str(address.get("ip")))
            continue
        for port in ports:
            count += len(addresses)
            for address in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_join_host_port(_str(address.get("ip")), _int(port.get("port"))))
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if more else text


def _count(field: str) -> Callable[[Obj], int]:
    def cell(obj: Obj) -> int:
        value = obj.get(field)
        return len(value) if isinstance(value, (dict, list)) else 0

    return cell


BUILTIN_COLUMNS: dict[tuple[str, str], list[Column]] = {
    ("", "pods"): POD_COLUMNS,
    ("apps", "deployments"): DEPLOYMENT_COLUMNS,
    ("apps", "replicasets"): REPLICASET_COLUMNS,
    ("apps", "statefulsets"): STATEFULSET_COLUMNS,
    ("apps", "controllerrevisions"): CONTROLLERREVISION_COLUMNS,
    ("", "namespaces"): [NAME, _col("Status", lambda o: _str(_get(o, "status", "phase"))), AGE],
    ("", "nodes"): NODE_COLUMNS,
    ("", "persistentvolumeclaims"): PVC_COLUMNS,
    ("", "events"): EVENT_COLUMNS,
    ("", "services"): SERVICE_COLUMNS,
    ("", "endpoints"): [NAME, _col("Endpoints", format_endpoints), AGE],
    ("", "configmaps"): [
        NAME,
        _col("Data", lambda o: _count("data")(o) + _count("binaryData")(o)),
        AGE,
    ],
    ("", "secrets"): [
        NAME,
        _col("Type", lambda o: _str(o.get("type"))),
        _col("Data", _count("data")),
        AGE,
    ],
    ("", "serviceaccounts"): [NAME, _col("Secrets", _count("secrets")), AGE],
    ("coordination.k8s.io", "leases"): [
        NAME,
        _col("Holder", lambda o: _str(_get(o, "spec", "holderIdentity"))),
        AGE,
    ],
    # upstream printWebhookConfiguration: the number of webhooks
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): [
        NAME,
        _col("Webhooks", _count("webhooks"), "integer"),
        AGE,
    ],
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): [
        NAME,
        _col("Webhooks", _count("webhooks"), "integer"),
        AGE,
    ],
}

#: The default table convertor's columns (kinds without a printer, CRDs included).
DEFAULT_COLUMNS: list[Column] = [
    NAME,
    Column("Created At", "date", "", 0, lambda o: _str(_meta(o).get("creationTimestamp"))),
]


_MISSING: Any = object()


@functools.lru_cache(maxsize=512)
def _compiled_path(path: str) -> Any:
    """A printer column's ``jsonPath`` as kubectl's dialect reads it (``{...}`` optional, a
    leading ``.`` for the root), compiled by jsonpath-ng's extended parser (filters
    ``[?(@.type=="Ready")]``, wildcards ``[*]``, slices, recursive descent); None when it
    does not parse (the column is then empty, as upstream's default convertor)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if not text.startswith("$"):
        text = "$" + (text if text.startswith((".", "[")) else "." + text)
    # Imported here: ~12 ms of CPU, paid only by a server that renders a custom printer column.
    from jsonpath_ng import ext as jsonpath_ext

    try:
        return jsonpath_ext.parse(text)
    except Exception:  # jsonpath-ng raises several exception types for bad paths
        return None


def _json_path(obj: Obj, path: str) -> Any:
    """The first value ``path`` finds in ``obj`` (upstream's table convertor takes the first
    result), or :data:`_MISSING`."""
    compiled = _compiled_path(path)
    if compiled is None:
        return _MISSING
    try:
        found = compiled.find(obj)
    except Exception:  # a filter comparing values of different types, ...
        return _MISSING
    return found[0].value if found else _MISSING


def _go_text(value: Any) -> str:
    """A value as client-go's JSONPath printer writes it: strings raw, booleans and numbers
    as Go prints them, objects and lists as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _typed_cell(column_type: str, value: Any) -> Any:
    """Upstream ``cellForJSONValue``: the value when it fits the column's type, else None."""
    if value is None or value is _MISSING:
        return None
    if column_type == "string":
        return _go_text(value)
    if column_type == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if column_type == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if column_type == "boolean" and isinstance(value, bool):
        return value
    if column_type == "date" and isinstance(value, str):
        age = human_age(value)
        return age if age != "<unknown>" else "<invalid>"
    return None


def _custom_columns(info: ResourceInfo) -> list[Column]:
    cols: list[Column] = [NAME]
    for spec in info.printer_columns:
        path = str(spec.get("jsonPath", ""))
        priority = spec.get("priority")
        prio = priority if isinstance(priority, int) and not isinstance(priority, bool) else 0
        if path == ".metadata.creationTimestamp" and spec.get("type") == "date":
            cols.append(Column(str(spec.get("name", "Age")), "string", "", prio, _age))
            continue
        cols.append(
            Column(
                str(spec.get("name", "")),
                str(spec.get("type", "string")),
                str(spec.get("format", "")),
                prio,
                _path_cell(path, str(spec.get("type", "string"))),
            )
        )
    if not info.printer_columns:
        cols.append(AGE)
    return cols


def _path_cell(path: str, column_type: str) -> Callable[[Obj], Any]:
    def cell(obj: Obj) -> Any:
        return _typed_cell(column_type, _json_path(obj, path))

    return cell


def columns_for(info: ResourceInfo) -> list[Column]:
    if info.custom:
        return _custom_columns(info)
    from kube_runtime.envtest.server.builtin_groups import COLUMNS  # imports this module

    return BUILTIN_COLUMNS.get(info.key) or COLUMNS.get(info.key, DEFAULT_COLUMNS)


def _row_conditions(info: ResourceInfo, obj: Obj) -> list[Obj] | None:
    if info.key == ("", "pods"):
        return _pod_row_conditions(obj)
    return None


def table(
    info: ResourceInfo,
    objects: list[Obj],
    resource_version: str,
    include_object: str | None,
    served: Callable[[list[Obj]], list[Obj]] | None = None,
    *,
    now: float | None = None,
) -> dict[str, Any]:
    """The ``Table`` of ``objects`` (stored form: the printers read it); with
    ``includeObject=Object`` each row carries its object as ``served`` gives it (in the
    requested version; default: as stored). Ages are measured from ``now`` (epoch seconds;
    None: the real wall clock)."""
    token = _NOW.set(now)
    try:
        return _table(info, objects, resource_version, include_object, served)
    finally:
        _NOW.reset(token)


def _table(
    info: ResourceInfo,
    objects: list[Obj],
    resource_version: str,
    include_object: str | None,
    served: Callable[[list[Obj]], list[Obj]] | None,
) -> dict[str, Any]:
    cols = columns_for(info)
    if len(objects) > 1 and not info.custom:
        from kube_runtime.envtest.server.builtin_groups import ROW_ORDER  # imports this module

        order = ROW_ORDER.get(info.key)
        if order is not None:
            objects = sorted(objects, key=order)
    shown = served(objects) if served is not None and include_object == "Object" else objects
    rows = []
    for obj, shown_obj in zip(objects, shown, strict=True):
        row: dict[str, Any] = {"cells": [col.cell(obj) for col in cols]}
        conditions = None if info.custom else _row_conditions(info, obj)
        if conditions:
            row["conditions"] = conditions
        if include_object == "Object":
            row["object"] = shown_obj
        elif include_object == "None":
            row["object"] = None  # an empty RawExtension, which Go writes as null
        else:
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": _meta(obj),
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {
                "name": col.name,
                "type": col.type,
                "format": col.format,
                "description": "",
                "priority": col.priority,
            }
            for col in cols
        ],
        "rows": rows,
    }
