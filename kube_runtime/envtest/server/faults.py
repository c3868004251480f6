"""Fault injection for tests: make chosen requests fail, slow down, or cut watch streams.

A rule (:meth:`Faults.fail`, :meth:`Faults.add_latency`) matches a request by:

* ``resource``: the plural (``"sites"``: the resource *and* its subresources, as before
  subresources could be named), ``"sites/status"`` (that subresource only), ``"sites/*"``
  (any subresource, not the resource itself), ``"*/status"`` (the status of any resource) or
  ``"*"`` (everything). ``subresource=""`` keeps a rule to the main resource only
  (``fail("sites", "patch", subresource="")`` leaves ``sites/status`` alone);
  ``subresource="status"`` is the same as writing ``"sites/status"``.
* ``verb``: ``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``, ``delete``,
  ``deletecollection``, or ``*``.
* ``user_agent`` (optional): the request's ``User-Agent`` header, whole or its product (the
  part before the first ``/``: ``"site-operator"`` matches ``site-operator/v0.1 (linux)``).
* ``field_manager`` (optional): the write's field manager, ``?fieldManager=`` or else the
  User-Agent's product as the server records it in managedFields; only ``create``,
  ``update`` and ``patch`` have one, so such a rule never matches another verb.

So ``fail("sites", "patch", 500, user_agent="site-operator")`` fails the operator's patches of
Sites (its status patches included) and not the test's own, and
``fail("sites/status", "patch", 500)`` fails status patches only. A failure rule fires with
its probability, or on each of the next ``times`` matching calls when ``times`` is set, and is
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

#: The verbs whose requests have a field manager.
_WRITES = frozenset({"create", "update", "patch"})


@dataclass(frozen=True)
class RequestAttributes:
    """What a rule can match of a request: its resource (plural), subresource (``""`` for
    the resource itself), verb, ``User-Agent`` header and ``?fieldManager=`` parameter
    (``""`` when absent)."""

    resource: str
    verb: str
    subresource: str = ""
    user_agent: str = ""
    field_manager_param: str = ""

    @property
    def field_manager(self) -> str | None:
        """The write's field manager as the server records it (the parameter, else the
        User-Agent's product); None for a request that is no write."""
        if self.verb not in _WRITES:
            return None
        return self.field_manager_param or self.user_agent.split("/", 1)[0]


def _split_resource(resource: str, subresource: str | None) -> tuple[str, str | None]:
    """``(plural, subresource)`` of a rule: ``"sites/status"`` is ``("sites", "status")``;
    a plain plural keeps ``subresource`` (None: any, subresources included)."""
    if not isinstance(resource, str) or not resource:
        raise ValueError(f"resource must be a plural, 'plural/subresource' or '*': {resource!r}")
    plural, slash, sub = resource.partition("/")
    if not slash:
        return resource, subresource
    if not plural or not sub or "/" in sub:
        raise ValueError(f"resource must be a plural, 'plural/subresource' or '*': {resource!r}")
    if subresource is not None and subresource != sub:
        raise ValueError(f"resource {resource!r} names another subresource than {subresource!r}")
    return plural, sub


@dataclass
class _Match:
    """The request matcher a rule has (see the module docstring)."""

    resource: str = "*"
    verb: str = "*"
    #: None: the resource and any subresource; "": the resource only; "*": any subresource.
    subresource: str | None = None
    user_agent: str | None = None
    field_manager: str | None = None

    def matches_request(self, request: RequestAttributes) -> bool:
        if self.resource not in ("*", request.resource) or self.verb not in ("*", request.verb):
            return False
        sub = self.subresource
        if sub is not None:
            if sub == "*":
                if not request.subresource:
                    return False
            elif sub != request.subresource:
                return False
        if self.user_agent is not None:
            agent = request.user_agent
            if self.user_agent != agent and self.user_agent != agent.split("/", 1)[0]:
                return False
        return self.field_manager is None or self.field_manager == request.field_manager


@dataclass
class FaultRule(_Match):
    """One failure rule: matching requests are answered ``code`` (see :meth:`Faults.fail`)."""

    code: int = 500
    probability: float = 1.0
    times: int | None = None
    retry_after: int = 1

    def matches(self, resource: str, verb: str, subresource: str = "") -> bool:
        """Whether a request for ``resource``/``subresource`` with ``verb`` and no
        User-Agent or field manager matches (see :meth:`matches_request`)."""
        return self.matches_request(RequestAttributes(resource, verb, subresource))

    def error(self) -> ApiError:
        """The injected answer; a 429 says ``retryAfterSeconds`` (and so ``Retry-After``)."""
        details = {"retryAfterSeconds": self.retry_after} if self.code == 429 else None
        message = _MESSAGES.get(self.code, f"injected error {self.code}")
        return api_error(self.code, message, None, details)


@dataclass
class _Latency(_Match):
    seconds: float = 0.0


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

    @property
    def armed(self) -> bool:
        """Whether any failure or latency rule is set (the server skips the matching
        otherwise)."""
        return bool(self._rules or self._latency)

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
        subresource: str | None = None,
        user_agent: str | None = None,
        field_manager: str | None = None,
    ) -> FaultRule:
        """Answer matching requests with ``code`` (409, 429 with Retry-After, 500, ...).

        ``resource``: ``"sites"`` (with its subresources), ``"sites/status"``,
        ``"sites/*"``, ``"*/status"`` or ``"*"``; ``subresource``: None (any, the
        default), ``""`` (the main resource only) or a name. ``user_agent``: the request's
        User-Agent, whole or its product; ``field_manager``: the write's field manager
        (``?fieldManager=`` or the User-Agent's product). ``probability``: the chance each
        matching request fails; ``times``: fail the next N matching requests, then drop the
        rule. Raises ValueError for a malformed ``resource``."""
        plural, sub = _split_resource(resource, subresource)
        rule = FaultRule(
            plural,
            verb,
            sub,
            user_agent,
            field_manager,
            code=code,
            probability=probability,
            times=times,
            retry_after=retry_after,
        )
        with self._lock:
            self._rules.append(rule)
        return rule

    def add_latency(
        self,
        seconds: float,
        resource: str = "*",
        verb: str = "*",
        *,
        subresource: str | None = None,
        user_agent: str | None = None,
        field_manager: str | None = None,
    ) -> None:
        """Delay the answers of matching requests by ``seconds`` (matching as :meth:`fail`;
        the delays of every matching rule add up)."""
        plural, sub = _split_resource(resource, subresource)
        with self._lock:
            self._latency.append(
                _Latency(plural, verb, sub, user_agent, field_manager, seconds=seconds)
            )

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

    def check(self, resource: str | RequestAttributes, verb: str = "*") -> ApiError | None:
        """The injected error for this request, if a rule fires (consuming one of its
        ``times``). ``resource``: the request's :class:`RequestAttributes`, or a plural
        (with ``verb``) for a request of the main resource without User-Agent."""
        if not self._rules:
            return None
        request = (
            resource
            if isinstance(resource, RequestAttributes)
            else RequestAttributes(resource, verb)
        )
        with self._lock:
            for rule in list(self._rules):
                if not rule.matches_request(request):
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

    def delay(self, resource: str | RequestAttributes, verb: str = "*") -> float:
        """The added latency of this request (seconds): the sum of the matching rules'."""
        if not self._latency:
            return 0.0
        request = (
            resource
            if isinstance(resource, RequestAttributes)
            else RequestAttributes(resource, verb)
        )
        with self._lock:
            return sum(x.seconds for x in self._latency if x.matches_request(request))
