"""Claiming objects for a controller: adopt matching orphans, release owned objects that stopped
matching (kubernetes ``pkg/controller/controller_ref_manager.go``).

A workload controller lists candidate objects (pods, ControllerRevisions, PVCs, ...) by
namespace (:func:`claim_candidates`: only those a claim can act on), then hands them to
:meth:`ControllerRefManager.claim`, which settles ownership one
object at a time and returns the objects the controller now controls. "Matches" means the
controller's label selector matches the object's labels *and* every extra filter returns True
(filters run only on objects the selector matched). Per object, as upstream decides:

======================  ===========  ==========================================  ===========
controller reference    matches      controller / object state                   outcome
======================  ===========  ==========================================  ===========
another controller's    any          any                                         ignored
ours                    yes          any (even while the controller is deleted)  claimed
ours                    no           controller being deleted                    ignored
ours                    no           controller live                             released
none (orphan)           no           any                                         ignored
none                    yes          controller being deleted                    ignored
none                    yes          object being deleted                        ignored
none                    yes          object in another namespace                 ignored
none                    yes          otherwise                                   adopted
======================  ===========  ==========================================  ===========

* **Adopt** first calls ``can_adopt()`` (at most once per manager, on the first adoption;
  when it raises, every adoption of this manager fails with that reason), then sends a
  strategic merge patch adding the controller reference (``controller: true``,
  ``blockOwnerDeletion: true``) with the object's ``metadata.uid`` as a precondition, so an
  object deleted and re-created under the same name is never adopted by mistake. The claimed
  entry is the server's patched object. ``NotFound`` means the object is gone: ignored.
* **Release** sends a strategic merge patch deleting the owner reference with our uid
  (``$patch: delete`` keyed by uid; other owners are kept), again with the object's uid as a
  precondition. ``NotFound`` and ``Invalid`` (no such reference, or the uid precondition
  failed on kube-apiserver) are ignored, as upstream does.
* Errors do not stop the pass: every object is processed, then :meth:`~ControllerRefManager.claim`
  raises :class:`ClaimError` listing every failure, with the objects claimed so far in
  ``.claimed`` (upstream returns both the list and an aggregate error).

Objects are never mutated (they may come from the informer cache). Patches are strategic
merge patches, which the API server only accepts for built-in kinds; every kind upstream
claims (Pod, ControllerRevision, PersistentVolumeClaim, ReplicaSet, ...) is one.
Create a new manager for each sync pass, so ``can_adopt`` is rechecked each time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from kube_runtime import meta
from kube_runtime.client._indexes import INDEX_CONTROLLER_UID, INDEX_LABEL
from kube_runtime.client.errors import Invalid, NotFound
from kube_runtime.client.interfaces import PatchType
from kube_runtime.client.interfaces import Reader as ListReader
from kube_runtime.kinds import Kind, KindLike, as_kind
from kube_runtime.meta import Obj
from kube_runtime.selectors import LabelSelector, label_selector_from_dict

__all__ = [
    "CannotAdoptError",
    "ClaimError",
    "ControllerRefManager",
    "Filter",
    "Patcher",
    "Reader",
    "claim_candidates",
    "recheck_controller",
    "recheck_deletion_timestamp",
]

log = logging.getLogger(__name__)

Filter = Callable[[Obj], bool]
"""An extra predicate an object must pass to be claimed (e.g. "name is <set>-<ordinal>")."""


class Patcher(Protocol):
    """What the manager needs of a client: ``patch``, as every
    :class:`~kube_runtime.client.interfaces.Writer` has it."""

    def patch(
        self,
        kind: Kind,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
    ) -> dict[str, Any]: ...


class CannotAdoptError(Exception):
    """An adoption was refused: ``can_adopt()`` failed (the owner is gone, changed or deleted)."""


class ClaimError(Exception):
    """Some objects could not be adopted or released (upstream's aggregate error).

    ``errors`` holds every failure in object order; ``claimed`` the objects that were claimed
    anyway (what :meth:`ControllerRefManager.claim` would have returned).
    """

    def __init__(self, errors: Sequence[BaseException], claimed: Sequence[dict[str, Any]]) -> None:
        self.errors = list(errors)
        self.claimed = list(claimed)
        if len(self.errors) == 1:
            message = str(self.errors[0])
        else:
            message = "[" + ", ".join(str(e) for e in self.errors) + "]"
        super().__init__(message)


class ControllerRefManager:
    """Adopts and releases objects for one controller object during one sync pass.

    ``controller`` is the owner as read (typically from the cache); its ``metadata.uid``
    identifies our references and its ``deletionTimestamp`` stops adoption and release.
    ``controller_kind`` (a :data:`~kube_runtime.kinds.KindLike`) is written in the references'
    ``apiVersion``/``kind``. ``selector``
    is a :class:`LabelSelector` or a ``metav1.LabelSelector`` mapping (``None`` matches
    nothing, ``{}`` everything; an invalid one raises ``SelectorError`` here).
    ``can_adopt`` is the expensive recheck run before the first adoption (see
    :func:`recheck_controller`); ``None`` allows adoption.
    """

    def __init__(
        self,
        client: Patcher,
        controller: Obj,
        selector: LabelSelector | Mapping[str, Any] | None,
        controller_kind: KindLike,
        can_adopt: Callable[[], None] | None = None,
    ) -> None:
        metadata = meta.metadata(controller)  # one accessor call for the four fields
        self._uid: str = metadata.get("uid") or ""
        self._name: str = metadata.get("name") or ""
        if not self._name or not self._uid:
            raise ValueError("the controller needs metadata.name and metadata.uid to claim objects")
        self._client = client
        self._controller = controller
        self._namespace: str = metadata.get("namespace") or ""
        self._deleting = bool(metadata.get("deletionTimestamp"))
        self._selector = (
            selector if isinstance(selector, LabelSelector) else label_selector_from_dict(selector)
        )
        self._kind = as_kind(controller_kind)
        self._can_adopt_fn = can_adopt
        self._can_adopt_lock = threading.Lock()
        self._can_adopt_done = False
        self._can_adopt_error: BaseException | None = None

    # --- the pass -------------------------------------------------------------------------

    def claim(self, objects: Iterable[Obj], *filters: Filter) -> list[dict[str, Any]]:
        """Settle ownership of every object; return the ones this controller now controls.

        Already-owned matches are returned as given, adopted ones as patched by the server.
        Raises :class:`ClaimError` (with ``.claimed``) after the whole pass if any adoption or
        release failed.
        """

        def match(obj: Obj) -> bool:
            # claim() and claim_object() run for every candidate object of every sync: they
            # read the objects as plain dicts (a kube_runtime.meta accessor costs ~4x).
            if not self._selector.matches((obj.get("metadata") or {}).get("labels")):
                return False
            return all(f(obj) for f in filters)

        claimed: list[dict[str, Any]] = []
        errors: list[BaseException] = []
        for obj in objects:
            try:
                result = self.claim_object(obj, match)
            except Exception as e:
                errors.append(e)
                continue
            if result is not None:
                claimed.append(result)
        if errors:
            raise ClaimError(errors, claimed)
        return claimed

    def claim_object(self, obj: Obj, match: Filter) -> dict[str, Any] | None:
        """Upstream ``ClaimObject`` for one object: the object if we control it now, else None.

        ``match`` decides whether the object belongs to us (selector and filters). Raises the
        adoption or release error (``NotFound`` is never raised: the object is gone).
        """
        metadata = obj.get("metadata") or {}
        ref = _controller_ref(obj)
        if ref is not None:
            if ref.get("uid") != self._uid:
                return None  # another controller's
            if match(obj):
                return obj  # ours; claiming needs no action, even while we are deleted
            if self._being_deleted():
                return None
            self.release(obj)
            return None
        if self._being_deleted() or not match(obj):
            return None
        if metadata.get("deletionTimestamp"):
            return None
        if self._namespace and self._namespace != (metadata.get("namespace") or ""):
            return None
        try:
            return self.adopt(obj)
        except NotFound:
            log.debug("not adopting %s: it no longer exists", _describe(obj))
            return None

    # --- effects --------------------------------------------------------------------------

    def adopt(self, obj: Obj) -> dict[str, Any]:
        """Make this controller the object's controller; return the patched object.

        Raises :class:`CannotAdoptError` when ``can_adopt`` refuses, and the client's error
        when the patch fails (``Invalid`` if another controller got there first, a uid
        precondition failure if the object was re-created, ``NotFound`` if it is gone).
        """
        try:
            self._check_can_adopt()
        except Exception as e:
            raise CannotAdoptError(
                f"can't adopt {_kind_name(obj)} {_describe(obj)} ({meta.uid(obj) or None}): {e}"
            ) from e
        ref = {
            "apiVersion": self._kind.api_version,
            "kind": self._kind.kind,
            "name": self._name,
            "uid": self._uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        patch_meta = {"ownerReferences": [ref], "uid": meta.uid(obj) or None}
        log.info(
            "adopting %s %s for %s %s",
            _kind_name(obj),
            _describe(obj),
            self._kind.kind,
            self._key(),
        )
        return self._client.patch(
            Kind.of(obj),
            meta.name(obj),
            {"metadata": patch_meta},
            namespace=meta.namespace(obj) or None,
            patch_type="strategic",
        )

    def release(self, obj: Obj) -> None:
        """Remove this controller's reference from the object (other owners stay).

        ``NotFound`` (object gone) and ``Invalid`` (no such reference, or the object was
        re-created) are ignored; other errors are raised.
        """
        patch_meta: dict[str, Any] = {
            "ownerReferences": [{"$patch": "delete", "uid": self._uid}],
            "uid": meta.uid(obj) or None,
        }
        log.info(
            "releasing %s %s from %s %s",
            _kind_name(obj),
            _describe(obj),
            self._kind.kind,
            self._key(),
        )
        try:
            self._client.patch(
                Kind.of(obj),
                meta.name(obj),
                {"metadata": patch_meta},
                namespace=meta.namespace(obj) or None,
                patch_type="strategic",
            )
        except (NotFound, Invalid) as e:
            log.debug("release of %s ignored: %s", _describe(obj), e)
            return

    # --- internals ------------------------------------------------------------------------

    def _check_can_adopt(self) -> None:
        """Run ``can_adopt`` once (thread-safe); re-raise its error on every later call."""
        with self._can_adopt_lock:
            if not self._can_adopt_done:
                self._can_adopt_done = True
                if self._can_adopt_fn is not None:
                    try:
                        self._can_adopt_fn()
                    except Exception as e:
                        self._can_adopt_error = e
            if self._can_adopt_error is not None:
                raise self._can_adopt_error

    def _being_deleted(self) -> bool:
        return self._deleting

    def _key(self) -> str:
        return f"{self._namespace}/{self._name}" if self._namespace else self._name


def recheck_deletion_timestamp(get_object: Callable[[], Obj]) -> Callable[[], None]:
    """A ``can_adopt`` that reads the object with ``get_object`` and refuses when it is deleted.

    Upstream ``RecheckDeletionTimestamp``: a failed read refuses too ("can't recheck
    DeletionTimestamp: ...").
    """

    def can_adopt() -> None:
        try:
            obj = get_object()
        except Exception as e:
            raise CannotAdoptError(f"can't recheck DeletionTimestamp: {e}") from e
        deleted_at = meta.deletion_timestamp(obj)
        if deleted_at is not None:
            raise CannotAdoptError(f"{_describe(obj)} has just been deleted at {deleted_at}")

    return can_adopt


class Reader(Protocol):
    """What :func:`recheck_controller` needs: an uncached ``get`` (``Client`` / ``api_reader``)."""

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> dict[str, Any]: ...


def claim_candidates(
    reader: ListReader,
    kind: KindLike,
    owner: Mapping[str, Any],
    selector: LabelSelector,
    selector_text: str | None = None,
) -> list[dict[str, Any]]:
    """The objects of ``kind`` a claim by ``owner`` can act on, read through ``reader`` (a
    cache, with its built-in indexes): those ``owner`` controls (the ``controller-uid``
    index) and, after them, the orphans of its namespace ``selector`` matches (through the
    ``label`` index of one exact term of the selector, as the cache itself does, without
    printing and parsing the selector again; else by the selector). Claiming these is the
    same as claiming every object of the namespace, as upstream does, since objects other
    controllers control are ignored, but costs O(the owner's objects) instead of O(the
    namespace's). A selector that matches nothing adds no orphans. ``selector_text``:
    ``str(selector)`` where the caller keeps it printed."""
    namespace = meta.namespace(owner)
    owned: list[dict[str, Any]] = reader.list(
        kind, namespace, index=(INDEX_CONTROLLER_UID, meta.uid(owner))
    )["items"]
    if selector.matches_nothing():
        return owned
    pinned = next(iter(selector.equality_terms.items()), None)
    if pinned is None:
        text = str(selector) if selector_text is None else selector_text
        matching = reader.list(kind, namespace, label_selector=text)["items"]
    else:
        by_label = reader.list(kind, namespace, index=(INDEX_LABEL, "=".join(pinned)))["items"]
        # Per candidate of every sync: plain dict reads (an accessor costs ~4x).
        matching = [
            obj for obj in by_label if selector.matches((obj.get("metadata") or {}).get("labels"))
        ]
    return owned + [obj for obj in matching if not meta.has_controller(obj)]


def recheck_controller(reader: Reader, controller: Obj) -> Callable[[], None]:
    """The ``can_adopt`` upstream controllers build: read the controller fresh from the API.

    Refuses when the object under that name has another uid ("original StatefulSet ns/web is
    gone: got uid A, wanted B"), when it is being deleted, or when the read fails. Pass the
    direct client (``manager.api_reader``), never the cache: the point is to see changes the
    cache may not have delivered yet.
    """
    kind = Kind.of(controller)
    metadata = meta.metadata(controller)
    name, namespace, uid = (
        metadata.get("name") or "",
        metadata.get("namespace"),
        metadata.get("uid"),
    )

    def get_fresh() -> Obj:
        fresh = reader.get(kind, name, namespace)
        fresh_uid = meta.metadata(fresh).get("uid")
        if fresh_uid != uid:
            raise CannotAdoptError(
                f"original {kind.kind} {_describe(controller)} is gone: "
                f"got uid {fresh_uid}, wanted {uid}"
            )
        return fresh

    return recheck_deletion_timestamp(get_fresh)


def _controller_ref(obj: Obj) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") is True:
            return ref
    return None


def _kind_name(obj: Obj) -> str:
    return str(obj.get("kind") or "object")


def _describe(obj: Obj) -> str:
    return f"{meta.namespace(obj)}/{meta.name(obj)}"
