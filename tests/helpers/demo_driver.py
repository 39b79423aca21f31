"""Driving an agent as a real subprocess over real pipes, with no rat_tui.protocol in between.

`Driver` is a tiny raw JSON-RPC client. It checks every message the agent sends against the ACP schema.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import os
import sys
from typing import Any, Awaitable, Callable

from .acp_schema import validate_message

TIMEOUT = 20.0
DEMO_ARGV = [sys.executable, "-m", "rat_tui.demo"]


class Driver:
    """Raw newline-delimited JSON-RPC client over a subprocess's stdio."""

    def __init__(
        self,
        on_request: Callable[[dict], dict | None | Awaitable[dict | None]] | None = None,
        validate: bool = True,
        first_id: int = 1,
    ) -> None:
        # on_request(msg) returns the response body ({"result": ...} or {"error": ...}); None: {"result": None}.
        # It may be async: the answer is then sent when it is ready, without blocking the reading.
        self.on_request = on_request or (lambda msg: None)
        self.answering: set[asyncio.Task] = set()
        self.validate = validate
        self.received: list[dict] = []  # every message from the agent, in order
        self.raw_lines: list[bytes] = []  # lines that were not JSON
        self.stderr = bytearray()
        self.ids = itertools.count(first_id)
        self.waiting: dict[Any, asyncio.Future] = {}
        self.our_requests: dict[Any, str] = {}  # id -> method, for validating the agent's responses
        self.changed = asyncio.Event()

    async def start(self, argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            limit=64 * 1024 * 1024,
        )
        self.reader = asyncio.create_task(self._read())
        self.stderr_reader = asyncio.create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk

    async def _read(self) -> None:
        try:
            await self._read_lines()
        except BaseException as exc:  # e.g. a message failed validation: fail every waiter with it
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            self.changed.set()
            raise

    async def _read_lines(self) -> None:
        while line := await self.proc.stdout.readline():
            try:
                msg = json.loads(line)
            except ValueError:
                self.raw_lines.append(line)
                self.changed.set()
                continue
            if self.validate:
                validate_message(msg, "agent", self.our_requests)
            self.received.append(msg)
            self.changed.set()
            if "method" not in msg and msg.get("id") in self.waiting:
                self.our_requests.pop(msg["id"], None)
                self.waiting.pop(msg["id"]).set_result(msg)
            elif "method" in msg and "id" in msg:
                body = self.on_request(msg)
                if inspect.isawaitable(body):
                    task = asyncio.create_task(self._answer_later(msg["id"], body))
                    self.answering.add(task)
                    task.add_done_callback(self.answering.discard)
                else:
                    self.send({"jsonrpc": "2.0", "id": msg["id"], **(body or {"result": None})})

    async def _answer_later(self, id: Any, body: Awaitable[dict | None]) -> None:
        answer = await body
        if not self.proc.stdin.is_closing():
            self.send({"jsonrpc": "2.0", "id": id, **(answer or {"result": None})})

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())

    def send_raw(self, text: str) -> None:
        self.proc.stdin.write(text.encode())

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_nowait(self, method: str, params: Any = None) -> asyncio.Future:
        id = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.waiting[id] = future
        self.our_requests[id] = method
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return future

    async def request(self, method: str, params: Any = None) -> dict:
        """Send a request; return the agent's whole response message."""
        return await asyncio.wait_for(self.request_nowait(method, params), TIMEOUT)

    async def wait_for(self, predicate: Callable[[], bool], what: str = "condition") -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                if self.reader.done():
                    self.reader.result()
                    raise AssertionError(f"agent stdout closed while waiting for {what}")
                await self.changed.wait()

        await asyncio.wait_for(loop(), TIMEOUT)

    async def handshake(self, cwd: str, capabilities: dict | None = None) -> str:
        if capabilities is None:
            capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        init = await self.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "test-driver", "version": "0"},
            },
        )
        assert init["result"]["protocolVersion"] == 1
        new = await self.request("session/new", {"cwd": cwd, "mcpServers": []})
        return new["result"]["sessionId"]

    def updates(self, kind: str | None = None) -> list[dict]:
        ups = [m["params"]["update"] for m in self.received if m.get("method") == "session/update"]
        return [u for u in ups if kind is None or u.get("sessionUpdate") == kind]

    async def close(self) -> int:
        for task in list(self.answering):
            task.cancel()
        if self.proc.stdin and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            code = await asyncio.wait_for(self.proc.wait(), TIMEOUT)
        except asyncio.TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        await asyncio.wait_for(asyncio.gather(self.reader, self.stderr_reader), TIMEOUT)
        return code


def prompt_params(session_id: str, text: str) -> dict:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
