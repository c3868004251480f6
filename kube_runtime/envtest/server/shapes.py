"""The JSON types of the built-in kinds, checked as kube-apiserver's typed decoding checks them.

kube-apiserver decodes a built-in object into its Go struct before anything else runs, so a
value of the wrong JSON type anywhere in a known field is a 400 BadRequest::

    Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go
    struct field PodSpec.spec.containers of type []v1.Container

(the wording of ``sigs.k8s.io/json``; kube-apiserver 1.20's json-iterator words it
differently, with the same code). :func:`check_object` does the same against compact tables
of the Go types (the fields this server or its clients read; unknown fields are not
checked, as the decoder drops them), so the defaulting, validation and storage code after
it sees the types it expects. Integers must be integral JSON numbers within their Go type's
range (``2.0`` is no ``int32``); ``null`` is every type's zero value. Custom resources are
checked for their ``apiVersion``, ``kind`` and ``metadata`` only: their schema does the rest
(422, :mod:`.crdschema`). The check visits only the fields present in the body and builds
no message on the valid path; a valid body is decided in C by the tables compiled into
msgspec types, and anything else by the Python walker, which words the error (see "The
compiled fast path" below).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server.validation import _QUANTITY_MSG
from kube_runtime.workloads.quantity import QUANTITY_RE as _QUANTITY_RE

__all__ = ["ShapeError", "check_delete_options", "check_object", "mismatch"]


class ShapeError(Exception):
    """A value of the wrong JSON type: where it is and what Go type was expected."""

    def __init__(self, value: Any, go_type: str) -> None:
        super().__init__(go_type)
        self.value = value
        self.go_type = go_type
        self.struct = ""
        self.parts: list[str | int] = []  # innermost first
        self.detail = ""  # a value of the right type that still does not decode

    @property
    def go_path(self) -> str:
        """The field as Go's decoder names it: JSON names joined by dots, no indices."""
        return ".".join(str(p) for p in reversed(self.parts) if isinstance(p, str))

    @property
    def field(self) -> str:
        """The field as a Status cause names it (``spec.containers[0].image``)."""
        out = ""
        for p in reversed(self.parts):
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
        return out

    @property
    def json_kind(self) -> str:
        v = self.value
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, (int, float)):
            return f"number {v}"
        if isinstance(v, str):
            return "string"
        return "array" if isinstance(v, list) else "object"

    def message(self) -> str:
        """``json: cannot unmarshal string into Go struct field PodSpec.spec.x of type int32``."""
        if self.detail:
            return self.detail
        return (
            f"json: cannot unmarshal {self.json_kind} into Go struct field "
            f"{self.struct}.{self.go_path} of type {self.go_type}"
        )


class _T:
    """A Go type: ``check(value)`` raises :class:`ShapeError` when ``value`` does not fit.

    ``zero()`` is what a ``null`` list item or map value decodes to (Go's zero value; None
    for the types whose zero value is ``null`` again).
    """

    __slots__ = ("go",)

    def __init__(self, go: str) -> None:
        self.go = go

    def zero(self) -> Any:
        return None

    def check(self, value: Any) -> None:
        raise NotImplementedError


class _Str(_T):
    __slots__ = ()

    def zero(self) -> Any:
        return ""

    def check(self, value: Any) -> None:
        if value is not None and type(value) is not str:
            raise ShapeError(value, self.go)


class _Bool(_T):
    __slots__ = ()

    def zero(self) -> Any:
        return False

    def check(self, value: Any) -> None:
        if value is not None and type(value) is not bool:
            raise ShapeError(value, self.go)


class _Int(_T):
    __slots__ = ("hi", "lo")

    def __init__(self, go: str, bits: int) -> None:
        super().__init__(go)
        self.lo, self.hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def zero(self) -> Any:
        return 0

    def check(self, value: Any) -> None:
        if value is not None and (type(value) is not int or not self.lo <= value <= self.hi):
            raise ShapeError(value, self.go)


class _Number(_T):
    """A float64, a Quantity (string or number) or an IntOrString (string or integer)."""

    __slots__ = ("floats", "strings")

    def __init__(self, go: str, *, strings: bool, floats: bool) -> None:
        super().__init__(go)
        self.strings, self.floats = strings, floats

    def check(self, value: Any) -> None:
        if value is None or type(value) is int or (type(value) is float and self.floats):
            return
        if type(value) is str and self.strings:
            return
        raise ShapeError(value, self.go)


