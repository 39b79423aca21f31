"""Provides the fleet board's rows: every session of every tab, its subagents, running tool calls and terminals.

The board (ui/screens/board.py) reads this on a timer, never per chunk: a row is a small frozen value, so the
board compares one refresh with the last and redraws only the rows that differ. Building the rows walks each
session's children and its open tool calls and terminals, not its transcript: the cost follows what runs,
not how much was said.

States, in the board's order: needs you · working · error · disconnected · idle. A session is sorted by its
most urgent row (a subagent waiting on you puts its parent first); tabs keep their order within a state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..state import children
from ..state.quota import quota_words
from ..state.models import CANCELLED, ERROR, EXITED, STARTING, WORKING, ChildSessionEntry, SessionState, ToolCallEntry

NEEDS_YOU, WORKING_WORD, IDLE, ERROR_WORD, DISCONNECTED, STOPPED = (
    "needs you", "working", "idle", "error", "disconnected", "stopped by you")
ORDER = {NEEDS_YOU: 0, WORKING_WORD: 1, ERROR_WORD: 2, DISCONNECTED: 3, STOPPED: 4, IDLE: 5}
# A call is open until a final status: v2's `paused` and statuses newer than rat read as still in progress.
FINAL_STATUSES = ("completed", "failed", "cancelled")
# A hostile or confused agent can leave any number of calls open: the board lists this many per session,
# then one line saying how many more there are.
MAX_CALLS = 12
# Work the user stopped stays on the board, saying so, while its turn goes on and this long after.
STOPPED_SHOWN_SECONDS = 120.0


@dataclass(frozen=True)
class Seat:
    """One tab as the board sees it (the UI fills it in: what the engine does not know)."""

    session: Any  # AgentSession
    tab: int  # 1-based
    branch: str | None = None  # the worktree branch of a session in its own worktree
    waiting: int = 0  # requests waiting on the user (the request gate)
    view: Any = None  # the tab's view, for the UI's actions


@dataclass(frozen=True)
class Row:
    key: str  # stable across refreshes: the board keeps its cursor on it
    kind: str  # session | child | tool | terminal | more
    depth: int
    name: str
    agent: str
    where: str
    state: str
    doing: str
    since: float  # monotonic seconds; 0: unknown
    usage: str
    tab: int
    # What the actions need (not compared: live objects, which the fields above describe).
    target: Any = field(default=None, compare=False)


def _session_state(state: SessionState, waiting: int, busy: bool) -> str:
    if waiting or state.pending_permissions or children.waiting(state):
        return NEEDS_YOU
    if state.status == EXITED:
        return DISCONNECTED
    if state.status == ERROR:
        return ERROR_WORD
    if state.status == WORKING or busy or state.status == STARTING or state.activity == "running":
        return WORKING_WORD
    if state.status == CANCELLED and state.stopped_by_user:
        return STOPPED
    return IDLE


def _child_state(child: ChildSessionEntry) -> str:
    if child.waiting:
        return NEEDS_YOU
    if child.stopped_by_user and not child.running:
        return STOPPED
    if child.running:
        return WORKING_WORD
    if child.stop_reason in ("refusal", "error"):
        return ERROR_WORD
    return IDLE


def _current_call(state: SessionState) -> ToolCallEntry | None:
    """The latest open tool call: what the session is doing now."""
    for call in reversed(state.tool_calls.values()):  # (no copy: the newest open call is near the end)
        if call.status not in FINAL_STATUSES:
            return call
    return None


def _short(text: str, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def usage_words(state: SessionState) -> str:
    """`62% ctx · $0.42 · quota 30%`: context used, cost and quota (what the session has of them)."""
    parts: list[str] = []
    usage = state.usage or {}
    used, size = usage.get("used"), usage.get("size")
    if isinstance(used, int) and isinstance(size, int) and size > 0:
        parts.append(f"{round(100 * used / size)}% ctx")
    cost = usage.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)) and not isinstance(cost.get("amount"), bool):
        currency = str(cost.get("currency") or "")
        amount = float(cost["amount"])
        parts.append(f"${amount:.2f}" if currency.upper() == "USD" else f"{amount:.2f} {currency}".strip())
    if state.quota:
        words = quota_words(state.quota).split(" (")[0]  # (the model names: in the status bar, not on the board)
        if words:
            parts.append(words)
    return " · ".join(parts)


def call_stopped(call: ToolCallEntry, terminals: dict[str, Any]) -> bool:
    """Whether the user stopped the call and it has ended: the agent said so, or the terminals it showed exited
    (the agent may report the call only later, once it looks)."""
    if not call.stopped_by_user:
        return False
    if call.status in FINAL_STATUSES:
        return True
    shown = [terminals.get(item["terminalId"]) for item in call.content
             if isinstance(item, dict) and item.get("terminalId")]
    return bool(shown) and all(terminal is not None and terminal.exited for terminal in shown)


def _terminal_ids(call: ToolCallEntry) -> set[str]:
    return {str(item["terminalId"]) for item in call.content if isinstance(item, dict) and item.get("terminalId")}


def _call_row(seat: Seat, prefix: str, call: ToolCallEntry, depth: int, session_id: str | None, agent: str,
              where: str, terminals: dict[str, Any]) -> Row:
    if call.stopped_by_user:
        word = STOPPED if call_stopped(call, terminals) else WORKING_WORD
    else:
        word = WORKING_WORD if call.status not in FINAL_STATUSES else IDLE
    doing = call.status.replace("_", " ") if not call.stopped_by_user else ("stopping…" if word == WORKING_WORD else "")
    if any(item.get("toolCallId") == call.tool_call_id or item.get("terminalId") in _terminal_ids(call)
           for item in seat.session.state.background if isinstance(item, dict)):
        doing = f"background · {doing}" if doing else "background"
    return Row(f"{prefix}:tool:{call.tool_call_id}", "tool", depth, _short(call.title or "Tool call", 40), agent,
               where, word, doing, call.since, "", seat.tab, ("tool", seat, call, session_id))


def _calls(seat: Seat, prefix: str, state: SessionState, depth: int, session_id: str | None, agent: str,
           where: str, seen_terminals: set[str]) -> list[Row]:
    rows: list[Row] = []
    listed = 0
    more = 0
    busy = bool(getattr(seat.session, "busy", False))
    now = time.monotonic()
    for call in state.tool_calls.values():
        if call.status in FINAL_STATUSES and not (
                call.stopped_by_user and (busy or now - call.since < STOPPED_SHOWN_SECONDS)):
            continue
        if listed >= MAX_CALLS:
            more += 1
            continue
        listed += 1
        rows.append(_call_row(seat, prefix, call, depth, session_id, agent, where, seat.session.state.terminals))
        for item in call.content:
            if isinstance(item, dict) and item.get("terminalId"):
                seen_terminals.add(str(item["terminalId"]))
    if more:
        rows.append(Row(f"{prefix}:more", "more", depth, f"… {more} more open tool calls", agent, where, WORKING_WORD,
                        "", 0.0, "", seat.tab, None))
    return rows


def _terminals(seat: Seat, prefix: str, state: SessionState, depth: int, session_id: str | None, agent: str,
               where: str, seen: set[str]) -> list[Row]:
    """Terminals no listed tool call shows: a command left running in the background, a v2 agent's own."""
    rows: list[Row] = []
    session = seat.session
    client_running = set(session.terminals.running_ids()) if depth == 1 else set()
    for terminal_id, terminal in state.terminals.items():
        if terminal_id in seen:
            continue
        running = terminal_id in client_running or (not terminal.exited and session.state.protocol_version == 2)
        recent = terminal.stopped_by_user and (session.busy or time.monotonic() - terminal.since < STOPPED_SHOWN_SECONDS)
        if not running and not recent:
            continue
        word = STOPPED if terminal.stopped_by_user and terminal.exited else WORKING_WORD
        last = terminal.output.rstrip().rsplit("\n", 1)[-1] if terminal.output else ""
        rows.append(Row(f"{prefix}:term:{terminal_id}", "terminal", depth, f"$ terminal {terminal_id[-8:]}", agent,
                        where, word, _short(last, 40), terminal.since, "", seat.tab,
                        ("terminal", seat, terminal_id, session_id)))
    return rows


