"""The informer cache: reflector (list+watch), indexed thread-safe store, shared informers.

Objects handed out by anything in this package are shared with every other reader: never
mutate them; deep-copy before changing. See ``docs/framework.md`` ("Cache").
"""

from kube_runtime.cache import informer, reflector, store
from kube_runtime.cache._multinamespace import MultiNamespaceInformer
from kube_runtime.cache.cache import InformerCache, NamespaceNotCached
from kube_runtime.cache.informer import *  # noqa: F403 (handlers, SharedInformer)
from kube_runtime.cache.options import ALL_NAMESPACES, DEFAULT_TRANSFORM, ByObject, NamespaceConfig
from kube_runtime.cache.reflector import *  # noqa: F403 (Reflector, backoff)
from kube_runtime.cache.store import *  # noqa: F403 (Indexer, index names, object_key)

__all__ = [
    "ALL_NAMESPACES",
    "DEFAULT_TRANSFORM",
    "ByObject",
    "InformerCache",
    "MultiNamespaceInformer",
    "NamespaceConfig",
    "NamespaceNotCached",
]
__all__ += informer.__all__
__all__ += reflector.__all__
__all__ += store.__all__
