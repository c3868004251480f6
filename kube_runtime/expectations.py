"""Expectations: what a controller has asked the API for and not yet seen in its cache.

After creating or deleting objects a controller's cache lags behind the API; acting again on
the stale view would create or delete twice. The controller records what it expects to
observe, its event handlers tick the expectations off as the informer delivers the objects,
and the next sync acts only once they are satisfied, or after a timeout in case an event was
lost. Two families, both thread-safe (one lock per structure) with an injectable monotonic
``clock`` (seconds) so tests control time:

* kubernetes ``pkg/controller/controller_utils.go``: :class:`ControllerExpectations` counts
  creations/deletions per controller key; :class:`UIDTrackingControllerExpectations` also
  remembers *which* objects it deletes, so a deletion observed twice counts once.
  ``satisfied(key)`` is True when the counts are met, when they were set more than ``ttl``
  seconds ago (expired, logged), or when none were ever set. Records are dropped
  automatically ``ttl`` seconds after they expire (a ``cachetools.TTLCache`` on the same
  clock), so keys of controllers deleted without :meth:`~ControllerExpectations.delete_expectations`
  do not pile up; an expired record still exists until then, as upstream.
* openkruise ``pkg/util/expectations``: :class:`ScaleExpectations` (named objects expected to
  be created or deleted), :class:`UpdateExpectations` (objects expected at a revision) and
  :class:`ResourceVersionExpectations` (an object expected at or after a resourceVersion).
  They never expire by themselves: ``satisfied_expectations`` / ``is_satisfied`` report how long
  they have been unsatisfied (measured from the first check that found them so) and the caller
  gives up after :data:`EXPECTATIONS_TIMEOUT`, as kruise's controllers do.

A sync turns a check into "go on" or "come back later" with :func:`wait_result`, one helper
for every expectation a controller waits on.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from cachetools import TTLCache

from kube_runtime import clock as _clock
from kube_runtime.reconcile import Result

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "REVISION_HASH_LABEL",
    "ControlleeExpectations",
    "ControllerExpectations",
    "ResourceVersionExpectations",
    "RevisionMatcher",
    "ScaleAction",
    "ScaleExpectations",
    "UIDTrackingControllerExpectations",
    "UpdateExpectations",
    "equal_to_revision_hash",
    "is_resource_version_newer",
    "wait_result",
]

log = logging.getLogger(__name__)

Clock = Callable[[], float]
"""A monotonic time function (the old way of giving expectations a clock)."""

ClockLike = _clock.Clock | Clock | None
"""What the expectations take as ``clock``: a :class:`kube_runtime.clock.Clock` (None: the
current one, captured at construction); a bare monotonic function still works for one release
(deprecated)."""


def _timer(clock: ClockLike, owner: str) -> Clock:
    """The monotonic time function of ``clock`` (see :data:`ClockLike`)."""
    return _clock.resolve(clock, owner).monotonic


EXPECTATIONS_TIMEOUT: Final = 300.0
"""Seconds after which expectations are given up on (upstream ``ExpectationsTimeout``, 5 min)."""

REVISION_HASH_LABEL: Final = "controller-revision-hash"
"""The label carrying a pod's revision (``apps/v1`` ``ControllerRevisionHashLabelKey``)."""


# --- kubernetes: ControllerExpectations ------------------------------------------------------


