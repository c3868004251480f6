"""The framework's REST client: JSON dicts in and out, typed errors, one connection pool.

:class:`Client` speaks the Kubernetes REST API directly with urllib3 and orjson; the
``kubernetes`` package supplies only configuration, authentication and TLS (see
:mod:`kube_runtime.client.config`). No ``V1*`` model is ever built. Thread-safe: one client
serves every worker thread of a process. Requests (not watches) take a lean HTTP/1.1 exchange
on urllib3's pooled connections (:mod:`kube_runtime.client.transport`: less than half the CPU
of urllib3's request path); with a proxy, a configuration's own ``retries``, or
``KUBE_RUNTIME_HTTP=urllib3`` in the environment, urllib3's request path is used.

Objects are plain dicts. Where a method takes a kind, a resource model class (pydantic, with
``__kube_resource__``) may be passed instead: reads then return ``cls.model_validate(data)``
(a list's ``items`` are validated one by one, the list stays a dict), and writes of a model
return the response as the model's class. Watches always yield dicts (they feed caches,
which hold JSON).

Lists page through ``limit``/``continue`` and return one List whose
``metadata.resourceVersion`` is the first page's: continue tokens serve a consistent snapshot
at that version, so it is the version the whole list is as of (client-go's ``ListPager``
does the same). If a later page fails with 410 Expired (the snapshot was compacted), the list
is fetched again in full without paging, as client-go's pager does.

The status subresource is written with ``client.status().update(obj)`` (also spelled
``update_status(obj)``) or ``status().patch(...)``; any other subresource through
``client.subresource("scale")``. The class implements
:class:`kube_runtime.client.interfaces.Client`; ``list(index=...)`` is a ``ValueError`` here
(indexes belong to caches).

Every request counts in ``rest_client_requests_total`` (code, HTTP method, host; code
``<error>`` when no response arrived) and ``rest_client_request_duration_seconds`` (verb =
the HTTP method, as client-go labels it, and host); a watch counts once, when it opens.
Failures without an answer raise :class:`~kube_runtime.client.errors.ApiConnectionError`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Unpack
from urllib.parse import urlencode, urlparse

import orjson
import urllib3
from pydantic import BaseModel

from kube_runtime import __version__, clock
from kube_runtime._bounded import remember
from kube_runtime.client import config as _config
from kube_runtime.client import transport
from kube_runtime.client._closing import ClosesOnExit
from kube_runtime.client.base import ClientBase, StatusWriterMixin, SubResourceMixin
from kube_runtime.client.errors import ApiConnectionError, Gone, error_from_response
from kube_runtime.client.interfaces import (
    ObjectLike,
    PatchBody,
    StatusWriter,
    SubResourceClient,
)
from kube_runtime.client.mapping import Resource, RestMapper, model_class
from kube_runtime.client.options import (
    DeleteOptions,
    ListQuery,
    PatchOptions,
    RestWatchKeywords,
    check_keywords,
)
from kube_runtime.client.watch import SIM_WATCH_HEADER, Watch
from kube_runtime.kinds import KindLike, kind_for
from kube_runtime.meta import Obj
from kube_runtime.metrics import REST_LATENCY, REST_REQUESTS, Observe, lean_inc, lean_observe

__all__ = ["PATCH_CONTENT_TYPES", "Client", "Selector"]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
Selector = str | Mapping[str, str]

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}
DEFAULT_PAGE_SIZE = 500
# Read timeout margin over a watch's timeoutSeconds: the server ends the stream first.
_WATCH_READ_MARGIN = 30.0
_PATHS_MAX = 1024
"""How many object paths a client remembers (:meth:`Client._object_path`)."""
_HEADER_BLOCKS_MAX = 64
"""How many rendered header sets a client remembers (:meth:`Client._header_block`)."""


def _retry_policy(read: int) -> urllib3.Retry:
    return urllib3.Retry(
        total=3,
        connect=3,
        read=read,
        redirect=0,
        status=0,
        other=0,
        respect_retry_after_header=False,
        raise_on_status=False,
    )


def _sim_watch_key(headers: dict[str, str]) -> str | None:
    """Under a simulated clock, a watch opened by one of its participants names itself to the
    server (:data:`~kube_runtime.client.watch.SIM_WATCH_HEADER`), which then holds the clock
    for every event it sends until the :class:`Watch` has handed the event on. The key, or None
    on any other clock."""
    clk = clock.current()
    if not isinstance(clk, clock.SimClock) or not clk.is_participant():
        return None
    key = clk.new_key()
    headers[SIM_WATCH_HEADER] = key
    return key


def _error_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers an error reads (``Retry-After``), from urllib3's case-insensitive headers
    or the transport's lower-cased ones."""
    value = headers.get("retry-after") or headers.get("Retry-After")
    return {"Retry-After": value} if value else {}


