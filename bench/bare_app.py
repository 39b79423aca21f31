"""The startup floor for bench/stress.py: a bare Textual app that spawns the same agent, does
`initialize` and `session/new` with plain asyncio and json, and shows `ready` (nothing else).

Run: python bench/bare_app.py AGENT ARGS...
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from textual.app import App, ComposeResult
from textual.widgets import Static


class Bare(App):
    def compose(self) -> ComposeResult:
        yield Static("bare: starting", id="status")

    async def on_mount(self) -> None:
        self.run_worker(self.talk())

    async def talk(self) -> None:
        proc = await asyncio.create_subprocess_exec(*sys.argv[1:], stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, limit=1 << 30)
        assert proc.stdin and proc.stdout

        async def call(mid: int, method: str, params: dict) -> None:
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params}) + "\n").encode())
            await proc.stdin.drain()
            while json.loads(await proc.stdout.readline()).get("id") != mid:
                pass

        await call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        await call(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
        self.query_one("#status", Static).update("bare: ready")


if __name__ == "__main__":
    Bare().run()
