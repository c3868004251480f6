"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Contract (client-go ``tools/leaderelection`` + ``resourcelock/leaselock.go``):

* Candidates try to acquire the Lease every ``retry_period`` (jittered up to
  ``retry_period * 2.2``). A Lease held by someone else is taken over only once it has not
  changed for ``leaseDurationSeconds`` as measured by *this* process's clock from the moment it
  observed the last change: timestamps written in the Lease by other processes are never
  compared with the local clock, so clock skew between nodes does not matter.
* The leader renews every ``retry_period``; each renewal may retry for up to
  ``renew_deadline``. When that deadline passes without a successful write, leadership is lost:
  the stop event handed to ``on_started_leading`` is set and :meth:`LeaderElector.run`
  returns. A 409 Conflict on a write just loses that round.
* ``leaseTransitions`` is incremented every time the holder changes; ``acquireTime`` is kept
  across renewals of the same holder.
* On a clean stop with ``release_on_cancel`` the leader writes an empty ``holderIdentity``
  (``leaseDurationSeconds: 1``), so a follower takes over on its next try instead of waiting
  for the lease to expire. With ``release_on_cancel`` the caller must have stopped the work
  the lease guards before stopping the elector.
* With an ``event_recorder``, "<identity> became leader" / "<identity> stopped leading"
  events (reason ``LeaderElection``) are recorded on the Lease.
* ``on_stopped_leading`` is called whenever :meth:`~LeaderElector.run` returns (also when it
  never led, as in client-go); ``on_new_leader(identity)`` is called, in its own thread, each
  time the observed holder changes (the first observation included).

* Candidates also watch the Lease: a follower tries at once when it is released or changes
  (a released Lease is taken within moments, not at the next ``retry_period``), and a leader
  is deposed the moment the watch shows a newer version naming another holder.

Fencing, as far as Kubernetes allows. :meth:`LeaderElector.holds_lease_safely` is True only
while this process leads and its last successful renewal was sent less than
``renew_deadline`` ago by its own clock (others wait ``lease_duration`` from a later moment).
A :class:`~kube_runtime.manager.Manager` checks it before sending every write (the REST
client's ``write_guard``) and stops its controllers at the first refusal, so a leader resumed
after a pause longer than that (SIGSTOP, a frozen VM) writes nothing. What remains: a write
already on the wire when the pause began can still arrive, and the API server has no fencing
tokens to reject it; writes are idempotent level-driven updates guarded by resourceVersions,
which is what keeps that window harmless in practice. Keep ``lease_duration`` comfortably
above ``renew_deadline``.

Time: every duration, pause and timestamp of an elector is on its
:class:`~kube_runtime.clock.Clock` (``clock=``; None: the clock current when it is built), and
its jitter is drawn from the clock's ``rng``: on a :class:`~kube_runtime.clock.SimClock` a
candidate takes over exactly ``lease_duration`` virtual seconds after it saw the last renewal,
and a run is reproducible. Its pauses end at once when ``stop`` is set, when it is deposed, or
(for a follower) when the Lease watch sees the Lease change.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import orjson

from kube_runtime import clock as _clock
from kube_runtime import meta, metrics
from kube_runtime.client.client import Client as RestClient
from kube_runtime.client.errors import Conflict, NotFound
from kube_runtime.events import EventRecorder
from kube_runtime.kinds import Lease

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Client

__all__ = [
    "JITTER_FACTOR",
    "MICROTIME_FORMAT",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "check_timings",
    "format_micro_time",
]

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2
"""Maximum extra wait between acquire attempts, as a fraction of ``retry_period`` (client-go)."""

MICROTIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"

_MODIFIED_EVENT_HEAD = b'{"type":"MODIFIED","object":'
_MODIFIED_EVENT_HEAD_SIZE = len(_MODIFIED_EVENT_HEAD)


def _newer(lease: dict[str, Any], than: dict[str, Any] | None) -> bool:
    """Whether ``lease`` is a later version than ``than`` (resourceVersions compared as the
    integers both API servers use; unknown order counts as newer)."""
    if than is None:
        return True
    a, b = meta.resource_version(lease), meta.resource_version(than)
    if a.isdigit() and b.isdigit():
        return int(a) > int(b)
    return a != b


def format_micro_time(moment: datetime) -> str:
    """A ``metav1.MicroTime`` string: ``2006-01-02T15:04:05.000000Z`` in UTC."""
    if moment.tzinfo is not timezone.utc:
        moment = moment.astimezone(timezone.utc)
    if moment.year < 1000:
        return moment.strftime(MICROTIME_FORMAT)
    # MICROTIME_FORMAT, written out (strftime costs more; every renewal stamps one)
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond:06d}Z"
    )


