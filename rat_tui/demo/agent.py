"""rat-demo: a small scripted ACP agent speaking newline-delimited JSON-RPC 2.0 on stdin/stdout.

Run it with ``python -m rat_tui.demo``. Standard library only, so it starts fast.

Each ``session/prompt`` plays a fixed script of steps (think, plan, read a file, answer in
markdown); add a step by writing an ``async def step_...(self, turn)`` and listing it in
``Turn.STEPS``. ``session/cancel`` cancels the running script, which then answers ``cancelled``.

Scenario keywords: whole words in the prompt (any case; several combine, played in this order)
replace the file read with a coding-agent workflow (``scenarios.py``):

- ``edit``: read ``demo-notes.txt`` through ``fs/read_text_file`` (creating it first if missing),
  show an edit tool call with a diff (one line changed, one added), ask
  ``session/request_permission`` (Claude's option ids allow_always/allow/reject), then
  ``fs/write_text_file`` if allowed; a rejection fails the tool call, a ``cancelled`` outcome
  ends the turn as cancelled.
- ``write``: the same for a new file ``demo-new-file.md`` (a diff with ``oldText`` null).
- ``read``: ``fs/read_text_file`` of a workspace file with ``line`` 1 and ``limit`` 5.
- ``run`` (or ``terminal``): ask permission (Gemini's ids proceed_always/proceed_once/cancel),
  then ``terminal/create`` of ``echo demo-terminal-ok && ls`` (a shell line, no args),
  ``terminal/wait_for_exit``, ``terminal/output``, ``terminal/release``.
- ``fail``: a ``fetch`` tool call that fails; the turn still ends with ``end_turn``.
- ``bigdiff``: an edit tool call showing a diff of a 20,000-line file (nothing is written).
- ``all``: edit, write, read, run and fail.

fs and terminal methods are used only if the client advertised them at ``initialize``; else the
answer says the scenario was skipped. An error answer from the client fails the tool call in
flight with its message, and the turn goes on.

Env: ``RAT_DEMO_DELAY`` seconds between streamed chunks (default 0.015; tests set 0).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import mcp_client
from .scenarios import ClientError, Scenarios, TurnCancelled, help_markdown, pick_file, scenarios_in
from .scenarios import TITLES as SCENARIO_TITLES

VERSION = "0.1.0"
PROTOCOL_VERSION = 1
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

COMMANDS = [
    {"name": "explain", "description": "Explain the selected code", "input": {"hint": "<what to explain>"}},
    {"name": "plan", "description": "Write a step-by-step plan before answering", "input": None},
    {"name": "clear", "description": "Forget the conversation so far", "input": None},
]

PLAN = ["Understand the request", "Read a file from the workspace", "Write the answer"]


def log(text: str) -> None:
    print(f"rat-demo: {text}", file=sys.stderr, flush=True)


def chunk_text(text: str, words: int = 3) -> list[str]:
    """Split `text` into chunks of a few words; joining the chunks gives back `text` exactly."""
    tokens = re.findall(r"\s+|\S+\s*", text)
    return ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]


def prompt_text(blocks: Any) -> str:
    """The user's prompt as plain text (text blocks as they are, resources by name)."""
    parts = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "resource_link":
            parts.append(f"@{block.get('name') or block.get('uri', '')}")
        elif kind == "resource":
            parts.append(f"@{(block.get('resource') or {}).get('uri', '')}")
    return " ".join(p.strip() for p in parts if p.strip())


@dataclass
class Session:
    id: str
    cwd: Path


