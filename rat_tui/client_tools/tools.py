"""Provides ToolHost: runs one session's client-hosted tools as tool-call cards under the permission policy.

The MCP side (`server.py`) only forwards `tools/call` here. Every call becomes a `tool_call` in the
session's transcript (synthesized through the reducer, ids `rat-tools-N`), asks permission first
when the tool's policy is "ask" (remembered rules apply, as for the agent's own tools), and ends
completed or failed with its result. Tools that need the screen go through `ui` (ToolsUI), which
the session view plugs in on mount; without it they fail with a clear message. No Textual.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from ..session.permission_broker import ask_in_task
from ..state.models import MessageEntry, NoticeEntry, SessionState, ToolCallEntry
from ..protocol.sanitize import clean
from .settings import ClientToolsSettings

log = logging.getLogger("rat.client_tools")

DISMISSED = "dismissed"
PERMISSION_OPTIONS = [
    {"optionId": "allow_once", "kind": "allow_once", "name": "Allow"},
    {"optionId": "allow_always", "kind": "allow_always", "name": "Always allow"},
    {"optionId": "reject_once", "kind": "reject_once", "name": "Reject"},
    {"optionId": "reject_always", "kind": "reject_always", "name": "Always reject"},
]


class ToolsUI(Protocol):
    """What the screen provides; `ask_user` returns the answer, or None when the user dismissed it."""

    async def ask_user(self, question: str, choices: list[str]) -> str | None: ...
    def show_file(self, path: str, line: int | None) -> None: ...
    def notify(self, message: str, bell: bool) -> None: ...
    def list_sessions(self) -> list[dict[str, str]]: ...
    def read_session(self, session_id: str) -> str | None: ...


class ToolError(Exception):
    """A tool call that cannot be done; its message is the tool result (isError)."""


# name -> (title, ACP tool kind, description, input schema)
TOOLS: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "ask_user": ("Ask the user", "other",
                 "Ask the user a question in rat-tui and wait for the answer. With `choices` the user picks one "
                 f"(or types another answer). The result is the answer, or \"{DISMISSED}\" if the user closed the question.",
                 {"type": "object", "properties": {
                     "question": {"type": "string", "description": "The question, one or a few sentences."},
                     "choices": {"type": "array", "items": {"type": "string"}, "description": "Suggested answers."}},
                  "required": ["question"]}),
    "show_file": ("Show a file", "read",
                  "Open a file at a line in the user's file preview in rat-tui (the user sees it; you get no content).",
                  {"type": "object", "properties": {
                      "path": {"type": "string", "description": "Absolute, or relative to the session's directory."},
                      "line": {"type": "integer", "minimum": 1, "description": "1-based line to show."}},
                   "required": ["path"]}),
    "notify": ("Notify the user", "other",
               "Show the user a short notification in rat-tui (a toast), optionally ringing the terminal bell.",
               {"type": "object", "properties": {
                   "message": {"type": "string"},
                   "bell": {"type": "boolean", "description": "Ring the terminal bell too."}},
                "required": ["message"]}),
    "list_sessions": ("List the user's other sessions", "read",
                      "List the user's other sessions open in rat-tui: id, title and agent (asks the user first).",
                      {"type": "object", "properties": {}}),
    "read_session": ("Read another session", "read",
                     "The transcript (Markdown) of one of the user's other rat-tui sessions, by the id list_sessions "
                     "gives (asks the user first).",
                     {"type": "object", "properties": {"sessionId": {"type": "string"}}, "required": ["sessionId"]}),
}


class ToolHost:
    """One per AgentSession; `apply` feeds the session's store (SessionStore.apply_update)."""

    def __init__(
        self,
        settings: ClientToolsSettings,
        apply: Callable[[dict[str, Any]], Any],
        ask_permission: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
        state: Callable[[], SessionState],
        cwd: Path,
        by_rule: Callable[[str, list[dict[str, Any]]], dict[str, Any] | None] | None = None,
    ) -> None:
        self.settings = settings
        self.apply = apply
        self.ask_permission = ask_permission
        self.by_rule = by_rule
        self.state = state
        self.cwd = cwd
        self.ui: ToolsUI | None = None
        self._ids = itertools.count(1)
        self._asking: set[asyncio.Task[str | None]] = set()

    def definitions(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(name, description, input schema) of each offered tool."""
        return [(name, TOOLS[name][2], TOOLS[name][3]) for name in self.settings.offered]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool call: (result text, is_error). Cancellation (the agent or the session went away) propagates."""
        if name not in self.settings.offered:
            return f"Unknown tool: {name}", True
        title, kind, _, _ = TOOLS[name]
        call_id = f"rat-tools-{next(self._ids)}"
        card: dict[str, Any] = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": f"{title} · rat-tui {name}",
                                "kind": kind, "status": "pending", "rawInput": arguments}
        if name == "show_file" and isinstance(arguments.get("path"), str):
            location: dict[str, Any] = {"path": str(self._path(arguments["path"]))}
            if isinstance(arguments.get("line"), int):
                location["line"] = arguments["line"]
            card["locations"] = [location]
        self.apply(card)
        try:
            if not await self._allowed(call_id, ask=self.settings.tools.get(name) == "ask"):
                return self._end(call_id, f"The user did not allow {name}.", True)
            self.apply({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"})
            text = await self._run(name, arguments)
        except ToolError as error:
            return self._end(call_id, str(error), True)
        except asyncio.CancelledError:
            self._end(call_id, "Cancelled.", True)
            raise
        except Exception as error:  # a bug here must reach the agent as an error, not kill the connection
            log.exception("client tool %s failed", name)
            return self._end(call_id, f"Internal error in rat-tui: {error}", True)
        return self._end(call_id, text, False)

    def _end(self, call_id: str, text: str, failed: bool) -> tuple[str, bool]:
        shown = text if len(text) <= 2000 else text[:2000] + "\n…"
        self.apply({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                    "status": "failed" if failed else "completed",
                    "content": [{"type": "content", "content": {"type": "text", "text": shown}}]})
        return text, failed

    async def _allowed(self, call_id: str, ask: bool) -> bool:
        """Remembered permission rules first (also for "allow" tools: a reject rule wins); then ask if told to."""
        answer = self.by_rule(call_id, PERMISSION_OPTIONS) if self.by_rule is not None else None
        if answer is None and not ask:
            return True
        if answer is None:
            answer = await self.ask_permission({"sessionId": self.state().session_id or "",
                                                "toolCall": {"toolCallId": call_id}, "options": PERMISSION_OPTIONS})
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        return isinstance(outcome, dict) and outcome.get("optionId") in ("allow_once", "allow_always")

    async def _outside_allowed(self, real: Path) -> bool:
        """show_file outside the session's directory always asks first, whatever the tool's policy."""
        answer = await self.ask_permission({
            "sessionId": self.state().session_id or "",
            "toolCall": {"toolCallId": f"rat-tools-outside-{next(self._ids)}", "kind": "read",
                         "title": f"Show {real}, outside the session's directory", "locations": [{"path": str(real)}]},
            "options": [o for o in PERMISSION_OPTIONS if o["optionId"] in ("allow_once", "reject_once")]})
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        return isinstance(outcome, dict) and outcome.get("optionId") == "allow_once"

    def _path(self, path: str) -> Path:
        return Path(os.path.normpath(self.cwd / os.path.expanduser(path)))

    def cancel_all(self) -> None:
        """The user cancelled the turn: open questions close and answer "dismissed"."""
        for question in list(self._asking):
            question.cancel()

    def _need_ui(self) -> ToolsUI:
        if self.ui is None:
            raise ToolError("rat-tui has no screen for this session; the tool is not available.")
        return self.ui

    async def _run(self, name: str, arguments: dict[str, Any]) -> str:
        if name == "ask_user":
            raw_choices = arguments.get("choices") if isinstance(arguments.get("choices"), list) else []
            choices = [clean(str(c)) for c in raw_choices]
            question = await ask_in_task(self._asking, self._need_ui().ask_user(clean(str(arguments.get("question", ""))), choices))
            answer = None if question.cancelled() else question.result()
            return DISMISSED if answer is None else answer
        if name == "show_file":
            path = self._path(str(arguments.get("path", "")))
            if not path.is_file():
                raise ToolError(f"No such file: {path}")
            real = Path(os.path.realpath(path))
            if not real.is_relative_to(os.path.realpath(self.cwd)) and not await self._outside_allowed(real):
                raise ToolError(f"The user did not allow showing {path}: it is outside the session's directory.")
            line = arguments.get("line") if isinstance(arguments.get("line"), int) else None
            self._need_ui().show_file(str(path), line)
            return f"Shown to the user: {path}" + (f":{line}" if line else "")
        if name == "notify":
            self._need_ui().notify(clean(str(arguments.get("message", ""))), bool(arguments.get("bell", False)))
            return "The user was notified."
        if name == "list_sessions":
            return json.dumps(self._need_ui().list_sessions(), ensure_ascii=False, indent=2)
        if name == "read_session":
            text = self._need_ui().read_session(str(arguments.get("sessionId", "")))
            if text is None:
                raise ToolError(f"No session {arguments.get('sessionId')!r}; list_sessions gives the ids.")
            return text
        raise ToolError(f"Unknown tool: {name}")


def transcript_markdown(state: SessionState) -> str:
    """A session's transcript as Markdown, for read_session."""
    lines = [f"# {state.title or state.agent_name}", ""]
    headings = {"user": "## User", "agent": "## Agent", "thought": "## Agent (thinking)"}
    for entry in state.entries:
        if isinstance(entry, MessageEntry):
            lines += [headings.get(entry.role, f"## {entry.role}"), "", entry.text, ""]
        elif isinstance(entry, ToolCallEntry):
            lines += [f"- tool call: {entry.title} ({entry.status})", ""]
        elif isinstance(entry, NoticeEntry):
            lines += [f"> {entry.severity}: {entry.text}", ""]
    return "\n".join(lines).rstrip() + "\n"
