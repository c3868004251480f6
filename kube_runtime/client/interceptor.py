"""The fault-injection seam of :class:`~kube_runtime.client.fake.FakeClient`.

Three pieces, all consumed by the fake client:

* :class:`Interceptor` - one optional hook per client method (controller-runtime's
  ``interceptor.Funcs``). A hook replaces the call: it gets the fake *without* interception
  (``fake.direct``) followed by the call's own arguments, and returns the call's result. To
  let a call through, call the same method on that client; to fail it, raise::

      def update(client, obj, **options):
          if obj["metadata"]["name"] == "web":
              raise conflict(kinds.StatefulSet, "web")
          return client.update(obj, **options)

      fake = FakeClient(objects=[...], interceptor=Interceptor(update=update))

  Status hooks (``status_update``, ``status_patch``) are called like ``status().update`` /
  ``status().patch``; subresource hooks get the subresource name before the arguments:
  ``subresource_get(client, "scale", kind, name, namespace)``.
* :class:`Action` - one recorded call (verb, kind, namespace, name, subresource), as
  ``fake.actions`` lists them for assertions. Verbs are the method names (:data:`VERBS`);
  status and subresource calls are ``get`` / ``update`` / ``patch`` with ``subresource``
  set.
* :class:`FaultQueue` - ``fake.fail_next(verb, error, times=1, when=predicate)``: the next
  ``times`` calls of ``verb`` for which ``when(action)`` holds raise ``error`` (an exception,
  or a function of the action returning one) instead of running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from kube_runtime.kinds import Kind

__all__ = ["VERBS", "Action", "ErrorSource", "FaultKeywords", "FaultQueue", "Hook", "Interceptor"]

#: The verbs of :class:`Action` and ``fail_next``: the client's method names.
VERBS = frozenset({"get", "list", "create", "update", "patch", "apply", "delete", "delete_all_of"})

#: A hook: ``hook(client, *args, **kwargs)`` with the intercepted call's arguments; returns
#: what the call returns (or raises). Its arguments mirror the method it replaces, so it is
#: typed loosely on purpose.
Hook = Callable[..., Any]


@dataclass(frozen=True)
class Interceptor:
    """Hooks replacing client calls (None: the call runs normally); see the module docstring."""

    get: Hook | None = None
    list: Hook | None = None
    create: Hook | None = None
    update: Hook | None = None
    patch: Hook | None = None
    apply: Hook | None = None
    delete: Hook | None = None
    delete_all_of: Hook | None = None
    status_update: Hook | None = None
    status_patch: Hook | None = None
    subresource_get: Hook | None = None
    subresource_update: Hook | None = None
    subresource_patch: Hook | None = None


@dataclass(frozen=True)
class Action:
    """One call the fake received. ``name`` is None for collection calls (list,
    delete_all_of) and for a create by ``generateName``; ``obj`` is a copy of the object or
    patch sent (not compared: assert on the other fields)."""

    verb: str
    kind: Kind
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None
    obj: Any = field(default=None, compare=False, repr=False)


#: What ``fail_next`` raises: an exception, or a function building one from the action.
ErrorSource = BaseException | Callable[[Action], BaseException]


class FaultKeywords(TypedDict, total=False):
    """The keywords of ``fail_next``: ``times`` (1) and ``when`` (None: every call), as
    :meth:`FaultQueue.add` takes them."""

    times: int
    when: Callable[[Action], bool] | None


@dataclass
class _Fault:
    verb: str
    error: ErrorSource
    times: int
    when: Callable[[Action], bool] | None


class FaultQueue:
    """Pending one-shot failures, matched in the order they were added (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[_Fault] = []

    def add(
        self,
        verb: str,
        error: ErrorSource,
        times: int = 1,
        when: Callable[[Action], bool] | None = None,
    ) -> None:
        """Fail the next ``times`` calls of ``verb`` (for which ``when(action)`` holds)."""
        if verb not in VERBS:
            raise ValueError(f"unknown verb {verb!r}: one of {sorted(VERBS)}")
        if times < 1:
            raise ValueError(f"times must be at least 1, got {times}")
        with self._lock:
            self._faults.append(_Fault(verb, error, times, when))

    def take(self, action: Action) -> BaseException | None:
        """The error the call ``action`` must raise, if a pending fault matches it (that
        fault is used up by one)."""
        with self._lock:
            for fault in self._faults:
                if fault.verb != action.verb:
                    continue
                if fault.when is not None and not fault.when(action):
                    continue
                fault.times -= 1
                if fault.times == 0:
                    self._faults.remove(fault)
                error = fault.error
                break
            else:
                return None
        return error if isinstance(error, BaseException) else error(action)

    def clear(self) -> None:
        """Drop every pending fault."""
        with self._lock:
            self._faults.clear()

    def __len__(self) -> int:
        with self._lock:
            return sum(f.times for f in self._faults)
