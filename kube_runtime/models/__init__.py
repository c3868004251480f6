"""Typed models: the base class and the shared types generated modules import.

``kube-runtime codegen`` (package ``codegen``) turns CRD manifests into modules of
:class:`KubeModel` subclasses; those modules import only from here (and
:class:`kube_runtime.client.Resource`), never from the generator: the metadata types, the
shared core types (:class:`LabelSelector`, :class:`Condition`, :class:`OwnerReference`, ...),
the default factories (:func:`model_default`, :func:`typed_default`) and :mod:`crd`, the
annotations ``kube-runtime crd generate`` reads back (``__crd__: ClassVar[crd.Config]``, field
markers, CEL rules). :func:`validate_lenient` reads a stored object its model no longer
accepts (typed where it validates, as stored elsewhere).
"""

from kube_runtime.models import crd
from kube_runtime.models._base import KubeModel, model_default, typed_default
from kube_runtime.models._lenient import construct_lenient, validate_lenient
from kube_runtime.models._meta import (
    Condition,
    EmbeddedResource,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
)
from kube_runtime.models._selector import LabelSelector, LabelSelectorRequirement
from kube_runtime.models._types import Base64, DateTime, parse_datetime

__all__ = [
    "Base64",
    "Condition",
    "DateTime",
    "EmbeddedResource",
    "KubeModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
    "construct_lenient",
    "crd",
    "model_default",
    "parse_datetime",
    "typed_default",
    "validate_lenient",
]
