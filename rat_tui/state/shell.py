"""Provides ShellEntry and its reducer actions: a `!command` the user ran in the tab's own shell.

A shell card is a tool-call card of kind `execute` whose output is a terminal of the state's
(`state.terminals`), so it is drawn, cut tail-first, searched, copied and opened whole (`v`) by the same
code as the agent's terminal cards; its output is cleaned the same way (`reducer.terminal_output`:
SGR kept, every other escape dropped, capped at TERMINAL_DISPLAY_LIMIT). Its status is `running`, not
`in_progress`, so an agent's cancelled or failed turn (which marks its own unfinished calls) leaves it
alone; its id is random, so no update of the agent's can name it.

A finished command is journaled as a `_rat/shell` record (session/user_shell_runs.py) and rebuilt from it
by `apply_record`, its output as text.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from ..protocol.sanitize import clean
from . import reducer
from .models import Change, EntryChanged, FieldChanged, SessionState, TERMINAL_DISPLAY_LIMIT, ToolCallEntry

RECORD_METHOD = "_rat/shell"  # an extension method name (leading underscore, ACP's rule): never sent to an agent
RUNNING = "running"
QUEUED = "queued"


@dataclass(eq=False)
class ShellEntry(ToolCallEntry):
    """One `!command`: its number in the tab (`@!N` attaches it), the command, where it ran, how it ended."""

    number: int = 0
    command: str = ""
    cwd: str = ""
    exit_code: int | None = None
    duration: float | None = None
    note: str | None = None
    interrupted: bool = False
    total_bytes: int = 0

    @property
    def terminal_id(self) -> str:
        return f"{self.tool_call_id}-out"

    @property
    def running(self) -> bool:
        """Running or queued: not over yet."""
        return self.status in (RUNNING, QUEUED)


def shell_entries(state: SessionState) -> list[ShellEntry]:
    return [call for call in state.tool_calls.values() if isinstance(call, ShellEntry)]


def find(state: SessionState, number: int | None = None) -> ShellEntry | None:
    """Shell command `number` of this tab, or the last one (None)."""
    entries = shell_entries(state)
    if number is None:
        return entries[-1] if entries else None
    # The last of that number: a continued session's journal may hold an earlier run's too.
    return next((entry for entry in reversed(entries) if entry.number == number), None)


def output_of(state: SessionState, entry: ShellEntry) -> str:
    terminal = state.terminals.get(entry.terminal_id)
    return terminal.output if terminal is not None else ""


TITLE_LIMIT = 200  # characters of a command shown as its card's title (`v` shows it whole)


def title_of(command: str) -> str:
    """The card's title: the command's first line, cut to TITLE_LIMIT, saying how much more there is."""
    lines = command.strip("\n").split("\n")
    first = lines[0]
    more = [f"{len(first) - TITLE_LIMIT} more characters"] if len(first) > TITLE_LIMIT else []
    if len(lines) > 1:
        more.append(f"{len(lines) - 1} more line{'s' if len(lines) > 2 else ''}")
    return clean(first[:TITLE_LIMIT]) + (f" … ({', '.join(more)})" if more else "")


def _name(entry: ShellEntry) -> str:
    """The dim line beside the title: the shell's number, where it ran and, once over, how long it took."""
    parts = [f"!{entry.number}", entry.cwd]
    if entry.duration is not None:
        parts.append(format_duration(entry.duration))
    return " · ".join(part for part in parts if part)


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def start(state: SessionState, number: int, command: str, cwd: str, *, queued: bool = False,
          call_id: str | None = None) -> list[Change]:
    """A command's card: running, with an empty terminal, or `queued` behind the one running (`begin` starts it)."""
    call_id = call_id or f"rat-shell-{uuid.uuid4().hex}"
    entry = ShellEntry(reducer.new_key(state, "sh"), call_id, title=f"! {title_of(command)}",
                       kind="execute", status=QUEUED if queued else RUNNING, number=number, command=command,
                       cwd=clean(cwd))
    entry.content = [{"type": "terminal", "terminalId": entry.terminal_id}]
    entry.name = _name(entry)
    state.tool_calls[entry.tool_call_id] = entry
    changes = reducer.terminal_snapshot(state, entry.terminal_id, "")
    if not queued:
        state.shell_running = entry.command
    return [*reducer.add_entry(state, entry), *changes, FieldChanged("shell")]


def begin(state: SessionState, number: int, cwd: str) -> list[Change]:
    """A queued command starts, where the shell is now."""
    entry = find(state, number)
    if entry is None:
        return []
    entry.status, entry.cwd = RUNNING, clean(cwd)
    entry.name = _name(entry)
    state.shell_running = entry.command
    return [EntryChanged(entry.key), FieldChanged("shell")]


def drop(state: SessionState, number: int, why: str) -> list[Change]:
    """A queued command that will not run (an earlier one was interrupted, the tab closes)."""
    entry = find(state, number)
    if entry is None or entry.status != QUEUED:
        return []
    entry.status, entry.note, entry.interrupted = "cancelled", clean(why), True
    entry.content = [{"type": "content", "content": {"type": "text", "text": entry.note}}]
    return [EntryChanged(entry.key)]


