"""A generic fake ACP agent for tests, run as a real subprocess (standard library only).

    python tests/agents/scripted_agent.py SCRIPT.json      # or the script as JSON in env RAT_FAKE_SCRIPT

Every line received on stdin is appended, raw, to the file named by env RAT_FAKE_RECORD (flushed at once);
the requests it sends go to that name + ".sent", so answers can be checked against their method.
With env RAT_FAKE_WRITTEN set, every line it writes to stdout is also appended there (flushed at once) just
before it is written: what a crash test compares the client's journal against (a prefix of it). Appended
after the write, a line the client had read and journaled could be missing there when the test looked, the
agent held off the CPU between the two writes (it runs below rat's priority).

Script (every key optional):

    {
      "initialize_result": {...},    # merged over the default initialize result (a null value drops a key)
      "session_id": "sess-1",
      "new_session_result": {...},   # merged over {"sessionId": ...}
      "responses": {"method": {"result": ...} | {"error": {...}}},   # fixed answers for other requests
      "before_initialize": [steps],  # played before the initialize response
      "on_new_session": [steps],     # played before the session/new response
      "turns": [[steps], ...]        # the n-th session/prompt plays turns[n]; past the end: just end_turn
      "on_request": {"method": [[steps], ...]}   # the n-th call of method plays the n-th list (past the
                                     # end: the last); then the default answer unless a step answered:
                                     # initialize/session/new as above, session/list {"sessions": []},
                                     # other methods {} (session/load and session/resume adopt the
                                     # requested session id first, so "$SESSION" is that id);
                                     # session/load, resume, list, close, delete, authenticate and
                                     # logout are answered so even when not listed here, if advertised
    }

    python tests/agents/scripted_agent.py SCRIPT.json --write-marker PATH   # terminal-auth stand-in:
                                     # write "logged in $RAT_FAKE_AUTH_ENV" to PATH, print a line, exit 0

Steps (in a string anywhere inside, "$SESSION" becomes the session id and "$PROMPT_ID" the id of the
request being handled; a string that is exactly "$PROMPT_ID" becomes the id itself, number or string):

    {"send": {...}}                  write this JSON message as it is
    {"raw": "text"}                  write this line as it is (garbage, malformed JSON, ...)
    {"raw_hex": "7b22...ff"}         write these bytes as one line (not UTF-8, a UTF-8-encoded surrogate, ...)
    {"stderr": "text", "repeat": N}  write text (+ newline) to stderr N times (default 1)
    {"sleep": seconds}
    {"update": {...}}                a session/update notification for the session
    {"chunk": "text", "repeat": N}   N agent_message_chunk updates (optional "message_id")
    {"big_chunk": N}                 one agent_message_chunk of N bytes of text, in one line
    {"exit": code}                   exit the process at once
    {"wait_cancel": true}            block until session/cancel arrives (returns at once if it already has)
    {"wait_child_cancel": "ID"}      block until session/cancel for the subagent session ID arrives
    {"respond": {...}}               answer the request being handled with this result (later steps still play)
    {"wait_file": "path"}            block until this file exists (a test releases a turn by creating it)
    {"request": {"method": ..., "params": ..., "id"?: ...}}   send a request to the client, wait for its answer
    {"request": {...}, "wait": false}                        send it and go on at once (the answer is only recorded)
    {"request": {...}, "on_error": [steps], "on_result": [steps]}   then play one list, by how it was answered
    {"request": {...}, "save": "NAME"}   keep the result: "${NAME.field}" in a later step's string is its field
    {"error": {"code": ..., "message": ...}}   answer the request being handled with this error;
                                     a failed session/load or resume adopts no id
    {"replay": N}                    N history updates: user and agent message chunks, alternating
    {"hang": true}                   never answer this request (until $/cancel_request, answered -32800)
    {"when_missing": PATH, "steps": [...]}    play the steps only while no file exists at PATH

MCP steps, for rat-tui's own MCP server (every MCP message received is appended to RAT_FAKE_RECORD + ".mcp"
as {"via": "stdio"|"acp", "conn": NAME, "message": {...}}; with "acp" the message is the inner MCP response
rebuilt from the mcp/message answer):

    {"mcp_stdio": {"server": "rat-tui", "conn": NAME, "messages": [...], "keep": false}}
        spawn the stdio server named in session/new's mcpServers (command, args, env over ours) the way
        agents launch stdio MCP servers, or reuse the open connection NAME; write each MCP message as a
        line and, for requests, wait for the response with its id; unless "keep", close its stdin and
        wait for it to exit
    {"mcp_acp": {"server": "rat-tui", "conn": NAME, "messages": [...], "server_id": ID?}}
        the same over request-scoped MCP-over-ACP: each MCP request as an `mcp/message` request
        {serverId (from session/new, or "server_id"), requestId "NAME-ID", method, params}, its answer
        ({"result"} or {"error"}) logged as the inner response; MCP notifications are not sent (the
        consumer sends none in this shape); the client's `mcp/message` notifications are logged by requestId
    {"mcp_close": NAME}              close an open stdio or acp connection

A turn not answered by a "respond" step ends with {"stopReason": "end_turn"}, or "cancelled" if
session/cancel for the session arrived during it (one for a subagent's sessionId is only recorded).
Unknown requests get -32601; unknown notifications are ignored.

ACP v2 ("protocol": 2 in the script): an `initialize` asking for version 2 is answered in v2
(DEFAULT_INITIALIZE_V2, merged with "initialize_result_v2"); one asking for 1 gets the v1 answer. Then a
prompt goes the v2 way: the prompt is echoed (`user_message` with messageId "msg-user-N"), answered
{"messageId"} at once, `state_update running`, the turn's steps, and `state_update idle` with
"end_turn" or "cancelled" (unless a step sent an idle itself: {"state": "idle", ...}). session/list,
resume and close are baseline, delete when advertised, auth/login and auth/logout when authMethods are
listed; a session/resume with replayFrom plays its steps (the replay) then a `state_update idle`
before the answer. One more step:

    {"state": "running" | "requires_action" | "idle", ...}   a state_update (other keys as given)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable

DEFAULT_INITIALIZE = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": False,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
    },
    "agentInfo": {"name": "scripted-agent", "title": "Scripted fake agent", "version": "0.0.1"},
    "authMethods": [],
}


DEFAULT_INITIALIZE_V2 = {
    "protocolVersion": 2,
    "info": {"name": "scripted-agent-v2", "title": "Scripted fake agent (v2)", "version": "0.0.2"},
    "capabilities": {"session": {"prompt": {"embeddedContext": {}}, "mcp": {"stdio": {}, "http": {}}}},
}

# Answered by default (as in "on_request" with no steps) when the initialize result advertises them
# (authenticate: when it lists authMethods), unless "responses" has them.
LIFECYCLE_METHODS = {"session/load", "session/resume", "session/list", "session/close", "session/delete",
                     "authenticate", "logout", "auth/login", "auth/logout"}


def log(text: str) -> None:
    print(f"fake-agent: {text}", file=sys.stderr, flush=True)


def merged(base: dict, override: dict | None) -> dict:
    out = dict(base)
    for key, value in (override or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


class Wire:
    """Newline-delimited JSON-RPC on stdin/stdout: a reader thread, blocking writes, recording."""

    def __init__(self) -> None:
        record = os.environ.get("RAT_FAKE_RECORD")
        self.record = open(record, "ab") if record else None
        # Requests this agent sends, so a test can check the client's answers against their method.
        self.sent = open(record + ".sent", "a", encoding="utf-8") if record else None
        self.next_id = 0
        self.pending: dict[Any, asyncio.Future] = {}
        written = os.environ.get("RAT_FAKE_WRITTEN")
        self.written = open(written, "a", encoding="utf-8") if written else None

    def start(self, on_message: Callable[[dict], None]) -> asyncio.Future:
        """Read stdin in a thread, calling `on_message` in the loop; the future resolves at EOF."""
        loop = asyncio.get_running_loop()
        eof = loop.create_future()

        def deliver(raw: bytes) -> None:
            try:
                msg = json.loads(raw)
            except ValueError:
                log(f"ignoring malformed line: {raw[:200]!r}")
                return
            if not isinstance(msg, dict):
                return
            if "method" not in msg and msg.get("id") in self.pending:
                future = self.pending.pop(msg["id"])
                if not future.done():
                    future.set_result(msg)
                return
            on_message(msg)

        def reader() -> None:
            for raw in sys.stdin.buffer:
                if self.record:
                    self.record.write(raw if raw.endswith(b"\n") else raw + b"\n")
                    self.record.flush()
                if raw.strip():
                    loop.call_soon_threadsafe(deliver, raw)
            loop.call_soon_threadsafe(lambda: eof.done() or eof.set_result(None))

        threading.Thread(target=reader, daemon=True).start()
        return eof

    def write_line(self, text: str) -> None:
        data = text if text.endswith("\n") else text + "\n"
        if self.written is not None:
            self.written.write(data)
            self.written.flush()
        sys.stdout.buffer.write(data.encode("utf-8"))
        sys.stdout.buffer.flush()

    def write_bytes(self, data: bytes) -> None:
        data = data if data.endswith(b"\n") else data + b"\n"
        if self.written is not None:
            self.written.flush()
            self.written.buffer.write(data)
            self.written.buffer.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()

    def write(self, msg: Any) -> None:
        line = json.dumps(msg, separators=(",", ":"), ensure_ascii=False)
        if self.sent is not None and isinstance(msg, dict) and "method" in msg and "id" in msg:
            self.sent.write(line + "\n")
            self.sent.flush()
        self.write_line(line)

    def respond(self, id: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": id, "result": result})

    def error(self, id: Any, code: int, message: str) -> None:
        self.write({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})

    async def request(self, method: str, params: Any, id: Any = None) -> dict:
        """Send a request to the client; return its whole response message."""
        if id is None:
            id, self.next_id = self.next_id, self.next_id + 1
        future = asyncio.get_running_loop().create_future()
        self.pending[id] = future
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.write(msg)
        return await future


def recall(value: Any, saved: dict[str, Any]) -> Any:
    """`${NAME.field}` in a string: that field of the result a request step kept with "save": NAME."""
    if isinstance(value, str) and "${" in value:
        for name, result in saved.items():
            for key, field in (result.items() if isinstance(result, dict) else ()):
                value = value.replace("${%s.%s}" % (name, key), str(field))
        return value
    if isinstance(value, list):
        return [recall(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: recall(v, saved) for k, v in value.items()}
    return value


def substitute(value: Any, session: str, request_id: Any) -> Any:
    if isinstance(value, str):
        if value == "$PROMPT_ID":
            return request_id
        return value.replace("$SESSION", session).replace("$PROMPT_ID", str(request_id))
    if isinstance(value, list):
        return [substitute(v, session, request_id) for v in value]
    if isinstance(value, dict):
        return {substitute(k, session, request_id): substitute(v, session, request_id) for k, v in value.items()}
    return value


class Handling:
    """One request being answered by a list of steps."""

    def __init__(self, id: Any) -> None:
        self.id = id
        self.responded = False
        self.failed = False
        self.cancelled = asyncio.Event()
        self.idle_sent = False


class ScriptedAgent:
    def __init__(self, script: dict) -> None:
        self.script = script
        self.session_id = script.get("session_id", "sess-1")
        self.turns = list(script.get("turns", []))
        self.child_cancels: dict[str, asyncio.Event] = {}
        self.saved: dict[str, Any] = {}  # request results kept by "save", read back as ${NAME.field}
        self.wire = Wire()
        self.prompt = None  # the Handling of the running prompt
        self.calls: dict[str, int] = {}
        self.handling: dict[Any, Handling] = {}
        self.tasks: set[asyncio.Task] = set()
        self.mcp_servers: list[dict] = []  # from session/new
        self.mcp_open: dict[str, Any] = {}  # conn name -> subprocess (stdio) or connectionId (acp)
        record = os.environ.get("RAT_FAKE_RECORD")
        self.mcp_record = open(record + ".mcp", "a", encoding="utf-8") if record else None
        self.v2 = False  # the client asked for v2 and the script speaks it
        self.prompts = 0

    async def run(self) -> None:
        await self.wire.start(self.on_message)

    def on_message(self, msg: dict) -> None:
        method = msg.get("method")
        if isinstance(method, str) and "id" in msg:
            task = asyncio.create_task(self.on_request(msg["id"], method, msg.get("params")))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif method == "session/cancel" and self.prompt is not None:
            cancelled = (msg.get("params") or {}).get("sessionId")
            if cancelled in (None, self.session_id):  # a subagent's cancel (another sessionId) is not the turn's
                self.prompt.cancelled.set()
            else:
                self.child_cancel(str(cancelled)).set()
        elif method == "$/cancel_request":
            handling = self.handling.get((msg.get("params") or {}).get("requestId"))
            if handling is not None and not handling.responded:
                handling.responded = True
                handling.cancelled.set()
                self.wire.error(handling.id, -32800, "Request cancelled")
        elif method == "mcp/message":  # an MCP message from the client's own server (MCP-over-ACP)
            params = msg.get("params") or {}
            inner = {"jsonrpc": "2.0", "method": params.get("method")}
            if params.get("params") is not None:
                inner["params"] = params["params"]
            conn = str(params.get("requestId", "?")).rsplit("-", 1)[0]
            self.mcp_log("acp", conn, inner)

    async def on_request(self, id: Any, method: str, params: Any) -> None:
        if method == "initialize" and self.script.get("protocol") == 2:
            self.v2 = isinstance(params, dict) and params.get("protocolVersion") == 2
        handling = Handling(id)
        on_request = self.script.get("on_request", {})
        lifecycle = self.advertises(method) and method not in self.script.get("responses", {})
        if method in on_request or lifecycle:
            self.handling[id] = handling
            try:
                await self.scripted_request(method, params, handling, on_request.get(method, []))
            finally:
                self.handling.pop(id, None)
            return
        if method == "initialize":
            await self.play(self.script.get("before_initialize", []), handling)
            result = self.initialize_result()
        elif method == "session/new":
            self.mcp_servers = [s for s in (params or {}).get("mcpServers") or [] if isinstance(s, dict)]
            await self.play(self.script.get("on_new_session", []), handling)
            result = merged({"sessionId": self.session_id}, self.script.get("new_session_result"))
        elif method == "session/prompt" and self.v2:
            await self.prompt_v2(params, handling, self.turns.pop(0) if self.turns else [])
            return
        elif method == "session/prompt":
            steps = self.turns.pop(0) if self.turns else []
            self.prompt = handling
            try:
                await self.play(steps, handling)
            finally:
                self.prompt = None
            result = {"stopReason": "cancelled" if handling.cancelled.is_set() else "end_turn"}
        elif method in self.script.get("responses", {}):
            answer = substitute(self.script["responses"][method], self.session_id, id)
            if "error" in answer:
                self.wire.write({"jsonrpc": "2.0", "id": id, "error": answer["error"]})
            else:
                self.wire.respond(id, answer.get("result"))
            return
        else:
            self.wire.error(id, -32601, "Method not found")
            return
        if not handling.responded:
            self.wire.respond(id, result)

    def initialize_result(self) -> dict:
        if self.v2:
            return merged(DEFAULT_INITIALIZE_V2, self.script.get("initialize_result_v2"))
        return merged(DEFAULT_INITIALIZE, self.script.get("initialize_result"))

    async def prompt_v2(self, params: Any, handling: Handling, steps: list) -> None:
        """A v2 turn: echo, answer {messageId} at once, running, the steps, idle."""
        self.prompts += 1
        message_id = f"msg-user-{self.prompts}"
        prompt = (params or {}).get("prompt") or []
        self.update({"sessionUpdate": "user_message", "messageId": message_id, "content": prompt})
        if not handling.responded:
            self.wire.respond(handling.id, {"messageId": message_id})
            handling.responded = True
        self.update({"sessionUpdate": "state_update", "state": "running"})
        self.prompt = handling
        try:
            await self.play(steps, handling)
        finally:
            self.prompt = None
        if not handling.idle_sent:
            stop = "cancelled" if handling.cancelled.is_set() else "end_turn"
            self.update({"sessionUpdate": "state_update", "state": "idle", "stopReason": stop})

    def advertises(self, method: str) -> bool:
        """Whether the initialize result advertises this lifecycle method (then it is answered by default)."""
        if self.v2:
            result = self.initialize_result()
            if method in ("session/list", "session/resume", "session/close"):
                return True
            if method in ("auth/login", "auth/logout"):
                return bool(result.get("authMethods"))
            if method == "session/delete":
                return isinstance(((result.get("capabilities") or {}).get("session") or {}).get("delete"), dict)
            return False
        result = merged(DEFAULT_INITIALIZE, self.script.get("initialize_result"))
        caps = result.get("agentCapabilities") or {}
        if method == "session/load":
            return caps.get("loadSession") is True
        if method == "logout":
            return isinstance((caps.get("auth") or {}).get("logout"), dict)
        if method == "authenticate":
            return bool(result.get("authMethods"))
        name = method.removeprefix("session/")
        return method in LIFECYCLE_METHODS and isinstance((caps.get("sessionCapabilities") or {}).get(name), dict)

    async def scripted_request(self, method: str, params: Any, handling: Handling, plays: list) -> None:
        count = self.calls.get(method, 0)
        self.calls[method] = count + 1
        previous = self.session_id
        if method in ("session/load", "session/resume") and isinstance(params, dict):
            self.session_id = str(params.get("sessionId", self.session_id))
        steps = plays[min(count, len(plays) - 1)] if plays else []
        if method == "session/prompt":
            self.prompt = handling
        try:
            await self.play(steps, handling)
        finally:
            if method == "session/prompt":
                self.prompt = None
        if handling.responded:
            if handling.failed:
                self.session_id = previous  # a failed load or resume adopts nothing
            return
        if method == "session/resume" and self.v2 and isinstance(params, dict) and "replayFrom" in params:
            self.update({"sessionUpdate": "state_update", "state": "idle"})  # current state, before the answer
        if method == "initialize":
            result = self.initialize_result()
        elif method == "session/new":
            result = merged({"sessionId": self.session_id}, self.script.get("new_session_result"))
        elif method == "session/prompt":
            result = {"stopReason": "cancelled" if handling.cancelled.is_set() else "end_turn"}
        elif method == "session/list":
            result = {"sessions": []}
        else:
            result = {}
        self.wire.respond(handling.id, result)

    def child_cancel(self, session_id: str) -> asyncio.Event:
        return self.child_cancels.setdefault(session_id, asyncio.Event())

    async def play(self, steps: list[dict], handling: Handling) -> None:
        for step in steps:
            await self.step(recall(substitute(step, self.session_id, handling.id), self.saved), handling)

    def update(self, update: dict) -> None:
        self.wire.write(
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": self.session_id, "update": update}}
        )

    def chunk(self, text: str, message_id: str | None = None) -> None:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        if message_id is not None:
            update["messageId"] = message_id
        self.update(update)

    async def step(self, step: dict, handling: Handling) -> None:
        repeat = int(step.get("repeat", 1))
        if "send" in step:
            self.wire.write(step["send"])
        elif "raw" in step:
            self.wire.write_line(step["raw"])
        elif "raw_hex" in step:
            self.wire.write_bytes(bytes.fromhex(step["raw_hex"]))
        elif "stderr" in step:
            text = step["stderr"] if step["stderr"].endswith("\n") else step["stderr"] + "\n"
            for _ in range(repeat):
                sys.stderr.write(text)
            sys.stderr.flush()
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))
        elif "update" in step:
            self.update(step["update"])
        elif "state" in step:
            self.update({"sessionUpdate": "state_update", **step})
            if step["state"] == "idle":
                handling.idle_sent = True
        elif "chunk" in step:
            for _ in range(repeat):
                self.chunk(step["chunk"], step.get("message_id"))
        elif "big_chunk" in step:
            self.chunk("x" * int(step["big_chunk"]), step.get("message_id"))
        elif "exit" in step:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(step["exit"]))
        elif "wait_cancel" in step:
            await handling.cancelled.wait()
        elif "wait_child_cancel" in step:
            await self.child_cancel(step["wait_child_cancel"]).wait()
        elif "respond" in step:
            self.wire.respond(handling.id, step["respond"])
            handling.responded = True
        elif "wait_file" in step:
            while not os.path.exists(step["wait_file"]):
                await asyncio.sleep(0.02)
        elif "request" in step:
            req = step["request"]
            if step.get("wait", True):
                answer = await self.wire.request(req["method"], req.get("params"), req.get("id"))
                if "save" in step:
                    self.saved[step["save"]] = answer.get("result")
                branch = step.get("on_error") if "error" in answer else step.get("on_result")
                if branch:
                    await self.play(branch, handling)
            else:
                id = req.get("id", f"nowait-{self.wire.next_id}")
                self.wire.next_id += 1
                msg = {"jsonrpc": "2.0", "id": id, "method": req["method"], "params": req.get("params")}
                self.wire.write({k: v for k, v in msg.items() if v is not None})
        elif "error" in step:
            error = step["error"]
            self.wire.write({"jsonrpc": "2.0", "id": handling.id, "error": error})
            handling.responded = handling.failed = True
        elif "replay" in step:
            for i in range(int(step["replay"])):
                kind = "user_message_chunk" if i % 2 == 0 else "agent_message_chunk"
                text = f"question {i // 2}" if i % 2 == 0 else f"answer {i // 2}"
                self.update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
        elif "hang" in step:
            await handling.cancelled.wait()
        elif "when_missing" in step:
            if not Path(step["when_missing"]).exists():
                await self.play(step.get("steps", []), handling)
        elif "mcp_stdio" in step:
            await self.mcp_stdio(step["mcp_stdio"])
        elif "mcp_acp" in step:
            await self.mcp_acp(step["mcp_acp"])
        elif "mcp_close" in step:
            await self.mcp_close(step["mcp_close"])
        else:
            log(f"unknown step {step!r}")

    # -- MCP client side, as a real agent does it ---------------------------------------------------

    def mcp_server(self, name: str) -> dict:
        for server in self.mcp_servers:
            if server.get("name") == name:
                return server
        raise RuntimeError(f"no MCP server {name!r} in session/new")

    def mcp_log(self, via: str, conn: str, message: Any) -> None:
        if self.mcp_record is not None:
            self.mcp_record.write(json.dumps({"via": via, "conn": conn, "message": message}) + "\n")
            self.mcp_record.flush()

    async def mcp_stdio(self, spec: dict) -> None:
        conn = spec.get("conn", "stdio")
        process = self.mcp_open.get(conn)
        if process is None:
            server = self.mcp_server(spec.get("server", "rat-tui"))
            env = dict(os.environ)
            env.update({item["name"]: item["value"] for item in server.get("env", [])})
            process = await asyncio.create_subprocess_exec(
                server["command"], *server.get("args", []), env=env,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24)
            self.mcp_open[conn] = process
        for message in spec.get("messages", []):
            process.stdin.write(json.dumps(message).encode() + b"\n")
            await process.stdin.drain()
            while "id" in message:
                line = await process.stdout.readline()
                if not line:
                    raise RuntimeError("the MCP server closed its output")
                reply = json.loads(line)
                self.mcp_log("stdio", conn, reply)
                if reply.get("id") == message["id"] and "method" not in reply:
                    break
        if not spec.get("keep"):
            await self.mcp_close(conn)

    async def mcp_acp(self, spec: dict) -> None:
        conn = spec.get("conn", "acp")
        server_id = spec.get("server_id") or self.mcp_server(spec.get("server", "rat-tui"))["serverId"]
        for message in spec.get("messages", []):
            if "id" not in message:
                continue  # request-scoped: a consumer sends no MCP notifications
            params = {"serverId": server_id, "requestId": f"{conn}-{message['id']}", "method": message["method"]}
            if message.get("params") is not None:
                params["params"] = message["params"]
            reply = await self.wire.request("mcp/message", params)
            inner = {"jsonrpc": "2.0", "id": message["id"]}
            if "error" in reply:  # an outer ACP error: a binding failure
                inner["error"] = reply["error"]
            else:
                outcome = reply.get("result") or {}
                inner.update({"error": outcome["error"]} if "error" in outcome else {"result": outcome.get("result")})
            self.mcp_log("acp", conn, inner)

    async def mcp_close(self, conn: str) -> None:
        opened = self.mcp_open.pop(conn, None)
        if opened is not None:
            opened.stdin.close()
            code = await opened.wait()
            self.mcp_log("stdio", conn, {"exit": code})


def load_script(argv: list[str]) -> dict:
    if len(argv) > 1 and not argv[1].startswith("--"):
        return json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    return json.loads(os.environ.get("RAT_FAKE_SCRIPT") or "{}")


def main() -> None:
    if "--write-marker" in sys.argv:  # what a terminal auth method's args run instead of the agent
        marker = Path(sys.argv[sys.argv.index("--write-marker") + 1])
        marker.write_text("logged in " + os.environ.get("RAT_FAKE_AUTH_ENV", "") + "\n")
        print("fake login done", flush=True)
        return
    script = load_script(sys.argv)
    try:
        asyncio.run(ScriptedAgent(script).run())
    except (KeyboardInterrupt, BrokenPipeError):
        pass


if __name__ == "__main__":
    main()
