"""Server-side defaulting of built-in objects, as kube-apiserver does it on create and update.

Contract
--------
``apply_defaults(group, kind, obj)`` mutates ``obj`` (a decoded JSON object, which the server
owns) in place so that what the embedded server stores matches what a real kube-apiserver
(1.31 and later, GA feature defaults only) would store after running the ``SetDefaults_*``
functions and the generated ``SetObjectDefaults_*`` walkers for that type:

* Only unset fields are filled. "Unset" follows the Go type of the field: a pointer or a
  struct pointer is unset when absent or ``null``; a plain string when absent, ``null`` or
  ``""``; a plain integer when absent, ``null`` or ``0``; a list when absent, ``null`` or
  empty. Explicit values are kept, except where upstream itself overwrites (listed below).
* Defaulting is idempotent: a second call changes nothing.
* An unknown ``(group, kind)`` (custom resources, kinds without upstream defaults such as
  ConfigMap, Event, ServiceAccount, ControllerRevision and coordination.k8s.io Lease) is a
  no-op. The core group is ``""``.
* Malformed parts (a field holding the wrong JSON type) are left alone rather than raising;
  validation reports them later.
* Nothing is deep-copied: defaults are immutable scalars or freshly built containers, and the
  values copied from elsewhere in the object (quantities, label maps) are copied shallowly.

Covered: core Pod, PodTemplate, ReplicationController, Service, Namespace, Secret,
PersistentVolumeClaim, PersistentVolume, Node, Endpoints, LimitRange; apps Deployment,
ReplicaSet, StatefulSet, DaemonSet; batch Job, CronJob; HorizontalPodAutoscaler;
RoleBinding, ClusterRoleBinding; NetworkPolicy, IngressClass; StorageClass, CSIDriver;
PriorityClass; EndpointSlice; CustomResourceDefinition (the ``builtin_<group>`` modules
provide some of them). Every
embedded pod template gets the PodSpec defaults; the Pod-only ones (``enableServiceLinks``,
requests copied from limits, host ports under ``hostNetwork``) stay out of templates, as
upstream keeps them out. Defaults of gates that went GA are applied unconditionally
(StatefulSet PVC retention policy, Job ``podReplacementPolicy`` and ``backoffLimitPerIndex``).

Where upstream overwrites an explicit value, so does this module:

* Namespace: label ``kubernetes.io/metadata.name`` is always set to ``metadata.name`` (when the
  name is known, so call this after ``generateName`` has been resolved).
* Service: ``sessionAffinityConfig`` is dropped when ``sessionAffinity`` is ``None``, and
  replaced with a 10800s ClientIP timeout when ClientIP affinity lacks a timeout.
* StatefulSet: every ``volumeClaimTemplates`` item reads back with ``apiVersion: v1`` and
  ``kind: PersistentVolumeClaim`` (the apps/v1 conversion sets them on output).
* Pod specs: ``serviceAccount`` is the deprecated alias of ``serviceAccountName`` and always
  reads back equal to it (``serviceAccountName`` wins; it is filled from the alias when empty).

Not done here, on purpose:

* Registry strategy work that only happens on create: a Pod's ``status`` becoming
  ``{phase: Pending, qosClass: ...}`` is the server's job; so are Job selector/label generation,
  Service ClusterIP/``ipFamilies``/``ipFamilyPolicy``/NodePort allocation. Namespace's
  create-only step (``spec.finalizers`` gaining ``kubernetes``, status reset to ``Active``) is
  provided separately by :func:`prepare_for_create`; it must not run on update, because the
  finalizer is removed over the namespace's life.
* Admission plugins: ``serviceAccountName: default``, ``priority``/``preemptionPolicy`` on Pods,
  default tolerations, LimitRanger requests.
* Quantity canonicalisation (``"0.5"`` -> ``"500m"``, rounding to milli-units) and Go encoding
  artefacts such as ``resources: {}``, ``creationTimestamp: null`` or ``divisor: "0"``.
* Defaults behind gates that are not GA: pod-level resources, image volumes' pull policy,
  StatefulSet ``maxUnavailable``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any, TypeAlias

from kube_runtime.envtest.server import (
    builtin_autoscaling,
    builtin_core,
    builtin_discovery,
    builtin_storage,
    webhookconfig,
)

JSONDict: TypeAlias = dict[str, Any]
_Defaulter: TypeAlias = Callable[[JSONDict], None]

__all__ = ["apply_defaults", "prepare_for_create"]


def apply_defaults(group: str, kind: str, obj: dict[str, Any]) -> None:
    """Fill in the server-side defaults for one object of ``group``/``kind``, in place.

    Unknown ``(group, kind)`` pairs are left untouched. See the module docstring for the rules.
    """
    defaulter = _DEFAULTERS.get((group, kind))
    if defaulter is not None:
        defaulter(obj)


def prepare_for_create(group: str, kind: str, obj: dict[str, Any]) -> None:
    """Apply the create-only mutations upstream's registry strategies make and defaulting cannot.

    Currently Namespace only: its status becomes ``{phase: Active}`` and ``spec.finalizers``
    gains ``kubernetes``. Call on create only, never on update. Anything else is a no-op.
    """
    if group == "" and kind == "Namespace":
        obj["status"] = {"phase": "Active"}
        spec = _obj(obj, "spec")
        if spec is None:
            return
        finalizers = spec.get("finalizers")
        if not finalizers and (finalizers is None or isinstance(finalizers, list)):
            spec["finalizers"] = ["kubernetes"]
        elif isinstance(finalizers, list) and "kubernetes" not in finalizers:
            finalizers.append("kubernetes")


# --------------------------------------------------------------------------------------------
# Walking helpers


def _obj(parent: JSONDict, key: str) -> JSONDict | None:
    """A struct-valued field that Go never leaves nil: created when absent, None if malformed."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
        return value
    return value if isinstance(value, dict) else None


