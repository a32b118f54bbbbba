"""The codegen cache's remote tier: entries shared between machines through a Redis server.

Read-through: a group the local cache lacks is fetched (GET) before it is rendered; the bytes are
the local entry file's, so the fetch is checked by the same digest, key and group checks, and a
bad remote entry is a miss, never a wrong file. Write-through: a rendered entry is also stored
(SET) unless the tier is read-only (consumers such as CI). Every call has a short timeout; the
first failure turns the tier off for the rest of the build with one warning, so a dead or
unreachable server costs at most one timeout and the build goes on with local work.

Configured by URL (redis://[:password@]host:port/db, rediss://..., unix:///path.sock):
$OPGEN_CACHE_REMOTE, `scons --opgen-cache-remote=URL`, `opgen generate --cache-remote URL`;
read-only by $OPGEN_CACHE_REMOTE_READ_ONLY=1 or the matching option.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import threading
from typing import Optional
from urllib.parse import urlsplit, urlunsplit

from ..errors import Location, OpgenError
from .records import RemoteFigures

SCHEMES = ("redis", "rediss", "unix")
# Entries are immutable per key, so one namespace per entry format is enough.
KEY_PREFIX = "opgen:codegen:1:"
DEFAULT_TIMEOUT_SECONDS = 0.5
URL_VARIABLE = "OPGEN_CACHE_REMOTE"
READ_ONLY_VARIABLE = "OPGEN_CACHE_REMOTE_READ_ONLY"
TIMEOUT_VARIABLE = "OPGEN_CACHE_REMOTE_TIMEOUT"


def check_url(url: str, where: str = URL_VARIABLE) -> str:
    """``url`` if it names a Redis server; OpgenError (with ``where``) otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not (parts.netloc or parts.path):
        raise OpgenError(f"remote codegen cache URL must be redis://host:port[/db], rediss://... or "
                         f"unix:///path.sock, got '{url}'", Location(where, 0))
    return url


def shown(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def truthy(text: Optional[str]) -> bool:
    return (text or "").strip().lower() in ("1", "true", "yes", "on")


class RemoteTier:
    """Thread-safe; counts its hits, misses, errors and rejected entries (``figures()``)."""

    def __init__(self, url: str, *, read_only: bool = False, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 where: str = URL_VARIABLE):
        """``where`` names the setting ``url`` came from, for the error a bad one raises."""
        self.url = check_url(url, where)
        self.read_only = read_only
        self.timeout = timeout
        if importlib.util.find_spec("redis") is None:
            raise OpgenError("the remote codegen cache needs the redis package (pip install redis)",
                             Location(where, 0))
        self._client = None  # connected on first use: a build with nothing to produce never imports redis
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0, "errors": 0, "rejected": 0}
        self.off = False  # after the first failure

    def fetch(self, key: str) -> Optional[bytes]:
        """The entry bytes stored under ``key``, or None (absent, or the tier is off or failing)."""
        if self.off:
            return None
        try:
            data = self._connection().get(KEY_PREFIX + key)
        except Exception as exc:  # redis, socket and timeout errors alike: never fail the build
            self._fail("fetch", exc)
            return None
        self._count("hits" if data is not None else "misses")
        return data

    def store(self, key: str, data: bytes) -> None:
        if self.off or self.read_only:
            return
        try:
            self._connection().set(KEY_PREFIX + key, data)
        except Exception as exc:
            self._fail("store", exc)

    def reject(self) -> None:
        """A fetched entry failed its checks: it was a miss after all."""
        with self._lock:
            self._counts["hits"] -= 1
            self._counts["rejected"] += 1

    def figures(self) -> RemoteFigures:
        with self._lock:
            return RemoteFigures(**self._counts)

    def _connection(self):
        with self._lock:
            if self._client is None:
                import redis
                from redis.backoff import NoBackoff
                from redis.retry import Retry

                # No retries: a server that fails once is left alone for the rest of the build.
                self._client = redis.Redis.from_url(self.url, socket_timeout=self.timeout,
                                                    socket_connect_timeout=self.timeout, retry=Retry(NoBackoff(), 0))
            return self._client

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _fail(self, what: str, exc: Exception) -> None:
        with self._lock:
            self._counts["errors"] += 1
            first, self.off = not self.off, True
        if first:
            print(f"[opgen] warning: remote codegen cache {shown(self.url)} failed to {what} "
                  f"({type(exc).__name__}: {exc}); using local work for the rest of this build", file=sys.stderr)


def remote_from_environment(url: Optional[str] = None, read_only: Optional[bool] = None,
                            where: str = "--cache-remote") -> Optional[RemoteTier]:
    """The remote tier ``url`` (an option named ``where``; default: $OPGEN_CACHE_REMOTE) names, or
    None when none is set or it is "off"; OpgenError for a URL that names no Redis server."""
    if url is None:
        url, where = os.environ.get(URL_VARIABLE, ""), URL_VARIABLE
    if not url or url == "off":
        return None
    read_only = read_only if read_only is not None else truthy(os.environ.get(READ_ONLY_VARIABLE))
    return RemoteTier(url, read_only=read_only, timeout=_timeout(os.environ.get(TIMEOUT_VARIABLE)), where=where)


def _timeout(text: Optional[str]) -> float:
    if not text:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise OpgenError(f"{TIMEOUT_VARIABLE} must be a positive number of seconds, got '{text}'",
                         Location(TIMEOUT_VARIABLE, 0))
    return seconds