@dataclasses.dataclass
class ControlleeExpectations:
    """Creations (``add``) and deletions (``delete``) still expected for one controller key,
    and when they were set (``timestamp``, on the expectations' clock)."""

    key: str
    add: int
    delete: int
    timestamp: float

    def fulfilled(self) -> bool:
        """Nothing more to observe (counts may go negative: more observed than expected)."""
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Upstream ``ControllerExpectations``: per-key counts of creations/deletions to observe.

    The controller calls :meth:`expect_creations` / :meth:`expect_deletions` (or
    :meth:`set_expectations`) *before* issuing the requests, :meth:`lower_expectations` for
    requests that failed, and its event handlers call :meth:`creation_observed` /
    :meth:`deletion_observed`. A sync proceeds when :meth:`satisfied` is True.
    """

    def __init__(self, ttl: float = EXPECTATIONS_TIMEOUT, clock: ClockLike = None) -> None:
        self.ttl = ttl
        self._clock = clock = _timer(clock, "ControllerExpectations")
        self._lock = threading.Lock()
        # Kept for two ttls: the second one lets an expired record be seen (and logged) as such.
        self._store: TTLCache[str, ControlleeExpectations] = TTLCache(
            maxsize=math.inf, ttl=2 * ttl, timer=clock
        )

    def get_expectations(self, key: str) -> ControlleeExpectations | None:
        """A copy of the record for ``key``, or None."""
        with self._lock:
            exp = self._store.get(key)
            return dataclasses.replace(exp) if exp is not None else None

    def satisfied(self, key: str) -> bool:
        """True when ``key``'s expectations are met, expired, or were never set (or dropped)."""
        with self._lock:
            exp = self._store.get(key)
            if exp is None:
                log.debug(
                    "controller %s either never recorded expectations, or they were dropped", key
                )
                return True
            if exp.fulfilled():
                log.debug("controller expectations fulfilled for %s: %s", key, exp)
                return True
            if self._clock() - exp.timestamp > self.ttl:
                log.info("controller expectations expired for %s: %s", key, exp)
                return True
            log.debug("controller %s still waiting on expectations: %s", key, exp)
            return False

    def set_expectations(self, key: str, add: int, delete: int) -> None:
        """Replace ``key``'s record with these counts, timestamped now."""
        with self._lock:
            self._store[key] = ControlleeExpectations(key, add, delete, self._clock())
        log.debug("controller %s expects %d creations and %d deletions", key, add, delete)

    def expect_creations(self, key: str, adds: int) -> None:
        """``set_expectations(key, adds, 0)``."""
        self.set_expectations(key, adds, 0)

    def expect_deletions(self, key: str, dels: int) -> None:
        """``set_expectations(key, 0, dels)``."""
        self.set_expectations(key, 0, dels)

    def lower_expectations(self, key: str, add: int, delete: int) -> None:
        """Subtract from an existing record (no-op without one); the timestamp is kept."""
        self._adjust(key, -add, -delete)

    def raise_expectations(self, key: str, add: int, delete: int) -> None:
        """Add to an existing record (no-op without one); the timestamp is kept."""
        self._adjust(key, add, delete)

    def creation_observed(self, key: str) -> None:
        """One expected creation was seen: ``lower_expectations(key, 1, 0)``."""
        self.lower_expectations(key, 1, 0)

    def deletion_observed(self, key: str) -> None:
        """One expected deletion was seen: ``lower_expectations(key, 0, 1)``."""
        self.lower_expectations(key, 0, 1)

    def delete_expectations(self, key: str) -> None:
        """Forget ``key`` (the controller object was deleted)."""
        with self._lock:
            self._store.pop(key, None)

    def _adjust(self, key: str, add: int, delete: int) -> None:
        with self._lock:
            exp = self._store.get(key)
            if exp is None:
                return
            exp.add += add
            exp.delete += delete
            log.debug("controller %s expectations now add=%d del=%d", key, exp.add, exp.delete)


