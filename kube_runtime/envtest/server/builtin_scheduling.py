"""``scheduling.k8s.io/v1`` PriorityClass and ``node.k8s.io/v1`` RuntimeClass as
kube-apiserver serves them.

PriorityClass: upstream's ``ValidatePriorityClass`` / ``ValidatePriorityClassUpdate`` (the
``system-`` prefix reserved for the two system classes, user values up to one billion,
``value`` and ``preemptionPolicy`` fixed after creation) and ``printPriorityClass``; its
``preemptionPolicy`` default is :mod:`.defaults`'. RuntimeClass: ``ValidateRuntimeClass``
(a DNS-1123 label ``handler``, immutable) and ``printRuntimeClass``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.admission import system_priority_classes
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.storage import Obj, Store
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _int, _str
from kube_runtime.envtest.server.validation import is_dns1123_label

__all__ = [
    "PRIORITY_CLASS_COLUMNS",
    "RUNTIME_CLASS_COLUMNS",
    "SYSTEM_PRIORITY_CLASSES",
    "check_priority_class",
    "check_runtime_class",
    "priority_classes",
]

#: The system priority classes kube-apiserver creates, by name: their values.
SYSTEM_PRIORITY_CLASSES: Final = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
_HIGHEST_USER_PRIORITY: Final = 1000000000
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")


def priority_classes(store: Store) -> list[Obj]:
    """Every PriorityClass that exists, for pod admission: the two system classes
    kube-apiserver creates at start, then the stored ones (a stored system class wins).

    While no PriorityClass changes, every call returns the same list (built once: pods are
    created on hot paths; :class:`~.admission.Admission` keeps its index of the classes as
    long as it gets the same list). Callers must not mutate it."""
    cached: tuple[int, list[Obj]] | None = store.derived.get(_DERIVED)
    if cached is not None and cached[0] == store.changes_of(_KEY):  # no class changed
        return cached[1]
    info = store.registry.by_key(*_KEY)
    changes = store.changes_of(_KEY)  # 0 as long as no class was ever stored
    found = list(system_priority_classes())
    if info is not None:
        found += [stored.obj for stored in store.objects(info)]
    store.derived[_DERIVED] = (changes, found)
    return found


#: The storage key of PriorityClasses.
_KEY: Final = ("scheduling.k8s.io", "priorityclasses")
#: Where :func:`priority_classes` keeps (the classes' change counter, its list) in a store.
_DERIVED: Final = "scheduling.priority_classes"


def check_priority_class(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidatePriorityClass`` (+ ``Update``)."""
    name = _str(fe.as_map(obj.get("metadata")).get("name"))
    value = obj.get("value")
    if name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        error = None
        if known is None:
            error = f"{name} is not a known system priority class"
        elif value != known:
            error = f"value of {name} PriorityClass must be {known}"
        if error is not None:
            out.append(
                fe.forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use "
                    f"only. error: {error}",
                )
            )
    elif isinstance(value, int) and value > _HIGHEST_USER_PRIORITY:
        out.append(
            fe.forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {_HIGHEST_USER_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in _PREEMPTION_POLICIES:
        out.append(fe.not_supported("preemptionPolicy", policy, _PREEMPTION_POLICIES))
    if old is None:
        return
    if old.get("value") != value:
        # upstream names the path "Value" here
        out.append(fe.forbidden("Value", "may not be changed in an update."))
    if old.get("preemptionPolicy") != policy:
        out.append(fe.invalid("preemptionPolicy", policy, fe.IMMUTABLE))


PRIORITY_CLASS_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Value", lambda o: _int(o.get("value")), "integer"),
    _col("Global-Default", lambda o: o.get("globalDefault") is True, "boolean"),
    AGE,
]


def check_runtime_class(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateRuntimeClass`` (+ ``Update``: the handler is immutable)."""
    handler = obj.get("handler")
    if not handler:
        out.append(fe.required("handler"))
    elif isinstance(handler, str):
        for msg in is_dns1123_label(handler):
            out.append(fe.invalid("handler", handler, msg))
    if old is not None and old.get("handler") != handler:
        out.append(fe.invalid("handler", handler, fe.IMMUTABLE))


RUNTIME_CLASS_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Handler", lambda o: _str(o.get("handler"))),
    AGE,
]
