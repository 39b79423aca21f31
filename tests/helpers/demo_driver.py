"""Driving an agent as a real subprocess over real pipes, with no rat_tui.protocol in between.

`Driver` is a tiny raw JSON-RPC client. It checks every message the agent sends against the ACP schema.
`FakeClient` answers the agent's requests (fs from a tmp dir, terminals by really running the command,
permissions by option kind) for the demo agent's scenario tests; `start_with_client` starts the demo
agent with one.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import os
import sys
from pathlib import Path
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


class ClientFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class FakeClient:
    """Serves the agent's requests: fs from `root`, terminals by really running the shell line.

    `permission` is the option kind to pick ("allow_once", "allow_always", "reject_once"), or
    "cancelled" (answer the cancelled outcome), or "cancel_session" (send session/cancel first, then
    answer cancelled, as a real client does). `errors` maps a method to the (code, message) to fail
    it with. `hold_wait` keeps terminal/wait_for_exit unanswered until the terminal is killed.
    """

    def __init__(
        self,
        root: Path,
        permission: str = "allow_once",
        errors: dict[str, tuple[int, str]] | None = None,
        hold_wait: bool = False,
        elicitation: dict | None = None,
    ) -> None:
        self.root = root
        self.elicitation = elicitation or {"action": "cancel"}  # the answer to elicitation/create
        self.permission = permission
        self.errors = errors or {}
        self.hold_wait = hold_wait
        self.driver: Driver | None = None
        self.calls: list[tuple[str, dict]] = []  # every request from the agent, in order
        self.terminals: dict[str, dict] = {}
        self.killed = asyncio.Event()

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def params_of(self, method: str) -> list[dict]:
        return [params for m, params in self.calls if m == method]

    def __call__(self, msg: dict) -> Awaitable[dict]:
        method, params = msg["method"], msg.get("params") or {}
        self.calls.append((method, params))  # now, so a test waiting on `driver.changed` sees it
        return self.answer(method, params)

    async def answer(self, method: str, params: dict) -> dict:
        if method in self.errors:
            code, message = self.errors[method]
            return {"error": {"code": code, "message": message}}
        handler = getattr(self, method.replace("/", "_"), None)
        if handler is None:
            return {"error": {"code": -32601, "message": f"Method not found: {method}"}}
        try:
            return {"result": await handler(params)}
        except ClientFailure as exc:
            return {"error": {"code": exc.code, "message": exc.message}}

    def _path(self, params: dict) -> Path:
        path = Path(params["path"])
        if not path.is_absolute() or not path.resolve().is_relative_to(self.root.resolve()):
            raise ClientFailure(-32001, f"Access denied: {path}")
        return path

    async def fs_read_text_file(self, params: dict) -> dict:
        path = self._path(params)
        if not path.exists():
            raise ClientFailure(-32002, f"Resource not found: {path}")
        lines = path.read_text().splitlines(keepends=True)
        start = max((params.get("line") or 1) - 1, 0)
        limit = params.get("limit")
        return {"content": "".join(lines[start : None if limit is None else start + limit])}

    async def fs_write_text_file(self, params: dict) -> dict:
        self._path(params).write_text(params["content"])
        return {}

    async def session_request_permission(self, params: dict) -> dict:
        if self.permission in ("cancelled", "cancel_session"):
            if self.permission == "cancel_session":
                self.driver.notify("session/cancel", {"sessionId": params["sessionId"]})
            return {"outcome": {"outcome": "cancelled"}}
        option = next(o for o in params["options"] if o["kind"] == self.permission)
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    async def terminal_create(self, params: dict) -> dict:
        argv = [params["command"], *params["args"]] if params.get("args") else ["/bin/sh", "-c", params["command"]]
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=params.get("cwd"), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = {"proc": proc, "output": asyncio.create_task(proc.stdout.read())}
        return {"terminalId": terminal_id}

    async def _exit_status(self, terminal: dict) -> dict:
        await terminal["output"]
        return {"exitCode": await terminal["proc"].wait(), "signal": None}

    async def terminal_wait_for_exit(self, params: dict) -> dict:
        if self.hold_wait:
            await self.killed.wait()
        return await self._exit_status(self.terminals[params["terminalId"]])

    async def terminal_output(self, params: dict) -> dict:
        terminal = self.terminals[params["terminalId"]]
        output = (await terminal["output"]).decode()
        return {"output": output, "truncated": False, "exitStatus": await self._exit_status(terminal)}

    async def elicitation_create(self, params: dict) -> dict:
        return self.elicitation

    async def terminal_kill(self, params: dict) -> dict:
        self.killed.set()
        return {}

    async def terminal_release(self, params: dict) -> dict:
        terminal = self.terminals.pop(params["terminalId"])
        await self._exit_status(terminal)
        return {}


async def start_with_client(
    workspace: Path, capabilities: dict | None = None, **kwargs: Any
) -> tuple[Driver, FakeClient, str]:
    client = FakeClient(workspace, **kwargs)
    driver = Driver(on_request=client)
    client.driver = driver
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace), capabilities)
    return driver, client, session_id


def calls_of_kind(driver: Driver, kind: str) -> list[dict]:
    return [c for c in driver.updates("tool_call") if c["kind"] == kind]


def updates_of(driver: Driver, call: dict) -> list[dict]:
    return [u for u in driver.updates("tool_call_update") if u["toolCallId"] == call["toolCallId"]]


def final_status(driver: Driver, call: dict) -> str:
    statuses = [u["status"] for u in updates_of(driver, call) if u.get("status")]
    return statuses[-1] if statuses else call["status"]


def answer_text(driver: Driver) -> str:
    return "".join(c["content"]["text"] for c in driver.updates("agent_message_chunk"))


def texts_in(update: dict) -> list[str]:
    return [c["content"]["text"] for c in update.get("content") or [] if c["type"] == "content"]


# -- ACP v1 beyond a turn -----------------------------------------------------------------------
BOOLEAN_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True,
                "session": {"configOptions": {"boolean": {}}}}


def options_by_id(options: list[dict]) -> dict[str, dict]:
    return {option["id"]: option for option in options}


async def new_session(driver: Driver, cwd: Path) -> dict:
    response = await driver.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return response["result"]


async def initialize(driver: Driver, capabilities: dict | None = None) -> dict:
    response = await driver.request("initialize", {
        "protocolVersion": 1, "clientCapabilities": capabilities or {},
        "clientInfo": {"name": "test-driver", "version": "0"},
    })
    return response["result"]