class _Quantity(_Number):
    """A ``resource.Quantity``: a number, or a string in the quantity syntax."""

    __slots__ = ()

    def check(self, value: Any) -> None:
        if type(value) is str:
            if _QUANTITY_RE.fullmatch(value.strip()) is None:
                e = ShapeError(value, self.go)
                e.detail = _QUANTITY_MSG
                raise e
            return
        super().check(value)


class _Any(_T):
    __slots__ = ()

    def check(self, value: Any) -> None:
        return None


class _Opaque(_T):
    """A struct whose fields are not checked here: an object or null."""

    __slots__ = ()

    def zero(self) -> Any:
        return {}

    def check(self, value: Any) -> None:
        if value is not None and type(value) is not dict:
            raise ShapeError(value, self.go)


class _Either(_T):
    """``JSONSchemaPropsOrBool`` / ``OrArray``: an object of ``schema``, or a bool / a list."""

    __slots__ = ("alt", "schema")

    def __init__(self, go: str, schema: _Struct, alt: type) -> None:
        super().__init__(go)
        self.schema, self.alt = schema, alt

    def check(self, value: Any) -> None:
        if value is None or (type(value) is self.alt and self.alt is bool):
            return
        if type(value) is dict:
            self.schema.check(value)
        elif type(value) is list and self.alt is list:
            _List("", self.schema).check(value)
        else:
            raise ShapeError(value, self.go)


def _scalar_type(t: _T) -> type | None:
    """The one Python type a ``string`` or ``bool`` field takes (checked inline, no call)."""
    if type(t) is _Str:
        return str
    if type(t) is _Bool:
        return bool
    return None


class _Items(_T):
    """A list or a map of one item type: ``null`` items become the item's zero value."""

    __slots__ = ("item", "scalar")

    def __init__(self, go: str, item: _T) -> None:
        super().__init__(go)
        self.item = item
        self.scalar = _scalar_type(item)

    def _check_items(self, value: Any, pairs: Iterable[tuple[Any, Any]]) -> None:
        scalar = self.scalar
        check = self.item.check
        for at, item in pairs:
            if type(item) is scalar:
                continue
            if item is None:
                value[at] = self.item.zero()
                continue
            try:
                if scalar is not None:
                    raise ShapeError(item, self.item.go)
                check(item)
            except ShapeError as e:
                e.parts.append(at)
                raise


class _List(_Items):
    __slots__ = ()

    def __init__(self, go: str, item: _T) -> None:
        super().__init__(go or f"[]{item.go}", item)

    def check(self, value: Any) -> None:
        if value is None:
            return
        if type(value) is not list:
            raise ShapeError(value, self.go)
        self._check_items(value, enumerate(value))


class _Map(_Items):
    __slots__ = ()

    def __init__(self, item: _T) -> None:
        super().__init__(f"map[string]{item.go}", item)

    def check(self, value: Any) -> None:
        if value is None:
            return
        if type(value) is not dict:
            raise ShapeError(value, self.go)
        self._check_items(value, value.items())


class _Struct(_T):
    """A Go struct: its string and bool fields are checked inline, the others by their type."""

    __slots__ = ("fields", "kinds", "name")

    def __init__(self, go: str, fields: dict[str, _T] | None = None) -> None:
        super().__init__(go)
        self.name = go.rpartition(".")[2]
        self.fields: dict[str, _T] = fields or {}
        # field -> str or bool (checked inline) or its _T; built at first use (the recursive
        # JSONSchemaProps gets its fields after creation)
        self.kinds: dict[str, Any] | None = None

    def zero(self) -> Any:
        return {}

    def _kinds(self) -> dict[str, Any]:
        kinds = {key: _scalar_type(t) or t for key, t in self.fields.items()}
        self.kinds = kinds
        return kinds

    def check(self, value: Any) -> None:
        if value is None:
            return
        if type(value) is not dict:
            raise ShapeError(value, self.go)
        kinds = self.kinds
        if kinds is None:
            kinds = self._kinds()
        for key, item in value.items():
            t = kinds.get(key)
            if t is None or t is type(item) or item is None:
                continue
            if t is str or t is bool:
                e = ShapeError(item, self.fields[key].go)
            else:
                try:
                    t.check(item)
                    continue
                except ShapeError as raised:
                    e = raised
            e.parts.append(key)
            if not e.struct:
                e.struct = self.name
            raise e


