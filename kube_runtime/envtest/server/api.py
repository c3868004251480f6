"""The request handler of the embedded API server: authentication, routing, one handler per verb.

:class:`ApiServer` maps kube-apiserver's URL space onto :class:`~.storage.Store` calls: paths
outside the resources go to :mod:`.nonresource`, resource paths are parsed by :mod:`.routing`
and handled by verb in :mod:`.reads`, :mod:`.watch`, :mod:`.writes` and :mod:`.deletion`
(subresources in :mod:`.subresources`); every error becomes a ``Status`` answer
(:mod:`.responses`). Injected faults are consulted per request. Requests are authenticated
by bearer token and, with ``authorization="RBAC"``, authorized as kube-apiserver's RBAC
authorizer does (:mod:`.authz`, which also serves the TokenRequest subresource).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kube_runtime import selectors
from kube_runtime._bounded import remember
from kube_runtime.envtest.server import authz, crds, errors, nonresource, routing, webhooks
from kube_runtime.envtest.server.conversion import Conversions
from kube_runtime.envtest.server.deletion import Deletion
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.faults import Faults, RequestAttributes
from kube_runtime.envtest.server.fieldmanager import manager_from_user_agent
from kube_runtime.envtest.server.fieldvalidation import warning_header
from kube_runtime.envtest.server.http import DeferredResponse, Request, Response, StreamResponse
from kube_runtime.envtest.server.reads import Reads
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.responses import error_response, json_response
from kube_runtime.envtest.server.routing import Route
from kube_runtime.envtest.server.storage import Obj, Store
from kube_runtime.envtest.server.watch import Watches
from kube_runtime.envtest.server.writes import Writes

__all__ = ["ApiServer", "RequestRecord", "Route"]

log = logging.getLogger(__name__)

Handler = Callable[[Request, Route], Response | StreamResponse]
#: The verbs whose objects the OwnerReferencesPermissionEnforcement plugin checks.
_OWNER_CHECKED = frozenset({"create", "update", "patch"})


@dataclass
class RequestRecord:
    """Server-side handling time of one request (for benchmarks)."""

    verb: str
    resource: str
    status: int
    seconds: float


#: The access reviews served (``/apis/authorization.k8s.io/v1/<plural>``).
#: Resource paths whose route :meth:`ApiServer._dispatch` keeps (it starts afresh when full).
_ROUTES_KEPT = 4096
_REVIEWS = (["selfsubjectaccessreviews"], ["subjectaccessreviews"])


def _manager(request: Request) -> str:
    """The field manager a request's writes are recorded under."""
    return request.param("fieldManager") or manager_from_user_agent(
        request.headers.get("user-agent", "")
    )


def _internal_error(e: Exception) -> ApiError:
    """kube-apiserver's 500 for an unexpected failure (``Internal error occurred: ...``)."""
    return errors.internal_error(f"{type(e).__name__}: {e}")


