"""Coalesced status writes: several syncs of one object inside a short window make one write.

A workload controller recomputes its object's status on every sync, and a sync runs on
every event of every pod it owns, so while pods start one after another each small step
(one more replica created, one more ready) becomes a status write. :class:`CoalescingStatusWriter`
sits between the controller and the real writer and holds back a write, for at most
``window`` seconds from the first held-back change, so the steps of a burst collapse into
one write. What the kind's status means comes from one :class:`StatusPolicy` object (the
real write, and which changes count, cannot wait, or mean convergence):

* a write is made **at once** when ``policy.urgent(recorded, new)`` says the change cannot
  wait (the StatefulSet controller: a condition, i.e. a failure to report), or
  ``policy.final(obj, new)`` says the object has converged (so the converged status is never
  late), or the window (``window``, or ``policy.window_for(obj)`` if smaller) is 0;
* otherwise the status becomes the object's **pending** status (the latest one replaces an
  older pending one; the deadline stays that of the first) and the caller requeues the object
  for :meth:`~CoalescingStatusWriter.settle`'s delay;
* except while the object **progresses on its controller's own steps**: when the policy has a
  ``progressing(obj, status)`` method that says so (e.g. an OrderedReady StatefulSet part way
  through creating its pods, each one ready before the next), each new step moves the
  deadline to ``step_window`` seconds after it, but never past ``max_hold`` seconds after the
  first held change: the steps of a rollout the controller drives itself make one write (the
  converged status, written at once) as long as each follows the last within
  ``step_window``; a rollout that stops is written ``step_window`` after its last step, a
  long one every ``max_hold``. A held status that no longer progresses is due ``window``
  seconds after it at the latest; urgent changes (conditions) are never held;
* :meth:`~CoalescingStatusWriter.update_if_changed` is ``update_status`` for a status
  that ``policy.changed`` (compared once per sync: ``settle`` reuses the comparison);
* :meth:`~CoalescingStatusWriter.settle`, called at the end of every sync with the status the
  sync computed, writes the pending status once its deadline has passed, and drops it when
  the status computed equals the recorded one again (no write whose content equals the
  cache's);
* :meth:`~CoalescingStatusWriter.view` gives the object with its pending status laid over
  the recorded one: a sync must make its decisions on that view, where upstream reads the
  status it wrote last, so that no decision sees a status older than the controller's own.

A sync makes all of that one call, :meth:`~CoalescingStatusWriter.sync`: it decides on the
view, writes the pending status when the sync fails, and settles with the status it computed.

:class:`ApiStatusWriter` is the real write both bundled workload controllers build on: a PUT
of the status subresource whose written versions a sync waits for.

Pending statuses live in memory only: a restarted controller (or a new leader) recomputes
them on its first sync. Thread-safe; one sync per object at a time (the work queue's
guarantee) is assumed between :meth:`view` and :meth:`settle`.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kube_runtime import meta
from kube_runtime.clock import Clock, resolve
from kube_runtime.meta import ObjView as Obj

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client

__all__ = [
    "DEFAULT_MAX_HOLD",
    "DEFAULT_STEP_WINDOW",
    "DEFAULT_WINDOW",
    "ApiStatusWriter",
    "CoalescingStatusWriter",
    "StatusPolicy",
    "StatusWrite",
    "WrittenVersions",
]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

StatusWrite = Callable[[Obj, Obj], None]
"""Writes ``status`` (second argument) onto the object (first argument) through the API."""

DEFAULT_WINDOW = 1.0
"""Seconds a progress-only status change may wait for the next one (the staleness bound)."""

DEFAULT_STEP_WINDOW = 5.0
"""Seconds a status held while its object progresses on its controller's own steps (the
policy's ``progressing``) waits for the next step (see the module docstring)."""

DEFAULT_MAX_HOLD = 30.0
"""Seconds a progress-only status change may be held in all while its object keeps
progressing on its controller's own steps (see the module docstring)."""


class StatusPolicy(Protocol):
    """What a :class:`CoalescingStatusWriter` needs to know of a kind's status, in one object
    (the StatefulSet controller's
    :class:`~controllers.statefulset.status.ApiStatusUpdater` is one)."""

    def write(self, obj: Obj, status: Obj) -> None:
        """Write ``status`` onto ``obj`` through the API (the real write)."""

    def changed(self, obj: Obj, status: Obj) -> bool:
        """Whether ``status`` differs from ``obj``'s recorded status."""

    def urgent(self, recorded: Obj, status: Obj) -> bool:
        """Whether the difference from the ``recorded`` status must be written at once."""

    def final(self, obj: Obj, status: Obj) -> bool:
        """Whether ``status`` is the converged one (written at once)."""

    def window_for(self, obj: Obj) -> float:
        """The longest ``obj``'s status may be held back (``inf``: the writer's window)."""

    # Optional: ``progressing(obj, status) -> bool``, whether ``obj`` with ``status`` is part
    # way through a rollout its controller drives step by step (a held status may then wait
    # ``step_window`` for the next step, up to the writer's ``max_hold`` in all). A policy
    # without it holds every status at most ``window``.


