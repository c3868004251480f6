"""The one time source of the framework, the embedded cluster and the simulated kubelet.

Nothing in kube-runtime reads ``time.monotonic()``, ``time.time()`` or sleeps directly: it asks
a :class:`Clock` (client-go's ``k8s.io/utils/clock``). Three clocks implement the protocol:

* :data:`REAL` (:class:`RealClock`), the default: its methods *are* ``time.monotonic``,
  ``time.time`` and ``time.sleep``, and its events and conditions are ``threading``'s own, so
  the framework costs with it exactly what it cost before clocks existed.
* :class:`FakeClock`: virtual time that a test moves by hand (:meth:`FakeClock.step`), as
  client-go's ``testing.FakeClock``. Sleeps, timed waits and timers fire when the time they
  wait for is reached.
* :class:`SimClock`: virtual time that moves by itself (Go's ``testing/synctest`` rule): once
  every *participant* thread is blocked on the clock or idle and no hand-off is in flight, the
  time jumps to the next deadline. A controller, the embedded API server and the simulated
  kubelet then run Kubernetes' real timings (15 s leases, ``minReadySeconds`` 10, backoff up to
  1,000 s) in milliseconds of wall time, and their timestamps are the same on every run.

How a component uses its clock:

* ``clock.monotonic()`` for durations and deadlines, ``clock.time()`` / ``clock.now()`` for
  timestamps, ``clock.sleep(s)`` to pause.
* Waits that may time out go through an event or a condition *made by the clock*
  (``clock.event()``, ``clock.condition(lock)``): they are ``threading.Event`` /
  ``threading.Condition`` objects (subclasses under virtual time), used exactly as usual.
* ``clock.after(s, fn)`` runs ``fn`` once, ``s`` seconds from now, on a thread of its own.
* A component captures ``current()`` when it is built (``clock or current()``), so that what
  a test builds inside ``with use(sim):`` runs on the simulated clock while a session-wide
  cluster built before keeps the real one.

Participants of a :class:`SimClock` are the thread that :meth:`SimClock.activate` d it and
every thread a participant starts (as goroutines started in a synctest bubble belong to it).
A participant counts as *running* unless it waits on the clock. Two things the clock cannot see
are declared to it: a participant blocked on something else whose wake-up is accounted for
elsewhere (a socket read of a watch stream, a server's ``select``) wraps that in
:meth:`Clock.idle`; work handed between threads outside the clock's primitives (an event
written to a watch stream and not yet consumed, a callback posted to an event loop) is held
with :meth:`Clock.hold` until :meth:`Clock.release`. Threads that are not participants are
ignored: their waits still wake on notifications and virtual deadlines.

Determinism: the virtual time starts at :data:`SIM_EPOCH` (``2026-01-01T00:00:00Z``) and moves
only at quiescence, to the next deadline, so deadlines and the timestamps derived from them do
not depend on the machine's speed or load. Waiters due at the same virtual instant are woken
in the order they began to wait, or in an order shuffled by ``seed``; what the woken threads
then do at that instant is up to the operating system's scheduler (see ``docs/simtime.md``).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import random
import sys
import threading
import time
import time as _time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

__all__ = [
    "REAL",
    "SIM_EPOCH",
    "Clock",
    "FakeClock",
    "RealClock",
    "SimClock",
    "SimDeadlock",
    "SimStall",
    "Timer",
    "current",
    "resolve",
    "start_detached",
    "use",
]

SIM_EPOCH = 1_767_225_600.0
"""Where the virtual wall clock starts: 2026-01-01T00:00:00Z (epoch seconds)."""

_INF = float("inf")
_PLAIN_LOCK = type(threading.Lock())


class Timer(Protocol):
    """A pending :meth:`Clock.after` call."""

    def cancel(self) -> None:
        """Do not run the function if it has not started yet."""


class Clock(Protocol):
    """What every timer in kube-runtime takes its time from (see the module's contract)."""

    def monotonic(self) -> float:
        """Seconds on a scale that never goes back; only differences mean anything."""

    def time(self) -> float:
        """Wall-clock seconds since the Unix epoch."""

    def now(self) -> datetime:
        """The wall clock as an aware UTC datetime."""

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds``."""

    def event(self) -> threading.Event:
        """A new ``threading.Event`` whose timed waits run on this clock."""

    def condition(self, lock: Any = None) -> threading.Condition:
        """A new ``threading.Condition`` over ``lock`` whose timed waits run on this clock."""

    def after(self, seconds: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn()`` once, ``seconds`` from now, on another thread; cancellable."""

    @property
    def rng(self) -> random.Random:
        """Where the framework draws its own random choices (jitter): seeded, hence
        reproducible, on a simulated clock."""

    def idle(self) -> contextlib.AbstractContextManager[None]:
        """A block during which the calling thread waits on something outside the clock whose
        arrival is accounted for by :meth:`hold` or by a running participant."""

    def hold(self, key: Hashable = None) -> None:
        """One more hand-off in flight (under ``key``); time does not move until released."""

    def release(self, key: Hashable = None, count: int = 1) -> None:
        """``count`` hand-offs under ``key`` were taken up."""

    def forget(self, key: Hashable) -> None:
        """Drop every hand-off still held under ``key`` (its consumer went away)."""


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, timezone.utc)


