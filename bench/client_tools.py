"""Bench: what the stdio shim costs rat-tui's own MCP server, against floors measured in the same run.

Run: .venv/bin/python bench/client_tools.py [N]   (default N = 300)

1. Start: spawning the shim, its secret handshake and an MCP `initialize` round trip, against
   spawning `python -c pass` (the floor any stdio MCP server pays).
2. Calls: N `tools/list` round trips through a shim subprocess and the bridge socket, against the
   same N fed straight into the in-process McpEndpoint (the SDK server alone).
Prints the best of three runs and each ratio against its floor.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rat_tui.client_tools.bridge import Bridge  # noqa: E402
from rat_tui.client_tools.server import McpEndpoint  # noqa: E402
from rat_tui.client_tools.settings import ClientToolsSettings  # noqa: E402
from rat_tui.client_tools.tools import ToolHost  # noqa: E402
from rat_tui.state.store import SessionStore  # noqa: E402

ROOT = str(Path(__file__).resolve().parent.parent)
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def host() -> ToolHost:
    store = SessionStore()

    async def never(params: dict) -> dict:
        return {"outcome": {"outcome": "cancelled"}}

    return ToolHost(ClientToolsSettings(), store.apply_update, never, lambda: store.state, Path.cwd())


def lines(n: int) -> list[bytes]:
    return [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list"}).encode() + b"\n" for i in range(1, n + 1)]


async def floor_start() -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await process.wait()
    return time.perf_counter() - started


async def shim(bridge: Bridge) -> asyncio.subprocess.Process:
    env = {**os.environ, "RAT_MCP_SECRET": bridge.secret, "PYTHONPATH": ROOT}
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "rat_tui.client_tools.shim", "--socket", bridge.path or "",
                                                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


async def shim_start(bridge: Bridge) -> float:
    started = time.perf_counter()
    process = await shim(bridge)
    assert process.stdin and process.stdout
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    await process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    await process.wait()
    return elapsed


async def in_process(n: int) -> float:
    replies: asyncio.Queue[dict] = asyncio.Queue()

    async def send(message: dict) -> None:
        await replies.put(message)

    endpoint = McpEndpoint(host(), send)
    endpoint.start()
    await endpoint.feed(INITIALIZE)
    await replies.get()
    await endpoint.feed({"jsonrpc": "2.0", "method": "notifications/initialized"})
    started = time.perf_counter()
    for line in lines(n):
        await endpoint.feed(json.loads(line))
        await replies.get()
    elapsed = time.perf_counter() - started
    await endpoint.close()
    return elapsed


async def bridged(bridge: Bridge, n: int) -> float:
    process = await shim(bridge)
    assert process.stdin and process.stdout
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n" + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    await process.stdout.readline()
    started = time.perf_counter()
    for line in lines(n):
        process.stdin.write(line)
        await process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    await process.wait()
    return elapsed


async def main(n: int) -> None:
    bridge = Bridge(host())
    await bridge.open()
    await in_process(5)  # warm the imports
    try:
        floor_s = min([await floor_start() for _ in range(3)])
        shim_s = min([await shim_start(bridge) for _ in range(3)])
        direct = min([await in_process(n) for _ in range(3)])
        relayed = min([await bridged(bridge, n) for _ in range(3)])
    finally:
        await bridge.close()
    print(f"start   python -c pass       {floor_s * 1000:8.1f} ms  (floor)")
    print(f"start   shim + initialize    {shim_s * 1000:8.1f} ms  ×{shim_s / floor_s:.2f}")
    print(f"calls   in-process endpoint  {direct / n * 1e6:8.1f} µs per tools/list  (floor)")
    print(f"calls   through the shim     {relayed / n * 1e6:8.1f} µs per tools/list  ×{relayed / direct:.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