@dataclasses.dataclass
class _Pending:
    uid: str
    status: dict[str, Any]
    deadline: float
    limit: float = float("inf")
    """The latest the deadline may move to (``max_hold`` after the first held change)."""
    compared: tuple[Obj, Obj] | None = None
    """``(recorded status, status)`` that :meth:`CoalescingStatusWriter.update_if_changed`
    found different when it held this status (:meth:`~CoalescingStatusWriter.settle` does not
    compare the same two objects again)."""


class CoalescingStatusWriter:
    """Holds back progress-only status writes per object for at most ``window`` seconds (see
    the module docstring).

    ``policy`` (a :class:`StatusPolicy`) makes the real write and says which changes count,
    cannot wait, or mean convergence; its ``window_for(obj)`` may shorten the window for one
    object (the smaller of the two applies), its optional ``progressing(obj, status)`` extend
    it to ``step_window`` seconds after each step while the object progresses, up to
    ``max_hold`` seconds in all (both at least the window). The windows run on
    ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock current when the writer
    is made).
    """

    def __init__(
        self,
        policy: StatusPolicy,
        *,
        window: float = DEFAULT_WINDOW,
        step_window: float = DEFAULT_STEP_WINDOW,
        max_hold: float = DEFAULT_MAX_HOLD,
        clock: Clock | None = None,
    ) -> None:
        if window < 0:
            raise ValueError(f"window must be >= 0, not {window}")
        self.policy = policy
        """What the kind's status means, and its real write."""
        self.window = window
        self.max_hold = max(window, max_hold)
        """The longest a held status waits in all while its object progresses."""
        self.step_window = min(self.max_hold, max(window, step_window))
        """The longest a held status of a progressing object waits for its next step."""
        self._progressing: Callable[[Obj, Obj], bool] | None = getattr(policy, "progressing", None)
        self._clock = resolve(clock, "CoalescingStatusWriter")
        self._monotonic = self._clock.monotonic
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], _Pending] = {}
        self.writes = 0
        """Writes made (immediate and flushed)."""
        self.held = 0
        """Statuses held back instead of written at once."""

    @property
    def clock(self) -> Clock:
        """The clock the windows run on."""
        return self._clock

    @staticmethod
    def _key(obj: Obj) -> tuple[str, str]:
        return meta.namespace(obj) or "", meta.name(obj)

    def _entry(self, obj: Obj) -> _Pending | None:
        """The pending status of ``obj`` (one of an older object of that name is dropped)."""
        key = self._key(obj)
        with self._lock:
            entry = self._pending.get(key)
            if entry is not None and entry.uid != meta.uid(obj):
                del self._pending[key]
                return None
            return entry

    def pending(self, obj: Obj) -> Mapping[str, Any] | None:
        """The status held back for ``obj``, or None."""
        entry = self._entry(obj)
        return None if entry is None else dict(entry.status)

    def view(self, obj: Obj) -> Obj:
        """``obj`` itself when nothing is pending; else a shallow copy whose ``status`` is the
        recorded status updated with the pending one (what the controller last decided)."""
        entry = self._entry(obj)
        if entry is None:
            return obj
        viewed = dict(obj)
        viewed["status"] = {**meta.status(obj), **entry.status}
        return viewed

    def update_status(self, obj: Obj, status: Obj) -> None:
        """Write ``status`` now (urgent, final, window 0, or the pending deadline passed) or
        hold it as ``obj``'s pending status. ``obj`` may be a :meth:`view`."""
        entry = self._entry(obj)
        now = self._monotonic()
        longest = self.policy.window_for(obj)
        window = max(0.0, min(self.window, longest))
        if (
            window == 0
            or self.policy.urgent(meta.status(obj), status)
            or self.policy.final(obj, status)
            or (entry is not None and now >= entry.deadline)
        ):
            self._flush(obj, status)
            return
        progressing = self._progressing is not None and self._progressing(obj, status)
        hold = max(window, min(self.max_hold, longest))
        step = min(hold, self.step_window)
        if entry is None:
            limit = now + hold
            deadline = min(limit, now + step) if progressing else now + window
        elif progressing and status != entry.status:
            # A new step of a rollout the controller drives: wait for the next one.
            limit = entry.limit
            deadline = min(limit, max(entry.deadline, now + step))
        elif progressing:
            deadline, limit = entry.deadline, entry.limit
        else:
            deadline, limit = min(entry.deadline, now + window), entry.limit
        with self._lock:
            self._pending[self._key(obj)] = _Pending(
                meta.uid(obj) or "", dict(status), deadline, limit
            )
            self.held += 1

    def update_if_changed(self, obj: Obj, status: Obj) -> bool:
        """:meth:`update_status` when ``policy.changed(obj, status)``; whether it was. The
        comparison is made once per sync: when ``obj`` is the recorded object (no pending
        status under it) and the status is held, :meth:`settle` with the same two objects
        reuses it."""
        if not self.policy.changed(obj, status):
            return False
        self.update_status(obj, status)
        key = self._key(obj)
        with self._lock:
            entry = self._pending.get(key)
            if entry is not None:
                entry.compared = (meta.status(obj), status)
        return True

    def settle(self, obj: Obj, status: Obj) -> float | None:
        """End of a sync of ``obj`` (as recorded, not a view) that computed ``status``: drop the
        pending status if ``status`` is what is recorded, write it if its deadline passed;
        return the seconds until the pending status is due (requeue the object then), or
        None when nothing is pending."""
        entry = self._entry(obj)
        if entry is None:
            return None
        compared = entry.compared
        known = compared is not None and compared[0] is meta.status(obj) and compared[1] is status
        if not known and not self.policy.changed(obj, status):
            self.discard(obj)
            return None
        left = entry.deadline - self._monotonic()
        if left <= 0:
            self._flush(obj, status)
            return None
        with self._lock:
            if not known:
                entry.status = dict(status)
                entry.compared = None
        return left

    def sync(self, obj: Obj, decide: Callable[[Obj], tuple[_T, Obj]]) -> tuple[_T, float | None]:
        """One sync of ``obj`` (as recorded): ``decide(view)`` makes the sync's decisions on
        the :meth:`view`, writing through :meth:`update_status` as it goes, and returns its
        result and the status it computed; then :meth:`settle`. Returns that result and
        :meth:`settle`'s delay (requeue the object then; None: nothing pending). When
        ``decide`` raises, the pending status is written first (:meth:`flush`) and the error
        propagates."""
        try:
            result, status = decide(self.view(obj))
        except Exception:
            self.flush(obj)
            raise
        return result, self.settle(obj, status)

    def flush(self, obj: Obj) -> None:
        """Write ``obj``'s pending status now, if any (e.g. when a sync fails)."""
        entry = self._entry(obj)
        if entry is not None:
            self._flush(obj, entry.status)

    def discard(self, obj: Obj) -> None:
        """Forget ``obj``'s pending status (e.g. a write elsewhere superseded it)."""
        self.forget(*self._key(obj))

    def forget(self, namespace: str, name: str) -> None:
        """Forget the pending status of the object ``namespace/name`` (it was deleted)."""
        with self._lock:
            self._pending.pop((namespace or "", name), None)

    def _flush(self, obj: Obj, status: Obj) -> None:
        """Write ``status``; a failed write stays pending, due at once (the caller's retry of
        the sync writes it)."""
        key = self._key(obj)
        with self._lock:
            self._pending.pop(key, None)
        try:
            self.policy.write(obj, status)
        except Exception:
            with self._lock:
                self._pending.setdefault(
                    key, _Pending(meta.uid(obj) or "", dict(status), self._monotonic())
                )
            raise
        with self._lock:
            self.writes += 1


