"""Fault injection for tests: make chosen requests fail, slow down, or cut watch streams.

Rules match on resource (plural, or ``*``) and verb (``get``, ``list``, ``watch``, ``create``,
``update``, ``patch``, ``delete``, ``deletecollection``, or ``*``). A rule fires with its
probability, or on each of the next ``times`` matching calls when ``times`` is set, and is
removed once used up. Thread-safe; the server consults it for every resource request.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

from kube_runtime.envtest.server.errors import ApiError, api_error

_MESSAGES = {
    409: "Operation cannot be fulfilled: injected conflict; please apply your changes to the latest version and try again",
    429: "Too many requests, please try again later (injected).",
    500: "Internal error occurred: injected failure",
    503: "The server is currently unable to handle the request (injected).",
}


@dataclass
class FaultRule:
    resource: str = "*"
    verb: str = "*"
    code: int = 500
    probability: float = 1.0
    times: int | None = None
    retry_after: int = 1

    def matches(self, resource: str, verb: str) -> bool:
        return self.resource in ("*", resource) and self.verb in ("*", verb)

    def error(self) -> ApiError:
        """The injected answer; a 429 says ``retryAfterSeconds`` (and so ``Retry-After``)."""
        details = {"retryAfterSeconds": self.retry_after} if self.code == 429 else None
        message = _MESSAGES.get(self.code, f"injected error {self.code}")
        return api_error(self.code, message, None, details)


@dataclass
class _Latency:
    resource: str
    verb: str
    seconds: float


class Faults:
    """The server's fault switchboard (``cluster.faults`` in tests)."""

    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._latency: list[_Latency] = []
        self._random = random.Random(seed)
        self.watch_drop_every: int | None = None
        #: How many errors the rules have injected so far.
        self.injected = 0

    def reseed(self, seed: int | None) -> None:
        """Restart the random choices of probabilistic rules from ``seed`` (repeatable runs)."""
        with self._lock:
            self._random.seed(seed)

    def fail(
        self,
        resource: str = "*",
        verb: str = "*",
        code: int = 500,
        *,
        probability: float = 1.0,
        times: int | None = None,
        retry_after: int = 1,
    ) -> FaultRule:
        """Answer matching requests with ``code`` (409, 429 with Retry-After, 500, ...)."""
        rule = FaultRule(resource, verb, code, probability, times, retry_after)
        with self._lock:
            self._rules.append(rule)
        return rule

    def add_latency(self, seconds: float, resource: str = "*", verb: str = "*") -> None:
        with self._lock:
            self._latency.append(_Latency(resource, verb, seconds))

    def drop_watches_every(self, events: int | None) -> None:
        """Close every watch stream after it has delivered ``events`` events (None: never)."""
        self.watch_drop_every = events

    def clear(self) -> None:
        """Remove every rule and latency, stop cutting watches, reset :attr:`injected`."""
        with self._lock:
            self._rules.clear()
            self._latency.clear()
            self.watch_drop_every = None
            self.injected = 0

    def check(self, resource: str, verb: str) -> ApiError | None:
        """The injected error for this call, if a rule fires (consuming one of its ``times``)."""
        if not self._rules:
            return None
        with self._lock:
            for rule in list(self._rules):
                if not rule.matches(resource, verb):
                    continue
                if rule.probability < 1.0 and self._random.random() >= rule.probability:
                    continue
                if rule.times is not None:
                    rule.times -= 1
                    if rule.times <= 0:
                        self._rules.remove(rule)
                self.injected += 1
                return rule.error()
        return None

    def delay(self, resource: str, verb: str) -> float:
        if not self._latency:
            return 0.0
        with self._lock:
            return sum(
                x.seconds
                for x in self._latency
                if x.resource in ("*", resource) and x.verb in ("*", verb)
            )
