"""Provides RpcLog: a JSONL record of every JSON-RPC message, with secrets redacted.

Text that is not valid Unicode never stops it: a lone surrogate is written as its JSON escape
(`\\ud800`, which reads back as the same string), and a line from the agent that is not UTF-8 is
logged with each bad byte as `\\udcXX` (Python's "surrogateescape") and `"not_utf8": true`, so
`records.parse_recording` gets its exact bytes back and decodes them as the router did.
"""

from __future__ import annotations

import json
import logging
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

REDACTED = "REDACTED"
SECRET_KEY = re.compile(r"(token|secret|password|passwd|api[-_]?key|authorization|cookie|credential)", re.I)
# Long strings (file contents, 10 MB answers) are cut in the log: it records traffic, not payloads.
MAX_LOGGED_STRING = 2000

log = logging.getLogger("rat.rpc")


def redact(value: Any, key: str = "", *, max_string: int = MAX_LOGGED_STRING) -> Any:
    """Copy of `value` with secret-looking values replaced and strings cut; env values are always secret."""
    if isinstance(value, dict):
        if _is_name_value_pair(value):
            secret = key == "env" or SECRET_KEY.search(str(value["name"]))
            return {**value, "value": REDACTED} if secret else value
        if key in ("env", "headers"):
            return dict.fromkeys(value, REDACTED)
        return {
            k: (REDACTED if _secret(k) and isinstance(v, str) else
                v if v is None or v.__class__ in _PLAIN or (v.__class__ is str and len(v) <= max_string) else
                redact(v, k, max_string=max_string))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(item, key, max_string=max_string) for item in value]
    if isinstance(value, str):
        if _secret(key):
            return REDACTED
        if len(value) > max_string:
            return value[:max_string] + f"…[{len(value) - max_string} more chars]"
    return value


# What redact leaves as it is under a key that is not secret: numbers, booleans (a str only when short).
_PLAIN = frozenset({int, float, bool})


@lru_cache(maxsize=4096)
def _secret(key: str) -> bool:
    """Whether a key names a secret (asked per key of every big message: a plan of 1,000 entries has 3,000)."""
    return SECRET_KEY.search(key) is not None


def _is_name_value_pair(value: dict[str, Any]) -> bool:
    return "name" in value and "value" in value and isinstance(value.get("value"), str)


class RpcLog:
    """Appends one JSON object per message: time, direction, method, id, bytes, latency, and (after
    `initialize`) `acp`, the protocol version the session speaks."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # backslashreplace: a lone surrogate (only ever inside a JSON string here) becomes its JSON escape.
        self._file: IO[str] = self.path.open("a", encoding="utf-8", errors="backslashreplace", buffering=1024 * 64)
        self._last_flush = time.monotonic()
        self._unflushed = False
        self.failures = 0

    def record(
        self,
        direction: str,
        message: Any,
        size: int,
        *,
        method: str | None = None,
        latency: float | None = None,
        raw: bytes | None = None,
        protocol: int | None = None,
    ) -> None:
        """Log one message; never raises (a failure is logged once, without a traceback per line)."""
        try:
            entry: dict[str, Any] = {"time": round(time.time(), 6), "dir": direction, "bytes": size}
            if protocol is not None:
                entry["acp"] = protocol  # the ACP version this session speaks, once `initialize` settled it
            if isinstance(message, dict):
                entry["method"] = method or message.get("method")
                if "id" in message:
                    entry["id"] = message["id"]
                if latency is not None:
                    entry["latency_ms"] = round(latency * 1000, 3)
                wire = _as_on_the_wire(message, raw)
                entry["msg"] = redact(wire)
                if wire is not message:
                    entry["not_utf8"] = True
            else:
                entry["raw"] = redact(str(message))
            self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self._unflushed = True
            now = time.monotonic()
            if now - self._last_flush > 0.5:
                self.sync()
        except Exception as error:
            self.failures += 1
            if self.failures == 1:
                log.error("could not write to the rpc log %s: %s", self.path, error)

    def sync(self) -> None:
        """Hand what is buffered to the OS (the reader calls this before the loop runs anything else)."""
        if not self._unflushed or self._file.closed:
            return
        try:
            self._file.flush()
        except Exception as error:
            self.failures += 1
            if self.failures == 1:
                log.error("could not write to the rpc log %s: %s", self.path, error)
        self._unflushed = False
        self._last_flush = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _as_on_the_wire(message: dict[str, Any], raw: bytes | None) -> Any:
    """The message to log: as parsed, unless its line was not UTF-8; then parsed again with each bad
    byte kept as a surrogate escape, so the log holds the exact bytes (see `records.from_logged`)."""
    if raw is None or not _not_utf8(raw):
        return message
    try:
        return json.loads(raw.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return message


def open_rpc_log(path: Path | None) -> tuple[RpcLog | None, str | None]:
    """The rpc log at `path` (None: none wanted), or None and why it cannot be written: never raises."""
    if path is None:
        return None, None
    try:
        return RpcLog(path), None
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return None, f"Cannot write the rpc log {path}: {reason}; running without it."
