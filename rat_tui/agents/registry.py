"""Provides the live ACP agent registry: the official index of agents, fetched at most once a day, cached,
validated entry by entry, and used over the bundled manifests; offline, the cache or the bundled snapshot.

The registry (github.com/agentclientprotocol/registry) publishes one JSON index,
``{"version": ..., "agents": [agent.json, ...]}``, at REGISTRY_URL. What the catalog shows says which
source it is (`RegistrySnapshot.note`): "live registry", "cached registry (fetched …)", or "bundled
snapshot" with the reason the registry could not be used. Fetching runs in a thread with a short timeout:
the agent picker opens at once on what is at hand and refreshes when the fetch ends.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__, paths

log = logging.getLogger("rat.registry")

REGISTRY_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
MAX_AGE = 24 * 3600.0  # at most one fetch a day
TIMEOUT = 5.0
MAX_BYTES = 8 * 1024 * 1024  # the index is tens of KB; anything this big is not it
CACHE_FILE = "registry.json"
OFF_ENV = "RAT_REGISTRY_OFF"
"""Set (to anything) to keep the registry off whatever the config says: the test suite never reaches the network."""


def cache_path() -> Path:
    return Path(paths.cache_dir()) / CACHE_FILE


@dataclass
class RegistrySnapshot:
    """The registry's agents as read (raw manifests, each checked to name an agent), and where they came from."""

    agents: list[dict[str, Any]] = field(default_factory=list)
    note: str = "bundled snapshot"
    problems: list[str] = field(default_factory=list)
    fetched: float | None = None  # when the agents were fetched (epoch seconds), None if none


def parse_index(data: Any, where: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The usable agents of a registry index; an entry that names no agent is skipped with a problem."""
    from .catalog import ManifestError, parse_manifest

    if not isinstance(data, dict) or not isinstance(data.get("agents"), list):
        raise ValueError('not a registry index (no "agents" list)')
    agents: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, item in enumerate(data["agents"], 1):
        try:
            parse_manifest(item, where)
        except ManifestError as error:
            problems.append(f"{where}: agent {index} skipped: {error}")
            continue
        if isinstance(item.get("rat"), dict):
            item = {k: v for k, v in item.items() if k != "rat"}  # the registry cannot choose our local commands
        agents.append(item)
    return agents, problems


def fetch(url: str = REGISTRY_URL, timeout: float = TIMEOUT) -> bytes:
    """The index's bytes; raises OSError (URLError, timeout) or ValueError (too big, not HTTP 200)."""
    request = urllib.request.Request(url, headers={"User-Agent": f"rat-tui/{__version__}", "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (https, or a test's http)
        status = getattr(response, "status", 200)
        if status != 200:
            raise ValueError(f"HTTP {status}")
        body = response.read(MAX_BYTES + 1)
    if len(body) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES // (1024 * 1024)} MB")
    return body


def read_cache(path: Path | None = None) -> RegistrySnapshot | None:
    """The cached index, if there is a readable one."""
    path = path or cache_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        agents, problems = parse_index(data, "cached registry")
    except (OSError, ValueError, RecursionError) as error:
        if path.exists():
            log.warning("registry cache %s unusable: %s", path, error)
        return None
    fetched = path.stat().st_mtime
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(fetched))
    return RegistrySnapshot(agents, f"cached registry (fetched {when})", problems, fetched)


def refresh(url: str = REGISTRY_URL, path: Path | None = None, timeout: float = TIMEOUT) -> RegistrySnapshot:
    """Fetch the index now and cache it when it is valid; on any failure, the cache or the bundled snapshot,
    with the reason in the note. Never raises. Blocking: run it in a thread."""
    path = path or cache_path()
    try:
        body = fetch(url, timeout)
        data = json.loads(body.decode("utf-8"))
        agents, problems = parse_index(data, "registry")
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as error:
        reason = _reason(error)
        log.warning("agent registry %s: %s", url, reason)
        cached = read_cache(path)
        if cached is not None:
            cached.note += f"; the registry could not be reached now: {reason}"
            return cached
        return RegistrySnapshot([], f"bundled snapshot (the registry could not be used: {reason})")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(body)
        temporary.replace(path)
    except OSError as error:
        log.warning("cannot cache the agent registry in %s: %s", path, error)
    return RegistrySnapshot(agents, "live registry", problems, time.time())


def current(path: Path | None = None, max_age: float = MAX_AGE) -> tuple[RegistrySnapshot | None, bool]:
    """What to show now without the network: the cache if any, and whether a refresh is due."""
    cached = read_cache(path)
    stale = cached is None or cached.fetched is None or time.time() - cached.fetched > max_age
    return cached, stale


def _reason(error: BaseException) -> str:
    """Why the registry could not be used, in words: `[Errno -2] Name or service not known` is no reason a
    person reads ("offline: the registry's host name could not be looked up" is)."""
    if isinstance(error, urllib.error.HTTPError):
        return f"the registry answered HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError) and error.reason:
        inner = error.reason
        if isinstance(inner, socket.gaierror):
            return "offline: the registry's host name could not be looked up"
        if isinstance(inner, ConnectionRefusedError):
            return "the registry refused the connection"
        if isinstance(inner, (TimeoutError, socket.timeout)):
            return "timed out"
        if isinstance(inner, ssl.SSLCertVerificationError):
            return f"its TLS certificate could not be verified ({inner.verify_message})"
        if isinstance(inner, OSError) and inner.strerror:
            return inner.strerror[0].lower() + inner.strerror[1:]
        return str(inner)
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, json.JSONDecodeError):
        return f"not valid JSON ({error.msg})"
    return str(error) or type(error).__name__
