"""Provides TrafficLog: an in-memory ring of the session's JSON-RPC messages, for the traffic inspector."""

from __future__ import annotations

import itertools
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from .rpc_log import MAX_LOGGED_STRING, redact

log = logging.getLogger("rat.rpc")

DEFAULT_LIMIT = 5_000
# A record keeps its message by reference and redacts it only when shown, so recording costs a few
# attribute stores. A big message (a file read, a long answer) is redacted at once instead: that cuts
# its long strings, so the ring never pins megabytes; its JSON was just built or parsed anyway.
EAGER_REDACT_BYTES = 32 * 1024

TrafficListener = Callable[["TrafficRecord"], None]


class TrafficRecord:
    """One message in or out: what the inspector lists, plus the message itself, redacted on demand."""

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
        if self._redacted and max_string >= MAX_LOGGED_STRING:
            return self._payload
        return redact(self._payload, max_string=max_string)

    @property
    def is_error(self) -> bool:
        return isinstance(self._payload, dict) and "error" in self._payload

    @property
    def is_malformed(self) -> bool:
        """A line that was not a JSON object: the record holds its (cut) text."""
        return not isinstance(self._payload, dict)

    @property
    def is_response(self) -> bool:
        payload = self._payload
        return isinstance(payload, dict) and "method" not in payload and ("result" in payload or "error" in payload)

    def __repr__(self) -> str:
        return f"TrafficRecord(#{self.seq} {self.direction} {self.method!r} id={self.id!r} {self.size}B)"


class TrafficLog:
    """The last `limit` messages of one connection; listeners hear each new record as it is made.

    `record` has RpcLog's signature, so a Connection feeds both through one list of recorders.
    It runs on every streamed chunk: it stores references and does no JSON work on the hot path.
    """

    def __init__(self, limit: int = DEFAULT_LIMIT, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self._clock = clock
        self._records: deque[TrafficRecord] = deque(maxlen=limit)
        self._seq = itertools.count(1)
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
    ) -> TrafficRecord:
        if isinstance(message, dict):
            method = method or message.get("method")
            message_id = message.get("id")
        else:
            message_id = None
        eager = size > EAGER_REDACT_BYTES
        entry = TrafficRecord(
            next(self._seq),
            self._clock(),
            direction,
            method,
            message_id,
            size,
            None if latency is None else latency * 1000,
            redact(message) if eager else message,
            eager,
        )
        if len(self._records) == self.limit:
            self.dropped += 1
        self._records.append(entry)
        for listener in self._listeners:
            try:
                listener(entry)
            except Exception:
                log.exception("a traffic listener failed")
        return entry

    def subscribe(self, listener: TrafficListener) -> Callable[[], None]:
        """Call `listener(record)` for every new record; returns the function that stops it."""
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            self._listeners = tuple(other for other in self._listeners if other is not listener)

        return unsubscribe

    @property
    def records(self) -> list[TrafficRecord]:
        """A copy of the records held, oldest first."""
        return list(self._records)

    def get(self, seq: int) -> TrafficRecord | None:
        """The record numbered `seq`, if the ring still holds it (numbers are consecutive)."""
        if not self._records:
            return None
        index = seq - self._records[0].seq
        if 0 <= index < len(self._records):
            return self._records[index]
        return None

    @property
    def total(self) -> int:
        """How many records were ever made: held plus dropped."""
        return len(self._records) + self.dropped

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[TrafficRecord]:
        return iter(list(self._records))