class _ThreadTimer:
    """:meth:`RealClock.after`'s handle: a daemon ``threading.Timer``."""

    def __init__(self, seconds: float, fn: Callable[[], None]) -> None:
        self._timer = threading.Timer(max(0.0, seconds), fn)
        self._timer.daemon = True
        self._timer.name = "clock-after"
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


class RealClock:
    """The process's clocks. Its methods are the ``time`` functions themselves (no wrapper
    call), and its events and conditions are ``threading``'s."""

    monotonic = staticmethod(_time.monotonic)
    time = staticmethod(_time.time)
    sleep = staticmethod(_time.sleep)
    event = staticmethod(threading.Event)
    condition = staticmethod(threading.Condition)

    #: The process's random numbers (a private instance, seeded by the system).
    rng = random.Random()

    def now(self) -> datetime:
        """The wall clock as an aware UTC datetime."""
        return datetime.now(timezone.utc)

    def after(self, seconds: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` on a daemon timer thread after ``seconds``."""
        return _ThreadTimer(seconds, fn)

    def idle(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to declare to a real clock."""
        return contextlib.nullcontext()

    def hold(self, key: Hashable = None) -> None:
        """Nothing to hold on a real clock."""

    def release(self, key: Hashable = None, count: int = 1) -> None:
        """Nothing to release on a real clock."""

    def forget(self, key: Hashable) -> None:
        """Nothing to forget on a real clock."""


REAL = RealClock()
"""The real clock, the default :func:`current` clock."""

_current: Clock = REAL


def current() -> Clock:
    """The clock components built now should use (:data:`REAL` unless :func:`use` says else)."""
    return _current


@contextlib.contextmanager
def use(clock: Clock) -> Iterator[Clock]:
    """Make ``clock`` the :func:`current` clock inside the block (process-wide), then restore
    the previous one. Components capture the current clock when they are built."""
    global _current
    previous = _current
    _current = clock
    try:
        yield clock
    finally:
        _current = previous


class _CallableClock(RealClock):
    """A bare time function given where a :class:`Clock` is now expected (the old way of
    injecting time): it reads the time; sleeping, waits and timers stay real."""

    def __init__(self, fn: Callable[[], float], *, wall: bool) -> None:
        self._fn = fn
        self._wall = wall

    def monotonic(self) -> float:
        """The function's value."""
        return self._fn()

    def time(self) -> float:
        """The function's value when it reads the wall clock, else the real wall clock."""
        return self._fn() if self._wall else _time.time()

    def now(self) -> datetime:
        """:meth:`time` as an aware UTC datetime."""
        return _utc(self.time())


class _ReadingClock(RealClock):
    """An object with only ``monotonic()`` and ``now()`` where a :class:`Clock` is expected:
    it reads the time; sleeping, waits, timers and jitter stay real."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def monotonic(self) -> float:
        """The wrapped clock's monotonic time."""
        return float(self._reader.monotonic())

    def now(self) -> datetime:
        """The wrapped clock's wall clock."""
        moment: datetime = self._reader.now()
        return moment

    def time(self) -> float:
        """:meth:`now` as epoch seconds."""
        return self.now().timestamp()


def resolve(clock: Clock | Callable[[], float] | None, owner: str, *, wall: bool = False) -> Clock:
    """The clock a component built now uses: ``clock`` itself, :func:`current` for None, or,
    with a ``DeprecationWarning`` naming ``owner``, an adapter that reads the time from what
    was injected before this module: a bare time function (``wall``: it returns epoch
    seconds) or an object with only ``monotonic()`` and ``now()`` (leader election's old
    protocol)."""
    if clock is None:
        return _current
    if hasattr(clock, "condition"):
        return clock  # type: ignore[return-value]
    if hasattr(clock, "monotonic"):
        warnings.warn(
            f"{owner}: a clock with only monotonic() and now() is deprecated; pass a"
            " kube_runtime.clock.Clock (FakeClock in tests). It will be refused in the next release",
            DeprecationWarning,
            stacklevel=3,
        )
        return _ReadingClock(clock)
    warnings.warn(
        f"{owner}: a bare time function as clock is deprecated; pass a kube_runtime.clock.Clock"
        " (FakeClock in tests). It will be refused in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return _CallableClock(clock, wall=wall)


# --- virtual time ------------------------------------------------------------------------------


class SimDeadlock(RuntimeError):
    """Every participant waits on the clock with no deadline and nothing is in flight: the
    wait would last forever. The message says where each participant is blocked."""


class SimStall(RuntimeError):
    """Some participant has been running (not waiting on the clock) for longer than the clock's
    ``stall_timeout`` of real time, so virtual time cannot move. The message says where."""


class _Waiter:
    """One thread blocked on a virtual clock until notified or until ``deadline``."""

    __slots__ = ("deadline", "error", "lock", "participant", "queued", "seq", "timed_out", "woken")

    def __init__(self, seq: int) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.deadline = _INF
        self.seq = seq
        self.woken = False
        self.timed_out = False
        self.participant: _Participant | None = None
        self.error: BaseException | None = None
        #: In the clock's deadline heap (as ``(deadline, seq, waiter)``).
        self.queued = False


class _Participant:
    """A thread whose activity keeps a :class:`SimClock` from moving."""

    __slots__ = ("blocked", "thread", "where")

    def __init__(self, thread: threading.Thread) -> None:
        self.thread = thread
        self.blocked = False
        self.where = ""


class _VirtualCondition(threading.Condition):
    """``threading.Condition`` whose waits block on a virtual clock: notified as usual, timed
    out when the clock reaches the deadline (never by the real time passing)."""

    def __init__(self, clock: _VirtualClock, lock: Any = None) -> None:
        super().__init__(lock)
        self._clock = clock
        self._vwaiters: deque[_Waiter] = deque()
        held = self._lock  # type: ignore[attr-defined]
        if type(held) is _PLAIN_LOCK:  # the usual lock: released without a helper's frame
            self._release_save = held.release

    def wait(self, timeout: float | None = None) -> bool:
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot wait on un-acquired lock")
        clock = self._clock
        waiter = clock._new_waiter(timeout)
        self._vwaiters.append(waiter)
        saved = self._release_save()
        try:
            clock._block(waiter, "condition")
        finally:
            self._acquire_restore(saved)  # type: ignore[attr-defined]
            if not waiter.woken or waiter.timed_out:
                try:  # (no contextlib.suppress: a timed-out wait, every pause, passes here)
                    self._vwaiters.remove(waiter)
                except ValueError:
                    pass
        return not waiter.timed_out

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        deadline = None if timeout is None else self._clock.monotonic() + timeout
        result = predicate()
        while not result:
            left = None
            if deadline is not None:
                left = deadline - self._clock.monotonic()
                if left <= 0:
                    break
            self.wait(left)
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot notify on un-acquired lock")
        woken = 0
        while woken < n and self._vwaiters:
            if self._clock._wake(self._vwaiters.popleft(), timed_out=False):
                woken += 1

    def notify_all(self) -> None:
        self.notify(len(self._vwaiters))


class _VirtualEvent(threading.Event):
    """``threading.Event`` on a virtual clock (its condition is a :class:`_VirtualCondition`)."""

    def __init__(self, clock: _VirtualClock) -> None:
        super().__init__()
        self._cond = _VirtualCondition(clock, threading.Lock())


class _VirtualTimer:
    """A pending :meth:`_VirtualClock.after` call; ``cancel`` wakes the timer thread, so a
    cancelled timer is no deadline the clock moves to."""

    __slots__ = ("cancelled", "cond", "fn")

    def __init__(self, fn: Callable[[], None], cond: threading.Condition) -> None:
        self.fn = fn
        self.cond = cond
        self.cancelled = False

    def cancel(self) -> None:
        with self.cond:
            self.cancelled = True
            self.cond.notify_all()


class _VirtualClock:
    """What :class:`FakeClock` and :class:`SimClock` share: the virtual time, the waiters by
    deadline, events, conditions and timers. Subclasses decide when time moves."""

    def __init__(self, start: float = SIM_EPOCH, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._epoch = start
        self._now = 0.0
        self._seq = itertools.count()
        # Waiters with a deadline, as (deadline, seq, waiter): compared in C, never by waiter.
        # One woken before its deadline stays until it reaches the top or, once such stale
        # entries are over half of the heap, the heap is rebuilt without them.
        self._deadlines: list[tuple[float, int, _Waiter]] = []
        self._stale = 0
        self.seed = seed
        self._random = random.Random(seed) if seed is not None else None
        #: The framework's random choices (jitter) on this clock: seeded by ``seed`` (0 when
        #: None), so a run is reproducible.
        self.rng = random.Random(seed or 0)
        self._timers: list[tuple[float, int, _VirtualTimer]] = []
        self._timer_cond: _VirtualCondition | None = None

    # reading the time

    def monotonic(self) -> float:
        """Virtual seconds since the clock was made."""
        return self._now

    def time(self) -> float:
        """Virtual wall-clock seconds since the Unix epoch (``start`` + :meth:`monotonic`)."""
        return self._epoch + self._now

    def now(self) -> datetime:
        """:meth:`time` as an aware UTC datetime."""
        return _utc(self._epoch + self._now)

    # primitives

    def event(self) -> threading.Event:
        """A ``threading.Event`` whose timed waits run on this clock."""
        return _VirtualEvent(self)

    def condition(self, lock: Any = None) -> threading.Condition:
        """A ``threading.Condition`` whose timed waits run on this clock."""
        return _VirtualCondition(self, lock)

    def sleep(self, seconds: float) -> None:
        """Block until the clock has moved ``seconds`` on (at once for 0 or less)."""
        if seconds <= 0:
            return
        waiter = self._new_waiter(seconds)
        self._block(waiter, "sleep")

    def after(self, seconds: float, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` on the clock's timer thread when the clock reaches ``now + seconds``."""
        cond = self._timers_condition()
        timer = _VirtualTimer(fn, cond)
        with cond:
            heapq.heappush(self._timers, (self._now + max(0.0, seconds), next(self._seq), timer))
            cond.notify_all()
        return timer

    def idle(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to declare unless participants are tracked (:class:`SimClock`)."""
        return contextlib.nullcontext()

    def hold(self, key: Hashable = None) -> None:
        """Nothing to hold unless participants are tracked (:class:`SimClock`)."""

    def release(self, key: Hashable = None, count: int = 1) -> None:
        """Nothing to release unless participants are tracked (:class:`SimClock`)."""

    def forget(self, key: Hashable) -> None:
        """Nothing to forget unless participants are tracked (:class:`SimClock`)."""

    # the timer thread

    def _timers_condition(self) -> _VirtualCondition:
        with self._lock:
            cond = self._timer_cond
            if cond is not None:
                return cond
            cond = self._timer_cond = _VirtualCondition(self, threading.Lock())
        thread = threading.Thread(target=self._run_timers, name="clock-timers", daemon=True)
        self._start_service_thread(thread)
        return cond

    def _start_service_thread(self, thread: threading.Thread) -> None:
        thread.start()

    def _run_timers(self) -> None:
        cond = self._timer_cond
        assert cond is not None
        while True:
            with cond:
                while True:
                    while self._timers and self._timers[0][2].cancelled:
                        heapq.heappop(self._timers)
                    if self._timers and self._timers[0][0] <= self._now:
                        break
                    cond.wait(self._timers[0][0] - self._now if self._timers else None)
                _, _, timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                try:
                    timer.fn()
                except Exception:  # a timer's failure must not stop the others
                    traceback.print_exc()

    # waiting and waking (called with no lock of the clock held)

    def _new_waiter(self, timeout: float | None) -> _Waiter:
        waiter = _Waiter(next(self._seq))
        if timeout is not None:
            waiter.deadline = self._now + max(0.0, timeout)
        return waiter

    def _block(self, waiter: _Waiter, what: str) -> None:
        """Block the calling thread on ``waiter`` until :meth:`_wake` releases it."""
        with self._lock:
            self._check_failure_locked()
            if not self._enqueue_locked(waiter):
                return
            self._blocking(waiter, what)
        waiter.lock.acquire()
        if waiter.error is not None:
            raise waiter.error

    def _enqueue_locked(self, waiter: _Waiter) -> bool:
        """Whether ``waiter`` is to block (not woken, not due already: then marked timed
        out); its deadline, if any, is queued then."""
        if waiter.woken:
            return False
        if waiter.deadline <= self._now:
            waiter.woken = waiter.timed_out = True
            return False
        if waiter.deadline != _INF:
            self._push_deadline_locked(waiter)
        return True

    def _blocking(self, waiter: _Waiter, what: str) -> None:
        """Hook (under the clock's lock): the calling thread is about to block on ``waiter``."""

    def _check_failure_locked(self) -> None:
        """Hook (under the clock's lock): raise a failure pending for the calling thread."""

    def _wake(
        self, waiter: _Waiter, *, timed_out: bool, error: BaseException | None = None
    ) -> bool:
        """Release ``waiter`` unless already released; True if this call released it."""
        with self._lock:
            return self._wake_locked(waiter, timed_out=timed_out, error=error)

    def _wake_locked(
        self, waiter: _Waiter, *, timed_out: bool, error: BaseException | None = None
    ) -> bool:
        if waiter.woken:
            return False
        waiter.woken = True
        waiter.timed_out = timed_out
        waiter.error = error
        if waiter.queued:
            self._stale += 1
        self._unblocked(waiter)
        waiter.lock.release()
        return True

    def _unblocked(self, waiter: _Waiter) -> None:
        """Hook (under the clock's lock): ``waiter`` was released."""

    def _advance_locked(self, to: float) -> int:
        """Move the time to ``to`` (never back) and release the waiters due by then: in the
        order they began to wait, or shuffled by the seed. How many were released."""
        if to > self._now:
            self._now = to
        due: list[_Waiter] = []
        heap = self._deadlines
        while heap and heap[0][0] <= self._now:
            waiter = heapq.heappop(heap)[2]
            waiter.queued = False
            if waiter.woken:
                self._stale -= 1
            else:
                due.append(waiter)
        if self._random is not None:
            self._random.shuffle(due)
        for waiter in due:
            self._wake_locked(waiter, timed_out=True)
        return len(due)

    def _next_deadline_locked(self) -> float | None:
        heap = self._deadlines
        while heap and heap[0][2].woken:
            heapq.heappop(heap)[2].queued = False
            self._stale -= 1
        return heap[0][0] if heap else None

    def _push_deadline_locked(self, waiter: _Waiter) -> None:
        heap = self._deadlines
        if self._stale > 32 and 2 * self._stale > len(heap):
            for entry in heap:
                if entry[2].woken:
                    entry[2].queued = False
            heap[:] = [entry for entry in heap if not entry[2].woken]
            heapq.heapify(heap)
            self._stale = 0
        waiter.queued = True
        heapq.heappush(heap, (waiter.deadline, waiter.seq, waiter))


class FakeClock(_VirtualClock):
    """Virtual time moved by hand, as client-go's ``testing.FakeClock``: nothing that waits
    on it wakes for a deadline until :meth:`step` (or :meth:`set_time`) reaches it.

    ``start`` is the wall-clock time (epoch seconds) at monotonic 0.
    """

    def step(self, seconds: float) -> None:
        """Move the time on by ``seconds``, waking every wait and timer due by then."""
        with self._lock:
            self._advance_locked(self._now + seconds)

    def set_time(self, when: datetime | float) -> None:
        """Move the wall clock to ``when`` (an aware datetime or epoch seconds); never back."""
        epoch = when.timestamp() if isinstance(when, datetime) else when
        with self._lock:
            self._advance_locked(epoch - self._epoch)

    def has_waiters(self) -> bool:
        """Whether some thread waits for a deadline (client-go's ``HasWaiters``)."""
        with self._lock:
            return self._next_deadline_locked() is not None


class _IdleBlock:
    """:meth:`SimClock.idle`: the calling participant counts as blocked inside the block (a
    plain class, not a generator: loops enter it once per read or select).

    Made by :meth:`SimClock.reader_idle` with a ``key``, it is reusable (entered by one thread
    at a time), and entering it first releases ``releasing`` hand-offs held under ``key``
    (then sets it to 0), in the same hold of the clock's lock."""

    __slots__ = ("_clock", "_key", "_participant", "releasing")

    def __init__(self, clock: SimClock, key: Hashable = None) -> None:
        self._clock = clock
        self._key = key
        self._participant: _Participant | None = None
        self.releasing = 0

    def __enter__(self) -> None:
        clock = self._clock
        with clock._lock:
            changed = False
            count = self.releasing
            if count:
                self.releasing = 0
                changed = clock._release_locked(self._key, count)
            p = clock._participants.get(threading.current_thread())
            if p is not None and not p.blocked:
                p.blocked = True
                p.where = "idle"
                clock._running -= 1
                self._participant = p
                changed = True
            if changed and clock._running <= 0 and clock._held_total <= 0:
                clock._maybe_advance_locked()  # (its own first test, inline: per read/select)

    def __exit__(self, *exc: object) -> None:
        p = self._participant
        if p is not None:
            self._participant = None
            clock = self._clock
            with clock._lock:
                if p.blocked and p.thread in clock._participants:
                    p.blocked = False
                    clock._running += 1


class SimClock(_VirtualClock):
    """Virtual time that jumps to the next deadline whenever every participant is blocked on
    the clock (or idle) and nothing is held (see the module's contract).

    Use :meth:`activate` around a test: it makes this the :func:`current` clock and the calling
    thread a participant. ``stall_timeout`` (real seconds) bounds how long a participant may
    run with virtual time stopped before the test is failed with :class:`SimStall`; a wait
    that can never end raises :class:`SimDeadlock` in the activating thread.
    ``seed`` shuffles the order of waiters due at the same instant (None: the order they
    began to wait).

    ``cpu`` is the one CPU the simulation runs on while active (Linux): :meth:`activate`
    restricts the calling thread's CPU affinity to it, every thread started inside inherits
    that, and the previous affinity is restored on the way out. The participants run one at a
    time in effect, so a second CPU buys nothing, while handing the GIL to a thread woken on
    another CPU costs kernel time at every hand-off. ``"auto"`` (the default) takes the CPU
    the calling thread is on when activated, an int names a CPU, None leaves the affinity
    alone. Nothing is done where ``os.sched_setaffinity`` is missing, where the thread may run
    on one CPU only, or where the CPU is not one it may run on.
    """

    def __init__(
        self,
        start: float = SIM_EPOCH,
        seed: int | None = None,
        stall_timeout: float = 60.0,
        cpu: int | Literal["auto"] | None = "auto",
    ) -> None:
        super().__init__(start, seed)
        self.stall_timeout = stall_timeout
        self.cpu = cpu
        self._participants: dict[threading.Thread, _Participant] = {}
        self._running = 0
        self._held: dict[Hashable, int] = {}
        self._held_total = 0
        self._forgotten: set[Hashable] = set()
        self._owner: _Participant | None = None
        self._owner_waiter: _Waiter | None = None
        self._changed = time.monotonic()
        self._failure: BaseException | None = None
        self._settling: list[_Waiter] = []
        self._watching: list[_Waiter] = []
        self._watching_settled: list[_Waiter] = []
        self._active = False
        self._exits = _VirtualCondition(self, threading.Lock())
        self._key_prefix = f"sim{id(self):x}-"
        self.advances = 0
        """How many times the clock has moved (for tests and diagnostics)."""

    # participants

    @contextlib.contextmanager
    def activate(self) -> Iterator[SimClock]:
        """Run the block on this clock: it is the :func:`current` clock, the calling thread is
        its first participant, threads started by participants are participants, and a
        watchdog fails the calling thread on a stall or a deadlock."""
        _install_thread_hooks()
        me = threading.current_thread()
        with self._lock:
            self._owner = self._register_locked(me)
            self._active = True
            self._changed = time.monotonic()
        pinned = _pin_to_cpu(self.cpu)
        watchdog = threading.Thread(target=self._watch, name="simclock-watchdog", daemon=True)
        _ORIGINAL_START(watchdog)  # not a participant: it watches them
        _ACTIVE.append(self)
        try:
            with use(self):
                yield self
        finally:
            _ACTIVE.remove(self)
            with self._lock:
                self._active = False
                self._unregister_locked(me)
                # Let every remaining participant run free: the test is over.
                for _, _, waiter in list(self._deadlines):
                    self._wake_locked(waiter, timed_out=True)
            if pinned is not None:
                _unpin(*pinned)

    def participate(self) -> None:
        """Make the calling thread a participant (threads started by participants already are)."""
        with self._lock:
            self._register_locked(threading.current_thread())

    def new_key(self, prefix: str = "watch") -> str:
        """A key for :meth:`hold` that no other user of this clock has, and that
        :meth:`owns_key` recognizes (it names this clock: another process's or another
        simulation's key is not this clock's)."""
        return f"{self._key_prefix}{prefix}-{next(self._seq)}"

    def owns_key(self, key: str) -> bool:
        """Whether ``key`` came from this clock's :meth:`new_key`."""
        return key.startswith(self._key_prefix)

    def is_participant(self, thread: threading.Thread | None = None) -> bool:
        """Whether ``thread`` (the calling thread by default) is a participant."""
        return (thread or threading.current_thread()) in self._participants

    def _register_locked(self, thread: threading.Thread) -> _Participant:
        p = self._participants.get(thread)
        if p is None:
            p = self._participants[thread] = _Participant(thread)
            self._running += 1
        return p

    def _unregister_locked(self, thread: threading.Thread) -> None:
        p = self._participants.pop(thread, None)
        if p is not None and not p.blocked:
            self._running -= 1
            self._maybe_advance_locked()

    def _start_service_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._register_locked(thread)
        _wrap_run(self, thread)
        _ORIGINAL_START(thread)

    # blocking, from the participants' side

    def _block(self, waiter: _Waiter, what: str) -> None:
        """:meth:`_VirtualClock._block` with the participant's bookkeeping (its
        ``_blocking`` hook) written in: a leader's every pause passes here."""
        with self._lock:
            if self._failure is not None:
                self._check_failure_locked()
            if not self._enqueue_locked(waiter):
                return
            p = self._participants.get(threading.current_thread())
            if p is not None:
                waiter.participant = p
                if not p.blocked:
                    p.blocked = True
                    p.where = what
                    self._running -= 1
                if p is self._owner:
                    self._owner_waiter = waiter
                if self._running <= 0 and self._held_total <= 0:
                    self._maybe_advance_locked()
        waiter.lock.acquire()
        if waiter.error is not None:
            raise waiter.error

    def _check_failure_locked(self) -> None:
        error = self._failure
        owner = self._owner
        if error is not None and owner is not None and owner.thread is threading.current_thread():
            self._failure = None
            raise error

    def _unblocked(self, waiter: _Waiter) -> None:
        p = waiter.participant
        if p is not None and p.blocked:
            p.blocked = False
            self._running += 1
        if waiter is self._owner_waiter:
            self._owner_waiter = None

    def idle(self) -> contextlib.AbstractContextManager[None]:
        """The calling participant waits on something outside the clock (see the module)."""
        return _IdleBlock(self)

    def reader_idle(self, key: Hashable) -> _IdleBlock:
        """A reusable :meth:`idle` block for the one thread at a time that reads what is
        held under ``key`` (a watch stream's reader): set its ``releasing`` to the number of
        hand-offs taken up since it last read, and entering the block releases them
        (:meth:`release`) as the thread goes idle, in one hold of the clock's lock. Nothing
        is released, and no time moves, before the block is entered."""
        return _IdleBlock(self, key)

    def hold(self, key: Hashable = None) -> None:
        """One more hand-off in flight under ``key`` (ignored once ``key`` was forgotten)."""
        with self._lock:
            if key is not None and key in self._forgotten:
                return
            self._held[key] = self._held.get(key, 0) + 1
            self._held_total += 1

    def release(self, key: Hashable = None, count: int = 1) -> None:
        """``count`` hand-offs under ``key`` were taken up (never below zero)."""
        with self._lock:
            if self._release_locked(key, count):
                self._maybe_advance_locked()

    def _release_locked(self, key: Hashable, count: int) -> bool:
        """:meth:`release` without looking whether the time may move; whether it released."""
        have = self._held.get(key, 0)
        count = min(count, have)
        if count <= 0:
            return False
        if have == count:
            del self._held[key]
        else:
            self._held[key] = have - count
        self._held_total -= count
        return True

    def forget(self, key: Hashable) -> None:
        """Drop what is held under ``key``; later holds under it are ignored."""
        with self._lock:
            self._forgotten.add(key)
            count = self._held.pop(key, 0)
            if count:
                self._held_total -= count
                self._maybe_advance_locked()

    # moving the time

    def settle(self) -> None:
        """Block until every other participant waits on the clock (or is idle) and nothing is
        held, without moving the time (synctest's ``Wait``): what was set off at this instant
        has then run its course, so a check made next sees the same state on every run."""
        waiter = self._new_waiter(None)
        with self._lock:
            if not self._active:
                return
            self._settling.append(waiter)
        self._block(waiter, "settle")

    def wait_for_change(self, timeout: float | None = None, *, settle: bool = False) -> bool:
        """Block until the time next moves (someone's deadline is reached) or ``timeout``
        (virtual seconds) has passed; False on the timeout. Nothing but a participant can change
        anything, and they run only when the time moves or when another runs: a poll made after
        :meth:`settle` and again after each change sees every state the simulation reaches,
        without adding deadlines of its own.

        With ``settle``, a change wakes the caller only once what the move set off has run its
        course, as :meth:`settle` called right after would (one wake-up instead of two); a
        timeout wakes it unsettled."""
        waiter = self._new_waiter(timeout)
        with self._lock:
            if not self._active:
                return False
            (self._watching_settled if settle else self._watching).append(waiter)
        self._block(waiter, "wait for change")
        return not waiter.timed_out

    def _maybe_advance_locked(self) -> None:
        if not self._active or self._running > 0 or self._held_total > 0:
            return
        if self._settling:
            settling, self._settling = self._settling, []
            for waiter in settling:
                self._wake_locked(waiter, timed_out=False)
            self._changed = time.monotonic()
            return
        nxt = self._next_deadline_locked()
        if nxt is None:
            # An idle participant may still wake by itself (its I/O arrives): the watchdog
            # judges that case after stall_timeout; without one, nothing can ever run again.
            if not any(p.where == "idle" and p.blocked for p in self._participants.values()):
                self._fail_owner_locked(
                    SimDeadlock(self._describe_locked("no participant can run"))
                )
            return
        self.advances += 1
        self._changed = time.monotonic()
        self._advance_locked(nxt)
        if self._watching:
            watching, self._watching = self._watching, []
            for waiter in watching:
                self._wake_locked(waiter, timed_out=waiter.deadline <= self._now)
        if self._watching_settled:
            # Not timed out (those were woken above): they wait for the next quiescence.
            watching, self._watching_settled = self._watching_settled, []
            self._settling.extend(waiter for waiter in watching if not waiter.woken)
            if self._running == 0 and self._held_total == 0 and self._settling:
                # Nothing was due but the watchers themselves: settled already.
                self._maybe_advance_locked()

    def _fail_owner_locked(self, error: BaseException) -> None:
        waiter = self._owner_waiter
        if waiter is not None and not waiter.woken:
            self._wake_locked(waiter, timed_out=True, error=error)
        else:
            self._failure = error

    def _watch(self) -> None:
        while True:
            time.sleep(0.5)
            with self._lock:
                if not self._active:
                    return
                quiet = time.monotonic() - self._changed
                if quiet <= self.stall_timeout:
                    continue
                if self._running > 0 or self._held_total > 0:
                    error: RuntimeError = SimStall(
                        self._describe_locked(
                            f"virtual time has not moved for {quiet:.0f} s of real time"
                        )
                    )
                elif self._next_deadline_locked() is None:
                    error = SimDeadlock(
                        self._describe_locked(
                            f"no participant has run for {quiet:.0f} s of real time and none"
                            " waits for a deadline"
                        )
                    )
                else:
                    continue
                self._fail_owner_locked(error)

    def describe(self) -> str:
        """Where every participant is, what is held, and the virtual time (for diagnostics)."""
        with self._lock:
            return self._describe_locked("")

    def _describe_locked(self, headline: str) -> str:
        frames = sys._current_frames()
        lines = [
            f"{headline}: at virtual time {self._now:.3f} s ({_utc(self.time()).isoformat()}),"
            f" seed {self.seed}, {self._running} running, held {dict(self._held) or 'nothing'}"
        ]
        for p in self._participants.values():
            state = f"blocked ({p.where})" if p.blocked else "running"
            lines.append(f"--- {p.thread.name}: {state}")
            frame = frames.get(p.thread.ident or -1)
            if frame is not None:
                stack = traceback.format_stack(frame)[-6:]
                lines.extend(line.rstrip() for line in stack)
        return "\n".join(lines)


# --- one CPU for a simulation ------------------------------------------------------------------


def _running_cpu() -> int | None:
    """The CPU the calling thread runs on now (field 39 of ``/proc/thread-self/stat``)."""
    try:
        with open("/proc/thread-self/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _pin_to_cpu(cpu: int | str | None) -> tuple[set[int], set[int]] | None:
    """Restrict the calling thread to ``cpu`` (see :class:`SimClock`): the affinity it had and
    the threads alive before, or None if nothing was changed."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        return None
    chosen = _running_cpu() if cpu == "auto" else cpu
    if chosen not in allowed:
        chosen = min(allowed) if cpu == "auto" else None
    if not isinstance(chosen, int):
        return None
    before = {t.native_id for t in threading.enumerate() if t.native_id is not None}
    os.sched_setaffinity(0, {chosen})
    return allowed, before


def _unpin(allowed: set[int], before: set[int]) -> None:
    """Give the calling thread, and threads started while it was pinned that still run (they
    inherited its affinity), the affinity ``allowed`` back."""
    os.sched_setaffinity(0, allowed)
    for thread in threading.enumerate():
        tid = thread.native_id
        if tid is not None and tid not in before:
            with contextlib.suppress(OSError):  # it may have just ended
                os.sched_setaffinity(tid, allowed)


# --- participants are inherited: threads started by a participant join its clock ---------------

_ACTIVE: list[SimClock] = []
_ORIGINAL_START = threading.Thread.start
_ORIGINAL_JOIN = threading.Thread.join
_hooks_installed = False


def _owning_clock(thread: threading.Thread) -> SimClock | None:
    for clock in _ACTIVE:
        if thread in clock._participants:
            return clock
    return None


def _wrap_run(clock: SimClock, thread: threading.Thread) -> None:
    run = thread.run

    def run_as_participant() -> None:
        try:
            run()
        finally:
            cond = clock._exits
            with cond:
                cond.notify_all()  # joiners run again before this thread stops counting
                with clock._lock:
                    clock._unregister_locked(thread)

    thread.run = run_as_participant  # type: ignore[method-assign]


def _start(self: threading.Thread) -> None:
    clock = _owning_clock(threading.current_thread()) if _ACTIVE else None
    if clock is None:
        _ORIGINAL_START(self)
        return
    clock._start_service_thread(self)


def _join(self: threading.Thread, timeout: float | None = None) -> None:
    clock = _owning_clock(threading.current_thread()) if _ACTIVE else None
    if clock is None or self not in clock._participants:
        _ORIGINAL_JOIN(self, timeout)
        return
    cond = clock._exits
    with cond:
        cond.wait_for(lambda: self not in clock._participants, timeout)
    if self not in clock._participants:
        _ORIGINAL_JOIN(self, 1.0)


def start_detached(thread: threading.Thread) -> None:
    """Start ``thread`` outside any simulation, even from a participant: for servers that
    block on sockets (``serve_forever``) and act only on requests, whose senders are
    participants that count as running until answered. Threads it starts are outside too."""
    _ORIGINAL_START(thread)


def _install_thread_hooks() -> None:
    global _hooks_installed
    if _hooks_installed:
        return
    threading.Thread.start = _start  # type: ignore[method-assign]
    threading.Thread.join = _join  # type: ignore[method-assign]
    _hooks_installed = True