def _on_spec(default_spec: Callable[[JSONDict], None]) -> Callable[[JSONDict], None]:
    """A defaulter of a kind whose defaults all live under ``spec``, from one of the spec: an
    object without a ``spec`` object is left as it is."""

    def default(obj: JSONDict) -> None:
        spec = _obj(obj, "spec")
        if spec is not None:
            default_spec(spec)

    return default


def _sub(parent: JSONDict | None, key: str) -> JSONDict | None:
    """An optional struct-valued field: the dict when present, else None (never created)."""
    if parent is None:
        return None
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _items(parent: JSONDict | None, key: str) -> Iterator[JSONDict]:
    """The object items of a list-valued field (non-object items are skipped)."""
    if parent is None:
        return
    value = parent.get(key)
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _labels(meta_holder: JSONDict | None) -> JSONDict | None:
    """``metadata.labels`` of an object or template when it is a non-empty map."""
    labels = _sub(_sub(meta_holder, "metadata"), "labels")
    return labels if labels else None


def _fill_nil(obj: JSONDict, defaults: Mapping[str, Any]) -> None:
    """Default Go pointer fields: each key absent or ``null`` gets its value, in order."""
    for key, value in defaults.items():
        if obj.get(key) is None:
            obj[key] = value


def _fill_zero(obj: JSONDict, defaults: Mapping[str, Any]) -> None:
    """Default Go value fields: each key absent, ``null`` or zero (``""``, ``0``) gets its value."""
    for key, value in defaults.items():
        if not obj.get(key):
            obj[key] = value


# --------------------------------------------------------------------------------------------
# Image references (imagePullPolicy)
#
# The pull policy depends on the tag the docker reference grammar finds: "latest" (explicit, or
# implied by a reference with neither tag nor digest) means Always; anything else, including a
# reference that does not parse, means IfNotPresent.

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"((?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::([\w][\w.-]{0,127}))?"
    r"(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?",
    re.ASCII,
)
_BARE_IDENTIFIER = re.compile(r"[a-f0-9]{64}")
_LOWER_HEX = re.compile(r"[a-f0-9]+")
_DIGEST_HEX_LENGTH = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_MAX_LENGTH = 255
_DEFAULT_DOMAIN = "docker.io"