S = _Str("string")
B = _Bool("bool")
I32 = _Int("int32", 32)
I64 = _Int("int64", 64)
F64 = _Number("float64", strings=False, floats=True)
Q = _Quantity("resource.Quantity", strings=True, floats=True)
IOS = _Number("intstr.IntOrString", strings=True, floats=False)
T = _Str("v1.Time")
ANY = _Any("interface {}")
SL = _List("", S)
SS = _Map(S)
QM = _Map(Q)


def _st(go: str, strings: str = "", /, **fields: _T) -> _Struct:
    """The Go struct ``go``: ``strings`` names its ``string`` fields (separated by spaces),
    ``fields`` gives the others with their types."""
    return _Struct(go, {**dict.fromkeys(strings.split(), S), **fields})


def _op(go: str) -> _Opaque:
    return _Opaque(go)


def _ls(item: _T) -> _List:
    return _List("", item)


# ------------------------------------------------------------------ meta/v1

OWNER_REF = _st("v1.OwnerReference", "apiVersion kind name uid", controller=B, blockOwnerDeletion=B)
MANAGED_FIELDS = _st(
    "v1.ManagedFieldsEntry",
    "manager operation apiVersion fieldsType subresource",
    time=T,
    fieldsV1=ANY,  # any JSON decodes (FieldsV1 keeps the raw bytes); the field manager reads it
)
OBJECT_META = _st(
    "v1.ObjectMeta",
    "name generateName namespace selfLink uid resourceVersion clusterName",
    generation=I64,
    creationTimestamp=T,
    deletionTimestamp=T,
    deletionGracePeriodSeconds=I64,
    labels=SS,
    annotations=SS,
    ownerReferences=_ls(OWNER_REF),
    finalizers=SL,
    managedFields=_ls(MANAGED_FIELDS),
)
SELECTOR = _st(
    "v1.LabelSelector",
    matchLabels=SS,
    matchExpressions=_ls(_st("v1.LabelSelectorRequirement", "key operator", values=SL)),
)
OBJECT_REF = _st(
    "v1.ObjectReference", "kind namespace name uid apiVersion resourceVersion fieldPath"
)


def _conditions(go: str, *times: str) -> _List:
    fields: dict[str, _T] = {"type": S, "status": S, "reason": S, "message": S}
    fields.update((t, T) for t in times)
    return _ls(_Struct(go, fields))


# ------------------------------------------------------------------ core/v1

