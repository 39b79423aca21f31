"""Bench: what journaling every message costs the router, SQLite (WAL) against an append-only JSONL file.

Run: .venv/bin/python bench/journal.py [N]   (default N = 20000)
Routes N `agent_message_chunk` lines through Connection's line router, in slices of 64 lines with a
loop turn between them (as the transport's 2 ms read slices do; before each turn the router's
`_sync_recorders`, as the reader calls it), with one extra recorder:
  - floor: the bare router (no recorder); for scale, a recorder that only re-encodes the message
    with json.dumps (the journals store the wire line the router hands them instead);
  - JSONL: the line queued, one os.write(2) of the batch per loop tick (or per message);
  - SQLite: rat's own SessionJournal: the slice's batch committed on the loop in one WAL
    transaction before the loop turn (or, for comparison, a commit per message).
What survives kill -9 is what reached the OS: JSONL at the tick's write(2), SQLite at the commit;
both happen before the loop turn, so before anything routed could be shown.
Prints the best of five runs per variant: the loop's µs per message (what the stream feels), its
ratio to the floor and the extra µs, and the µs per message until the last one was on disk.
(Until rat-tui 2026-11 the commit ran in a writer thread: 1.28× on the loop, but the last message
was on disk only after 2.3× the floor, and under load the screen ran thousands of chunks ahead.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rat_tui.history.journal import HistoryJournal  # noqa: E402
from rat_tui.protocol.router import Connection  # noqa: E402

SLICE = 64


class NoProcess:
    async def write_line(self, line: bytes) -> None: ...


class DumpsOnly:
    def record(self, direction, message, size, *, method=None, latency=None, raw=None) -> None:
        json.dumps(message, ensure_ascii=False, separators=(",", ":"))


class JsonlJournal:
    """The alternative: an append-only file, one write(2) per loop tick (or per message)."""

    def __init__(self, path: Path, per_message: bool = False) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.per_message = per_message
        self.lines: list[str] = []
        self.scheduled = False

    def record(self, direction, message, size, *, method=None, latency=None, raw=None) -> None:
        head = json.dumps({"t": time.time(), "dir": direction, "method": method}, separators=(",", ":"))
        body = raw.decode("utf-8", "replace") if raw is not None else json.dumps(message, ensure_ascii=False)
        line = f'{head[:-1]},"msg":{body}}}\n'
        if self.per_message:
            os.write(self.fd, line.encode())
            return
        self.lines.append(line)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def sync(self) -> None:
        self.flush()

    def flush(self) -> None:
        self.scheduled = False
        if self.lines:
            os.write(self.fd, "".join(self.lines).encode())
            self.lines = []


class SqlitePerMessage:
    def __init__(self, journal: HistoryJournal) -> None:
        self.journal = journal
        self.session = journal.start_session("bench", ["bench"], "/bench")

    def record(self, direction, message, size, *, method=None, latency=None, raw=None) -> None:
        self.session.record(direction, message, size, method=method, latency=latency, raw=raw)
        self.journal.flush()


def chunk_line(n: int) -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {n} of the answer "}}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}}
    return json.dumps(message).encode()


async def route_all(lines: list[bytes], recorder: object | None) -> tuple[float, float]:
    """Seconds the loop spent routing (what the stream feels), and until the last message was on disk."""
    connection = Connection(NoProcess(), lambda method, params: None)  # type: ignore[arg-type]
    if recorder is not None:
        connection.recorders.append(recorder)  # type: ignore[arg-type]
    started = time.perf_counter()
    for start in range(0, len(lines), SLICE):
        for line in lines[start : start + SLICE]:
            connection._route_line(line)
        connection._sync_recorders()  # what the reader does before each loop turn
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # the last batch's hand-over
    routed = time.perf_counter() - started
    journal = getattr(recorder, "journal", None)
    if journal is not None:
        journal.flush()  # nothing left by now: each slice was committed before its loop turn
        journal.close()
    return routed, time.perf_counter() - started


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    lines = [chunk_line(i) for i in range(n)]
    await route_all(lines, None)  # warm up
    with tempfile.TemporaryDirectory() as folder:
        counter = iter(range(100))

        def path(suffix: str) -> Path:
            return Path(folder) / f"j{next(counter)}{suffix}"

        variants = {
            "bare": lambda: None,
            "json.dumps only (re-encoding)": DumpsOnly,
            "JSONL, write(2) per tick": lambda: JsonlJournal(path(".jsonl")),
            "SQLite WAL, commit per slice": lambda: HistoryJournal(path(".sqlite3")).start_session("bench", ["bench"], "/bench"),
            "JSONL, write(2) per message": lambda: JsonlJournal(path(".jsonl"), True),
            "SQLite WAL, commit per message": lambda: SqlitePerMessage(HistoryJournal(path(".sqlite3"))),
        }
        # Rounds interleave the variants, so a neighbour's load on this shared machine hits them all alike.
        timings: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(5):
            for name, make in variants.items():
                timings[name].append(await route_all(lines, make()))
        best = {name: (min(t[0] for t in runs), min(t[1] for t in runs)) for name, runs in timings.items()}
        floor = best.pop("bare")[0]
        results = list(best.items())
        jsonl, database = path(".jsonl"), path(".sqlite3")
        await route_all(lines, JsonlJournal(jsonl))
        history = HistoryJournal(database)
        await route_all(lines, history.start_session("bench", ["bench"], "/bench"))
        history.close()  # the last connection checkpoints the WAL into the database
        sizes = {".jsonl": jsonl.stat().st_size, ".sqlite3": database.stat().st_size}
    print(f"{n:,} chunk notifications routed, a loop turn every {SLICE}")
    print(f"  floor: the bare router           {floor / n * 1e6:6.1f} µs/msg  (1.00×)")
    for name, (seconds, durable) in results:
        print(f"  + {name:31}{seconds / n * 1e6:6.1f} µs/msg  ratio {seconds / floor:.2f}×  "
              f"+{(seconds - floor) / n * 1e6:4.1f} µs over the floor; all on disk after {durable / n * 1e6:.1f} µs/msg")
    print(f"  on disk per message: JSONL {sizes.get('.jsonl', 0) / n:.0f} B, "
          f"SQLite {sizes.get('.sqlite3', 0) / n:.0f} B")


if __name__ == "__main__":
    asyncio.run(main())