# The minute a stamp of _micro_time falls in, and the stamp's text up to its seconds.
_minute: tuple[int, str] = (-1, "")


def _micro_time(epoch: float) -> str:
    """``format_micro_time`` of the UTC moment ``epoch`` (seconds since the Unix epoch), as
    ``datetime.fromtimestamp`` makes it (microseconds rounded half to even), with the text of
    the minute remembered: an elector stamps one per renewal, a few per minute."""
    global _minute
    if not epoch >= 0:  # before 1970 (or NaN): the general way
        return format_micro_time(datetime.fromtimestamp(epoch, timezone.utc))
    sec = int(epoch)
    micro = round((epoch - sec) * 1e6)
    if micro >= 1_000_000:
        sec += 1
        micro -= 1_000_000
    minute, second = divmod(sec, 60)
    memo = _minute
    if memo[0] != minute:
        head = format_micro_time(datetime.fromtimestamp(minute * 60, timezone.utc))
        memo = _minute = (minute, head[: head.rindex(":") + 1])
    return f"{memo[1]}{second:02d}.{micro:06d}Z"


@dataclass(frozen=True)
class LeaderElectionRecord:
    """The election state kept in a Lease's spec (client-go's ``LeaderElectionRecord``)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaderElectionRecord:
        spec = meta.spec(lease)
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_lease_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time is not None:
            spec["renewTime"] = self.renew_time
        return spec


class LeaseLock:
    """Reads and writes one Lease; updates carry the last read resourceVersion (optimistic lock)."""

    def __init__(self, client: Client, namespace: str, name: str) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self._lease: dict[str, Any] | None = None
        #: The watch event of the last update, as the server sends it when it answered the
        #: update with the same bytes, and that event decoded (see :meth:`decode_event`).
        self._own_event: tuple[bytes, dict[str, Any]] | None = None
        #: The last event line the Lease watch decoded, and its decoding: the answer of an
        #: update whose event came first is taken from it (see :meth:`_decode_answer`).
        self._seen_event: tuple[bytes, dict[str, Any]] | None = None

    @property
    def lease(self) -> dict[str, Any] | None:
        """The Lease as last read or written (None before the first read)."""
        return self._lease

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> LeaderElectionRecord:
        """The current record (raises the client's ``NotFound`` when there is no Lease)."""
        self._lease = self.client.get(Lease, self.name, self.namespace)
        return LeaderElectionRecord.from_lease(self._lease)

    def create(self, record: LeaderElectionRecord) -> None:
        self._lease = self.client.create(
            {
                "apiVersion": Lease.api_version,
                "kind": Lease.kind,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": record.to_lease_spec(),
            }
        )

    def update(self, record: LeaderElectionRecord) -> None:
        """Replace the Lease's spec with ``record`` (``Conflict`` when it changed since read)."""
        if self._lease is None:
            raise RuntimeError(f"lease {self.describe()} not read yet: call get or create first")
        # A shallow copy: the new spec replaces the old one whole, and the rest (metadata,
        # with its managedFields) is sent as read and never modified, here or by the client.
        lease = {
            "apiVersion": Lease.api_version,
            "kind": Lease.kind,
            **self._lease,
            "spec": record.to_lease_spec(),
        }
        client = self.client
        if type(client) is not RestClient:  # another client, or one whose update is its own
            self._lease = client.update(lease)
            return
        stored, raw = client.update_raw(lease, loads=self._decode_answer)
        self._lease = stored
        if raw:
            self._own_event = (
                _MODIFIED_EVENT_HEAD + raw + b"}",
                {"type": "MODIFIED", "object": stored},
            )

    def decode_event(self, line: bytes) -> Any:
        """A watch event line of the Lease decoded (a :class:`~kube_runtime.client.watch.Watch`'s
        ``loads``): the event of this lock's last update, recognised by its bytes (the object
        as the server answered the update), is the object already decoded then, shared (read
        it only); any other line is decoded."""
        own = self._own_event
        if own is not None and line == own[0]:
            return own[1]
        event = orjson.loads(line)
        self._seen_event = (line, event)
        return event

    def _decode_answer(self, raw: bytes) -> Any:
        """An update's answer decoded: the object of the watch event last decoded when that
        event carries these bytes (a server that writes a write's watch events before its
        answer, as the embedded one does on a simulated clock: then the watch decoded them
        first), shared (read it only); else decoded."""
        seen = self._seen_event
        if seen is not None:
            line, event = seen
            if (
                len(line) == len(raw) + _MODIFIED_EVENT_HEAD_SIZE + 1
                and line[_MODIFIED_EVENT_HEAD_SIZE:-1] == raw
                and line.startswith(_MODIFIED_EVENT_HEAD)
            ):
                obj = event.get("object")
                if type(obj) is dict:
                    return obj
        return orjson.loads(raw)


def check_timings(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """``ValueError`` unless the timings are what client-go's ``NewLeaderElector`` accepts:
    all positive, ``lease_duration > renew_deadline > JITTER_FACTOR * retry_period``."""
    if lease_duration <= 0:
        raise ValueError("lease_duration must be greater than zero")
    if renew_deadline <= 0:
        raise ValueError("renew_deadline must be greater than zero")
    if retry_period <= 0:
        raise ValueError("retry_period must be greater than zero")
    if lease_duration <= renew_deadline:
        raise ValueError(
            f"lease_duration ({lease_duration}) must be greater than "
            f"renew_deadline ({renew_deadline})"
        )
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(
            f"renew_deadline ({renew_deadline}) must be greater than "
            f"retry_period * {JITTER_FACTOR} ({retry_period * JITTER_FACTOR:g})"
        )


class LeaderElector:
    """One candidate in the election for the Lease ``namespace/name``; see the module docstring."""

    def __init__(
        self,
        client: Client,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[threading.Event], None],
        on_stopped_leading: Callable[[], None],
        on_new_leader: Callable[[str], None] | None = None,
        release_on_cancel: bool = True,
        clock: _clock.Clock | None = None,
        event_recorder: EventRecorder | None = None,
    ) -> None:
        if not identity:
            raise ValueError("identity must not be empty")
        if not callable(on_started_leading) or not callable(on_stopped_leading):
            raise ValueError("on_started_leading and on_stopped_leading must be callables")
        check_timings(lease_duration, renew_deadline, retry_period)
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._clock = _clock.resolve(clock, "LeaderElector")
        clk = self._clock
        # A MicroTime of the clock's now: from its epoch seconds for the clocks whose time()
        # and now() are one reading (an adapter of an older protocol formats its now()).
        self._stamp: Callable[[], str]
        if type(clk) is _clock.RealClock or isinstance(clk, _clock.FakeClock | _clock.SimClock):
            self._stamp = lambda: _micro_time(clk.time())
        else:
            self._stamp = lambda: format_micro_time(clk.now())
        # The time a pause's waits run on: the clock's own, but for the adapters of older
        # protocols (RealClock subclasses) whose conditions are threading's, the real time.
        self._wait_time: Callable[[], float] = (
            _clock.REAL.monotonic if isinstance(clk, _clock.RealClock) else clk.monotonic
        )
        self._recorder = event_recorder
        self._lock = LeaseLock(client, namespace, name)
        # Lease specs carry whole seconds; sub-second durations (tests) round up to one.
        self._lease_seconds = max(1, int(lease_duration))
        self._state = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_time = 0.0
        self._reported_leader = ""
        self._leading = False
        # Bumped when a renewal round gives up, so a write still in flight cannot
        # make this elector believe it leads again.
        self._epoch = 0
        # Local monotonic time at which the last successful acquire/renew request was sent:
        # every other candidate measures expiry from a later moment (when it saw that write).
        self._renew_sent = float("-inf")
        self._deposed = self._clock.event()  # another holder observed while leading
        self._lease_watch: Any = None
        # Pauses wait here; notified when the caller's stop is set, on deposition, and when
        # the Lease changed (``_lease_changed``: a follower tries now instead of waiting).
        self._signal = self._clock.condition(threading.Lock())
        self._lease_changed = False
        # While leading (under ``_signal``): the deadline of the renewal round in progress,
        # and whether the renewals have ended (see ``_renew``).
        self._round_deadline = float("inf")
        self._renewals_over = False
        metrics.LEADER_STATUS.labels(name=name).set(0)

    @property
    def clock(self) -> _clock.Clock:
        """The clock the elector's durations, pauses and timestamps run on."""
        return self._clock

    # --- observed state ---------------------------------------------------------------------

    def is_leader(self) -> bool:
        """True while :meth:`run` leads: the lease was acquired and every renewal kept it."""
        with self._state:
            return self._leading and self._observed.holder_identity == self.identity

    def holds_lease_safely(self) -> bool:
        """True while this candidate leads and can prove its lease unexpired: its last
        successful renewal was *sent* less than ``renew_deadline`` ago by this process's
        clock (other candidates wait ``lease_duration`` from a later moment, so the margin is
        ``lease_duration - renew_deadline``). False from the moment another holder is
        observed, and after a pause (SIGSTOP, a long GC, a suspended VM) longer than that.
        Writes on behalf of a leader are checked against this before they are sent."""
        with self._state:
            leading = self._leading and self._observed.holder_identity == self.identity
            sent = self._renew_sent
        if not leading or self._deposed.is_set():
            return False
        return self._clock.monotonic() < sent + self.renew_deadline

    def _holds(self) -> bool:
        """The last observed holder is this candidate (client-go's ``IsLeader``)."""
        with self._state:
            return self._observed.holder_identity == self.identity

    def get_leader(self) -> str:
        """The last observed holder's identity ("" when none has been observed)."""
        with self._state:
            return self._observed.holder_identity

    def _set_observed(
        self, record: LeaderElectionRecord, epoch: int, sent: float | None = None
    ) -> bool:
        """Observe ``record`` unless a renewal round gave up since ``epoch``; with ``sent``
        (this candidate's own write succeeded), it was sent then (see ``_renew_sent``)."""
        with self._state:
            if epoch != self._epoch:
                return False
            self._observed = record
            self._observed_time = self._clock.monotonic()
            if sent is not None and record.holder_identity == self.identity:
                self._renew_sent = max(self._renew_sent, sent)
            return True

    def _lease_valid(self, now: float) -> bool:
        """The observed lease has not yet expired by this process's clock."""
        with self._state:
            seconds = self._observed.lease_duration_seconds or self.lease_duration
            return self._observed_time + seconds > now

    # --- one round ----------------------------------------------------------------------------

    def try_acquire_or_renew(self) -> bool:
        """One round: acquire the lease if free or expired, or renew it if held; True on success.

        Never raises: API errors are logged and count as failure for this round (a 409 Conflict
        means another candidate wrote first).
        """
        return self._attempt(self._epoch)

    def _attempt(self, epoch: int) -> bool:
        try:
            return self._try_acquire_or_renew(epoch, self._clock.monotonic())
        except Conflict as e:  # another candidate wrote first: just a lost round
            log.info("leader election %s: lease write failed: %s", self._lock.describe(), e)
            return False
        except Exception as e:
            log.warning("leader election %s: lease write failed: %s", self._lock.describe(), e)
            return False

    def _try_acquire_or_renew(self, epoch: int, sent: float) -> bool:
        """One round's write, ``sent`` at that local time; True when this candidate holds the
        lease after it (its ``_renew_sent`` moved on to ``sent``)."""
        stamp = self._stamp()
        # Fast path: the leader writes on top of the version it last saw, without a read.
        now = self._clock.monotonic()
        with self._state:
            held = self._observed
            seconds = held.lease_duration_seconds or self.lease_duration
            valid = held.holder_identity == self.identity and self._observed_time + seconds > now
        if valid:
            renewal = LeaderElectionRecord(
                holder_identity=self.identity,
                lease_duration_seconds=self._lease_seconds,
                acquire_time=held.acquire_time,
                renew_time=stamp,
                leader_transitions=held.leader_transitions,
            )
            try:
                self._lock.update(renewal)
                return self._set_observed(renewal, epoch, sent)
            except Exception as e:
                log.info(
                    "leader election %s: optimistic renew failed (%s), re-reading",
                    self._lock.describe(),
                    e,
                )

        desired = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=self._lease_seconds,
            acquire_time=stamp,
            renew_time=stamp,
        )
        try:
            current = self._lock.get()
        except NotFound:
            self._lock.create(desired)
            return self._set_observed(desired, epoch, sent)
        except Exception as e:
            log.warning("leader election %s: cannot read lease: %s", self._lock.describe(), e)
            return False

        with self._state:
            changed = current != self._observed
        if changed and not self._set_observed(current, epoch):
            return False
        if (
            current.holder_identity
            and current.holder_identity != self.identity
            and self._lease_valid(self._clock.monotonic())
        ):
            log.debug(
                "leader election %s: held by %s, not yet expired",
                self._lock.describe(),
                current.holder_identity,
            )
            return False

        if current.holder_identity == self.identity:
            record = replace(
                desired,
                acquire_time=current.acquire_time,
                leader_transitions=current.leader_transitions,
            )
        else:
            record = replace(desired, leader_transitions=current.leader_transitions + 1)
        self._lock.update(record)
        return self._set_observed(record, epoch, sent)

    # --- loops --------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Campaign until ``stop`` is set or leadership, once gained, is lost; then return.

        Blocks the calling thread. ``on_started_leading(leading_stop)`` runs in its own thread
        once the lease is held; ``leading_stop`` is set when leadership ends for any reason.
        ``stop`` should be made by the elector's clock (``clock.event()``) for a simulated
        clock to see the threads waiting on it.
        """
        watch_stop = self._clock.event()
        _start_thread(self._watch_lease, watch_stop, f"lease-watch-{self.name}")
        self._relay_stop(stop, watch_stop)
        try:
            if not self._acquire(stop):
                return
            leading_stop = self._clock.event()
            _start_thread(self._run_started_leading, leading_stop, f"leader-{self.name}")
            try:
                self._renew(stop)
                if stop.is_set() and self.holds_lease_safely():
                    # Only a leader that stops on purpose says so: a deposed or expired one
                    # writes nothing at all (another holds the lease now; see Fencing).
                    self._record_event("stopped leading")
            finally:
                with self._state:
                    self._leading = False
                leading_stop.set()
            if self.release_on_cancel:
                self.release()
        finally:
            watch_stop.set()
            self._close_lease_watch()
            metrics.LEADER_STATUS.labels(name=self.name).set(0)
            try:
                self._on_stopped_leading()
            except Exception:
                log.exception(
                    "leader election %s: on_stopped_leading failed", self._lock.describe()
                )

    def _acquire(self, stop: threading.Event) -> bool:
        log.info("attempting to acquire leader lease %s", self._lock.describe())
        while not stop.is_set():
            succeeded = self.try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                with self._state:
                    self._leading = True
                metrics.LEADER_STATUS.labels(name=self.name).set(1)
                self._record_event("became leader")
                log.info(
                    "successfully acquired lease %s as %s", self._lock.describe(), self.identity
                )
                return True
            period = self.retry_period * (1.0 + self._clock.rng.random() * JITTER_FACTOR)
            with self._signal:
                self._pause_locked(stop, period, wake_on_change=True)
        return False

    def _renew(self, stop: threading.Event) -> None:
        """Keep the lease until a renewal round misses ``renew_deadline``, another holder is
        observed, or ``stop``.

        The renewals run on one thread of their own (:meth:`_renewals`), round after round as
        in client-go's ``renew`` loop; this thread only holds each round to its deadline, so a
        request that hangs past it loses leadership as one that fails would (client-go cancels
        it with the round's context). It wakes when the renewals end and at the deadline of
        the round it last saw, about once per ``renew_deadline`` rather than per renewal.
        """
        with self._signal:
            self._renewals_over = False
            # The first round begins at once (client-go renews right after acquiring).
            self._round_deadline = self._clock.monotonic() + self.renew_deadline
        renewer_done = self._clock.event()
        _start_thread(
            lambda done: self._renewals(stop, done), renewer_done, f"lease-renew-{self.name}"
        )
        with self._signal:
            while not (stop.is_set() or self._deposed.is_set() or self._renewals_over):
                left = self._round_deadline - self._clock.monotonic()
                if left <= 0:
                    break  # the round in progress missed its deadline: a request hangs
                self._signal.wait(left)
            self._renewals_over = True
            self._signal.notify_all()
            deadline = self._round_deadline
        with self._state:
            self._epoch += 1  # a renewal still in flight cannot make this elector lead again
        if not stop.is_set():
            log.info(
                "failed to renew lease %s within %.3gs: leadership lost",
                self._lock.describe(),
                self.renew_deadline,
            )
        # A renewal on the wire must not race the release's write; one that hangs is left.
        renewer_done.wait(max(0.0, deadline - self._clock.monotonic()))

    def _renewals(self, stop: threading.Event, done: threading.Event) -> None:
        """The renewal rounds (on their own thread, see :meth:`_renew`): each renews at once
        and retries every ``retry_period`` until a write succeeds or the round's deadline
        passes; the next round begins ``retry_period`` after a success. Ends, setting
        ``done``, when a round fails or :meth:`_renew` ended the renewals (and ends them)."""
        clk = self._clock
        signal = self._signal
        retry = self.retry_period
        try:
            with signal:
                if self._renewals_ended(stop):
                    return
                deadline = self._round_deadline = clk.monotonic() + self.renew_deadline
            while True:  # one round: deadline is its deadline
                renewed = ended = False
                while clk.monotonic() < deadline:
                    if self._attempt(self._epoch):
                        renewed = clk.monotonic() < deadline  # a late success counts not
                        break
                    with signal:
                        self._pause_locked(
                            stop, min(retry, deadline - clk.monotonic()), renewing=True
                        )
                        ended = self._renewals_ended(stop)
                    if ended:
                        break
                if self._reported_leader != self._observed.holder_identity:
                    self._maybe_report_transition()
                if not renewed:
                    return
                # One hold of the signal's lock per renewal: the next round's deadline as the
                # latest it can have, the pause, and the round's deadline once it begins.
                with signal:
                    self._round_deadline = clk.monotonic() + retry + self.renew_deadline
                    self._pause_locked(stop, retry, renewing=True)
                    if self._renewals_ended(stop):
                        return
                    deadline = self._round_deadline = clk.monotonic() + self.renew_deadline
        finally:
            with self._signal:
                self._renewals_over = True
                self._signal.notify_all()
            done.set()

    def _renewals_ended(self, stop: threading.Event) -> bool:
        return stop.is_set() or self._deposed.is_set() or self._renewals_over

    def _pause_locked(
        self,
        stop: threading.Event,
        seconds: float,
        *,
        wake_on_change: bool = False,
        renewing: bool = False,
    ) -> None:
        """Wait ``seconds`` on the elector's clock, less when ``stop`` is set or this leader is
        deposed, with ``wake_on_change`` when the Lease watch saw the Lease change, and with
        ``renewing`` when the renewals ended (see :meth:`_renew`). Called with ``_signal``
        held (``Condition.wait_for``, written out)."""
        now = self._wait_time
        deposed = self._deposed
        end = now() + max(0.0, seconds)
        while not (
            stop.is_set()
            or deposed.is_set()
            or (renewing and self._renewals_over)
            or (wake_on_change and self._lease_changed)
        ):
            left = end - now()
            if left <= 0:
                break
            self._signal.wait(left)
        if wake_on_change:
            self._lease_changed = False

    def _poke(self) -> None:
        """Wake a pause to look at its signals again."""
        with self._signal:
            self._signal.notify_all()

    def _relay_stop(self, stop: threading.Event, done: threading.Event) -> None:
        """Wake pauses the moment ``stop`` is set (a pause cannot wait on two events): a
        thread waits on ``stop``, looking every ``lease_duration`` whether ``done`` (the run is
        over) ends its job (rarely: on a simulated clock every look is a wake-up)."""

        def relay() -> None:
            while not done.is_set():
                if stop.wait(self.lease_duration):
                    self._poke()
                    return

        threading.Thread(target=relay, name=f"lease-stop-{self.name}", daemon=True).start()

    # --- the Lease watch -------------------------------------------------------------------

    def _watch_lease(self, stop: threading.Event) -> None:
        """Watch the Lease: a follower tries at once when it is released or changes hands; a
        leader is deposed the moment a newer version names another holder."""
        watch_fn = getattr(self._lock.client, "watch", None)
        if watch_fn is None:
            return  # a client without watches (the fake): polling every retry_period only
        while not stop.is_set():
            try:
                watch = watch_fn(
                    Lease,
                    self._lock.namespace,
                    field_selector=f"metadata.name={self.name}",
                    timeout_seconds=300,
                )
            except Exception as e:
                log.debug("leader election %s: lease watch failed: %s", self._lock.describe(), e)
                stop.wait(self.retry_period)
                continue
            with self._state:
                self._lease_watch = watch
            if hasattr(watch, "loads"):  # the client's Watch: its own writes' events come back
                watch.loads = self._lock.decode_event
            seen = self._on_lease_seen
            try:
                for kind, lease in watch:
                    if stop.is_set():
                        break
                    if (kind == "MODIFIED" or kind == "ADDED") and isinstance(lease, dict):
                        seen(lease)
            except Exception as e:
                log.debug("leader election %s: lease watch ended: %s", self._lock.describe(), e)
            finally:
                watch.close()

    def _close_lease_watch(self) -> None:
        with self._state:
            watch, self._lease_watch = self._lease_watch, None
        if watch is not None:
            watch.close()

    def _on_lease_seen(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec")
        holder = (spec.get("holderIdentity") if isinstance(spec, dict) else None) or ""
        with self._state:
            leading = self._leading
            own = self._lock._lease
        if not leading:
            with self._signal:
                self._lease_changed = True
                self._signal.notify_all()
            return
        if holder == self.identity or not _newer(lease, own):
            return  # our own write, or an event older than our last write
        log.warning(
            "leader election %s: %r holds the lease now: %s stops leading at once",
            self._lock.describe(),
            holder,
            self.identity,
        )
        self._deposed.set()
        self._poke()

    def release(self) -> bool:
        """Give the lease up if this candidate holds it (empty holder); True when not held after."""
        epoch = self._epoch
        try:
            current = self._lock.get()
        except Exception as e:
            log.warning(
                "leader election %s: cannot read lease to release: %s", self._lock.describe(), e
            )
            return False
        if current.holder_identity != self.identity:
            self._set_observed(current, epoch)
            return True
        stamp = format_micro_time(self._clock.now())
        released = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=stamp,
            renew_time=stamp,
            leader_transitions=current.leader_transitions,
        )
        try:
            self._lock.update(released)
        except Exception as e:
            log.warning("leader election %s: failed to release lease: %s", self._lock.describe(), e)
            return False
        with self._state:
            self._observed = released
            self._observed_time = self._clock.monotonic()
        log.info("released lease %s", self._lock.describe())
        return True

    def _record_event(self, what: str) -> None:
        """A Normal ``LeaderElection`` event on the Lease, as client-go's lease lock records."""
        lease = self._lock.lease
        if self._recorder is None or lease is None:
            return
        subject = {
            "apiVersion": Lease.api_version,
            "kind": Lease.kind,
            "metadata": lease["metadata"],
        }
        self._recorder.event(subject, "Normal", "LeaderElection", f"{self.identity} {what}")

    # --- callbacks ------------------------------------------------------------------------------

    def _run_started_leading(self, leading_stop: threading.Event) -> None:
        try:
            self._on_started_leading(leading_stop)
        except Exception:
            log.exception("leader election %s: on_started_leading failed", self._lock.describe())

    def _maybe_report_transition(self) -> None:
        with self._state:
            holder = self._observed.holder_identity
            if holder == self._reported_leader:
                return
            self._reported_leader = holder
        log.info("leader election %s: new leader %r", self._lock.describe(), holder)
        if self._on_new_leader is not None:
            threading.Thread(
                target=self._report_new_leader,
                args=(holder,),
                name=f"new-leader-{self.name}",
                daemon=True,
            ).start()

    def _report_new_leader(self, holder: str) -> None:
        assert self._on_new_leader is not None
        try:
            self._on_new_leader(holder)
        except Exception:
            log.exception("leader election %s: on_new_leader failed", self._lock.describe())


def _start_thread(
    target: Callable[[threading.Event], None], event: threading.Event, name: str
) -> None:
    """Run ``target(event)`` on a new daemon thread called ``name``."""
    threading.Thread(target=target, args=(event,), name=name, daemon=True).start()
