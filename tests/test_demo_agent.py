"""The embedded demo agent (`python -m rat_tui.demo`), driven as a real subprocess over real pipes.

`Driver` is a tiny raw JSON-RPC client (no rat_tui.protocol), shared with test_fake_agents.py. It
checks every message the agent sends against the ACP schema.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from .acp_schema import validate_message

pytestmark = pytest.mark.slow

TIMEOUT = 20.0
DEMO_ARGV = [sys.executable, "-m", "rat_tui.demo"]


class Driver:
    """Raw newline-delimited JSON-RPC client over a subprocess's stdio."""

    def __init__(
        self, on_request: Callable[[dict], dict | None] | None = None, validate: bool = True, first_id: int = 1
    ) -> None:
        # on_request(msg) returns the response body ({"result": ...} or {"error": ...}); None: {"result": None}
        self.on_request = on_request or (lambda msg: None)
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
                body = self.on_request(msg) or {"result": None}
                self.send({"jsonrpc": "2.0", "id": msg["id"], **body})

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

    async def handshake(self, cwd: str) -> str:
        init = await self.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
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


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("# Sample project\n\nalpha\nbeta\n")
    (ws / "notes.txt").write_text("gamma\n")
    return ws


async def test_demo_full_turn(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    await driver.wait_for(lambda: driver.updates("available_commands_update"), "commands")
    info = driver.received[0]["result"]
    assert info["agentInfo"]["name"] == "rat-demo"
    assert info["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
    assert 2 <= len(driver.updates("available_commands_update")[0]["availableCommands"]) <= 3

    response = await driver.request("session/prompt", prompt_params(session_id, "tell me about frobnicators"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert all(m["params"]["sessionId"] == session_id for m in driver.received if m.get("method"))

    thoughts = driver.updates("agent_thought_chunk")
    assert len(thoughts) > 1 and len({t["messageId"] for t in thoughts}) == 1

    plans = driver.updates("plan")
    assert len(plans) > 2 and all(len(p["entries"]) == 3 for p in plans)
    assert plans[0]["entries"][0]["status"] == "in_progress"
    assert [e["status"] for e in plans[-1]["entries"]] == ["completed"] * 3

    calls = driver.updates("tool_call")
    assert len(calls) == 1 and calls[0]["kind"] == "read" and calls[0]["status"] == "pending"
    call_updates = [u for u in driver.updates("tool_call_update") if u["toolCallId"] == calls[0]["toolCallId"]]
    assert [u["status"] for u in call_updates] == ["in_progress", "completed"]
    done = call_updates[-1]
    assert done["locations"][0]["path"] == str(workspace / "README.md")
    assert "Sample project" in done["content"][0]["content"]["text"]

    chunks = driver.updates("agent_message_chunk")
    assert len(chunks) > 10 and len({c["messageId"] for c in chunks}) == 1
    assert chunks[0]["messageId"] != thoughts[0]["messageId"]
    text = "".join(c["content"]["text"] for c in chunks)
    assert text.startswith("## ")
    assert "tell me about frobnicators" in text
    assert "\n- " in text and "```python\n" in text

    # the order of the story: thought, then the tool call, then the answer
    kinds = [u["sessionUpdate"] for u in driver.updates()]
    assert kinds.index("agent_thought_chunk") < kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert await driver.close() == 0


async def test_demo_cancel_mid_stream(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_DELAY": "0.02"})
    session_id = await driver.handshake(str(workspace))
    pending = driver.request_nowait("session/prompt", prompt_params(session_id, "a long answer please"))
    await driver.wait_for(lambda: len(driver.updates("agent_thought_chunk")) >= 2, "streaming")
    driver.notify("session/cancel", {"sessionId": session_id})
    response = await asyncio.wait_for(pending, TIMEOUT)
    assert response["result"] == {"stopReason": "cancelled"}
    assert not driver.updates("agent_message_chunk"), "the answer kept streaming after the cancel"
    # the session still works afterwards
    again = await driver.request("session/prompt", prompt_params(session_id, "again"))
    assert again["result"] == {"stopReason": "end_turn"}
    assert await driver.close() == 0


async def test_demo_unknown_method_and_garbage(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    driver.send_raw("this is not json\n[1, 2]\n\n")
    driver.notify("_unknown/notification", {"x": 1})
    response = await driver.request("session/frobnicate", {"x": 1})
    assert response["error"]["code"] == -32601
    session_id = await driver.handshake(str(workspace))
    bad = await driver.request("session/prompt", prompt_params("no-such-session", "hi"))
    assert bad["error"]["code"] == -32602
    ok = await driver.request("session/prompt", prompt_params(session_id, "still alive?"))
    assert ok["result"]["stopReason"] == "end_turn"
    assert await driver.close() == 0
    assert b"malformed" in driver.stderr


async def test_demo_empty_workspace(tmp_path: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(tmp_path))
    response = await driver.request("session/prompt", prompt_params(session_id, ""))
    assert response["result"]["stopReason"] == "end_turn"
    assert driver.updates("tool_call_update")[-1]["status"] == "completed"
    assert await driver.close() == 0