def _selector(value: Selector | None) -> str | None:
    """A label/field selector string; a mapping means ``k=v`` equalities joined by commas."""
    if value is None or isinstance(value, str):
        return value or None
    return ",".join(f"{k}={v}" for k, v in value.items()) or None


def _as_dict(obj: Any) -> Obj:
    """The JSON form of an object: a dict as is, a pydantic model dumped (set fields only)."""
    if type(obj) is dict:  # the usual case: no ABC instance check
        return obj
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(obj, Mapping):
        return obj if isinstance(obj, dict) else dict(obj)
    raise TypeError(f"expected a dict or a resource model, got {type(obj).__name__}")


def _metadata(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _with_type(obj: Obj, resource: Resource) -> Obj:
    """``obj`` with apiVersion/kind filled in (a copy only when something was missing)."""
    if obj.get("apiVersion") and obj.get("kind"):
        return obj
    return {"apiVersion": resource.api_version, "kind": resource.kind, **obj}


class Client(ClosesOnExit, ClientBase):
    """A thread-safe Kubernetes REST client over one urllib3 pool (see the module docstring).

    ``configuration``: a ``kubernetes.client.Configuration`` (None: the package default).
    Timeouts: ``connect_timeout`` for every request, ``read_timeout`` for every non-watch
    request; a watch waits ``timeout_seconds + 30`` s for data, or forever (TCP keep-alive
    notices dead peers) without ``timeout_seconds``.
    """

    def __init__(
        self,
        configuration: Any = None,
        *,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        page_size: int = DEFAULT_PAGE_SIZE,
        user_agent: str | None = None,
    ) -> None:
        if configuration is None:
            from kubernetes.client import Configuration

            configuration = Configuration.get_default_copy()
        self.configuration = configuration
        self._base = str(configuration.host).rstrip("/")
        self.host = urlparse(self._base).netloc
        self._pool = _config.pool_manager(configuration)
        self._hostpools: transport.HostPools = {}
        # Per (code, method): the request counter's increment and the latency histogram's
        # observe, bound to their children (labels() costs a lock and a tuple key per call).
        # Keyed by the status as an int or "<error>" (no str() per request).
        self._recorders: dict[tuple[int | str, str], tuple[Callable[[], None], Observe]] = {}
        # Request headers rendered for the transport, per (authorization, content type,
        # accept, user agent): the same few are sent again and again.
        self._header_blocks: dict[
            tuple[str | None, str | None, str | None, str], transport.HeaderBlock
        ] = {}
        # recent objects' paths: (id of the Resource, namespace, name, subresource) ->
        # (that Resource, the path); Resource.path quotes each part on every call
        self._paths: dict[tuple[int, str | None, str, str | None], tuple[Resource, str]] = {}
        self._credentials = _config.Credentials(configuration)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
        # Connection failures are retried (nothing was sent); a broken read only for
        # idempotent methods, once (a pooled keep-alive connection the server just closed).
        # Answers are never retried here, not even 429/503 with Retry-After: they surface as
        # typed errors with ``retry_after`` and the caller (a rate-limited queue) waits.
        self._retries = (
            configuration.retries if configuration.retries is not None else _retry_policy(read=1)
        )
        self._watch_retries = _retry_policy(read=0)
        # Requests take the lean exchange on urllib3's pooled connections unless a proxy is
        # configured, the retry policy is the configuration's own, or KUBE_RUNTIME_HTTP=urllib3.
        self._fast = (
            transport.supports(self._pool)
            and configuration.retries is None
            and os.environ.get("KUBE_RUNTIME_HTTP", "") != "urllib3"
        )
        self.user_agent = user_agent or f"kube-runtime/{__version__}"
        self.page_size = page_size
        self.mapper = RestMapper(self)
        #: Called with (method, path) before every request that is not a GET; it raises
        #: (:class:`~kube_runtime.client.errors.WriteRefused`) to stop the write from being
        #: sent. A leader-electing manager installs one (see :mod:`kube_runtime.leaderelection`).
        self.write_guard: Callable[[str, str], None] | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike[str] | None = None, context: str | None = None, **kwargs: Any
    ) -> Client:
        """A client from a kubeconfig: ``path``, else ``$KUBECONFIG`` (merged), else
        ``~/.kube/config``; ``context`` None means the file's current-context."""
        return cls(_config.load_kubeconfig(path, context), **kwargs)

    @classmethod
    def in_cluster(
        cls, *, token_path: str | None = None, ca_path: str | None = None, **kwargs: Any
    ) -> Client:
        """A client for the pod's own cluster (service-account token and CA; see
        :func:`kube_runtime.client.config.load_in_cluster` for the paths)."""
        return cls(_config.load_in_cluster(token_path, ca_path), **kwargs)

    @classmethod
    def from_env(cls, **kwargs: Any) -> Client:
        """In-cluster when ``KUBERNETES_SERVICE_HOST`` is set, else from the kubeconfig."""
        if _config.in_cluster_available():
            return cls.in_cluster(**kwargs)
        return cls.from_kubeconfig(**kwargs)

    def clone(self) -> Client:
        """A new client with the same configuration and settings and a pool of its own
        (no ``write_guard``): for a component that must not share, or change, another's."""
        return type(self)(
            self.configuration,
            connect_timeout=self._connect_timeout,
            read_timeout=self._read_timeout,
            page_size=self.page_size,
            user_agent=self.user_agent,
        )

    def close(self) -> None:
        """Close pooled connections (open watches keep theirs until closed)."""
        self._pool.clear()
        transport.close_hostpools(self._hostpools)

    def __repr__(self) -> str:
        return f"Client({self._base!r})"

    # ------------------------------------------------------------------ transport

    def _headers(
        self, content_type: str | None = None, accept: str | None = None
    ) -> dict[str, str]:
        return self._header_dict(self._credentials.header(), content_type, accept)

    def _header_dict(
        self, auth: str | None, content_type: str | None, accept: str | None
    ) -> dict[str, str]:
        headers = {"Accept": accept or "application/json", "User-Agent": self.user_agent}
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _header_block(self, content_type: str | None, accept: str | None) -> transport.HeaderBlock:
        """:meth:`_headers` rendered for the lean transport
        (:func:`~kube_runtime.client.transport.header_block`), once per combination."""
        auth = self._credentials.header()
        key = (auth, content_type, accept, self.user_agent)
        block = self._header_blocks.get(key)
        if block is None:
            block = transport.header_block(self._header_dict(auth, content_type, accept))
            remember(self._header_blocks, key, block, _HEADER_BLOCKS_MAX)
        return block

    def _url(self, path: str, query: Mapping[str, Any] | None) -> str:
        if not query:
            return self._base + path
        params = {k: v for k, v in query.items() if v is not None}
        return f"{self._base}{path}?{urlencode(params)}" if params else self._base + path

    def _record(self, code: int | str, method: str, started: float) -> None:
        recorder = self._recorders.get((code, method))
        if recorder is None:
            recorder = self._recorders[code, method] = (
                lean_inc(REST_REQUESTS.labels(str(code), method, self.host)),
                lean_observe(REST_LATENCY.labels(method, self.host)),
            )
        recorder[0]()
        recorder[1](time.monotonic() - started)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        accept: str | None = None,
    ) -> Any:
        """One request; the parsed JSON response, or a typed ApiError for a non-2xx answer.

        ``body`` is JSON-encoded with orjson unless it is ``bytes``. ``query`` values that
        are None are left out. ``accept`` replaces the ``Accept`` header (e.g. to ask for a
        ``meta.k8s.io`` Table as ``kubectl get`` does).
        """
        return self._request_raw(method, path, query, body, content_type, accept)[0]

    def _request_raw(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None,
        body: Any,
        content_type: str,
        accept: str | None,
        loads: Callable[[bytes], Any] = orjson.loads,
    ) -> tuple[Any, bytes]:
        """:meth:`request`'s answer, parsed (by ``loads``), and its body as the server sent it."""
        if method != "GET" and self.write_guard is not None:
            self.write_guard(method, path)
        url = self._url(path, query)
        payload = None if body is None else body if isinstance(body, bytes) else orjson.dumps(body)
        ctype = content_type if payload is not None else None
        started = time.monotonic()
        try:
            if self._fast:
                answer = transport.exchange(
                    self._pool,
                    method,
                    url,
                    self._header_block(ctype, accept),
                    payload,
                    connect_timeout=self._connect_timeout,
                    read_timeout=self._read_timeout,
                    hostpools=self._hostpools,
                )
                status, data, answer_headers = answer.status, answer.data, answer.headers
            else:
                resp = self._pool.request(
                    method,
                    url,
                    body=payload,
                    headers=self._headers(ctype, accept),
                    timeout=self._timeout,
                    retries=self._retries,
                    redirect=False,
                )
                status, data, answer_headers = resp.status, resp.data, resp.headers
        except (urllib3.exceptions.HTTPError, transport.TransportError) as err:
            self._record("<error>", method, started)
            log.debug("%s %s failed: %r", method, path, err)
            raise ApiConnectionError(f"{method} {url}: {err}") from err
        self._record(status, method, started)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "%s %s -> %d (%.1f ms)",
                method,
                path,
                status,
                (time.monotonic() - started) * 1000,
            )
        if status >= 300:
            if status == 401:
                self._credentials.invalidate()
            raise error_from_response(status, data, _error_headers(answer_headers))
        if not data:
            return {}, data
        try:
            return loads(data), data
        except orjson.JSONDecodeError as err:
            raise error_from_response(500, data[:200]) from err

    def update_raw(
        self, obj: Obj, *, loads: Callable[[bytes], Any] = orjson.loads
    ) -> tuple[Obj, bytes]:
        """:meth:`update` of a plain object, with no options, that also returns the answer's
        body as the server sent it: ``(stored object, body bytes)``. A server sends a watch
        event's object as it answered the write, so a caller that watches the object can
        recognise the event of its own write by its bytes and skip decoding it again (see
        :class:`~kube_runtime.client.watch.Watch`'s ``loads``), or, when the event came
        first, decode the answer with ``loads`` (``orjson.loads``'s result for the same
        bytes; it may raise ``orjson.JSONDecodeError``) from what the watch decoded."""
        resource, body, name, namespace = self._object_target(obj)
        self._require_namespace(resource, namespace, "update")
        data, raw = self._request_raw(
            "PUT",
            self._object_path(resource, namespace, name),
            None,
            body,
            "application/json",
            None,
            loads,
        )
        return data, raw

    def get_path(self, path: str) -> Any:
        """GET any API path (discovery documents, ``/version``) as parsed JSON."""
        return self.request("GET", path)

    # ------------------------------------------------------------------ helpers

    def _resource(self, kind: KindLike) -> Resource:
        return self.mapper.resource_for(kind)

    def _object_resource(self, obj: Any) -> Resource:
        """The resource of an object to write (``kind_for(obj)``'s)."""
        api_version = obj.get("apiVersion") if type(obj) is dict else None
        kind = obj.get("kind") if api_version else None
        if kind and type(api_version) is str and type(kind) is str:
            # A plain object naming its kind (the usual case): resolved from the two strings.
            return self.mapper.resource_for_object(api_version, kind)
        return self._resource(kind_for(obj))

    @staticmethod
    def _require_namespace(resource: Resource, namespace: str | None, verb: str) -> None:
        if resource.namespaced and not namespace:
            raise ValueError(f"{verb} {resource.kind}: a namespace is required (namespaced kind)")

    def _object_target(self, obj: Any) -> tuple[Resource, Obj, str, str | None]:
        """Resource, JSON body, name and namespace of an object to write."""
        resource = self._object_resource(obj)
        body = _with_type(_as_dict(obj), resource)
        meta = _metadata(body)
        name = meta.get("name")
        if not name:
            raise ValueError(f"{resource.kind}: metadata.name is required")
        return resource, body, str(name), meta.get("namespace")

    def _object_path(
        self, resource: Resource, namespace: str | None, name: str, subresource: str | None = None
    ) -> str:
        """``resource.path(namespace, name, subresource)``, remembered for the objects
        written or read most (a controller's own, a leader's Lease); emptied when full."""
        key = (id(resource), namespace, name, subresource)
        hit = self._paths.get(key)
        if hit is not None and hit[0] is resource:
            return hit[1]
        path = resource.path(namespace, name, subresource)
        remember(self._paths, key, (resource, path), _PATHS_MAX)
        return path

    @staticmethod
    def _decode(model: type[BaseModel] | None, data: Obj) -> Any:
        return model.model_validate(data) if model is not None else data

    # ------------------------------------------------------------------ reads

    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Any:
        resource = self._resource(kind)
        self._require_namespace(resource, namespace, "get")
        return self._decode(
            model_class(kind), self.request("GET", self._object_path(resource, namespace, name))
        )

    def _do_list(self, kind: KindLike, namespace: str | None, query: ListQuery) -> Obj:
        # Pages of ``limit`` items (default ``page_size``, 500) are fetched through
        # ``continue`` and joined; every item gets ``apiVersion``/``kind`` (the server leaves
        # them out of list items). ``metadata.resourceVersion`` is the first page's (see the
        # module docstring). ``index`` is a ``ValueError``: indexes live in a cache.
        index = query.index
        resource_version = query.resource_version
        resource_version_match = query.resource_version_match
        if index is not None:
            raise ValueError(
                f"list(index={index!r}): index lookups need a cache-backed reader "
                "(CachedClient, FakeClient): the API server has no client-defined indexes"
            )
        resource = self._resource(kind)
        model = model_class(kind)
        path = resource.path(namespace)
        params: dict[str, Any] = {
            "labelSelector": _selector(query.label_selector),
            "fieldSelector": _selector(query.field_selector),
            "limit": query.limit or self.page_size,
            "resourceVersion": resource_version,
            "resourceVersionMatch": resource_version_match,
        }
        result: Obj | None = None
        items: list[Any] = []
        while True:
            try:
                page = self.request("GET", path, query=params)
            except Gone:
                if result is None:
                    raise
                # The snapshot behind the continue token was compacted: list it all at once.
                log.debug("list %s: continue expired, falling back to a full list", path)
                params.update(
                    limit=None,
                    resourceVersion=resource_version,
                    resourceVersionMatch=resource_version_match,
                )
                params.pop("continue", None)
                result, items = self.request("GET", path, query=params), []
                items.extend(result.get("items") or ())
                break
            if result is None:
                result = page
            items.extend(page.get("items") or ())
            token = _metadata(page).get("continue")
            if not token:
                break
            # A continue token carries its snapshot's version; the server rejects both.
            params.update(resourceVersion=None, resourceVersionMatch=None)
            params["continue"] = token
        for item in items:  # fresh from the decoder: filling in place is safe
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
        result["items"] = items if model is None else [model.model_validate(i) for i in items]
        meta = result.setdefault("metadata", {})
        meta.pop("continue", None)
        meta.pop("remainingItemCount", None)
        result.setdefault("apiVersion", resource.api_version)
        result.setdefault("kind", resource.list_kind)
        return result

    def watch(
        self, kind: KindLike, namespace: str | None = None, **options: Unpack[RestWatchKeywords]
    ) -> Watch:
        """Open a watch (see :class:`~kube_runtime.client.watch.Watch`) with the options of
        :class:`~kube_runtime.client.options.RestWatchKeywords`; errors the server
        answers before the stream starts (403, 404, ...) raise here. ``accept`` replaces the
        ``Accept`` header (e.g. metadata-only events: :mod:`kube_runtime.client.metadata`).

        ``send_initial_events=True`` asks for the current state as ADDED events, ended by a
        BOOKMARK annotated ``k8s.io/initial-events-end``; it implies
        ``resourceVersionMatch=NotOlderThan`` and bookmarks, as the API server requires.
        """
        given = check_keywords("watch", options, RestWatchKeywords)
        timeout_seconds = given.get("timeout_seconds")
        send_initial_events = given.get("send_initial_events")
        resource = self._resource(kind)
        path = resource.path(namespace)
        query: dict[str, Any] = {
            "watch": "true",
            "resourceVersion": given.get("resource_version"),
            "labelSelector": _selector(given.get("label_selector")),
            "fieldSelector": _selector(given.get("field_selector")),
            "timeoutSeconds": timeout_seconds,
        }
        if given.get("allow_bookmarks", True) or send_initial_events:
            query["allowWatchBookmarks"] = "true"
        if send_initial_events is not None:
            query["sendInitialEvents"] = "true" if send_initial_events else "false"
            if send_initial_events:
                query["resourceVersionMatch"] = "NotOlderThan"
        read = timeout_seconds + _WATCH_READ_MARGIN if timeout_seconds else None
        url = self._url(path, query)
        headers = self._headers(accept=given.get("accept"))
        sim_key = _sim_watch_key(headers)
        started = time.monotonic()
        resp: Any
        try:
            if self._fast:
                resp = transport.open_stream(
                    self._pool,
                    url,
                    headers,
                    connect_timeout=self._connect_timeout,
                    read_timeout=read,
                    hostpools=self._hostpools,
                )
            else:
                resp = self._pool.request(
                    "GET",
                    url,
                    headers=headers,
                    timeout=urllib3.Timeout(connect=self._connect_timeout, read=read),
                    retries=self._watch_retries,
                    redirect=False,
                    preload_content=False,
                )
        except (urllib3.exceptions.HTTPError, transport.TransportError) as err:
            self._record("<error>", "GET", started)
            raise ApiConnectionError(f"watch {url}: {err}") from err
        self._record(resp.status, "GET", started)
        log.debug("WATCH %s -> %d", url, resp.status)
        if resp.status >= 300:
            try:
                data = resp.read()
            except (OSError, ValueError) as err:
                data = f"(the error's body could not be read: {err!r})".encode()
            finally:
                resp.release_conn()
            if resp.status == 401:
                self._credentials.invalidate()
            raise error_from_response(resp.status, data, resp.headers)
        where = f" in {namespace}" if namespace and resource.namespaced else ""
        return Watch(resp, f"{resource.plural}{where}", sim_key=sim_key)

    # ------------------------------------------------------------------ writes

    def _do_create(
        self, obj: ObjectLike, namespace: str | None, field_manager: str | None, dry_run: bool
    ) -> Any:
        # POST; ``namespace`` defaults to ``metadata.namespace``.
        resource = self._object_resource(obj)
        body = _with_type(_as_dict(obj), resource)
        namespace = namespace or _metadata(body).get("namespace")
        self._require_namespace(resource, namespace, "create")
        query = {"fieldManager": field_manager, "dryRun": "All" if dry_run else None}
        data = self.request("POST", resource.path(namespace), query=query, body=body)
        return self._decode(model_class(type(obj)), data)

    def _put(
        self, obj: Any, subresource: str | None, field_manager: str | None, dry_run: bool
    ) -> Any:
        return self._decode(
            model_class(type(obj)),
            self._put_request(obj, None, subresource, field_manager, dry_run),
        )

    def _put_request(
        self,
        obj: Any,
        payload: Any,
        subresource: str | None,
        field_manager: str | None,
        dry_run: bool,
    ) -> Obj:
        """PUT ``payload`` (None: ``obj`` itself) to ``obj``'s path (or its subresource's)."""
        resource, body, name, namespace = self._object_target(obj)
        self._require_namespace(resource, namespace, "update")
        query = (
            {"fieldManager": field_manager, "dryRun": "All" if dry_run else None}
            if field_manager is not None or dry_run
            else None
        )
        if payload is not None:
            body = _as_dict(payload)
        data: Obj = self.request(
            "PUT",
            self._object_path(resource, namespace, name, subresource),
            query=query,
            body=body,
        )
        return data

    def _do_update(self, obj: ObjectLike, field_manager: str | None, dry_run: bool) -> Any:
        return self._put(obj, None, field_manager, dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Any:
        data = self._patch_request(self._resource(kind), name, patch, options)
        return self._decode(model_class(kind) if options.subresource != "scale" else None, data)

    def _patch_request(
        self, resource: Resource, name: str, patch: Any, options: PatchOptions
    ) -> Obj:
        patch_type = options.patch_type
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(
                f"patch_type must be one of {sorted(PATCH_CONTENT_TYPES)}: {patch_type!r}"
            )
        if patch_type == "json":
            if not isinstance(patch, list | tuple):
                raise TypeError("a json patch is a list of operations")
            body: Any = list(patch)
        else:
            body = _as_dict(patch)
        if patch_type == "apply":
            if not options.field_manager:
                raise ValueError("a server-side apply patch needs field_manager")
        elif options.force is not None:
            raise ValueError("force is only valid for patch_type='apply'")
        if patch_type == "apply" and not options.subresource:
            body = _with_type(body, resource)
        self._require_namespace(resource, options.namespace, "patch")
        query = {
            "fieldManager": options.field_manager,
            "force": "true" if options.force else None,
            "dryRun": "All" if options.dry_run else None,
        }
        data: Obj = self.request(
            "PATCH",
            resource.path(options.namespace, name, options.subresource),
            query=query,
            body=body,
            content_type=content_type,
        )
        return data

    def _do_apply(self, obj: ObjectLike, field_manager: str, force: bool, dry_run: bool) -> Any:
        resource, body, name, namespace = self._object_target(obj)
        options = PatchOptions(namespace, "apply", None, field_manager, force, dry_run)
        return self._decode(
            model_class(type(obj)), self._patch_request(resource, name, body, options)
        )

    def _do_delete(
        self, kind: KindLike, name: str, namespace: str | None, options: DeleteOptions
    ) -> Obj:
        resource = self._resource(kind)
        self._require_namespace(resource, namespace, "delete")
        result: Obj = self.request("DELETE", resource.path(namespace, name), body=options.body())
        return result

    def _do_delete_all_of(
        self, kind: KindLike, namespace: str | None, query: ListQuery, options: DeleteOptions
    ) -> Obj:
        resource = self._resource(kind)
        self._require_namespace(resource, namespace, "delete_all_of")
        params = {
            "labelSelector": _selector(query.label_selector),
            "fieldSelector": _selector(query.field_selector),
        }
        path = resource.path(namespace)
        result: Obj = self.request("DELETE", path, query=params, body=options.body())
        return result

    # ------------------------------------------------------------------ subresources

    def status(self) -> StatusWriter:
        """The ``status`` subresource writer: ``client.status().update(obj)`` is
        :meth:`update_status`; ``status().patch(...)`` patches with ``subresource="status"``."""
        return _StatusWriter(self)

    def subresource(self, name: str) -> SubResourceClient:
        """A client of subresource ``name`` of any kind (``subresource("scale").get(...)``)."""
        if not name or "/" in name:
            raise ValueError(f"not a subresource name: {name!r}")
        return _SubResource(self, name)


class _StatusWriter(StatusWriterMixin):
    """:class:`~kube_runtime.client.interfaces.StatusWriter` over the REST client: PUT and
    PATCH of the ``status`` subresource (only ``status`` changes are kept)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def _do_update(self, obj: ObjectLike, field_manager: str | None, dry_run: bool) -> Any:
        return self._client._put(obj, "status", field_manager, dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Any:
        return self._client._do_patch(kind, name, patch, options)


class _SubResource(SubResourceMixin):
    """:class:`~kube_runtime.client.interfaces.SubResourceClient` over the REST client."""

    def __init__(self, client: Client, name: str) -> None:
        self.name = name
        self._client = client

    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Obj:
        resource = self._client._resource(kind)
        self._client._require_namespace(resource, namespace, "get")
        data: Obj = self._client.request("GET", resource.path(namespace, name, self.name))
        return data

    def _do_update(
        self, obj: ObjectLike, body: ObjectLike | None, field_manager: str | None, dry_run: bool
    ) -> Obj:
        return self._client._put_request(obj, body, self.name, field_manager, dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Obj:
        return self._client._patch_request(self._client._resource(kind), name, patch, options)