RESOURCES = _st("v1.ResourceRequirements", limits=QM, requests=QM)
_PORT_ACTION = {"port": IOS, "host": S}
PROBE = _st(
    "v1.Probe",
    exec=_st("v1.ExecAction", command=SL),
    httpGet=_st(
        "v1.HTTPGetAction",
        "path scheme",
        httpHeaders=_ls(_st("v1.HTTPHeader", "name value")),
        **_PORT_ACTION,
    ),
    tcpSocket=_st("v1.TCPSocketAction", **_PORT_ACTION),
    initialDelaySeconds=I32,
    timeoutSeconds=I32,
    periodSeconds=I32,
    successThreshold=I32,
    failureThreshold=I32,
    terminationGracePeriodSeconds=I64,
)
CONTAINER = _st(
    "v1.Container",
    "name image workingDir terminationMessagePath terminationMessagePolicy imagePullPolicy",
    command=SL,
    args=SL,
    ports=_ls(_st("v1.ContainerPort", "name protocol hostIP", hostPort=I32, containerPort=I32)),
    envFrom=_ls(_op("v1.EnvFromSource")),
    env=_ls(_st("v1.EnvVar", "name value", valueFrom=_op("v1.EnvVarSource"))),
    resources=RESOURCES,
    volumeMounts=_ls(
        _st("v1.VolumeMount", "name mountPath subPath mountPropagation subPathExpr", readOnly=B)
    ),
    volumeDevices=_ls(_st("v1.VolumeDevice", "name devicePath")),
    livenessProbe=PROBE,
    readinessProbe=PROBE,
    startupProbe=PROBE,
    lifecycle=_op("v1.Lifecycle"),
    securityContext=_op("v1.SecurityContext"),
    stdin=B,
    stdinOnce=B,
    tty=B,
)
_KEY_TO_PATH = _ls(_st("v1.KeyToPath", "key path", mode=I32))
VOLUME = _st(
    "v1.Volume",
    "name",
    persistentVolumeClaim=_st("v1.PersistentVolumeClaimVolumeSource", "claimName", readOnly=B),
    configMap=_st(
        "v1.ConfigMapVolumeSource", "name", items=_KEY_TO_PATH, defaultMode=I32, optional=B
    ),
    secret=_st(
        "v1.SecretVolumeSource", "secretName", items=_KEY_TO_PATH, defaultMode=I32, optional=B
    ),
    emptyDir=_st("v1.EmptyDirVolumeSource", "medium", sizeLimit=Q),
    hostPath=_st("v1.HostPathVolumeSource", "path type"),
)
POD_SPEC = _st(
    "v1.PodSpec",
    "restartPolicy dnsPolicy serviceAccountName serviceAccount nodeName hostname subdomain "
    "schedulerName priorityClassName runtimeClassName preemptionPolicy",
    volumes=_ls(VOLUME),
    initContainers=_ls(CONTAINER),
    containers=_ls(CONTAINER),
    ephemeralContainers=_ls(_op("v1.EphemeralContainer")),
    terminationGracePeriodSeconds=I64,
    activeDeadlineSeconds=I64,
    nodeSelector=SS,
    automountServiceAccountToken=B,
    hostNetwork=B,
    hostPID=B,
    hostIPC=B,
    shareProcessNamespace=B,
    securityContext=_op("v1.PodSecurityContext"),
    imagePullSecrets=_ls(_st("v1.LocalObjectReference", "name")),
    affinity=_op("v1.Affinity"),
    tolerations=_ls(_st("v1.Toleration", "key operator value effect", tolerationSeconds=I64)),
    hostAliases=_ls(_st("v1.HostAlias", "ip", hostnames=SL)),
    priority=I32,
    dnsConfig=_op("v1.PodDNSConfig"),
    readinessGates=_ls(_st("v1.PodReadinessGate", "conditionType")),
    enableServiceLinks=B,
    overhead=QM,
    topologySpreadConstraints=_ls(_op("v1.TopologySpreadConstraint")),
    setHostnameAsFQDN=B,
)
_CONTAINER_STATE = _st(
    "v1.ContainerState",
    waiting=_st("v1.ContainerStateWaiting", "reason message"),
    running=_st("v1.ContainerStateRunning", startedAt=T),
    terminated=_st(
        "v1.ContainerStateTerminated",
        "reason message containerID",
        exitCode=I32,
        signal=I32,
        startedAt=T,
        finishedAt=T,
    ),
)
CONTAINER_STATUS = _st(
    "v1.ContainerStatus",
    "name image imageID containerID",
    state=_CONTAINER_STATE,
    lastState=_CONTAINER_STATE,
    ready=B,
    restartCount=I32,
    started=B,
)
POD_STATUS = _st(
    "v1.PodStatus",
    "phase message reason nominatedNodeName hostIP podIP qosClass",
    conditions=_conditions("v1.PodCondition", "lastProbeTime", "lastTransitionTime"),
    podIPs=_ls(_st("v1.PodIP", "ip")),
    startTime=T,
    initContainerStatuses=_ls(CONTAINER_STATUS),
    containerStatuses=_ls(CONTAINER_STATUS),
    ephemeralContainerStatuses=_ls(CONTAINER_STATUS),
)
POD_TEMPLATE = _st("v1.PodTemplateSpec", metadata=OBJECT_META, spec=POD_SPEC)
PVC_SPEC = _st(
    "v1.PersistentVolumeClaimSpec",
    "volumeName storageClassName volumeMode",
    accessModes=SL,
    selector=SELECTOR,
    resources=RESOURCES,
    dataSource=_op("v1.TypedLocalObjectReference"),
)
PVC_STATUS = _st(
    "v1.PersistentVolumeClaimStatus",
    "phase",
    accessModes=SL,
    capacity=QM,
    conditions=_conditions(
        "v1.PersistentVolumeClaimCondition", "lastProbeTime", "lastTransitionTime"
    ),
)
PVC = _st(
    "v1.PersistentVolumeClaim",
    "apiVersion kind",
    metadata=OBJECT_META,
    spec=PVC_SPEC,
    status=PVC_STATUS,
)

# ------------------------------------------------------------------ apps/v1