@dataclass
class Turn:
    """One prompt turn: the session, the prompt, and the script's progress."""

    STEPS = ("step_think", "step_read_file", "step_answer")
    SCENARIO_STEPS = ("step_think", "step_scenarios", "step_answer")

    session: Session
    text: str
    scenarios: list[str] = field(default_factory=list)  # asked for by keywords in the prompt
    results: list[str] = field(default_factory=list)  # one summary line per scenario played
    titles: list[str] = field(default_factory=list)  # the plan's entries
    plan: list[str] = field(default_factory=list)  # their statuses
    task: asyncio.Task | None = None
    cancelled: bool = False

    def __post_init__(self) -> None:
        self.scenarios = self.scenarios or scenarios_in(self.text)
        if self.scenarios:
            self.titles = [PLAN[0], *(SCENARIO_TITLES[name] for name in self.scenarios), PLAN[-1]]
        else:
            self.titles = list(PLAN)
        self.plan = ["pending"] * len(self.titles)

    @property
    def steps(self) -> tuple[str, ...]:
        return self.SCENARIO_STEPS if self.scenarios else self.STEPS


class DemoAgent:
    def __init__(self, delay: float = 0.015) -> None:
        self.delay = delay
        self.sessions: dict[str, Session] = {}
        self.turns: dict[str, Turn] = {}  # running turn per session id
        self.pending: dict[Any, asyncio.Future] = {}  # our requests to the client, by id
        self.abandoned: set[Any] = set()  # ids of requests whose turn was cancelled: answers come late
        self.next_id = 0
        self.client_capabilities: dict = {}
        self.tasks: set[asyncio.Task] = set()

    # ----------------------------------------------------------------- wire
    def write(self, msg: dict) -> None:
        line = json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n"
        sys.stdout.buffer.write(line.encode("utf-8"))
        sys.stdout.buffer.flush()

    def respond(self, id: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": id, "result": result})

    def error(self, id: Any, code: int, message: str, data: Any = None) -> None:
        err: dict = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.write({"jsonrpc": "2.0", "id": id, "error": err})

    def notify(self, method: str, params: dict) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def update(self, session: Session, update: dict) -> None:
        self.notify("session/update", {"sessionId": session.id, "update": update})

    async def request(self, method: str, params: dict) -> Any:
        """Send a request to the client and wait for its result (raises ClientError on an error answer).

        Cancelling the waiting task (session/cancel) cancels only the wait; the answer, when it
        comes, is dropped quietly.
        """
        id, self.next_id = self.next_id, self.next_id + 1
        future = asyncio.get_running_loop().create_future()
        self.pending[id] = future
        self.write({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        try:
            reply = await future
        except asyncio.CancelledError:
            self.abandoned.add(id)
            raise
        finally:
            self.pending.pop(id, None)
        if "error" in reply:
            raise ClientError(method, reply["error"])
        return reply.get("result")

    def client_can(self, capability: str) -> bool:
        """Whether the client advertised `capability` ("terminal", "fs.readTextFile", ...) as true."""
        value: Any = self.client_capabilities
        for key in capability.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return value is True

    def spawn(self, coro: Any) -> None:
        """Run `coro` in the background (kept referenced until done)."""
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def pause(self) -> None:
        await asyncio.sleep(self.delay)

    # ------------------------------------------------------------- dispatch
    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()

        def read_stdin() -> None:  # a thread: works for pipes, files and ttys alike
            for raw in sys.stdin.buffer:
                loop.call_soon_threadsafe(lines.put_nowait, raw)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read_stdin, daemon=True).start()
        while (raw := await lines.get()) is not None:
            self.handle_line(raw)
        for turn in self.turns.values():
            if turn.task:
                turn.task.cancel()

    def handle_line(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            msg = json.loads(raw)
        except ValueError as exc:
            log(f"ignoring malformed line ({exc}): {raw[:200]!r}")
            return
        if not isinstance(msg, dict):
            log(f"ignoring non-object message: {raw[:200]!r}")
            return
        method, id = msg.get("method"), msg.get("id")
        if isinstance(method, str) and "id" in msg:
            task = asyncio.create_task(self.handle_request(id, method, msg.get("params") or {}))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif isinstance(method, str):
            self.handle_notification(method, msg.get("params") or {})
        elif id in self.pending and ("result" in msg or "error" in msg):
            if not self.pending[id].done():
                self.pending[id].set_result(msg)
        elif id in self.abandoned and ("result" in msg or "error" in msg):
            self.abandoned.discard(id)
        else:
            log(f"ignoring unexpected message: {raw[:200]!r}")

    async def handle_request(self, id: Any, method: str, params: dict) -> None:
        handler = {
            "initialize": self.on_initialize,
            "session/new": self.on_new_session,
            "session/prompt": self.on_prompt,
        }.get(method)
        if handler is None:
            self.error(id, METHOD_NOT_FOUND, "Method not found", {"method": method})
            return
        try:
            await handler(id, params)
        except Exception as exc:  # a bug in a step must not kill the agent
            log(f"{method} failed: {exc!r}")
            self.error(id, INTERNAL_ERROR, "Internal error", {"details": str(exc)})

    def handle_notification(self, method: str, params: dict) -> None:
        if method == "session/cancel":
            turn = self.turns.get(params.get("sessionId"))
            if turn and turn.task and not turn.cancelled:
                turn.cancelled = True
                turn.task.cancel()

    # ------------------------------------------------------------- handlers
    async def on_initialize(self, id: Any, params: dict) -> None:
        capabilities = params.get("clientCapabilities")
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.respond(
            id,
            {
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": {
                    "loadSession": False,
                    "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                    "mcpCapabilities": mcp_client.capabilities(),
                },
                "agentInfo": {"name": "rat-demo", "title": "Demo agent", "version": VERSION},
                "authMethods": [],
            },
        )

    async def on_new_session(self, id: Any, params: dict) -> None:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "cwd must be an absolute path"})
            return
        session = Session(str(uuid.uuid4()), Path(cwd))
        self.sessions[session.id] = session
        mcp_client.remember(session.id, params)
        self.respond(id, {"sessionId": session.id})
        self.update(session, {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS})

    async def on_prompt(self, id: Any, params: dict) -> None:
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "unknown sessionId"})
            return
        if session.id in self.turns:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "a prompt is already running"})
            return
        turn = Turn(session, prompt_text(params.get("prompt")))
        self.turns[session.id] = turn
        turn.task = asyncio.create_task(self.play(turn))
        try:
            await turn.task
            stop = "end_turn"
        except asyncio.CancelledError:
            if not turn.cancelled:
                raise
            stop = "cancelled"
        except TurnCancelled:  # a permission request answered `cancelled`
            stop = "cancelled"
        finally:
            del self.turns[session.id]
        self.respond(id, {"stopReason": stop})

    # ---------------------------------------------------------- the script
    async def play(self, turn: Turn) -> None:
        if mcp_client.wanted(turn.text):  # rat-tui's own MCP tools first (mcp_client.py)
            await mcp_client.play(self, turn)
        for name in turn.steps:
            await getattr(self, name)(turn)

    def send_plan(self, turn: Turn, index: int, status: str) -> None:
        """Set one entry's status and send the whole plan (a plan update replaces the last one)."""
        turn.plan[index] = status
        entries = [
            {"content": text, "priority": "high" if i == 0 else "medium", "status": state}
            for i, (text, state) in enumerate(zip(turn.titles, turn.plan))
        ]
        self.update(turn.session, {"sessionUpdate": "plan", "entries": entries})

    async def stream(self, turn: Turn, kind: str, text: str) -> None:
        """Stream `text` as `kind` chunks of a few words, all with one new messageId."""
        message_id = str(uuid.uuid4())
        for piece in chunk_text(text):
            content = {"type": "text", "text": piece}
            self.update(turn.session, {"sessionUpdate": kind, "content": content, "messageId": message_id})
            await self.pause()

    async def step_think(self, turn: Turn) -> None:
        self.send_plan(turn, 0, "in_progress")
        about = turn.text[:80] or "an empty prompt"
        thought = (
            f"The user asked about “{about}”. I should look at the workspace first, "
            "then answer with a short, well-formatted markdown reply."
        )
        if turn.scenarios:
            thought = (
                f"The user asked for the demo scenarios {', '.join(turn.scenarios)}. I will play them "
                "in order, asking permission before I change anything, then sum up."
            )
        await self.stream(turn, "agent_thought_chunk", thought)
        self.send_plan(turn, 0, "completed")

    async def step_read_file(self, turn: Turn) -> None:
        self.send_plan(turn, 1, "in_progress")
        path = pick_file(turn.session.cwd)
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        title = f"Read {path.name}" if path else "Read the workspace"
        target = str(path or turn.session.cwd)
        self.update(
            turn.session,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": title,
                "kind": "read",
                "status": "pending",
                "locations": [{"path": target}],
                "rawInput": {"path": target},
            },
        )
        await self.pause()
        self.update(turn.session, {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"})
        await self.pause()
        text, status = read_excerpt(path)
        self.update(
            turn.session,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": status,
                "content": [{"type": "content", "content": {"type": "text", "text": text}}],
                "locations": [{"path": target, "line": 1}] if path else [{"path": target}],
            },
        )
        self.send_plan(turn, 1, "completed")

    async def step_scenarios(self, turn: Turn) -> None:
        scenarios = Scenarios(self, turn.session)
        for index, name in enumerate(turn.scenarios, start=1):
            self.send_plan(turn, index, "in_progress")
            await self.pause()
            turn.results.append(f"**{name}**: {await scenarios.play(name)}")
            self.send_plan(turn, index, "completed")

    async def step_answer(self, turn: Turn) -> None:
        last = len(turn.titles) - 1
        self.send_plan(turn, last, "in_progress")
        if turn.scenarios:
            text = scenario_answer_markdown(turn.text, turn.results)
        else:
            text = answer_markdown(turn.text)
        await self.stream(turn, "agent_message_chunk", text)
        self.send_plan(turn, last, "completed")


def read_excerpt(path: Path | None, limit: int = 2000) -> tuple[str, str]:
    if path is None:
        return "The workspace has no files to read.", "completed"
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            text = f.read(limit)
    except OSError as exc:
        return f"Could not read {path}: {exc.strerror or exc}", "failed"
    return text or "(empty file)", "completed"


def answer_markdown(prompt: str) -> str:
    quoted = prompt.replace("\n", " ").strip() or "(nothing)"
    return (
        "## Demo answer\n\n"
        f"You asked: *{quoted}*. I am **rat-demo**, a scripted agent built into rat-tui, "
        "so this answer is canned — but every part of it travelled over real ACP messages.\n\n"
        "What this turn showed:\n\n"
        "- a streamed *thought*\n"
        "- a **plan** whose entries change status\n"
        "- a `read` tool call with its result\n"
        "- this markdown reply, a few words per chunk\n\n"
        "```python\n"
        "def greet(name: str) -> str:\n"
        '    return f"Hello, {name}!"\n'
        "```\n\n"
        "### Try a scenario\n\n"
        "Put one or more of these words in a prompt to see a coding-agent workflow "
        "(file edits with permission requests, terminals, failures):\n\n"
        f"{help_markdown()}\n"
        "Configure a real agent to get real answers.\n"
    )


def scenario_answer_markdown(prompt: str, results: list[str]) -> str:
    quoted = prompt.replace("\n", " ").strip()
    done = "".join(f"- {line}\n" for line in results)
    return (
        "## Demo scenarios\n\n"
        f"You asked: *{quoted}*. Here is what happened:\n\n"
        f"{done}\n"
        "Every scenario is scripted; the keywords are:\n\n"
        f"{help_markdown()}"
    )


def main() -> None:
    try:
        delay = float(os.environ.get("RAT_DEMO_DELAY", "0.015"))
    except ValueError:
        delay = 0.015
    try:
        asyncio.run(DemoAgent(delay=max(delay, 0.0)).serve())
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:  # the client went away
        pass


if __name__ == "__main__":
    main()
