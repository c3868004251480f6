"""Zero values as kube-apiserver's Go encoding writes them, for the built-in kinds.

kube-apiserver decodes every built-in object into a Go struct and encodes it back: a scalar
field tagged ``omitempty`` disappears when it holds its zero value (``0``, ``false``, ``""``),
and a scalar field without the tag is always written, ``0`` when unset. Pointer fields
(``*int32`` such as ``status.collisionCount`` or ``spec.replicas``) keep an explicit ``0``.
Custom resources are stored as sent (no Go struct), so none of this applies to them.

:func:`normalize` applies both rules to an object about to be stored (create and every
update path), from the compact tables below (tags of the current ``k8s.io/api`` types the
embedded server models). Readers must therefore treat a missing counter as ``0``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from kube_runtime.client._registry import drop_empty_collections
from kube_runtime.meta import Obj

# Scalars tagged omitempty in a container (core/v1 Container), relative to one container.
_CONTAINER: Final = (("stdin", False), ("stdinOnce", False), ("tty", False), ("workingDir", ""))

# Scalars tagged omitempty in a PodSpec (pointers such as priority are not listed: kept).
_POD_SPEC: Final = (
    ("nodeName", ""),
    ("serviceAccountName", ""),
    ("serviceAccount", ""),
    ("hostNetwork", False),
    ("hostPID", False),
    ("hostIPC", False),
    ("hostname", ""),
    ("subdomain", ""),
    ("priorityClassName", ""),
)


def _pod_spec(prefix: str) -> tuple[tuple[str, Any], ...]:
    out = [(f"{prefix}.{name}", zero) for name, zero in _POD_SPEC]
    for containers in ("containers", "initContainers"):
        out += [(f"{prefix}.{containers}[].{name}", zero) for name, zero in _CONTAINER]
    return tuple(out)


_TEMPLATE: Final = _pod_spec("spec.template.spec")

#: (group, kind) -> (dotted path, zero value) of omitempty scalars dropped when zero; ``[]``
#: steps into every item of a list.
OMITTED_WHEN_ZERO: Final[dict[tuple[str, str], tuple[tuple[str, Any], ...]]] = {
    ("", "Pod"): (
        *_pod_spec("spec"),
        ("status.phase", ""),
        ("status.message", ""),
        ("status.reason", ""),
        ("status.nominatedNodeName", ""),
        ("status.hostIP", ""),
        ("status.podIP", ""),
        ("status.qosClass", ""),
    ),
    ("apps", "StatefulSet"): (
        *_TEMPLATE,
        ("spec.podManagementPolicy", ""),
        ("spec.minReadySeconds", 0),
        ("status.observedGeneration", 0),
        ("status.readyReplicas", 0),
        ("status.currentReplicas", 0),
        ("status.updatedReplicas", 0),
        ("status.currentRevision", ""),
        ("status.updateRevision", ""),
    ),
    ("apps", "Deployment"): (
        *_TEMPLATE,
        ("spec.minReadySeconds", 0),
        ("spec.paused", False),
        ("status.observedGeneration", 0),
        ("status.replicas", 0),
        ("status.updatedReplicas", 0),
        ("status.readyReplicas", 0),
        ("status.availableReplicas", 0),
        ("status.unavailableReplicas", 0),
    ),
    ("apps", "ReplicaSet"): (
        *_TEMPLATE,
        ("spec.minReadySeconds", 0),
        ("status.fullyLabeledReplicas", 0),
        ("status.readyReplicas", 0),
        ("status.availableReplicas", 0),
        ("status.observedGeneration", 0),
    ),
}

#: (group, kind) -> (dotted path, zero) of scalars without omitempty: always written, their
#: zero value when unset.
ALWAYS_WRITTEN: Final[dict[tuple[str, str], tuple[tuple[str, Any], ...]]] = {
    ("apps", "StatefulSet"): (("status.replicas", 0), ("status.availableReplicas", 0)),
    ("apps", "ReplicaSet"): (("status.replicas", 0),),
    ("", "Event"): (("reportingComponent", ""), ("reportingInstance", "")),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (
        ("status.acceptedNames.plural", ""),
        ("status.acceptedNames.kind", ""),
    ),
}


class _Zero:
    """A leaf of a table being compiled: the zero value of one field."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


#: A table being compiled: field name -> its zero (a leaf) or the table of what lies below
#: it; a name ending in ``[]`` steps into every item of that list.
_Tree = dict[str, "_Zero | _Tree"]

#: A compiled table, walked on every write: the leaves as (name, zero, type of the zero),
#: then the children as (name, whether it is a list of objects, the child's table).
_Node = tuple[tuple[tuple[str, Any, type], ...], tuple[tuple[str, bool, "_Node"], ...]]


def _compile(paths: Iterable[tuple[str, Any]]) -> _Node:
    """The table of ``(dotted path, zero)`` pairs, so one walk serves every path."""
    tree: _Tree = {}
    for dotted, zero in paths:
        *steps, name = dotted.split(".")
        node = tree
        for step in steps:
            child = node.setdefault(step, {})
            assert isinstance(child, dict)
            node = child
        node[name] = _Zero(zero)
    return _freeze(tree)


def _freeze(tree: _Tree) -> _Node:
    leaves = tuple(
        (name, node.value, type(node.value))
        for name, node in tree.items()
        if isinstance(node, _Zero)
    )
    children = tuple(
        (name.removesuffix("[]"), name.endswith("[]"), _freeze(node))
        for name, node in tree.items()
        if not isinstance(node, _Zero)
    )
    return leaves, children


_OMITTED: Final[dict[tuple[str, str], _Node]] = {
    key: _compile(paths) for key, paths in OMITTED_WHEN_ZERO.items()
}


def _drop_zeros(obj: Obj, node: _Node) -> None:
    leaves, children = node
    for name, zero, zero_type in leaves:
        # type() also keeps 0 and False apart (bool is an int subclass).
        if name in obj and type(value := obj[name]) is zero_type and value == zero:
            del obj[name]
    for name, is_list, below in children:
        child = obj.get(name)
        if is_list:
            if isinstance(child, list):
                for item in child:
                    if isinstance(item, dict):
                        _drop_zeros(item, below)
        elif isinstance(child, dict):
            _drop_zeros(child, below)


def normalize(group: str, kind: str, obj: Obj) -> None:
    """Drop the zero-valued omitempty scalars of ``obj`` (and empty omitempty maps and lists:
    metadata labels, annotations, finalizers, owner references; a ConfigMap's or Secret's
    data) and write the always-written scalars (in place), as kube-apiserver's encoding of
    a built-in kind would. Call it for built-in kinds only: custom resources are stored as
    sent."""
    drop_empty_collections(kind, obj)
    key = (group, kind)
    tree = _OMITTED.get(key)
    if tree is not None:
        _drop_zeros(obj, tree)
    for dotted, zero in ALWAYS_WRITTEN.get(key, ()):
        *steps, name = dotted.split(".")
        parent = obj
        for step in steps:
            child = parent.get(step)
            if not isinstance(child, dict):
                child = parent[step] = {}
            parent = child
        if parent.get(name) is None:
            parent[name] = zero