class UIDTrackingControllerExpectations:
    """Upstream ``UIDTrackingControllerExpectations``: deletions tracked by object identity.

    :meth:`expect_deletions` records the uids (or keys) of the objects being deleted;
    :meth:`deletion_observed` lowers the count only for a recorded identity, once, so a
    deletion seen both as an update with a deletionTimestamp and as a delete event counts
    once. Everything else delegates to the wrapped :class:`ControllerExpectations`.
    """

    def __init__(self, ttl: float = EXPECTATIONS_TIMEOUT, clock: ClockLike = None) -> None:
        resolved = _clock.resolve(clock, "UIDTrackingControllerExpectations")
        self.expectations = ControllerExpectations(ttl, resolved)  # resolved: no second warning
        self._lock = threading.Lock()
        self._uids: TTLCache[str, set[str]] = TTLCache(
            maxsize=math.inf, ttl=2 * ttl, timer=resolved.monotonic
        )

    def get_uids(self, key: str) -> set[str] | None:
        """A copy of the identities still expected to be deleted for ``key``, or None."""
        with self._lock:
            uids = self._uids.get(key)
            return set(uids) if uids is not None else None

    def expect_deletions(self, key: str, uids: Iterable[str]) -> None:
        """Expect the deletion of exactly these objects (replacing earlier expectations)."""
        expected = set(uids)
        with self._lock:
            existing = self._uids.get(key)
            if existing:
                log.warning(
                    "controller %s: clobbering deletions still expected: %s", key, sorted(existing)
                )
            self._uids[key] = expected
            self.expectations.expect_deletions(key, len(expected))
        log.debug("controller %s waiting on deletions of %s", key, sorted(expected))

    def deletion_observed(self, key: str, uid: str) -> None:
        """``uid`` was seen deleted: lower the count if it was expected and not counted yet."""
        with self._lock:
            uids = self._uids.get(key)
            if uids is None or uid not in uids:
                return
            uids.discard(uid)
            self.expectations.deletion_observed(key)
        log.debug("controller %s observed the deletion of %s", key, uid)

    def delete_expectations(self, key: str) -> None:
        """Forget ``key``'s counts and identities."""
        with self._lock:
            self.expectations.delete_expectations(key)
            self._uids.pop(key, None)

    def satisfied(self, key: str) -> bool:
        """See :meth:`ControllerExpectations.satisfied`."""
        return self.expectations.satisfied(key)

    def get_expectations(self, key: str) -> ControlleeExpectations | None:
        """See :meth:`ControllerExpectations.get_expectations`."""
        return self.expectations.get_expectations(key)

    def set_expectations(self, key: str, add: int, delete: int) -> None:
        """See :meth:`ControllerExpectations.set_expectations`."""
        self.expectations.set_expectations(key, add, delete)

    def expect_creations(self, key: str, adds: int) -> None:
        """See :meth:`ControllerExpectations.expect_creations`."""
        self.expectations.expect_creations(key, adds)

    def creation_observed(self, key: str) -> None:
        """See :meth:`ControllerExpectations.creation_observed`."""
        self.expectations.creation_observed(key)

    def lower_expectations(self, key: str, add: int, delete: int) -> None:
        """See :meth:`ControllerExpectations.lower_expectations`."""
        self.expectations.lower_expectations(key, add, delete)

    def raise_expectations(self, key: str, add: int, delete: int) -> None:
        """See :meth:`ControllerExpectations.raise_expectations`."""
        self.expectations.raise_expectations(key, add, delete)


# --- openkruise: scale, update and resourceVersion expectations ------------------------------


class ScaleAction(str, enum.Enum):
    """What a :class:`ScaleExpectations` entry waits for."""

    CREATE = "create"
    DELETE = "delete"


@dataclasses.dataclass
class _ScaleRecord:
    names: dict[ScaleAction, set[str]]
    first_unsatisfied: float | None = None


class ScaleExpectations:
    """Kruise ``ScaleExpectations``: named objects a controller expects to see created/deleted.

    A controller key's record disappears as soon as nothing is expected any more.
    """

    def __init__(self, clock: ClockLike = None) -> None:
        self._clock = _timer(clock, type(self).__name__)
        self._lock = threading.Lock()
        self._records: dict[str, _ScaleRecord] = {}

    def expect_scale(self, controller_key: str, action: ScaleAction | str, name: str) -> None:
        """Expect ``name`` to be observed created (or deleted)."""
        action = ScaleAction(action)
        with self._lock:
            record = self._records.setdefault(controller_key, _ScaleRecord({}))
            record.names.setdefault(action, set()).add(name)

    def observe_scale(self, controller_key: str, action: ScaleAction | str, name: str) -> None:
        """``name`` was observed created (or deleted); drop the record once nothing is left."""
        action = ScaleAction(action)
        with self._lock:
            record = self._records.get(controller_key)
            if record is None or action not in record.names:
                return
            record.names[action].discard(name)
            if not any(record.names.values()):
                del self._records[controller_key]

    def satisfied_expectations(
        self, controller_key: str
    ) -> tuple[bool, float, dict[ScaleAction, list[str]]]:
        """``(satisfied, seconds unsatisfied, {action: sorted names still expected})``.

        The duration counts from the first call that found the record unsatisfied. Kruise
        reports the names of one unsatisfied action (whichever its map yields first); this
        reports every unsatisfied action. A satisfied record is dropped.
        """
        with self._lock:
            record = self._records.get(controller_key)
            if record is None:
                return True, 0.0, {}
            pending = {a: sorted(n) for a, n in record.names.items() if n}
            if pending:
                now = self._clock()
                if record.first_unsatisfied is None:
                    record.first_unsatisfied = now
                return False, now - record.first_unsatisfied, pending
            del self._records[controller_key]
            return True, 0.0, {}

    def get_expectations(self, controller_key: str) -> dict[ScaleAction, set[str]] | None:
        """A copy of the names expected per action, or None."""
        with self._lock:
            record = self._records.get(controller_key)
            if record is None:
                return None
            return {a: set(n) for a, n in record.names.items()}

    def delete_expectations(self, controller_key: str) -> None:
        """Forget ``controller_key``."""
        with self._lock:
            self._records.pop(controller_key, None)