_WORKLOAD_STATUS = {
    "observedGeneration": I64,
    "replicas": I32,
    "readyReplicas": I32,
    "availableReplicas": I32,
    "updatedReplicas": I32,
    "collisionCount": I32,
}
STATEFULSET_SPEC = _st(
    "v1.StatefulSetSpec",
    "serviceName podManagementPolicy",
    replicas=I32,
    selector=SELECTOR,
    template=POD_TEMPLATE,
    volumeClaimTemplates=_ls(PVC),
    updateStrategy=_st(
        "v1.StatefulSetUpdateStrategy",
        "type",
        rollingUpdate=_st("v1.RollingUpdateStatefulSetStrategy", partition=I32, maxUnavailable=IOS),
    ),
    revisionHistoryLimit=I32,
    minReadySeconds=I32,
    persistentVolumeClaimRetentionPolicy=_st(
        "v1.StatefulSetPersistentVolumeClaimRetentionPolicy", "whenDeleted whenScaled"
    ),
    ordinals=_st("v1.StatefulSetOrdinals", start=I32),
)
STATEFULSET_STATUS = _Struct(
    "v1.StatefulSetStatus",
    {
        **_WORKLOAD_STATUS,
        "currentReplicas": I32,
        "currentRevision": S,
        "updateRevision": S,
        "conditions": _conditions("v1.StatefulSetCondition", "lastTransitionTime"),
    },
)
DEPLOYMENT_SPEC = _st(
    "v1.DeploymentSpec",
    replicas=I32,
    selector=SELECTOR,
    template=POD_TEMPLATE,
    strategy=_st(
        "v1.DeploymentStrategy",
        "type",
        rollingUpdate=_st("v1.RollingUpdateDeployment", maxUnavailable=IOS, maxSurge=IOS),
    ),
    minReadySeconds=I32,
    revisionHistoryLimit=I32,
    paused=B,
    progressDeadlineSeconds=I32,
)
DEPLOYMENT_STATUS = _Struct(
    "v1.DeploymentStatus",
    {
        **_WORKLOAD_STATUS,
        "unavailableReplicas": I32,
        "conditions": _conditions("v1.DeploymentCondition", "lastUpdateTime", "lastTransitionTime"),
    },
)
REPLICASET_SPEC = _st(
    "v1.ReplicaSetSpec", replicas=I32, minReadySeconds=I32, selector=SELECTOR, template=POD_TEMPLATE
)
REPLICASET_STATUS = _Struct(
    "v1.ReplicaSetStatus",
    {
        **_WORKLOAD_STATUS,
        "fullyLabeledReplicas": I32,
        "conditions": _conditions("v1.ReplicaSetCondition", "lastTransitionTime"),
    },
)

# ------------------------------------------------------------ apiextensions/v1

SCHEMA = _Struct("v1.JSONSchemaProps")
_SCHEMA_MAP = _Map(SCHEMA)
SCHEMA.fields.update(
    {
        "id": S,
        "$schema": S,
        "$ref": S,
        "description": S,
        "type": S,
        "format": S,
        "title": S,
        "default": ANY,
        "maximum": F64,
        "exclusiveMaximum": B,
        "minimum": F64,
        "exclusiveMinimum": B,
        "maxLength": I64,
        "minLength": I64,
        "pattern": S,
        "maxItems": I64,
        "minItems": I64,
        "uniqueItems": B,
        "multipleOf": F64,
        "enum": _ls(ANY),
        "maxProperties": I64,
        "minProperties": I64,
        "required": SL,
        "items": _Either("v1.JSONSchemaPropsOrArray", SCHEMA, list),
        "allOf": _ls(SCHEMA),
        "oneOf": _ls(SCHEMA),
        "anyOf": _ls(SCHEMA),
        "not": SCHEMA,
        "properties": _SCHEMA_MAP,
        "additionalProperties": _Either("v1.JSONSchemaPropsOrBool", SCHEMA, bool),
        "patternProperties": _SCHEMA_MAP,
        "additionalItems": _Either("v1.JSONSchemaPropsOrBool", SCHEMA, bool),
        "definitions": _SCHEMA_MAP,
        "externalDocs": _op("v1.ExternalDocumentation"),
        "example": ANY,
        "nullable": B,
        "x-kubernetes-preserve-unknown-fields": B,
        "x-kubernetes-embedded-resource": B,
        "x-kubernetes-int-or-string": B,
        "x-kubernetes-list-map-keys": SL,
        "x-kubernetes-list-type": S,
        "x-kubernetes-map-type": S,
    }
)
CRD_NAMES = _st(
    "v1.CustomResourceDefinitionNames",
    "plural singular kind listKind",
    shortNames=SL,
    categories=SL,
)
CRD_SPEC = _st(
    "v1.CustomResourceDefinitionSpec",
    "group scope",
    names=CRD_NAMES,
    versions=_ls(
        _st(
            "v1.CustomResourceDefinitionVersion",
            "name deprecationWarning",
            served=B,
            storage=B,
            deprecated=B,
            schema=_st("v1.CustomResourceValidation", openAPIV3Schema=SCHEMA),
            subresources=_st(
                "v1.CustomResourceSubresources",
                status=_op("v1.CustomResourceSubresourceStatus"),
                scale=_st(
                    "v1.CustomResourceSubresourceScale",
                    "specReplicasPath statusReplicasPath labelSelectorPath",
                ),
            ),
            additionalPrinterColumns=_ls(
                _st(
                    "v1.CustomResourceColumnDefinition",
                    "name type format description jsonPath",
                    priority=I32,
                )
            ),
        )
    ),
    conversion=_st("v1.CustomResourceConversion", "strategy", webhook=_op("v1.WebhookConversion")),
    preserveUnknownFields=B,
)
CRD_STATUS = _st(
    "v1.CustomResourceDefinitionStatus",
    conditions=_conditions("v1.CustomResourceDefinitionCondition", "lastTransitionTime"),
    acceptedNames=CRD_NAMES,
    storedVersions=SL,
)

