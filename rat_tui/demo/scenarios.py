"""The demo agent's coding-agent scenarios, chosen by keywords in the prompt (see ``agent.py``).

Each scenario plays what a real coding agent does over ACP: tool calls with diffs or terminals,
``session/request_permission`` before touching anything, then ``fs/*`` or ``terminal/*`` requests
to the client. A scenario needing a capability the client did not advertise at ``initialize`` is
skipped and the final answer says why. An error answer from the client (access denied, method not
found, ...) fails the tool call in flight with the error's message and the turn goes on. A
cancelled turn fails the tool call in flight ("Cancelled") and ends; a running terminal is killed
and released in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

RESOURCE_NOT_FOUND = -32002

# keyword in the prompt -> scenario; `all` means ALL
KEYWORDS = {
    "edit": "edit", "write": "write", "read": "read", "run": "run", "terminal": "run", "fail": "fail", "bigdiff": "bigdiff",
    "form": "form", "notice": "notice",
}
ORDER = ("edit", "write", "read", "run", "fail", "bigdiff", "form", "notice")
ALL = ("edit", "write", "read", "run", "fail")
TITLES = {
    "edit": "Edit demo-notes.txt",
    "write": "Create demo-new-file.md",
    "read": "Read the first lines of a file",
    "run": "Run a command in a terminal",
    "fail": "Fetch a web page (fails on purpose)",
    "bigdiff": "Show a 20,000-line diff",
    "form": "Ask you to fill in a form",
    "notice": "Send a notice",
}
HELP = {
    "edit": "change a line of `demo-notes.txt` and add one, after asking permission",
    "write": "create `demo-new-file.md`, after asking permission",
    "read": "read the first 5 lines of a workspace file through the client",
    "run": "run `echo demo-terminal-ok && ls` in a client terminal, after asking permission (also `terminal`)",
    "fail": "a tool call that fails",
    "bigdiff": "show (not write) a diff of a 20,000-line file",
    "form": "ask you to fill in a form (`elicitation/create`: text, number, yes/no and a choice) and report the answers",
    "notice": "send a warning notice (the unstable `notice` update; a client may ignore it)",
    "all": "edit, write, read, run and fail, in that order",
    # Played by demo/mcp_client.py through rat-tui's own MCP server, before the scenarios above.
    "ask": "ask you a question through rat-tui's own `ask_user` tool (MCP, native or through the shim)",
    "show": "open a file in rat-tui's preview through its `show_file` tool",
}

NOTES_FILE = "demo-notes.txt"
NOTES_SEED = "# Demo notes\n\nThis file belongs to rat-demo, the scripted agent built into rat-tui.\nstatus: draft\n"
NEW_FILE = "demo-new-file.md"
NEW_FILE_TEXT = (
    "# A file from rat-demo\n\n"
    "Created through `fs/write_text_file` after you allowed it.\n\n"
    "- safe to delete\n"
    "- the demo agent never reads it back\n"
)
BIG_FILE = "demo-big-file.txt"
COMMAND = "echo demo-terminal-ok && ls"
FETCH_URL = "https://example.invalid/rat-demo"
OUTPUT_BYTE_LIMIT = 32000

# Claude Code's ids for file changes, Gemini CLI's for commands
EDIT_OPTIONS = [
    {"optionId": "allow_always", "kind": "allow_always", "name": "Always allow"},
    {"optionId": "allow", "kind": "allow_once", "name": "Allow"},
    {"optionId": "reject", "kind": "reject_once", "name": "Reject"},
]
RUN_OPTIONS = [
    {"optionId": "proceed_always", "kind": "allow_always", "name": "Always allow"},
    {"optionId": "proceed_once", "kind": "allow_once", "name": "Allow once"},
    {"optionId": "cancel", "kind": "reject_once", "name": "Reject"},
]
ALLOW = ("allow_once", "allow_always")
READ_ONLY = "skipped: the session is in Read only mode (set the Mode option to let rat-demo change things)"

FORM_MESSAGE = "rat-demo would like a few details before it goes on."
FORM_SCHEMA = {
    "type": "object",
    "title": "Project details",
    "properties": {
        "name": {"type": "string", "title": "Project name", "minLength": 1, "maxLength": 60},
        "language": {"type": "string", "title": "Main language", "oneOf": [
            {"const": "python", "title": "Python"}, {"const": "rust", "title": "Rust"},
            {"const": "typescript", "title": "TypeScript"}, {"const": "other", "title": "Something else"},
        ]},
        "size": {"type": "string", "title": "Size", "enum": ["small", "medium", "large"], "default": "medium"},
        "files": {"type": "integer", "title": "How many files to touch", "minimum": 1, "maximum": 100, "default": 3},
        "confidence": {"type": "number", "title": "Confidence (0 to 1)", "minimum": 0, "maximum": 1, "default": 0.5},
        "tests": {"type": "boolean", "title": "Run the tests afterwards", "default": True},
    },
    "required": ["name", "language"],
}
NOTICE = {
    "sessionUpdate": "notice",
    "severity": "warning",
    "title": "rat-demo is only pretending",
    "description": "This notice is scripted: nothing is wrong. Real agents send notices about quotas, "
                   "outages or settings that need attention.",
}


class ClientError(RuntimeError):
    """The client answered one of our requests with a JSON-RPC error."""

    def __init__(self, method: str, error: Any) -> None:
        error = error if isinstance(error, dict) else {}
        self.method = method
        self.code = error.get("code")
        self.message = str(error.get("message") or "unknown error")
        code = f" (code {self.code})" if self.code is not None else ""
        super().__init__(f"{method} failed: {self.message}{code}")


class TurnCancelled(Exception):
    """The client answered a permission request with the `cancelled` outcome: the turn ends."""


def scenarios_in(text: str) -> list[str]:
    """The scenarios the prompt asks for (whole words, any case), in their fixed order."""
    words = set(re.findall(r"\w+", text.lower()))
    wanted = set(ALL) if "all" in words else set()
    wanted |= {KEYWORDS[word] for word in words if word in KEYWORDS}
    return [name for name in ORDER if name in wanted]


def log(text: str) -> None:
    print(f"rat-demo: {text}", file=sys.stderr, flush=True)


def help_markdown() -> str:
    return "".join(f"- `{word}`: {what}\n" for word, what in HELP.items())


def pick_file(cwd: Path) -> Path | None:
    """A file worth reading in `cwd`: a README if there is one, else the first regular file."""
    try:
        files = sorted(p for p in cwd.iterdir() if p.is_file() and not p.name.startswith("."))
    except OSError:
        return None
    readmes = [p for p in files if p.name.lower().startswith("readme")]
    return (readmes or files or [None])[0]


def text_content(text: str) -> dict:
    return {"type": "content", "content": {"type": "text", "text": text}}


def diff_content(path: Path, old: str | None, new: str) -> dict:
    return {"type": "diff", "path": str(path), "oldText": old, "newText": new}


def edit_notes(old: str) -> tuple[str, int, dict]:
    """`old` with its `status:` line (else its last line) changed and a line added.

    Also returns the changed line's number and a Claude-like rawInput (old_string, new_string).
    """
    lines = old.splitlines()
    index = next((i for i, line in enumerate(lines) if line.startswith("status:")), len(lines) - 1)
    count = sum(1 for line in lines if line.startswith("- edit ")) + 1
    before = lines[index]
    lines[index] = f"status: edited by rat-demo ({count} edit{'s' if count > 1 else ''})"
    lines.append(f"- edit {count} by rat-demo")
    raw = {"old_string": before, "new_string": lines[index], "appended": lines[-1]}
    return "\n".join(lines) + "\n", index + 1, raw


def big_texts(total: int = 20_000, changes: int = 200) -> tuple[str, str]:
    """A `total`-line numbered text, and a copy with `changes` lines changed, scattered through it."""
    old = [f"{n:05d}  the quick brown fox jumps over the lazy dog" for n in range(1, total + 1)]
    new = list(old)
    step = total // changes
    for k in range(changes):
        i = k * step + (k * 37) % step
        new[i] = f"{i + 1:05d}  THE QUICK BROWN FOX was changed by rat-demo (change {k + 1})"
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


CODE_SHAPES = ["", "def f{i}(x):", "    y = x + {i}", "    if y:", "        return y", "    return None",
               "", "class C{i}:", "    pass", "    # comment", "    x = [1, 2, 3]", "}}"]


def dense_code_texts(lines: int = 20_000, every: int = 15, seed: int = 7) -> tuple[str, str]:
    """Python-like text (many repeated lines) and a copy with a change every `every` lines.

    The worst case for plain difflib (it takes seconds): the diff tests and bench/diff.py use it.
    """
    old = [CODE_SHAPES[i % len(CODE_SHAPES)].format(i=i) + "\n" for i in range(lines)]
    new: list[str] = []
    rng = random.Random(seed)
    for i, line in enumerate(old):
        if i % every:
            new.append(line)
        elif (roll := rng.random()) < 0.5:
            new.append(f"    changed = {i}\n")
        elif roll >= 0.75:
            new += [line, f"    inserted_{i}()\n"]
    return "".join(old), "".join(new)


class ToolCall:
    """One tool call: sends `tool_call` when made, `tool_call_update`s after."""

    def __init__(self, send: Callable[[dict], None], title: str, kind: str, **fields: Any) -> None:
        self.send = send
        self.id = f"call_{uuid.uuid4().hex[:12]}"
        self.finished = False
        self.summary = "done"  # one line for the final answer
        send({"sessionUpdate": "tool_call", "toolCallId": self.id, "title": title, "kind": kind, "status": "pending",
              **fields})

    def update(self, **fields: Any) -> None:
        if fields.get("status") in ("completed", "failed"):
            self.finished = True
        self.send({"sessionUpdate": "tool_call_update", "toolCallId": self.id, **fields})

    def complete(self, summary: str, **fields: Any) -> None:
        self.summary = summary
        self.update(status="completed", **fields)

    def fail(self, text: str, summary: str | None = None) -> None:
        self.summary = summary or f"failed: {text}"
        self.update(status="failed", content=[text_content(text)])


class Scenarios:
    """Plays the scenarios of one turn through `agent` (a DemoAgent) in `session`."""

    def __init__(self, agent: Any, session: Any) -> None:
        self.agent = agent
        self.session = session
        self.cwd: Path = session.cwd

    async def play(self, name: str) -> str:
        """Play one scenario; return a one-line summary of what happened, for the final answer."""
        scenario: Callable[[], Awaitable[str]] = getattr(self, f"scenario_{name}")
        return await scenario()

    # ------------------------------------------------------------ helpers
    def send(self, update: dict) -> None:
        self.agent.update(self.session, update)

    async def request(self, method: str, **params: Any) -> Any:
        return await self.agent.request(method, {"sessionId": self.session.id, **params})

    def missing(self, *capabilities: str) -> str | None:
        """None if the client advertised every capability (e.g. "fs.readTextFile"), else why not."""
        lacking = [name for name in capabilities if not self.agent.client_can(name)]
        if not lacking:
            return None
        names = " and ".join(f"`{name}`" for name in lacking)
        return f"skipped: the client did not advertise {names} at `initialize`, so rat-demo may not use it"

    @contextlib.asynccontextmanager
    async def tool_call(self, title: str, kind: str, **fields: Any) -> AsyncIterator[ToolCall]:
        """A tool call for the block: a client error fails it (and is swallowed); a cancel fails it and propagates."""
        call = ToolCall(self.send, title, kind, **fields)
        try:
            yield call
        except ClientError as exc:
            if not call.finished:
                call.fail(str(exc))
            else:
                log(f"after {call.id} finished: {exc}")
        except (asyncio.CancelledError, TurnCancelled):
            if not call.finished:
                call.fail("Cancelled", "cancelled")
            raise

    async def ask(self, call: ToolCall, options: list[dict], **shown: Any) -> str:
        """Ask permission for `call`; the chosen option's kind. A `cancelled` outcome raises TurnCancelled."""
        result = await self.request(
            "session/request_permission", toolCall={"toolCallId": call.id, **shown}, options=options
        )
        outcome = (result or {}).get("outcome") if isinstance(result, dict) else None
        outcome = outcome if isinstance(outcome, dict) else {}
        if outcome.get("outcome") == "cancelled":
            raise TurnCancelled()
        chosen = outcome.get("optionId")
        for option in options:
            if option["optionId"] == chosen:
                return option["kind"]
        raise ClientError("session/request_permission", {"message": f"unknown optionId {chosen!r}"})

    @property
    def mode(self) -> str:
        config = getattr(self.session, "config", None) or {}
        return str(config.get("mode", "ask"))

    async def apply_change(self, call: ToolCall, path: Path, old: str | None, new: str, shown: dict) -> None:
        """Ask permission for a file change already shown in `call` (not in Accept edits mode); write it if allowed."""
        diff = [diff_content(path, old, new)]
        kind = "allow_once" if self.mode == "accept_edits" else await self.ask(call, EDIT_OPTIONS, content=diff, **shown)
        if kind not in ALLOW:
            call.fail("The user rejected this edit", "rejected by the user; the file is unchanged")
            return
        call.update(status="in_progress")
        await self.agent.pause()
        await self.request("fs/write_text_file", path=str(path), content=new)
        verb = "created" if old is None else "changed"
        call.complete(f"{verb} `{path.name}`", content=diff)

    # ---------------------------------------------------------- scenarios
    async def scenario_edit(self) -> str:
        if why := self.missing("fs.readTextFile", "fs.writeTextFile"):
            return why
        if self.mode == "read_only":
            return READ_ONLY
        path = self.cwd / NOTES_FILE
        location = {"path": str(path)}
        async with self.tool_call(f"Read {NOTES_FILE}", "read", locations=[location], rawInput=location) as call:
            old: str | None
            try:
                old = (await self.request("fs/read_text_file", path=str(path)))["content"]
            except ClientError as exc:
                if exc.code != RESOURCE_NOT_FOUND:
                    raise
                old = None
            call.complete("read", content=[text_content(old or "(missing: rat-demo will ask to create it)")])
        if call.summary != "read":  # the client refused the read
            return call.summary
        # A missing (or empty) file is made from the seed, asked like any other change: nothing is written
        # before the user allows it.
        new, line, change = edit_notes(old if old and old.strip() else NOTES_SEED)
        title = f"{'Create' if old is None else 'Edit'} {NOTES_FILE}"
        raw = {"path": str(path), **change}
        shown = {"title": title, "kind": "edit", "locations": [{"path": str(path), "line": line}], "rawInput": raw}
        async with self.tool_call(
            title, "edit", content=[diff_content(path, old, new)], locations=shown["locations"], rawInput=raw
        ) as call:
            await self.apply_change(call, path, old, new, shown)
        return call.summary

    async def scenario_write(self) -> str:
        if why := self.missing("fs.writeTextFile"):
            return why
        if self.mode == "read_only":
            return READ_ONLY
        path = self.cwd / NEW_FILE
        for n in range(2, 100):  # a new file: never overwrite one left by an earlier turn
            if not path.exists():
                break
            path = self.cwd / f"{Path(NEW_FILE).stem}-{n}{Path(NEW_FILE).suffix}"
        raw = {"path": str(path), "content": NEW_FILE_TEXT}
        shown = {"title": f"Write {path.name}", "kind": "edit", "locations": [{"path": str(path)}], "rawInput": raw}
        diff = [diff_content(path, None, NEW_FILE_TEXT)]
        async with self.tool_call(shown["title"], "edit", content=diff, locations=shown["locations"], rawInput=raw) as call:
            await self.apply_change(call, path, None, NEW_FILE_TEXT, shown)
        return call.summary

    async def scenario_read(self) -> str:
        if why := self.missing("fs.readTextFile"):
            return why
        path = pick_file(self.cwd)
        if path is None:
            return "skipped: the workspace has no file to read"
        raw = {"path": str(path), "line": 1, "limit": 5}
        async with self.tool_call(
            f"Read {path.name} (lines 1-5)", "read", locations=[{"path": str(path), "line": 1}], rawInput=raw
        ) as call:
            call.update(status="in_progress")
            await self.agent.pause()
            text = (await self.request("fs/read_text_file", **raw))["content"]
            call.complete(f"read the first lines of `{path.name}`", content=[text_content(text or "(empty file)")])
        return call.summary

    async def scenario_run(self) -> str:
        if why := self.missing("terminal"):
            return why
        if self.mode == "read_only":
            return READ_ONLY
        raw = {"command": COMMAND, "cwd": str(self.cwd)}
        description = "List the workspace after a friendly echo"
        async with self.tool_call(COMMAND, "execute", content=[text_content(description)], rawInput=raw) as call:
            kind = await self.ask(call, RUN_OPTIONS, title=COMMAND, kind="execute", rawInput=raw)
            if kind not in ALLOW:
                call.fail("The user rejected this command", "rejected by the user; nothing ran")
                return call.summary
            created = await self.request(
                "terminal/create", command=COMMAND, cwd=str(self.cwd), outputByteLimit=OUTPUT_BYTE_LIMIT
            )
            await self.in_terminal(call, created["terminalId"])
        return call.summary

    async def in_terminal(self, call: ToolCall, terminal_id: str) -> None:
        """Show the terminal in `call`, wait for the command, finish `call`, release the terminal."""
        try:
            call.update(status="in_progress", content=[{"type": "terminal", "terminalId": terminal_id}])
            exit_status = await self.request("terminal/wait_for_exit", terminalId=terminal_id) or {}
            output = await self.request("terminal/output", terminalId=terminal_id) or {}
        except asyncio.CancelledError:  # do not keep the turn waiting for the cleanup
            self.agent.spawn(self.discard_terminal(terminal_id))
            raise
        except ClientError:
            await self.release(terminal_id)
            raise
        code, signal = exit_status.get("exitCode"), exit_status.get("signal")
        raw_output = {"exitCode": code, "signal": signal, "output": output.get("output", ""),
                      "truncated": output.get("truncated", False)}
        if code == 0:
            call.complete(f"`{COMMAND}` exited with code 0", rawOutput=raw_output)
        else:
            why = f"signal {signal}" if signal else f"exit code {code}"
            call.summary = f"`{COMMAND}` failed ({why})"
            call.update(status="failed", rawOutput=raw_output)
        await self.release(terminal_id)

    async def release(self, terminal_id: str) -> None:
        try:
            await self.request("terminal/release", terminalId=terminal_id)
        except ClientError as exc:
            log(str(exc))

    async def discard_terminal(self, terminal_id: str) -> None:
        """After a cancel: kill the command and release its terminal, ignoring errors."""
        for method in ("terminal/kill", "terminal/release"):
            with contextlib.suppress(ClientError):
                await self.request(method, terminalId=terminal_id)

    async def scenario_fail(self) -> str:
        raw = {"url": FETCH_URL}
        async with self.tool_call(f"Fetch {FETCH_URL}", "fetch", rawInput=raw) as call:
            call.update(status="in_progress")
            await self.agent.pause()
            call.fail(
                f"Could not fetch {FETCH_URL}: the host name does not resolve "
                "(rat-demo fails this tool call on purpose; the turn goes on).",
                "failed on purpose, as scripted",
            )
        return call.summary

    async def scenario_bigdiff(self) -> str:
        path = self.cwd / BIG_FILE
        old, new = big_texts()
        async with self.tool_call(
            f"Edit {BIG_FILE} (display only, nothing is written)",
            "edit",
            content=[diff_content(path, old, new)],
            locations=[{"path": str(path)}],
        ) as call:
            await self.agent.pause()
            call.complete("showed a diff of 20,000 lines with 200 changes; nothing was written")
        return call.summary

    async def scenario_form(self) -> str:
        if not self.agent.client_offers("elicitation.form"):
            return ("skipped: the client did not advertise `elicitation.form` at `initialize`, "
                    "so rat-demo cannot ask for a form")
        try:
            result = await self.request("elicitation/create", mode="form", message=FORM_MESSAGE,
                                        requestedSchema=FORM_SCHEMA)
        except ClientError as exc:
            return f"the form failed: {exc}"
        result = result if isinstance(result, dict) else {}
        action = result.get("action")
        if action == "decline":
            return "you declined the form"
        if action == "cancel":
            return "you dismissed the form"
        if action != "accept":
            return f"the client answered the form with an unknown action {action!r}"
        content = result.get("content") if isinstance(result.get("content"), dict) else {}
        missing = [name for name in FORM_SCHEMA["required"] if content.get(name) in (None, "")]
        answers = ", ".join(f"{name} = {json.dumps(content[name], ensure_ascii=False)}"
                            for name in FORM_SCHEMA["properties"] if name in content)
        text = f"you answered {answers}" if answers else "you accepted an empty form"
        if missing:
            text += f" (the required {', '.join(missing)} missing)"
        return text

    async def scenario_notice(self) -> str:
        self.send(dict(NOTICE))
        await self.agent.pause()
        return "sent a warning notice (the unstable `notice` session update; clients may ignore it)"
