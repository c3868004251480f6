"""The serving certificate, reloaded when its files change (controller-runtime ``certwatcher``).

:class:`CertWatcher` reads a certificate and key (and optionally a client CA) into an
:class:`ssl.SSLContext` at once -- a missing or broken pair fails the server's start, as
``certwatcher.New`` does -- then reads the files again every ``interval`` seconds and compares
their digest with that of the files it loaded (contents, not stamps: a rewrite within one
mtime tick, or a Secret volume swapping its ``..data`` symlink, is seen alike; the files are a
few kilobytes). When they changed it builds a new context; new connections get it, open ones
keep theirs. A pair that does not load (the certificate written, the key not yet) keeps the
old context, is logged once and retried at the next poll.
controller-runtime also listens to fsnotify events; polling alone keeps this dependency-free,
and its poll (10 s) is the default here.
"""

from __future__ import annotations

import hashlib
import logging
import os
import ssl
import threading
from pathlib import Path

__all__ = ["DEFAULT_INTERVAL", "CertWatcher"]

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 10.0
"""Seconds between polls of the files (controller-runtime's ``defaultWatchInterval``)."""


class CertWatcher:
    """The current TLS server context of ``cert_path``/``key_path`` (see the module docstring).

    With ``client_ca_path``, clients must present a certificate that CA signed.
    """

    def __init__(
        self,
        cert_path: str | os.PathLike[str],
        key_path: str | os.PathLike[str],
        *,
        client_ca_path: str | os.PathLike[str] | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        self.cert_path = Path(cert_path)
        self.key_path = Path(key_path)
        self.client_ca_path = Path(client_ca_path) if client_ca_path is not None else None
        self.interval = interval
        self._lock = threading.Lock()
        self.reloads = 0
        stamp = self._stamp()
        self._context = self._load()
        self._stamp_seen = stamp
        self._stamp_failed: bytes | None = None

    @property
    def context(self) -> ssl.SSLContext:
        """The context for the next connection."""
        with self._lock:
            return self._context

    def _paths(self) -> list[Path]:
        paths = [self.cert_path, self.key_path]
        if self.client_ca_path is not None:
            paths.append(self.client_ca_path)
        return paths

    def _stamp(self) -> bytes:
        digest = hashlib.sha256()
        for path in self._paths():
            content = path.read_bytes()
            digest.update(len(content).to_bytes(8, "big"))
            digest.update(content)
        return digest.digest()

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["http/1.1"])
        context.load_cert_chain(self.cert_path, self.key_path)
        if self.client_ca_path is not None:
            context.load_verify_locations(cafile=self.client_ca_path)
            context.verify_mode = ssl.CERT_REQUIRED
        return context

    def check(self) -> bool:
        """Reload if the files changed since the last load; True when a new context is in
        use. Errors (files missing, a pair that does not match) are logged once per content,
        not raised."""
        stamp: bytes | None = None
        try:
            stamp = self._stamp()
            if stamp in (self._stamp_seen, self._stamp_failed):
                return False
            context = self._load()
        except (OSError, ssl.SSLError) as e:
            failed = stamp or b""  # b"": a file could not be read
            if failed != self._stamp_failed:
                log.error(
                    "cannot load the certificate %s / %s: %s", self.cert_path, self.key_path, e
                )
            self._stamp_failed = failed
            return False
        with self._lock:
            self._context = context
            self._stamp_seen = stamp
            self._stamp_failed = None
            self.reloads += 1
        log.info("loaded a new serving certificate from %s", self.cert_path)
        return True

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set (every ``interval`` seconds of ``stop``'s clock: make
        it with :meth:`kube_runtime.clock.Clock.event`)."""
        while not stop.wait(self.interval):
            self.check()