def seat_rows(seat: Seat) -> list[Row]:
    """The rows of one tab: the session, then its subagents (each with its open calls), its calls, its terminals."""
    session = seat.session
    state: SessionState = session.state
    prefix = f"{id(session):x}"
    agent = _short(state.agent_name, 24)
    where = seat.branch or ""
    current = _current_call(state)
    title = state.title or next((e.text for e in state.entries if getattr(e, "role", None) == "user"), "") or ""
    word = _session_state(state, seat.waiting, bool(getattr(session, "busy", False)))
    doing = _short(current.title, 40) if current is not None else (_short(state.status_detail, 40) if state.status_detail else "")
    if not doing and state.compacting:
        doing = "compacting the conversation…"
    elif not doing and state.status == STARTING:
        doing = "starting…"
    if word == NEEDS_YOU:
        doing = f"{seat.waiting or state.pending_permissions or 1} waiting" + (f" · {doing}" if doing else "")
    elif state.background and not doing:  # v2: the foreground is idle, work goes on behind it
        doing = f"{len(state.background)} running in the background"
    if word == IDLE and not doing:  # what `session/status` said of it (session/session_status.py)
        if state.auth and state.auth.get("state") == "unauthenticated":
            doing = "not logged in (Alt+L in its tab)"
        elif state.agent_status == "unknown":
            word, doing = ERROR_WORD, "the agent no longer knows this session"
        elif state.agent_status == "saved":
            doing = "saved by the agent, not in its memory"
        elif state.agent_activity in ("running", "requires_action"):
            doing = "the agent is at work on its own"
    rows = [Row(f"{prefix}:session", "session", 0, _short(title, 40) or f"tab {seat.tab}", agent, where, word, doing,
                state.status_since, usage_words(state), seat.tab, ("session", seat))]
    seen_terminals: set[str] = set()
    for child in children.all_children(state):
        depth = 1
        holder = child.state.parent
        while holder is not None and holder is not state and holder.owner is not None:
            depth += 1
            holder = holder.parent
        child_call = _current_call(child.state)
        rows.append(Row(f"{prefix}:child:{child.child_id}", "child", depth, _short(child.name, 40), agent, where,
                        _child_state(child), _short(child_call.title, 40) if child_call else _short(child.last_activity, 40),
                        child.since, usage_words(child.state), seat.tab, ("child", seat, child)))
        if child.running:
            rows += _calls(seat, f"{prefix}:{child.child_id}", child.state, depth + 1, child.child_id, agent, where,
                           seen_terminals)
    rows += _calls(seat, prefix, state, 1, None, agent, where, seen_terminals)
    rows += _terminals(seat, prefix, state, 1, None, agent, where, seen_terminals)
    return rows


def board_rows(seats: Sequence[Seat]) -> list[Row]:
    """Every tab's rows, the tabs that need you first, then working, error, disconnected, idle."""
    groups = [seat_rows(seat) for seat in seats]
    ranked = sorted(range(len(groups)), key=lambda i: (min(ORDER.get(row.state, 9) for row in groups[i]), i))
    return [row for i in ranked for row in groups[i]]


def duration(since: float, now: float | None = None) -> str:
    """`4s`, `3m 05s`, `2h 10m`: how long a row has held its state."""
    if since <= 0:
        return ""
    seconds = max(0, int((time.monotonic() if now is None else now) - since))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"