RevisionMatcher = Callable[[str, Mapping[str, Any], str], bool]
"""``(controller_key, obj, revision) -> bool``: whether ``obj`` is at ``revision``."""


def equal_to_revision_hash(controller_key: str, obj: Mapping[str, Any], revision: str) -> bool:
    """Kruise's default revision adapter: the object's ``controller-revision-hash`` label equals
    ``revision``, or both end in the same hash after their last ``-`` (``web-5d4f`` ~ ``5d4f``)."""
    # Every pod of every sync (and below, _object_key / _uid_and_version): plain dict reads; a
    # kube_runtime.meta accessor costs about four times as much.
    labels = (obj.get("metadata") or {}).get("labels") or {}
    current = labels.get(REVISION_HASH_LABEL, "")
    if current == revision:
        return True
    return bool(current.rsplit("-", 1)[-1] == revision.rsplit("-", 1)[-1])


@dataclasses.dataclass
class _UpdateRecord:
    revision: str
    names: set[str]
    first_unsatisfied: float | None = None


class UpdateExpectations:
    """Kruise ``UpdateExpectations``: objects expected to be observed at a revision.

    One revision per controller key: expecting an update to a new revision forgets the
    objects expected at the previous one. ``equal_to_revision`` decides whether an observed
    object is at a revision (default :func:`equal_to_revision_hash`).
    """

    def __init__(
        self,
        equal_to_revision: RevisionMatcher = equal_to_revision_hash,
        clock: ClockLike = None,
    ) -> None:
        self._equal = equal_to_revision
        self._clock = _timer(clock, type(self).__name__)
        self._lock = threading.Lock()
        self._records: dict[str, _UpdateRecord] = {}

    def expect_updated(self, controller_key: str, revision: str, obj: Mapping[str, Any]) -> None:
        """Expect ``obj`` to be observed at ``revision``."""
        with self._lock:
            record = self._records.get(controller_key)
            if record is None or record.revision != revision:
                record = self._records[controller_key] = _UpdateRecord(revision, set())
            record.names.add(_object_key(obj))

    def observe_updated(self, controller_key: str, revision: str, obj: Mapping[str, Any]) -> None:
        """``obj`` was observed; tick it off if it is at the expected ``revision``.

        The record is dropped when nothing is left, or when ``revision`` is not the expected
        one (the controller moved on).
        """
        with self._lock:
            record = self._records.get(controller_key)
            if record is None:
                return
            key = _object_key(obj)
            if (
                record.revision == revision
                and key in record.names
                and self._equal(controller_key, obj, revision)
            ):
                record.names.discard(key)
            if record.revision != revision or not record.names:
                del self._records[controller_key]

    def delete_object(self, controller_key: str, obj: Mapping[str, Any]) -> None:
        """Stop waiting for ``obj`` (it was deleted)."""
        with self._lock:
            record = self._records.get(controller_key)
            if record is not None:
                record.names.discard(_object_key(obj))

    def satisfied_expectations(
        self, controller_key: str, revision: str
    ) -> tuple[bool, float, list[str]]:
        """``(satisfied, seconds unsatisfied, sorted "ns/name" keys still expected)``.

        Expectations for another revision do not hold back a sync at ``revision``.
        """
        with self._lock:
            record = self._records.get(controller_key)
            if record is None:
                return True, 0.0, []
            if record.revision != revision:
                record.first_unsatisfied = None
                return True, 0.0, []
            if record.names:
                now = self._clock()
                if record.first_unsatisfied is None:
                    record.first_unsatisfied = now
                return False, now - record.first_unsatisfied, sorted(record.names)
            record.first_unsatisfied = None
            return True, 0.0, []

    def delete_expectations(self, controller_key: str) -> None:
        """Forget ``controller_key``."""
        with self._lock:
            self._records.pop(controller_key, None)


