"""Provides `to_markdown`: a rebuilt session as a Markdown document (messages, thoughts, tool calls, diffs, plan)."""

from __future__ import annotations

import difflib
import json
import time
from typing import Any

from ..state.models import (
    ChildSessionEntry,
    CompactionEntry,
    GenericEntry,
    MessageEntry,
    NoticeEntry,
    SessionState,
    ToolCallEntry,
)
from ..protocol.sanitize import clean_data, plain
from ..state.shell import ShellEntry

STATUS_MARKS = {"completed": "✓", "failed": "✗", "cancelled": "⊘", "in_progress": "…", "pending": "…"}
PLAN_MARKS = {"completed": "[x]", "in_progress": "[~]"}
MAX_OUTPUT = 20_000  # characters of one tool output or terminal kept in the export


def to_markdown(state: SessionState, facts: dict[str, Any] | None = None) -> str:
    """The transcript as Markdown; `facts` are the journal's session facts (agent, cwd, created, ...)."""
    facts = clean_data(facts or {})  # the journal's facts are the agent's raw words (its title, name)
    first_prompt = next((e.text for e in state.entries if isinstance(e, MessageEntry) and e.role == "user"), "")
    title = facts.get("title") or state.title or " ".join(first_prompt.split())[:80] or "Session"
    out = [f"# {title}", ""]
    agent = facts.get("agent_title") or state.agent_name or facts.get("agent")
    lines = [f"- Agent: {agent}" if agent else "", f"- Directory: `{facts.get('cwd') or state.cwd}`"
             if facts.get("cwd") or state.cwd else ""]
    if facts.get("created"):
        lines.append(f"- Started: {time.strftime('%Y-%m-%d %H:%M', time.localtime(facts['created']))}")
    if state.session_id:
        lines.append(f"- Agent session: `{state.session_id}`")
    out += [line for line in lines if line] + [""]
    out += _entries(state)
    if state.plan:
        out += ["## Plan", ""]
        out += [f"- {PLAN_MARKS.get(item.status, '[ ]')} {item.content}" for item in state.plan]
        out.append("")
    for plan in state.plans.values():
        out += [f"## Plan {plan.plan_id}", ""]
        out += [f"- {PLAN_MARKS.get(item.status, '[ ]')} {item.content}" for item in plan.items]
        out += [plan.markdown.strip()] if plan.markdown else []
        out += [f"- {plan.uri}"] if plan.uri else []
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _entries(state: SessionState, depth: int = 0) -> list[str]:
    """The entries of a session; a subagent's own, quoted one level deeper, where it was spawned."""
    out: list[str] = []
    last_role = None
    for entry in state.entries:
        if isinstance(entry, ChildSessionEntry):
            stop = f", {entry.stop_reason}" if entry.stop_reason else ""
            inner = [f"### Subagent: {entry.name} ({entry.run_state or 'announced'}{stop})", ""] + _entries(entry.state, depth + 1)
            out += ["> " + line if line else ">" for line in "\n".join(inner).splitlines()] + [""]
            last_role = None
        elif isinstance(entry, CompactionEntry):
            out += ["---", "", f"*Conversation compacted ({entry.status}).*", ""]
            if entry.summary.strip():
                out += ["<details><summary>Summary</summary>", "", entry.summary.strip(), "", "</details>", ""]
            last_role = None
        elif isinstance(entry, MessageEntry):
            if entry.role == "thought":
                out += ["<details><summary>Thought</summary>", "", entry.text.strip(), "", "</details>", ""]
                last_role = None
                continue
            if entry.role != last_role:
                heading = "#" * (2 + depth) + " " + ("You" if entry.role == "user" else "Agent")
                out += [heading if depth == 0 else heading.replace("You", "Asked"), ""]
            out += [entry.text.strip(), ""]
            last_role = entry.role
        elif isinstance(entry, ToolCallEntry):
            out += _tool_call(entry, state)
            last_role = None
        elif isinstance(entry, NoticeEntry):
            out += [f"> **{entry.severity}:** " + entry.text.strip().replace("\n", "\n> "), ""]
        elif isinstance(entry, GenericEntry):
            out += [f"**{entry.kind}**", "", _fence(json.dumps(entry.raw, indent=2, ensure_ascii=False), "json"), ""]
    return out


def _tool_call(call: ToolCallEntry, state: SessionState) -> list[str]:
    mark = STATUS_MARKS.get(call.status, "")
    out = [f"### Tool: {call.title} — {mark} {call.status}".replace("  ", " "), ""]
    if isinstance(call, ShellEntry):  # a `!command` the user ran in the tab's own shell
        end = "interrupted" if call.interrupted else f"exit code {call.exit_code}"
        out = [f"### Shell: `{call.command}` — {end} · {call.name}", ""]
    details = []
    if call.kind:
        details.append(f"kind: {call.kind}")
    for location in call.locations:
        path = location.get("path")
        if path:
            details.append(f"`{path}{':' + str(location['line']) if location.get('line') else ''}`")
    if details:
        out += [" · ".join(details), ""]
    for item in call.content:
        kind = item.get("type")
        if kind == "diff":
            out += [_fence(unified_diff(item), "diff"), ""]
        elif kind == "content":
            block = item.get("content") if isinstance(item.get("content"), dict) else {}
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                out += [_fence(_cut(str(block["text"]))), ""]
        elif kind == "terminal":
            terminal = state.terminals.get(str(item.get("terminalId")))
            if terminal is not None and terminal.output:
                out += [_fence(_cut(plain(terminal.output)), "console"), ""]
    return out


def unified_diff(item: dict[str, Any]) -> str:
    """A diff content item (`path`, `oldText`, `newText`) as a unified diff; a new file diffs against nothing."""
    path = str(item.get("path", "file"))
    old = item.get("oldText")
    new = str(item.get("newText") or "")
    old_lines = [] if old is None else str(old).splitlines(keepends=True)
    diff = difflib.unified_diff(old_lines, new.splitlines(keepends=True),
                                "/dev/null" if old is None else f"a{path}" if path.startswith("/") else f"a/{path}",
                                f"b{path}" if path.startswith("/") else f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff).rstrip("\n")


def _cut(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + f"\n… [{len(text) - MAX_OUTPUT} more characters]"


def _fence(text: str, language: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside, so the text cannot close it."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
