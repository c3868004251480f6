"""Typed models: the base class and the shared types generated modules import.

``kube-runtime codegen`` (package ``codegen``) turns CRD manifests into modules of
:class:`KubeModel` subclasses; those modules import from here. :func:`validate_lenient` reads
a stored object its model no longer accepts (typed where it validates, as stored elsewhere).
"""

from kube_runtime.models.base import KubeModel, model_default
from kube_runtime.models.lenient import construct_lenient, validate_lenient
from kube_runtime.models.meta import (
    Condition,
    EmbeddedResource,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
)
from kube_runtime.models.types import Base64, DateTime, parse_datetime

__all__ = [
    "Base64",
    "Condition",
    "DateTime",
    "EmbeddedResource",
    "KubeModel",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "construct_lenient",
    "model_default",
    "parse_datetime",
    "validate_lenient",
]
