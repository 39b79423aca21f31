"""Replay a recorded ACP trace (tests/fixtures/acp-traces/*.jsonl) as a fake agent (standard library only).

    python tests/agents/trace_agent.py TRACE [--process N]

TRACE is a path, or a file name in the traces folder (env RAT_ACP_TRACES_DIR, default
tests/fixtures/acp-traces). A trace may hold several agent processes, each starting at a client
``initialize``; ``--process N`` (1-based, default 1) picks which one this process plays.

For each client→agent line of the trace, in order, the agent waits for the matching message from
the real client: a request with the same method, a notification with the same method, or the
client's answer to an agent request (same id: agent→client requests keep the trace's ids). Then it
writes the agent→client lines that follow, rewriting the ids of responses to the client's actual
request ids. After the trace it answers any further request with -32601 until stdin closes.
Every line received is recorded like the scripted agent does (env RAT_FAKE_RECORD).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scripted_agent import Wire  # noqa: E402


def traces_dir() -> Path:
    env = os.environ.get("RAT_ACP_TRACES_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "fixtures" / "acp-traces"


def load_process(trace: str, process: int = 1) -> list[dict]:
    """The trace lines of the `process`-th agent process (1-based)."""
    path = Path(trace)
    if not path.exists():
        path = traces_dir() / trace
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    processes: list[list[dict]] = []
    for entry in entries:
        msg = entry.get("msg")
        starts = entry["dir"] == "c2a" and isinstance(msg, dict) and msg.get("method") == "initialize"
        if starts or not processes:
            processes.append([])
        processes[-1].append(entry)
    if not 1 <= process <= len(processes):
        raise SystemExit(f"{path} has {len(processes)} process(es), not {process}")
    return processes[process - 1]


class TraceAgent:
    def __init__(self, entries: list[dict]) -> None:
        self.entries = entries
        self.wire = Wire()
        self.inbox: list[dict] = []  # client messages not yet matched to the trace
        self.arrived = asyncio.Event()
        self.ids: dict[Any, Any] = {}  # trace request id -> the client's actual id
        self.done = False

    def on_message(self, msg: dict) -> None:
        if self.done and isinstance(msg.get("method"), str) and "id" in msg:
            self.wire.error(msg["id"], -32601, "Method not found")
            return
        self.inbox.append(msg)
        self.arrived.set()

    async def expect(self, want: dict) -> dict:
        """Wait for the client message matching the trace's client message `want`."""
        while True:
            for i, msg in enumerate(self.inbox):
                if matches(msg, want):
                    return self.inbox.pop(i)
            self.arrived.clear()
            await self.arrived.wait()

    async def run(self) -> None:
        eof = self.wire.start(self.on_message)
        player = asyncio.create_task(self.play())
        await asyncio.wait([eof, player], return_when=asyncio.FIRST_COMPLETED)
        if not player.done():
            player.cancel()
            return
        player.result()
        await eof

    async def play(self) -> None:
        for entry in self.entries:
            msg = entry.get("msg")
            if entry["dir"] == "c2a":
                if isinstance(msg, dict):
                    got = await self.expect(msg)
                    if "method" in msg and "id" in msg:
                        self.ids[msg["id"]] = got["id"]
            elif not isinstance(msg, dict):
                self.wire.write_line(str(entry.get("raw", msg)))
            elif "method" not in msg and "id" in msg:
                self.wire.write({**msg, "id": self.ids.get(msg["id"], msg["id"])})
            else:
                self.wire.write(msg)
        self.done = True
        for msg in self.inbox:  # requests that never matched the trace
            if isinstance(msg.get("method"), str) and "id" in msg:
                self.wire.error(msg["id"], -32601, "Method not found")
        self.inbox.clear()


def matches(got: dict, want: dict) -> bool:
    if "method" in want:
        return got.get("method") == want["method"] and ("id" in got) == ("id" in want)
    return "method" not in got and got.get("id") == want.get("id")


def main() -> None:
    args = sys.argv[1:]
    process = 1
    if "--process" in args:
        i = args.index("--process")
        process = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 1:
        raise SystemExit("usage: trace_agent.py TRACE [--process N]")
    try:
        asyncio.run(TraceAgent(load_process(args[0], process)).run())
    except (KeyboardInterrupt, BrokenPipeError):
        pass


if __name__ == "__main__":
    main()
