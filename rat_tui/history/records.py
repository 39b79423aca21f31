"""Provides Recorded and the portable recording file format: read ours, `--rpc-log` files and agent traces.

Our export is JSONL in the format of the recorded agent traces (shared/acp-traces): a header line
`{"rat_history": 1, "session": {...}}`, then one `{"t", "dir", "len", "msg"}` object per message,
`dir` being `c2a` (client to agent) or `a2c`. The reader also takes `--rpc-log` lines
(`{"time", "dir": "in"|"out", "msg"}`); a line that is not JSON is skipped and counted, never fatal.
Messages come back as the router decoded them live (`protocol.lines.decode_line`): a lone surrogate
is U+FFFD, and an `--rpc-log` line marked `"not_utf8"` has its original bytes rebuilt and decoded.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol.lines import decode_line, mend

FORMAT_VERSION = 1
IN, OUT = "in", "out"
_DIRECTIONS = {"in": IN, "a2c": IN, "out": OUT, "c2a": OUT}


@dataclass(frozen=True)
class Recorded:
    """One message as recorded: when, which way (`in` from the agent, `out` to it), the message itself.

    `method` is the request's method on responses when the recorder knew it (our journal does; traces don't).
    """

    t: float
    direction: str
    message: Any
    method: str | None = None


@dataclass
class Recording:
    """What a file held: the messages, the session facts of a header line if any, and the lines skipped."""

    records: list[Recorded]
    session: dict[str, Any] = field(default_factory=dict)
    skipped: int = 0


class RecordingError(Exception):
    """The file cannot be read at all, or holds no message: said to the user as is."""


def read_recording(path: Path) -> Recording:
    """Read a journal export, an `--rpc-log` file or an agent trace; raises RecordingError with a plain message."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordingError(f"No such file: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise RecordingError(f"Cannot read {path}: {error}") from None
    return parse_recording(text, str(path))


def parse_recording(text: str, name: str = "recording") -> Recording:
    records: list[Recorded] = []
    session: dict[str, Any] = {}
    skipped = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if not isinstance(entry, dict):
            skipped += 1
            continue
        if "rat_history" in entry:
            session = entry.get("session") if isinstance(entry.get("session"), dict) else {}
            continue
        direction = _DIRECTIONS.get(str(entry.get("dir")))
        message = entry.get("msg", entry.get("raw"))
        if direction is None or message is None:
            skipped += 1
            continue
        if entry.get("not_utf8") is True:
            message = from_logged(message)
        elif "\\u" in line:
            message = mend(message)
        t = entry.get("t", entry.get("time", 0.0))
        method = entry.get("method") if isinstance(message, dict) and "method" not in message else None
        records.append(Recorded(float(t) if isinstance(t, (int, float)) else 0.0, direction, message,
                                method if isinstance(method, str) else None))
    if not records:
        raise RecordingError(f"{name} holds no recorded ACP message (expected JSONL lines with \"dir\" and \"msg\").")
    return Recording(records, session, skipped)


def _back_to_the_wire(error: UnicodeError) -> tuple[bytes, int]:
    """Encoding error handler: `\\udc80`-`\\udcff` are the bytes they stand for; another surrogate
    was a JSON escape on the wire, and becomes one again."""
    assert isinstance(error, UnicodeEncodeError)
    out = bytearray()
    for char in error.object[error.start:error.end]:
        code = ord(char)
        out += bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}".encode()
    return bytes(out), error.end


codecs.register_error("rat-wire", _back_to_the_wire)


def from_logged(message: Any) -> Any:
    """A message an `--rpc-log` logged from a line that was not UTF-8 (bad bytes as `\\udcXX`),
    decoded as the router decoded that line."""
    try:
        wire = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "rat-wire")
        return decode_line(wire)
    except (ValueError, RecursionError):
        return mend(message)


def dump_recording(records: list[Recorded], session: dict[str, Any] | None = None) -> str:
    """The export format: a header line, then one trace-style line per message."""
    lines = [json.dumps({"rat_history": FORMAT_VERSION, "session": session or {}}, ensure_ascii=False)]
    start = records[0].t if records else 0.0
    for record in records:
        body = json.dumps(record.message, ensure_ascii=False, separators=(",", ":"))
        entry: dict[str, Any] = {"t": round(record.t - start, 4), "dir": "a2c" if record.direction == IN else "c2a",
                                 "len": len(body.encode("utf-8")) + 1}
        if record.method and isinstance(record.message, dict) and "method" not in record.message:
            entry["method"] = record.method
        entry["msg" if isinstance(record.message, dict) else "raw"] = record.message
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"
