"""Object metadata models shared by every generated module (meta.k8s.io/v1 shapes).

Timestamps are :data:`~kube_runtime.models.types.DateTime` strings (kept verbatim);
``managedFields[].fieldsV1`` is free-form JSON. All models keep unknown fields
(:class:`~kube_runtime.models.base.KubeModel`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kube_runtime.models.base import KubeModel
from kube_runtime.models.types import DateTime

__all__ = ["Condition", "EmbeddedResource", "ManagedFieldsEntry", "ObjectMeta", "OwnerReference"]


class OwnerReference(KubeModel):
    """An owner of an object (garbage collection, controller references)."""

    api_version: str = Field(validation_alias="apiVersion", serialization_alias="apiVersion")
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = Field(
        default=None,
        validation_alias="blockOwnerDeletion",
        serialization_alias="blockOwnerDeletion",
    )


class ManagedFieldsEntry(KubeModel):
    """One field manager's entry in ``metadata.managedFields`` (server-side apply)."""

    manager: str | None = None
    operation: Literal["Apply", "Update"] | str | None = None
    api_version: str | None = Field(
        default=None, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    time: DateTime | None = None
    fields_type: str | None = Field(
        default=None, validation_alias="fieldsType", serialization_alias="fieldsType"
    )
    fields_v1: dict[str, Any] | None = Field(
        default=None, validation_alias="fieldsV1", serialization_alias="fieldsV1"
    )
    subresource: str | None = None


class ObjectMeta(KubeModel):
    """``metadata`` of every persisted object."""

    name: str | None = None
    generate_name: str | None = Field(
        default=None, validation_alias="generateName", serialization_alias="generateName"
    )
    namespace: str | None = None
    self_link: str | None = Field(
        default=None, validation_alias="selfLink", serialization_alias="selfLink"
    )
    uid: str | None = None
    resource_version: str | None = Field(
        default=None, validation_alias="resourceVersion", serialization_alias="resourceVersion"
    )
    generation: int | None = None
    creation_timestamp: DateTime | None = Field(
        default=None,
        validation_alias="creationTimestamp",
        serialization_alias="creationTimestamp",
    )
    deletion_timestamp: DateTime | None = Field(
        default=None,
        validation_alias="deletionTimestamp",
        serialization_alias="deletionTimestamp",
    )
    deletion_grace_period_seconds: int | None = Field(
        default=None,
        validation_alias="deletionGracePeriodSeconds",
        serialization_alias="deletionGracePeriodSeconds",
    )
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = Field(
        default=None, validation_alias="ownerReferences", serialization_alias="ownerReferences"
    )
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = Field(
        default=None, validation_alias="managedFields", serialization_alias="managedFields"
    )


class Condition(KubeModel):
    """A ``metav1.Condition`` (the standard shape of ``status.conditions`` entries)."""

    type: str
    status: Literal["True", "False", "Unknown"]
    observed_generation: int | None = Field(
        default=None,
        validation_alias="observedGeneration",
        serialization_alias="observedGeneration",
    )
    last_transition_time: DateTime | None = Field(
        default=None,
        validation_alias="lastTransitionTime",
        serialization_alias="lastTransitionTime",
    )
    reason: str | None = None
    message: str | None = None


class EmbeddedResource(KubeModel):
    """An object embedded in another (``x-kubernetes-embedded-resource``) whose schema keeps
    unknown fields: apiVersion, kind and metadata typed, everything else kept as is."""

    api_version: str | None = Field(
        default=None, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str | None = None
    metadata: ObjectMeta | None = None
