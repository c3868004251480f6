"""Object metadata models shared by every generated module (meta.k8s.io/v1 shapes).

Timestamps are :data:`~kube_runtime.models._types.DateTime` strings (kept verbatim);
``managedFields[].fieldsV1`` is free-form JSON. All models keep unknown fields
(:class:`~kube_runtime.models._base.KubeModel`).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from kube_runtime.models._base import KubeModel
from kube_runtime.models._types import DateTime

__all__ = [
    "CONDITION_MESSAGE_MAX_LENGTH",
    "CONDITION_REASON_MAX_LENGTH",
    "CONDITION_REASON_PATTERN",
    "CONDITION_TYPE_MAX_LENGTH",
    "CONDITION_TYPE_PATTERN",
    "Condition",
    "EmbeddedResource",
    "ManagedFieldsEntry",
    "ObjectMeta",
    "OwnerReference",
]


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


CONDITION_TYPE_PATTERN: Final = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
"""A condition's ``type``: a qualified name, optionally prefixed (``example.com/Ready``)."""
CONDITION_TYPE_MAX_LENGTH: Final = 316
CONDITION_REASON_PATTERN: Final = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
"""A condition's ``reason``: a CamelCase identifier (``MinimumReplicasAvailable``)."""
CONDITION_REASON_MAX_LENGTH: Final = 1024
CONDITION_MESSAGE_MAX_LENGTH: Final = 32768


class Condition(KubeModel):
    """One aspect of an object's current state (a metav1.Condition): type, status, the last
    transition time, a CamelCase reason and a message (which may be empty) are required."""

    type: str = Field(
        max_length=CONDITION_TYPE_MAX_LENGTH,
        pattern=CONDITION_TYPE_PATTERN,
        description="The condition's type, CamelCase or prefixed (example.com/CamelCase).",
    )
    status: Literal["True", "False", "Unknown"] = Field(
        description="The condition's status: True, False or Unknown."
    )
    observed_generation: int | None = Field(
        default=None,
        ge=0,
        validation_alias="observedGeneration",
        serialization_alias="observedGeneration",
        json_schema_extra={"format": "int64"},
        description="The metadata.generation the condition was set from.",
    )
    last_transition_time: DateTime = Field(
        validation_alias="lastTransitionTime",
        serialization_alias="lastTransitionTime",
        description="When the status last changed.",
    )
    reason: str = Field(
        min_length=1,
        max_length=CONDITION_REASON_MAX_LENGTH,
        pattern=CONDITION_REASON_PATTERN,
        description="Why the status last changed, a CamelCase identifier; never empty.",
    )
    message: str = Field(
        max_length=CONDITION_MESSAGE_MAX_LENGTH,
        description="What a person should know about the transition; may be empty.",
    )


class EmbeddedResource(KubeModel):
    """An object embedded in another (``x-kubernetes-embedded-resource``) whose schema keeps
    unknown fields: apiVersion, kind and metadata typed, everything else kept as is."""

    api_version: str | None = Field(
        default=None, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str | None = None
    metadata: ObjectMeta | None = None
