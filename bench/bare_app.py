"""The floors for bench/stress.py: a bare Textual app that spawns the same agent, does `initialize` and
`session/new` with plain asyncio and json, and shows `ready` (the startup floor; nothing else).

With BARE_ECHO_SECONDS set (the echo floor, `stress.py --echo-floor`), it also has an input field: Enter sends
its text as the prompt, again and again until that many seconds have passed, then shows `END-<prompt>`.
Every line the agent writes is json-parsed and dropped, with a turn of the loop after each (the agent's
requests are answered `cancelled`). What a key typed meanwhile waits for is then Textual, tmux and the
agent's flood on the same CPUs, and nearly nothing of the client's.

Run: python bench/bare_app.py AGENT ARGS...
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import rpc  # bench/rpc.py (this script's folder is on the path)
from textual.app import App, ComposeResult
from textual.widgets import Input, Static

ECHO_SECONDS = float(os.environ.get("BARE_ECHO_SECONDS") or 0)


class Bare(App):
    def compose(self) -> ComposeResult:
        yield Static("bare: starting", id="status")
        if ECHO_SECONDS:
            yield Input(id="prompt")

    async def on_mount(self) -> None:
        self.run_worker(self.talk())

    async def talk(self) -> None:
        proc = await asyncio.create_subprocess_exec(*sys.argv[1:], stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, limit=1 << 30)
        assert proc.stdin and proc.stdout
        self.proc = proc
        await rpc.call(proc, 0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        await rpc.call(proc, 1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
        self.query_one("#status", Static).update("bare: ready")

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        name = event.value
        event.input.value = ""
        self.run_worker(self.flood(name))

    async def flood(self, name: str) -> None:
        status = self.query_one("#status", Static)
        status.update("bare: running")
        started = time.perf_counter()
        mid = 2
        while time.perf_counter() - started < ECHO_SECONDS:
            await rpc.call(self.proc, mid, "session/prompt",
                           {"sessionId": "stress", "prompt": [{"type": "text", "text": name}]}, turns=True)
            mid += 1
        status.update(f"END-{name} ({mid - 2} prompts)")


if __name__ == "__main__":
    Bare().run()