def _split_domain(name: str) -> tuple[str, str]:
    first, sep, rest = name.partition("/")
    if not sep:
        return _DEFAULT_DOMAIN, "library/" + name
    if first == "localhost" or "." in first or ":" in first or first.lower() != first:
        domain, remainder = first, rest
    elif first == "index.docker.io":
        domain, remainder = _DEFAULT_DOMAIN, rest
    else:
        domain, remainder = _DEFAULT_DOMAIN, name
    if domain == _DEFAULT_DOMAIN and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


def _image_tag(image: str) -> str | None:
    """The tag of a normalised docker reference.

    "latest" when neither tag nor digest is given; None when only a digest is given or the
    reference does not parse.
    """
    if _BARE_IDENTIFIER.fullmatch(image):
        return None
    domain, remainder = _split_domain(image)
    repository = remainder.partition(":")[0]
    if repository.lower() != repository:
        return None
    match = _REFERENCE.fullmatch(f"{domain}/{remainder}")
    if match is None or len(match.group(1)) > _NAME_MAX_LENGTH:
        return None
    tag, digest = match.group(2), match.group(3)
    if digest is not None:
        algorithm, _, encoded = digest.partition(":")
        if len(encoded) != _DIGEST_HEX_LENGTH.get(algorithm, -1) or not _LOWER_HEX.fullmatch(
            encoded
        ):
            return None
    if tag is None:
        return None if digest is not None else "latest"
    return tag


@lru_cache(maxsize=4096)
def _pull_policy(image: str) -> str:
    return "Always" if _image_tag(image) == "latest" else "IfNotPresent"


# --------------------------------------------------------------------------------------------
# Pod spec pieces (core/v1)


def _default_field_ref(field_ref: JSONDict) -> None:
    if not field_ref.get("apiVersion"):
        field_ref["apiVersion"] = "v1"


# Probes are defaulted for every container of every pod written: plain ifs, no helper call.
def _default_http_get(action: JSONDict) -> None:
    if not action.get("path"):
        action["path"] = "/"
    if not action.get("scheme"):
        action["scheme"] = "HTTP"


def _default_probe(probe: JSONDict) -> None:
    get = probe.get
    if not get("timeoutSeconds"):
        probe["timeoutSeconds"] = 1
    if not get("periodSeconds"):
        probe["periodSeconds"] = 10
    if not get("successThreshold"):
        probe["successThreshold"] = 1
    if not get("failureThreshold"):
        probe["failureThreshold"] = 3
    http_get = get("httpGet")
    if isinstance(http_get, dict):
        _default_http_get(http_get)
    grpc = get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_HOOKS = ("postStart", "preStop")


def _default_container(container: JSONDict) -> None:
    # The hot path of every pod write: plain dict access instead of the walking helpers.
    get = container.get
    if not get("imagePullPolicy"):
        image = get("image")
        container["imagePullPolicy"] = _pull_policy(image if isinstance(image, str) else "")
    if not get("terminationMessagePath"):
        container["terminationMessagePath"] = "/dev/termination-log"
    if not get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    ports = get("ports")
    if isinstance(ports, list):
        for port in ports:
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"
    env = get("env")
    if isinstance(env, list):
        for var in env:
            if isinstance(var, dict):
                value_from = var.get("valueFrom")
                if isinstance(value_from, dict):
                    field_ref = value_from.get("fieldRef")
                    if isinstance(field_ref, dict):
                        _default_field_ref(field_ref)
    for key in _PROBES:
        probe = get(key)
        if isinstance(probe, dict):
            _default_probe(probe)
    lifecycle = get("lifecycle")
    if isinstance(lifecycle, dict):
        for key in _HOOKS:
            http_get = _sub(_sub(lifecycle, key), "httpGet")
            if http_get is not None:
                _default_http_get(http_get)


def _default_mode(source: JSONDict) -> None:
    if source.get("defaultMode") is None:
        source["defaultMode"] = 0o644


def _default_downward_api(source: JSONDict) -> None:
    _default_mode(source)
    for item in _items(source, "items"):
        field_ref = _sub(item, "fieldRef")
        if field_ref is not None:
            _default_field_ref(field_ref)


