"""rat-demo: a small scripted ACP agent speaking newline-delimited JSON-RPC 2.0 on stdin/stdout.

Run it with ``python -m rat_tui.demo``. Standard library only, so it starts fast.

Each ``session/prompt`` plays a fixed script of steps (think, plan, read a file, answer in
markdown); add a step by writing an ``async def step_...(self, turn)`` and listing it in
``Turn.STEPS``. ``session/cancel`` cancels the running script, which then answers ``cancelled``.

Scenario keywords: whole words in the prompt (any case; several combine, played in this order)
replace the file read with a coding-agent workflow (``scenarios.py``):

- ``edit``: read ``demo-notes.txt`` through ``fs/read_text_file``, show an edit tool call with a
  diff (one line changed, one added; the whole file, made from a seed, when it is missing), ask
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
- ``form``: ``elicitation/create`` in form mode (text, a choice, an enum, integer, number and
  yes/no fields, two required); the answer reports what came back. Only if the client advertised
  ``elicitation.form``.
- ``notice``: the unstable ``notice`` session update (a warning).
- ``all``: edit, write, read, run and fail.

Besides the scenarios, the demo speaks the rest of ACP v1 a client may meet:

- ``authMethods``: one ``agent`` method, "Demo login", whose ``authenticate`` always succeeds.
  Not required unless env ``RAT_DEMO_REQUIRE_AUTH=1``: then session/new, load, resume and list
  answer -32000 (auth required) until it has.
- config options (``options.py``): a ``mode`` select (Ask / Accept edits: no permission asked for
  file changes / Read only: nothing changed or run), a grouped ``model`` select, and a boolean
  "Think out loud" (only for clients that advertised boolean options), all honoured by
  ``session/set_config_option``.
- after each turn a ``usage_update`` (pretend tokens and cost of the chosen model); after the first
  a ``session_info_update`` with a title made of the first prompt's words.
- ``loadSession`` and ``sessionCapabilities`` list / resume / close, backed by ``store.py``: every
  update of a session is appended to a file under the data dir (or env ``RAT_DEMO_STORE``), so
  ``session/load`` replays a session of this process or of an earlier one. ``archive`` (unstable,
  ACP 1.34): ``session/archive`` closes the session if it is open and hides it from ``session/list``,
  ``session/unarchive`` brings it back, the list takes ``archived: exclude | include | only`` and marks
  each row ``archived``; the flag is kept in the session's meta.

fs and terminal methods are used only if the client advertised them at ``initialize``; else the
answer says the scenario was skipped. An error answer from the client fails the tool call in
flight with its message, and the turn goes on.

Env: ``RAT_DEMO_DELAY`` seconds between streamed chunks (default 0.015; tests set 0);
``RAT_DEMO_REQUIRE_AUTH``; ``RAT_DEMO_STORE`` (the session store's folder).
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

from . import options as demo_options
from . import mcp_client
from .scenarios import ClientError, Scenarios, TurnCancelled, help_markdown, pick_file, scenarios_in
from .scenarios import TITLES as SCENARIO_TITLES
from .store import DemoStore, now_iso

VERSION = "0.1.0"
PROTOCOL_VERSION = 1
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002
# `session/list`'s `archived` filter: which rows each value keeps, by whether the row is archived.
ARCHIVE_FILTERS = {"exclude": lambda archived: not archived, "include": lambda archived: True,
                   "only": lambda archived: archived}
AUTH_METHODS = [{"id": "demo-login", "name": "Demo login",
                 "description": "Pretend to sign in to rat-demo; always succeeds"}]
# Not written to the session store: sent afresh after a load, or live-only (notices).
NOT_RECORDED = {"available_commands_update", "config_option_update", "notice"}
LIST_PAGE = 50

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
    config: dict[str, Any] = field(default_factory=lambda: dict(demo_options.DEFAULTS))
    title: str | None = None
    turns: int = 0  # prompt turns played, in this process and any earlier one (from the store)
    used: int = 0  # pretend tokens in context
    cost: float = 0.0  # pretend dollars, cumulative

    def meta(self) -> dict[str, Any]:
        return {"cwd": str(self.cwd), "title": self.title, "updatedAt": now_iso(), "config": self.config,
                "turns": self.turns, "used": self.used, "cost": self.cost}


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
    chars: int = 0  # characters streamed, for the pretend token count

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
        self.store = DemoStore()
        self.require_auth = os.environ.get("RAT_DEMO_REQUIRE_AUTH") == "1"
        self.authenticated = False

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
        if update.get("sessionUpdate") not in NOT_RECORDED:
            self.store.append(session.id, update)

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

    def client_offers(self, capability: str) -> bool:
        """Whether the client advertised `capability` ("elicitation.form", ...) as an object (`{}` = yes)."""
        value: Any = self.client_capabilities
        for key in capability.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return isinstance(value, dict)

    @property
    def boolean_options_ok(self) -> bool:
        return self.client_offers("session.configOptions.boolean")

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
            "authenticate": self.on_authenticate,
            "session/new": self.on_new_session,
            "session/load": self.on_load_session,
            "session/resume": self.on_resume_session,
            "session/list": self.on_list_sessions,
            "session/close": self.on_close_session,
            "session/archive": self.on_archive_session,
            "session/unarchive": self.on_unarchive_session,
            "session/set_config_option": self.on_set_config_option,
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
            self.cancel_turn(params.get("sessionId"))

    def cancel_turn(self, session_id: Any) -> None:
        turn = self.turns.get(session_id)
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
                    "loadSession": True,
                    "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "archive": {}},
                    "mcpCapabilities": mcp_client.capabilities(),
                },
                "agentInfo": {"name": "rat-demo", "title": "Demo agent", "version": VERSION},
                "authMethods": AUTH_METHODS,
            },
        )

    async def on_authenticate(self, id: Any, params: dict) -> None:
        if params.get("methodId") not in {m["id"] for m in AUTH_METHODS}:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": f"unknown methodId {params.get('methodId')!r}"})
            return
        self.authenticated = True
        self.respond(id, {})

    def needs_auth(self, id: Any) -> bool:
        """With RAT_DEMO_REQUIRE_AUTH=1, sessions need `authenticate` first: answers -32000 and returns True."""
        if self.require_auth and not self.authenticated:
            self.error(id, AUTH_REQUIRED, "Authentication required",
                       {"details": "rat-demo was started with RAT_DEMO_REQUIRE_AUTH=1: authenticate with demo-login"})
            return True
        return False

    def valid_cwd(self, id: Any, params: dict) -> Path | None:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "cwd must be an absolute path"})
            return None
        return Path(cwd)

    def session_setup(self, session: Session) -> dict:
        """What session/new, load and resume answer besides the id: the config options."""
        return {"configOptions": demo_options.config_options(session.config, self.boolean_options_ok)}

    async def on_new_session(self, id: Any, params: dict) -> None:
        if self.needs_auth(id) or (cwd := self.valid_cwd(id, params)) is None:
            return
        session = Session(str(uuid.uuid4()), cwd)
        self.sessions[session.id] = session
        mcp_client.remember(session.id, params)
        self.store.create(session.id, session.meta())
        self.respond(id, {"sessionId": session.id, **self.session_setup(session)})
        self.update(session, {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS})

    def reopen(self, id: Any, params: dict) -> tuple[Session, list[dict]] | None:
        """The stored session named in `params`, registered again; None after answering an error."""
        if self.needs_auth(id) or (cwd := self.valid_cwd(id, params)) is None:
            return None
        session_id = params.get("sessionId")
        loaded = self.store.load(session_id) if isinstance(session_id, str) else None
        if loaded is None:
            self.error(id, RESOURCE_NOT_FOUND, "Resource not found", {"details": f"no session {session_id!r}"})
            return None
        if session_id in self.turns:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "that session is running a prompt"})
            return None
        meta, updates = loaded
        session = Session(session_id, cwd, title=meta.get("title"), turns=int(meta.get("turns") or 0),
                          used=int(meta.get("used") or 0), cost=float(meta.get("cost") or 0.0))
        config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
        session.config.update({k: v for k, v in config.items() if k in session.config})
        self.sessions[session.id] = session
        mcp_client.remember(session.id, params)  # load and resume declare the MCP servers anew
        return session, updates

    async def on_load_session(self, id: Any, params: dict) -> None:
        reopened = self.reopen(id, params)
        if reopened is None:
            return
        session, updates = reopened
        for update in updates:  # the whole conversation, then the answer (ACP: Loading Sessions)
            self.notify("session/update", {"sessionId": session.id, "update": update})
        self.respond(id, self.session_setup(session))
        self.update(session, {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS})

    async def on_resume_session(self, id: Any, params: dict) -> None:
        reopened = self.reopen(id, params)
        if reopened is None:
            return
        session, _ = reopened
        self.respond(id, self.session_setup(session))
        self.update(session, {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS})

    async def on_list_sessions(self, id: Any, params: dict) -> None:
        if self.needs_auth(id):
            return
        cwd, cursor, archived = params.get("cwd"), params.get("cursor"), params.get("archived") or "exclude"
        if archived not in ARCHIVE_FILTERS:  # ACP: an unknown filter is refused, never read as exclude
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": f"unknown archived filter {archived!r}"})
            return
        found = [m for m in self.store.sessions() if (cwd is None or m.get("cwd") == cwd)
                 and ARCHIVE_FILTERS[archived](m.get("archived") is True)]
        start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
        page = found[start : start + LIST_PAGE]
        sessions = [{"sessionId": m["sessionId"], "cwd": m["cwd"], "title": m.get("title"),
                     "updatedAt": m.get("updatedAt"), "archived": m.get("archived") is True} for m in page]
        more = start + LIST_PAGE < len(found)
        self.respond(id, {"sessions": sessions, "nextCursor": str(start + LIST_PAGE) if more else None})

    async def on_close_session(self, id: Any, params: dict) -> None:
        session = self.sessions.pop(params.get("sessionId"), None)
        if session is None:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "unknown sessionId"})
            return
        self.cancel_turn(session.id)  # ACP: close cancels ongoing work first
        self.respond(id, {})

    async def on_archive_session(self, id: Any, params: dict) -> None:
        await self._set_archived(id, params, True)

    async def on_unarchive_session(self, id: Any, params: dict) -> None:
        await self._set_archived(id, params, False)

    async def _set_archived(self, id: Any, params: dict, archived: bool) -> None:
        session_id = params.get("sessionId")
        loaded = self.store.load(session_id, meta_only=True) if isinstance(session_id, str) else None
        if loaded is None:
            self.error(id, RESOURCE_NOT_FOUND, "Resource not found", {"details": f"no session {session_id!r}"})
            return
        if archived and self.sessions.pop(session_id, None) is not None:
            self.cancel_turn(session_id)  # ACP: archiving an open session closes it first
        self.store.set_meta(session_id, {**loaded[0], "archived": archived})
        self.respond(id, {})

    async def on_set_config_option(self, id: Any, params: dict) -> None:
        session = self.sessions.get(params.get("sessionId"))
        if session is None:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": "unknown sessionId"})
            return
        config_id, value = params.get("configId"), params.get("value")
        problem = demo_options.check_value(config_id, value, params.get("type"), self.boolean_options_ok)
        if problem:
            self.error(id, INVALID_PARAMS, "Invalid params", {"details": problem})
            return
        session.config[config_id] = value
        self.store.set_meta(session.id, session.meta())
        self.respond(id, self.session_setup(session))

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
        for block in params.get("prompt") or []:  # for session/load to replay (never sent live)
            if isinstance(block, dict):
                self.store.append(session.id, {"sessionUpdate": "user_message_chunk", "content": block})
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
        self.after_turn(turn)
        self.respond(id, {"stopReason": stop})

    def after_turn(self, turn: Turn) -> None:
        """Usage after every turn; a title after the first; the store's meta kept current."""
        session = turn.session
        if session.id not in self.sessions:  # closed meanwhile (session/close): nothing more to say
            return
        session.turns += 1
        size, price = demo_options.MODEL_LIMITS.get(session.config["model"], (128_000, 0.0005))
        tokens = 200 + (len(turn.text) + turn.chars) // 4  # pretend: a system prompt plus ~4 chars a token
        session.used = min(size, session.used + tokens)
        session.cost = round(session.cost + tokens * price / 1000, 6)
        self.update(session, {"sessionUpdate": "usage_update", "used": session.used, "size": size,
                              "cost": {"amount": session.cost, "currency": "USD"}})
        if session.title is None:
            session.title = title_from(turn.text)
            self.update(session, {"sessionUpdate": "session_info_update", "title": session.title,
                                  "updatedAt": now_iso()})
        self.store.set_meta(session.id, session.meta())

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
        turn.chars += len(text)
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
        if turn.session.config.get("thoughts", True):  # the "Think out loud" option
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
        config = turn.session.config
        mode = next(m["name"] for m in demo_options.MODES if m["value"] == config["mode"])
        text += f"\n*Answered by {demo_options.model_name(config['model'])} in {mode} mode.*\n"
        await self.stream(turn, "agent_message_chunk", text)
        self.send_plan(turn, last, "completed")


def title_from(prompt: str, words: int = 6) -> str:
    """A session title from the first prompt: its first few words."""
    picked = prompt.split()[:words]
    if not picked:
        return "Demo session"
    title = " ".join(picked)
    return (title[0].upper() + title[1:]) + ("…" if len(prompt.split()) > words else "")


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