class ApiServer:
    """The request handler. ``crd_hook`` is told about CRD writes so it can (re)serve kinds.

    ``records`` keeps the handling time of each request while ``record_requests`` is set;
    ``call_later`` is to be set to the HTTP server's timers (``HttpServer.call_later``, on the
    store's clock): it ends watches at their timeout and sends BOOKMARKs every
    ``bookmark_interval`` seconds to the watches that asked for them.
    ``token``: the admin's bearer token (None: no authentication); ``authorization``: one of
    :data:`.authz.MODES`, ``AlwaysAllow`` (every authenticated request) or ``RBAC`` (the
    stored roles and bindings decide, and the OwnerReferencesPermissionEnforcement admission
    plugin runs; see :mod:`.authz`). ``authorizer`` is the RBAC authorizer (None otherwise).
    """

    def __init__(
        self,
        store: Store,
        faults: Faults | None = None,
        *,
        token: str | None = None,
        address: str = "127.0.0.1:0",
        bookmark_interval: float = 1.0,
        crd_hook: Callable[[str, Obj], None] | None = None,
        authorization: str = "AlwaysAllow",
    ) -> None:
        if authorization not in authz.MODES:
            raise ValueError(f"authorization must be one of {authz.MODES}, not {authorization!r}")
        self.store = store
        self.registry: Registry = store.registry
        self.faults = faults or Faults()
        self.token = token
        self.address = address
        self.crd_hook = crd_hook
        self.records: deque[RequestRecord] = deque(maxlen=200_000)
        self.record_requests = False
        #: Resource path -> (registry generation, its parts, its route or None): the path's
        #: parsing and routing, done again only when the served resources change.
        self._routes: dict[str, tuple[int, list[str], Route | None]] = {}
        self.watches = Watches(store, self.faults, bookmark_interval=bookmark_interval)
        #: Admission webhooks: called by the store on the writes of requests that may match.
        self.webhooks = webhooks.Webhooks(store)
        store.admission = self.webhooks
        self.authenticator = authz.Authenticator(store, token)
        self.authorizer: authz.RbacAuthorizer | None = None
        if authorization == "RBAC":
            self.authorizer = authz.RbacAuthorizer(store)
            store.admission = authz.OwnerReferencesAdmission(self.webhooks, self.authorizer)
        #: CRD conversion webhooks, attached to the routes of the resources that have one.
        self.conversions = Conversions(store)
        reads = Reads(store)
        writes = Writes(store, self._after_write)
        deletion = Deletion(store, self._after_write)
        self._handlers: dict[str, Handler] = {
            "get": reads.get,
            "list": reads.list,
            "watch": self.watches.watch,
            "create": writes.create,
            "update": writes.update,
            "patch": writes.patch,
            "delete": deletion.delete,
            "deletecollection": deletion.deletecollection,
        }

    @property
    def bookmark_interval(self) -> float:
        """Seconds between the BOOKMARKs of the watches that asked for them."""
        return self.watches.bookmark_interval

    @bookmark_interval.setter
    def bookmark_interval(self, value: float) -> None:
        self.watches.bookmark_interval = value

    @property
    def call_later(self) -> Callable[[float, Callable[[], None]], Any] | None:
        """The server's timers (see the class)."""
        return self.watches.call_later

    @call_later.setter
    def call_later(self, value: Callable[[float, Callable[[], None]], Any] | None) -> None:
        self.watches.call_later = value

    def bookmark_tick(self) -> None:
        """Send a BOOKMARK to every watch that asked for them (called periodically)."""
        self.watches.bookmark_tick()

    def _after_write(self, op: str, info: ResourceInfo, obj: Obj) -> None:
        if info.key == crds.CRD_KEY and self.crd_hook:
            with webhooks.suspended():  # the server's own writes: no admission
                self.crd_hook(op, obj)

    def __call__(self, request: Request) -> Response | StreamResponse | DeferredResponse:
        started = time.perf_counter()

        def serve() -> Response | StreamResponse | DeferredResponse:
            user = None
            if self.token is not None and request.path.rstrip("/") not in nonresource.OPEN_PATHS:
                user = self.authenticator.authenticate(request.headers.get("authorization", ""))
                if self.authorizer is not None:
                    self.authorizer.check(
                        authz.request_attributes(user, request.method, request.path, request.param)
                    )
            return self._dispatch(request, user)

        response = self._guarded(request, serve)
        if self.record_requests and isinstance(response, Response):
            self.records.append(
                RequestRecord(
                    request.method, request.path, response.status, time.perf_counter() - started
                )
            )
        return response

    def _guarded(
        self, request: Request, serve: Callable[[], Response | StreamResponse | DeferredResponse]
    ) -> Response | StreamResponse | DeferredResponse:
        """``serve()``, every error answered with a Status."""
        try:
            response = serve()
        except ApiError as e:
            response = error_response(e)
        except (ValueError, selectors.SelectorError) as e:
            response = error_response(errors.bad_request(str(e)))
        except Exception as e:  # the last line of defence: a Status, never a dropped request
            # Writes commit as their very last step (Store._commit), so a failure before it
            # leaves nothing behind; one after it (a hook) leaves a readable object.
            log.exception("internal error serving %s %s", request.method, request.target)
            response = error_response(_internal_error(e))
        return response

    def _crd_objects(self) -> list[Obj]:
        """The stored CustomResourceDefinitions (for the OpenAPI documents)."""
        info = self.registry.by_key(*crds.CRD_KEY)
        return [] if info is None else [s.obj for s in self.store.list(info, None).items]

    def _dispatch(
        self, request: Request, user: authz.User | None = None
    ) -> Response | StreamResponse | DeferredResponse:
        path = request.path.rstrip("/") or "/"
        generation = self.registry.generation
        known = self._routes.get(path)
        if known is not None and known[0] == generation:
            return self._routed(request, user, known[1], known[2])
        answer = nonresource.serve(self.registry, self.address, request, path, self._crd_objects)
        if answer is not None:
            return answer
        parts = path.strip("/").split("/")
        if (
            len(parts) == 7
            and parts[:3] == ["api", "v1", "namespaces"]
            and parts[4:7:2]
            == [
                "serviceaccounts",
                "token",
            ]
        ):
            return self._token_request(request, parts[3], parts[5])
        if parts[:3] == ["apis", "authorization.k8s.io", "v1"] and parts[3:] in _REVIEWS:
            if request.method != "POST":
                raise errors.method_not_allowed()
            review = authz.access_review(
                self.authorizer,
                user,
                request.body,
                self_review=parts[3] == "selfsubjectaccessreviews",
                manager=_manager(request),
                now=self.store.clock.time(),
            )
            return json_response(201, review)
        route = routing.route(self.registry, parts)
        remember(self._routes, path, (generation, parts, route), _ROUTES_KEPT)
        return self._routed(request, user, parts, route)

    def _routed(
        self, request: Request, user: authz.User | None, parts: list[str], route: Route | None
    ) -> Response | StreamResponse | DeferredResponse:
        """Serve a request for an API resource path whose ``route`` was found (None: none)."""
        if route is None:
            return nonresource.not_found(self.registry, parts)
        verb = routing.verb(request, route)
        faulted = self._fault_attributes(request, route, verb)
        if faulted is not None:
            injected = self.faults.check(faulted)
            if injected is not None:
                raise injected
        convert = self.conversions.converter(route.info)
        if convert is not None:
            route = dataclasses.replace(route, convert=convert)
        if (
            self.webhooks.wanted(route, verb)
            or (convert is not None and verb != "watch")
            or (self.authorizer is not None and verb in _OWNER_CHECKED and not route.subresource)
        ):
            return DeferredResponse(lambda: self._admitted(request, route, verb, faulted, user))
        response = self._handlers[verb](request, route)
        if isinstance(response, Response) and faulted is not None:
            response.delay = self.faults.delay(faulted)
        return response

    def _token_request(self, request: Request, namespace: str, name: str) -> Response:
        """``serviceaccounts/<name>/token`` (create only): a TokenRequest answered."""
        if request.method != "POST":
            raise errors.method_not_allowed()
        review = self.authenticator.request_token(
            namespace,
            name,
            request.body,
            manager=_manager(request),
            dry_run=request.param("dryRun") == "All",
        )
        return json_response(201, review)

    def _fault_attributes(
        self, request: Request, route: Route, verb: str
    ) -> RequestAttributes | None:
        """What the fault rules match of this request; None while there are no rules."""
        if not self.faults.armed:
            return None
        return RequestAttributes(
            route.info.plural,
            verb,
            route.subresource or "",
            request.headers.get("user-agent", ""),
            request.param("fieldManager") or "",
        )

    def _admitted(
        self,
        request: Request,
        route: Route,
        verb: str,
        faulted: RequestAttributes | None = None,
        user: authz.User | None = None,
    ) -> Response:
        """A request that may call admission or conversion webhooks, served off the HTTP loop
        (the webhooks may take seconds, and may call this server): warnings become headers.
        ``user`` makes the request (for the admission plugins of an RBAC server)."""
        context = webhooks.RequestContext(route, request, verb)
        with webhooks.serving(context), authz.acting(user):
            response = self._guarded(request, lambda: self._handlers[verb](request, route))
        assert isinstance(response, Response)  # writes answer plainly
        if context.warnings:
            found = warning_header(context.warnings)
            previous = response.headers.get("Warning")
            response.headers["Warning"] = f"{previous}, {found}" if previous else found
        if faulted is not None:
            response.delay = self.faults.delay(faulted)
        return response
