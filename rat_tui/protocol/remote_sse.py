"""Server-sent events read as bytes, a network read at a time: the Streamable HTTP link's stream parser.

The WHATWG event-stream format (html.spec.whatwg.org, "Server-sent events"): lines end in CRLF, LF or CR; a
blank line dispatches the event; `data:` lines join with LF; `id:` sets the last event id (kept across events,
ignored when it holds a NUL); `event:` names the type; a line starting with `:` is a comment; a leading BOM is
dropped. `retry:` is read and ignored (the link reconnects on its own backoff).

Why not httpx-sse's decoder: it decodes each network read to text, splits it into lines and builds an event
object per message, then the link encoded the data back to bytes; in a flood of small chunks that cost about
ten times what routing a line costs over stdio (bench/remote_stream.py). Here a read is split once, in bytes,
and the messages of one read come out together, as one batch for the reader.
"""

from __future__ import annotations

BOM = b"\xef\xbb\xbf"


class SseParser:
    """Feed it a stream's bytes as they come; it returns the data of each complete `message` event."""

    def __init__(self) -> None:
        self.last_id: str | None = None  # the stream's last event id (for Last-Event-ID on a reconnect)
        self._tail = b""  # a line begun and not ended yet
        self._cr_held = False  # the last read ended in CR: an LF opening the next one belongs to it
        self._started = False
        self._data: list[bytes] = []
        self._event = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._cr_held and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._cr_held = False
        buffer = self._tail + chunk if self._tail else chunk
        if not self._started:
            if len(buffer) < len(BOM) and BOM.startswith(buffer):
                self._tail = buffer
                return []
            self._started = True
            if buffer.startswith(BOM):
                buffer = buffer[len(BOM):]
        if b"\r" in buffer:
            self._cr_held = buffer.endswith(b"\r")
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buffer.split(b"\n")
        self._tail = lines.pop()
        return self._events(lines)

    def _events(self, lines: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        data = self._data
        for line in lines:
            if not line:  # the end of an event
                if data:
                    if self._event in (b"", b"message"):
                        payload = data[0] if len(data) == 1 else b"\n".join(data)
                        if payload:
                            out.append(payload)
                    data.clear()
                self._event = b""
            elif line[:5] == b"data:":  # the usual lines first: a flood is made of them
                data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line[:4] == b"id: " and b"\0" not in line:
                self.last_id = line[4:].decode("utf-8", "replace")
            elif line[:1] != b":":
                self._field(line)
        return out

    def _field(self, line: bytes) -> None:
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name == b"id":
            if b"\0" not in value:
                self.last_id = value.decode("utf-8", "replace")
        elif name == b"event":
            self._event = value