# ------------------------------------------------------------------ the kinds


def _kind(go: str, strings: str = "", /, **fields: _T) -> _Struct:
    """A kind's struct (``metadata`` and the fields, as :func:`_st` takes them)."""
    return _st(go, strings, metadata=OBJECT_META, **fields)


_NODE_ADDRESSES = _ls(_st("v1.NodeAddress", "type address"))
_KINDS: dict[tuple[str, str], _Struct] = {
    ("", "Pod"): _kind("v1.Pod", spec=POD_SPEC, status=POD_STATUS),
    ("", "PersistentVolumeClaim"): _kind(
        "v1.PersistentVolumeClaim", spec=PVC_SPEC, status=PVC_STATUS
    ),
    ("", "ConfigMap"): _kind("v1.ConfigMap", data=SS, binaryData=_Map(S), immutable=B),
    ("", "Secret"): _kind("v1.Secret", "type", data=_Map(S), stringData=SS, immutable=B),
    ("", "Namespace"): _kind(
        "v1.Namespace",
        spec=_st("v1.NamespaceSpec", finalizers=SL),
        status=_st(
            "v1.NamespaceStatus",
            "phase",
            conditions=_conditions("v1.NamespaceCondition", "lastTransitionTime"),
        ),
    ),
    ("", "Node"): _kind(
        "v1.Node",
        spec=_st(
            "v1.NodeSpec",
            "podCIDR providerID",
            podCIDRs=SL,
            unschedulable=B,
            taints=_ls(_st("v1.Taint", "key value effect", timeAdded=T)),
        ),
        status=_st(
            "v1.NodeStatus",
            "phase",
            capacity=QM,
            allocatable=QM,
            conditions=_conditions("v1.NodeCondition", "lastHeartbeatTime", "lastTransitionTime"),
            addresses=_NODE_ADDRESSES,
            nodeInfo=_op("v1.NodeSystemInfo"),
        ),
    ),
    ("", "Service"): _kind(
        "v1.Service",
        spec=_st(
            "v1.ServiceSpec",
            "clusterIP type sessionAffinity loadBalancerIP externalName externalTrafficPolicy ipFamilyPolicy",
            ports=_ls(
                _st(
                    "v1.ServicePort",
                    "name protocol appProtocol",
                    port=I32,
                    targetPort=IOS,
                    nodePort=I32,
                )
            ),
            selector=SS,
            clusterIPs=SL,
            externalIPs=SL,
            healthCheckNodePort=I32,
            publishNotReadyAddresses=B,
            ipFamilies=SL,
        ),
        status=_op("v1.ServiceStatus"),
    ),
    ("", "ServiceAccount"): _kind(
        "v1.ServiceAccount",
        secrets=_ls(OBJECT_REF),
        imagePullSecrets=_ls(_st("v1.LocalObjectReference", "name")),
        automountServiceAccountToken=B,
    ),
    ("", "Endpoints"): _kind(
        "v1.Endpoints",
        subsets=_ls(
            _st(
                "v1.EndpointSubset",
                addresses=_ls(_op("v1.EndpointAddress")),
                notReadyAddresses=_ls(_op("v1.EndpointAddress")),
                ports=_ls(_st("v1.EndpointPort", "name protocol appProtocol", port=I32)),
            )
        ),
    ),
    ("", "Event"): _kind(
        "v1.Event",
        "reason message type action reportingComponent reportingInstance",
        involvedObject=OBJECT_REF,
        source=_st("v1.EventSource", "component host"),
        firstTimestamp=T,
        lastTimestamp=T,
        count=I32,
        eventTime=T,
        series=_st("v1.EventSeries", count=I32, lastObservedTime=T),
        related=OBJECT_REF,
    ),
    ("apps", "StatefulSet"): _kind(
        "v1.StatefulSet", spec=STATEFULSET_SPEC, status=STATEFULSET_STATUS
    ),
    ("apps", "Deployment"): _kind("v1.Deployment", spec=DEPLOYMENT_SPEC, status=DEPLOYMENT_STATUS),
    ("apps", "ReplicaSet"): _kind("v1.ReplicaSet", spec=REPLICASET_SPEC, status=REPLICASET_STATUS),
    ("apps", "ControllerRevision"): _kind("v1.ControllerRevision", data=ANY, revision=I64),
    ("coordination.k8s.io", "Lease"): _kind(
        "v1.Lease",
        spec=_st(
            "v1.LeaseSpec",
            "holderIdentity",
            leaseDurationSeconds=I32,
            acquireTime=T,
            renewTime=T,
            leaseTransitions=I32,
        ),
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _kind(
        "v1.CustomResourceDefinition", spec=CRD_SPEC, status=CRD_STATUS
    ),
    ("autoscaling", "Scale"): _kind(
        "v1.Scale",
        spec=_st("v1.ScaleSpec", replicas=I32),
        status=_st("v1.ScaleStatus", "selector", replicas=I32),
    ),
    ("", "Binding"): _kind("v1.Binding", target=OBJECT_REF),
}
_CUSTOM = _kind("unstructured.Unstructured")
DELETE_OPTIONS = _st(
    "v1.DeleteOptions",
    "kind apiVersion",
    gracePeriodSeconds=I64,
    preconditions=_st("v1.Preconditions", "uid resourceVersion"),
    orphanDependents=B,
    propagationPolicy=_Str("v1.DeletionPropagation"),
    dryRun=SL,
)
_KINDS[("meta.k8s.io", "DeleteOptions")] = DELETE_OPTIONS


_WITHOUT_STATUS = {
    key: _Struct(struct.go, {k: t for k, t in struct.fields.items() if k != "status"})
    for key, struct in _KINDS.items()
}


# ------------------------------------------------------------------ the compiled fast path
#
# The tables above are walked in Python by ``_T.check``, which words the error and replaces
# ``null`` list items and map values by their zero value. Most bodies are valid and hold no
# such ``null``: for them, the same table compiled into msgspec types decides in C (about 2.5x
# faster for a typical pod). The compiled types are stricter than the walker in one way only:
# a ``null`` list item or map value fails them, and the walker then decides (and replaces).
# Any failure of the fast path falls back to the walker, so answers are the walker's.


class _NotCompiled(Exception):
    """A table the fast path does not cover (a recursive struct): the walker decides."""


#: The table types that compile to one Python type.
_SIMPLE: dict[type, Any] = {_Str: str, _Bool: bool, _Any: Any, _Opaque: dict}


def _compiled(t: _T, building: set[int]) -> Any:
    """The msgspec type deciding what ``t.check`` accepts (None list items excepted)."""
    kind = type(t)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind is _Int:
        assert isinstance(t, _Int)
        return Annotated[int, Meta(ge=t.lo, le=t.hi)]
    if kind is _Quantity:
        quantity = Annotated[str, Meta(pattern=rf"^\s*(?:{_QUANTITY_RE.pattern})\s*$")]
        return quantity | int | float
    if kind is _Number:
        assert isinstance(t, _Number)
        if t.strings:
            return str | int | float if t.floats else str | int
        return float
    if kind is _List:
        assert isinstance(t, _List)
        return list[_compiled(t.item, building)]  # type: ignore[misc]
    if kind is _Map:
        assert isinstance(t, _Map)
        return dict[str, _compiled(t.item, building)]  # type: ignore[misc]
    if kind is _Struct:
        assert isinstance(t, _Struct)
        if id(t) in building:
            raise _NotCompiled(t.go)
        building.add(id(t))
        try:
            names = {f"f{i}": key for i, key in enumerate(t.fields)}
            fields = [
                (name, _compiled(t.fields[key], building) | None, None)
                for name, key in names.items()
            ]
        finally:
            building.discard(id(t))
        # gc=False: these trees are short-lived and acyclic; untracked, they trigger no GC
        return msgspec.defstruct(t.name or "Struct", fields, kw_only=True, rename=names, gc=False)
    raise _NotCompiled(t.go)  # _Either: JSON schema props (CRDs), walked


_FAST: dict[int, Any] = {}


def _fast_type(struct: _Struct) -> Any:
    """The compiled type of a kind's table (built on first use), or None (not covered)."""
    key = id(struct)
    if key not in _FAST:
        try:
            _FAST[key] = _compiled(struct, set())
        except _NotCompiled:
            _FAST[key] = None
    return _FAST[key]


def mismatch(
    group: str, kind: str, obj: Any, *, custom: bool = False, status: bool = True
) -> ShapeError | None:
    """The first value of ``obj`` whose JSON type its Go field does not take (None: none).

    ``status=False`` leaves the status out: a write to the main resource of a kind with a
    status subresource keeps the stored status whatever the body holds. ``null`` items of
    lists and values of maps are replaced by their type's zero value (in place).
    """
    table = _KINDS if status else _WITHOUT_STATUS
    struct = _CUSTOM if custom else table.get((group, kind), _CUSTOM)
    fast = _fast_type(struct)
    if fast is not None:
        try:
            msgspec.convert(obj, fast)
            return None
        except msgspec.ValidationError:
            pass  # invalid, or a null item to replace: the walker words it or fixes it
    try:
        struct.check(obj)
    except ShapeError as e:
        return e
    return None


#: :func:`_fast_type` of a kind's table by (group, kind, custom, status), as
#: :func:`check_object` chooses it (None: not compiled).
_FAST_BY_KIND: dict[tuple[str, str, bool, bool], Any] = {}
_UNSEEN: Any = object()


def _type_meta_error(kind: str, obj: dict[str, Any]) -> errors.ApiError | None:
    for field in ("apiVersion", "kind"):
        value = obj.get(field)
        if value is not None and type(value) is not str:
            e = ShapeError(value, "string")
            return errors.bad_request(
                f"the object provided is unrecognized (must be of type {kind}): couldn't get "
                f"version/kind; json parse error: json: cannot unmarshal "
                f"{e.json_kind.split(' ')[0]} into Go struct field .{field} of type string"
            )
    return None


def check_object(
    group: str, version: str, kind: str, obj: Any, *, custom: bool = False, status: bool = True
) -> None:
    """400 BadRequest, worded as kube-apiserver's decoder, when ``obj`` (a request body)
    has a value of the wrong JSON type in a field of ``kind``'s Go type (``status`` as for
    :func:`mismatch`)."""
    if type(obj) is dict:
        # The usual body: string TypeMeta and what the compiled type of the kind's table
        # accepts; what the steps below find then is nothing (each kind's type found once).
        fast = _FAST_BY_KIND.get((group, kind, custom, status), _UNSEEN)
        if fast is _UNSEEN:
            table = _KINDS if status else _WITHOUT_STATUS
            fast = _fast_type(_CUSTOM if custom else table.get((group, kind), _CUSTOM))
            _FAST_BY_KIND[(group, kind, custom, status)] = fast
        api_version = obj.get("apiVersion")
        type_kind = obj.get("kind")
        if (
            fast is not None
            and (api_version is None or type(api_version) is str)
            and (type_kind is None or type(type_kind) is str)
        ):
            try:
                msgspec.convert(obj, fast)
                return
            except msgspec.ValidationError:
                pass  # the steps below word the error (or the walker replaces a null)
    else:
        got = ShapeError(obj, "").json_kind.split(" ")[0] if obj is not None else "null"
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get "
            f"version/kind; json parse error: json: cannot unmarshal {got} into Go value "
            'of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }'
        )
    type_meta = _type_meta_error(kind, obj)
    if type_meta is not None:
        raise type_meta
    found = mismatch(group, kind, obj, custom=custom, status=status)
    if found is not None:
        raise _bad_request(kind, version, found)


def _bad_request(kind: str, version: str, found: ShapeError) -> errors.ApiError:
    message = f'{kind} in version "{version}" cannot be handled as a {kind}: {found.message()}'
    return errors.api_error(
        400,
        message,
        "BadRequest",
        {
            "causes": [
                {
                    "reason": "FieldValueTypeInvalid",
                    "message": found.message(),
                    "field": found.field,
                }
            ]
        },
    )


def check_delete_options(body: Any) -> None:
    """400 for DeleteOptions that do not decode (a value of the wrong type, or no object)."""
    check_object("meta.k8s.io", "v1", "DeleteOptions", body)