def _default_projected(source: JSONDict) -> None:
    _default_mode(source)
    for projection in _items(source, "sources"):
        for item in _items(_sub(projection, "downwardAPI"), "items"):
            field_ref = _sub(item, "fieldRef")
            if field_ref is not None:
                _default_field_ref(field_ref)
        token = _sub(projection, "serviceAccountToken")
        if token is not None and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600


def _default_host_path(source: JSONDict) -> None:
    if source.get("type") is None:
        source["type"] = ""


def _default_iscsi(source: JSONDict) -> None:
    if not source.get("iscsiInterface"):
        source["iscsiInterface"] = "default"


def _default_rbd(source: JSONDict) -> None:
    _fill_zero(source, {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"})


def _default_azure_disk(source: JSONDict) -> None:
    _fill_nil(
        source, {"cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"}
    )


def _default_scale_io(source: JSONDict) -> None:
    _fill_zero(source, {"storageMode": "ThinProvisioned", "fsType": "xfs"})


def _default_pvc_spec(spec: JSONDict) -> None:
    _fill_nil(spec, {"volumeMode": "Filesystem"})


_default_claim_template = _on_spec(_default_pvc_spec)


def _default_ephemeral(source: JSONDict) -> None:
    template = _sub(source, "volumeClaimTemplate")
    if template is not None:
        _default_claim_template(template)


def _noop(_: JSONDict) -> None:
    return None


# Every volume source a Volume can carry, with the defaulting each one gets.
_VOLUME_SOURCES: dict[str, _Defaulter] = {
    "hostPath": _default_host_path,
    "emptyDir": _noop,
    "gcePersistentDisk": _noop,
    "awsElasticBlockStore": _noop,
    "gitRepo": _noop,
    "secret": _default_mode,
    "nfs": _noop,
    "iscsi": _default_iscsi,
    "glusterfs": _noop,
    "persistentVolumeClaim": _noop,
    "rbd": _default_rbd,
    "flexVolume": _noop,
    "cinder": _noop,
    "cephfs": _noop,
    "flocker": _noop,
    "downwardAPI": _default_downward_api,
    "fc": _noop,
    "azureFile": _noop,
    "configMap": _default_mode,
    "vsphereVolume": _noop,
    "quobyte": _noop,
    "azureDisk": _default_azure_disk,
    "photonPersistentDisk": _noop,
    "projected": _default_projected,
    "portworxVolume": _noop,
    "scaleIO": _default_scale_io,
    "storageos": _noop,
    "csi": _noop,
    "ephemeral": _default_ephemeral,
    "image": _noop,
}


def _default_volume(volume: JSONDict) -> None:
    has_source = False
    for key, source in volume.items():
        if source is None:
            continue
        defaulter = _VOLUME_SOURCES.get(key)
        if defaulter is None:
            continue
        has_source = True
        if isinstance(source, dict):
            defaulter(source)
    if not has_source:
        volume["emptyDir"] = {}


_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _default_pod_spec(spec: JSONDict) -> None:
    """What every PodSpec gets, in Pods and in templates alike."""
    get = spec.get
    if not get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if get("securityContext") is None:
        spec["securityContext"] = {}
    if get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    account = get("serviceAccountName") or get("serviceAccount")
    if account:
        spec["serviceAccountName"] = account
        spec["serviceAccount"] = account
    volumes = get("volumes")
    if isinstance(volumes, list):
        for volume in volumes:
            if isinstance(volume, dict):
                _default_volume(volume)
    for key in _CONTAINER_LISTS:
        containers = get(key)
        if isinstance(containers, list):
            for container in containers:
                if isinstance(container, dict):
                    _default_container(container)


_default_pod_template_spec = _on_spec(_default_pod_spec)
"""Defaults a PodTemplateSpec (its ``spec``, a PodSpec)."""


def _default_template(holder: JSONDict | None) -> None:
    """The PodSpec inside ``holder.template`` (a PodTemplateSpec, never nil in Go)."""
    if holder is None:
        return
    template = _obj(holder, "template")
    if template is not None:
        _default_pod_template_spec(template)


def _requests_from_limits(container: JSONDict) -> None:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return
    limits = resources.get("limits")
    if not limits or not isinstance(limits, dict):
        return
    requests = resources.get("requests")
    if requests is None:
        requests = resources["requests"] = {}
    elif not isinstance(requests, dict):
        return
    for name, quantity in limits.items():
        if name not in requests:
            requests[name] = quantity


@_on_spec
def _default_pod(spec: JSONDict) -> None:
    host_network = spec.get("hostNetwork") is True
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        for container in containers:
            if not isinstance(container, dict):
                continue
            _requests_from_limits(container)
            if host_network:
                for port in _items(container, "ports"):
                    container_port = port.get("containerPort")
                    if not port.get("hostPort") and container_port:
                        port["hostPort"] = container_port
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    _default_pod_spec(spec)


def _default_pod_template(obj: JSONDict) -> None:
    _default_template(obj)


def _default_replication_controller(rc: JSONDict) -> None:
    spec = _obj(rc, "spec")
    if spec is None:
        return
    template = _sub(spec, "template")
    labels = _labels(template)
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        metadata = _obj(rc, "metadata")
        if metadata is not None and not metadata.get("labels"):
            metadata["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if template is not None:
        _default_template(spec)


# --------------------------------------------------------------------------------------------
# Other core/v1 kinds


def _default_service(service: JSONDict) -> None:
    spec = _obj(service, "spec")
    if spec is None:
        return
    _fill_zero(spec, {"sessionAffinity": "None"})
    affinity = spec["sessionAffinity"]
    if affinity == "None":
        spec.pop("sessionAffinityConfig", None)
    elif affinity == "ClientIP":
        client_ip = _sub(_sub(spec, "sessionAffinityConfig"), "clientIP")
        if client_ip is None or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    service_type = spec["type"]
    for port in _items(spec, "ports"):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        target = port.get("targetPort")
        if target is None or target == 0 or target == "":
            port["targetPort"] = port.get("port", 0)
    externally_accessible = service_type in ("LoadBalancer", "NodePort") or (
        service_type == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if externally_accessible and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and service_type in (
        "ClusterIP",
        "NodePort",
        "LoadBalancer",
    ):
        spec["internalTrafficPolicy"] = "Cluster"
    if service_type == "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        load_balancer = _sub(_sub(service, "status"), "loadBalancer")
        for ingress in _items(load_balancer, "ingress"):
            if ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"


def _default_namespace(namespace: JSONDict) -> None:
    metadata = _sub(namespace, "metadata")
    name = metadata.get("name") if metadata is not None else None
    if metadata is not None and isinstance(name, str) and name:
        labels = metadata.get("labels")
        if labels is None:
            labels = metadata["labels"] = {}
        if isinstance(labels, dict):
            labels["kubernetes.io/metadata.name"] = name
    status = _obj(namespace, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Active"


def _default_secret(secret: JSONDict) -> None:
    # kube-apiserver's v1 -> internal conversion: each stringData entry is written into data
    # (base64, overriding a key of the same name) and stringData is never stored.
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = secret.get("data")
        merged = dict(data) if isinstance(data, dict) else {}
        for key, value in string_data.items():
            if isinstance(value, str):
                merged[key] = base64.b64encode(value.encode()).decode()
        secret["data"] = merged
    if not secret.get("type"):
        secret["type"] = "Opaque"


def _default_pvc(claim: JSONDict) -> None:
    status = _obj(claim, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Pending"
    _default_claim_template(claim)


_PV_SOURCES: dict[str, _Defaulter] = {
    "hostPath": _default_host_path,
    "rbd": _default_rbd,
    "iscsi": _default_iscsi,
    "azureDisk": _default_azure_disk,
    "scaleIO": _default_scale_io,
}


def _default_pv(volume: JSONDict) -> None:
    status = _obj(volume, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Pending"
    spec = _obj(volume, "spec")
    if spec is None:
        return
    if not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    for key, defaulter in _PV_SOURCES.items():
        source = _sub(spec, key)
        if source is not None:
            defaulter(source)


def _default_node(node: JSONDict) -> None:
    status = _sub(node, "status")
    if status is None or status.get("allocatable") is not None:
        return
    capacity = status.get("capacity")
    if isinstance(capacity, dict) and capacity:
        status["allocatable"] = dict(capacity)


def _default_endpoints(endpoints: JSONDict) -> None:
    for subset in _items(endpoints, "subsets"):
        for port in _items(subset, "ports"):
            if not port.get("protocol"):
                port["protocol"] = "TCP"


# --------------------------------------------------------------------------------------------
# apps/v1


def _default_rolling_update(spec: JSONDict, field: str, rolling_defaults: JSONDict) -> None:
    """A Deployment's or DaemonSet's update strategy: ``RollingUpdate`` unless set, whose
    ``rollingUpdate`` gets ``rolling_defaults``."""
    strategy = _obj(spec, field)
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = _obj(strategy, "rollingUpdate")
            if rolling is not None:
                _fill_nil(rolling, rolling_defaults)


@_on_spec
def _default_deployment(spec: JSONDict) -> None:
    _fill_nil(spec, {"replicas": 1})
    _default_rolling_update(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
    _fill_nil(spec, {"revisionHistoryLimit": 10, "progressDeadlineSeconds": 600})
    _default_template(spec)


@_on_spec
def _default_daemon_set(spec: JSONDict) -> None:
    _default_rolling_update(spec, "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0})
    _fill_nil(spec, {"revisionHistoryLimit": 10})
    _default_template(spec)


@_on_spec
def _default_stateful_set(spec: JSONDict) -> None:
    _fill_zero(spec, {"podManagementPolicy": "OrderedReady"})
    strategy = _obj(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            if strategy.get("rollingUpdate") is None:
                strategy["rollingUpdate"] = {}
        rolling = _sub(strategy, "rollingUpdate")
        if (
            strategy["type"] == "RollingUpdate"
            and rolling is not None
            and rolling.get("partition") is None
        ):
            rolling["partition"] = 0
    retention = _obj(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        _fill_zero(retention, {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _fill_nil(spec, {"replicas": 1, "revisionHistoryLimit": 10})
    _default_template(spec)
    for claim in _items(spec, "volumeClaimTemplates"):
        claim["apiVersion"] = "v1"
        claim["kind"] = "PersistentVolumeClaim"
        _default_pvc(claim)


@_on_spec
def _default_replica_set(spec: JSONDict) -> None:
    _fill_nil(spec, {"replicas": 1})
    _default_template(spec)


# --------------------------------------------------------------------------------------------
# batch/v1

_MAX_INT32 = 2**31 - 1


def _default_job(job: JSONDict) -> None:
    spec = _obj(job, "spec")
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        per_index = spec.get("backoffLimitPerIndex") is not None
        spec["backoffLimit"] = _MAX_INT32 if per_index else 6
    labels = _labels(_sub(spec, "template"))
    if labels is not None:
        metadata = _obj(job, "metadata")
        if metadata is not None and not metadata.get("labels"):
            metadata["labels"] = dict(labels)
    _fill_nil(spec, {"completionMode": "NonIndexed", "suspend": False})
    failure_policy = spec.get("podFailurePolicy")
    if isinstance(failure_policy, dict):
        for rule in _items(failure_policy, "rules"):
            for pattern in _items(rule, "onPodConditions"):
                if not pattern.get("status"):
                    pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = (
            "Failed" if failure_policy is not None else "TerminatingOrFailed"
        )
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    _default_template(spec)


@_on_spec
def _default_cron_job(spec: JSONDict) -> None:
    _fill_zero(spec, {"concurrencyPolicy": "Allow"})
    _fill_nil(
        spec, {"suspend": False, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}
    )
    job_template = _obj(spec, "jobTemplate")
    if job_template is not None:
        _default_template(_obj(job_template, "spec"))


# --------------------------------------------------------------------------------------------
# Smaller groups

_RBAC_GROUP = "rbac.authorization.k8s.io"


def _default_role_binding(binding: JSONDict) -> None:
    role_ref = _obj(binding, "roleRef")
    if role_ref is not None and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = _RBAC_GROUP
    for subject in _items(binding, "subjects"):
        if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = _RBAC_GROUP


@_on_spec
def _default_network_policy(spec: JSONDict) -> None:
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if spec.get("egress"):
            types.append("Egress")
        spec["policyTypes"] = types
    for direction in ("ingress", "egress"):
        for rule in _items(spec, direction):
            for port in _items(rule, "ports"):
                if port.get("protocol") is None:
                    port["protocol"] = "TCP"


def _default_ingress_class(ingress_class: JSONDict) -> None:
    parameters = _sub(_sub(ingress_class, "spec"), "parameters")
    if parameters is not None and parameters.get("scope") is None:
        parameters["scope"] = "Cluster"


def _default_storage_class(storage_class: JSONDict) -> None:
    _fill_nil(storage_class, {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})


def _default_priority_class(priority_class: JSONDict) -> None:
    _fill_nil(priority_class, {"preemptionPolicy": "PreemptLowerPriority"})


def _default_endpoint_slice(slice_: JSONDict) -> None:
    for port in _items(slice_, "ports"):
        _fill_nil(port, {"name": "", "protocol": "TCP"})
    builtin_discovery.default_endpoint_conditions(slice_)


def _default_crd(crd: JSONDict) -> None:
    spec = _obj(crd, "spec")
    if spec is None:
        return
    names = _obj(spec, "names")
    if names is not None:
        kind = names.get("kind")
        if isinstance(kind, str) and kind:
            if not names.get("singular"):
                names["singular"] = kind.lower()
            if not names.get("listKind"):
                names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = _sub(_sub(_sub(_sub(spec, "conversion"), "webhook"), "clientConfig"), "service")
    if service is not None and service.get("port") is None:
        service["port"] = 443
    status = _obj(crd, "status")
    if status is not None and not status.get("storedVersions"):
        for version in _items(spec, "versions"):
            name = version.get("name")
            if version.get("storage") is True and isinstance(name, str):
                status["storedVersions"] = [name]
                break


# --------------------------------------------------------------------------------------------

_DEFAULTERS: dict[tuple[str, str], _Defaulter] = {
    ("", "Pod"): _default_pod,
    ("", "PodTemplate"): _default_pod_template,
    ("", "ReplicationController"): _default_replication_controller,
    ("", "Service"): _default_service,
    ("", "Namespace"): _default_namespace,
    ("", "Secret"): _default_secret,
    ("", "PersistentVolumeClaim"): _default_pvc,
    ("", "PersistentVolume"): _default_pv,
    ("", "Node"): _default_node,
    ("", "Endpoints"): _default_endpoints,
    ("", "LimitRange"): builtin_core.default_limit_range,
    ("autoscaling", "HorizontalPodAutoscaler"): builtin_autoscaling.default_hpa,
    ("apps", "Deployment"): _default_deployment,
    ("apps", "DaemonSet"): _default_daemon_set,
    ("apps", "StatefulSet"): _default_stateful_set,
    ("apps", "ReplicaSet"): _default_replica_set,
    ("batch", "Job"): _default_job,
    ("batch", "CronJob"): _default_cron_job,
    (_RBAC_GROUP, "RoleBinding"): _default_role_binding,
    (_RBAC_GROUP, "ClusterRoleBinding"): _default_role_binding,
    ("networking.k8s.io", "NetworkPolicy"): _default_network_policy,
    ("networking.k8s.io", "IngressClass"): _default_ingress_class,
    ("storage.k8s.io", "StorageClass"): _default_storage_class,
    ("storage.k8s.io", "CSIDriver"): builtin_storage.default_csi_driver,
    ("scheduling.k8s.io", "PriorityClass"): _default_priority_class,
    ("discovery.k8s.io", "EndpointSlice"): _default_endpoint_slice,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _default_crd,
    (webhookconfig.GROUP, webhookconfig.MUTATING_KIND): webhookconfig.default_mutating,
    (webhookconfig.GROUP, webhookconfig.VALIDATING_KIND): webhookconfig.default_validating,
}