class WrittenVersions(Protocol):
    """Where an :class:`ApiStatusWriter` records the versions it wrote (a
    :class:`~kube_runtime.expectations.ResourceVersionExpectations`)."""

    def expect(self, obj: Obj) -> None:
        """Remember ``obj``'s resourceVersion as written by this controller."""


class ApiStatusWriter:
    """The real status write of a workload controller: a PUT of ``obj``'s status
    subresource (:meth:`put`), each version written recorded in ``written`` (a
    :class:`~kube_runtime.expectations.ResourceVersionExpectations`) so that the next sync
    waits until its cache shows it (a decision read from an older status would undo this
    one). ``logger`` gets a debug record per write."""

    def __init__(
        self,
        client: Client,
        written: WrittenVersions,
        *,
        logger: logging.Logger | None = None,
    ) -> None:
        self._client = client
        self._written = written
        self.log = logger if logger is not None else log

    def put(self, obj: Obj, status: Obj, *, merge: bool = False) -> None:
        """PUT ``status`` as the status of a copy of ``obj`` (with its resourceVersion: a
        stale copy is a ``Conflict``, raised); ``merge``: laid over ``obj``'s recorded status,
        keeping the fields ``status`` lacks, instead of replacing it."""
        clone: dict[str, Any] = meta.deep_copy(dict(obj))
        clone["status"] = {**meta.status(clone), **status} if merge else dict(status)
        written = self._client.status().update(clone)
        if meta.metadata(written):
            self._written.expect(written)
        self.log.debug("%s: status written", meta.key(obj))
