"""Provides TrafficLog: an in-memory ring of the session's JSON-RPC messages, for the traffic inspector."""

from __future__ import annotations

import logging
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from .lines import decode_line
from .rpc_log import MAX_LOGGED_STRING, redact
from .sanitize import clean

log = logging.getLogger("rat.rpc")

DEFAULT_LIMIT = 5_000
# The ring keeps a message's line (or the message, by reference) and redacts it only when shown, so
# recording costs a tuple. A big message (a file read, a long answer) is redacted at once instead: that
# cuts its long strings, so the ring never pins megabytes; its JSON was just built or parsed anyway.
EAGER_REDACT_BYTES = 32 * 1024

# The kind of a session/update kept as bytes (v1 and v2 name it alike); a kind is a short snake_case word.
UPDATE_KIND = re.compile(rb'"sessionUpdate"\s*:\s*"([a-z_]{1,64})"')

TrafficListener = Callable[["TrafficRecord"], None]


class TrafficRecord:
    """One message in or out: what the inspector lists, plus the message itself, redacted on demand. A line
    kept as its bytes (TrafficLog) is decoded the first time the message is asked for: the inspector's list
    needs only the fields, and hears every message of a flood while it is open."""

    __slots__ = ("seq", "time", "direction", "method", "id", "size", "latency_ms", "_payload", "_redacted")

    def __init__(
        self,
        seq: int,
        time: float,
        direction: str,
        method: str | None,
        id: Any,
        size: int,
        latency_ms: float | None,
        payload: Any,
        redacted: bool = False,
    ) -> None:
        self.seq = seq
        self.time = time
        self.direction = direction
        self.method = method
        self.id = id
        self.size = size
        self.latency_ms = latency_ms
        self._payload = payload
        self._redacted = redacted

    @property
    def message(self) -> Any:
        """The message (a dict, or the raw text of a malformed line) with secrets redacted."""
        return self.redacted()

    def redacted(self, max_string: int = MAX_LOGGED_STRING) -> Any:
        """The redacted message with strings cut to `max_string` characters (the inspector cuts shorter)."""
        payload = self._decoded()
        if self._redacted and max_string >= MAX_LOGGED_STRING:
            return payload
        return redact(payload, max_string=max_string)

    def _decoded(self) -> Any:
        """The message, a line kept as its bytes decoded as the router decodes it (once)."""
        payload = self._payload
        if type(payload) is bytes:
            try:
                payload = decode_line(payload)
            except (ValueError, RecursionError):  # what the router refused is not kept as bytes; be safe
                payload = clean(payload[:200].decode("utf-8", "replace"))
            self._payload = payload
        return payload

    @property
    def update_kind(self) -> str | None:
        """A `session/update`'s kind (`plan`, `tool_call`, `agent_message_chunk`, ...), for the inspector's filter.

        A line kept as its bytes is searched, not decoded: filtering a flood stays a scan of bytes.
        """
        if self.method != "session/update":
            return None
        payload = self._payload
        if type(payload) is bytes:
            found = UPDATE_KIND.search(payload)
            return found.group(1).decode("ascii") if found else None
        update = payload.get("params", {}).get("update") if isinstance(payload, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        return kind if isinstance(kind, str) else None

    @property
    def is_error(self) -> bool:
        payload = self._decoded()
        return isinstance(payload, dict) and "error" in payload

    @property
    def is_malformed(self) -> bool:
        """A line that was not a JSON object: the record holds its (cut) text."""
        return not isinstance(self._decoded(), dict)

    @property
    def is_response(self) -> bool:
        payload = self._decoded()
        return isinstance(payload, dict) and "method" not in payload and ("result" in payload or "error" in payload)

    def __repr__(self) -> str:
        return f"TrafficRecord(#{self.seq} {self.direction} {self.method!r} id={self.id!r} {self.size}B)"


class TrafficLog:
    """The last `limit` messages of one connection; listeners hear each new record as it is made.

    `record` has RpcLog's signature, so a Connection feeds both through one list of recorders.
    It runs on every streamed chunk, so the ring holds plain tuples and makes a TrafficRecord only when
    one is asked for. A line read off the wire is kept as its bytes, decoded when its message is asked
    for (TrafficRecord): no JSON work on the hot path, and one object per message held instead of the
    tree of dicts the router decoded (freed at once, while still in the cache). Record numbers are
    implied: the oldest held is `dropped + 1`.
    """

    def __init__(self, limit: int = DEFAULT_LIMIT, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self._clock = clock
        # (time, direction, method, id, size, latency s, payload, redacted): the payload is the line's
        # bytes (decoded when shown), the message itself, or its redacted copy.
        self._entries: deque[tuple[Any, ...]] = deque(maxlen=limit)
        self._listeners: tuple[TrafficListener, ...] = ()  # replaced, never mutated: safe to unsubscribe mid-call
        self.dropped = 0
        # The ACP version the connection speaks, once `initialize` settled it (the inspector shows it).
        self.protocol_version: int | None = None

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
        """Keep one message (`raw`: the line it crossed the wire as, when there was one); `records[-1]` is
        its record. Listeners hear it at once."""
        if type(message) is dict:
            method = method or message.get("method")
            message_id = message.get("id")
        else:
            message_id = None
        if size > EAGER_REDACT_BYTES:
            entry = (self._clock(), direction, method, message_id, size, latency, redact(message), True)
        elif raw is not None and type(message) is dict:
            entry = (self._clock(), direction, method, message_id, size, latency, raw, False)
        else:
            entry = (self._clock(), direction, method, message_id, size, latency, message, False)
        entries = self._entries
        if len(entries) == self.limit:
            self.dropped += 1
        entries.append(entry)
        if self._listeners:
            record = self._made(len(entries) - 1)
            for listener in self._listeners:
                try:
                    listener(record)
                except Exception:
                    log.exception("a traffic listener failed")

    def _made(self, index: int) -> TrafficRecord:
        """The record of the entry held at `index`."""
        at, direction, method, message_id, size, latency, payload, redacted = self._entries[index]
        return TrafficRecord(self.dropped + index + 1, at, direction, method, message_id, size,
                             None if latency is None else latency * 1000, payload, redacted)

    def subscribe(self, listener: TrafficListener) -> Callable[[], None]:
        """Call `listener(record)` for every new record; returns the function that stops it."""
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            self._listeners = tuple(other for other in self._listeners if other is not listener)

        return unsubscribe

    @property
    def records(self) -> list[TrafficRecord]:
        """The records held, oldest first."""
        return [self._made(index) for index in range(len(self._entries))]

    def get(self, seq: int) -> TrafficRecord | None:
        """The record numbered `seq`, if the ring still holds it (numbers are consecutive)."""
        index = seq - self.dropped - 1
        if 0 <= index < len(self._entries):
            return self._made(index)
        return None

    @property
    def total(self) -> int:
        """How many records were ever made: held plus dropped."""
        return len(self._entries) + self.dropped

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TrafficRecord]:
        return iter(self.records)
