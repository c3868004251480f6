"""The informer cache: reflector (list+watch), indexed thread-safe store, shared informers.

Objects handed out by anything in this package are shared with every other reader: never
mutate them; deep-copy before changing. See ``docs/framework.md`` ("Cache").
"""

from kube_runtime.cache.cache import InformerCache
from kube_runtime.cache.informer import (
    HandlerRegistration,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    SharedInformer,
)
from kube_runtime.cache.reflector import BackoffPolicy, ExponentialBackoff, Reflector, ReflectorSink
from kube_runtime.cache.store import (
    INDEX_CONTROLLER_UID,
    INDEX_LABEL,
    INDEX_NAMESPACE,
    CacheMutationError,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    object_key,
)

__all__ = [
    "INDEX_CONTROLLER_UID",
    "INDEX_LABEL",
    "INDEX_NAMESPACE",
    "BackoffPolicy",
    "CacheMutationError",
    "DeletedFinalStateUnknown",
    "ExponentialBackoff",
    "HandlerRegistration",
    "IndexFunc",
    "Indexer",
    "InformerCache",
    "Reflector",
    "ReflectorSink",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "SharedInformer",
    "object_key",
]
