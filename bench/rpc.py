"""The bench's plain JSON-RPC calls to an agent (bench/stress.py's floors, bench/bare_app.py): json and asyncio
only, so that the bare app, whose startup is a floor, pays nothing more for them."""

from __future__ import annotations

import asyncio
import json


def _write(proc: asyncio.subprocess.Process, message: dict) -> None:
    assert proc.stdin
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())


async def call(proc: asyncio.subprocess.Process, mid: int, method: str, params: dict, turns: bool = False) -> None:
    """Send request `mid` and read the agent's lines, every one json-parsed, until its answer. The agent's own
    requests are answered `cancelled` (a form: `cancel`). `turns`: a turn of the loop after every line."""
    assert proc.stdin and proc.stdout
    _write(proc, {"id": mid, "method": method, "params": params})
    await proc.stdin.drain()
    while True:
        msg = json.loads(await proc.stdout.readline())
        if msg.get("id") == mid and "method" not in msg:
            return
        if "method" in msg and "id" in msg:
            result = {"action": "cancel"} if msg["method"] == "elicitation/create" else {"outcome": {"outcome": "cancelled"}}
            _write(proc, {"id": msg["id"], "result": result})
            await proc.stdin.drain()
        if turns:
            await asyncio.sleep(0)