def output(state: SessionState, number: int, text: str) -> list[Change]:
    entry = find(state, number)
    return [] if entry is None else _output(state, entry, text)


def _output(state: SessionState, entry: ShellEntry, text: str) -> list[Change]:
    entry.total_bytes += len(text)
    return reducer.terminal_output(state, entry.terminal_id, text)


def finish(state: SessionState, number: int, exit_code: int | None, duration: float, *, cwd: str | None = None,
           note: str | None = None, interrupted: bool = False, total_bytes: int | None = None) -> list[Change]:
    """A command ended: its exit code, duration and, when rat stopped it or the shell went, why."""
    entry = find(state, number)
    if entry is None:
        return []
    return _finish(state, entry, exit_code, duration, note=note, interrupted=interrupted, total_bytes=total_bytes)


def _finish(state: SessionState, entry: ShellEntry, exit_code: int | None, duration: float, *,
            note: str | None = None, interrupted: bool = False, total_bytes: int | None = None) -> list[Change]:
    entry.exit_code, entry.duration, entry.interrupted = exit_code, duration, interrupted
    if total_bytes is not None:
        entry.total_bytes = total_bytes
    entry.note = clean(note) if note else None
    entry.content = [{"type": "terminal", "terminalId": entry.terminal_id}]
    if entry.note:
        entry.content.insert(0, {"type": "content", "content": {"type": "text", "text": entry.note}})
    entry.status = "cancelled" if interrupted else "completed" if exit_code == 0 and not note else "failed"
    entry.name = _name(entry)
    changes = reducer.terminal_exit(state, entry.terminal_id, exit_code, None)
    state.shell_running = None
    return [*(changes or [EntryChanged(entry.key)]), FieldChanged("shell")]


# What a rebuilt card says when the journal holds its start and no end (rat was killed while it ran).
NO_END = "No end was recorded: rat stopped while this command ran."


def record(state: SessionState, entry: ShellEntry, *, running: bool = False) -> dict[str, Any]:
    """The journal's record of a command as it starts (`running`: the command alone) or as it ended (its
    output, exit code and duration); `apply_record` rebuilds the card from them."""
    params: dict[str, Any] = {"id": entry.tool_call_id, "number": entry.number, "command": entry.command,
                              "cwd": entry.cwd}
    if running:
        params["state"] = RUNNING
        return {"jsonrpc": "2.0", "method": RECORD_METHOD, "params": params}
    params.update({"exitCode": entry.exit_code, "durationMs": round((entry.duration or 0) * 1000),
                   "output": output_of(state, entry)[-TERMINAL_DISPLAY_LIMIT:], "totalBytes": entry.total_bytes})
    if entry.note:
        params["note"] = entry.note
    if entry.interrupted:
        params["interrupted"] = True
    return {"jsonrpc": "2.0", "method": RECORD_METHOD, "params": params}


def apply_record(state: SessionState, params: Any) -> list[Change]:
    """A journaled command, rebuilt as its card (history, `rat replay`); a malformed record is skipped.
    A start record makes a card ended without an end (NO_END) until the end record of the same id fills it."""
    if not isinstance(params, dict) or not isinstance(params.get("command"), str):
        return []
    call_id = params.get("id") if isinstance(params.get("id"), str) else None
    existing = state.tool_calls.get(call_id) if call_id is not None else None
    number = params.get("number")
    number = number if isinstance(number, int) and not isinstance(number, bool) else len(shell_entries(state)) + 1
    cwd = params.get("cwd") if isinstance(params.get("cwd"), str) else ""
    if params.get("state") == RUNNING:
        if existing is not None:
            return []
        changes = start(state, number, params["command"], cwd, call_id=call_id)
        entry = state.tool_calls[changes[0].entry.tool_call_id]  # type: ignore[union-attr]
        return changes + _finish(state, entry, None, 0.0, note=NO_END)  # type: ignore[arg-type]
    code = params.get("exitCode")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    duration = params.get("durationMs")
    seconds = duration / 1000 if isinstance(duration, (int, float)) and not isinstance(duration, bool) else 0.0
    note = params.get("note") if isinstance(params.get("note"), str) else None
    total = params.get("totalBytes") if isinstance(params.get("totalBytes"), int) else None
    if isinstance(existing, ShellEntry):  # its start was recorded: the same card, now with its end
        entry = existing
        entry.total_bytes = 0
        changes = reducer.terminal_snapshot(state, entry.terminal_id, "")
    else:
        changes = start(state, number, params["command"], cwd, call_id=call_id)
        entry = state.tool_calls[changes[0].entry.tool_call_id]  # type: ignore[union-attr,assignment]
    text = params.get("output")
    if isinstance(text, str):
        changes += _output(state, entry, text)  # type: ignore[arg-type]
    return changes + _finish(state, entry, code, seconds, note=note,  # type: ignore[arg-type]
                             interrupted=params.get("interrupted") is True, total_bytes=total)
