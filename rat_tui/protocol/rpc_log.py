"""Provides RpcLog: a JSONL record of every JSON-RPC message, with secrets redacted."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import IO, Any

REDACTED = "REDACTED"
SECRET_KEY = re.compile(r"(token|secret|password|passwd|api[-_]?key|authorization|cookie|credential)", re.I)
# Long strings (file contents, 10 MB answers) are cut in the log: it records traffic, not payloads.
MAX_LOGGED_STRING = 2000


def redact(value: Any, key: str = "", *, max_string: int = MAX_LOGGED_STRING) -> Any:
    """Copy of `value` with secret-looking values replaced and strings cut; env values are always secret."""
    if isinstance(value, dict):
        if _is_name_value_pair(value):
            secret = key == "env" or SECRET_KEY.search(str(value["name"]))
            return {**value, "value": REDACTED} if secret else value
        if key in ("env", "headers"):
            return dict.fromkeys(value, REDACTED)
        return {
            k: (REDACTED if SECRET_KEY.search(k) and isinstance(v, str) else redact(v, k, max_string=max_string))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(item, key, max_string=max_string) for item in value]
    if isinstance(value, str):
        if SECRET_KEY.search(key):
            return REDACTED
        if len(value) > max_string:
            return value[:max_string] + f"…[{len(value) - max_string} more chars]"
    return value


def _is_name_value_pair(value: dict[str, Any]) -> bool:
    return "name" in value and "value" in value and isinstance(value.get("value"), str)


class RpcLog:
    """Appends one JSON object per message: time, direction, method, id, bytes, latency."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = self.path.open("a", encoding="utf-8", buffering=1024 * 64)
        self._last_flush = time.monotonic()

    def record(
        self,
        direction: str,
        message: Any,
        size: int,
        *,
        method: str | None = None,
        latency: float | None = None,
        raw: bytes | None = None,
    ) -> None:
        entry: dict[str, Any] = {"time": round(time.time(), 6), "dir": direction, "bytes": size}
        if isinstance(message, dict):
            entry["method"] = method or message.get("method")
            if "id" in message:
                entry["id"] = message["id"]
            if latency is not None:
                entry["latency_ms"] = round(latency * 1000, 3)
            entry["msg"] = redact(message)
        else:
            entry["raw"] = redact(str(message))
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        now = time.monotonic()
        if now - self._last_flush > 0.5:
            self._file.flush()
            self._last_flush = now

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