@dataclasses.dataclass
class _VersionRecord:
    version: str
    first_unsatisfied: float | None = None


class ResourceVersionExpectations:
    """Kruise ``ResourceVersionExpectation``: an object (by uid) expected at or after a version.

    After writing an object, :meth:`expect` it with the version the write returned; the cache
    copy satisfies it once its resourceVersion is at least that. Versions are compared as
    unsigned integers when both parse as such (they do on kube-apiserver and the embedded
    server); an expected version that is not a number is satisfied by any observation, an
    observed one that is not a number satisfies nothing (kruise's rules).
    """

    def __init__(self, clock: ClockLike = None) -> None:
        self._clock = _timer(clock, type(self).__name__)
        self._lock = threading.Lock()
        self._records: dict[str, _VersionRecord] = {}

    def expect(self, obj: Mapping[str, Any]) -> None:
        """Expect ``obj``'s uid at its resourceVersion (raising an earlier expected version)."""
        uid, version = _uid_and_version(obj)
        with self._lock:
            record = self._records.setdefault(uid, _VersionRecord(""))
            if is_resource_version_newer(record.version, version):
                record.version = version

    def observe(self, obj: Mapping[str, Any]) -> None:
        """``obj`` was observed: drop the expectation if it is at or after the version."""
        uid, version = _uid_and_version(obj)
        with self._lock:
            record = self._records.get(uid)
            if record is not None and is_resource_version_newer(record.version, version):
                del self._records[uid]

    def is_satisfied(self, obj: Mapping[str, Any]) -> tuple[bool, float]:
        """``(satisfied, seconds unsatisfied)`` for the copy ``obj`` (dropped when satisfied)."""
        uid, version = _uid_and_version(obj)
        with self._lock:
            record = self._records.get(uid)
            if record is None:
                return True, 0.0
            if is_resource_version_newer(record.version, version):
                del self._records[uid]
                return True, 0.0
            now = self._clock()
            if record.first_unsatisfied is None:
                record.first_unsatisfied = now
            return False, now - record.first_unsatisfied

    def delete(self, obj: Mapping[str, Any]) -> None:
        """Forget ``obj``'s expectation."""
        uid, _ = _uid_and_version(obj)
        with self._lock:
            self._records.pop(uid, None)


_UINT64_MAX: Final = 2**64 - 1


def _parse_uint(value: str) -> int | None:
    if not value or not (value.isascii() and value.isdigit()):
        return None
    number = int(value)
    return number if number <= _UINT64_MAX else None


def is_resource_version_newer(old: str, new: str) -> bool:
    """Kruise ``isResourceVersionNewer``: whether ``new`` is at or after ``old``.

    An empty or non-numeric ``old`` is always behind; a non-numeric ``new`` never catches up.
    """
    if not old:
        return True
    old_count = _parse_uint(old)
    if old_count is None:
        return True
    new_count = _parse_uint(new)
    if new_count is None:
        return False
    return new_count >= old_count


def _object_key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


def _uid_and_version(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("uid") or ""), str(metadata.get("resourceVersion") or "")


# --- waiting on expectations in a sync --------------------------------------------------------


def wait_result(
    satisfied: bool,
    waited: float,
    *,
    key: str,
    what: object,
    on_timeout: Callable[[], None] | None = None,
    recheck: float | None = None,
    timeout: float = EXPECTATIONS_TIMEOUT,
    logger: logging.Logger = log,
) -> Result | None:
    """How a sync treats an expectation check (``satisfied``, seconds ``waited``).

    ``None`` means go on: the expectation is satisfied, or it has been unsatisfied for
    ``timeout`` seconds or more, in which case a warning names ``what`` was awaited and
    ``on_timeout`` (typically: delete the expectation) is called. Otherwise the sync should
    return the :class:`~kube_runtime.reconcile.Result` given: come back after ``recheck``
    seconds, or by default after the time left until the timeout (the informer event that
    satisfies the expectation normally wakes the object first). Logs name the object ``key``.
    """
    if satisfied:
        return None
    if waited < timeout:
        logger.debug("%s: waiting for the cache to show %s", key, what)
        return Result(requeue_after=recheck if recheck is not None else timeout - waited)
    logger.warning("%s: expectations %s timed out after %.0fs; syncing anyway", key, what, waited)
    if on_timeout is not None:
        on_timeout()
    return None
