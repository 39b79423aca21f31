"""Provides the reducer actions that mark work the user stopped: a terminal, a tool call, a subagent, a turn.

Stopping is the user's decision, so what it ends reads "stopped by you" (cards, the board), never as a
failure: a command killed by the user has no exit code worth a red line, and a turn stopped from the
board is `cancelled` like one stopped with Esc.
"""

from __future__ import annotations

import time

from . import children
from .models import Change, EntryChanged, FieldChanged, SessionState, TerminalState


def _target(state: SessionState, session_id: str | None) -> SessionState:
    """The state of `session_id`: the session's own, or a subagent's (at any depth)."""
    if session_id is None or session_id == state.session_id:
        return state
    child = children.find(state, session_id)
    return child.state if child is not None else state


def _card_changes(state: SessionState, target: SessionState, key: str) -> list[Change]:
    """What a change of `key`'s card in `target` tells the widgets: itself, or its subagent's card chain."""
    if target is state:
        return [EntryChanged(key)]
    path = []  # the cards from this session's own transcript down to the subagent that owns the card
    holder: SessionState | None = target
    while holder is not None and holder is not state and holder.owner is not None:
        path.insert(0, holder.owner)
        holder = holder.parent
    return children.nested_changes(path, (EntryChanged(key),)) if path else []


def terminal_stopped(state: SessionState, terminal_id: str, session_id: str | None = None) -> list[Change]:
    target = _target(state, session_id)
    terminal = target.terminals.setdefault(terminal_id, TerminalState(terminal_id))
    terminal.stopped_by_user, terminal.since = True, time.monotonic()  # ("for how long": since it was stopped)
    changes: list[Change] = []
    for call in target.tool_calls.values():
        if any(item.get("terminalId") == terminal_id for item in call.content if isinstance(item, dict)):
            call.stopped_by_user, call.since = True, time.monotonic()
            changes += _card_changes(state, target, call.key)
    return changes + [FieldChanged("stopped")]


def tool_call_stopped(state: SessionState, tool_call_id: str, session_id: str | None = None) -> list[Change]:
    target = _target(state, session_id)
    call = target.tool_calls.get(tool_call_id)
    if call is None:
        return []
    call.stopped_by_user, call.since = True, time.monotonic()
    return _card_changes(state, target, call.key) + [FieldChanged("stopped")]


def child_stopped(state: SessionState, child_id: str) -> list[Change]:
    child = children.find(state, child_id)
    if child is None:
        return []
    child.stopped_by_user, child.since = True, time.monotonic()
    return [EntryChanged(child.key), FieldChanged("stopped")]


def turn_stopped(state: SessionState) -> list[Change]:
    state.stopped_by_user = True
    return [FieldChanged("stopped")]
